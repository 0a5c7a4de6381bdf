// A workspace's MCP servers as the page uses them (spec §16): each server's configuration is what the
// workspace keeps (`cowork_core::mcp::McpServer` as JSON: {id, name, url, auth: "none"|"bearer"|"oauth",
// enabled, policy: "always_ask"|"ask_unless_read_only"|"never_ask", tools: [{tool, policy}]}); its
// secret is not in it. This module keeps the bearer tokens (OAuth's are signin.mjs's), connects to a
// server as its configuration says, asks one what it offers (Settings → Tools), and names its tools as
// the model is offered them.
//
// Everything here runs in the page, in the lazily loaded bundle (global `CoworkMcp`): the app's wasm,
// part of every cold start, only asks for it.
import { connect } from './index.mjs';
import { keptFile } from './kept.mjs';
import { signOut } from './signin.mjs';

/** The file (in the origin private file system's root, beside the archive's folder) that keeps each
 * server's bearer token by server id: `{"<id>": "<token>"}`; no export, backup or sync reads it. */
export const SECRETS_FILE = 'cowork-mcp-secrets.json';

/** The tools offered to the model from all of a workspace's servers together, at most. */
export const MAX_TOOLS = 64;

const secrets = keptFile(SECRETS_FILE);

/** Server `id`'s bearer token ('' when there is none). */
export async function getToken(id) {
  const token = (await secrets.read())[id];
  return typeof token === 'string' ? token : '';
}

/** Keeps `token` as server `id`'s bearer token; an empty one forgets it. */
export function setToken(id, token) {
  const t = String(token ?? '').trim();
  const run = secrets.update((all) => {
    if (t) all[id] = t;
    else delete all[id];
  });
  return run.catch((e) => {
    throw { kind: 'storage', message: `The token could not be kept in this browser: ${e?.message ?? e}` };
  });
}

/**
 * Connects to `server` (a workspace's configuration) with its secret: a bearer token from this
 * browser's keeping, or OAuth (`signIn`: the nonce of the sign-in window the page opened; without it a
 * server that needs a sign-in is refused with kind "unauthorized"). `extra` goes to index.mjs's
 * `connect` (onElicit, allowSampling, onSample, timeoutMs).
 */
export async function connectServer(server, { signIn = null, ...extra } = {}) {
  const options = { url: server.url, name: server.name, allowSampling: false, ...extra };
  if (server.auth === 'oauth') {
    options.oauth = { store: server.id, signIn };
  } else {
    const token = await getToken(server.id);
    if (token) options.headers = { Authorization: `Bearer ${token}` };
  }
  return connect(options);
}

/** The state a failure of kind `kind` leaves a server in (`McpState` in the app). */
export function stateOf(kind) {
  return { cors: 'no_cors', unreachable: 'unreachable', unauthorized: 'needs_sign_in' }[kind] ?? 'failed';
}

/** Whether a listed tool only reads: `readOnlyHint` true and `destructiveHint` not. */
export function readOnly(tool) {
  const a = tool?.annotations ?? {};
  return a.readOnlyHint === true && a.destructiveHint !== true;
}

/**
 * Connects to `server`, lists what it offers and closes (a connection of its own), for Settings →
 * Tools: `{server_id, state, message, tools, resources, prompts}`, each listed item
 * `{name, description, read_only}` (a resource's name is its URI). `signOut: true` forgets this
 * browser's OAuth sign-in first; `signIn` as for connectServer.
 */
export async function probe(server, { signIn = null, signOut: out = false } = {}) {
  const status = { server_id: server.id, state: 'unknown', message: '', tools: [], resources: [], prompts: [] };
  const fail = (e) => ({ ...status, state: stateOf(e?.kind), message: e?.message ?? String(e) });
  if (out) {
    try {
      await signOut(server.id);
    } catch (e) {
      return fail({ kind: 'storage', message: `The sign-in could not be forgotten: ${e?.message ?? e}` });
    }
  }
  let conn;
  try {
    conn = await connectServer(server, { signIn });
  } catch (e) {
    return fail(e);
  }
  const listed = (items, key) =>
    (items ?? []).map((t) => ({ name: String(t[key] ?? ''), description: String(t.description ?? t.title ?? ''), read_only: readOnly(t) }));
  try {
    status.tools = listed(await conn.listTools(), 'name');
  } catch (e) {
    await conn.close();
    return fail(e);
  }
  // Resources and prompts are optional capabilities: a server without them lists none.
  status.resources = listed(await conn.listResources().catch(() => []), 'uri');
  status.prompts = listed(await conn.listPrompts().catch(() => []), 'name');
  await conn.close();
  return { ...status, state: 'connected', message: `Connected: ${status.tools.length} tools.` };
}

/** The name the model calls `tool` of server `server` by: `<server>__<tool>` with every character
 * outside `[a-zA-Z0-9_-]` made `_`, at most 64 characters (what every provider accepts). */
export function toolName(server, tool) {
  return Array.from(`${server}__${tool}`, (c) => (/[A-Za-z0-9_-]/.test(c) ? c : '_')).slice(0, 64).join('');
}

/** Server `server`'s policy for its tool `tool`. */
export function policyOf(server, tool) {
  return (server.tools ?? []).find((c) => c.tool === tool)?.policy ?? server.policy ?? 'ask_unless_read_only';
}

/** Whether a call of `tool` (as the server lists it) asks the user first, by its server's policy. */
export function asks(server, tool) {
  const policy = policyOf(server, tool.name);
  return policy === 'always_ask' || (policy !== 'never_ask' && !readOnly(tool));
}
