//! The app's own state beside the chat's: where the archive is ([`StorageState`]) and where an import
//! is ([`ImportState`]), as the shell, the Storage panel and the transfers (`transfer.rs`) share them.

use crate::protocol::{thousands, ImportReport, ReadyInfo};
use leptos::prelude::*;

/// What the UI knows about the archive.
#[derive(Debug, Clone, PartialEq)]
pub enum StorageState {
    /// The worker has not said it is ready yet.
    Connecting,
    /// The archive is open, and where.
    Ready(ReadyInfo),
    /// Storage could not start: why, for the user.
    Failed(String),
}

/// Where an import is: what the panel shows between choosing files and the summary.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ImportStage {
    /// Nothing chosen.
    #[default]
    Idle,
    /// Reading the chosen files and asking the worker what they hold.
    Reading,
    /// What importing them would add, waiting for the user's Import (or Cancel).
    Preview {
        /// The worker's preview.
        report: ImportReport,
        /// The files' names, as chosen.
        names: Vec<String>,
        /// Files of a chosen folder left aside (not `.json` or `.jsonl`).
        ignored: usize,
    },
    /// Importing: conversations done so far, of the preview's total.
    Importing {
        /// Conversations read so far.
        done: usize,
        /// The preview's count of conversations.
        total: usize,
    },
    /// What was added.
    Done(ImportReport),
    /// Why nothing was imported.
    Failed(String),
}

impl ImportStage {
    /// The status line for this stage (empty when there is nothing to say).
    pub fn text(&self) -> String {
        match self {
            ImportStage::Idle => String::new(),
            ImportStage::Reading => "Reading the files…".into(),
            ImportStage::Preview { report, names, ignored } => {
                let files = match names.as_slice() {
                    [one] => one.clone(),
                    many => format!("{} files", thousands(many.len())),
                };
                let ignored = match ignored {
                    0 => String::new(),
                    n => format!(" ({} other files in the folder left aside)", thousands(*n)),
                };
                let nothing = report.why_nothing().map(|why| format!(" {why}")).unwrap_or_default();
                format!("{files} ({}){ignored}: {}.{nothing}", report.formats_text(), report.describe_preview())
            }
            ImportStage::Importing { done, total } => {
                format!("Importing… {} of {} conversations", thousands(*done), thousands(*total))
            }
            ImportStage::Done(report) => format!("{}.", report.describe_done()),
            ImportStage::Failed(why) => format!("Nothing was imported: {why}"),
        }
    }
}

/// The import's state, provided as context by the app: the stage and the files chosen (kept as the
/// browser's `File`s, which are read from disk again for the import, not held in memory).
#[derive(Clone, Copy)]
pub struct ImportState {
    /// Where the import is.
    pub stage: RwSignal<ImportStage>,
    /// The files chosen, in order.
    pub files: StoredValue<Vec<web_sys::File>, LocalStorage>,
}

impl ImportState {
    /// Nothing chosen yet.
    pub fn new() -> ImportState {
        ImportState { stage: RwSignal::new(ImportStage::Idle), files: StoredValue::new_local(Vec::new()) }
    }
}

impl Default for ImportState {
    fn default() -> ImportState {
        ImportState::new()
    }
}
