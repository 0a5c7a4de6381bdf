// The composer's menus of the workspace's MCP servers (spec §16), made on the page by the lazily loaded
// bundle. `/` at the start of the message box lists their prompts (filtered by what follows it; ↑/↓
// move, Enter chooses, Esc closes; a listbox whose active option the box names); a prompt with
// arguments asks for them in a small form, and its user messages' text replaces the `/…` in the box
// (the assistant's messages and content that is not text are left out, and the status line says so).
// The Resource button lists their resources; the one chosen is read and attached like a file, named by
// the resource, so sending keeps it in the archive like any attachment.
//
//   mountMenus(messageBox, servers)   (again on the same box: the servers are replaced)
//   servers: JSON of the workspace's mcp_servers. The menus speak to the app through its own controls:
//   the text goes into the message box with an `input` event (what typing sends), a resource into the
//   composer's file picker (`input[type=file]` beside the box) with a `change` event (what picking
//   sends), so the app's state stays the truth and its wasm carries no bridge.
import { connectServer } from './servers.mjs';

/**
 * A resource's contents (`ReadResourceResult`) as one file: `{mime, bytes}`. Text contents become their
 * UTF-8 bytes (`text/plain` unless the server names a type), a blob its decoded bytes with its type. A
 * read that returns several contents gives the one whose URI is `uri` (else the first): a file is one
 * resource. Throws an Error saying what is wrong.
 */
export function resourceFile(uri, result) {
  const contents = Array.isArray(result?.contents) ? result.contents : [];
  const content = contents.find((c) => c?.uri === uri) ?? contents[0];
  if (!content) throw new Error(`the server returned no contents for ${uri}`);
  const mime = typeof content.mimeType === 'string' ? content.mimeType : '';
  if (typeof content.text === 'string') return { mime: mime || 'text/plain', bytes: new TextEncoder().encode(content.text) };
  if (typeof content.blob !== 'string') throw new Error(`the contents of ${uri} have neither text nor a blob`);
  let bytes;
  try {
    bytes = Uint8Array.from(atob(content.blob.replace(/\s/g, '')), (c) => c.charCodeAt(0));
  } catch (e) {
    throw new Error(`the blob of ${uri} is not base64: ${e?.message ?? e}`);
  }
  return { mime: mime || 'application/octet-stream', bytes };
}

/**
 * A prompt (`GetPromptResult`) as the composer inserts it: `{text, leftOut}`, the text of its user
 * messages (a text part, or an embedded resource's text), in order, separated by blank lines; and how
 * many messages or parts were left out (the assistant's messages, and images, audio, resource links and
 * blobs, which are not text the user types).
 */
export function promptText(result) {
  const parts = [];
  let leftOut = 0;
  for (const message of Array.isArray(result?.messages) ? result.messages : []) {
    if (message?.role !== 'user') {
      leftOut += 1;
      continue;
    }
    // A message's content is one block (2025 revisions) or a list of them.
    for (const block of [message.content].flat()) {
      const text = block?.type === 'text' ? block.text : block?.type === 'resource' ? block.resource?.text : undefined;
      if (typeof text === 'string') parts.push(text);
      else leftOut += 1;
    }
  }
  return { text: parts.join('\n\n'), leftOut };
}

/** What follows `/` when the box holds a command (a `/` and one word at its start), else null. */
export function commandOf(text) {
  return text.startsWith('/') && !/\s/.test(text.slice(1)) ? text.slice(1).toLowerCase() : null;
}

/** The prompts that `filter` (lower case) picks: by name or title. */
export function matching(prompts, filter) {
  return prompts.filter((p) => p.id.toLowerCase().includes(filter) || p.name.toLowerCase().includes(filter));
}

/** An item a server lists as a menu's option. */
function offer(server, item, key) {
  const str = (v) => (typeof v === 'string' ? v : '');
  return {
    server,
    id: str(item?.[key]),
    name: str(item?.title) || str(item?.name),
    description: str(item?.description),
    arguments: (Array.isArray(item?.arguments) ? item.arguments : []).map((a) => ({
      name: str(a?.name),
      description: str(a?.description),
      required: a?.required === true,
    })),
  };
}

/**
 * The resources and prompts of the enabled servers among `servers`, and a line per server that could
 * not be asked (its name and the cause): `{resources, prompts, problems}`. Each server is asked on a
 * connection of its own, closed after.
 */
export async function catalog(servers, connect = connectServer) {
  const found = { resources: [], prompts: [], problems: [] };
  for (const server of servers.filter((s) => s.enabled !== false)) {
    let conn;
    try {
      conn = await connect(server);
    } catch (e) {
      found.problems.push(`${server.name}: ${e?.message ?? e}`);
      continue;
    }
    // Resources and prompts are optional capabilities: a server without them lists none.
    for (const [method, key, into] of [['listResources', 'uri', found.resources], ['listPrompts', 'name', found.prompts]]) {
      try {
        into.push(...(await conn[method]()).map((item) => offer(server, item, key)));
      } catch (e) {
        found.problems.push(`${server.name}: ${e?.message ?? e}`);
      }
    }
    await conn.close();
  }
  return found;
}

/** Connects to `server`, runs `f` on the connection and closes it. */
async function once(server, f) {
  const conn = await connectServer(server);
  try {
    return await f(conn);
  } finally {
    await conn.close();
  }
}

const mounted = new WeakMap(); // message box → its menus

/** Mounts the menus on the composer of `box` (its message box), or gives mounted ones the new servers. */
export function mountMenus(box, servers) {
  const known = mounted.get(box);
  if (known) return known.update(servers);
  const menus = new Menus(box);
  mounted.set(box, menus);
  menus.update(servers);
}

/** Puts `text` in the message box as typing would (the app reads it from the `input` event). */
export function setDraft(box, text) {
  box.value = text;
  box.dispatchEvent(new Event('input', { bubbles: true }));
}

/** Gives `file` to the composer's file picker as picking would (the app reads it from `change`). */
export function attachFile(box, file) {
  const picker = (box.closest('form') ?? box.parentElement).querySelector('input[type=file]');
  if (!picker) throw new Error('the composer has no file picker');
  const files = new DataTransfer();
  files.items.add(file);
  picker.files = files.files;
  picker.dispatchEvent(new Event('change', { bubbles: true }));
}

const LABELS = { prompts: 'Prompts from MCP servers', resources: 'Resources from MCP servers' };

class Menus {
  constructor(box) {
    this.box = box;
    this.open = null; // 'prompts' | 'resources'
    this.catalog = null; // while asked: null
    this.filter = '';
    this.selected = 0;
    this.asked = 0; // the catalog of the latest opening wins
    const form = box.closest('form');
    const row = box.closest('.composer-box') ?? box.parentElement;
    this.panel = el('div', { class: 'composer-mcp', hidden: '' });
    this.menu = el('div', { class: 'mcp-menu' });
    this.list = el('ul', { role: 'listbox', id: 'mcp-menu', tabindex: '-1' });
    this.note = el('p', { class: 'mcp-menu-note' });
    this.menu.append(this.list, this.note);
    this.status = el('p', { class: 'composer-mcp-status', role: 'status', hidden: '' });
    this.panel.append(this.status);
    row.before(this.panel);
    this.button = el('button', {
      type: 'button',
      class: 'attach-resource',
      'aria-haspopup': 'listbox',
      title: "Attach a resource of this workspace's MCP servers",
      hidden: '',
    });
    this.button.textContent = 'Resource';
    const attach = row.querySelector('.attach');
    if (attach) attach.after(this.button);
    else row.prepend(this.button);
    this.button.addEventListener('click', () => this.show('resources'));
    box.addEventListener('input', () => this.typed(box.value));
    // Before the app's own handlers (Enter sends, Esc stops): taken keys go no further.
    (form ?? row).addEventListener('keydown', (ev) => (ev.target === box || ev.target === this.list) && this.key(ev), true);
    this.list.addEventListener('mousedown', (ev) => ev.preventDefault());
    this.list.addEventListener('click', (ev) => {
      const li = ev.target.closest?.('[role=option]');
      if (li) this.choose(this.items()[Number(li.dataset.index)]);
    });
    this.list.addEventListener('focusout', () => this.open === 'resources' && this.close());
  }

  update(json) {
    let servers = [];
    try {
      servers = JSON.parse(json || '[]');
    } catch {}
    this.servers = (Array.isArray(servers) ? servers : []).filter((s) => s.enabled !== false);
    this.button.hidden = this.servers.length === 0;
    if (this.servers.length === 0) this.close();
  }

  say(text) {
    this.status.textContent = text;
    this.status.hidden = !text;
    this.fit();
  }

  /** The panel takes room only while it shows something (the menu, a prompt's form, the status). */
  fit() {
    this.panel.hidden = !this.open && this.status.hidden && !this.panel.querySelector('.mcp-prompt-form');
  }

  async show(kind) {
    this.open = kind;
    this.selected = 0;
    this.catalog = null;
    this.say('');
    this.render();
    const mine = ++this.asked;
    const found =
      this.servers.length === 0
        ? { resources: [], prompts: [], problems: ['This workspace uses no MCP server: add one in Settings → Tools.'] }
        : await catalog(this.servers).catch((e) => ({ resources: [], prompts: [], problems: [e?.message ?? String(e)] }));
    if (mine !== this.asked || this.open !== kind) return;
    this.catalog = found;
    this.render();
    // The resources' menu takes the focus (the prompts' stays with the message box).
    if (kind === 'resources') this.list.focus();
  }

  close() {
    if (!this.open) return;
    this.open = null;
    this.asked += 1;
    this.render();
  }

  /** The message box's text changed: `/` and a word at its start open (and filter) the prompts. */
  typed(text) {
    const filter = commandOf(text);
    if (filter === null) return void (this.open === 'prompts' && this.close());
    this.filter = filter;
    this.selected = 0;
    if (this.open !== 'prompts') this.show('prompts');
    else this.render();
  }

  /** The open menu's options. */
  items() {
    if (!this.catalog) return [];
    if (this.open === 'prompts') return matching(this.catalog.prompts, this.filter);
    return this.open === 'resources' ? this.catalog.resources : [];
  }

  render() {
    const items = this.items();
    // Closed, the menu leaves the page (a listbox no one can reach is not left behind).
    if (!this.open) this.menu.remove();
    else if (!this.menu.isConnected) this.panel.prepend(this.menu);
    this.fit();
    this.list.replaceChildren(
      ...items.map((item, i) => {
        const li = el('li', { role: 'option', id: `mcp-option-${i}`, class: 'mcp-option', 'data-index': String(i) });
        const name = el('span', { class: 'mcp-option-name' });
        name.textContent = item.name || item.id;
        const about = el('span', { class: 'mcp-option-about' });
        about.textContent = item.description ? `${item.server.name} — ${item.description}` : item.server.name;
        li.append(name, about);
        return li;
      }),
    );
    this.list.setAttribute('aria-label', LABELS[this.open] ?? '');
    this.note.textContent = !this.open ? '' : this.catalog ? this.catalog.problems.join(' ') : 'Asking the servers…';
    this.select(items.length);
  }

  /** Marks the active option (and the box names it). */
  select(count) {
    this.selected = count ? Math.min(this.selected, count - 1) : 0;
    for (const li of this.list.children) li.setAttribute('aria-selected', String(li.id === `mcp-option-${this.selected}`));
    if (this.open && count) {
      this.box.setAttribute('aria-controls', 'mcp-menu');
      this.box.setAttribute('aria-activedescendant', `mcp-option-${this.selected}`);
      this.list.children[this.selected]?.scrollIntoView?.({ block: 'nearest' });
    } else {
      this.box.removeAttribute('aria-controls');
      this.box.removeAttribute('aria-activedescendant');
    }
  }

  /** A key pressed in the message box or the menu: ↑/↓, Enter and Esc act on the open menu. */
  key(ev) {
    if (!this.open || ev.isComposing) return;
    const items = this.items();
    const count = items.length;
    switch (ev.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        if (!count) return;
        this.selected = (this.selected + (ev.key === 'ArrowDown' ? 1 : count - 1)) % count;
        this.select(count);
        break;
      case 'Enter':
        if (ev.shiftKey) return;
        // While the servers are asked, Enter waits for the menu rather than sending "/…".
        if (this.catalog) {
          if (!count) return void this.close();
          this.choose(items[this.selected]);
        }
        break;
      case 'Escape':
        this.close();
        this.box.focus();
        break;
      default:
        return;
    }
    ev.preventDefault();
    ev.stopPropagation();
  }

  choose(item) {
    const kind = this.open;
    if (!item) return;
    this.close();
    if (kind === 'resources') this.read(item);
    else if (item.arguments.length === 0) this.prompt(item, {});
    else this.ask(item);
  }

  /** Reads the resource and attaches it, named by the resource. */
  async read(item) {
    const name = item.name || item.id;
    this.say(`Reading ${name} from ${item.server.name}…`);
    this.box.focus();
    try {
      const { mime, bytes } = resourceFile(item.id, await once(item.server, (c) => c.readResource(item.id)));
      this.say('');
      attachFile(this.box, new File([bytes], name, { type: mime }));
    } catch (e) {
      this.say(`${name} could not be attached: ${e?.message ?? e}`);
    }
  }

  /** Gets the prompt with `args` and puts its text in the message box. */
  async prompt(item, args) {
    const name = item.name || item.id;
    this.say(`Getting the prompt ${name} from ${item.server.name}…`);
    try {
      const { text, leftOut } = promptText(await once(item.server, (c) => c.getPrompt(item.id, args)));
      setDraft(this.box, text);
      this.say(leftOut ? `${leftOut} part(s) of the prompt were left out: only the text of its user messages is inserted.` : '');
      this.box.focus();
    } catch (e) {
      this.say(`The prompt ${name} could not be got: ${e?.message ?? e}`);
    }
  }

  /** The form asking for a prompt's arguments. */
  ask(item) {
    const name = item.name || item.id;
    const form = el('form', { class: 'mcp-prompt-form', 'aria-label': `Arguments of the prompt ${name}` });
    const inputs = item.arguments.map((a) => {
      const label = el('label', { class: 'mcp-argument' });
      label.textContent = a.required ? `${a.name} (required)` : a.name;
      const input = el('input', { type: 'text', title: a.description });
      input.required = a.required;
      label.append(input);
      form.append(label);
      return input;
    });
    const insert = el('button', { type: 'submit' });
    insert.textContent = 'Insert';
    const cancel = el('button', { type: 'button' });
    cancel.textContent = 'Cancel';
    form.append(insert, cancel);
    const done = () => {
      form.remove();
      this.fit();
      this.box.focus();
    };
    // The form sits in the composer's: its submit and keys are its own, never the composer's.
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      const args = Object.fromEntries(item.arguments.map((a, i) => [a.name, inputs[i].value]).filter(([, v]) => v !== ''));
      form.remove();
      this.fit();
      this.prompt(item, args);
    });
    form.addEventListener('keydown', (ev) => {
      ev.stopPropagation();
      if (ev.key === 'Escape') done();
    });
    cancel.addEventListener('click', done);
    this.panel.querySelector('.mcp-prompt-form')?.remove();
    this.status.before(form);
    this.fit();
    inputs[0]?.focus();
  }
}

/** An element with attributes. */
function el(tag, attributes = {}) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
  return e;
}
