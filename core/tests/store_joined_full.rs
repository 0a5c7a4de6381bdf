//! A commit that fails for want of space, through the layer that joins a file's back-to-back writes
//! (`core/src/store/join_vfs.rs`), loses nothing committed before it.
//!
//! The process's file-size limit (`RLIMIT_FSIZE`) stands in for a full quota: a write that starts at
//! the limit fails whole, as a write past the OPFS quota does. The files are opened with `psow=0`, so
//! SQLite's unix VFS does not promise power-safe overwrite, like the OPFS pool: without the layer's
//! own promise SQLite pads each WAL commit to a sector and flushes in the middle of the padding
//! frame, and the frame's tail, held with the next commit's frames, was lost when that commit failed.
//! A test binary of its own: the limit holds for the whole process.
#![cfg(target_os = "linux")]
// setrlimit and signal: the one way to make the disk full for this process alone.
#![allow(unsafe_code)]

use cowork_core::store::{join_writes_natively, NewSession, Store};
use cowork_core::{NewTurn, SearchQuery, SearchScope};
use std::path::Path;

/// Sets the largest file this process may write, within the hard limit (`RLIM_INFINITY`: the hard
/// limit itself).
fn limit_file_size(bytes: libc::rlim_t) {
    let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: plain calls with a pointer to a local `rlimit`.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut current), 0);
        let soft = bytes.min(current.rlim_max);
        assert_eq!(
            libc::setrlimit(libc::RLIMIT_FSIZE, &libc::rlimit { rlim_cur: soft, rlim_max: current.rlim_max }),
            0
        );
    }
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[test]
fn a_commit_that_fails_for_space_loses_nothing_committed_before_it() {
    // At the limit the kernel sends SIGXFSZ, which ends the process; ignored, the write fails instead.
    // SAFETY: ignoring a signal for this test process.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let dir = std::env::temp_dir().join(format!("cowork-joined-full-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("archive.db");
    let uri = format!("file:{}?vfs={}&psow=0", path.display(), join_writes_natively().unwrap());
    let mut store = Store::open(&uri).unwrap();
    let sid = store.create_session(&NewSession::new("w")).unwrap().id;
    let saved: Vec<String> = (0..6).map(|i| format!("quota-check saved before the disk fills, number {i}")).collect();
    for text in &saved {
        store.append_turn(&sid, &NewTurn::user(text.clone())).unwrap();
    }

    // The disk is full: no file may grow past what is on it now.
    let wal = dir.join("archive.db-wal");
    limit_file_size(size(&wal).max(size(&path)) as libc::rlim_t);
    let big = format!("quota-check big {}", "x".repeat(2 << 20));
    let failed = store.append_turn(&sid, &NewTurn::user(big));
    limit_file_size(libc::RLIM_INFINITY);
    assert!(failed.is_err(), "a 2 MB turn does not fit");

    // Space again: every turn saved before is read back through the same connection, and found.
    let turns = store.last_turns(&sid, 100).expect("the earlier turns read back");
    assert_eq!(turns.iter().map(|t| t.content.clone()).collect::<Vec<_>>(), saved);
    let hits = store.search(&SearchQuery::new("disk fills", SearchScope::All)).expect("the archive searches");
    assert_eq!(hits.len(), saved.len());
    assert_eq!(store.integrity_check().unwrap(), "ok");
    store.append_turn(&sid, &NewTurn::user("written after space was freed")).unwrap();
    drop(store);

    let reopened = Store::open(&uri).unwrap();
    assert_eq!(reopened.integrity_check().unwrap(), "ok");
    assert_eq!(reopened.last_turns(&sid, 100).unwrap().len(), saved.len() + 1);
    drop(reopened);
    let _ = std::fs::remove_dir_all(&dir);
}
