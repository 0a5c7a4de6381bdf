//! What the browser's importer (the `importer/` crate, its own wasm, loaded by the storage worker on an
//! import's first use) hands back besides the conversations themselves, as JSON: each file's format and
//! the conversations it left out ([`ReadSummary`]), or why the files cannot be imported
//! ([`ReadFailure`]). Native code calls [`super::parse_files`] directly and never needs these.

use super::{Format, SkippedConversation};
use crate::error::Error;
use serde::{Deserialize, Serialize};

/// The importer's answer once every conversation has been handed on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadSummary {
    /// Each file's format, in the order given.
    pub formats: Vec<Format>,
    /// The conversations that cannot be read, with why.
    pub skipped: Vec<SkippedConversation>,
}

/// Why the importer stopped: an [`Error::Import`] keeps its line; any other error is its message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadFailure {
    /// The line of the file that is wrong, for an import error.
    pub line: Option<usize>,
    /// What is wrong, for people.
    pub message: String,
}

impl From<Error> for ReadFailure {
    fn from(e: Error) -> ReadFailure {
        match e {
            Error::Import { line, message } => ReadFailure { line: Some(line), message },
            other => ReadFailure { line: None, message: other.to_string() },
        }
    }
}

impl From<ReadFailure> for Error {
    fn from(f: ReadFailure) -> Error {
        match f.line {
            Some(line) => Error::Import { line, message: f.message },
            None => Error::Invalid(f.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_error_comes_back_as_it_was() {
        let e = Error::Import { line: 3, message: "chat.json: not JSON".into() };
        let shown = e.to_string();
        let back: Error = ReadFailure::from(e).into();
        assert_eq!(back.to_string(), shown);
        assert!(matches!(back, Error::Import { line: 3, .. }));
        let other: Error = ReadFailure::from(Error::Invalid("no file".into())).into();
        assert_eq!(other.to_string(), "no file");
    }
}
