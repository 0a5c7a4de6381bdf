//! The conversation pane: the window of turns (text, sanitised Markdown, a reply's collapsed
//! reasoning and its refusal badge, tool cards, recall look-ups),
//! following its end while the user is there and paging as they scroll; delegated tasks as live
//! checklists; the Retry bar; then the notice line and the composer (`composer.rs`). A user turn's
//! attachments (`attachments.rs`) show below its text; files dropped on the pane are attached.

use super::attachments::{BlobUrls, Lightbox, TurnAttachments};
use super::branches::{BranchSwitch, EditBox};
use super::composer::{Composer, NoticeLine};
use super::format::{
    clip_for_display, code_pieces, duration_text, human_bytes, is_refused, reasoning_of, thinking_summary,
    DISPLAY_CHARS,
};
use super::icons::{icon, Icon};
use super::message_actions::MessageActions;
use super::sidebar::SessionAction;
use super::state::{ChatState, LiveTask};
use super::stream::{StreamText, StreamingTurn};
use super::thinking::ThinkingLive;
use super::turn_model::TurnModel;
use cowork_core::{Role, Turn, TurnStatus};
use leptos::prelude::*;

/// One turn of the conversation, rendered as text (never as HTML).
#[component]
fn TurnView(turn: Turn, on_action: Callback<SessionAction>) -> impl IntoView {
    let state = ChatState::get();
    let n = turn.turn_number;
    let role = turn.role.as_str();
    let status = turn.status;
    let stored = turn.content.clone();
    // Very long content (a 10 MB tool output, a pasted log) is shown clipped until "Show all".
    let expanded = RwSignal::new(false);
    let long = turn.content.len() > DISPLAY_CHARS;
    let size = turn.content.len();
    // The saved text; a reply being streamed is drawn by `StreamText` instead (see stream.rs).
    let text = move || match expanded.get() {
        true => stored.clone(),
        false => clip_for_display(&stored, DISPLAY_CHARS).to_owned(),
    };
    let show_all = move || {
        (long && !expanded.get()).then(|| {
            view! {
                <button class="show-all" on:click=move |_| expanded.set(true)>
                    {format!("Show all ({})", human_bytes(size as f64))}
                </button>
            }
        })
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
            // `data-call`: where the page's MCP host shows a running call's progress (web/mcp/host.mjs).
            view! {
                <div class="tool-call" data-call=c.id.clone()>
                    <span class="tool-label">{label}</span>
                    <code>{c.arguments.clone()}</code>
                </div>
            }
        })
        .collect();
    let attached =
        (!turn.attachments.is_empty()).then(|| view! { <TurnAttachments attachments=turn.attachments.clone() /> });
    let body = if turn.role == Role::Tool {
        // An MCP tool's images and files are shown at once.
        let open = attached.is_some();
        let name = turn.tool_name.clone().unwrap_or_else(|| "tool".into());
        let failed = turn.metadata.get("success").and_then(|v| v.as_bool()) == Some(false);
        let took = turn.metadata.get("duration_ms").and_then(|v| v.as_i64()).map(duration_text);
        let needs_directory = turn.metadata.get("needs").and_then(|v| v.as_str())
            == Some(cowork_core::orchestrator::NEEDS_ORCHESTRATOR_DIRECTORY);
        view! {
            <details class="tool-result" class:failed=failed open=open>
                <summary>
                    {format!("Result of {name}")}
                    {took.map(|t| view! { <span class="tool-meta">{format!(" · {t}")}</span> })}
                    {failed.then(|| view! { <span class="badge error">"failed"</span> })}
                </summary>
                <pre>{text}</pre>
                {show_all}
                {attached}
            </details>
            {needs_directory.then(set_directory_button)}
        }
        .into_any()
    } else if turn.role == Role::Assistant {
        // The model's reasoning, collapsed above the reply: plain text (model output never becomes markup).
        // While the reply streams, its reasoning so far, live and open (`thinking.rs`).
        let thinking = match reasoning_of(&turn.metadata) {
            Some(r) => Some(
                view! {
                    <details class="thinking">
                        <summary>{thinking_summary(r)}</summary>
                        <div class="thinking-text">{r.to_owned()}</div>
                    </details>
                }
                .into_any(),
            ),
            None if status == TurnStatus::Interrupted => Some(view! { <ThinkingLive turn_number=n /> }.into_any()),
            None => None,
        };
        // Sanitised Markdown (see crate::markdown): message text never becomes markup of its own. Only
        // the turn being streamed reacts to deltas; a saved turn is rendered whole, once.
        let streaming = StreamingTurn::get();
        let live = status == TurnStatus::Interrupted;
        let markdown = move || match live && streaming.is(n) {
            true => view! { <StreamText turn_number=n /> }.into_any(),
            false => {
                let text = text.clone();
                // Its code blocks are coloured once they are in the page (and again after "Show all").
                let el = NodeRef::<leptos::html::Div>::new();
                Effect::new(move |_| {
                    expanded.track();
                    if let Some(el) = el.get() {
                        crate::highlight::highlight_within(&el);
                    }
                });
                view! { <div class="turn-text markdown" node_ref=el inner_html=move || crate::markdown::render(&text())></div> }
                    .into_any()
            }
        };
        view! {
            {thinking}
            {markdown}
            {show_all}
        }
        .into_any()
    } else {
        // Verbatim, its code in monospace (`format::code_pieces`).
        let shown = move || {
            let t = text();
            let pieces: Vec<_> = code_pieces(&t)
                .into_iter()
                .map(|(piece, code)| match code {
                    // A fenced block scrolls sideways on its own, so it takes the keyboard's focus.
                    true if piece.trim_start().starts_with("```") => view! {
                        <pre class="user-code" tabindex="0" role="group" aria-label="code">{piece.to_owned()}</pre>
                    }
                    .into_any(),
                    true => view! { <code class="user-code">{piece.to_owned()}</code> }.into_any(),
                    false => piece.to_owned().into_any(),
                })
                .collect();
            pieces
        };
        view! { <div class="turn-text">{shown}</div> {show_all} {attached} }.into_any()
    };
    // A reply is saved unfinished while it is written: "writing…" while this tab streams or thinks
    // into it (or waits for its first words), "interrupted" only once it has really ended short.
    let badge = match status {
        TurnStatus::Complete => None,
        TurnStatus::Interrupted => Some(view! { <ReplyBadge n=n /> }.into_any()),
        TurnStatus::Error => Some(view! { <span class="badge error">"error"</span> }.into_any()),
    };
    // Edit a message of the user's, or answer a reply again: both as a new version (a branch).
    let is_user = turn.role == Role::User;
    let original = turn.content.clone();
    let editing = move || is_user && state.editing.get() == Some(n);
    let refused = (turn.role == Role::Assistant && is_refused(&turn.metadata))
        .then(|| view! { <span class="badge refused" title="The model declined to answer">"refused"</span> });
    // Who speaks, at a glance: the user's turns are tinted bubbles on the right (their name is for
    // screen readers), the assistant's have its mark and name above text that runs the full width.
    let (who_class, who_name) = match turn.role {
        Role::User => ("who visually-hidden", "You"),
        Role::Assistant => ("who", "Assistant"),
        _ => ("who", role),
    };
    let avatar = (turn.role == Role::Assistant).then(|| view! { <span class="avatar">{icon(Icon::Assistant)}</span> });
    let who = view! { <span class=who_class>{avatar}{who_name}</span> };
    view! {
        <article class="turn" class:focused=move || state.focus_turn.get() == Some(n) data-role=role data-turn=n>
            <header class="turn-head">
                {who}
                <TurnModel metadata=turn.metadata.clone() />
                {refused}
                {badge}
                <BranchSwitch n=n />
            </header>
            <div class="turn-body" class:editing=editing>{body}</div>
            <Show when=editing>
                <EditBox n=n original=original.clone() />
            </Show>
            {calls}
            <MessageActions n=n role=turn.role content=turn.content.clone() on_action=on_action />
        </article>
    }
}

/// The badge of a reply saved unfinished: "writing…" while it is being written here, else
/// "interrupted".
#[component]
fn ReplyBadge(n: i64) -> impl IntoView {
    let state = ChatState::get();
    let streaming = StreamingTurn::get();
    // A memo: the deltas re-run it, but the badge changes only when the answer does.
    let writing = Memo::new(move |_| {
        let here = state.busy.get() && state.replying_in.get() == state.current.get();
        let last = state.turns.with(|t| t.last().is_some_and(|t| t.turn_number == n));
        let thinking = state.thinking.with(|t| t.as_ref().is_some_and(|(m, _)| *m == n));
        here && (last || thinking || streaming.is(n))
    });
    // One element whose words change (not two views: each view type costs the app's wasm its code).
    let (class, title, words) = (
        move || if writing.get() { "badge writing" } else { "badge interrupted" },
        move || {
            if writing.get() {
                "This reply is still being written"
            } else {
                "This reply ended before it was complete"
            }
        },
        move || if writing.get() { "writing…" } else { "interrupted" },
    );
    view! { <span class=class title=title>{words}</span> }
}

/// The conversation pane and the composer.
#[component]
pub fn Conversation(
    /// Send the draft.
    on_send: Callback<()>,
    /// Stop the reply.
    on_stop: Callback<()>,
    /// Retry/Continue after an interrupted or failed reply.
    on_retry: Callback<()>,
    /// Fork at a turn.
    on_action: Callback<SessionAction>,
    /// Cancel a delegated task (by id).
    on_cancel_task: Callback<String>,
    /// Approve (`true`) or reject a step a delegated task holds: (task id, step id, approved).
    on_answer_step: Callback<(String, String, bool)>,
    /// Load the page of turns before (`true`) or after the window.
    on_more: Callback<bool>,
    /// Attach files to the draft (picked, pasted or dropped on the conversation).
    on_files: Callback<Vec<web_sys::File>>,
) -> impl IntoView {
    let state = ChatState::get();
    let streaming = StreamingTurn::provide(state);
    BlobUrls::provide(state);
    // Files dragged over the conversation: a drop target is shown (and announced) until they are
    // dropped or leave.
    let dragging = RwSignal::new(false);
    let carries_files = |ev: &web_sys::DragEvent| {
        ev.data_transfer().is_some_and(|d| d.types().iter().any(|t| t.as_string().as_deref() == Some("Files")))
    };
    let drag_over = move |ev: web_sys::DragEvent| {
        if carries_files(&ev) {
            ev.prevent_default();
            dragging.set(true);
        }
    };
    let drag_leave = move |ev: web_sys::DragEvent| {
        // Leaving for a child of the conversation is not leaving it.
        let inside = ev
            .related_target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Node>(t).ok())
            .zip(ev.current_target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Node>(t).ok()))
            .is_some_and(|(to, main)| main.contains(Some(&to)));
        if !inside {
            dragging.set(false);
        }
    };
    let drop = move |ev: web_sys::DragEvent| {
        dragging.set(false);
        let files = super::composer::files_of(ev.data_transfer().and_then(|d| d.files()));
        if !files.is_empty() {
            ev.prevent_default();
            on_files.run(files);
        }
    };
    let list = NodeRef::<leptos::html::Div>::new();
    // The reply being written (the last turn, an assistant turn not saved complete) is drawn after the
    // box of settled turns, not in it: as it grows, frame after frame, the browser lays out the box
    // from its cache as one piece instead of going through every turn in view (BENCHMARKS.md, #17).
    let live = Memo::new(move |_| state.turns.with(|t| t.last().filter(|t| is_live(t)).map(turn_key)));
    // The settled turns go in runs of CHUNK by turn number (`.chunk`), so that skipping the earlier
    // ones while a reply streams skips a dozen boxes, not 200 (each skipped box is a paint layer the
    // browser visits every frame: BENCHMARKS.md, #17). A turn's run never changes.
    let settled = move |chunk: i64| {
        let live = live.get().is_some();
        state.turns.with(|t| settled_of(t, live).iter().filter(|t| chunk_of(t) == chunk).cloned().collect::<Vec<_>>())
    };
    let chunks = move || {
        let live = live.get().is_some();
        state.turns.with(|t| chunk_ids(settled_of(t, live)))
    };
    let live_turn = move || {
        live.get()?;
        let turn = state.turns.with_untracked(|t| t.last().cloned())?;
        Some(view! { <TurnView turn=turn on_action=on_action /> })
    };
    // While a reply streams or thinks at the end of a long conversation and the user is there, only the
    // last few settled turns are drawn (app.css `data-tail`): the earlier ones end more than a screen
    // above (checked when the reply starts) and stay skipped, at their size, until the user scrolls
    // away from the end, another session is shown or the reply is saved.
    let thinking = Memo::new(move |_| state.thinking.with(Option::is_some));
    let replying = Memo::new(move |_| streaming.active() || thinking.get());
    let tail = RwSignal::new(None::<usize>);
    Effect::new(move |_| {
        let following = replying.get() && live.get().is_some() && state.stick_to_end.get_untracked();
        tail.set(following.then(|| list.get_untracked().and_then(|l| tail_to_draw(&l))).flatten());
    });
    // Follow the end while the user is there: new turns stay in view (streamed text follows itself,
    // once per frame: stream.rs).
    Effect::new(move |_| {
        state.turns.track();
        state.thinking.track();
        if state.stick_to_end.get_untracked() {
            if let Some(el) = list.get_untracked() {
                el.set_scroll_top(el.scroll_height());
            }
        }
    });
    let on_scroll = move |_| {
        let Some(el) = list.get_untracked() else { return };
        let below = el.scroll_height() - el.scroll_top() - el.client_height();
        state.stick_to_end.set(below < 48);
        if below >= 48 && tail.get_untracked().is_some() {
            tail.set(None);
        }
        if el.scroll_top() < 400 {
            on_more.run(true);
        } else if below < 400 {
            on_more.run(false);
        }
    };
    let can_retry = move || {
        !state.busy.get()
            && state.turns.with(|t| {
                t.last().is_some_and(|t| {
                    t.role == Role::User || (t.role == Role::Assistant && t.status != TurnStatus::Complete)
                })
            })
    };
    view! {
        <main class="conversation" class:dragging=move || dragging.get() on:dragenter=drag_over on:dragover=drag_over
            on:dragleave=drag_leave on:drop=drop>
            <div class="drop-zone" role="status" aria-live="polite">
                {move || dragging.get().then_some("Drop the files to attach them to your message")}
            </div>
            // Not a live region: opening a session, paging, a streamed delta or a coloured code block
            // would be read out. The status below says each finished reply once.
            <div class="turns" data-tail=move || tail.get() node_ref=list on:scroll=on_scroll on:click=copy_code>
                <Show when=move || state.turns.get().is_empty()>
                    <div class="welcome">
                        <h2>"A workspace that never forgets"</h2>
                        <p>"Every message is kept verbatim in this browser and can be searched at any time."</p>
                    </div>
                </Show>
                <div class="settled">
                    <For
                        each=chunks
                        key=|c: &i64| *c
                        children=move |c: i64| {
                            view! {
                                <div class="chunk">
                                    <For
                                        each=move || settled(c)
                                        key=turn_key
                                        children=move |t: Turn| view! { <TurnView turn=t on_action=on_action /> }
                                    />
                                </div>
                            }
                        }
                    />
                </div>
                {live_turn}
            </div>
            <div class="visually-hidden reply-announcer" role="status" aria-live="polite" aria-atomic="true">
                {move || state.announced.get()}
            </div>
            <TaskCards on_cancel=on_cancel_task on_answer=on_answer_step />
            <Show when=can_retry>
                <div class="retry-bar">
                    <span>"The last reply did not complete."</span>
                    <button class="retry" on:click=move |_| on_retry.run(())>"Retry"</button>
                </div>
            </Show>
            <NoticeLine />
            <Composer on_send=on_send on_stop=on_stop on_files=on_files />
            <Lightbox />
        </main>
    }
}

/// The window's settled turns: all but the reply being written, when the last turn is one.
fn settled_of(turns: &[Turn], live: bool) -> &[Turn] {
    &turns[..turns.len() - usize::from(live)]
}

/// How many turns, by number, go in one `.chunk` of settled turns.
const CHUNK: i64 = 16;

/// The run of settled turns a turn is drawn in: turns 1–16 in the first, 17–32 in the second…
/// (numbers are unique along a conversation: forks continue their parent's numbering).
fn chunk_of(t: &Turn) -> i64 {
    (t.turn_number - 1).div_euclid(CHUNK)
}

/// The runs the turns (in conversation order) are drawn in, in order, each once.
fn chunk_ids(turns: &[Turn]) -> Vec<i64> {
    let mut ids: Vec<i64> = turns.iter().map(chunk_of).collect();
    ids.dedup();
    ids
}

/// How many of the last runs of settled turns may stay drawn while a reply is written at the end:
/// one rule each in app.css (`.turns[data-tail="1"]` …).
const TAILS: [usize; 4] = [1, 2, 3, 4];

/// The fewest last runs of settled turns (of [`TAILS`]) such that every run before them ends more
/// than a screen above the view; `None` when there is no such count (nothing is skipped then).
fn tail_to_draw(list: &web_sys::HtmlDivElement) -> Option<usize> {
    let far_above = list.get_bounding_client_rect().top() - f64::from(list.client_height());
    TAILS.into_iter().find(|k| {
        let before = list.query_selector(&format!(".settled > .chunk:nth-last-child({})", k + 1)).ok().flatten();
        before.is_some_and(|c| c.get_bounding_client_rect().bottom() < far_above)
    })
}

/// What identifies a turn's view: a turn saved again (finished, checkpointed) is drawn again.
fn turn_key(t: &Turn) -> (i64, TurnStatus, usize) {
    (t.id, t.status, t.content.len())
}

/// Whether a turn is a reply still being written (or left unfinished): drawn apart from the settled turns.
fn is_live(t: &Turn) -> bool {
    t.role == Role::Assistant && t.status == TurnStatus::Interrupted
}

/// A click on a code block's Copy button copies the block's text, exactly.
fn copy_code(ev: web_sys::MouseEvent) {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        let Some(button) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) else { return };
        if !button.class_list().contains("copy-code") {
            return;
        }
        // The block's text as written (coloured or not: the highlighter's spans hold the same text).
        let pre = button.closest(".code-block").ok().flatten().and_then(|b| b.query_selector("pre").ok().flatten());
        let code = pre.and_then(|pre| pre.text_content()).unwrap_or_default();
        let copied = window().navigator().clipboard().write_text(&code);
        leptos::task::spawn_local(async move {
            let done = wasm_bindgen_futures::JsFuture::from(copied).await.is_ok();
            button.set_text_content(Some(if done { "Copied" } else { "Copy failed" }));
        });
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = ev;
}

/// "Set the orchestrator directory": opens the open session's workspace settings (a delegation was
/// refused because that workspace has no directory).
fn set_directory_button() -> impl IntoView {
    let state = ChatState::get();
    let open = use_context::<super::OpenWorkspace>();
    let workspace = move || {
        let current = state.current.get_untracked();
        state.sessions.get_untracked().into_iter().find(|s| Some(&s.id) == current.as_ref()).map(|s| s.workspace)
    };
    view! {
        <button class="secondary set-orchestrator-dir" on:click=move |_| {
            if let (Some(open), Some(w)) = (open, workspace()) {
                open.0.run(w)
            }
        }>"Set the orchestrator directory"</button>
    }
}

/// Delegated tasks as live checklists: goal, status, each step as it goes, and Cancel while running.
#[component]
pub fn TaskCards(
    /// Cancel a task (by id).
    on_cancel: Callback<String>,
    /// Approve (`true`) or reject a step the orchestrator holds: (task id, step id, approved).
    on_answer: Callback<(String, String, bool)>,
) -> impl IntoView {
    let state = ChatState::get();
    view! {
        <For
            each=move || {
                // Each delegation's card shows in its own session only.
                let current = state.current.get();
                state.tasks.get().into_iter().filter(|t| Some(&t.session_id) == current.as_ref()).collect::<Vec<_>>()
            }
            key=|t| (t.task_id.clone(), t.status.clone(), t.checklist.clone())
            children=move |t: LiveTask| {
                let over = t.is_over();
                let id = t.task_id.clone();
                let cancel_id = id.clone();
                let steps: Vec<_> = t
                    .checklist
                    .iter()
                    .map(|i| {
                        let mark = match i.status.as_str() {
                            "completed" | "success" => "✓",
                            "failed" => "✗",
                            "running" | "started" | "retrying" => "●",
                            "skipped" | "cancelled" => "–",
                            _ => "○",
                        };
                        view! {
                            <li class="task-step" data-status=i.status.clone()>
                                <span class="mark" aria-hidden="true">{mark}</span>
                                <span class="label">{i.label.clone()}</span>
                                <span class="visually-hidden">{format!(" ({})", i.status)}</span>
                                {i.detail.clone().map(|d| view! { <span class="detail">{d}</span> })}
                                {i.approval.clone().map(|a| step_approval(&id, a, on_answer))}
                            </li>
                        }
                    })
                    .collect();
                view! {
                    <section class="task-card" data-status=t.status.to_string() aria-label="Delegated task">
                        <header>
                            <span class="task-goal">{format!("Delegated: {}", t.goal)}</span>
                            <span class="badge task-status">{t.status.to_string()}</span>
                            {(!over).then(|| view! {
                                <button class="task-cancel" on:click=move |_| on_cancel.run(cancel_id.clone())>"Cancel task"</button>
                            })}
                        </header>
                        <ol class="task-steps">{steps}</ol>
                    </section>
                }
            }
        />
    }
}

/// A step the orchestrator holds until the user answers: what it proposes, why it asks, its risk, and
/// Approve / Reject.
fn step_approval(
    task_id: &str,
    a: cowork_core::orchestrator::PendingApproval,
    on_answer: Callback<(String, String, bool)>,
) -> impl IntoView {
    let (task, step) = (task_id.to_owned(), a.subtask_id.clone());
    let answer = move |approved: bool| {
        let (task, step) = (task.clone(), step.clone());
        move |_| on_answer.run((task.clone(), step.clone(), approved))
    };
    let risk = (!a.risk_level.is_empty()).then(|| format!("risk: {}", a.risk_level));
    view! {
        <div class="step-approval" role="group" aria-label="The orchestrator asks before going on">
            <p class="step-proposal">{format!("Waiting for your approval: {}", a.proposed_action)}</p>
            <p class="step-reason">{a.reason.clone()} {risk.map(|r| view! { <span class="badge risk">{r}</span> })}</p>
            <button class="approve-step primary" on:click=answer(true)>"Approve"</button>
            <button class="reject-step secondary" on:click=answer(false)>"Reject"</button>
        </div>
    }
}

#[cfg(test)]
mod tests;
