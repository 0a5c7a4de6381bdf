// Every failure of the MCP client as one plain object, `{kind, message, status?}`, which crosses to the
// storage worker as it is (the worker reads `kind` into its own enum at the edge, as it does with sync's
// `SyncError.kind`). Kinds:
//   "cors"          the server answered nothing this page may read: it sent no CORS headers for this origin
//   "unreachable"   nothing answered at that address (refused, no such host, offline)
//   "unauthorized"  401/403: the server needs a sign-in (or the one given was refused)
//   "protocol"      the server answered, but not as MCP says (a JSON-RPC error, a malformed message)
//   "http"          another HTTP failure (`status` says which)
//   "cancelled"     the caller aborted the request
//   "closed"        the connection was closed
import { ProtocolError, SdkError, SdkHttpError, UnauthorizedError } from '@modelcontextprotocol/client';

/** The README section a page's user is sent to for a server the page cannot reach by itself. */
export const BRIDGE_RECIPE =
  "README, \"A stdio server, or one without CORS\": expose it on loopback through an existing bridge " +
  '(supergateway or mcp-proxy) with an Origin allow-list naming this page';

/** A failure as the worker receives it. */
export function failure(kind, message, status) {
  const error = { kind, message: String(message) };
  if (status !== undefined) error.status = status;
  return error;
}

/** Whether `value` is already one of this module's failures. */
export function isFailure(value) {
  return value !== null && typeof value === 'object' && typeof value.kind === 'string' && typeof value.message === 'string' && !(value instanceof Error);
}

// A network failure seen by the fetch the transports use, tagged so that whatever the SDK wraps it in,
// `classify` finds it again (in its `cause` chain).
const NETWORK = Symbol('cowork-mcp-network');

/**
 * The fetch every request of a connection goes through: a fetch that throws (as opposed to answering an
 * HTTP error) is told apart as "cors" or "unreachable". In a browser, a fetch to a server that answers
 * without CORS headers throws the same TypeError as one to a server that is not there; a second request
 * in `no-cors` mode (whose answer the page cannot read, but which resolves when anything answered)
 * tells them apart. In Node a refused connection carries its system error code.
 */
export function guardedFetch(base = globalThis.fetch) {
  return async (input, init) => {
    try {
      return await base(input, init);
    } catch (error) {
      if (!(error instanceof TypeError) || init?.signal?.aborted) throw error;
      const url = String(input instanceof Request ? input.url : input);
      const kind = (await reachable(base, url, error)) ? 'cors' : 'unreachable';
      const tagged = new TypeError(error.message, { cause: error });
      tagged[NETWORK] = kind === 'cors' ? corsFailure(url) : unreachableFailure(url, error);
      throw tagged;
    }
  };
}

async function reachable(base, url, error) {
  if (error.cause && typeof error.cause === 'object' && 'code' in error.cause) return false; // Node: ECONNREFUSED…
  if (typeof document === 'undefined' && typeof WorkerGlobalScope === 'undefined') return false; // no CORS outside a browser
  try {
    await base(url, { method: 'GET', mode: 'no-cors', cache: 'no-store', credentials: 'omit' });
    return true;
  } catch {
    return false;
  }
}

function corsFailure(url) {
  const origin = globalThis.location?.origin ?? 'this page';
  return failure(
    'cors',
    `${new URL(url).origin} answered, but the server sent no CORS headers for this origin (${origin}), so the page may not read ` +
      `its answers. A browser page can only reach MCP servers that allow its origin; see the ${BRIDGE_RECIPE}.`,
  );
}

function unreachableFailure(url, error) {
  const code = error.cause?.code ? ` (${error.cause.code})` : '';
  return failure(
    'unreachable',
    `Nothing answered at ${url}${code}: check the address and that the server is running. ` +
      `A local stdio server needs a bridge; see the ${BRIDGE_RECIPE}.`,
  );
}

/** Any error the SDK, the fetch or the caller's callbacks threw, as a failure. `signal`: the request's. */
export function classify(error, signal) {
  if (isFailure(error)) return error;
  if (signal?.aborted) return failure('cancelled', 'Cancelled: the request was stopped before the server answered.');
  for (let e = error, depth = 0; e && depth < 8; e = e.cause, depth++) {
    if (e[NETWORK]) return e[NETWORK];
    if (isFailure(e)) return e;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UnauthorizedError) return failure('unauthorized', `The server needs a sign-in: ${message}`, 401);
  const status = httpStatus(error);
  if (status === 401 || status === 403) return failure('unauthorized', `The server refused the request (HTTP ${status}): it needs a sign-in.`, status);
  if (error instanceof ProtocolError) return failure('protocol', `The server answered with an error (${error.code}): ${message}`);
  if (status !== undefined) return failure('http', `The server answered HTTP ${status}: ${message}`, status);
  if (error instanceof SdkError && /closed/i.test(String(error.code) + message)) return failure('closed', `The connection was closed: ${message}`);
  if (error?.name === 'AbortError') return failure('cancelled', 'Cancelled: the request was stopped before the server answered.');
  return failure('protocol', message);
}

/** The HTTP status an SDK error carries, if any. */
export function httpStatus(error) {
  for (let e = error, depth = 0; e && depth < 8; e = e.cause, depth++) {
    if (e instanceof SdkHttpError && typeof e.status === 'number') return e.status;
    if (typeof e.status === 'number' && e.status >= 100) return e.status;
    if (typeof e.data?.status === 'number') return e.data.status;
    const m = /\bHTTP (\d{3})\b/.exec(e.message ?? '');
    if (m) return Number(m[1]);
  }
  return undefined;
}
