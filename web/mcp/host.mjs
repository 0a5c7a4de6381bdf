// The page's MCP host (spec §16): the tools of a workspace's MCP servers offered to the model, and the
// model's calls of them run, all in the page. The storage worker knows these tools only as the page's
// tools (`HostToolSpec`, with `mcp: {server, tool}` for the approval card): when a reply starts in a
// workspace with an enabled MCP server, the worker asks the page that sent it for them (the page's
// client, web/src/client/mcp.rs, calls `offer`), then asks it to run each call of one (`call`); Stop
// calls `abort`.
//
//   const specs = await CoworkMcp.offer(servers);        // servers: the workspace's McpServer list (JSON)
//   const {content, success, result} = await CoworkMcp.call(name, argumentsJson, callId);
//   CoworkMcp.abort();
//
// One connection per server, kept and reused; a new one when the server's URL, sign-in or token
// changed, or when the last one failed. While a call runs, the server's progress notifications show on
// its card (`.tool-call[data-call]`, and a `cowork-mcp-progress` event on `window`), and an elicitation
// request shows as a form (elicit.mjs).
import { askUser } from './elicit.mjs';
import { classify } from './errors.mjs';
import { asks, connectServer, getToken, MAX_TOOLS, toolName } from './servers.mjs';

/** How long one server may take to connect and list its tools before a request goes without them. */
const OFFER_TIMEOUT_MS = 20_000;

const connections = new Map(); // server id → {key, ready: Promise<Connection>}
let offered = new Map(); // the model's name of a tool → {server, tool}
const running = new Map(); // call id → AbortController
const asking = new Set(); // the AbortControllers of the elicitation forms open now
const options = {}; // set by `configure` (tests, embedders)

/**
 * Replaces how elicitation requests are answered (`onElicit(server, params, signal)` → the answer),
 * how progress is shown (`onProgress(callId, {call_id, progress, total, message, text})`) and the
 * fetch connections use (`fetch`); `configure()` puts the page's own back.
 */
export function configure({ onElicit, onProgress, fetch } = {}) {
  Object.assign(options, { onElicit, onProgress, fetch });
}

/**
 * Connects to the enabled servers of `servers` (an array, or its JSON) and lists their tools; resolves
 * with the page tools to offer: `{name, description, parameters, approval, mcp: {server, tool}}`, at
 * most MAX_TOOLS. A server that cannot be reached offers none (and says why on the console).
 */
export async function offer(servers) {
  const list = (typeof servers === 'string' ? JSON.parse(servers) : servers ?? []).filter((s) => s?.enabled !== false);
  const listed = await Promise.all(
    list.map((server) =>
      bounded(toolsOf(server), OFFER_TIMEOUT_MS, `it did not list its tools within ${OFFER_TIMEOUT_MS / 1000} s`).catch((e) => {
        console.warn(`The MCP server ${server.name} offers no tools now: ${classify(e).message}`);
        return [];
      }),
    ),
  );
  const specs = [];
  const next = new Map();
  list.forEach((server, i) => {
    for (const tool of listed[i]) {
      const name = toolName(server.name, String(tool?.name ?? ''));
      if (!tool?.name || next.has(name) || specs.length >= MAX_TOOLS) continue;
      next.set(name, { server, tool: tool.name });
      specs.push({
        name,
        description: String(tool.description ?? tool.title ?? ''),
        parameters: tool.inputSchema && typeof tool.inputSchema === 'object' ? tool.inputSchema : { type: 'object' },
        approval: asks(server, tool) ? 'ask_every_time' : 'auto',
        mcp: { server: server.name, tool: tool.name },
      });
    }
  });
  offered = next;
  return specs;
}

/**
 * Runs the offered tool `name` with `args` (the model's JSON text) for the worker's call `callId`:
 * `{content, success, result}`, `result` the server's CallToolResult verbatim (the worker archives it
 * whole), or null and `content` saying what failed (the server named, and the cause).
 */
export async function call(name, args, callId) {
  const found = offered.get(name);
  if (!found) return answer(`Error: ${name} is not a tool of this workspace's MCP servers now; ask again.`);
  const { server, tool } = found;
  let parsed;
  try {
    parsed = typeof args === 'string' && args.trim() ? JSON.parse(args) : (args ?? {});
  } catch (e) {
    return answer(`Error: the arguments are not valid JSON (${e.message}); send a JSON object that matches the tool's schema.`);
  }
  const controller = new AbortController();
  running.set(callId, controller);
  try {
    const conn = await connection(server);
    const onProgress = (p) => progress(callId, p);
    const result = await conn.callTool(tool, parsed, { signal: controller.signal, onProgress });
    return { content: '', success: result?.isError !== true, result };
  } catch (error) {
    const why = classify(error, controller.signal);
    if (why.kind === 'cancelled') return answer(`The call to ${tool} on ${server.name} was stopped by the user.`);
    // A server that died, went away or refused: the next call connects again.
    drop(server.id);
    return answer(`Error from the MCP server ${server.name}: ${why.message}`);
  } finally {
    running.delete(callId);
  }
}

/** Stop: every call in flight is aborted (the SDK sends `notifications/cancelled`), every form closed. */
export function abort() {
  for (const controller of [...running.values(), ...asking]) controller.abort();
}

function answer(content) {
  return { content, success: false, result: null };
}

async function toolsOf(server) {
  const cached = connections.has(server.id);
  try {
    return await (await connection(server)).listTools();
  } catch (error) {
    drop(server.id);
    // A kept connection may have died since: one new attempt.
    if (!cached) throw error;
    return (await connection(server)).listTools();
  }
}

// The server's connection: the kept one, unless what it was opened with changed or it was closed.
async function connection(server) {
  const key = JSON.stringify([server.url, server.auth, server.auth === 'oauth' ? '' : await getToken(server.id)]);
  const kept = connections.get(server.id);
  if (kept?.key === key) {
    const conn = await kept.ready.catch(() => null);
    if (conn && !conn.closed) return conn;
  }
  drop(server.id);
  const extra = { onElicit: (params, signal) => elicit(server, params, signal) };
  if (options.fetch) extra.fetch = options.fetch;
  const ready = connectServer(server, extra);
  connections.set(server.id, { key, ready });
  return ready.catch((error) => {
    if (connections.get(server.id)?.ready === ready) connections.delete(server.id);
    throw error;
  });
}

function drop(id) {
  const kept = connections.get(id);
  if (!kept) return;
  connections.delete(id);
  kept.ready.then((conn) => conn.close()).catch(() => {});
}

async function elicit(server, params, signal) {
  if (options.onElicit) return options.onElicit(server.name, params, signal);
  if (typeof document === 'undefined') return { action: 'decline' };
  const controller = new AbortController();
  signal?.addEventListener('abort', () => controller.abort());
  asking.add(controller);
  try {
    return await askUser(server.name, params, { container: appRoot(), signal: controller.signal });
  } finally {
    asking.delete(controller);
  }
}

/** A progress notification's line: "Progress 3 of 10: message". */
export function progressText({ progress, total, message } = {}) {
  return `Progress ${progress}${total === undefined || total === null ? '' : ` of ${total}`}${message ? `: ${message}` : ''}`;
}

function progress(callId, p) {
  const detail = { call_id: callId, ...p, text: progressText(p) };
  if (options.onProgress) return options.onProgress(callId, detail);
  if (typeof document === 'undefined') return;
  globalThis.dispatchEvent(new CustomEvent('cowork-mcp-progress', { detail }));
  const card = appQuery(`.tool-call[data-call="${CSS.escape(callId)}"]`);
  if (!card) return;
  let line = card.querySelector('.tool-progress');
  if (!line) {
    line = document.createElement('span');
    line.className = 'tool-progress';
    line.setAttribute('role', 'status');
    card.append(line);
  }
  line.textContent = detail.text;
}

// The app's elements, whether it fills the page or is mounted in a host page's shadow root.
function appQuery(selector) {
  const here = document.querySelector(selector);
  if (here) return here;
  for (const e of document.querySelectorAll('*')) {
    const found = e.shadowRoot?.querySelector(selector);
    if (found) return found;
  }
  return null;
}

function appRoot() {
  return appQuery('.cowork-root') ?? document.body;
}

function bounded(promise, ms, why) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(why)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
