//! Cowork's core: a conversation archive that never forgets, and the engine that builds each model
//! request from it.
//!
//! Everything here compiles natively (for fast tests and tools) and for `wasm32-unknown-unknown` (the
//! browser). The core knows nothing about Leptos or the DOM.
//!
//! - the vocabulary: the archive's types ([`Session`], [`Turn`], … re-exported here), the one [`Error`]
//!   (with [`ModelError`]), and [`time`] (calendar arithmetic);
//! - the archive: [`store`] (SQLite; OPFS in the browser), [`attachment`]s, and [`import`], which reads
//!   other tools' exports;
//! - the context engine: [`state`] (the session-state register, with the constraints a user states),
//!   [`prompt`], [`context`] (assembly into provider-neutral messages), [`hints`] (back references),
//!   [`recall`], [`tokens`];
//! - talking to the world: [`sse`], [`provider`] and [`orchestrator`] (pure wire formats), the
//!   [`transport`] they are sent through, and [`agent`] (with [`agent::delegate`]), the loops that do
//!   their I/O through an injected transport.
//!
//! No two sibling modules refer to each other, even around a circle: `tests/module_graph.rs` checks it
//! (the store's own modules are the one listed exception there).
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

// The archive's vocabulary and the core's one error type: the bottom of the module graph.
mod domain;
mod error;
pub mod order;
mod size;
mod stats;
pub mod time;
mod title;
// Sessions grouped as the sidebar lists them: a conversation and its versions.
pub mod conversations;

// The archive.
pub mod attachment;
pub mod export;
pub mod import;
#[cfg(feature = "store")]
pub mod store;

// The context engine.
mod constraints;
pub mod context;
pub mod hints;
pub mod mcp;
mod message;
pub mod prompt;
pub mod recall;
pub mod semantic;
pub mod state;
pub mod tokens;

// Talking to the world.
#[cfg(feature = "store")]
pub mod agent;
pub mod orchestrator;
pub mod provider;
pub mod sse;
pub mod transport;

#[cfg(test)]
mod test_support;

pub use attachment::{Attachment, AttachmentKind, NewAttachment};
pub use domain::*;
pub use error::{Context, Error, ErrorKind, ModelError, Result};
pub use stats::StorageStats;
pub use title::title_from_message;
