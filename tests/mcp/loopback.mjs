// Preloaded (`node --import ./loopback.mjs …`) into the MCP servers the tests start: neither
// server-everything nor supergateway takes a listen address, and both would listen on every interface.
// A listen call that names no host binds to 127.0.0.1 instead, so the tests' servers stay on loopback.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    const port = Number(args[0]);
    const rest = args.slice(1).filter((a) => typeof a === 'function');
    return listen.call(this, { port, host: '127.0.0.1' }, ...rest);
  }
  if (args[0] && typeof args[0] === 'object' && !args[0].path && !args[0].host && !args[0]._handle) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
