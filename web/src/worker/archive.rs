//! Opening the archive: the OPFS database (tried again while a closing tab still holds its files) or,
//! without OPFS, memory that says so; the archive as a reply's steps reach it; the worker's timer.

use crate::protocol::{Backend, Problem};
use cowork_core::store::opfs::Opfs;
use cowork_core::store::{SharedStore, Store};
use std::cell::{RefCell, RefMut};
use wasm_bindgen::JsCast;
use web_sys::DedicatedWorkerGlobalScope;

/// The archive's file name in the OPFS pool.
pub const DB_FILE: &str = "cowork.db";

/// What a request gets once the page is going away and the archive is closed.
pub(super) const CLOSED: &str = "the archive is closed: this page is going away";

/// The open archive as a reply's steps reach it (`ops::reply`): for one step at a time.
pub(super) struct Steps<'a>(pub(super) &'a RefCell<Option<(Store, Option<Opfs>)>>);

impl SharedStore for Steps<'_> {
    fn store(&self) -> cowork_core::Result<RefMut<'_, Store>> {
        let archive = self.0.try_borrow_mut().map_err(|_| cowork_core::Error::Storage("the archive is busy".into()))?;
        RefMut::filter_map(archive, |a| a.as_mut().map(|(store, _)| store))
            .map_err(|_| cowork_core::Error::Storage(CLOSED.into()))
    }
}

/// How a worker opens its archive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Open {
    /// The OPFS archive, elected owner among the origin's tabs (retrying while a closing tab lets go).
    Shared,
    /// The OPFS archive with nobody to share it (no Web Locks), else memory.
    Private,
    /// Memory only, as asked.
    Memory,
}

/// Opens the OPFS archive, trying again for a while when another tab (or the page this one replaces)
/// still holds its files; without OPFS, an in-memory archive that says so.
pub(super) async fn open_archive(attempts: u32) -> Result<(Store, Option<Opfs>, Backend), Problem> {
    let mut last = String::new();
    for attempt in 0..attempts {
        if attempt > 0 {
            sleep_ms(150 * attempt).await;
        }
        match cowork_core::store::opfs::install().await {
            Ok(opfs) => {
                return match Store::open(DB_FILE) {
                    Ok(store) => Ok((store, Some(opfs), Backend::Opfs { file: DB_FILE.into() })),
                    // A newer schema or a damaged file: never silently fall back to memory over real data.
                    Err(e) => Err(Problem::from(e)),
                };
            }
            Err(e) => {
                last = e.to_string();
                if !e.may_pass() {
                    break; // OPFS is not available here at all: waiting will not help
                }
            }
        }
    }
    let store = Store::open_in_memory().map_err(Problem::from)?;
    Ok((store, None, Backend::Memory { reason: last }))
}

pub(super) async fn sleep_ms(ms: u32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let _ = scope.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms as i32);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
