use super::*;
use rusqlite::ffi;

fn sqlite(code: i32) -> Error {
    let source = rusqlite::Error::SqliteFailure(ffi::Error::new(code), None);
    Error::Sqlite { context: "saving turn 3 of session s".into(), source }
}

#[test]
fn a_full_quota_is_named_and_says_nothing_saved_is_lost() {
    let full = sqlite(ffi::SQLITE_FULL);
    assert!(full.is_storage_full());
    let text = full.to_string();
    assert!(text.starts_with("saving turn 3 of session s: the browser's storage for this site is full"), "{text}");
    assert!(text.contains("Nothing saved earlier is affected"), "{text}");
    let io = sqlite(ffi::SQLITE_IOERR);
    assert!(!io.is_storage_full());
    assert!(!io.to_string().contains("full"), "{io}");
}
