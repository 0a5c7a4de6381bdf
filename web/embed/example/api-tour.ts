// A tour of the whole embedding API with its declared types: every exported function, class and
// method is used here, and `tsc --noEmit` checks it against dist/embed/cowork.d.ts (see tsconfig.json
// and tests/e2e/specs/embed.test.js). It is also a compact reference for a TypeScript host.
import init, {
  openArchive,
  mount,
  version,
  type Archive,
  type ArchiveEvents,
  type Attachment,
  type AssembledContext,
  type CoworkError,
  type ErrorKind,
  type HostTool,
  type McpServer,
  type MountHandle,
  type Resumed,
  type SearchHit,
  type SendResult,
  type Session,
  type SessionState,
  type StorageStats,
  type Turn,
} from "cowork";

const files = new Map<string, string>();

const writeFile: HostTool = {
  name: "write_file",
  description: "Writes a file of the host's file system.",
  parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path"] },
  approval: "ask",
  files: "write",
  handler: async ({ path, content }: { path: string; content?: string }, call) => {
    files.set(path, content ?? "");
    return { written: path, call: call.call_id };
  },
};

export async function tour(panel: HTMLElement, otherPanel: HTMLElement): Promise<string[]> {
  await init();
  const log: string[] = [`Cowork ${version()}`];

  const archive: Archive = await openArchive({
    storage: "opfs",
    model: { kind: "openai", base_url: "http://127.0.0.1:8080/v1", model: "demo", context_window: 32_768 },
    instructions: "You are embedded in a web IDE.",
  });
  log.push(`archive in ${archive.storage}`);

  archive.registerTool(writeFile);
  archive.registerTool({ name: "read_file", handler: ({ path }: { path: string }) => files.get(path) ?? "" });
  archive.setApprovalHandler(async (request) => request.name === "write_file" || request.mcp?.server === "docs");
  // An MCP server's tools, offered beside the page's own in the workspace's sessions.
  const docs: McpServer = await archive.addMcpServer("http://127.0.0.1:8808/mcp", {
    name: "docs",
    token: "a bearer token",
    workspace: "tour",
    policy: "ask_unless_read_only",
  });
  log.push(`MCP server ${docs.name} (${docs.auth}) at ${docs.url}`);
  log.push(`tools: ${archive.listTools().join(", ")}`);

  const stopTurns = archive.on("turn", ({ turn }: ArchiveEvents["turn"]) => log.push(`turn ${turn.turn_number}`));
  const stopDeltas = archive.on("delta", ({ text }) => log.push(text));
  const stopTools = archive.on("tool", (e) => log.push(e.event === "tool_finished" ? `${e.name}: ${e.success}` : e.arguments));
  const stopTasks = archive.on("task", ({ checklist }) => log.push(`${checklist.length} subtasks`));
  const stopOthers = [
    archive.on("session", ({ session }) => log.push(session.id)),
    archive.on("sessions", ({ deleted }) => log.push(deleted ?? "changed")),
    archive.on("retry", ({ wait_ms }) => log.push(`retry in ${wait_ms} ms`)),
    archive.on("error", ({ kind, message }) => {
      const settingsFix: ErrorKind[] = ["auth", "quota", "bad_request", "cors", "context_overflow", "network"];
      log.push(settingsFix.includes(kind) ? `${message} (check the model settings)` : message);
    }),
  ];

  const session: Session = await archive.createSession({ workspace: "ide", title: "Refactor auth" });
  const sessions: Session[] = await archive.listSessions({ workspace: "ide", include_archived: false });
  const again: Session = await archive.getSession(session.id);
  const state: SessionState = again.state;
  log.push(`${sessions.length} sessions; focus: ${state.current_focus}`);

  const appended: Turn = await archive.appendTurn(session.id, { role: "user", content: "We use PostgreSQL." });
  const turns: Turn[] = await archive.readTurns(session.id, { offset: 0, limit: 50 });
  const notes = new File(["PostgreSQL 16, pgvector\n"], "db-notes.md", { type: "text/markdown" });
  const withFile: Turn = await archive.appendTurn(session.id, { role: "user", content: "Our notes." }, [notes]);
  const attached: Attachment[] = withFile.attachments ?? [];
  const copy: Blob = await archive.readAttachment(attached[0].sha256);
  log.push(`${attached[0].name} (${attached[0].kind}, ${copy.size} bytes, ${copy.type})`);
  const hits: SearchHit[] = await archive.search("postgresql", { session_id: session.id, roles: ["user"], limit: 5 });
  const recalled: string = await archive.recall(session.id, { action: "tool_calls", tool_name: "write_file" });
  const context: AssembledContext = await archive.assembleContext(session.id, { instructions: "Be brief." });
  log.push(`${appended.turn_number} ${turns.length} ${hits.length} ${recalled.length} ${context.manifest.estimated_tokens}`);

  const sent: SendResult = await archive.send(session.id, "write file notes.md: hello", {
    model: { model: "demo", max_attachment_bytes: 1_000_000 },
    attachments: [new Blob(["a b c"], { type: "text/plain" })],
  });
  const continued: SendResult = await archive.continueSession(session.id);
  await archive.stop();
  log.push(`${sent.outcome} / ${continued.outcome}`);

  const resumed: Resumed = await archive.resume(session.id, { last_turns: 20 });
  const fork: Session = await archive.forkSession(session.id, 1);
  const renamed: Session = await archive.renameSession(fork.id, "Auth, first idea");
  await archive.deleteSession(renamed.id);
  log.push(`${resumed.turns.length} turns, files: ${resumed.state.files_touched.map((f) => f.path).join(", ")}`);

  try {
    await archive.getSession("no-such-session");
  } catch (e) {
    // Every rejection is a CoworkError: its kind picks the remedy, its message says it in words.
    const failure = e as CoworkError;
    const kind: ErrorKind = failure.kind;
    log.push(kind === "not_found" ? "that session is gone" : failure.message);
  }

  const stats: StorageStats = await archive.stats();
  const one: string = await archive.exportJsonl(session.id);
  const all: string = await archive.exportJsonl();
  const summary: string = await archive.importJsonl(all);
  log.push(`${stats.turns} turns, ${one.length}/${all.length} bytes; ${summary}`);

  // The whole UI: on this archive (with its tools), or on its own.
  const inIde: MountHandle = archive.mount(panel, { model: { model: "demo" } });
  inIde.unmount();
  const standalone: MountHandle = mount(otherPanel, { storage: "memory", worker_url: "/embed/storage-worker_loader.js" });
  standalone.unmount();

  for (const stop of [stopTurns, stopDeltas, stopTools, stopTasks, ...stopOthers]) stop();
  console.assert(archive.unregisterTool("read_file"));
  archive.close();
  return log;
}
