//! Where OPFS cannot be used at all (here: a page's main thread, which has no sync access handles),
//! installing says so by its type, not in words a library may change: the storage worker then opens
//! an in-memory archive at once instead of retrying for seconds.
#![cfg(target_arch = "wasm32")]

use cowork_core::store::opfs::{self, Unavailable};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Regression: the worker recognised "OPFS is not supported here" by the words "cannot persist data"
/// in the message, so a reworded message cost every OPFS-less tab ~10 s of retries.
#[wasm_bindgen_test]
async fn opfs_refused_here_is_not_supported_not_busy() {
    match opfs::install().await {
        Err(refused @ Unavailable::NotSupported(_)) => {
            assert!(!refused.may_pass(), "waiting cannot help where OPFS is not supported");
            assert!(refused.to_string().contains("secure context"), "the message says what is needed: {refused}");
        }
        Err(busy @ Unavailable::Busy(_)) => panic!("a context without OPFS was taken for a busy pool: {busy}"),
        Ok(_) => panic!("OPFS installed on a page's main thread"),
    }
}
