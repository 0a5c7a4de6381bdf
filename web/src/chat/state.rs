//! The chat screens' state as data, and the reducer that applies the worker's events to it.
//!
//! **Design.** [`reduce`] turns one event into typed [`Change`]s; a change names the one field it
//! touches and how (a streamed delta is [`Change::Streamed`], which appends to the streaming text and
//! nothing else). Both sides apply the same changes through the same field-level functions
//! ([`stream_into`], [`window::show_turn`], [`touch_session`], …):
//! - [`ChatView::apply`] on a plain struct, which is how the reducer is tested natively;
//! - [`ChatState::apply`] on the UI's signals, one `update` of the one signal a change names, so a
//!   delta re-renders the streaming text only, never the window of turns.
//!
//! The conversation ([`ChatState`]) and the dialogs ([`DialogState`]: what is open, what a dialog
//! shows) are separate; both are provided as Leptos context by the app (`provide_context`) and read
//! with [`ChatState::get`] / [`DialogState::get`]. A tool call waiting for the user's yes or no is
//! part of the conversation (the reply waits on it); the approval dialog shows it.

use super::format::{fix_for, Fix};
use super::window;
use super::DEFAULT_WORKSPACE;
use crate::protocol::{ErrorKind, Event, Problem};
use crate::settings::ModelSettings;
use cowork_core::{Role, SearchHit, Session, Turn};
use leptos::prelude::*;

/// What the notice line says, with the kind of failure when it reports an error (the kind, never the
/// wording, decides the action offered beside it).
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// The words shown.
    pub text: String,
    /// The failure's kind; `None`: not an error.
    pub kind: Option<ErrorKind>,
    /// The session a reply's notice is about ("Running read_file…" while a reply in it runs): shown
    /// only while that session is open. `None`: about the app, shown wherever the user is.
    pub session: Option<String>,
}

impl Notice {
    /// A notice that is not an error ("Running read_file…", "Reply interrupted: …").
    pub fn info(text: impl Into<String>) -> Notice {
        Notice { text: text.into(), kind: None, session: None }
    }

    /// An error, with its kind.
    pub fn problem(p: &Problem) -> Notice {
        Notice { text: p.message.clone(), kind: Some(p.kind), session: None }
    }

    /// An error with words in front ("Could not rename the session: …").
    pub fn problem_in(what: &str, p: &Problem) -> Notice {
        Notice { text: format!("{what}: {}", p.message), kind: Some(p.kind), session: None }
    }

    /// This notice, about `session` (a reply's progress or failure there).
    pub fn about(self, session: Option<String>) -> Notice {
        Notice { session, ..self }
    }

    /// Whether it is shown while `current` is open.
    pub fn shown_in(&self, current: Option<&str>) -> bool {
        self.session.is_none() || self.session.as_deref() == current
    }

    /// Where the user fixes it (Settings, Storage), if anywhere.
    pub fn fix(&self) -> Option<Fix> {
        self.kind.and_then(fix_for)
    }
}

/// A tool call waiting for the user's yes or no.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    /// The call's id, to answer `Op::Approve` with.
    pub call_id: String,
    /// The tool the model called.
    pub name: String,
    /// Its arguments as the model wrote them (JSON text).
    pub arguments: String,
}

/// A delegated task as the checklist card shows it (in its own session only).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveTask {
    /// The session whose reply delegated it.
    pub session_id: String,
    /// The orchestrator's id for the task.
    pub task_id: String,
    /// What the task is to do.
    pub goal: String,
    /// Its status, normalised.
    pub status: cowork_core::TaskStatus,
    /// Its subtasks so far, in the plan's order.
    pub checklist: Vec<cowork_core::orchestrator::ChecklistItem>,
}

impl LiveTask {
    /// Whether the task's status is final: nothing more will change.
    pub fn is_over(&self) -> bool {
        self.status.is_terminal()
    }
}

/// The part of the conversation the worker's events change, as plain data.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatView {
    /// The session list, most recently active first.
    pub sessions: Vec<Session>,
    /// The open session's id; `None`: a new conversation (the next message creates a session).
    pub current: Option<String>,
    /// The open session's window of turns, in order.
    pub turns: Vec<Turn>,
    /// The turn being streamed and its text so far.
    pub streaming: Option<(i64, String)>,
    /// The turn being streamed and its reasoning so far, until the turn is saved finished.
    pub thinking: Option<(i64, String)>,
    /// The notice line; `None`: nothing to say.
    pub notice: Option<Notice>,
    /// The composer's unsent text.
    pub draft: String,
    /// Delegated tasks of this tab's replies (newest last).
    pub tasks: Vec<LiveTask>,
    /// A tool call waiting for the user's yes or no.
    pub approval: Option<Approval>,
    /// Bumped whenever the session list changed elsewhere (rename, fork, archive, delete, import).
    pub sessions_stale: u64,
    /// Where sync stands.
    pub sync: crate::protocol::SyncState,
    /// The session this tab's reply is being written in, if one is.
    pub replying_in: Option<String>,
}

/// One change an event makes to the screen; each touches one field of [`ChatView`] / [`ChatState`].
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// This tab's message created a session: it is open now, first in the list.
    Opened(Session),
    /// A session created elsewhere: listed (once), not opened.
    Listed(Session),
    /// A saved turn: shown if its session is open.
    Shown(Turn),
    /// A turn saved elsewhere: its session moves to the top, with its count, time and title.
    Touched(Turn),
    /// The user's message is saved: the draft has done its job.
    DraftSaved,
    /// More text of the reply being streamed.
    Streamed {
        /// The assistant turn being streamed.
        turn_number: i64,
        /// The new text, appended to what came before.
        text: String,
    },
    /// More reasoning of the reply being streamed.
    Thought {
        /// The assistant turn being streamed.
        turn_number: i64,
        /// The new reasoning, appended to what came before.
        text: String,
    },
    /// The notice line says this (`None`: clears it).
    Notice(Option<Notice>),
    /// A reply's progress or failure for the notice line (`None`: clears it): about the session the
    /// reply is written in, so it is shown there only.
    ReplyNotice(Option<Notice>),
    /// A delegated task moved on: its card is added or updated.
    Task(LiveTask),
    /// A tool call waits for the user's approval.
    Approval(Approval),
    /// The session list is out of date; a deleted session that is open closes.
    SessionsChanged {
        /// The session deleted, if one was.
        deleted: Option<String>,
    },
    /// Where sync stands (every tab shows it).
    Sync(crate::protocol::SyncState),
}

/// What one event (of this tab's request `request`, or of another tab when it is 0) changes.
///
/// Changes made elsewhere never touch this tab's draft, selection or notices.
pub fn reduce(request: u64, event: &Event) -> Vec<Change> {
    if request == 0 {
        return match event {
            Event::SessionCreated { session } => vec![Change::Listed(session.clone())],
            Event::TurnAppended { turn } => vec![Change::Shown(turn.clone()), Change::Touched(turn.clone())],
            Event::SessionsChanged { deleted } => vec![Change::SessionsChanged { deleted: deleted.clone() }],
            Event::Sync { state } => vec![Change::Sync(state.clone())],
            _ => Vec::new(),
        };
    }
    match event {
        Event::SessionCreated { session } => vec![Change::Opened(session.clone())],
        // The composer's message is saved; an edit of an earlier message was typed elsewhere.
        // Its session moves to the top of the list, titled after it when it had no title yet.
        Event::TurnAppended { turn } if turn.role == Role::User && turn.metadata.get("edited_from").is_none() => {
            vec![Change::DraftSaved, Change::Shown(turn.clone()), Change::Touched(turn.clone())]
        }
        Event::TurnAppended { turn } => vec![Change::Shown(turn.clone())],
        Event::Delta { turn_number, text, .. } => {
            vec![Change::Streamed { turn_number: *turn_number, text: text.clone() }]
        }
        Event::ReasoningDelta { turn_number, text, .. } => {
            vec![Change::Thought { turn_number: *turn_number, text: text.clone() }]
        }
        Event::ToolStarted { name, .. } => vec![Change::ReplyNotice(Some(Notice::info(format!("Running {name}…"))))],
        Event::ToolFinished { .. } => vec![Change::ReplyNotice(None)],
        Event::Retrying { wait_ms, kind, reason, .. } => {
            let text = format!("{reason} Retrying in {} s…", wait_ms.div_ceil(1000));
            vec![Change::ReplyNotice(Some(Notice { text, kind: Some(*kind), session: None }))]
        }
        Event::TaskProgress { session_id, task_id, status, goal, checklist, .. } => vec![Change::Task(LiveTask {
            session_id: session_id.clone(),
            task_id: task_id.clone(),
            goal: goal.clone(),
            status: status.clone(),
            checklist: checklist.clone(),
        })],
        Event::ApprovalNeeded { call_id, name, arguments } => vec![Change::Approval(Approval {
            call_id: call_id.clone(),
            name: name.clone(),
            arguments: arguments.clone(),
        })],
        Event::Error(problem) => vec![Change::ReplyNotice(Some(Notice::problem(problem)))],
        Event::SessionsChanged { deleted } => vec![Change::SessionsChanged { deleted: deleted.clone() }],
        // Shown by the Storage panel's import, which listens for it itself (app/storage.rs).
        Event::ImportProgress { .. } => Vec::new(),
        // Answered by the storage client's tool runner (client.rs); the tool card shows the call.
        Event::ToolRequested { .. } => Vec::new(),
        Event::Sync { state } => vec![Change::Sync(state.clone())],
    }
}

/// Appends streamed text to the turn being streamed (or starts a new one).
pub fn stream_into(streaming: &mut Option<(i64, String)>, turn_number: i64, text: &str) {
    match streaming {
        Some((n, acc)) if *n == turn_number => acc.push_str(text),
        _ => *streaming = Some((turn_number, text.to_owned())),
    }
}

/// A reply (re)starting to stream into a turn arrives as that turn, interrupted: the stream's text
/// starts again from what the deltas bring (a reply continued after a takeover resends its saved words).
pub fn restart_stream(streaming: &mut Option<(i64, String)>, turn: &Turn) {
    let restarts = turn.role == Role::Assistant && turn.status == cowork_core::TurnStatus::Interrupted;
    if restarts && streaming.as_ref().is_some_and(|(n, _)| *n == turn.turn_number) {
        *streaming = None;
    }
}

/// A saved assistant turn ends its live reasoning: finished, it shows the reasoning it was saved with
/// (collapsed); re-announced as interrupted, its reasoning streams again from the start.
pub fn settle_thinking(thinking: &mut Option<(i64, String)>, turn: &Turn) {
    if turn.role == Role::Assistant && thinking.as_ref().is_some_and(|(n, _)| *n == turn.turn_number) {
        *thinking = None;
    }
}

/// Puts a new session first in the list (replacing an older copy).
pub fn open_first(sessions: &mut Vec<Session>, session: &Session) {
    sessions.retain(|x| x.id != session.id);
    sessions.insert(0, session.clone());
}

/// Lists a session created elsewhere, unless it is listed already.
pub fn list_once(sessions: &mut Vec<Session>, session: &Session) {
    if !sessions.iter().any(|x| x.id == session.id) {
        sessions.insert(0, session.clone());
    }
}

/// A turn saved elsewhere: its session moves to the top, with its count, time and (first) title.
pub fn touch_session(sessions: &mut Vec<Session>, turn: &Turn) {
    if let Some(i) = sessions.iter().position(|x| x.id == turn.session_id) {
        let mut session = sessions.remove(i);
        session.turn_count = session.turn_count.max(turn.turn_number);
        session.last_active_at = session.last_active_at.max(turn.created_at);
        if session.title.is_empty() && turn.role == Role::User {
            session.title = cowork_core::title_from_message(&turn.content).chars().take(80).collect();
        }
        sessions.insert(0, session);
    }
}

/// A task's newest state; a status-only event (no plan yet) keeps the checklist already shown.
pub fn upsert_task(tasks: &mut Vec<LiveTask>, task: LiveTask) {
    match tasks.iter_mut().find(|t| t.task_id == task.task_id) {
        Some(t) if task.checklist.is_empty() => t.status = task.status,
        Some(t) => *t = task,
        None => tasks.push(task),
    }
}

fn is_open(current: Option<&str>, session_id: &str) -> bool {
    current == Some(session_id)
}

impl ChatView {
    /// Applies one event: [`reduce`], then each change.
    pub fn apply_event(&mut self, request: u64, event: &Event) {
        for change in reduce(request, event) {
            self.apply(change);
        }
    }

    /// Applies one change to its field.
    pub fn apply(&mut self, change: Change) {
        match change {
            Change::Opened(session) => {
                self.current = Some(session.id.clone());
                open_first(&mut self.sessions, &session);
            }
            Change::Listed(session) => list_once(&mut self.sessions, &session),
            Change::Shown(turn) => {
                restart_stream(&mut self.streaming, &turn);
                settle_thinking(&mut self.thinking, &turn);
                if is_open(self.current.as_deref(), &turn.session_id) {
                    window::show_turn(&mut self.turns, &turn);
                }
            }
            Change::Touched(turn) => touch_session(&mut self.sessions, &turn),
            Change::DraftSaved => self.draft.clear(),
            Change::Streamed { turn_number, text } => stream_into(&mut self.streaming, turn_number, &text),
            Change::Thought { turn_number, text } => stream_into(&mut self.thinking, turn_number, &text),
            Change::Notice(notice) => self.notice = notice,
            Change::ReplyNotice(notice) => {
                let session = self.replying_in.clone().or_else(|| self.current.clone());
                self.notice = notice.map(|n| n.about(session));
            }
            Change::Task(task) => upsert_task(&mut self.tasks, task),
            Change::Approval(approval) => self.approval = Some(approval),
            Change::SessionsChanged { deleted } => {
                if let Some(id) = deleted {
                    self.sessions.retain(|x| x.id != id);
                    if is_open(self.current.as_deref(), &id) {
                        self.current = None;
                        self.turns.clear();
                    }
                }
                self.sessions_stale += 1;
            }
            Change::Sync(state) => self.sync = state,
        }
    }
}

/// The conversation's signals: [`ChatView`]'s fields, and what the conversation, composer, sidebar
/// and panel show besides.
#[derive(Clone, Copy)]
pub struct ChatState {
    /// The session list, most recently active first.
    pub sessions: RwSignal<Vec<Session>>,
    /// The open session's id; `None`: a new conversation (the next message creates a session).
    pub current: RwSignal<Option<String>>,
    /// The open session's window of turns, in order.
    pub turns: RwSignal<Vec<Turn>>,
    /// The turn being streamed and its text so far.
    pub streaming: RwSignal<Option<(i64, String)>>,
    /// The turn being streamed and its reasoning so far, until the turn is saved finished.
    pub thinking: RwSignal<Option<(i64, String)>>,
    /// A reply of this tab is running (sending is disabled until it ends).
    pub busy: RwSignal<bool>,
    /// The session this tab's reply is written in (while `busy`); the user may open others meanwhile.
    pub replying_in: RwSignal<Option<String>>,
    /// The notice line; `None`: nothing to say.
    pub notice: RwSignal<Option<Notice>>,
    /// The composer's unsent text.
    pub draft: RwSignal<String>,
    /// Files attached in the composer, to send with the draft (`attachments.rs`).
    pub attachments: RwSignal<Vec<super::draft::PendingFile>>,
    /// Where the open session's conversation branches (edits and regenerations), in turn order.
    pub branches: RwSignal<Vec<cowork_core::BranchPoint>>,
    /// The user turn being edited in place, if any.
    pub editing: RwSignal<Option<i64>>,
    /// A tool call waiting for the user's yes or no (the approval dialog shows it).
    pub approval: RwSignal<Option<Approval>>,
    /// The model settings replies are sent with (as saved in Settings).
    pub settings: RwSignal<ModelSettings>,
    /// The turn to scroll to and mark (after opening a search hit).
    pub focus_turn: RwSignal<Option<i64>>,
    /// "1.2 MB of 9.8 GB used": the browser's storage estimate.
    pub usage: RwSignal<String>,
    /// Bumped whenever the session list changed elsewhere (rename, fork, archive, delete, import).
    pub sessions_stale: RwSignal<u64>,
    /// Where sync stands (the header's status).
    pub sync: RwSignal<crate::protocol::SyncState>,
    /// The sidebar's filter text.
    pub filter: RwSignal<String>,
    /// Whether archived sessions are listed too.
    pub show_archived: RwSignal<bool>,
    /// Delegated tasks of this tab's replies, with their live checklists (newest last).
    pub tasks: RwSignal<Vec<LiveTask>>,
    /// Whether the conversation follows its end as turns arrive (the user has not scrolled away).
    pub stick_to_end: RwSignal<bool>,
    /// A page of older or newer turns is being loaded.
    pub loading_more: RwSignal<bool>,
    /// The workspace new sessions go to.
    pub workspace: RwSignal<String>,
    /// The open session as last read, and the manifest of its last model request.
    pub details: RwSignal<Option<(Session, Option<cowork_core::ContextManifest>)>>,
    /// What the screen reader's live region says: this tab's last finished reply, set once when it
    /// is saved (never per delta; see `format::announcement`).
    pub announced: RwSignal<String>,
}

impl ChatState {
    /// Empty: no sessions, nothing open, default settings, the default workspace.
    pub fn new() -> ChatState {
        ChatState {
            sessions: RwSignal::new(Vec::new()),
            current: RwSignal::new(None),
            turns: RwSignal::new(Vec::new()),
            streaming: RwSignal::new(None),
            thinking: RwSignal::new(None),
            busy: RwSignal::new(false),
            replying_in: RwSignal::new(None),
            notice: RwSignal::new(None),
            draft: RwSignal::new(String::new()),
            attachments: RwSignal::new(Vec::new()),
            branches: RwSignal::new(Vec::new()),
            editing: RwSignal::new(None),
            approval: RwSignal::new(None),
            settings: RwSignal::new(ModelSettings::default()),
            focus_turn: RwSignal::new(None),
            usage: RwSignal::new(String::new()),
            sessions_stale: RwSignal::new(0),
            sync: RwSignal::new(crate::protocol::SyncState::Off),
            filter: RwSignal::new(String::new()),
            show_archived: RwSignal::new(false),
            tasks: RwSignal::new(Vec::new()),
            stick_to_end: RwSignal::new(true),
            loading_more: RwSignal::new(false),
            workspace: RwSignal::new(DEFAULT_WORKSPACE.to_owned()),
            details: RwSignal::new(None),
            announced: RwSignal::new(String::new()),
        }
    }

    /// The conversation state the app provided as context.
    ///
    /// # Panics
    /// Outside the app (or a test that did not `provide_context` one): a bug.
    pub fn get() -> ChatState {
        expect_context::<ChatState>()
    }

    /// Leaving a session (another opened, or a new conversation): the app's notice goes; a reply's
    /// stays with its session, shown again when that session is open.
    pub fn leave_notice(&self) {
        self.notice.update(|n| {
            if n.as_ref().is_some_and(|n| n.session.is_none()) {
                *n = None;
            }
        });
    }

    /// Shows an error, or a plain note, in the notice line.
    pub fn tell(&self, notice: Notice) {
        self.notice.set(Some(notice));
    }

    /// Applies one progress event to the screen (see the module's design note).
    pub fn apply_event(&self, request: u64, event: &Event) {
        for change in reduce(request, event) {
            self.apply(change);
        }
    }

    /// Applies one change to the one signal it names.
    pub fn apply(&self, change: Change) {
        match change {
            Change::Opened(session) => {
                self.current.set(Some(session.id.clone()));
                // A first message's session, or an edit's branch: where the reply is written.
                if self.busy.get_untracked() {
                    self.replying_in.set(Some(session.id.clone()));
                }
                self.sessions.update(|s| open_first(s, &session));
            }
            Change::Listed(session) => self.sessions.update(|s| list_once(s, &session)),
            Change::Shown(turn) => {
                if self.streaming.with_untracked(|s| s.as_ref().is_some_and(|(n, _)| *n == turn.turn_number)) {
                    self.streaming.update(|s| restart_stream(s, &turn));
                }
                if self.thinking.with_untracked(|s| s.as_ref().is_some_and(|(n, _)| *n == turn.turn_number)) {
                    self.thinking.update(|s| settle_thinking(s, &turn));
                }
                if is_open(self.current.get_untracked().as_deref(), &turn.session_id) {
                    self.turns.update(|t| window::show_turn(t, &turn));
                }
            }
            Change::Touched(turn) => self.sessions.update(|s| touch_session(s, &turn)),
            Change::DraftSaved => {
                self.draft.set(String::new());
                self.attachments.update(|a| super::draft::drop_pending(a, |p| !p.sending));
            }
            Change::Streamed { turn_number, text } => self.streaming.update(|s| stream_into(s, turn_number, &text)),
            Change::Thought { turn_number, text } => self.thinking.update(|s| stream_into(s, turn_number, &text)),
            Change::Notice(notice) => self.notice.set(notice),
            Change::ReplyNotice(notice) => {
                let session = self.replying_in.get_untracked().or_else(|| self.current.get_untracked());
                self.notice.set(notice.map(|n| n.about(session)));
            }
            Change::Task(task) => self.tasks.update(|t| upsert_task(t, task)),
            Change::Approval(approval) => self.approval.set(Some(approval)),
            Change::SessionsChanged { deleted } => {
                if let Some(id) = deleted {
                    self.sessions.update(|s| s.retain(|x| x.id != id));
                    if is_open(self.current.get_untracked().as_deref(), &id) {
                        self.current.set(None);
                        self.turns.set(Vec::new());
                    }
                }
                self.sessions_stale.update(|n| *n += 1);
            }
            Change::Sync(state) => self.sync.set(state),
        }
    }
}

impl Default for ChatState {
    fn default() -> Self {
        ChatState::new()
    }
}

/// What is open around the conversation, and what the dialogs show.
#[derive(Clone, Copy)]
pub struct DialogState {
    /// The Settings dialog is open.
    pub settings_open: RwSignal<bool>,
    /// What "Test connection" found ("Connected: …", or what to fix).
    pub connection: RwSignal<Option<String>>,
    /// The search dialog is open.
    pub search_open: RwSignal<bool>,
    /// The last search's results, best first.
    pub hits: RwSignal<Vec<SearchHit>>,
    /// The Storage dialog is open.
    pub storage_open: RwSignal<bool>,
    /// The last archive check's result ("ok", or what is wrong).
    pub integrity: RwSignal<Option<String>>,
    /// The session whose actions menu is open.
    pub menu: RwSignal<Option<String>>,
    /// The session being renamed in place.
    pub renaming: RwSignal<Option<String>>,
    /// The session waiting for the user to confirm its deletion.
    pub confirm_delete: RwSignal<Option<(Session, Vec<String>)>>,
    /// Phone width: whether the session list is shown instead of the conversation.
    pub sidebar_open: RwSignal<bool>,
    /// The session panel (state register and context meter) is shown.
    pub panel_open: RwSignal<bool>,
    /// The workspace settings dialog is open, on these settings as loaded from the archive.
    pub workspace: RwSignal<Option<cowork_core::WorkspaceSettings>>,
    /// Why the workspace settings could not be loaded or saved.
    pub workspace_error: RwSignal<Option<String>>,
    /// The keyboard shortcut sheet is open.
    pub shortcuts_open: RwSignal<bool>,
    /// The section Settings shows.
    pub settings_section: RwSignal<super::settings_dialog::SettingsSection>,
    /// Why the last search failed (shown with Retry); `None` after one that worked.
    pub search_error: RwSignal<Option<String>>,
    /// An attachment's image shown full size: its blob URL and its name.
    pub lightbox: RwSignal<Option<(String, String)>>,
}

impl DialogState {
    /// Everything closed, nothing shown.
    pub fn new() -> DialogState {
        DialogState {
            settings_open: RwSignal::new(false),
            connection: RwSignal::new(None),
            search_open: RwSignal::new(false),
            hits: RwSignal::new(Vec::new()),
            storage_open: RwSignal::new(false),
            integrity: RwSignal::new(None),
            menu: RwSignal::new(None),
            renaming: RwSignal::new(None),
            confirm_delete: RwSignal::new(None),
            workspace: RwSignal::new(None),
            workspace_error: RwSignal::new(None),
            shortcuts_open: RwSignal::new(false),
            settings_section: RwSignal::new(Default::default()),
            search_error: RwSignal::new(None),
            lightbox: RwSignal::new(None),
            sidebar_open: RwSignal::new(false),
            panel_open: RwSignal::new(false),
        }
    }

    /// The dialog state the app provided as context.
    ///
    /// # Panics
    /// Outside the app (or a test that did not `provide_context` one): a bug.
    pub fn get() -> DialogState {
        expect_context::<DialogState>()
    }

    /// Opens Settings at one of its sections.
    pub fn open_settings(&self, section: super::settings_dialog::SettingsSection) {
        self.connection.set(None);
        self.settings_section.set(section);
        self.settings_open.set(true);
    }

    /// Esc: closes whatever dialog or menu is open.
    pub fn close_all(&self) {
        self.shortcuts_open.set(false);
        self.search_open.set(false);
        self.settings_open.set(false);
        self.storage_open.set(false);
        self.workspace.set(None);
        self.menu.set(None);
        self.confirm_delete.set(None);
        self.lightbox.set(None);
        self.panel_open.set(false);
    }

    /// Whether a dialog or menu is open (Esc then closes it rather than stopping a reply).
    pub fn any_open(&self) -> bool {
        self.shortcuts_open.get_untracked()
            || self.search_open.get_untracked()
            || self.settings_open.get_untracked()
            || self.storage_open.get_untracked()
            || self.workspace.with_untracked(Option::is_some)
            || self.menu.with_untracked(Option::is_some)
            || self.confirm_delete.with_untracked(Option::is_some)
            || self.lightbox.with_untracked(Option::is_some)
            || self.panel_open.get_untracked()
    }
}

impl Default for DialogState {
    fn default() -> Self {
        DialogState::new()
    }
}

#[cfg(test)]
mod tests;
