//! Cowork's test support: the development server — the built app, the scripted demo model and a
//! Loom-compatible orchestrator — used by `scripts/run.sh` and the end-to-end tests.

pub mod bench_reply;
pub mod model;
pub mod orchestrator;
pub mod server;
pub mod transport;
