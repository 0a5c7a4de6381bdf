// Settings → Tools (spec §16): the MCP servers whose tools the model is offered, made on the page by the
// lazily loaded bundle (the app's wasm, part of every cold start, only gives it an element and a bridge).
// Each server is kept in the settings of the workspaces that use it (archived, exported and synced with
// them, never with its token); a bearer token is kept in this browser (servers.mjs), an OAuth sign-in
// too (signin.mjs). Each server shows whether it answers (and why not), its "Offer its tools" switch,
// Remove, Sign in / Sign out for OAuth, and lists its tools (each with its approval policy), resources
// and prompts.
//
//   mountTools(element, bridge)
//   bridge: {workspaces: [name…], current: name, servers(workspace, json, done)} (the app's: `done(error,
//   json)` once answered with the JSON of the workspace's mcp_servers; a `json` that is not null
//   replaces them first, the workspace's settings read, changed and saved)
//
// The list is one piece of markup (`render`, every server-given text escaped) with one handler for its
// controls (`data-act`), as the Rust version was.
import { policyOf, probe, setToken } from './servers.mjs';
import { CHANNEL } from './signin.mjs';

/** The policies, as the selector lists them. */
export const POLICIES = [
  ['ask_unless_read_only', 'Ask unless read-only'],
  ['always_ask', 'Always ask'],
  ['never_ask', 'Never ask'],
];

const ESCAPES = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' };

/** `text` as HTML text or an attribute's value: never markup. */
export function escapeHtml(text) {
  return String(text ?? '').replace(/[<>&"']/g, (c) => ESCAPES[c]);
}

/** Gives tool `tool` of `server` its own `policy`. */
export function setPolicy(server, tool, policy) {
  server.tools = (server.tools ?? []).filter((c) => c.tool !== tool);
  server.tools.push({ tool, policy });
}

/** Sign in / Sign out for a server signed in to with OAuth, by its state. */
function oauthButton(server, state) {
  if (server.auth !== 'oauth') return '';
  const [act, label] = { needs_sign_in: ['sign-in', 'Sign in'], connected: ['sign-out', 'Sign out'] }[state] ?? [];
  return act ? ` <button class="secondary" data-act="${act}" data-id="${escapeHtml(server.id)}">${label}</button>` : '';
}

/**
 * The servers as markup: `all` is `[{server, used: [workspace…]}]`, `status` probe()'s answers. Each its
 * status, its switch, Remove, and what it lists; the controls carry `data-act`, `data-id` and
 * `data-tool` for the section's handler.
 */
export function render(all, status) {
  const e = escapeHtml;
  let out = '';
  for (const { server, used } of all) {
    const st = status.find((s) => s.server_id === server.id) ?? { state: 'unknown', message: '', tools: [], resources: [], prompts: [] };
    const id = e(server.id);
    out += `<section class="mcp-server" data-server="${e(server.name)}"><h3>${e(server.name)}</h3>`;
    out += `<p class="hint">${e(`${server.url} · used by ${used.join(', ')}`)}</p>`;
    out += `<p class="mcp-status ${e(String(st.state).replaceAll('_', '-'))}" role="status">${e(st.message || 'Connecting…')}</p>`;
    out += `<label class="check"><input type="checkbox" data-act="enable" data-id="${id}"${server.enabled === false ? '' : ' checked'}> Offer its tools</label>`;
    out += ` <button class="secondary" data-act="remove" data-id="${id}">Remove</button>${oauthButton(server, st.state)}`;
    out += '<h4>Tools</h4><ul class="mcp-tools">';
    for (const tool of st.tools ?? []) {
      const name = e(tool.name);
      out += `<li><code>${name}</code>${tool.read_only ? ' (read-only)' : ''}`;
      out += ` <select aria-label="Approval of ${name}" data-act="policy" data-id="${id}" data-tool="${name}">`;
      const current = policyOf(server, tool.name);
      for (const [value, label] of POLICIES) out += `<option value="${value}"${value === current ? ' selected' : ''}>${label}</option>`;
      out += `</select><div class="hint">${e(tool.description)}</div></li>`;
    }
    for (const [title, key] of [['Resources', 'resources'], ['Prompts', 'prompts']]) {
      out += `</ul><h4>${title}</h4><ul class="mcp-${key}">`;
      for (const item of st[key] ?? []) out += `<li><code>${e(item.name)}</code></li>`;
    }
    out += '</ul></section>';
  }
  return out;
}

/** The Add form (made once: its fields keep what is typed while the list above changes). */
export function addForm(workspaces, current) {
  let out = '<div class="mcp-add"><h3>Add an MCP server</h3>';
  for (const [label, name, kind] of [
    ['Name', 'name', 'text'],
    ['URL', 'url', 'url'],
    ['Bearer token (optional; kept in this browser only)', 'token', 'password'],
  ]) {
    out += `<label class="field"><span>${label}</span><input name="mcp-${name}" type="${kind}" autocomplete="off"></label>`;
  }
  out +=
    '<label class="field"><span>Sign-in</span><select name="mcp-auth">' +
    '<option value="">None, or the bearer token above</option>' +
    '<option value="oauth">OAuth (Sign in on each device)</option></select></label>';
  out += '<label class="field"><span>Workspace that uses it</span><select name="mcp-workspace">';
  for (const w of workspaces) out += `<option${w === current ? ' selected' : ''}>${escapeHtml(w)}</option>`;
  return out + '</select></label><button class="secondary" data-act="add">Add server</button></div>';
}

/** The servers of `lists` (`[[workspace, servers]…]`) by id, each with the workspaces that use it. */
export function gather(lists) {
  const found = [];
  for (const [workspace, servers] of lists) {
    for (const server of servers) {
      const known = found.find((f) => f.server.id === server.id);
      if (known) known.used.push(workspace);
      else found.push({ server, used: [workspace] });
    }
  }
  return found;
}

/** A new server's configuration from the Add form's fields, or the message saying what is missing. */
export function newServer({ name, url, token, oauth }, id) {
  if (!name || !/^https?:\/\//.test(url)) return { error: 'Give the server a name and its http:// or https:// URL.' };
  const auth = oauth ? 'oauth' : token ? 'bearer' : 'none';
  return { server: { id, name, url, auth, enabled: true, policy: 'ask_unless_read_only', tools: [] }, token: oauth ? '' : token };
}

/** Shows Settings → Tools in `element`, kept through `bridge` (above). */
export function mountTools(element, bridge) {
  const workspaces = [...new Set([...(bridge.workspaces ?? []), bridge.current])].sort();
  element.innerHTML = `<div class="mcp-servers"></div><div>${addForm(workspaces, bridge.current)}</div><p class="mcp-note" role="status"></p>`;
  const list = element.querySelector('.mcp-servers');
  const note = (text) => (element.querySelector('.mcp-note').textContent = text);
  let shown = [];
  let status = [];
  let generation = 0; // a later load wins over an earlier one still under way
  const show = () => (list.innerHTML = render(shown, status));
  const answered = (s) => {
    status = [...status.filter((o) => o.server_id !== s.server_id), s];
    show();
  };
  const readServers = async (workspace) => {
    const servers = JSON.parse((await ask(bridge.servers, workspace, null)) || '[]');
    return Array.isArray(servers) ? servers : [];
  };

  // What the workspaces keep, then what each server answers (all asked at once).
  const load = async () => {
    const mine = ++generation;
    const lists = [];
    for (const w of workspaces) {
      try {
        lists.push([w, await readServers(w)]);
      } catch (e) {
        note(`The settings of the workspace ${w} could not be read: ${e?.message ?? e}`);
      }
    }
    if (mine !== generation) return;
    shown = gather(lists);
    status = status.filter((s) => shown.some((f) => f.server.id === s.server_id));
    show();
    await Promise.all(
      shown.map(async ({ server }) => {
        const s = await probe(server);
        if (mine === generation) answered(s);
      }),
    );
  };

  // Changes the server list of the workspaces `used` (each read, changed and saved), then reloads.
  const change = async (used, edit) => {
    for (const w of used) {
      try {
        const servers = await readServers(w);
        await ask(bridge.servers, w, JSON.stringify(edit(servers)));
        note('Saved.');
      } catch (e) {
        note(`The settings of the workspace ${w} could not be saved: ${e?.message ?? e}`);
        return false;
      }
    }
    load();
    return true;
  };

  // Add server: the token into this browser's keeping first, then the server into the workspace's settings.
  const add = async () => {
    const field = (n) => String(element.querySelector(`[name=mcp-${n}]`)?.value ?? '').trim();
    const made = newServer(
      { name: field('name'), url: field('url'), token: field('token'), oauth: field('auth') === 'oauth' },
      `mcp-${Date.now()}`,
    );
    if (made.error) return note(made.error);
    if (made.token) {
      try {
        await setToken(made.server.id, made.token);
      } catch (e) {
        return note(e?.message ?? String(e));
      }
    }
    if (await change([field('workspace')], (all) => [...all, made.server])) {
      element.querySelector('[name=mcp-token]').value = '';
    }
  };

  const act = (ev) => {
    const el = ev.target;
    const what = el?.dataset?.act;
    if (!what) return;
    const clicked = ev.type === 'click';
    const id = el.dataset.id;
    const found = shown.find((f) => f.server.id === id);
    if (what === 'add' && clicked) return void add();
    if (!found) return;
    if (clicked && (what === 'sign-in' || what === 'sign-out')) return void sign(found.server, what === 'sign-in', note, answered);
    const remove = what === 'remove' && clicked;
    let edit;
    if (what === 'enable' && !clicked) edit = (s) => (s.enabled = el.checked);
    else if (what === 'policy' && !clicked) edit = (s) => setPolicy(s, el.dataset.tool, el.value);
    else if (!remove) return;
    const edited = (all) => {
      for (const s of all.filter((s) => s.id === id)) edit?.(s);
      return remove ? all.filter((s) => s.id !== id) : all;
    };
    change(found.used, edited);
  };
  element.addEventListener('click', act);
  element.addEventListener('change', act);
  load();
}

/** `f(...args, done)` as a promise. */
function ask(f, ...args) {
  return new Promise((resolve, reject) => f(...args, (error, value) => (error ? reject(new Error(error)) : resolve(value))));
}

/**
 * Signs in to `server` through a new sign-in window (`signIn`), or signs out; `shown` gets the server's
 * status after. The window is opened here, inside the user's click (a page may open one only then), on
 * Cowork's own `oauth/callback.html#<nonce>`; signin.mjs sends it to the authorization server and takes
 * it back under that nonce. A window the user closes before the end is said on the channel, so the
 * sign-in ends at once with a message.
 */
export function sign(server, signIn, note, shown) {
  let nonce = null;
  let win = null;
  if (signIn) {
    const random = crypto.getRandomValues(new Uint8Array(16));
    nonce = Array.from(random, (b) => b.toString(16).padStart(2, '0')).join('');
    win = window.open(`oauth/callback.html#${nonce}`, '_blank', 'popup,width=520,height=680');
    if (!win) return note('The browser blocked the sign-in window: allow pop-ups for this page, then press Sign in again.');
    note('Signing in: finish in the sign-in window.');
  }
  let watch;
  if (win) {
    // Until the sign-in ends (signin.mjs gives up after a few minutes): a window closed early is said.
    watch = setInterval(() => {
      if (!win.closed) return;
      clearInterval(watch);
      const channel = new BroadcastChannel(CHANNEL);
      channel.postMessage({ nonce, closed: true });
      channel.close();
    }, 500);
  }
  return probe(server, { signIn: nonce, signOut: !signIn }).then((s) => {
    clearInterval(watch);
    note(s.message);
    shown(s);
  });
}
