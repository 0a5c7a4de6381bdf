//! The archive as a long request (the agent loop, a delegated task) reaches it: borrowed for one
//! step at a time, never across an await. Between its steps — while a reply streams, a tool runs or a
//! task is followed — the archive answers everything else: another session opened, a search, sync.

use super::Store;
use crate::{Error, Result};
use std::cell::{RefCell, RefMut};

/// Where a long request finds the store at each step.
pub trait SharedStore {
    /// The store, for one step (the borrow ends before the request's next await). An error when the
    /// archive is gone (its page is going away) or, which would be a bug, still borrowed.
    fn store(&self) -> Result<RefMut<'_, Store>>;
}

/// A store the caller owns for the whole request (tests, native tools).
impl SharedStore for RefCell<&mut Store> {
    fn store(&self) -> Result<RefMut<'_, Store>> {
        let store =
            self.try_borrow_mut().map_err(|_| Error::Storage("the archive is in use by another step".into()))?;
        Ok(RefMut::map(store, |s| &mut **s))
    }
}
