//! The chat screens: sidebar (sessions grouped by workspace, filter, per-session menu), conversation
//! (tool cards, recall look-ups, delegated tasks as live checklists), composer, search (Ctrl/Cmd+K),
//! session panel, approval, Settings (with the workspace and sync sections) and delete dialogs. They talk to the archive (and, through it, to
//! the model) only via the storage worker's client, through the callbacks the app gives them.
//!
//! - `modal.rs`: the one modal every dialog is ([`Modal`]): focus in, Tab trapped, the page behind
//!   inert, Esc and a click outside close, focus back to the opener.
//! - `state.rs`: the state as data ([`ChatView`]), the reducer of the worker's events, and the
//!   signals it is applied to ([`ChatState`], [`DialogState`]), provided as Leptos context.
//! - `window.rs`: the bounded window of turns and its paging (pure).
//! - `stream.rs`: the reply being streamed, drawn per frame and block by block.
//! - `format.rs`: sizes, times, highlights, the context meter's figures, the fix for an error (pure).
//! - `thinking.rs`: the streaming reply's reasoning, live.
//! - `providers.rs`: the open session's profile and model ([`Providers`]) and the header's
//!   [`ModelPicker`]; `settings_dialog.rs`: Settings, the provider profiles; `turn_model.rs`: the
//!   model's label on a reply.
//! - `sidebar.rs`, `conversation.rs`, `composer.rs`, `panel.rs`, `dialogs.rs`, `workspace.rs`,
//!   `shortcuts.rs` (the keys and their sheet), `branches.rs` (edit, regenerate, and switching between
//!   the versions they make), `attachments.rs` (files in the composer, images and files on turns),
//!   `message_actions.rs` (the icon row under each message): the components; `icons.rs`: their
//!   inline SVG icons.

mod attachments;
mod branches;
mod composer;
mod conversation;
mod dialogs;
mod draft;
mod format;
mod icons;
mod message_actions;
mod modal;
mod panel;
mod providers;
mod settings_dialog;
mod shortcuts;
mod sidebar;
mod state;
mod stream;
mod thinking;
mod turn_model;
mod window;
mod workspace;

#[cfg(test)]
mod test_data;

pub use branches::{BranchActions, BranchButton, BranchSwitch, EditBox};
pub use composer::{Composer, NoticeLine};
pub use conversation::{Conversation, TaskCards};
pub use dialogs::{ApprovalDialog, DeleteDialog, SearchDialog};
pub use draft::{drop_pending, previewable, refusal, PendingFile};
pub(crate) use format::utc_date;
pub use format::{
    announcement, clip_for_display, compact, context_meter, duration_text, fix_for, full_time, highlight_pieces,
    human_bytes, relative_time, session_matches, when, workspace_order, workspaces, Fix, Meter, When, ANNOUNCED_CHARS,
    DISPLAY_CHARS,
};
pub use modal::Modal;
pub use panel::SessionPanel;
pub use providers::{follow_session, ModelList, ModelPicker, Providers};
pub use settings_dialog::{SettingsDialog, SettingsSection};
pub use shortcuts::{shortcut_for, Press, Shortcut, ShortcutsDialog, SHEET};
pub use sidebar::{ExportFormat, SessionAction, Sidebar};
pub use state::{reduce, Approval, Change, ChatState, ChatView, DialogState, LiveTask, Notice};
pub use stream::StreamText;
pub use thinking::ThinkingLive;
pub use turn_model::{turn_model, TurnModel};
pub use window::{load_turns_op, merge_page, page_op, show_turn};
pub use workspace::{OpenWorkspace, WorkspaceSection};

/// The most turns the conversation holds in the DOM at once, however long the session.
pub const VISIBLE_TURNS: usize = 200;
/// How many turns opening a session loads (its end, or around the turn a search hit names).
pub const OPEN_TURNS: usize = 100;
/// How many turns scrolling past either edge of the window loads.
pub const PAGE_TURNS: usize = 50;
/// The workspace new sessions go to until the user picks one.
pub const DEFAULT_WORKSPACE: &str = "default";
