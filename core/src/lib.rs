//! Cowork's core: a conversation archive that never forgets, and the engine that builds each model
//! request from it.
//!
//! Everything here compiles natively (for fast tests and tools) and for `wasm32-unknown-unknown` (the
//! browser). The core knows nothing about Leptos or the DOM.
//!
//! - the archive: [`store`] (SQLite; OPFS in the browser); [`import`] reads other tools' exports;
//! - the context engine: [`state`], [`constraints`], [`hints`], [`prompt`], [`context`], [`recall`], [`tokens`];
//! - talking to the world: [`sse`], [`provider`], [`orchestrator`] (pure wire formats), and [`agent`] (with
//!   [`agent::delegate`]), which do their I/O through an injected transport.
//!
//! ```
//! # #[cfg(feature = "store")] {
//! use cowork_core::{store::{Store, NewSession}, NewTurn, SearchQuery, SearchScope};
//!
//! let mut store = Store::open_in_memory().unwrap();
//! let session = store.create_session(&NewSession::new("my-project")).unwrap();
//! store.append_turn(&session.id, &NewTurn::user("We use JWT for auth; see src/auth.py")).unwrap();
//! let hits = store.search(&SearchQuery::new("auth.py", SearchScope::All)).unwrap();
//! assert_eq!(hits[0].turn_number, 1);
//! # }
//! ```

mod domain;
mod error;
mod message;
mod size;

#[cfg(feature = "store")]
pub mod agent;
pub mod attachment;
pub mod constraints;
pub mod context;
pub mod hints;
pub mod import;
pub mod orchestrator;
pub mod prompt;
pub mod provider;
pub mod recall;
pub mod sse;
pub mod state;
mod stats;
#[cfg(test)]
mod test_support;
pub mod time;
pub mod tokens;
pub mod transport;

#[cfg(feature = "store")]
pub mod store;

pub use attachment::{Attachment, AttachmentKind, NewAttachment};
pub use domain::*;
pub use error::{Context, Error, ErrorKind, Result};
pub use stats::StorageStats;
