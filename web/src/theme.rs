//! The colour theme: the system's, or light or dark as the user chose (remembered in this browser).
//! The choice is the `data-theme` attribute of the document element (of the embedded app's root when
//! it is mounted in a page), which the stylesheet reads.

/// The user's choice of theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    /// Follow the system's light or dark setting.
    #[default]
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

/// Where the choice is kept (localStorage).
pub const STORAGE_KEY: &str = "cowork.theme";

impl Theme {
    /// The stored word (`system`, `light`, `dark`).
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::System => "system",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// A stored word back; anything else is the system's theme.
    pub fn parse(s: &str) -> Theme {
        match s {
            "light" => Theme::Light,
            "dark" => Theme::Dark,
            _ => Theme::System,
        }
    }

    /// The next choice of the header's theme button: system → light → dark → system.
    pub fn next(self) -> Theme {
        match self {
            Theme::System => Theme::Light,
            Theme::Light => Theme::Dark,
            Theme::Dark => Theme::System,
        }
    }

    /// The button's face: a symbol (its words are [`Theme::label`], the accessible name).
    pub fn symbol(self) -> &'static str {
        match self {
            Theme::System => "◐",
            Theme::Light => "☀",
            Theme::Dark => "☾",
        }
    }

    /// The button's label.
    pub fn label(self) -> &'static str {
        match self {
            Theme::System => "Theme: system",
            Theme::Light => "Theme: light",
            Theme::Dark => "Theme: dark",
        }
    }
}

/// The saved choice (the system's when none was saved or storage is unavailable).
pub fn load() -> Theme {
    #[cfg(target_arch = "wasm32")]
    {
        let stored = web_sys::window()
            .and_then(|w| w.local_storage().ok().flatten())
            .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten());
        stored.map(|s| Theme::parse(&s)).unwrap_or_default()
    }
    #[cfg(not(target_arch = "wasm32"))]
    Theme::System
}

/// Applies `theme` to the page and remembers it.
pub fn apply(theme: Theme) {
    #[cfg(target_arch = "wasm32")]
    {
        if let Some(w) = web_sys::window() {
            // The page's root element, or the embedded app's own root (`.cowork-root` in its shadow root).
            let root = crate::dom::query(".cowork-root").or_else(|| w.document().and_then(|d| d.document_element()));
            if let Some(root) = root {
                let _ = match theme {
                    Theme::System => root.remove_attribute("data-theme"),
                    other => root.set_attribute("data-theme", other.as_str()),
                };
            }
            if let Ok(Some(s)) = w.local_storage() {
                let _ = s.set_item(STORAGE_KEY, theme.as_str());
            }
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = theme;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_round_trips_and_the_button_cycles_through_all_three() {
        for t in [Theme::System, Theme::Light, Theme::Dark] {
            assert_eq!(Theme::parse(t.as_str()), t);
        }
        assert_eq!(Theme::parse("purple"), Theme::System);
        assert_eq!(Theme::System.next().next().next(), Theme::System);
        assert_ne!(Theme::Light.next(), Theme::Light);
    }
}
