//! Imports of other tools' exports (read by [`crate::import`]): a preview that writes nothing, and
//! the import itself in one transaction. A file that cannot be read adds nothing at all; a
//! conversation that cannot be read is left out and listed with why ([`SkippedConversation`]), and
//! the others are imported.
//!
//! Every conversation becomes sessions and forks ([`crate::import::plan`]) with the source's
//! timestamps, each turn carrying `metadata.source = {format, conversation, message}`. Session ids
//! are derived from the source, so a conversation imported before is recognised and left as it is
//! ("already imported"). The session-state register of each session is extracted from its turns, as
//! the agent loop would have (files touched, commands, decisions).

use super::rows::{self, TurnRow};
use super::sessions::clip_title;
use super::turns::{search_extra, turn_tokens};
use super::Store;
use crate::error::{Context, Error, Result};
use crate::import::{self, Conversation, Format, ImportFile, Plan, SkippedConversation};
use crate::state::{apply_turn, ExtractionRules, SessionState};
use crate::{NewTurn, Session, Turn, TurnStatus};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Value};
use std::collections::HashSet;

/// What an import adds (or, in a preview, would add).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportCounts {
    /// Conversations read (Claude Code: sessions; Codex: files), not counting the ones that cannot be
    /// read.
    pub conversations: usize,
    /// Sessions added: one per new conversation, plus its separate first-message branches.
    pub sessions: usize,
    /// Forks added: the other branches of the conversations' trees.
    pub forks: usize,
    /// Turns added, over all sessions and forks.
    pub turns: usize,
    /// Messages left out: system, hidden and meta messages, empty ones, side chains.
    pub skipped: usize,
    /// Conversations left out because they cannot be read (a ChatGPT entry without `mapping`, …),
    /// each with its file, place, title and why, in the order read.
    pub skipped_conversations: Vec<SkippedConversation>,
    /// Titles of the conversations already in the archive (imported before, or twice in these files),
    /// which are left as they are.
    pub already_imported: Vec<String>,
    /// The ids of the main sessions added, one per new conversation, in the order read (its forks
    /// are reached from it); to open them from the import's summary.
    pub session_ids: Vec<String>,
}

/// What [`Store::import_foreign`] would do with some files; nothing is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportPreview {
    /// Each file's format, in the order given.
    pub formats: Vec<Format>,
    /// What importing them would add.
    pub counts: ImportCounts,
}

/// What [`Store::import_foreign`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignImportSummary {
    /// Each file's format, in the order given.
    pub formats: Vec<Format>,
    /// What was added.
    pub counts: ImportCounts,
}

/// How far an import is, reported after each conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportProgress {
    /// Conversations read so far.
    pub conversations: usize,
    /// Turns written so far (they are committed only when the whole import succeeds).
    pub turns: usize,
}

/// Reads an import's conversations: hands each to its callback as soon as it is read and returns the
/// ones it left out, or fails naming the file and where — as [`import::parse_files`] does, which is
/// what [`Store::preview_import`] and [`Store::import_foreign`] use. The browser's storage worker reads
/// with the importer's own wasm instead (loaded on an import's first use), so the parsers are not part
/// of the worker every start loads.
pub type ReadConversations<'a> =
    &'a mut dyn FnMut(&mut dyn FnMut(Conversation) -> Result<()>) -> Result<Vec<SkippedConversation>>;

impl Store {
    /// Reads `files` and says what importing them would add, and which conversations it would leave
    /// out; writes nothing. A file that cannot be imported is refused here as
    /// [`Store::import_foreign`] would refuse it.
    pub fn preview_import(&self, files: &[ImportFile<'_>]) -> Result<ImportPreview> {
        let formats = import::detect_files(files)?;
        let counts = self.preview_conversations(&mut |each| import::parse_files(files, each))?;
        Ok(ImportPreview { formats, counts })
    }

    /// Imports other tools' exports (ChatGPT, Claude.ai, Claude Code, Codex, OpenAI messages; the
    /// format is detected from each file's content) in one transaction: a file that cannot be read
    /// (not JSON, cut short, of no known format) adds nothing at all, and the error names the file
    /// and the line or byte. A conversation that cannot be read is left out and listed
    /// ([`ImportCounts::skipped_conversations`]), the others imported; conversations imported before
    /// are skipped and listed. `on_progress` is called after each conversation.
    pub fn import_foreign(
        &mut self,
        files: &[ImportFile<'_>],
        on_progress: &mut dyn FnMut(ImportProgress),
    ) -> Result<ForeignImportSummary> {
        let formats = import::detect_files(files)?;
        let counts = self.import_conversations(&mut |each| import::parse_files(files, each), on_progress)?;
        Ok(ForeignImportSummary { formats, counts })
    }

    /// [`Store::preview_import`] of the conversations `read` reads.
    pub fn preview_conversations(&self, read: ReadConversations<'_>) -> Result<ImportCounts> {
        process(&self.conn, read, false, &mut |_| {})
    }

    /// [`Store::import_foreign`] of the conversations `read` reads, in one transaction: nothing is
    /// written when `read` fails.
    pub fn import_conversations(
        &mut self,
        read: ReadConversations<'_>,
        on_progress: &mut dyn FnMut(ImportProgress),
    ) -> Result<ImportCounts> {
        let tx = self.conn.transaction().context("starting the import")?;
        let counts = process(&tx, read, true, on_progress)?;
        tx.commit().context("committing the import")?;
        Ok(counts)
    }
}

/// Reads every conversation `read` reads, plans it and (when `write`) writes it through `conn`.
fn process(
    conn: &Connection,
    read: ReadConversations<'_>,
    write: bool,
    on_progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportCounts> {
    let mut counts = ImportCounts::default();
    let mut seen: HashSet<String> = HashSet::new();
    let skipped = read(&mut |conversation| {
        counts.conversations += 1;
        counts.skipped += conversation.skipped;
        let plan = import::plan(&conversation);
        let Some(main) = plan.sessions.first() else { return Ok(()) };
        let name = if main.title.is_empty() { conversation.id.clone() } else { main.title.clone() };
        let exists = conn
            .query_row("SELECT 1 FROM sessions WHERE id = ?1", [&main.id], |_| Ok(()))
            .optional()
            .context(format!("checking whether {name:?} was imported before"))?
            .is_some();
        if exists || !seen.insert(main.id.clone()) {
            counts.already_imported.push(name);
            return Ok(());
        }
        counts.session_ids.push(main.id.clone());
        for s in &plan.sessions {
            match s.parent {
                None => counts.sessions += 1,
                Some(_) => counts.forks += 1,
            }
            counts.turns += s.turns.len();
        }
        if write {
            write_conversation(conn, &conversation, &plan).map_err(|e| in_conversation(e, &conversation, &name))?;
        }
        on_progress(ImportProgress { conversations: counts.conversations, turns: counts.turns });
        Ok(())
    })?;
    counts.skipped_conversations = skipped;
    Ok(counts)
}

fn in_conversation(e: Error, c: &Conversation, name: &str) -> Error {
    match e {
        Error::Sqlite { context, source } => Error::Sqlite {
            context: format!("importing {} conversation {name:?} ({}): {context}", c.format.label(), c.id),
            source,
        },
        other => other,
    }
}

/// Writes the planned sessions of one conversation, each with its turns and its state register.
fn write_conversation(conn: &Connection, c: &Conversation, plan: &Plan) -> Result<()> {
    let workspace = c.workspace.clone().unwrap_or_else(|| c.format.default_workspace());
    let rules = ExtractionRules::default();
    // Every session's full path (inherited turns, then its own), for its state register.
    let mut paths: Vec<Vec<usize>> = Vec::with_capacity(plan.sessions.len());
    for s in &plan.sessions {
        let mut path: Vec<usize> = match (s.parent, s.fork_turn) {
            (Some(p), Some(f)) => paths[p][..f as usize].to_vec(),
            _ => Vec::new(),
        };
        path.extend(&s.turns);
        let mut state = SessionState::new(s.id.clone(), workspace.clone(), c.model.clone());
        let inherited = s.fork_turn.unwrap_or(0);
        let mut own_rows = Vec::new();
        for (k, &i) in path.iter().enumerate() {
            let number = k as i64 + 1;
            let turn = stored_turn(c, i, &s.id, number, plan.turn_times[i]);
            apply_turn(&mut state, &turn, &rules);
            if number > inherited {
                own_rows.push(turn);
            }
        }
        let state = serde_json::to_value(&state).context("saving an imported session's state")?;
        let row = Session {
            id: s.id.clone(),
            workspace: workspace.clone(),
            title: clip_title(&s.title),
            model: c.model.clone(),
            system_prompt: String::new(),
            created_at: s.created_at,
            last_active_at: s.last_active_at,
            turn_count: path.len() as i64,
            prompt_tokens: 0,
            completion_tokens: 0,
            state,
            parent_session_id: s.parent.map(|p| plan.sessions[p].id.clone()),
            fork_turn: s.fork_turn,
            is_archived: false,
            // Another tool's branches are its edits and regenerations: versions of the conversation.
            is_version: s.parent.is_some(),
        };
        rows::insert_session(conn, &row).context(format!("adding session {}", s.id))?;
        for t in &own_rows {
            let extra = search_extra(t.tool_name.as_deref(), &t.tool_calls, &t.metadata);
            let gid = rows::imported_gid(&t.session_id, t.turn_number);
            let r = TurnRow {
                session_id: &t.session_id,
                turn_number: t.turn_number,
                role: t.role,
                content: &t.content,
                tool_calls: &t.tool_calls,
                tool_call_id: t.tool_call_id.as_deref(),
                tool_name: t.tool_name.as_deref(),
                token_count: t.token_count,
                status: t.status,
                created_at: t.created_at,
                metadata: &t.metadata,
                search_extra: &extra,
                gid: Some(&gid),
            };
            rows::insert_turn(conn, &r).context(format!("adding turn {} of session {}", t.turn_number, s.id))?;
        }
        paths.push(path);
    }
    Ok(())
}

/// Turn `i` of the conversation as it is stored as turn `number` of `session_id`.
fn stored_turn(c: &Conversation, i: usize, session_id: &str, number: i64, time: i64) -> Turn {
    let t = &c.turns[i];
    let mut metadata = t.metadata.clone();
    metadata
        .insert("source".into(), json!({"format": c.format.as_str(), "conversation": c.id, "message": t.source_id}));
    let new = NewTurn {
        role: t.role,
        content: t.content.clone(),
        tool_calls: t.tool_calls.clone(),
        tool_call_id: t.tool_call_id.clone(),
        tool_name: t.tool_name.clone(),
        status: TurnStatus::Complete,
        metadata: Value::Object(metadata),
    };
    Turn {
        id: 0,
        session_id: session_id.to_owned(),
        turn_number: number,
        token_count: turn_tokens(&new),
        role: new.role,
        content: new.content,
        tool_calls: new.tool_calls,
        tool_call_id: new.tool_call_id,
        tool_name: new.tool_name,
        status: new.status,
        created_at: time,
        metadata: new.metadata,
        attachments: Vec::new(),
    }
}
