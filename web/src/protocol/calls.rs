//! Each operation paired with what it gets back: the one place where a [`Reply`] is built or taken
//! apart.
//!
//! An operation's type ([`super::ops`]) implements [`Call`], whose `Reply` is the plain value the caller
//! gets (`StorageClient::call(ops::ListSessions { … })` resolves to `Vec<Session>`), and the worker
//! answers it through the same pairing (`c.answer(…)` takes only that type). So asking for one thing
//! and reading another does not compile; the wire's [`Reply`] enum is matched here and nowhere else.

use super::ops::{self, Op};
use super::{ImportReport, SendOutcome, SyncState};
use cowork_core::context::ContextMessage;
use cowork_core::{ContextManifest, SearchHit, Session, StorageStats, TaskRecord, Turn};
use serde::{Deserialize, Serialize};

/// A successful answer, as it travels: one variant per kind of result.
///
/// Externally tagged (`{"sessions":{…}}`), as is [`WorkerMessage`](super::WorkerMessage): serde reads
/// an internal tag by buffering the whole message first, code that cost the app's wasm tens of KB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// The archive's counts and size ([`ops::Stats`]).
    Stats {
        /// Row counts and the database's size.
        stats: StorageStats,
    },
    /// An attachment's bytes ([`ops::ReadAttachment`]).
    Attachment(AttachmentData),
    /// The sessions listed ([`ops::ListSessions`]).
    Sessions {
        /// Most recently active first.
        sessions: Vec<Session>,
    },
    /// The session created, renamed or forked.
    Session {
        /// The session as stored now.
        session: Session,
    },
    /// The turn appended ([`ops::AppendTurn`]).
    Turn {
        /// The turn as stored (or as saved before, for a repeated client key).
        turn: Turn,
    },
    /// A page of turns ([`ops::GetTurns`]).
    Turns {
        /// In turn order; fewer than asked at the session's end.
        turns: Vec<Turn>,
    },
    /// Search results ([`ops::Search`]).
    Hits {
        /// The matching turns, best first.
        hits: Vec<SearchHit>,
    },
    /// A text result: an export, a recall, an integrity verdict, an import's or a connection test's summary.
    Text {
        /// The text.
        text: String,
    },
    /// How a reply ended, and in which session.
    Sent(Sent),
    /// A session and its last request's manifest ([`ops::SessionDetails`]).
    Details(Details),
    /// Everything to continue a session ([`ops::Resume`]).
    Resumed(Resumed),
    /// The next request's context ([`ops::AssembleContext`]).
    Context(NextContext),
    /// A workspace's settings ([`ops::WorkspaceSettings`], [`ops::SaveWorkspaceSettings`]).
    Workspace {
        /// The settings as stored now.
        settings: cowork_core::WorkspaceSettings,
    },
    /// Where sync stands ([`ops::SyncStart`], [`ops::SyncStatus`]).
    Sync {
        /// The state now.
        state: SyncState,
    },
    /// Where recall by meaning stands ([`ops::SemanticStatus`], [`ops::SetSemantic`]).
    Semantic {
        /// The state now.
        state: super::SemanticState,
    },
    /// Where a session's conversation branches ([`ops::Branches`]).
    Branches {
        /// In turn order; empty when it was never edited or regenerated.
        points: Vec<cowork_core::BranchPoint>,
    },
    /// Done, with nothing to return.
    Done,
    /// What an import would add ([`ops::PreviewImport`]).
    ImportPreview {
        /// The files' formats and the counts; nothing is written yet.
        report: ImportReport,
    },
    /// What an import added ([`ops::ImportFiles`]).
    Imported {
        /// The files' formats, the counts, and the new sessions' ids.
        report: ImportReport,
    },
    /// The models an endpoint lists ([`ops::ListModels`]), in its order.
    Models {
        /// Each model's id and, when the endpoint gives one, its display name.
        models: Vec<cowork_core::provider::ListedModel>,
    },
}

/// An attachment's bytes, in base64 (`cowork_core::attachment::from_base64`;
/// `StorageClient::read_attachment` decodes it), and how a turn that carries it describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttachmentData {
    /// Its name, type and size where a turn carries it (`None` if no turn does any more).
    pub attachment: Option<cowork_core::Attachment>,
    /// The exact bytes, standard base64.
    pub data: String,
}

/// How a reply ([`ops::SendMessage`], [`ops::Continue`], an edit, a regeneration) ended, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sent {
    /// The session answered (the new one, if the message created it).
    pub session_id: String,
    /// How the reply ended.
    pub outcome: SendOutcome,
}

/// A session and its last request's manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Details {
    /// The session, with its state register.
    pub session: Session,
    /// What went into its last model request; `None`: no request was made yet.
    pub manifest: Option<ContextManifest>,
}

/// Everything to continue a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resumed {
    /// The session.
    pub session: Session,
    /// Its last turns, in order.
    pub turns: Vec<Turn>,
    /// Its delegated tasks not yet finished.
    pub pending_tasks: Vec<TaskRecord>,
}

/// The context the agent loop would send next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextContext {
    /// The messages the model would be sent, in order.
    pub messages: Vec<ContextMessage>,
    /// What went into them and what was left out.
    pub manifest: ContextManifest,
    /// Turns of the session left out of the window (only in the archive).
    pub archived_turns: i64,
    /// The tool definitions offered with it (OpenAI function format).
    pub tools: Vec<serde_json::Value>,
}

/// An operation and what it gets back.
pub trait Call: Sized {
    /// What the worker answers it with.
    type Reply;
    /// The operation as it travels.
    fn into_op(self) -> Op;
    /// Its reply as it travels (the worker's side).
    fn wrap(reply: Self::Reply) -> Reply;
    /// Its reply out of the wire's [`Reply`] (the caller's side); `None` when the worker sent another
    /// kind, which only a worker of another build could do.
    fn unwrap(reply: Reply) -> Option<Self::Reply>;

    /// The worker's answer to this operation: a result of its reply type, for the wire.
    fn answer<E>(&self, result: Result<Self::Reply, E>) -> Result<Reply, E> {
        result.map(Self::wrap)
    }

    /// The function that wraps this operation's reply, taken before the operation is moved apart.
    fn replies(&self) -> fn(Self::Reply) -> Reply {
        Self::wrap
    }
}

/// `call!(Type => ReplyType, Variant { field })`, `call!(Type => Variant(ReplyType))` or
/// `call!(Type => ())`; `unit` before the type for an operation without fields.
macro_rules! call {
    (@impl $kind:ident $op:ident => $reply:ty, $variant:ident { $field:ident }) => {
        impl Call for ops::$op {
            type Reply = $reply;
            fn into_op(self) -> Op {
                call!(@into $kind $op, self)
            }
            fn wrap(reply: $reply) -> Reply {
                Reply::$variant { $field: reply }
            }
            fn unwrap(reply: Reply) -> Option<$reply> {
                match reply {
                    Reply::$variant { $field } => Some($field),
                    _ => None,
                }
            }
        }
    };
    (@impl $kind:ident $op:ident => $variant:ident($reply:ty)) => {
        impl Call for ops::$op {
            type Reply = $reply;
            fn into_op(self) -> Op {
                call!(@into $kind $op, self)
            }
            fn wrap(reply: $reply) -> Reply {
                Reply::$variant(reply)
            }
            fn unwrap(reply: Reply) -> Option<$reply> {
                match reply {
                    Reply::$variant(r) => Some(r),
                    _ => None,
                }
            }
        }
    };
    (@impl $kind:ident $op:ident => ()) => {
        impl Call for ops::$op {
            type Reply = ();
            fn into_op(self) -> Op {
                call!(@into $kind $op, self)
            }
            fn wrap((): ()) -> Reply {
                Reply::Done
            }
            fn unwrap(reply: Reply) -> Option<()> {
                matches!(reply, Reply::Done).then_some(())
            }
        }
    };
    (@into unit $op:ident, $call:tt) => {{
        let _ = $call;
        Op::$op
    }};
    (@into fields $op:ident, $call:tt) => {
        Op::$op($call)
    };
    (unit $op:ident => $($rest:tt)*) => {
        call!(@impl unit $op => $($rest)*);
    };
    ($op:ident => $($rest:tt)*) => {
        call!(@impl fields $op => $($rest)*);
    };
}

call!(unit Stats => StorageStats, Stats { stats });
call!(SyncStart => SyncState, Sync { state });
call!(unit SyncStatus => SyncState, Sync { state });
call!(unit SemanticStatus => super::SemanticState, Semantic { state });
call!(SetSemantic => super::SemanticState, Semantic { state });
call!(ListSessions => Vec<Session>, Sessions { sessions });
call!(CreateSession => Session, Session { session });
call!(AppendTurn => Turn, Turn { turn });
call!(GetTurns => Vec<Turn>, Turns { turns });
call!(Search => Vec<SearchHit>, Hits { hits });
call!(unit IntegrityCheck => String, Text { text });
call!(SendMessage => Sent(Sent));
call!(ReadAttachment => Attachment(AttachmentData));
call!(Continue => Sent(Sent));
call!(Resume => Resumed(Resumed));
call!(Recall => String, Text { text });
call!(AssembleContext => Context(NextContext));
call!(unit ExportAll => String, Text { text });
call!(ExportSession => String, Text { text });
call!(Import => String, Text { text });
call!(WorkspaceSettings => cowork_core::WorkspaceSettings, Workspace { settings });
call!(SaveWorkspaceSettings => cowork_core::WorkspaceSettings, Workspace { settings });
call!(RenameSession => Session, Session { session });
call!(ForkSession => Session, Session { session });
call!(ArchiveSession => ());
call!(DeleteSession => ());
call!(TestConnection => String, Text { text });
call!(SessionDetails => Details(Details));
call!(CancelTask => ());
call!(Branches => Vec<cowork_core::BranchPoint>, Branches { points });
call!(EditMessage => Sent(Sent));
call!(Regenerate => Sent(Sent));
call!(AnswerStep => ());
call!(unit Stop => ());
call!(Approve => ());
call!(ToolResult => ());
call!(unit Release => ());
call!(PreviewImport => ImportReport, ImportPreview { report });
call!(ImportFiles => ImportReport, Imported { report });
call!(ExportChatGpt => String, Text { text });
call!(ExportMarkdown => String, Text { text });
call!(ListModels => Vec<cowork_core::provider::ListedModel>, Models { models });
