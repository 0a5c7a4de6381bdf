//! The small label on an assistant turn naming the model that wrote it (its `metadata.model`, as the
//! agent loop records it).

use leptos::prelude::*;

/// The model named in a turn's metadata; `None` when it names none (user and tool turns, replies
/// archived before models were recorded, a reply still streaming).
pub fn turn_model(metadata: &serde_json::Value) -> Option<&str> {
    metadata.get("model")?.as_str().map(str::trim).filter(|m| !m.is_empty())
}

/// "demo-large" beside the turn's role, when its metadata names the model.
#[component]
pub fn TurnModel(
    /// The turn's metadata.
    metadata: serde_json::Value,
) -> impl IntoView {
    turn_model(&metadata).map(|m| {
        view! { <span class="turn-model" title="The model that wrote this reply">{m.to_owned()}</span> }
    })
}

#[cfg(test)]
mod tests;
