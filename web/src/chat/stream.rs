//! The reply being streamed. Only its turn reacts to deltas: the other turns read which turn streams
//! ([`StreamingTurn`], which changes when a stream starts or ends), never its text. The text is drawn
//! at most once per animation frame, however many deltas arrived, and block by block
//! ([`crate::markdown::blocks`]): complete blocks are rendered once and kept as DOM, only the open last
//! block is rendered again, so a frame costs what the new text costs, not the reply or the session.
//! When the turn is saved complete, the conversation shows it as any other (rendered whole, once).
//! Code blocks are coloured ([`crate::highlight`]) once complete, never while still being written.

use super::state::ChatState;
use crate::markdown::blocks::Blocks;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Which turn is being streamed, if any: a memo of [`ChatState::streaming`]'s turn number, provided by
/// the conversation, so that turns re-render when a stream starts or ends and never per delta.
#[derive(Clone, Copy)]
pub struct StreamingTurn(Memo<Option<i64>>);

impl StreamingTurn {
    /// Provides the memo as context for the turns below, and returns it. Only in the session the reply
    /// is written in: another one shown meanwhile may have a turn of the same number.
    pub fn provide(state: ChatState) -> StreamingTurn {
        let turn = StreamingTurn(Memo::new(move |_| {
            if state.replying_in.get() != state.current.get() {
                return None;
            }
            state.streaming.with(|s| s.as_ref().map(|(n, _)| *n))
        }));
        provide_context(turn);
        turn
    }

    /// The memo the conversation provided.
    ///
    /// # Panics
    /// Outside the conversation: a bug.
    pub fn get() -> StreamingTurn {
        expect_context::<StreamingTurn>()
    }

    /// Whether turn `n` is being streamed (tracked: re-runs when a stream starts or ends).
    pub fn is(&self, n: i64) -> bool {
        self.0.get() == Some(n)
    }

    /// Whether a turn is being streamed (tracked).
    pub fn active(&self) -> bool {
        self.0.get().is_some()
    }
}

/// What the view has drawn of the streamed text: where its blocks are cut, and how many of the
/// element's nodes are complete blocks (those after them are the open block's).
#[derive(Default)]
struct Drawn {
    blocks: Blocks,
    kept: u32,
    frame_pending: bool,
}

/// The streaming turn's text as sanitised Markdown (see `crate::markdown`), drawn per animation
/// frame. Not a live region: the conversation announces the reply once, when it is saved whole.
#[component]
pub fn StreamText(
    /// The turn being streamed.
    turn_number: i64,
) -> impl IntoView {
    let state = ChatState::get();
    let el = NodeRef::<leptos::html::Div>::new();
    let drawn = StoredValue::new_local(Drawn::default());
    // A frame may come after the turn was replaced (saved complete): then there is nothing to draw.
    let draw = move || {
        let Some(Some(el)) = el.try_get_untracked() else { return };
        let follow = state.stick_to_end.get_untracked();
        let done = drawn.try_update_value(|d| {
            d.frame_pending = false;
            state.streaming.with_untracked(|s| match s {
                Some((n, text)) if *n == turn_number => draw_blocks(&el, text, d),
                _ => {}
            })
        });
        if done.is_some() && follow {
            follow_end(&el);
        }
    };
    // The first drawing is at once (the turn may arrive mid-stream); later ones once per frame.
    Effect::new(move |first: Option<()>| {
        state.streaming.track();
        if first.is_none() {
            draw();
        } else if drawn.try_update_value(|d| !std::mem::replace(&mut d.frame_pending, true)) == Some(true) {
            request_animation_frame(draw);
        }
    });
    view! { <div class="turn-text markdown" aria-live="off" node_ref=el></div> }
}

/// Draws `text` into `el`: the newly complete blocks appended once, the open block replaced.
fn draw_blocks(el: &web_sys::HtmlDivElement, text: &str, d: &mut Drawn) {
    let step = d.blocks.advance(text);
    if step.reset {
        el.set_inner_html("");
        d.kept = 0;
    }
    let nodes = el.child_nodes();
    while nodes.length() > d.kept {
        if let Some(last) = el.last_child() {
            let _ = el.remove_child(&last);
        }
    }
    // The HTML is sanitised (crate::markdown::render): nothing from the message becomes markup.
    for block in step.complete {
        let _ = el.insert_adjacent_html("beforeend", &crate::markdown::render(&text[block]));
    }
    // Code in the blocks just completed is coloured; the open block's code is still being written.
    for i in d.kept..nodes.length() {
        if let Some(node) = nodes.item(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) {
            crate::highlight::highlight_within(&node);
        }
    }
    d.kept = nodes.length();
    let _ = el.insert_adjacent_html("beforeend", &crate::markdown::render(&text[step.open]));
}

/// Keeps the end of the conversation in view (the user is there): one layout per frame.
fn follow_end(el: &web_sys::HtmlDivElement) {
    if let Ok(Some(list)) = el.closest(".turns") {
        list.set_scroll_top(list.scroll_height());
    }
}
