//! The storage worker: the only place that opens the database. It installs the OPFS VFS, opens the
//! archive (falling back to memory, and saying so, when OPFS is unavailable), announces `Ready`, then
//! serves requests one at a time, in order. The agent loop runs here too, next to the archive, so each
//! of its writes is a local commit; `Stop` and `Approve` are answered out of turn.
//!
//! **Several tabs.** OPFS lets one worker at a time hold the archive's files, so the workers of an
//! origin's tabs elect an owner with a Web Lock. The owner serves its own tab and every request the
//! other workers forward to it over a `BroadcastChannel`; they relay its answers and events to their
//! tab, so to the UI every worker looks the same. When the owner's tab closes, its lock is released,
//! the next worker in the lock's queue opens the archive, announces itself, and the others send again
//! what was still unanswered (a message carries a client key, so it is never saved twice). Every
//! change is broadcast, so all tabs show new turns.
//!
//! - `hub.rs`: the election and the peers (who owns the archive, forwarding, relaying, release);
//!   `archive.rs`: opening it (OPFS, or memory that says so).
//! - `ops.rs`: what each operation does to the archive, the agent loop's requests and their events.
//! - `import.rs`: imports of any supported file (preview, progress).
//! - `importer.rs`: the readers of other tools' exports and the writers of exports in their formats
//!   (ChatGPT, Markdown), a wasm of their own loaded on first use.
//! - `digest.rs`: attachments' SHA-256 by WebCrypto, before they are saved.
//! - `tools.rs`: the page's tools and the user's approvals, asked of the tab that sent the request.
//! - `sync.rs`: the owner's sync with the user's NATS space (outbox out, stream in); `sync/push.rs`:
//!   following each space by push, and the wait between rounds.
//! - `mcp.rs`: Settings → Tools' asking of MCP servers (the MCP module loaded on demand) and their
//!   tokens (the model's calls are the page's, as page tools).
//! - `semantic.rs`: recall by meaning: the model's worker, background indexing, query embeddings.

mod archive;
mod digest;
mod hub;
mod import;
mod importer;
mod ops;
mod semantic;
mod sync;
mod tools;

pub use archive::DB_FILE;
pub use hub::run;
pub use ops::handle;
pub use tools::WorkerTools;
