//! The browser's persistent storage: SQLite's OPFS `sahpool` VFS, usable only in a dedicated worker.
//!
//! `install` registers the VFS as SQLite's default, after which [`Store::open`](super::Store::open)
//! with a plain file name (e.g. `"cowork.db"`) opens a file in the origin-private file system.

use crate::error::{Error, Result};
use sqlite_wasm_rs::vfs::VfsFilesManager;
use sqlite_wasm_vfs::sahpool::{OpfsSAHError, OpfsSAHPoolCfgBuilder, OpfsSAHPoolUtil};

/// Handle on the installed OPFS pool.
pub struct Opfs {
    util: OpfsSAHPoolUtil,
}

/// File slots kept in the pool: each database needs its file and its journal.
const MIN_CAPACITY: usize = 8;

/// Installs the OPFS VFS (idempotent within a worker) and makes it SQLite's default.
///
/// Fails with [`Error::Storage`] outside a dedicated worker, in an insecure context, or when another
/// tab holds the pool's access handles.
pub async fn install() -> Result<Opfs> {
    let cfg = OpfsSAHPoolCfgBuilder::new().directory(".cowork").build();
    let util = sqlite_wasm_vfs::sahpool::install::<sqlite_wasm_rs::WasmOsCallback>(&cfg, true)
        .await
        .map_err(|e| storage("installing the OPFS storage", e))?;
    util.ensure_capacity(MIN_CAPACITY).await.map_err(|e| storage("reserving OPFS files", e))?;
    Ok(Opfs { util })
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
        self.util.resume().await.map_err(|e| storage("re-acquiring the OPFS files", e))
    }
}
