// Cowork's MCP client (spec §16): the official TypeScript SDK's client (`@modelcontextprotocol/client`)
// behind a small API of plain JSON-able values, which the page calls once it has loaded the
// bundle (`scripts/mcp-bundle.sh` → dist/mcp-<hash>.js, global `CoworkMcp`). The protocol is the SDK's:
// Streamable HTTP with the protocol revision negotiated (2026-07-28 by `server/discover` when the server
// speaks it, else the 2025 `initialize` handshake), the legacy HTTP+SSE transport as the fallback the
// SDK documents (a 4xx to the first POST), progress, cancellation (`notifications/cancelled`), form
// elicitation with the schema's defaults applied, and OAuth (oauth.mjs). Errors are thrown as
// `{kind, message, status?}` (errors.mjs).
//
//   const conn = await CoworkMcp.connect({url, name, headers, oauth, onElicit, allowSampling, onSample});
//   (`oauth` is oauth.mjs's callbacks, or `{store: <server id>, signIn: <nonce>?}` for the storage
//   worker's keeping and the sign-in window of signin.mjs; `await CoworkMcp.signOut(id)` forgets it.)
//   conn.info; await conn.listTools(); await conn.listResources(); await conn.readResource(uri);
//   await conn.listPrompts(); await conn.getPrompt(name, args);
//   await conn.callTool(name, args, {signal, onProgress}); await conn.close();
// The page's MCP host (the model's calls, host.mjs): offer(servers), call(name, args, callId), abort().
import { Client, ProtocolError, ProtocolErrorCode, SdkError, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { classify, failure, guardedFetch, httpStatus } from './errors.mjs';
import { CoworkOAuthProvider, grantProvider, withOAuth } from './oauth.mjs';
import { browserOAuth, clientDocument } from './signin.mjs';

export { BRIDGE_RECIPE } from './errors.mjs';
export { signOut } from './signin.mjs';
export * from './servers.mjs';
export { mountTools } from './ui-tools.mjs';
export { mountMenus } from './ui-menus.mjs';
export { abort, call, configure, offer, progressText } from './host.mjs';
export { askUser, contentOf, fieldsOf } from './elicit.mjs';

/** What Cowork calls itself to servers. */
export const CLIENT_INFO = { name: 'Cowork', version: '0.1.0' };

/** How long a request may go without an answer or a progress notification (ms), unless the caller says. */
const REQUEST_TIMEOUT_MS = 120_000;

/**
 * Connects to the MCP server at `options.url`: Streamable HTTP first, then the legacy HTTP+SSE
 * transport when the server answers the first POST with a 4xx other than 401/403.
 */
export async function connect(options) {
  const url = parseUrl(options?.url);
  if (options.oauth?.store) options = { ...options, oauth: browserOAuth({ ...options.oauth, clientMetadataUrl: await clientDocument() }) };
  const fetch = connectionFetch(options, url);
  let first;
  try {
    return await open(options, url, fetch, 'streamable-http');
  } catch (error) {
    first = error;
  }
  const status = httpStatus(first);
  if (status === undefined || status < 400 || status >= 500 || status === 401 || status === 403) throw classify(first);
  try {
    return await open(options, url, fetch, 'sse');
  } catch (error) {
    const second = classify(error);
    // Neither transport: say what the first one was told, and that the fallback failed too.
    throw failure(second.kind === 'unauthorized' ? 'unauthorized' : classify(first).kind, `${classify(first).message} (the legacy HTTP+SSE transport failed too: ${second.message})`, status);
  }
}

async function open(options, url, fetch, kind) {
  const headers = { ...(options.headers ?? {}) };
  const attempt = async (versionNegotiation) => {
    const client = newClient(options, versionNegotiation);
    // A grant without a user goes through the SDK's own provider, which the transports drive.
    const authProvider = options.oauth?.grant ? grantProvider(options.oauth.grant, options.oauth.clientName) : undefined;
    const transport =
      kind === 'sse'
        ? new SSEClientTransport(url, { fetch, authProvider, requestInit: { headers } })
        : new StreamableHTTPClientTransport(url, { fetch, authProvider, requestInit: { headers }, reconnectionOptions: RECONNECTION });
    const connection = new Connection(client, transport, kind, options);
    await client.connect(transport, { timeout: options.timeoutMs ?? REQUEST_TIMEOUT_MS });
    return connection;
  };
  if (kind === 'sse') return attempt(undefined);
  try {
    return await attempt({ mode: 'auto' });
  } catch (error) {
    // A server that fails the revision probe itself (a 5xx to `server/discover`, which a 2025 server
    // should answer with a JSON-RPC error) is asked again the 2025 way.
    // A sign-in that failed during the probe is the answer, not a reason to ask again.
    if (error instanceof SdkError && error.code === 'ERA_NEGOTIATION_FAILED') {
      if (fetch.signInFailure) throw fetch.signInFailure;
      return attempt(undefined);
    }
    throw error;
  }
}

// A stream that breaks is resumed a few times (with Last-Event-ID, when the server gave event ids),
// then given up: the calls waiting on it fail rather than wait.
const RECONNECTION = { initialReconnectionDelay: 500, maxReconnectionDelay: 4000, reconnectionDelayGrowFactor: 2, maxRetries: 2 };

function newClient(options, versionNegotiation) {
  const capabilities = {};
  if (typeof options.onElicit === 'function') capabilities.elicitation = { form: { applyDefaults: true } };
  const sampling = options.allowSampling === true && typeof options.onSample === 'function';
  if (sampling) capabilities.sampling = {};
  const client = new Client(CLIENT_INFO, { capabilities, ...(versionNegotiation ? { versionNegotiation } : {}) });
  if (capabilities.elicitation) {
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
      // The signal aborts when the server cancels its request (or the call it belongs to ends).
      const answer = await options.onElicit(plain(request.params), ctx?.mcpReq?.signal);
      return plain(answer);
    });
  }
  if (sampling) client.setRequestHandler('sampling/createMessage', async (request) => plain(await options.onSample(plain(request.params))));
  // A request for a capability Cowork did not declare: sampling is named with the setting that allows it.
  client.fallbackRequestHandler = async (request) => {
    if (request.method === 'sampling/createMessage') {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `Cowork refused the sampling request: sampling is off for the server "${options.name ?? options.url}". ` +
          'The user can allow it in Settings → Tools, "Allow sampling" for this server.',
      );
    }
    throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `Cowork does not handle ${request.method}`);
  };
  return client;
}

function connectionFetch(options, url) {
  const base = guardedFetch(options.fetch ?? globalThis.fetch.bind(globalThis));
  if (!options.oauth || options.oauth.grant) return base;
  const provider = new CoworkOAuthProvider(options.oauth);
  return withOAuth(provider, url, base);
}

function parseUrl(value) {
  try {
    const url = new URL(String(value));
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {}
  throw failure('unreachable', `"${value}" is not an http(s) URL of an MCP server.`);
}

/** One connected server. */
class Connection {
  constructor(client, transport, kind, options) {
    this.client = client;
    this.transport = transport;
    this.kind = kind;
    this.options = options;
    this.closed = false;
    this.pending = new Set(); // the rejecters of the requests waiting for an answer
    this.checking = false;
    client.onerror = (error) => this.streamTrouble(error);
  }

  // The transport reports a stream that broke (the server died, or the network went) and, after its
  // attempts to resume it, gives up — without failing the requests that were waiting on it. So when a
  // stream breaks while requests wait, the server is asked for a ping: if nothing answers any more,
  // those requests fail now instead of waiting for their timeout.
  async streamTrouble(error) {
    const message = String(error?.message ?? error);
    if (!/SSE stream disconnected|reconnect|SSE error|terminated|other side closed/i.test(message)) return;
    if (this.pending.size === 0 || this.checking || this.closed) return;
    this.checking = true;
    try {
      await this.client.ping({ timeout: this.options.timeoutMs ?? REQUEST_TIMEOUT_MS });
    } catch (e) {
      const why = classify(e);
      const lost = failure(
        why.kind === 'cancelled' ? 'closed' : why.kind,
        `The server stopped answering in the middle of the request (${message}): ${why.message}`,
        why.status,
      );
      for (const reject of this.pending) reject(lost);
    } finally {
      this.checking = false;
    }
  }

  /** What the server said of itself when it was connected. */
  get info() {
    const c = this.client;
    return plain({
      protocolVersion: c.getNegotiatedProtocolVersion?.() ?? null,
      transport: this.kind,
      serverInfo: c.getServerVersion() ?? {},
      capabilities: c.getServerCapabilities() ?? {},
      instructions: c.getInstructions() ?? null,
    });
  }

  /** Every tool of every page. */
  async listTools() {
    if (!this.has('tools')) return [];
    const { tools } = await this.run((o) => this.client.listTools(undefined, o));
    return tools.map(plain);
  }

  async listResources() {
    if (!this.has('resources')) return [];
    const { resources } = await this.run((o) => this.client.listResources(undefined, o));
    return resources.map(plain);
  }

  /** The server's `ReadResourceResult`, verbatim. */
  async readResource(uri) {
    return plain(await this.run((o) => this.client.readResource({ uri }, o)));
  }

  async listPrompts() {
    if (!this.has('prompts')) return [];
    const { prompts } = await this.run((o) => this.client.listPrompts(undefined, o));
    return prompts.map(plain);
  }

  /** The server's `GetPromptResult` (`{description, messages}`), verbatim. */
  async getPrompt(name, args = {}) {
    return plain(await this.run((o) => this.client.getPrompt({ name, arguments: stringArgs(args) }, o)));
  }

  /**
   * The server's `CallToolResult`, verbatim. `onProgress({progress, total, message})` for each progress
   * notification; aborting `signal` sends `notifications/cancelled` and rejects with kind "cancelled".
   */
  async callTool(name, args = {}, { signal, onProgress, timeoutMs } = {}) {
    const onprogress = typeof onProgress === 'function' ? ({ progress, total, message }) => onProgress(plain({ progress, total, message })) : undefined;
    const options = { signal, onprogress, resetTimeoutOnProgress: true, timeout: timeoutMs };
    return plain(await this.run((o) => this.client.callTool({ name, arguments: args ?? {} }, o), options));
  }

  /** Ends the session (a DELETE, for a server that keeps sessions) and the connection. */
  async close() {
    if (this.closed) return;
    this.closed = true;
    if (this.kind === 'streamable-http' && this.transport.sessionId) await this.transport.terminateSession().catch(() => {});
    await this.client.close().catch(() => {});
  }

  has(capability) {
    const caps = this.client.getServerCapabilities();
    return !caps || capability in caps;
  }

  async run(request, options = {}) {
    if (this.closed) throw failure('closed', 'The connection to this server was closed.');
    const { signal } = options;
    if (signal?.aborted) throw failure('cancelled', 'Cancelled before it was sent.');
    const merged = { timeout: this.options.timeoutMs ?? REQUEST_TIMEOUT_MS, ...definedOnly(options) };
    let reject;
    const lost = new Promise((_, r) => (reject = r));
    this.pending.add(reject);
    try {
      return await Promise.race([request(merged), lost]);
    } catch (error) {
      throw classify(error, signal);
    } finally {
      this.pending.delete(reject);
    }
  }
}

function definedOnly(object) {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));
}

// Prompt arguments are strings on the wire.
function stringArgs(args) {
  return Object.fromEntries(Object.entries(args ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

// A value as the worker receives it: JSON only (no class instances, no undefined fields).
function plain(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}
