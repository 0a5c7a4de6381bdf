//! The Cowork browser app: a Leptos client-side UI and the storage worker it talks to.
//!
//! - [`protocol`]: the typed messages between the UI thread and the storage worker.
//! - [`client`]: the UI side of that protocol (natively it answers that there is no worker).
//! - [`worker`]: the storage worker, the only place that opens the database (wasm, `worker` feature).
//! - [`app`]: the Leptos components.
//! - [`backup`]: the automatic backup's policy (when, names, pruning, the warning); pure.
//! - [`highlight`]: code blocks coloured by a highlighter loaded on first use.

pub mod app;
pub mod backup;
pub mod chat;
pub mod client;
pub mod dom;
#[cfg(all(target_arch = "wasm32", feature = "worker"))]
pub mod fetch;
pub mod highlight;
pub mod markdown;
pub mod mcp;
pub mod protocol;
pub mod settings;
pub mod theme;
#[cfg(all(target_arch = "wasm32", feature = "worker"))]
pub mod worker;
