//! Where recall by meaning stands, as the UI shows it (Settings, Storage): this device's settings,
//! the index's progress and what the semantic worker is doing.

use cowork_core::semantic::IndexProgress;
use cowork_core::semantic::SemanticSettings;
use serde::{Deserialize, Serialize};

/// The model's public repository: where its files come from unless the app is served with a copy
/// (`models/<model>/` beside it) or the user names another folder.
pub const DEFAULT_MODEL_URL: &str = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/";
/// The model, as the settings describe it before the first download.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2 (sentence-transformers)";
/// Its download, in bytes (`model.safetensors`, `tokenizer.json`, `config.json`).
pub const MODEL_BYTES: u64 = 91_335_235;
/// Its licence.
pub const MODEL_LICENCE: &str = "Apache-2.0";

/// What the semantic side is doing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SemanticPhase {
    /// Recall by meaning is off.
    #[default]
    Off,
    /// The model's files are being downloaded (bytes so far, of the total when known).
    Downloading {
        /// Bytes received.
        loaded: u64,
        /// Bytes in all, 0 when unknown.
        total: u64,
    },
    /// The model is being read (from this browser's storage).
    Loading,
    /// The archive is being indexed in the background.
    Indexing,
    /// Indexing is paused by the user.
    Paused,
    /// Every turn is indexed; new ones are as they are saved.
    Ready,
    /// Something failed: what, and what to do.
    Failed {
        /// The message to show.
        message: String,
    },
}

/// Recall by meaning on this device.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SemanticState {
    /// The settings as saved in this device's archive.
    pub settings: SemanticSettings,
    /// Turns indexed, of all turns.
    pub progress: IndexProgress,
    /// What is happening now.
    pub phase: SemanticPhase,
    /// Where the model came from (or is coming from).
    #[serde(default)]
    pub model_url: String,
}

impl SemanticState {
    /// "Semantic index: 41,200 of 100,000 turns" and what is happening.
    pub fn summary(&self) -> String {
        let p = self.progress;
        let counts = format!("{} of {}", super::thousands(p.indexed as usize), super::count(p.total as usize, "turn"));
        match &self.phase {
            SemanticPhase::Off => "Recall by meaning is off".to_owned(),
            SemanticPhase::Downloading { loaded, total } if *total > 0 => {
                format!("Downloading the model: {} of {} MB", loaded / 1_000_000, total / 1_000_000)
            }
            SemanticPhase::Downloading { loaded, .. } => format!("Downloading the model: {} MB", loaded / 1_000_000),
            SemanticPhase::Loading => "Loading the model…".to_owned(),
            SemanticPhase::Indexing => format!("Semantic index: {counts}"),
            SemanticPhase::Paused => format!("Semantic index: {counts} (paused)"),
            SemanticPhase::Ready => format!("Semantic index: {counts}, complete"),
            SemanticPhase::Failed { message } => format!("Recall by meaning failed: {message}"),
        }
    }
}
