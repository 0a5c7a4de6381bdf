//! Other tools' exports (ChatGPT, Claude.ai, Claude Code, Codex, OpenAI messages) read in the browser
//! by core's importers, and the exports in other tools' formats (ChatGPT, Markdown) written by core's
//! `export`, as a wasm module of their own: the storage worker loads it (`importScripts`,
//! `scripts/importer.sh` builds it into `dist/import/`) the first time an import or such an export
//! needs it, so they are not part of the worker every start loads (the cold-start budget,
//! BENCHMARKS.md).
//!
//! [`read`] detects each file's format, then hands every conversation on as JSON as soon as it is
//! read (memory holds the files and one conversation), and answers with a [`ReadSummary`] — or
//! fails with a [`ReadFailure`], both as JSON. The storage worker turns them back into core's types
//! and writes the conversations (`Store::import_conversations`).

use cowork_core::import::{self, ImportFile, ReadFailure, ReadSummary};

/// Reads `files` (name, bytes), calling `each` with every conversation as JSON. `each` answering
/// `false` stops the reading (the caller keeps its own error). Answers the [`ReadSummary`] as JSON,
/// or the [`ReadFailure`] as JSON.
pub fn read(files: &[(String, Vec<u8>)], each: &mut dyn FnMut(String) -> bool) -> Result<String, String> {
    let files: Vec<ImportFile<'_>> = files.iter().map(|(name, bytes)| ImportFile::new(name, bytes)).collect();
    let result = import::detect_files(&files).and_then(|formats| {
        let skipped = import::parse_files(&files, &mut |conversation| {
            let json = serde_json::to_string(&conversation)
                .map_err(|e| cowork_core::Error::Invalid(format!("handing a conversation on: {e}")))?;
            match each(json) {
                true => Ok(()),
                false => Err(cowork_core::Error::Invalid("the import was stopped".into())),
            }
        })?;
        Ok(ReadSummary { formats, skipped })
    });
    match result {
        Ok(summary) => Ok(to_json(&summary)),
        Err(e) => Err(to_json(&ReadFailure::from(e))),
    }
}

/// The file an export in another tool's format makes, from its [`ExportSource`] as JSON (the storage
/// worker gathers it from the archive); an error names what could not be read.
///
/// [`ExportSource`]: cowork_core::export::ExportSource
pub fn export(source: &str) -> Result<String, String> {
    serde_json::from_str::<cowork_core::export::ExportSource>(source)
        .map(|source| source.render())
        .map_err(|e| format!("the export's sessions cannot be read: {e}"))
}

fn to_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"line\":null,\"message\":\"{e}\"}}"))
}

#[cfg(target_arch = "wasm32")]
mod browser {
    use wasm_bindgen::prelude::*;

    /// `read(names, contents, each)`: `contents[i]` is the `Uint8Array` of the file named `names[i]`;
    /// `each(json)` gets every conversation and returns `false` to stop. Returns the summary's JSON;
    /// throws the failure's JSON.
    #[wasm_bindgen]
    pub fn read(names: Vec<String>, contents: js_sys::Array, each: &js_sys::Function) -> Result<String, JsValue> {
        let files: Vec<(String, Vec<u8>)> = names
            .into_iter()
            .zip(contents.iter())
            .map(|(name, bytes)| (name, js_sys::Uint8Array::new(&bytes).to_vec()))
            .collect();
        let mut call = |json: String| {
            each.call1(&JsValue::NULL, &JsValue::from_str(&json)).is_ok_and(|answer| answer.as_bool() != Some(false))
        };
        super::read(&files, &mut call).map_err(|failure| JsValue::from_str(&failure))
    }

    /// `render(source)`: the exported file's text from the export's source as JSON; throws a message.
    /// (Not `export`, a word JavaScript keeps for itself.)
    #[wasm_bindgen]
    pub fn render(source: String) -> Result<String, JsValue> {
        super::export(&source).map_err(|message| JsValue::from_str(&message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cowork_core::import::{Conversation, Format};

    fn files(list: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        list.iter().map(|(n, t)| (n.to_string(), t.as_bytes().to_vec())).collect()
    }

    #[test]
    fn conversations_come_out_as_json_that_reads_back_as_they_were() {
        let messages = r#"[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"}]"#;
        let input = files(&[("chat.json", messages)]);
        let mut got = Vec::new();
        let summary = read(&input, &mut |json| {
            got.push(serde_json::from_str::<Conversation>(&json).unwrap());
            true
        })
        .unwrap();
        let summary: ReadSummary = serde_json::from_str(&summary).unwrap();
        assert_eq!(summary.formats, [Format::OpenAiMessages]);
        assert!(summary.skipped.is_empty());
        // The same conversation core's reader gives natively.
        let mut direct = Vec::new();
        let file = ImportFile::new("chat.json", messages.as_bytes());
        import::parse_files(&[file], &mut |c| {
            direct.push(c);
            Ok(())
        })
        .unwrap();
        assert_eq!(got, direct);
        assert_eq!(got[0].turns.len(), 2);
    }

    #[test]
    fn a_file_that_cannot_be_read_fails_naming_it_and_where() {
        let input = files(&[("broken.json", "[{\"role\":\"user\",")]);
        let failure = read(&input, &mut |_| true).unwrap_err();
        let failure: ReadFailure = serde_json::from_str(&failure).unwrap();
        assert!(failure.line.is_some(), "{failure:?}");
        assert!(failure.message.contains("broken.json"), "{failure:?}");
    }

    #[test]
    fn the_caller_can_stop_it() {
        let messages = r#"[{"role":"user","content":"Hi"}]"#;
        let input = files(&[("a.json", messages), ("b.json", messages)]);
        let mut calls = 0;
        let failure = read(&input, &mut |_| {
            calls += 1;
            false
        })
        .unwrap_err();
        assert_eq!(calls, 1, "no conversation after the stop");
        assert!(failure.contains("stopped"), "{failure}");
    }
}
