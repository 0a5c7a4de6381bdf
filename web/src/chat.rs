//! The chat screens: the session sidebar, the conversation, and the composer. They talk to the
//! archive (and, through it, to the model) only via the storage worker's client.

use crate::protocol::{Event, Op, Reply};
use crate::settings::{validate, Settings};
use cowork_core::{Role, SearchHit, Session, Turn, TurnStatus};
use leptos::prelude::*;

/// How many of a session's newest turns the conversation shows (the DOM stays bounded).
pub const VISIBLE_TURNS: usize = 200;
/// The workspace new sessions go to until the user picks one.
pub const DEFAULT_WORKSPACE: &str = "default";

/// Everything the chat screens share.
#[derive(Clone, Copy)]
pub struct ChatState {
    pub sessions: RwSignal<Vec<Session>>,
    pub current: RwSignal<Option<String>>,
    pub turns: RwSignal<Vec<Turn>>,
    /// The turn being streamed and its text so far.
    pub streaming: RwSignal<Option<(i64, String)>>,
    pub busy: RwSignal<bool>,
    pub notice: RwSignal<Option<String>>,
    pub draft: RwSignal<String>,
    pub settings: RwSignal<Settings>,
    pub settings_open: RwSignal<bool>,
    /// A tool call waiting for the user's yes or no: (call id, tool name, arguments).
    pub approval: RwSignal<Option<(String, String, String)>>,
    pub search_open: RwSignal<bool>,
    pub hits: RwSignal<Vec<SearchHit>>,
    /// The turn to scroll to and mark (after opening a search hit).
    pub focus_turn: RwSignal<Option<i64>>,
    /// Phone width: whether the session list is shown instead of the conversation.
    pub sidebar_open: RwSignal<bool>,
    /// "1.2 MB of 9.8 GB used · kept" — the browser's storage estimate and persistence.
    pub usage: RwSignal<String>,
    pub storage_open: RwSignal<bool>,
    /// The last archive check's result ("ok", or what is wrong).
    pub integrity: RwSignal<Option<String>>,
}

impl ChatState {
    pub fn new() -> ChatState {
        ChatState {
            sessions: RwSignal::new(Vec::new()),
            current: RwSignal::new(None),
            turns: RwSignal::new(Vec::new()),
            streaming: RwSignal::new(None),
            busy: RwSignal::new(false),
            notice: RwSignal::new(None),
            draft: RwSignal::new(String::new()),
            settings: RwSignal::new(Settings::default()),
            settings_open: RwSignal::new(false),
            approval: RwSignal::new(None),
            search_open: RwSignal::new(false),
            hits: RwSignal::new(Vec::new()),
            focus_turn: RwSignal::new(None),
            sidebar_open: RwSignal::new(false),
            usage: RwSignal::new(String::new()),
            storage_open: RwSignal::new(false),
            integrity: RwSignal::new(None),
        }
    }
}

impl Default for ChatState {
    fn default() -> Self {
        ChatState::new()
    }
}

/// The sidebar: New session and the sessions, most recent first.
#[component]
pub fn Sidebar(state: ChatState, on_open: Callback<String>, on_new: Callback<()>) -> impl IntoView {
    view! {
        <nav class="sidebar" class:open=move || state.sidebar_open.get() aria-label="Sessions">
            <button class="new-session" on:click=move |_| on_new.run(())>"+ New session"</button>
            <Show
                when=move || !state.sessions.get().is_empty()
                fallback=|| view! { <p class="sidebar-empty">"No sessions yet. Say hello to start one."</p> }
            >
                <ul class="session-list">
                    <For
                        each=move || state.sessions.get()
                        key=|s| (s.id.clone(), s.turn_count, s.title.clone())
                        children=move |s: Session| {
                            let id = s.id.clone();
                            let active = {
                                let id = id.clone();
                                move || state.current.get().as_deref() == Some(id.as_str())
                            };
                            let title = if s.title.is_empty() { "Untitled session".to_owned() } else { s.title.clone() };
                            view! {
                                <li>
                                    <button class="session" class:active=active on:click=move |_| on_open.run(id.clone())>
                                        <span class="session-title">{title}</span>
                                        <span class="session-meta">
                                            {format!("{} · {} turns", s.workspace, s.turn_count)}
                                        </span>
                                    </button>
                                </li>
                            }
                        }
                    />
                </ul>
            </Show>
        </nav>
    }
}

/// One turn of the conversation, rendered as text (never as HTML).
#[component]
fn TurnView(turn: Turn, state: ChatState) -> impl IntoView {
    let n = turn.turn_number;
    let role = turn.role.as_str();
    let status = turn.status;
    let stored = turn.content.clone();
    let text = move || match state.streaming.get() {
        Some((s, text)) if s == n => text,
        _ => stored.clone(),
    };
    let calls: Vec<_> = turn
        .tool_calls
        .iter()
        .map(|c| {
            let label = if c.name == "conversation_recall" {
                let q = c.arguments_json().and_then(|v| v["query"].as_str().map(str::to_owned));
                match q {
                    Some(q) => format!("Searched the archive for \u{201c}{q}\u{201d}"),
                    None => "Looked in the archive".to_owned(),
                }
            } else {
                format!("Called {}", c.name)
            };
            view! { <div class="tool-call"><span class="tool-label">{label}</span><code>{c.arguments.clone()}</code></div> }
        })
        .collect();
    let body = if turn.role == Role::Tool {
        let name = turn.tool_name.clone().unwrap_or_else(|| "tool".into());
        view! {
            <details class="tool-result">
                <summary>{format!("Result of {name}")}</summary>
                <pre>{turn.content.clone()}</pre>
            </details>
        }
        .into_any()
    } else if turn.role == Role::Assistant {
        // Sanitised Markdown (see crate::markdown): message text never becomes markup of its own.
        view! { <div class="turn-text markdown" inner_html=move || crate::markdown::render(&text())></div> }.into_any()
    } else {
        view! { <div class="turn-text">{text}</div> }.into_any()
    };
    let badge = match status {
        TurnStatus::Complete => None,
        TurnStatus::Interrupted => Some(view! { <span class="badge interrupted">"interrupted"</span> }),
        TurnStatus::Error => Some(view! { <span class="badge error">"error"</span> }),
    };
    view! {
        <article class="turn" class:focused=move || state.focus_turn.get() == Some(n) data-role=role data-turn=n>
            <header class="turn-head"><span class="who">{role}</span>{badge}</header>
            {body}
            {calls}
        </article>
    }
}

/// The conversation pane and the composer.
#[component]
pub fn Conversation(
    state: ChatState,
    on_send: Callback<()>,
    on_stop: Callback<()>,
    /// Retry/Continue after an interrupted or failed reply.
    on_retry: Callback<()>,
) -> impl IntoView {
    let can_retry = move || {
        !state.busy.get()
            && state.turns.with(|t| {
                t.last().is_some_and(|t| t.role == Role::User || (t.role == Role::Assistant && t.status != TurnStatus::Complete))
            })
    };
    let send_on_enter = move |ev: web_sys::KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            on_send.run(());
        }
    };
    view! {
        <main class="conversation">
            <div class="turns" aria-live="polite">
                <Show when=move || state.turns.get().is_empty()>
                    <div class="welcome">
                        <h2>"A workspace that never forgets"</h2>
                        <p>"Every message is kept verbatim in this browser and can be searched at any time."</p>
                    </div>
                </Show>
                <For
                    each=move || state.turns.get()
                    key=|t| (t.id, t.status, t.content.len())
                    children=move |t: Turn| view! { <TurnView turn=t state=state /> }
                />
            </div>
            <Show when=can_retry>
                <div class="retry-bar">
                    <span>"The last reply did not complete."</span>
                    <button class="retry" on:click=move |_| on_retry.run(())>"Retry"</button>
                </div>
            </Show>
            {move || state.notice.get().map(|n| view! { <div class="notice" role="alert">{n}</div> })}
            <form class="composer" on:submit=move |ev| { ev.prevent_default(); on_send.run(()); }>
                <label class="visually-hidden" for="composer-input">"Message"</label>
                <textarea
                    id="composer-input"
                    rows="3"
                    placeholder="Message Cowork (Enter sends, Shift+Enter for a new line)"
                    prop:value=move || state.draft.get()
                    on:input=move |ev| state.draft.set(event_target_value(&ev))
                    on:keydown=send_on_enter
                ></textarea>
                <Show
                    when=move || state.busy.get()
                    fallback=move || view! {
                        <button type="submit" class="send" disabled=move || state.draft.get().trim().is_empty()>"Send"</button>
                    }
                >
                    <button type="button" class="stop" on:click=move |_| on_stop.run(())>"Stop"</button>
                </Show>
            </form>
        </main>
    }
}

/// Applies one progress event to the screen.
pub fn apply_event(state: ChatState, request: u64, event: &Event) {
    if request == 0 {
        return apply_change(state, event);
    }
    match event {
        Event::SessionCreated { session } => {
            state.current.set(Some(session.id.clone()));
            state.sessions.update(|s| {
                s.retain(|x| x.id != session.id);
                s.insert(0, session.clone())
            });
        }
        Event::TurnAppended { turn } => {
            if turn.role == Role::User {
                state.draft.set(String::new()); // saved: the draft has done its job
            }
            if state.current.get_untracked().as_deref() == Some(turn.session_id.as_str()) {
                state.turns.update(|turns| {
                    turns.retain(|t| t.turn_number != turn.turn_number);
                    turns.push(turn.clone());
                    let excess = turns.len().saturating_sub(VISIBLE_TURNS);
                    turns.drain(..excess);
                });
            }
        }
        Event::Delta { turn_number, text } => state.streaming.update(|s| match s {
            Some((n, acc)) if n == turn_number => acc.push_str(text),
            _ => *s = Some((*turn_number, text.clone())),
        }),
        Event::ToolStarted { name, .. } => state.notice.set(Some(format!("Running {name}…"))),
        Event::ToolFinished { .. } => state.notice.set(None),
        Event::Retrying { wait_ms, reason, .. } => {
            state.notice.set(Some(format!("{reason} Retrying in {} s…", wait_ms.div_ceil(1000))))
        }
        Event::TaskProgress { task_id, event_type, status } => {
            state.notice.set(Some(format!("Delegated task {task_id}: {} ({status})", event_type.replace('_', " "))))
        }
        Event::ApprovalNeeded { call_id, name, arguments } => {
            state.approval.set(Some((call_id.clone(), name.clone(), arguments.clone())))
        }
        Event::Error { message } => state.notice.set(Some(message.clone())),
    }
}

/// A change made elsewhere (another tab): show the turn if its session is open, and keep the session
/// list current. Never touches this tab's draft, selection or notices.
fn apply_change(state: ChatState, event: &Event) {
    match event {
        Event::SessionCreated { session } => state.sessions.update(|s| {
            if !s.iter().any(|x| x.id == session.id) {
                s.insert(0, session.clone());
            }
        }),
        Event::TurnAppended { turn } => {
            if state.current.get_untracked().as_deref() == Some(turn.session_id.as_str()) {
                state.turns.update(|turns| {
                    turns.retain(|t| t.turn_number != turn.turn_number);
                    turns.push(turn.clone());
                    turns.sort_by_key(|t| t.turn_number);
                    let excess = turns.len().saturating_sub(VISIBLE_TURNS);
                    turns.drain(..excess);
                });
            }
            state.sessions.update(|s| {
                if let Some(i) = s.iter().position(|x| x.id == turn.session_id) {
                    let mut session = s.remove(i);
                    session.turn_count = session.turn_count.max(turn.turn_number);
                    session.last_active_at = session.last_active_at.max(turn.created_at);
                    if session.title.is_empty() && turn.role == Role::User {
                        session.title = turn.content.lines().next().unwrap_or_default().chars().take(80).collect();
                    }
                    s.insert(0, session);
                }
            });
        }
        _ => {}
    }
}

/// Whether a reply means the turn list should be reloaded.
pub fn turns_of(reply: &Reply) -> Option<Vec<Turn>> {
    match reply {
        Reply::Turns { turns } => Some(turns.clone()),
        _ => None,
    }
}

/// The operation that loads the visible turns of a session: its newest, or those around `around`.
pub fn load_turns_op(session: &Session, around: Option<i64>) -> Op {
    let offset = match around {
        Some(n) => (n as usize).saturating_sub(VISIBLE_TURNS / 2 + 1),
        None => (session.turn_count as usize).saturating_sub(VISIBLE_TURNS),
    };
    Op::GetTurns { session_id: session.id.clone(), offset, limit: VISIBLE_TURNS }
}

/// Splits a snippet into (text, is_match) pieces at the highlight byte ranges.
pub fn highlight_pieces(snippet: &str, highlights: &[(usize, usize)]) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut at = 0;
    for &(a, b) in highlights {
        let (a, b) = (a.min(snippet.len()), b.min(snippet.len()));
        if a < at || a >= b || !snippet.is_char_boundary(a) || !snippet.is_char_boundary(b) {
            continue;
        }
        if a > at {
            out.push((snippet[at..a].to_owned(), false));
        }
        out.push((snippet[a..b].to_owned(), true));
        at = b;
    }
    if at < snippet.len() {
        out.push((snippet[at..].to_owned(), false));
    }
    out
}

/// Ctrl/Cmd+K: full-text search across every session; Enter or a click opens the hit.
#[component]
pub fn SearchDialog(state: ChatState, on_query: Callback<String>, on_open: Callback<(String, i64)>) -> impl IntoView {
    let selected = RwSignal::new(0usize);
    let open_selected = move || {
        if let Some(h) = state.hits.get_untracked().get(selected.get_untracked()) {
            on_open.run((h.session_id.clone(), h.turn_number));
        }
    };
    let numbered_hits = move || state.hits.get().into_iter().enumerate().collect::<Vec<_>>();
    let hit_key = |pair: &(usize, SearchHit)| (pair.0, pair.1.turn_id);
    let stop_click = |ev: web_sys::MouseEvent| ev.stop_propagation();
    let on_input = move |ev: web_sys::Event| {
        selected.set(0);
        on_query.run(event_target_value(&ev));
    };
    let on_key = move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
        "Escape" => state.search_open.set(false),
        "ArrowDown" => {
            ev.prevent_default();
            let last = state.hits.get_untracked().len().saturating_sub(1);
            selected.update(|i| *i = (*i + 1).min(last));
        }
        "ArrowUp" => {
            ev.prevent_default();
            selected.update(|i| *i = i.saturating_sub(1));
        }
        "Enter" => {
            ev.prevent_default();
            open_selected();
        }
        _ => {}
    };
    view! {
        <Show when=move || state.search_open.get()>
            <div class="overlay" on:click=move |_| state.search_open.set(false)>
                <div class="dialog search" role="dialog" aria-modal="true" aria-label="Search all sessions"
                    on:click=stop_click
                    on:keydown=on_key>
                    <input class="search-input" type="search" autofocus aria-label="Search all sessions"
                        placeholder="Search every session: words, exact phrases in quotes, identifiers, paths"
                        on:input=on_input />
                    <ul class="hits">
                        <For
                            each=numbered_hits
                            key=hit_key
                            children=move |pair: (usize, SearchHit)| {
                                let (i, h) = pair;
                                let pieces = highlight_pieces(&h.snippet, &h.highlights);
                                let title = if h.session_title.is_empty() { "Untitled session".to_owned() } else { h.session_title.clone() };
                                let (sid, n) = (h.session_id.clone(), h.turn_number);
                                view! {
                                    <li class="hit" class:selected=move || selected.get() == i
                                        on:click=move |_| on_open.run((sid.clone(), n))>
                                        <div class="hit-meta">{format!("{title} · turn {} · {}", h.turn_number, h.role)}</div>
                                        <div class="hit-snippet">
                                            {pieces.into_iter().map(|(t, m)| if m { view! { <mark>{t}</mark> }.into_any() } else { view! { <span>{t}</span> }.into_any() }).collect::<Vec<_>>()}
                                        </div>
                                    </li>
                                }
                            }
                        />
                    </ul>
                </div>
            </div>
        </Show>
    }
}

/// Asks the user whether a tool call (e.g. `delegate_task`) may run, showing what it would do.
#[component]
pub fn ApprovalDialog(state: ChatState, on_answer: Callback<(String, bool)>) -> impl IntoView {
    move || {
        state.approval.get().map(|(call_id, name, arguments)| {
            let args: serde_json::Value = serde_json::from_str(&arguments).unwrap_or_default();
            let goal = args["goal"].as_str().map(str::to_owned);
            let context = match &args["context"] {
                serde_json::Value::Null => None,
                serde_json::Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            };
            let (yes, no) = (call_id.clone(), call_id);
            let title = if name == "delegate_task" { "Delegate this task?".to_owned() } else { format!("Run {name}?") };
            view! {
                <div class="overlay">
                    <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="approval-title"
                        on:keydown=move |ev: web_sys::KeyboardEvent| if ev.key() == "Escape" { on_answer.run((no.clone(), false)) }>
                        <h2 id="approval-title">{title}</h2>
                        {match goal {
                            Some(goal) => view! { <p class="approval-goal"><strong>"Goal: "</strong>{goal}</p> }.into_any(),
                            None => view! { <pre class="approval-args">{arguments.clone()}</pre> }.into_any(),
                        }}
                        {context.map(|c| view! { <p class="approval-context"><strong>"Context: "</strong>{c}</p> })}
                        <div class="dialog-actions">
                            <button class="secondary" on:click={let no = yes.clone(); move |_| on_answer.run((no.clone(), false))}>"Deny"</button>
                            <button class="primary" autofocus on:click=move |_| on_answer.run((yes.clone(), true))>"Approve"</button>
                        </div>
                    </div>
                </div>
            }
        })
    }
}

/// The Settings dialog: model endpoint, API key, budget, orchestrator. Saved only when valid.
#[component]
pub fn SettingsDialog(state: ChatState, on_save: Callback<Settings>) -> impl IntoView {
    let draft = RwSignal::new(state.settings.get_untracked());
    let errors = RwSignal::new(Vec::new());
    Effect::new(move |_| {
        if state.settings_open.get() {
            draft.set(state.settings.get_untracked());
            errors.set(Vec::new());
        }
    });
    let error_for = move |field: &'static str| {
        move || errors.get().iter().find(|e: &&crate::settings::FieldError| e.field == field).map(|e| view! { <span class="field-error">{e.message.clone()}</span> })
    };
    let text = move |label: &'static str, field: &'static str, get: fn(&Settings) -> String, set: fn(&mut Settings, String), kind: &'static str| {
        view! {
            <label class="field">
                <span>{label}</span>
                <input type=kind prop:value=move || get(&draft.get()) on:input=move |ev| draft.update(|d| set(d, event_target_value(&ev))) />
                {error_for(field)}
            </label>
        }
    };
    let number = move |label: &'static str, field: &'static str, get: fn(&Settings) -> i64, set: fn(&mut Settings, i64)| {
        view! {
            <label class="field">
                <span>{label}</span>
                <input type="number" prop:value=move || get(&draft.get()).to_string()
                    on:input=move |ev| draft.update(|d| set(d, event_target_value(&ev).trim().parse().unwrap_or(0))) />
                {error_for(field)}
            </label>
        }
    };
    let save = move |_| {
        let d = draft.get_untracked();
        let problems = validate(&d);
        if problems.is_empty() {
            on_save.run(d);
        } else {
            errors.set(problems);
        }
    };
    view! {
        <Show when=move || state.settings_open.get()>
            <div class="overlay">
                <div class="dialog settings" role="dialog" aria-modal="true" aria-labelledby="settings-title"
                    on:keydown=move |ev: web_sys::KeyboardEvent| if ev.key() == "Escape" { state.settings_open.set(false) }>
                    <h2 id="settings-title">"Settings"</h2>
                    <label class="field">
                        <span>"Endpoint kind"</span>
                        <select prop:value=move || draft.get().kind on:change=move |ev| draft.update(|d| d.kind = event_target_value(&ev))>
                            <option value="openai">"OpenAI-compatible (OpenAI, Ollama, vLLM, LM Studio, OpenRouter…)"</option>
                            <option value="anthropic">"Anthropic"</option>
                        </select>
                        {error_for("kind")}
                    </label>
                    {text("Base URL", "base_url", |s| s.base_url.clone(), |s, v| s.base_url = v, "url")}
                    {text("Model", "model", |s| s.model.clone(), |s, v| s.model = v, "text")}
                    {text("API key (kept in this browser only, never exported)", "api_key", |s| s.api_key.clone(), |s, v| s.api_key = v, "password")}
                    {number("Context window (tokens)", "context_window", |s| s.context_window, |s, v| s.context_window = v)}
                    {number("Output reserve (tokens)", "output_reserve", |s| s.output_reserve, |s, v| s.output_reserve = v)}
                    {text("Orchestrator URL (empty: no delegation)", "orchestrator_url", |s| s.orchestrator_url.clone(), |s, v| s.orchestrator_url = v, "url")}
                    <div class="dialog-actions">
                        <button class="secondary" on:click=move |_| state.settings_open.set(false)>"Cancel"</button>
                        <button class="primary" on:click=save>"Save"</button>
                    </div>
                </div>
            </div>
        </Show>
    }
}

/// Bytes as a short human figure ("812 KB", "1.2 MB", "9.8 GB").
pub fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = bytes.max(0.0);
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 || v >= 100.0 { format!("{v:.0} {}", UNITS[unit]) } else { format!("{v:.1} {}", UNITS[unit]) }
}

#[cfg(test)]
mod tests {
    use super::{highlight_pieces, human_bytes};

    #[test]
    fn bytes_read_naturally() {
        let cases = [(0.0, "0 B"), (999.0, "999 B"), (1_234.0, "1.2 KB"), (812_000.0, "812 KB"), (9_800_000_000.0, "9.8 GB")];
        for (n, want) in cases {
            assert_eq!(human_bytes(n), want, "{n}");
        }
    }

    #[test]
    fn highlights_split_the_snippet() {
        let pieces = highlight_pieces("see rotate_refresh_token_v2 now", &[(4, 27)]);
        assert_eq!(pieces, [("see ".to_owned(), false), ("rotate_refresh_token_v2".to_owned(), true), (" now".to_owned(), false)]);
        // Out-of-range or mid-character ranges are ignored rather than panicking.
        assert_eq!(highlight_pieces("héllo", &[(2, 3), (9, 12)]), [("héllo".to_owned(), false)]);
    }
}
