// The embedding example: a page that is not Cowork uses only the published module. It keeps a tiny
// virtual file system, lets the model read and write it through two tools of its own, chats through
// the archive (the dev server's demo model by default), and shows the session-state register.
import init, { openArchive, version } from "cowork";

const $ = (id) => document.getElementById(id);
const SESSION_KEY = "cowork-example.session";
const FILES_KEY = "cowork-example.files";

// --- the page's own virtual file system (kept in localStorage so it survives a reload) -----------
const files = new Map(Object.entries(JSON.parse(localStorage.getItem(FILES_KEY) || "{}")));
function saveFiles() {
  localStorage.setItem(FILES_KEY, JSON.stringify(Object.fromEntries(files)));
  $("files").replaceChildren(
    ...[...files.keys()].sort().map((path) => {
      const li = document.createElement("li");
      li.textContent = `${path} (${files.get(path).length} characters)`;
      return li;
    }),
  );
}

// --- rendering ----------------------------------------------------------------------------------
function describe(turn) {
  if (turn.role === "tool") return `← ${turn.tool_name}: ${turn.content}`;
  const calls = turn.tool_calls.map((c) => `→ ${c.name} ${c.arguments}`).join("\n");
  return [turn.content, calls].filter(Boolean).join("\n");
}

function showTurn(turn) {
  let li = $("log").querySelector(`li[data-turn="${turn.turn_number}"]`);
  if (!li) {
    li = document.createElement("li");
    li.dataset.turn = turn.turn_number;
    const items = [...$("log").children];
    const after = items.find((x) => Number(x.dataset.turn) > turn.turn_number);
    $("log").insertBefore(li, after ?? null);
  }
  li.dataset.role = turn.role;
  li.dataset.status = turn.status;
  const role = document.createElement("span");
  role.className = "role";
  role.textContent = turn.role;
  li.replaceChildren(role, document.createTextNode(describe(turn)));
  li.scrollIntoView({ block: "nearest" });
}

function showState(state) {
  const files = state.files_touched.map((f) => `  ${f.action} ${f.path} (turn ${f.turn})`).join("\n");
  $("state").textContent = [
    `current focus: ${state.current_focus || "—"}`,
    `files touched:${files ? "\n" + files : " none"}`,
    `key decisions: ${state.key_decisions.length ? state.key_decisions.join("; ") : "none"}`,
    `errors resolved: ${state.errors_resolved.length}`,
    `version: ${state.version}`,
  ].join("\n");
}

function fail(e) {
  $("error").textContent = e instanceof Error ? e.message : String(e);
}

// --- the archive ----------------------------------------------------------------------------------
await init();
const archive = await openArchive({
  instructions: "You are embedded in the Cowork example page. Its files live in the page: use read_file and write_file.",
});
$("status").textContent = `Cowork ${version()} · archive in ${archive.storage === "opfs" ? "this browser (OPFS)" : "memory"}`;

archive.registerTool({
  name: "read_file",
  description: "Reads a file of the page's virtual file system.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  handler: ({ path }) => {
    if (!files.has(path)) throw new Error(`no such file: ${path}`);
    return files.get(path);
  },
});
archive.registerTool({
  name: "write_file",
  description: "Writes (creates or replaces) a file of the page's virtual file system.",
  parameters: {
    type: "object",
    properties: { path: { type: "string" }, content: { type: "string" } },
    required: ["path", "content"],
  },
  handler: ({ path, content }) => {
    files.set(path, content ?? "");
    saveFiles();
    return `wrote ${(content ?? "").length} characters to ${path}`;
  },
});
// Delegation (and any tool registered with approval "ask") asks the person at the page.
archive.setApprovalHandler(({ name, arguments: args }) => confirm(`Allow ${name}?\n${JSON.stringify(args, null, 2)}`));

let session = null;
archive.on("turn", ({ turn }) => {
  if (turn.session_id !== session?.id) return;
  $("streaming").hidden = true;
  showTurn(turn);
});
archive.on("delta", ({ session_id, text }) => {
  if (session_id !== session?.id) return;
  const p = $("streaming");
  p.hidden = false;
  p.textContent += text;
});
archive.on("error", ({ message }) => fail(message));

async function refreshState() {
  session = await archive.getSession(session.id);
  showState(session.state);
}

async function open(id) {
  const resumed = await archive.resume(id, { last_turns: 200 });
  session = resumed.session;
  localStorage.setItem(SESSION_KEY, session.id);
  $("session-title").textContent = session.title || "New session";
  $("log").replaceChildren();
  resumed.turns.forEach(showTurn);
  showState(resumed.state);
}

async function newSession() {
  const created = await archive.createSession({ workspace: "example" });
  await open(created.id);
}

// Resume where the page was (the session id is all it keeps); else start a session.
const sessions = await archive.listSessions({ workspace: "example" });
const last = localStorage.getItem(SESSION_KEY);
if (last && sessions.some((s) => s.id === last)) await open(last);
else await newSession();
saveFiles();

// --- the controls --------------------------------------------------------------------------------
$("composer").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const text = $("message").value.trim();
  if (!text) return;
  $("error").textContent = "";
  $("send").disabled = true;
  $("streaming").textContent = "";
  try {
    const { outcome } = await archive.send(session.id, text);
    $("message").value = "";
    if (outcome !== "done") fail(`Reply ${outcome}`);
  } catch (e) {
    fail(e); // the message is saved in the archive either way
  } finally {
    $("send").disabled = false;
    $("streaming").hidden = true;
    await refreshState();
    $("session-title").textContent = session.title;
  }
});

$("recall-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const tool_name = $("recall-tool").value.trim();
  try {
    $("recall").textContent = await archive.recall(session.id, { action: "tool_calls", tool_name });
  } catch (e) {
    fail(e);
  }
});

$("context-button").addEventListener("click", async () => {
  try {
    const { manifest, messages, archived_turns } = await archive.assembleContext(session.id);
    $("context").textContent =
      `${messages.length} messages, ~${manifest.estimated_tokens} of ${manifest.budget_tokens} tokens; ` +
      `turns ${manifest.turn_numbers.join(", ") || "none"} in the window, ${archived_turns} only in the archive.`;
  } catch (e) {
    fail(e);
  }
});

$("new-session").addEventListener("click", () => newSession().catch(fail));

// The whole Cowork UI on the same archive (the page's tools included), in a box of the page.
let mounted = null;
$("toggle-ui").addEventListener("click", () => {
  const box = $("ui");
  if (mounted) {
    mounted.unmount();
    mounted = null;
  } else {
    mounted = archive.mount(box);
  }
  box.hidden = !mounted;
  $("toggle-ui").setAttribute("aria-pressed", String(Boolean(mounted)));
});

document.body.dataset.ready = "true";
