//! Where recall by meaning stands, as the UI shows it (Settings, Storage): this device's settings,
//! the index's progress and what the semantic worker is doing.

use cowork_core::semantic::IndexProgress;
use cowork_core::semantic::{self, EmbeddingModel, SemanticSettings};
use serde::{Deserialize, Serialize};

/// A model the user can choose, as the settings describe it before the first download.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelChoice {
    /// The model, as the index knows it (its id, and its name: the folder of its files, beside the
    /// app and in its public repository).
    pub model: EmbeddingModel,
    /// Its name, download size (`model.safetensors`, `tokenizer.json`, `config.json`), licence and
    /// what choosing it means.
    pub label: &'static str,
}

/// The models, the default first (the order of `cowork_core::semantic::MODELS`).
pub const MODEL_CHOICES: [ModelChoice; 2] = [
    ModelChoice {
        model: semantic::MINILM,
        label: "all-MiniLM-L6-v2 (91 MB, Apache-2.0 licence): fast, indexes a large archive in minutes",
    },
    ModelChoice {
        model: semantic::MPNET,
        label: "all-mpnet-base-v2 (438 MB, Apache-2.0 licence): finds more, indexes about ten times slower",
    },
];

/// The choice for the index's model `id` (the default for one this version does not list).
pub fn model_choice(id: &str) -> ModelChoice {
    MODEL_CHOICES.into_iter().find(|m| m.model.id == id).unwrap_or(MODEL_CHOICES[0])
}

/// The model's public repository: where its files come from unless the app is served with a copy
/// (`models/<model>/` beside it) or the user names another folder.
pub fn default_model_url(name: &str) -> String {
    format!("https://huggingface.co/sentence-transformers/{name}/resolve/main/")
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_the_index_knows_is_offered_with_its_name_first_in_its_label() {
        let offered: Vec<EmbeddingModel> = MODEL_CHOICES.iter().map(|m| m.model).collect();
        assert_eq!(offered, semantic::MODELS, "the same models, the default first");
        for m in MODEL_CHOICES {
            assert!(m.label.starts_with(&format!("{} (", m.model.name)) && m.label.contains(" MB, "), "{}", m.label);
        }
        assert_eq!(model_choice("an-old-model@3"), MODEL_CHOICES[0], "an unknown id shows the default");
        assert_eq!(model_choice(semantic::MPNET.id).model.name, "all-mpnet-base-v2");
    }
}
