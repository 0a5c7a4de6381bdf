
/** Where an archive lives: the browser's private file system (kept, shared by the origin's tabs), or memory. */
export type StorageKind = "opfs" | "memory";
export type Role = "system" | "user" | "assistant" | "tool";
export type TurnStatus = "complete" | "interrupted" | "error";

/** What kind of failure an `error` or `retry` event, or a rejection (`CoworkError`), reports. */
export type ErrorKind =
  | "auth"
  | "rate_limited"
  | "quota"
  | "model_server"
  | "bad_request"
  | "network"
  | "cors"
  | "bad_reply"
  | "context_overflow"
  | "storage_full"
  | "storage"
  | "schema"
  | "not_found"
  | "invalid"
  | "import"
  | "internal"
  | "attachment_too_large";

/** What every method of the API rejects with: an `Error` whose message starts with the method's name
 * and says what to do, and whose `kind` says what kind of failure it is (`"invalid"` for a call made
 * wrongly, `"not_found"`, `"storage"`, `"auth"`, …), so a page chooses its remedy without reading the
 * words. */
export interface CoworkError extends Error {
  kind: ErrorKind;
}

/** A model endpoint. Every field is optional: the rest comes from the archive's settings, or the dev
 * server's demo model on this page's origin. The API key is only sent to `base_url`, never stored. */
export interface ModelSettings {
  /** `"openai"` (any OpenAI-compatible endpoint) or `"anthropic"`. */
  kind?: "openai" | "anthropic";
  /** e.g. `https://api.openai.com/v1`. */
  base_url?: string;
  model?: string;
  api_key?: string;
  /** The model's context window in tokens (1,024 to 10,000,000). */
  context_window?: number;
  /** Tokens kept free for the reply (256 to half the window). */
  output_reserve?: number;
  /** A Loom-compatible orchestrator for `delegate_task`; `""` turns delegation off. */
  orchestrator_url?: string;
  /** The largest attachment one message may carry, in bytes (default 20 MB). */
  max_attachment_bytes?: number;
}

export interface OpenOptions {
  /** `"opfs"` (default): the origin's archive, kept by the browser and shared with the Cowork app and
   * other tabs. `"memory"`: a private archive that is gone when the page closes. */
  storage?: StorageKind;
  /** URL of `storage-worker_loader.js`; by default the one next to this module. */
  worker_url?: string;
  /** The model `send()` uses unless a call says otherwise. */
  model?: ModelSettings;
  /** Appended to the system prompt of every request (e.g. what the host application is). */
  instructions?: string;
}

export interface MountOptions {
  storage?: StorageKind;
  worker_url?: string;
  /** The model the UI starts with (otherwise the settings saved in this browser). */
  model?: ModelSettings;
}

export interface ArchiveMountOptions {
  model?: ModelSettings;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the model sent them (JSON text). */
  arguments: string;
}

/** One message of a session, verbatim, as the archive keeps it. */
export interface Turn {
  id: number;
  session_id: string;
  /** 1, 2, 3 … within the session (a fork continues its parent's numbering). */
  turn_number: number;
  role: Role;
  content: string;
  tool_calls: ToolCall[];
  /** For a tool result: the call it answers. */
  tool_call_id: string | null;
  tool_name: string | null;
  token_count: number;
  status: TurnStatus;
  /** Milliseconds since the Unix epoch. */
  created_at: number;
  metadata: unknown;
  /** The images and files the turn carries (absent when none); read their bytes with
   * `readAttachment(sha256)`. */
  attachments?: Attachment[];
}

/** An image or file a turn carries, without its bytes. */
export interface Attachment {
  /** SHA-256 of the bytes, lower-case hex: the key for `readAttachment`. The same content attached
   * twice is stored once. */
  sha256: string;
  /** The file's name, verbatim (it may hold path separators or control characters: show it as text). */
  name: string;
  /** For an image, the type its header shows; otherwise as the browser gave it. */
  mime: string;
  /** Bytes. */
  size: number;
  /** `"image"` (PNG, JPEG, GIF or WebP with a readable header: sent to models as an image), `"text"`
   * (indexed for search, sent inline) or `"file"` (anything else, SVG included: named, not sent). */
  kind: "image" | "text" | "file";
  /** An image's pixel size. */
  width?: number;
  height?: number;
}

/** What `appendTurn` takes: only `role` is required. */
export interface NewTurn {
  role: Role;
  content?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string | null;
  tool_name?: string | null;
  status?: TurnStatus;
  metadata?: unknown;
}

export interface FileTouch {
  path: string;
  action: "read" | "create" | "write" | "edit" | "delete";
  /** The turn of the (successful) tool result. */
  turn: number;
}

/** The session-state register, extracted mechanically from the turns and sent with every request. */
export interface SessionState {
  session: { id: string; workspace: string; model: string; turn_count: number; total_tokens: number };
  /** Oldest first, at most 20, one entry per path. */
  files_touched: FileTouch[];
  key_decisions: string[];
  current_focus: string;
  errors_resolved: string[];
  open_tasks: { task_id: string; goal: string; status: string }[];
  version: number;
}

export interface Session {
  id: string;
  workspace: string;
  title: string;
  model: string;
  system_prompt: string;
  created_at: number;
  last_active_at: number;
  /** Turns visible in the session, including those a fork inherits. */
  turn_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  state: SessionState;
  parent_session_id: string | null;
  fork_turn: number | null;
  is_archived: boolean;
}

export interface TaskRecord {
  task_id: string;
  session_id: string;
  turn_number: number;
  goal: string;
  context: string;
  status: string;
  result_delivered: boolean;
  created_at: number;
  updated_at: number;
}

export interface Resumed {
  session: Session;
  state: SessionState;
  /** The last turns, oldest first. */
  turns: Turn[];
  /** Delegated tasks not finished or not delivered yet. */
  pending_tasks: TaskRecord[];
}

export interface CreateSessionOptions {
  workspace?: string;
  /** Default: the first user message names the session. */
  title?: string;
}

export interface ListSessionsOptions {
  workspace?: string;
  include_archived?: boolean;
}

export interface ResumeOptions {
  /** How many of the last turns to return (default 50). */
  last_turns?: number;
}

export interface ReadTurnsOptions {
  offset?: number;
  /** Default 100, at most 1,000. */
  limit?: number;
}

export interface SearchOptions {
  /** Only this session (with the turns it inherits); or `workspace`; default: every session. */
  session_id?: string;
  workspace?: string;
  roles?: Role[];
  /** Default 10, at most 50. */
  limit?: number;
  /** Treat the last word as a prefix (search as you type). */
  prefix_last?: boolean;
}

export interface SearchHit {
  session_id: string;
  session_title: string;
  turn_id: number;
  turn_number: number;
  role: Role;
  tool_name: string | null;
  created_at: number;
  /** Plain text around the match. */
  snippet: string;
  /** Byte ranges of `snippet` that matched. */
  highlights: [number, number][];
  /** Higher is better. */
  score: number;
}

/** The arguments of `conversation_recall`, as the model sends them. */
export type RecallRequest =
  | { action: "search"; query: string; limit?: number; scope?: "session" | "workspace"; roles?: Role[] }
  | { action: "range"; start: number; end: number }
  | { action: "tool_calls"; tool_name: string; limit?: number }
  | { action: "summary" }
  | string;

export interface RequestOptions {
  /** Overrides the archive's model settings for this request. */
  model?: ModelSettings;
  /** Replaces the archive's extra instructions for this request. */
  instructions?: string;
  /** `send()` only: images and files to send with the message (`File`s keep their names). */
  attachments?: Blob[];
}

export interface ContextMessage {
  role: Role;
  content: string;
  tool_calls: ToolCall[];
  tool_call_id: string | null;
  name: string | null;
}

export interface ContextManifest {
  session_id: string;
  /** The turns in the window. */
  turn_numbers: number[];
  /** Turns in the window shortened to head and tail. */
  trimmed_turns: number[];
  state_version: number;
  estimated_tokens: number;
  budget_tokens: number;
  usage: unknown;
  created_at: number;
}

export interface AssembledContext {
  messages: ContextMessage[];
  manifest: ContextManifest;
  /** Turns only in the archive (not in the window). */
  archived_turns: number;
  /** The tools offered, in the OpenAI function format. */
  tools: unknown[];
}

export interface SendResult {
  session_id: string;
  /** `"done"`, `"interrupted: …"` or `"stopped after N model calls"`. */
  outcome: string;
}

export interface StorageStats {
  sessions: number;
  turns: number;
  tool_executions: number;
  tasks: number;
  manifests: number;
  /** Attachment contents stored (each distinct content once) and their bytes. */
  blobs: number;
  blob_bytes: number;
  bytes: number;
  schema_version: number;
}

/** The second argument of a tool handler. */
export interface ToolCallInfo {
  call_id: string;
  name: string;
}

/** A tool of the page, offered to the model. */
export interface HostTool {
  /** 1 to 64 letters, digits, `_` or `-`; not `conversation_recall` or `delegate_task`; no `__` (MCP tools' `<server>__<tool>`). */
  name: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters?: Record<string, unknown>;
  /** `"auto"` (default) runs every call; `"ask"` asks the approval handler first. */
  approval?: "auto" | "ask";
  /** What the tool does to the files its `path` (or `file_path`, `paths`, …) argument names, so they
   * appear in the state register's `files_touched`. Tools named `read_file`, `write_file`,
   * `edit_file`, `create_file`, `delete_file` … are known without it. */
  files?: FileTouch["action"];
  /** Runs one call: the result is a string, or any JSON value; throw to fail the call. */
  handler: (args: any, call: ToolCallInfo) => unknown | Promise<unknown>;
}

export interface ApprovalRequest {
  call_id: string;
  name: string;
  /** The parsed arguments (the raw text when they are not JSON). */
  arguments: unknown;
  /** For a tool of an MCP server (`addMcpServer`): the server's name and the tool's, as it names it. */
  mcp?: { server: string; tool: string };
}

/** Whether a call of an MCP server's tool asks the approval handler first: every call, every call of a
 * tool the server does not mark read-only (`readOnlyHint`, and not `destructiveHint`), or none. */
export type McpToolPolicy = "always_ask" | "ask_unless_read_only" | "never_ask";

/** An MCP server as a workspace keeps it (in the archive, exported and synced with the workspace);
 * its token is not in it. */
export interface McpServer {
  id: string;
  /** Its tools are offered to the model as `<name>__<tool>`. */
  name: string;
  url: string;
  auth: "none" | "bearer" | "oauth";
  enabled: boolean;
  policy: McpToolPolicy;
  /** Tools with a policy of their own. */
  tools?: { tool: string; policy: McpToolPolicy }[];
}

export interface McpServerOptions {
  /** Default: the URL's host name. Unique within the workspace. */
  name?: string;
  /** A bearer token, kept in this browser outside the archive (never exported or synced). */
  token?: string;
  /** The workspace whose sessions use the server (default: the one `createSession` uses without one). */
  workspace?: string;
  /** Default: `"ask_unless_read_only"`. */
  policy?: McpToolPolicy;
}

/** The events of `Archive.on`, by kind. */
export interface ArchiveEvents {
  /** A turn was committed: by this page's requests, another tab, or the Cowork app. An assistant turn
   * is first committed empty with status `"interrupted"`, then again when its reply is complete. */
  turn: { event: "turn_appended"; turn: Turn };
  session: { event: "session_created"; session: Session };
  /** Sessions were renamed, forked, archived, deleted or imported. */
  sessions: { event: "sessions_changed"; deleted: string | null };
  /** Streamed text of the reply being written. */
  delta: { event: "delta"; session_id: string; turn_number: number; text: string };
  tool:
    | { event: "tool_started"; session_id: string; turn_number: number; name: string; arguments: string }
    | { event: "tool_finished"; session_id: string; turn_number: number; name: string; success: boolean; duration_ms: number };
  /** A delegated task moved on: its whole checklist so far. */
  task: {
    event: "task_progress";
    session_id: string;
    task_id: string;
    event_type: string;
    status: string;
    goal: string;
    checklist: { label: string; status: string; detail?: string }[];
  };
  /** The model endpoint asked to wait (429, 5xx) or could not be reached; the request is retried. */
  retry: { event: "retrying"; attempt: number; wait_ms: number; kind: ErrorKind; reason: string };
  /** The reply failed: what kind of failure (to choose a remedy without reading the words) and why. */
  error: { event: "error"; kind: ErrorKind; message: string };
}

export interface Archive {
  /** Calls `handler` with each event of this kind; returns a function that stops it. */
  on<K extends keyof ArchiveEvents>(event: K, handler: (payload: ArchiveEvents[K]) => void): () => void;
}
