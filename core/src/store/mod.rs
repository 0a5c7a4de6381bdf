//! The conversation archive: sessions, append-only turns, full-text search, forks, tasks and
//! manifests in SQLite. One code path for native (rusqlite `bundled`) and the browser (sqlite-wasm-rs
//! on the OPFS `sahpool` VFS, see `opfs`, browser builds only).
//!
//! Write-through: every `append_*` commits before it returns.
//!
//! Where things are: `Store` and opening an archive here; `sessions` (create, list, rename, archive,
//! fork, resume, state and usage), `branches` (where edits and regenerations diverge), `turns`
//! (append, checkpoint, finalise, read, tool executions), `search`, `tasks` (delegated tasks and their
//! events, manifests, calibration, statistics), `workspaces` (per-workspace settings), `attachments`
//! (files kept as blobs by their SHA-256); `sync` the archive's side of sync, `synced` the user's
//! writes that sync carries out by its own rules (a session's delete, a workspace's move) and
//! `capture` whether writes are captured for it; `rows` holds the content tables' columns, their
//! `INSERT`s and row mappings; `export` and `import` the file formats (`jsonl` the archive format's
//! lines); `foreign` imports other tools' exports (read by [`crate::import`]) and `export_chatgpt`
//! gathers what [`crate::export`] makes ChatGPT's format from; `schema` the migrations.

mod attachments;
mod branches;
mod capture;
mod export;
mod export_chatgpt;
mod foreign;
// FTS5's C API for one ranking function: `unsafe` too.
#[allow(unsafe_code)]
mod fts_rank;
mod hybrid;
mod import;
mod joined;
mod jsonl;
#[cfg(target_arch = "wasm32")]
pub mod opfs;
// SQLite's C VFS interface: one of the two modules allowed `unsafe` (with `fts_rank`).
#[allow(unsafe_code)]
mod join_vfs;
mod query;
mod rows;
mod schema;
mod search;
mod sessions;
mod shared;
mod sources;
mod sql_text;
pub mod sync;
mod synced;
mod tasks;
mod turn_cache;
mod turns;
mod vectors;
mod workspaces;

pub use crate::semantic::SemanticSettings;
pub use crate::BranchPoint;
pub use attachments::valid_sha256;
pub use foreign::{ForeignImportSummary, ImportCounts, ImportPreview, ImportProgress, ReadConversations};
pub use import::ImportSummary;
pub use jsonl::{is_cowork_archive, FORMAT_VERSION};
pub use query::{Terms, MAX_TERMS};
pub use schema::LATEST as SCHEMA_VERSION;
pub use search::{FALLBACK_WINDOW, MAX_SEARCH_LIMIT, RANK_BUDGET};
pub use sessions::{NewSession, Resumed, SessionFilter, WorkspaceSummary, TITLE_MAX_CHARS};
pub use shared::SharedStore;
pub use sources::SessionTurns;
pub use turns::{NewToolExecution, CLIENT_KEY_WINDOW};
pub use vectors::PendingBatch;

use crate::error::{Context, Result};
use crate::now_ms;
use rusqlite::Connection;

/// The archive.
pub struct Store {
    conn: Connection,
    /// Last timestamp handed out: times from one store strictly increase, so "most recent" is exact.
    last_ms: std::cell::Cell<i64>,
    /// The semantic index's vectors, read into memory on the first search by meaning.
    vectors: std::cell::RefCell<Option<vectors::VectorCache>>,
    /// The turns context assembly read last, per session (`turn_cache`).
    turn_cache: std::cell::RefCell<turn_cache::TurnCache>,
}

impl Store {
    /// Opens (creating if needed) and upgrades the archive at `path`. In the browser, install the OPFS
    /// VFS first (`opfs::install`, browser builds only); the path then names a file in the OPFS pool.
    pub fn open(path: &str) -> Result<Store> {
        let conn = Connection::open(path).context(format!("opening the archive {path}"))?;
        Store::from_connection(conn)
    }

    /// A throwaway archive in memory (tests, browsers without OPFS).
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory().context("opening an in-memory archive")?;
        Store::from_connection(conn)
    }

    fn from_connection(mut conn: Connection) -> Result<Store> {
        // Exclusive locking first: a WAL archive can only be read without shared memory (which the OPFS
        // VFS lacks) once the connection holds its lock for good. It writes nothing.
        lock_exclusively(&conn)?;
        // Check the version before anything that could write: a newer (or negative) one stays untouched.
        schema::check_version(schema::user_version(&conn)?)?;
        configure(&conn)?;
        schema::migrate(&mut conn, schema::LATEST)?;
        Ok(Store::with(conn))
    }

    fn with(conn: Connection) -> Store {
        Store {
            conn,
            last_ms: std::cell::Cell::new(0),
            vectors: std::cell::RefCell::new(None),
            turn_cache: Default::default(),
        }
    }

    /// A timestamp (ms) later than any this store handed out before.
    fn tick(&self) -> i64 {
        let t = now_ms().max(self.last_ms.get() + 1);
        self.last_ms.set(t);
        t
    }

    /// Opens an archive and upgrades it only to `version` (fixtures and migration tests).
    #[doc(hidden)]
    pub fn open_at_version(path: &str, version: i64) -> Result<Store> {
        let mut conn = Connection::open(path).context(format!("opening the archive {path}"))?;
        lock_exclusively(&conn)?;
        schema::check_version(schema::user_version(&conn)?)?;
        configure(&conn)?;
        schema::migrate(&mut conn, version)?;
        Ok(Store::with(conn))
    }

    /// The archive's schema version (`PRAGMA user_version`): [`SCHEMA_VERSION`] once opened with [`Store::open`].
    pub fn schema_version(&self) -> Result<i64> {
        schema::user_version(&self.conn)
    }

    /// `PRAGMA integrity_check`: `"ok"` for a healthy archive.
    pub fn integrity_check(&self) -> Result<String> {
        let rows: Vec<String> = self
            .conn
            .prepare("PRAGMA integrity_check")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .context("checking the archive's integrity")?;
        Ok(rows.join("\n"))
    }

    /// The underlying connection, for benchmarks and diagnostics.
    #[doc(hidden)]
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

fn lock_exclusively(conn: &Connection) -> Result<()> {
    conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE;").context("locking the archive")
}

fn configure(conn: &Connection) -> Result<()> {
    // One connection owns the archive (the storage worker holds a Web Lock for it), so the lock is
    // taken once and kept: `locking_mode = EXCLUSIVE`. That lets WAL work without shared memory, which
    // the OPFS sahpool VFS does not offer, and a WAL commit is one append + one flush where a rollback
    // journal (TRUNCATE) wrote and flushed the journal and the database and then truncated the journal.
    // synchronous stays FULL: a commit is on disk before `append_turn` returns. Measured in
    // BENCHMARKS.md.
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
        .context("configuring the archive")?;
    fts_rank::register(conn)
}

/// Puts the layer the browser's storage uses to join a file's back-to-back writes (`join_vfs.rs`) over
/// SQLite's own file VFS, and returns its VFS name: tests open `file:PATH?vfs=NAME` to run an archive
/// through it natively.
#[cfg(not(target_arch = "wasm32"))]
#[doc(hidden)]
pub fn join_writes_natively() -> Result<&'static str> {
    // SQLite's unix VFS takes at most 128 KB a write (its `seekAndWrite`).
    join_vfs::register(c"unix", (128 << 10) - 1, false)?;
    Ok(join_vfs::NAME.to_str().expect("an ASCII name"))
}

/// The SQLite library version in use (e.g. "3.50.4").
pub fn sqlite_version() -> String {
    rusqlite::version().to_owned()
}
