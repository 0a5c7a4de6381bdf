//! The streaming reply's reasoning, live: a "Thinking" section that grows as the model thinks, open
//! while the reply streams. Once the reply is saved, the turn shows its saved reasoning collapsed
//! instead (`conversation.rs`). Plain text: model output never becomes markup.

use super::format::thinking_summary;
use super::state::ChatState;
use leptos::prelude::*;

/// The live Thinking section of streaming turn `turn_number`; nothing until its first reasoning arrives.
#[component]
pub fn ThinkingLive(
    /// The assistant turn being streamed.
    turn_number: i64,
) -> impl IntoView {
    let state = ChatState::get();
    let text =
        move || state.thinking.with(|t| t.as_ref().filter(|(n, _)| *n == turn_number).map(|(_, text)| text.clone()));
    let has_text = move || state.thinking.with(|t| t.as_ref().is_some_and(|(n, s)| *n == turn_number && !s.is_empty()));
    view! {
        <Show when=has_text>
            // Opened once, as it appears: the user may close it while it streams.
            <details class="thinking live" open=true>
                <summary>{move || text().map(|t| thinking_summary(&t)).unwrap_or_default()}</summary>
                <div class="thinking-text">{move || text().unwrap_or_default()}</div>
            </details>
        </Show>
    }
}
