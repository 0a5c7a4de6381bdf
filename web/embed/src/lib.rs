//! Cowork for other pages (spec §10): a web IDE's panel, a documentation site or a notebook opens the
//! same archive as the app, searches it, assembles context, runs the agent loop with its own tools,
//! and can mount the whole UI into one of its elements, through an ES module built by wasm-bindgen
//! (`--target web`, see `scripts/embed.sh`) with TypeScript declarations.
//!
//! - [`options`]: what the page passes in, checked (pure, tested natively).
//! - `api` (wasm only): the exported functions and classes; they talk to the same storage worker as
//!   the app (`cowork_web::client`), so OPFS, several tabs and takeovers work as they do there.
//!
//! Field names are those of the archive's JSON Lines export (`session_id`, `turn_number`, …) in
//! everything the module returns and takes; functions and methods are camelCase.

pub mod options;

#[cfg(target_arch = "wasm32")]
mod api;
#[cfg(target_arch = "wasm32")]
mod mount;
