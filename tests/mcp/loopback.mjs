// Preloaded (`node --import …/loopback.mjs …`) into the MCP servers the tests start (scripts/mcp-servers.sh)
// and into the conformance suite (scripts/conformance.sh): none of them takes a listen address, and each
// would listen on every interface. A listen call that names no host binds to 127.0.0.1 instead, so every
// server they start stays on loopback.
import dns from 'node:dns';
import net from 'node:net';

const LOOPBACK = '127.0.0.1';

// A listen with a host looks the host up first (dns.lookup, asynchronously even for an address), so
// `server.address()` would be null right after `listen(0)`, which some callers read at once. The lookup
// of the loopback address answers at once instead, keeping the listen synchronous as it was.
const lookup = dns.lookup;
dns.lookup = function (hostname, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  if (hostname === LOOPBACK && typeof cb === 'function') {
    const all = typeof options === 'object' && options?.all;
    if (all) cb(null, [{ address: LOOPBACK, family: 4 }]);
    else cb(null, LOOPBACK, 4);
    return {};
  }
  return lookup.apply(this, arguments);
};

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    // listen(port[, host][, backlog][, callback]): a host given is kept; none given is loopback.
    if (typeof args[1] === 'string') return listen.apply(this, args);
    const rest = args.slice(1).filter((a) => typeof a === 'function');
    return listen.call(this, { port: Number(args[0]), host: LOOPBACK }, ...rest);
  }
  if (args.length === 0 || typeof args[0] === 'function') {
    return listen.call(this, { port: 0, host: LOOPBACK }, ...args);
  }
  if (args[0] && typeof args[0] === 'object' && args[0].port !== undefined && !args[0].host && !args[0].path) {
    args[0] = { ...args[0], host: LOOPBACK };
  }
  return listen.apply(this, args);
};
