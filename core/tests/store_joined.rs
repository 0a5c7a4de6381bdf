//! The store suite natively, on files, through the layer that joins a file's back-to-back writes
//! (`core/src/store/join_vfs.rs`: what the browser's OPFS storage goes through), and what a crash
//! right after a commit leaves on disk through it.
#![cfg(not(target_arch = "wasm32"))]

mod suite;

use cowork_core::store::{join_writes_natively, NewSession, Store};
use cowork_core::{NewAttachment, NewTurn};
use std::path::{Path, PathBuf};

/// A fresh folder in the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!("cowork-joined-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("a temp folder");
        TempDir(path)
    }
    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Opens the archive at `path` through the joining layer.
fn open_joined(path: &Path) -> Store {
    let vfs = join_writes_natively().expect("the layer registers over SQLite's file VFS");
    Store::open(&format!("file:{}?vfs={vfs}", path.display())).expect("open an archive through the layer")
}

macro_rules! joined {
    ($($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                let dir = TempDir::new(stringify!($case));
                let mut store = open_joined(&dir.file("archive.db"));
                suite::$case(&mut store);
                assert_eq!(store.integrity_check().unwrap(), "ok");
                drop(store);
                let reopened = open_joined(&dir.file("archive.db"));
                assert_eq!(reopened.integrity_check().unwrap(), "ok", "the archive reopens whole");
            }
        )*
    };
}
store_cases!(joined);

/// The bytes of a 1 MB attachment (256 pages of the write-ahead log, 512 writes joined into one).
fn megabyte(seed: u8) -> Vec<u8> {
    (0..1 << 20).map(|i: u32| (i % 251) as u8 ^ seed).collect()
}

#[test]
fn what_a_commit_wrote_is_on_disk_when_it_returns() {
    let dir = TempDir::new("crash");
    let (live, copy) = (dir.file("live.db"), dir.file("copy.db"));
    let mut store = open_joined(&live);
    let sid = store.create_session(&NewSession::new("w")).unwrap().id;
    let mut sent = Vec::new();
    for n in 0..6u8 {
        let file = NewAttachment::new(format!("part-{n}.bin"), "application/octet-stream", megabyte(n));
        store.append_turn_with_attachments(&sid, &NewTurn::user(format!("file {n}")), &[file], 0).unwrap();
        store.append_turn(&sid, &NewTurn::assistant(format!("got file {n}"))).unwrap();
        sent.push(megabyte(n));
    }
    // A crash now: the connection is never closed, so only what reached the files is there. Copy the
    // database and its write-ahead log as they are on disk, and open the copy without the layer.
    for suffix in ["", "-wal"] {
        let from = PathBuf::from(format!("{}{suffix}", live.display()));
        if from.exists() {
            std::fs::copy(&from, format!("{}{suffix}", copy.display())).expect("copy an archive file");
        }
    }
    let recovered = Store::open(copy.to_str().unwrap()).expect("the copy opens");
    assert_eq!(recovered.integrity_check().unwrap(), "ok");
    let turns = recovered.last_turns(&sid, 100).unwrap();
    assert_eq!(turns.len(), 12, "every committed turn is in the files");
    assert_eq!(turns.last().unwrap().content, "got file 5");
    for (n, bytes) in sent.iter().enumerate() {
        let sha = cowork_core::attachment::sha256_hex(bytes);
        assert_eq!(&recovered.attachment_bytes(&sha).unwrap(), bytes, "attachment {n} is whole");
    }
    drop(store);
}
