//! The browser's persistent storage: SQLite's OPFS `sahpool` VFS, usable only in a dedicated worker.
//!
//! `install` registers the VFS, with the layer that joins a file's back-to-back writes in front of it
//! (`join_vfs.rs`), as SQLite's default, after which [`Store::open`](super::Store::open)
//! with a plain file name (e.g. `"cowork.db"`) opens a file in the origin-private file system.

use crate::error::{Error, Result};
use sqlite_wasm_rs::vfs::VfsFilesManager;
use sqlite_wasm_vfs::sahpool::{OpfsSAHError, OpfsSAHPoolCfgBuilder, OpfsSAHPoolUtil};

/// Handle on the installed OPFS pool.
pub struct Opfs {
    util: OpfsSAHPoolUtil,
}

/// The pool's VFS name (`sqlite-wasm-vfs`'s default, which `install` keeps).
const POOL: &std::ffi::CStr = c"opfs-sahpool";

/// The longest run of joined writes held for a file: 4 MB, a transaction's worth of pages (SQLite's
/// page cache spills at 2 MB), so memory stays bounded during a large import.
const JOINED_CAP: usize = 4 << 20;

/// File slots kept in the pool: each database needs its file and its journal.
const MIN_CAPACITY: usize = 8;

/// Why the OPFS pool could not be installed, by what helps.
#[derive(Debug)]
pub enum Unavailable {
    /// This context cannot keep data at all (not a dedicated worker, or not a secure context):
    /// waiting will not help.
    NotSupported(Error),
    /// The pool could not be taken now (another tab may still hold its files): trying again may work.
    Busy(Error),
}

impl Unavailable {
    /// Whether trying again later can succeed.
    pub fn may_pass(&self) -> bool {
        matches!(self, Unavailable::Busy(_))
    }

    /// The failure, with its message for the user.
    pub fn error(&self) -> &Error {
        match self {
            Unavailable::NotSupported(e) | Unavailable::Busy(e) => e,
        }
    }
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error().fmt(f)
    }
}

impl From<Unavailable> for Error {
    fn from(u: Unavailable) -> Error {
        match u {
            Unavailable::NotSupported(e) | Unavailable::Busy(e) => e,
        }
    }
}

/// Installs the OPFS VFS (idempotent within a worker) and makes it SQLite's default.
///
/// Fails with [`Unavailable::NotSupported`] outside a dedicated worker or in an insecure context, and
/// with [`Unavailable::Busy`] when the pool cannot be taken now (another tab holds its access handles).
pub async fn install() -> std::result::Result<Opfs, Unavailable> {
    let cfg = OpfsSAHPoolCfgBuilder::new().directory(".cowork").build();
    let util = sqlite_wasm_vfs::sahpool::install::<sqlite_wasm_rs::WasmOsCallback>(&cfg, true)
        .await
        .map_err(|e| unavailable("installing the OPFS storage", e))?;
    util.ensure_capacity(MIN_CAPACITY).await.map_err(|e| unavailable("reserving OPFS files", e))?;
    super::join_vfs::register(POOL, JOINED_CAP, true).map_err(Unavailable::NotSupported)?;
    Ok(Opfs { util })
}

fn unavailable(what: &str, e: OpfsSAHError) -> Unavailable {
    match e {
        OpfsSAHError::NotSupported => Unavailable::NotSupported(storage(what, e)),
        e => Unavailable::Busy(storage(what, e)),
    }
}

fn storage(what: &str, e: OpfsSAHError) -> Error {
    let hint = match e {
        OpfsSAHError::NotSupported => {
            " (this browser context cannot persist data: it needs a dedicated worker in a secure context)"
        }
        _ => "",
    };
    Error::Storage(format!("{what}: {e}{hint}"))
}

impl Opfs {
    /// Deletes a (closed) database file. Returns whether it existed.
    pub fn remove(&self, name: &str) -> Result<bool> {
        self.util.remove(name).map_err(|e| storage(&format!("removing {name}"), e))
    }

    /// Whether a database file exists in the pool.
    pub fn exists(&self, name: &str) -> Result<bool> {
        self.util.contains(name).map_err(|e| storage(&format!("looking for {name}"), e))
    }

    /// Makes room for at least `files` files in the pool (each open archive needs two: the database
    /// and its journal).
    pub async fn reserve(&self, files: usize) -> Result<()> {
        self.util.ensure_capacity(files).await.map_err(|e| storage("reserving OPFS files", e))
    }

    /// Releases the OPFS access handles (close every database first), e.g. on `pagehide`, so another
    /// tab or a reload can take over at once.
    pub fn pause(&self) -> Result<()> {
        self.util.pause().map_err(|e| storage("releasing the OPFS files", e))
    }

    /// Re-acquires the access handles after [`Opfs::pause`].
    pub async fn resume(&self) -> Result<()> {
        self.util.resume().await.map_err(|e| storage("re-acquiring the OPFS files", e))?;
        super::join_vfs::register(POOL, JOINED_CAP, true)
    }
}
