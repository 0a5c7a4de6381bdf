//! Cowork's test support: the development server (static app + later the scripted model and
//! orchestrator) used by `scripts/run.sh` and the end-to-end tests.

pub mod server;
