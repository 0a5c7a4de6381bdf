//! Keyboard shortcuts: which key does what (pure, [`shortcut_for`]), and the sheet that lists them,
//! opened with `?`. The sheet is built from the same table the keys are matched against, so it cannot
//! list a shortcut that does not work.

use super::modal::Modal;
use super::state::DialogState;
use leptos::prelude::*;

/// What a shortcut does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    /// Search every session (Ctrl/Cmd+K).
    Search,
    /// Start a new session (Ctrl/Cmd+Shift+O).
    NewSession,
    /// Put the cursor in the message box (`/`).
    FocusComposer,
    /// Show this sheet (`?`).
    Help,
    /// Close what is open or, with nothing open while a reply streams, stop it (Esc).
    CloseOrStop,
}

/// A key press, as much of it as the shortcuts look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Press<'a> {
    /// `KeyboardEvent.key`.
    pub key: &'a str,
    /// Ctrl (or, on a Mac, Cmd) is held.
    pub command: bool,
    /// Shift is held.
    pub shift: bool,
    /// Alt/Option is held.
    pub alt: bool,
    /// The focus is in a text field (keys without a modifier then type text instead).
    pub typing: bool,
}

/// The shortcuts, as the sheet lists them: the keys in words, and what they do.
pub const SHEET: &[(Shortcut, &str, &str)] = &[
    (Shortcut::Search, "Ctrl/⌘ + K", "Search every session"),
    (Shortcut::NewSession, "Ctrl/⌘ + Shift + O", "New session"),
    (Shortcut::FocusComposer, "/", "Write a message"),
    (Shortcut::CloseOrStop, "Esc", "Close a dialog or menu; with none open, stop the reply being written"),
    (Shortcut::Help, "?", "Show these shortcuts"),
];

/// Keys of the message box itself, listed on the sheet after [`SHEET`].
pub const COMPOSER_KEYS: &[(&str, &str)] = &[
    ("Enter", "Send the message (Shift + Enter: a new line)"),
    ("↑", "In an empty message box: edit your last message"),
];

/// The shortcut a key press asks for, if any.
pub fn shortcut_for(p: Press<'_>) -> Option<Shortcut> {
    let plain = !p.command && !p.alt;
    match p.key {
        "Escape" => Some(Shortcut::CloseOrStop),
        k if p.command && !p.alt && !p.shift && k.eq_ignore_ascii_case("k") => Some(Shortcut::Search),
        k if p.command && !p.alt && p.shift && k.eq_ignore_ascii_case("o") => Some(Shortcut::NewSession),
        "/" if plain && !p.typing => Some(Shortcut::FocusComposer),
        "?" if plain && !p.typing => Some(Shortcut::Help),
        _ => None,
    }
}

/// The sheet of shortcuts, shown while [`DialogState::shortcuts_open`] is set.
#[component]
pub fn ShortcutsDialog() -> impl IntoView {
    let dialogs = DialogState::get();
    let close = move || dialogs.shortcuts_open.set(false);
    view! {
        <Show when=move || dialogs.shortcuts_open.get()>
            <Modal on_close=Callback::new(move |_| close()) class="shortcuts" labelled_by="shortcuts-title">
                    <h2 id="shortcuts-title">"Keyboard shortcuts"</h2>
                    <dl class="shortcut-list">
                        {SHEET.iter().map(|(_, keys, what)| (*keys, *what)).chain(COMPOSER_KEYS.iter().copied()).map(|(keys, what)| view! {
                            <div class="shortcut"><dt><kbd>{keys}</kbd></dt><dd>{what}</dd></div>
                        }).collect::<Vec<_>>()}
                    </dl>
                    <div class="dialog-actions">
                        <button class="primary" autofocus on:click=move |_| close()>"Close"</button>
                    </div>
            </Modal>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(key: &str) -> Press<'_> {
        Press { key, ..Press::default() }
    }

    #[test]
    fn each_listed_shortcut_is_matched_by_its_keys() {
        let cases = [
            (Press { command: true, ..press("k") }, Some(Shortcut::Search)),
            (Press { command: true, ..press("K") }, Some(Shortcut::Search)),
            (Press { command: true, shift: true, ..press("O") }, Some(Shortcut::NewSession)),
            (press("/"), Some(Shortcut::FocusComposer)),
            (press("?"), Some(Shortcut::Help)),
            (press("Escape"), Some(Shortcut::CloseOrStop)),
            (Press { typing: true, ..press("Escape") }, Some(Shortcut::CloseOrStop)),
            (Press { typing: true, command: true, ..press("k") }, Some(Shortcut::Search)),
        ];
        for (p, want) in cases {
            assert_eq!(shortcut_for(p), want, "{p:?}");
        }
        for (s, _, _) in SHEET {
            assert!(cases.iter().any(|(_, w)| *w == Some(*s)), "{s:?} is listed and matched");
        }
    }

    #[test]
    fn typing_a_slash_or_a_question_mark_in_a_text_field_is_just_typing() {
        assert_eq!(shortcut_for(Press { typing: true, ..press("/") }), None);
        assert_eq!(shortcut_for(Press { typing: true, ..press("?") }), None);
        assert_eq!(shortcut_for(press("k")), None, "k alone is a letter");
        assert_eq!(shortcut_for(Press { command: true, alt: true, ..press("k") }), None);
        assert_eq!(shortcut_for(Press { command: true, ..press("o") }), None, "Ctrl+O is the browser's");
    }
}
