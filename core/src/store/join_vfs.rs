//! A VFS layer that joins each file's back-to-back writes into one call ([`Joiner`], `joined.rs`), for
//! the database and its write-ahead log. In the browser it sits in front of the OPFS pool
//! (`opfs-sahpool`) as SQLite's default VFS (`opfs.rs`); natively, tests put it over SQLite's own file
//! VFS (`join_writes_natively`).
//!
//! Each file it opens holds the layer below's file right after its header, and every call goes on to
//! the layer below, found by name each time (the OPFS pool unregisters itself while paused, and
//! opening then fails as it would without this layer). A file's held writes reach the layer below
//! before a flush, a truncate, a close, or a write that does not continue them; reads and the file's
//! size see them from memory, so a write that fails is reported where SQLite is writing.

use super::joined::Joiner;
use crate::error::{Error, Result};
use ffi::{
    sqlite3_file, sqlite3_filename, sqlite3_int64, sqlite3_io_methods, sqlite3_vfs, sqlite3_vfs_find,
    sqlite3_vfs_register, SQLITE_CANTOPEN, SQLITE_IOCAP_POWERSAFE_OVERWRITE, SQLITE_IOERR, SQLITE_IOERR_SHORT_READ,
    SQLITE_NOTFOUND, SQLITE_OK, SQLITE_OPEN_MAIN_DB, SQLITE_OPEN_WAL,
};
#[cfg(not(target_arch = "wasm32"))]
use rusqlite::ffi;
#[cfg(target_arch = "wasm32")]
use sqlite_wasm_rs as ffi;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::null_mut;
use std::sync::OnceLock;

/// This layer's VFS name.
pub const NAME: &CStr = c"cowork-join";

/// A file of this VFS: SQLite's header, then the joiner (null for files whose writes are not
/// joined), then the layer below's file at [`INNER`].
#[repr(C)]
struct File {
    base: sqlite3_file,
    joiner: *mut Joiner,
}

const INNER: usize = std::mem::size_of::<File>().next_multiple_of(8);

/// The registered VFS (its address: made once, for the program's life), the name of the VFS below and
/// the longest write it takes.
static VFS: OnceLock<(usize, &'static CStr, usize)> = OnceLock::new();

/// Registers this layer over the VFS named `below`, which takes writes of up to `cap` bytes
/// (`default`: as SQLite's default VFS; registering again makes it the default again, e.g. after the
/// OPFS pool was paused and resumed).
pub(super) fn register(below: &'static CStr, cap: usize, default: bool) -> Result<()> {
    let inner = find(below);
    if inner.is_null() {
        return Err(Error::Storage(format!(
            "the storage below the archive ({}) is not installed",
            below.to_string_lossy()
        )));
    }
    let &(vfs, registered_below, _) = VFS.get_or_init(|| {
        // SAFETY: `inner` is a registered VFS, read once for its sizes.
        let (size, path) = unsafe { ((*inner).szOsFile, (*inner).mxPathname) };
        (Box::into_raw(Box::new(vfs(INNER as c_int + size, path))) as usize, below, cap)
    });
    if registered_below != below {
        return Err(Error::Storage(format!(
            "the archive's storage layer is already over {}",
            registered_below.to_string_lossy()
        )));
    }
    // SAFETY: the VFS lives for the program (leaked once); registering it again only relinks it.
    match unsafe { sqlite3_vfs_register(vfs as *mut sqlite3_vfs, default as c_int) } {
        SQLITE_OK => Ok(()),
        code => Err(Error::Storage(format!("registering the archive's storage layer (SQLite code {code})"))),
    }
}

fn find(name: &CStr) -> *mut sqlite3_vfs {
    // SAFETY: a lookup by a NUL-terminated name.
    unsafe { sqlite3_vfs_find(name.as_ptr()) }
}

/// The VFS below this one (null when it is not registered now).
fn below() -> *mut sqlite3_vfs {
    VFS.get().map_or(null_mut(), |&(_, below, _)| find(below))
}

fn vfs(file_size: c_int, max_path: c_int) -> sqlite3_vfs {
    sqlite3_vfs {
        iVersion: 2,
        szOsFile: file_size,
        mxPathname: max_path,
        pNext: null_mut(),
        zName: NAME.as_ptr(),
        pAppData: null_mut(),
        xOpen: Some(x_open),
        xDelete: Some(x_delete),
        xAccess: Some(x_access),
        xFullPathname: Some(x_full_pathname),
        xDlOpen: None,
        xDlError: None,
        xDlSym: None,
        xDlClose: None,
        xRandomness: Some(x_randomness),
        xSleep: Some(x_sleep),
        xCurrentTime: Some(x_current_time),
        xGetLastError: Some(x_get_last_error),
        xCurrentTimeInt64: Some(x_current_time_int64),
        xSetSystemCall: None,
        xGetSystemCall: None,
        xNextSystemCall: None,
    }
}

/// Calls the layer below's VFS method `$m`, or answers `$absent` when it or the method is not there.
macro_rules! on_below {
    ($m:ident, $absent:expr, $($arg:expr),*) => {{
        let below = below();
        match below.as_ref().and_then(|v| v.$m) {
            Some(f) => f(below, $($arg),*),
            None => $absent,
        }
    }};
}

unsafe extern "C" fn x_open(
    _: *mut sqlite3_vfs,
    name: sqlite3_filename,
    file: *mut sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let outer = file.cast::<File>();
    (*outer).base.pMethods = std::ptr::null();
    (*outer).joiner = null_mut();
    let inner = inner(file);
    (*inner).pMethods = std::ptr::null();
    let rc = on_below!(xOpen, SQLITE_CANTOPEN, name, inner, flags, out_flags);
    if rc == SQLITE_OK && flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL) != 0 {
        let cap = VFS.get().map_or(0, |&(_, _, cap)| cap);
        (*outer).joiner = Box::into_raw(Box::new(Joiner::new(cap)));
    }
    // SQLite closes a file whose methods are set even when opening failed: so that the file below is
    // closed then too, ours are set whenever its are.
    if !(*inner).pMethods.is_null() {
        (*outer).base.pMethods = &METHODS;
    }
    rc
}

unsafe extern "C" fn x_delete(_: *mut sqlite3_vfs, name: *const c_char, sync_dir: c_int) -> c_int {
    on_below!(xDelete, SQLITE_IOERR, name, sync_dir)
}

unsafe extern "C" fn x_access(_: *mut sqlite3_vfs, name: *const c_char, flags: c_int, out: *mut c_int) -> c_int {
    on_below!(xAccess, SQLITE_IOERR, name, flags, out)
}

unsafe extern "C" fn x_full_pathname(_: *mut sqlite3_vfs, name: *const c_char, n: c_int, out: *mut c_char) -> c_int {
    on_below!(xFullPathname, SQLITE_CANTOPEN, name, n, out)
}

unsafe extern "C" fn x_randomness(_: *mut sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    on_below!(xRandomness, 0, n, out)
}

unsafe extern "C" fn x_sleep(_: *mut sqlite3_vfs, micros: c_int) -> c_int {
    on_below!(xSleep, 0, micros)
}

unsafe extern "C" fn x_current_time(_: *mut sqlite3_vfs, out: *mut f64) -> c_int {
    on_below!(xCurrentTime, SQLITE_IOERR, out)
}

unsafe extern "C" fn x_get_last_error(_: *mut sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    on_below!(xGetLastError, 0, n, out)
}

unsafe extern "C" fn x_current_time_int64(_: *mut sqlite3_vfs, out: *mut sqlite3_int64) -> c_int {
    on_below!(xCurrentTimeInt64, SQLITE_IOERR, out)
}

/// Version 1: no shared memory (the archive runs WAL in exclusive locking mode) and no memory mapping,
/// as the OPFS pool's own methods.
static METHODS: sqlite3_io_methods = sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

/// The layer below's file, after ours.
unsafe fn inner(file: *mut sqlite3_file) -> *mut sqlite3_file {
    file.cast::<u8>().add(INNER).cast()
}

/// Calls the layer below's file method `$m` on `$file`'s inner file, or answers `$absent` without it.
macro_rules! on_inner {
    ($file:expr, $m:ident, $absent:expr $(, $arg:expr)*) => {{
        let inner = inner($file);
        match (*inner).pMethods.as_ref().and_then(|m| m.$m) {
            Some(f) => f(inner $(, $arg)*),
            None => $absent,
        }
    }};
}

/// Writes the file's held run, if any, to the layer below.
unsafe fn flush(file: *mut sqlite3_file) -> c_int {
    let Some(joiner) = (*file.cast::<File>()).joiner.as_mut() else { return SQLITE_OK };
    let Some(run) = joiner.pending() else { return SQLITE_OK };
    let (bytes, len, offset) = (run.bytes.as_ptr().cast::<c_void>(), run.bytes.len() as c_int, run.offset as i64);
    let rc = on_inner!(file, xWrite, SQLITE_IOERR, bytes, len, offset);
    joiner.clear();
    rc
}

/// Flushes the held run, then calls the layer below.
macro_rules! flushed {
    ($file:expr, $m:ident, $absent:expr $(, $arg:expr)*) => {{
        match flush($file) {
            SQLITE_OK => on_inner!($file, $m, $absent $(, $arg)*),
            rc => rc,
        }
    }};
}

unsafe extern "C" fn x_close(file: *mut sqlite3_file) -> c_int {
    let flushed = flush(file);
    let outer = file.cast::<File>();
    if !(*outer).joiner.is_null() {
        drop(Box::from_raw((*outer).joiner));
        (*outer).joiner = null_mut();
    }
    let closed = on_inner!(file, xClose, SQLITE_OK);
    if flushed != SQLITE_OK {
        flushed
    } else {
        closed
    }
}

/// Read from the file, with the held run laid over it: a read never flushes, so a write that fails
/// (the quota) is reported at a write or a flush, where SQLite takes it as such.
unsafe extern "C" fn x_read(file: *mut sqlite3_file, buf: *mut c_void, amount: c_int, offset: sqlite3_int64) -> c_int {
    let rc = on_inner!(file, xRead, SQLITE_IOERR, buf, amount, offset);
    let Some(joiner) = (*file.cast::<File>()).joiner.as_ref() else { return rc };
    let Some(start) = joiner.pending().map(|run| run.offset) else { return rc };
    if rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ {
        return rc;
    }
    let out = std::slice::from_raw_parts_mut(buf.cast::<u8>(), amount.max(0) as usize);
    let reached = joiner.read_into(offset as u64, out);
    if rc == SQLITE_IOERR_SHORT_READ && reached == out.len() {
        // Short on the file, whole with the run when the file reaches where the run starts.
        let mut size: sqlite3_int64 = 0;
        if on_inner!(file, xFileSize, SQLITE_IOERR, &mut size) == SQLITE_OK
            && (size as u64 >= start || offset as u64 >= start)
        {
            return SQLITE_OK;
        }
    }
    rc
}

unsafe extern "C" fn x_write(
    file: *mut sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: sqlite3_int64,
) -> c_int {
    let Some(joiner) = (*file.cast::<File>()).joiner.as_mut() else {
        return on_inner!(file, xWrite, SQLITE_IOERR, buf, amount, offset);
    };
    let (at, len) = (offset as u64, amount.max(0) as usize);
    if !joiner.joins(at, len) {
        let rc = flush(file);
        if rc != SQLITE_OK {
            return rc;
        }
    }
    joiner.hold(at, std::slice::from_raw_parts(buf.cast::<u8>(), len));
    SQLITE_OK
}

unsafe extern "C" fn x_truncate(file: *mut sqlite3_file, size: sqlite3_int64) -> c_int {
    flushed!(file, xTruncate, SQLITE_IOERR, size)
}

unsafe extern "C" fn x_sync(file: *mut sqlite3_file, flags: c_int) -> c_int {
    flushed!(file, xSync, SQLITE_IOERR, flags)
}

/// The file's size with the held run (which may end past it), without flushing.
unsafe extern "C" fn x_file_size(file: *mut sqlite3_file, size: *mut sqlite3_int64) -> c_int {
    let rc = on_inner!(file, xFileSize, SQLITE_IOERR, size);
    if let Some(joiner) = (*file.cast::<File>()).joiner.as_ref().filter(|j| j.pending().is_some()) {
        if rc == SQLITE_OK {
            *size = (*size).max(joiner.end() as sqlite3_int64);
        }
    }
    rc
}

unsafe extern "C" fn x_lock(file: *mut sqlite3_file, level: c_int) -> c_int {
    on_inner!(file, xLock, SQLITE_OK, level)
}

unsafe extern "C" fn x_unlock(file: *mut sqlite3_file, level: c_int) -> c_int {
    on_inner!(file, xUnlock, SQLITE_OK, level)
}

unsafe extern "C" fn x_check_reserved_lock(file: *mut sqlite3_file, out: *mut c_int) -> c_int {
    on_inner!(file, xCheckReservedLock, SQLITE_IOERR, out)
}

/// Not flushed first: SQLite ignores what some file controls answer (its "hints", such as the size a
/// checkpoint will need), so a held run that failed to reach the file there would be lost unseen. None
/// of them reads what a write changed; the flush that follows (SQLite flushes before it relies on the
/// file) reports a failure where SQLite sees it.
unsafe extern "C" fn x_file_control(file: *mut sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    on_inner!(file, xFileControl, SQLITE_NOTFOUND, op, arg)
}

unsafe extern "C" fn x_sector_size(file: *mut sqlite3_file) -> c_int {
    on_inner!(file, xSectorSize, 4096)
}

/// The layer below's, with power-safe overwrite (a write changes no byte outside it, as SQLite's own
/// unix VFS assumes by default). Without it SQLite pads each WAL commit to a sector boundary and
/// flushes in the middle of the padding frame, then writes the frame's tail after the flush: this
/// layer would hold that tail with the next commit's frames, and when that commit failed (a full
/// quota) the tail was lost with them, while the WAL's index pointed at it ("disk I/O error" on the
/// next read). With it, a commit writes nothing after its flush, and a flush that fails loses only
/// writes of the transaction that fails.
unsafe extern "C" fn x_device_characteristics(file: *mut sqlite3_file) -> c_int {
    on_inner!(file, xDeviceCharacteristics, 0) | SQLITE_IOCAP_POWERSAFE_OVERWRITE
}
