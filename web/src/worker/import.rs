//! Imports and exports beyond the JSON Lines archive: files of any supported format previewed and
//! imported (a Cowork export through `import_jsonl`, other tools' through `import_foreign`), with
//! progress events; sessions exported as Markdown or as ChatGPT's `conversations.json`.

use crate::protocol::{ErrorKind, Event, FilePayload, ImportReport, Problem, SkippedConversation};
use cowork_core::import::Format;
use cowork_core::store::{is_cowork_archive, ImportCounts, ImportSummary, Store};

/// Least time between two progress events, in milliseconds.
const PROGRESS_EVERY_MS: f64 = 100.0;

/// What the files are: one Cowork export (its text), or other tools' files (read by the importer,
/// `importer.rs`, which the hub has loaded before the request is served).
enum Kind<'a> {
    Cowork(&'a str),
    Foreign(&'a [FilePayload]),
}

fn kind(files: &[FilePayload]) -> Result<Kind<'_>, Problem> {
    let invalid = |m: String| Problem::new(ErrorKind::Invalid, m);
    if files.is_empty() {
        return Err(invalid("no file was chosen".into()));
    }
    let cowork: Vec<&FilePayload> = files.iter().filter(|f| is_cowork_archive(&f.bytes)).collect();
    match (cowork.as_slice(), files.len()) {
        ([], _) => Ok(Kind::Foreign(files)),
        ([one], 1) => std::str::from_utf8(&one.bytes).map(Kind::Cowork).map_err(|e| {
            invalid(format!("{}: not UTF-8 text (byte {}); nothing was imported", one.name, e.valid_up_to()))
        }),
        (some, _) => Err(invalid(format!(
            "{} is a Cowork export: import it on its own, not with other files; nothing was imported",
            some[0].name
        ))),
    }
}

/// [`crate::protocol::ops::PreviewImport`]: what importing `files` would add; nothing is written.
pub fn preview(store: &Store, files: &[FilePayload]) -> Result<ImportReport, Problem> {
    let report = match kind(files)? {
        Kind::Cowork(text) => cowork_report(&store.preview_jsonl(text)?),
        Kind::Foreign(files) => {
            let mut formats = Vec::new();
            let counts = store.preview_conversations(&mut |each| {
                let summary = super::importer::read(files, each)?;
                formats = summary.formats;
                Ok(summary.skipped)
            })?;
            foreign_report(&formats, counts)
        }
    };
    Ok(report)
}

/// [`crate::protocol::ops::ImportFiles`]: imports `files` all or nothing, reporting progress.
pub fn import(store: &mut Store, files: &[FilePayload], emit: &dyn Fn(Event)) -> Result<ImportReport, Problem> {
    let report = match kind(files)? {
        Kind::Cowork(text) => cowork_report(&store.import_jsonl(text)?),
        Kind::Foreign(files) => {
            let mut last = f64::NEG_INFINITY;
            let mut latest = None;
            let mut on_progress = |p: cowork_core::store::ImportProgress| {
                latest = Some(p);
                let now = js_sys::Date::now();
                if now - last >= PROGRESS_EVERY_MS {
                    last = now;
                    emit(Event::ImportProgress { conversations: p.conversations, turns: p.turns });
                }
            };
            let mut formats = Vec::new();
            let counts = store.import_conversations(
                &mut |each| {
                    let summary = super::importer::read(files, each)?;
                    formats = summary.formats;
                    Ok(summary.skipped)
                },
                &mut on_progress,
            )?;
            if let Some(p) = latest {
                emit(Event::ImportProgress { conversations: p.conversations, turns: p.turns });
            }
            foreign_report(&formats, counts)
        }
    };
    if !report.adds_nothing() {
        emit(Event::SessionsChanged { deleted: None });
    }
    Ok(report)
}

fn foreign_report(formats: &[Format], c: ImportCounts) -> ImportReport {
    ImportReport {
        formats: formats.iter().map(|f| f.label().to_owned()).collect(),
        conversations: c.conversations,
        sessions: c.sessions,
        forks: c.forks,
        turns: c.turns,
        skipped: c.skipped,
        already_imported: c.already_imported,
        session_ids: c.session_ids,
        skipped_conversations: c.skipped_conversations.into_iter().map(skipped).collect(),
    }
}

/// A left-out conversation as it travels to the page.
fn skipped(s: cowork_core::import::SkippedConversation) -> SkippedConversation {
    SkippedConversation { file: s.file, entry: s.entry, id: s.id, title: s.title, reason: s.reason }
}

/// A Cowork export's sessions (forks among them) counted as sessions; the skipped ones have no
/// titles in the summary, so they are listed unnamed.
fn cowork_report(s: &ImportSummary) -> ImportReport {
    ImportReport {
        formats: vec!["Cowork".into()],
        conversations: s.sessions_added + s.sessions_skipped,
        sessions: s.sessions_added,
        forks: 0,
        turns: s.turns_added,
        skipped: 0,
        already_imported: vec![String::new(); s.sessions_skipped],
        session_ids: s.session_ids.clone(),
        skipped_conversations: Vec::new(),
    }
}
