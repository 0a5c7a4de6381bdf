//! What the buttons do: calls into the storage worker, results written into the chat and dialog
//! state. Natively (tests of the rest of the app) there is no worker: the client answers that it is
//! unavailable (`client.rs`), so they do nothing.

pub use browser::*;

thread_local! {
    /// Searches started so far (see `Actions::search`).
    static SEARCHES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

mod browser {
    use crate::app::Client;
    use crate::chat::{
        announcement, load_turns_op, ChatState, DialogState, ModelList, Notice, Providers, SessionAction,
    };
    use crate::client::StorageClient;
    use crate::protocol::{ops, Details, SendOutcome, Sent};
    use leptos::prelude::*;
    use leptos::task::spawn_local;

    /// Runs `task` for as long as the state it writes to lives: when a mounted UI is removed mid-task
    /// (`unmount()`, its signals disposed), the task is dropped at its next await instead of reading a
    /// disposed signal (which panics).
    fn spawn_while(state: impl IsDisposed + 'static, task: impl std::future::Future<Output = ()> + 'static) {
        let mut task = Box::pin(task);
        spawn_local(std::future::poll_fn(move |cx| {
            if state.is_disposed() {
                return std::task::Poll::Ready(());
            }
            task.as_mut().poll(cx)
        }));
    }

    fn client(c: Client) -> Option<StorageClient> {
        c.with_value(|c| c.clone())
    }

    /// Deletes sessions `ids` in that order, up to the first that cannot be.
    async fn delete_sessions(client: &StorageClient, ids: Vec<String>) -> Result<(), crate::client::StorageError> {
        for session_id in ids {
            client.call(ops::DeleteSession { session_id }).await?;
        }
        Ok(())
    }

    pub async fn refresh_sessions(client: &StorageClient, chat: ChatState) {
        let include_archived = chat.show_archived.get_untracked();
        match client.call(ops::ListSessions { workspace: None, include_archived }).await {
            Ok(sessions) => chat.sessions.set(sessions),
            Err(e) => chat.tell(Notice::problem(&e.problem())),
        }
    }

    async fn load_session(client: &StorageClient, chat: ChatState, id: &str, around: Option<i64>) {
        let sessions = chat.sessions.get_untracked();
        let Some(session) = sessions.iter().find(|s| s.id == id) else { return };
        match client.call(load_turns_op(session, around)).await {
            Ok(turns) => chat.turns.set(turns),
            Err(e) => chat.tell(Notice::problem(&e.problem())),
        }
    }

    pub fn open_session(c: Client, chat: ChatState, id: String, turn: Option<i64>) {
        let Some(client) = client(c) else { return };
        chat.current.set(Some(id.clone()));
        chat.leave_notice();
        chat.focus_turn.set(turn);
        chat.stick_to_end.set(turn.is_none());
        chat.editing.set(None);
        chat.branches.set(Vec::new());
        load_branches(c, chat);
        spawn_while(chat.current, async move {
            load_session(&client, chat, &id, turn).await;
            if let Some(n) = turn {
                // Let the list render, then bring the hit into view.
                leptos::task::tick().await;
                let selector = format!(".turn[data-turn=\"{n}\"]");
                if let Some(el) = crate::dom::query(&selector) {
                    el.scroll_into_view();
                }
            }
        });
    }

    pub fn search(c: Client, dialogs: DialogState, text: String) {
        let Some(client) = client(c) else { return };
        if text.trim().is_empty() {
            dialogs.hits.set(Vec::new());
            return;
        }
        // Search-as-you-type: an answer to an earlier keystroke that comes back after a later one's
        // (a search by meaning first embeds its query) is dropped.
        let generation = super::SEARCHES.with(|n| {
            n.set(n.get() + 1);
            n.get()
        });
        spawn_while(dialogs.search_open, async move {
            let query = cowork_core::SearchQuery {
                limit: 20,
                prefix_last: true,
                ..cowork_core::SearchQuery::new(text.clone(), cowork_core::SearchScope::All)
            };
            let answer = client.call(ops::Search { query }).await;
            if super::SEARCHES.with(|n| n.get()) != generation {
                return;
            }
            match answer {
                Ok(hits) => {
                    dialogs.search_error.set(None);
                    dialogs.hits.set(hits);
                }
                Err(e) => dialogs.search_error.set(Some(e.problem().message)),
            }
        });
    }

    /// Sends the draft and the composer's files (a message may be files alone).
    pub fn send(c: Client, chat: ChatState, providers: Providers) {
        let text = chat.draft.get_untracked();
        if text.trim().is_empty() && chat.attachments.with_untracked(Vec::is_empty) {
            return;
        }
        run(c, chat, providers, Ask::Send(text));
    }

    /// Runs the loop again from the session's end (after an interrupted or failed reply).
    pub fn retry(c: Client, chat: ChatState, providers: Providers) {
        run(c, chat, providers, Ask::Continue);
    }

    /// Sends `text` instead of user message `turn_number`, as a new branch (the original stays).
    pub fn edit_message(c: Client, chat: ChatState, providers: Providers, turn_number: i64, text: String) {
        if text.trim().is_empty() {
            return;
        }
        chat.editing.set(None);
        run(c, chat, providers, Ask::Edit { turn_number, text });
    }

    /// Answers again in place of reply `turn_number`, as a new branch (the original stays).
    pub fn regenerate(c: Client, chat: ChatState, providers: Providers, turn_number: i64) {
        run(c, chat, providers, Ask::Regenerate { turn_number });
    }

    /// Reads where the open session branches (after opening it, and after each reply).
    pub fn load_branches(c: Client, chat: ChatState) {
        let Some(client) = client(c) else { return };
        let Some(session_id) = chat.current.get_untracked() else {
            chat.branches.set(Vec::new());
            return;
        };
        spawn_while(chat.current, async move {
            if let Ok(points) = client.call(ops::Branches { session_id: session_id.clone() }).await {
                if chat.current.get_untracked().as_deref() == Some(session_id.as_str()) {
                    chat.branches.set(points);
                }
            }
        });
    }

    /// What a model run is asked to do.
    enum Ask {
        /// Send the composer's message.
        Send(String),
        /// Continue the session from its end (Retry).
        Continue,
        /// Send an edited user message as a new branch.
        Edit { turn_number: i64, text: String },
        /// Answer a reply again as a new branch.
        Regenerate { turn_number: i64 },
    }

    fn run(c: Client, chat: ChatState, providers: Providers, ask: Ask) {
        if chat.busy.get_untracked() {
            return;
        }
        let Some(client) = client(c) else {
            chat.tell(Notice::info("Storage is not available, so the message cannot be saved."));
            return;
        };
        // Offline, a new message is saved (the model is asked when Retry is pressed, back online); the
        // other asks need the model now.
        let offline = !window().navigator().on_line();
        if offline && !matches!(ask, Ask::Send(_)) {
            chat.tell(Notice::info(
                "You are offline: the model cannot be asked until the connection is back. \
                 Reading and searching your sessions work offline.",
            ));
            return;
        }
        chat.busy.set(true);
        chat.replying_in.set(chat.current.get_untracked());
        chat.notice.set(None);
        chat.tasks.update(|t| t.retain(|t| !t.is_over()));
        request_persistence();
        let mut files = match &ask {
            Ask::Send(_) => crate::app::attach::take_for_send(chat),
            _ => Vec::new(),
        };
        spawn_while(chat.current, async move {
            if let Ask::Edit { turn_number, .. } = &ask {
                // An edit keeps the files the message carried.
                match crate::app::attach::files_of_turn(&client, chat, *turn_number).await {
                    Ok(f) => files = f,
                    Err(e) => {
                        chat.tell(Notice::info(format!("The message's attachments could not be read: {e}")));
                        return chat.busy.set(false);
                    }
                }
            }
            let model = crate::settings::trimmed(&chat.settings.get_untracked());
            let choice = providers.choice.get_untracked();
            let host = client.host_options();
            // The draft is cleared when the worker reports the user's turn saved (`Change::DraftSaved`), so
            // a failure before that keeps it, and a new draft typed meanwhile is never touched.
            let result = match (ask, chat.current.get_untracked()) {
                (Ask::Send(text), session_id) => {
                    let key = crate::protocol::random_key();
                    let workspace = chat.workspace.get_untracked();
                    let attachments = Vec::new();
                    let message = ops::Outgoing { text, model, key, host, attachments };
                    let send = ops::SendMessage { session_id, workspace, message, offline };
                    client.call_with_attachments(send, &files).await
                }
                (Ask::Continue, Some(session_id)) => client.call(ops::Continue { session_id, model, host }).await,
                (Ask::Edit { turn_number, text }, Some(session_id)) => {
                    let key = crate::protocol::random_key();
                    let attachments = Vec::new();
                    let message = ops::Outgoing { text, model, key, host, attachments };
                    let edit = ops::EditMessage { session_id, turn_number, message };
                    client.call_with_attachments(edit, &files).await
                }
                (Ask::Regenerate { turn_number }, Some(session_id)) => {
                    client.call(ops::Regenerate { session_id, turn_number, model, host }).await
                }
                (_, None) => {
                    chat.busy.set(false);
                    return;
                }
            };
            crate::app::attach::settle(chat);
            if let Ok(Sent { session_id, .. }) = &result {
                crate::settings::remember_choice(session_id, &choice);
            }
            // How the reply ended is about its session: shown there, not in another opened meanwhile.
            let about = match &result {
                Ok(Sent { session_id, .. }) => Some(session_id.clone()),
                Err(_) => chat.replying_in.get_untracked(),
            };
            match &result {
                Ok(Sent { outcome: SendOutcome::Offline, .. }) => chat.tell(
                    Notice::info(
                        "You are offline: your message is saved. Press Retry for the reply when the connection \
                         is back. Reading and searching your sessions work offline.",
                    )
                    .about(about),
                ),
                Ok(Sent { outcome, .. }) if *outcome != SendOutcome::Done => {
                    chat.tell(Notice::info(format!("Reply {}", outcome.describe())).about(about))
                }
                Ok(_) => chat.notice.set(None),
                Err(e) => chat.tell(Notice::problem(&e.problem()).about(about)),
            }
            refresh_sessions(&client, chat).await;
            if let Some(id) = chat.current.get_untracked() {
                load_session(&client, chat, &id, None).await;
            }
            if matches!(result, Ok(Sent { outcome: SendOutcome::Done, .. })) {
                chat.announced.set(chat.turns.with_untracked(|t| announcement(t)).unwrap_or_default());
            }
            refresh_usage(chat).await;
            chat.streaming.set(None);
            chat.thinking.set(None);
            chat.busy.set(false);
            load_branches(c, chat);
        });
    }

    /// The saved profiles (or the earlier single settings, or the demo).
    pub fn load_profiles() -> crate::settings::Profiles {
        crate::settings::load_profiles()
    }

    /// The user picked a profile and model: the next message goes there, and the open session keeps it.
    pub fn choose(chat: ChatState, providers: Providers, choice: crate::settings::Choice) {
        if let Some(id) = chat.current.get_untracked() {
            crate::settings::remember_choice(&id, &choice);
        }
        providers.choice.set(choice);
    }

    /// Asks the profile's endpoint for its models; the picker shows the list, or why there is none.
    pub fn list_models(c: Client, providers: Providers, profile: String) {
        let Some(client) = client(c) else { return };
        let choice = crate::settings::Choice { profile: profile.clone(), model: String::new() };
        let Some(model) = providers.profiles.with_untracked(|p| p.settings_for(&choice)) else { return };
        providers.lists.update(|l| {
            l.insert(profile.clone(), ModelList::Loading);
        });
        spawn_while(providers.lists, async move {
            let list = match client.call(ops::ListModels { model }).await {
                Ok(models) => ModelList::Listed(models),
                Err(e) => ModelList::Failed(e.problem().message),
            };
            providers.lists.update(|l| {
                l.insert(profile, list);
            });
        });
    }

    /// Loads the page of turns before (`older`) or after the window, keeping what the user looks at
    /// where it is on screen.
    pub fn load_more(c: Client, chat: ChatState, older: bool) {
        use wasm_bindgen::JsCast;
        if chat.loading_more.get_untracked() || chat.busy.get_untracked() {
            return;
        }
        let Some(client) = client(c) else { return };
        let Some(id) = chat.current.get_untracked() else { return };
        let Some(session) = chat.sessions.get_untracked().into_iter().find(|s| s.id == id) else { return };
        let Some(op) = chat.turns.with_untracked(|w| crate::chat::page_op(&session, w, older)) else { return };
        chat.loading_more.set(true);
        spawn_while(chat.current, async move {
            let page = client.call(op).await;
            if let Err(e) = &page {
                let side = if older { "earlier" } else { "later" };
                let text = format!("Could not load {side} turns: {}. Scroll again to retry.", e.problem().message);
                chat.tell(Notice::info(text));
            }
            if let Ok(turns) = page {
                if chat.current.get_untracked().as_deref() == Some(id.as_str()) {
                    // Anchor: a turn that stays in the window; after the change it is put back where it was.
                    let anchor =
                        chat.turns.with_untracked(|w| if older { w.first() } else { w.last() }.map(|t| t.turn_number));
                    let list = crate::dom::query(".turns");
                    let top_of = |n: i64| {
                        crate::dom::query(&format!(".turn[data-turn=\"{n}\"]"))
                            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
                            .map(|e| e.offset_top())
                    };
                    let before = anchor.and_then(top_of);
                    chat.turns.update(|w| crate::chat::merge_page(w, turns, older, crate::chat::VISIBLE_TURNS));
                    leptos::task::tick().await;
                    if let (Some(list), Some(before), Some(after)) = (list, before, anchor.and_then(top_of)) {
                        list.set_scroll_top(list.scroll_top() + after - before);
                    }
                }
            }
            chat.loading_more.set(false);
        });
    }

    pub fn load_details(c: Client, chat: ChatState, session_id: Option<String>) {
        let Some(session_id) = session_id else {
            chat.details.set(None);
            return;
        };
        let Some(client) = client(c) else { return };
        spawn_while(chat.current, async move {
            if let Ok(Details { session, manifest }) = client.call(ops::SessionDetails { session_id }).await {
                chat.details.set(Some((session, manifest)));
            }
        });
    }

    pub fn test_connection(c: Client, dialogs: DialogState, settings: crate::settings::ModelSettings) {
        let Some(client) = client(c) else { return };
        dialogs.connection.set(Some("Testing…".into()));
        spawn_while(dialogs.connection, async move {
            let text = match client.call(ops::TestConnection { model: crate::settings::trimmed(&settings) }).await {
                Ok(text) => text,
                Err(e) => e.to_string(),
            };
            dialogs.connection.set(Some(text));
        });
    }

    pub fn cancel_task(c: Client, chat: ChatState, task_id: String) {
        let Some(client) = client(c) else { return };
        let orchestrator_url = chat.settings.get_untracked().orchestrator_url.trim().to_owned();
        spawn_while(chat.current, async move {
            if let Err(e) = client.call(ops::CancelTask { task_id, orchestrator_url }).await {
                chat.tell(Notice::problem(&e.problem()));
            }
        });
    }

    /// Approves or rejects a step the orchestrator holds for approval.
    pub fn answer_step(c: Client, chat: ChatState, task_id: String, subtask_id: String, approved: bool) {
        let Some(client) = client(c) else { return };
        let orchestrator_url = chat.settings.get_untracked().orchestrator_url.trim().to_owned();
        spawn_while(chat.current, async move {
            if let Err(e) = client.call(ops::AnswerStep { task_id, subtask_id, approved, orchestrator_url }).await {
                chat.tell(Notice::problem(&e.problem()));
            }
        });
    }

    pub fn reload_sessions(c: Client, chat: ChatState) {
        let Some(client) = client(c) else { return };
        spawn_while(chat.current, async move { refresh_sessions(&client, chat).await });
    }

    /// Rename, fork, export, archive or delete a session (deleting asks first).
    pub fn session_action(c: Client, chat: ChatState, dialogs: DialogState, action: SessionAction) {
        let Some(client) = client(c) else { return };
        if let SessionAction::Delete { id, versions, confirmed: false } = &action {
            let session = chat.sessions.get_untracked().into_iter().find(|s| &s.id == id);
            dialogs.confirm_delete.set(session.map(|s| (s, versions.clone())));
            return;
        }
        if let SessionAction::Export { id, format } = &action {
            return crate::app::transfer::export(c, chat, Some(id.clone()), *format);
        }
        spawn_while(chat.current, async move {
            let (done, what) = match &action {
                SessionAction::Rename { id, title } => {
                    let rename = ops::RenameSession { session_id: id.clone(), title: title.clone() };
                    (client.call(rename).await.map(drop), "rename the session")
                }
                SessionAction::Fork { id, at_turn } => {
                    match client.call(ops::ForkSession { session_id: id.clone(), at_turn: *at_turn }).await {
                        Ok(fork) => {
                            refresh_sessions(&client, chat).await;
                            return open_session(c, chat, fork.id, None);
                        }
                        Err(e) => (Err(e), "fork the session"),
                    }
                }
                SessionAction::Export { .. } => return, // downloaded above
                SessionAction::Archive { id, archived } => {
                    let archive = ops::ArchiveSession { session_id: id.clone(), archived: *archived };
                    (client.call(archive).await, "archive the session")
                }
                SessionAction::Delete { versions, .. } => {
                    // The whole conversation (a fork of its own stays).
                    let ids =
                        chat.sessions.with_untracked(|all| cowork_core::conversations::deletion_order(all, versions));
                    (delete_sessions(&client, ids).await, "delete the session")
                }
            };
            match done {
                Ok(()) => {
                    if let SessionAction::Archive { id, archived: true } = &action {
                        if chat.current.get_untracked().as_deref() == Some(id.as_str())
                            && !chat.show_archived.get_untracked()
                        {
                            chat.current.set(None);
                            chat.turns.set(Vec::new());
                        }
                    }
                }
                Err(e) => chat.tell(Notice::problem_in(&format!("Could not {what}"), &e.problem())),
            }
        });
    }

    /// Keeps the profiles (in this browser, unless they are an embedding page's) and closes Settings.
    pub fn save_profiles(chat: ChatState, dialogs: DialogState, providers: Providers, p: crate::settings::Profiles) {
        if providers.persistent {
            if let Err(e) = crate::settings::save_profiles(&p) {
                chat.tell(Notice::info(e));
                return;
            }
        }
        super::apply_profiles(chat, providers, p);
        dialogs.settings_open.set(false);
    }

    /// Opens the workspace settings dialog on `workspace`'s settings as the archive holds them.
    pub fn open_workspace(c: Client, dialogs: DialogState, workspace: String) {
        let Some(client) = client(c) else { return };
        dialogs.workspace_error.set(None);
        spawn_while(dialogs.workspace, async move {
            match client.call(ops::WorkspaceSettings { workspace: workspace.clone() }).await {
                Ok(settings) => dialogs.workspace.set(Some(settings)),
                Err(e) => dialogs.workspace_error.set(Some(e.problem().message)),
            }
        });
    }

    /// Saves the workspace settings dialog's values; the dialog closes once they are archived.
    pub fn save_workspace(c: Client, dialogs: DialogState, settings: cowork_core::WorkspaceSettings) {
        let Some(client) = client(c) else { return };
        spawn_while(dialogs.workspace, async move {
            match client.call(ops::SaveWorkspaceSettings { settings }).await {
                Ok(_) => dialogs.workspace.set(None),
                Err(e) => dialogs.workspace_error.set(Some(format!("Not saved: {}", e.problem().message))),
            }
        });
    }

    pub fn approve(c: Client, call_id: String, approved: bool) {
        if let Some(client) = client(c) {
            spawn_local(async move {
                let _ = client.call(ops::Approve { call_id, approved }).await;
            });
        }
    }

    /// Downloads the whole archive as `cowork-archive-<date>.jsonl`.
    pub fn export_all(c: Client, chat: ChatState) {
        crate::app::transfer::export(c, chat, None, crate::chat::ExportFormat::Jsonl);
    }

    /// Reads the browser's storage estimate: the space used, for the header.
    pub async fn refresh_usage(chat: ChatState) {
        use wasm_bindgen_futures::JsFuture;
        let Some(storage) = web_sys::window().map(|w| w.navigator().storage()) else { return };
        let get = |obj: &wasm_bindgen::JsValue, key: &str| {
            js_sys::Reflect::get(obj, &key.into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0)
        };
        let estimate = match storage.estimate() {
            Ok(p) => JsFuture::from(p).await.ok(),
            Err(_) => None,
        };
        // Whether the browser may clear it under storage pressure is said once, by the banner
        // (`pressure.rs`), not here in the header.
        let text = match estimate {
            Some(e) => format!(
                "{} of {} used",
                crate::chat::human_bytes(get(&e, "usage")),
                crate::chat::human_bytes(get(&e, "quota"))
            ),
            None => String::new(),
        };
        chat.usage.set(text);
    }

    /// Asks the browser to keep the archive even under storage pressure (once, at the first send).
    fn request_persistence() {
        if let Some(storage) = web_sys::window().map(|w| w.navigator().storage()) {
            if let Ok(p) = storage.persist() {
                spawn_local(async move {
                    let _ = wasm_bindgen_futures::JsFuture::from(p).await;
                });
            }
        }
    }

    /// Runs SQLite's integrity check over the whole archive and shows its verdict.
    pub fn check_archive(c: Client, dialogs: DialogState) {
        let Some(client) = client(c) else { return };
        dialogs.integrity.set(Some("checking…".into()));
        spawn_while(dialogs.search_open, async move {
            let verdict = match client.call(ops::IntegrityCheck).await {
                Ok(text) => text,
                Err(e) => e.to_string(),
            };
            dialogs.integrity.set(Some(verdict));
        });
    }

    pub fn stop(c: Client) {
        if let Some(client) = client(c) {
            spawn_local(async move {
                let _ = client.call(ops::Stop).await;
            });
        }
    }
}

/// Saved profiles take effect: model lists are asked again, a new conversation takes the default.
fn apply_profiles(chat: crate::chat::ChatState, providers: crate::chat::Providers, p: crate::settings::Profiles) {
    use leptos::prelude::*;
    if chat.current.get_untracked().is_none() {
        providers.choice.set(p.default_choice());
    }
    providers.lists.set(Default::default());
    providers.profiles.set(p);
}
