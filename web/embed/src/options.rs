//! What a page passes in, checked and turned into the worker protocol's types. Pure (no JS values),
//! so it is tested natively; `api/` only converts JS values to and from these.

use cowork_core::prompt::ApprovalPolicy;
use cowork_core::{NewTurn, Role, SearchQuery, SearchScope, ToolCall, TurnStatus};
use cowork_web::protocol::HostToolSpec;
use cowork_web::settings::ModelSettings;
use serde::Deserialize;

/// Tools the agent loop provides itself; a page cannot register a tool of the same name.
pub const RESERVED_TOOLS: [&str; 2] = ["conversation_recall", "delegate_task"];
/// Turns one `readTurns` call returns, at most.
pub const MAX_READ_TURNS: usize = 1_000;

/// `openArchive(options)`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpenOptions {
    /// `"opfs"` (`None` too: the origin's shared archive) or `"memory"` (private, gone with the page).
    pub storage: Option<String>,
    /// URL of `storage-worker_loader.js`; `None` or blank: the one next to this module.
    pub worker_url: Option<String>,
    /// The model `send()` uses unless a call says otherwise; `None`: the archive's settings.
    pub model: Option<ModelOptions>,
    /// Appended to the system prompt of every request; `None`: nothing.
    pub instructions: Option<String>,
}

/// Where an archive lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageKind {
    /// The origin's archive in OPFS, shared with the Cowork app and other tabs.
    Opfs,
    /// A private in-memory archive, gone when the page closes.
    Memory,
}

impl OpenOptions {
    /// The storage asked for, or why the `storage` string is not one.
    pub fn storage(&self) -> Result<StorageKind, String> {
        match self.storage.as_deref() {
            None | Some("opfs") => Ok(StorageKind::Opfs),
            Some("memory") => Ok(StorageKind::Memory),
            Some(other) => Err(format!("storage must be \"opfs\" or \"memory\", not {other:?}")),
        }
    }
}

/// The storage worker's URL: the page's choice, or the loader next to this module; `?storage=memory`
/// asks the worker for a private in-memory archive.
pub fn worker_url(given: Option<&str>, default: &str, storage: StorageKind) -> String {
    let base = given.filter(|u| !u.trim().is_empty()).unwrap_or(default).to_owned();
    match storage {
        StorageKind::Opfs => base,
        StorageKind::Memory if base.contains('?') => format!("{base}&storage=memory"),
        StorageKind::Memory => format!("{base}?storage=memory"),
    }
}

/// A model endpoint as a page gives it: any fields of [`ModelSettings`] (by their JSON names), the
/// rest taken from the archive's settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(transparent)]
pub struct ModelOptions(pub serde_json::Map<String, serde_json::Value>);

impl ModelOptions {
    /// The complete, validated settings: `self` over `base`.
    pub fn over(&self, base: &ModelSettings) -> Result<ModelSettings, String> {
        let mut merged = match serde_json::to_value(base) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => unreachable!("settings serialise as an object"),
        };
        merged.extend(self.0.clone());
        let s: ModelSettings =
            serde_json::from_value(serde_json::Value::Object(merged)).map_err(|e| format!("model: {e}"))?;
        let errors = cowork_web::settings::validate(&s);
        if errors.is_empty() {
            Ok(s)
        } else {
            let all: Vec<String> = errors.iter().map(|e| format!("model.{}: {}", e.field, e.message)).collect();
            Err(all.join(" "))
        }
    }
}

/// The settings a request uses: the request's model options over the archive's.
pub fn model_settings(archive: &ModelSettings, request: Option<&ModelOptions>) -> Result<ModelSettings, String> {
    match request {
        Some(m) => m.over(archive).map(|s| cowork_web::settings::trimmed(&s)),
        None => Ok(cowork_web::settings::trimmed(archive)),
    }
}

/// `createSession(options)`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CreateOptions {
    /// The workspace the session belongs to.
    pub workspace: String,
    /// Empty: the first user message names the session.
    pub title: String,
}

/// `listSessions(options)`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ListOptions {
    /// Only this workspace's sessions; `None`: every workspace's.
    pub workspace: Option<String>,
    /// Whether archived (hidden) sessions are listed too.
    pub include_archived: bool,
}

/// `resume(id, options)`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResumeOptions {
    /// How many of the last turns to return (default 50).
    pub last_turns: usize,
}

impl Default for ResumeOptions {
    fn default() -> Self {
        ResumeOptions { last_turns: 50 }
    }
}

/// `readTurns(id, options)`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReadOptions {
    /// Turns to skip from the start (default 0: from turn 1).
    pub offset: usize,
    /// Turns to return (default 100; 1 to [`MAX_READ_TURNS`], see [`ReadOptions::limit`]).
    pub limit: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { offset: 0, limit: 100 }
    }
}

impl ReadOptions {
    /// The limit, or why it is out of range (0, or above [`MAX_READ_TURNS`]).
    pub fn limit(&self) -> Result<usize, String> {
        match self.limit {
            0 => Err("limit must be at least 1".into()),
            n if n > MAX_READ_TURNS => Err(format!("limit is at most {MAX_READ_TURNS}; read in pages with offset")),
            n => Ok(n),
        }
    }
}

/// `search(text, options)`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchOptions {
    /// Only this session (with the turns it inherits); not with `workspace`.
    pub session_id: Option<String>,
    /// Only this workspace's sessions; neither this nor `session_id`: every session.
    pub workspace: Option<String>,
    /// Only turns of these roles; empty: every role.
    pub roles: Vec<Role>,
    /// Hits at most (`None`: 10; the archive caps it at 50).
    pub limit: Option<usize>,
    /// Treat the last word as a prefix (search as you type).
    pub prefix_last: bool,
}

impl SearchOptions {
    /// The archive's query for `text`, or why the options contradict each other.
    pub fn query(self, text: String) -> Result<SearchQuery, String> {
        let scope = match (self.session_id, self.workspace) {
            (Some(_), Some(_)) => return Err("give session_id or workspace, not both".into()),
            (Some(session_id), None) => SearchScope::Session { session_id },
            (None, Some(workspace)) => SearchScope::Workspace { workspace },
            (None, None) => SearchScope::All,
        };
        // The archive caps the limit itself (50 hits at most).
        let limit = self.limit.unwrap_or(10).max(1);
        Ok(SearchQuery { text, scope, roles: self.roles, limit, prefix_last: self.prefix_last })
    }
}

/// `send(id, text, options)`, `continueSession(id, options)` and `assembleContext(id, options)`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RequestOptions {
    /// Overrides the archive's model settings for this request; `None`: the archive's.
    pub model: Option<ModelOptions>,
    /// Replaces the archive's extra instructions for this request; `None`: the archive's.
    pub instructions: Option<String>,
}

/// `appendTurn(id, turn)`: a turn as the page writes it; only `role` is required. Other fields (a
/// turn read back, with its `id` and `turn_number`) are ignored: the archive assigns those.
#[derive(Debug, Clone, Deserialize)]
pub struct TurnInit {
    /// Who speaks.
    pub role: Role,
    /// The text (default empty).
    #[serde(default)]
    pub content: String,
    /// The tool calls an assistant turn makes (only an assistant turn may have any).
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool turn answers (required for a tool turn).
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// The tool a tool turn is the result of.
    #[serde(default)]
    pub tool_name: Option<String>,
    /// `None`: complete.
    #[serde(default)]
    pub status: Option<TurnStatus>,
    /// Free-form JSON kept with the turn (a `client_key` in it makes the append happen once).
    #[serde(default)]
    pub metadata: serde_json::Value,
}

impl TurnInit {
    /// The turn to save, or why it is not a valid turn (a tool turn without its call id, tool
    /// calls on a turn that is not the assistant's).
    pub fn into_new_turn(self) -> Result<NewTurn, String> {
        if self.role == Role::Tool && self.tool_call_id.as_deref().is_none_or(str::is_empty) {
            return Err("a tool turn needs tool_call_id (the id of the call it answers)".into());
        }
        if self.role != Role::Assistant && !self.tool_calls.is_empty() {
            return Err("only an assistant turn can have tool_calls".into());
        }
        Ok(NewTurn {
            role: self.role,
            content: self.content,
            tool_calls: self.tool_calls,
            tool_call_id: self.tool_call_id,
            tool_name: self.tool_name,
            status: self.status.unwrap_or(TurnStatus::Complete),
            metadata: self.metadata,
        })
    }
}

/// The serialisable part of `registerTool(tool)` (the handler is a JS function, kept beside it).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolInit {
    /// The name the model calls it by (checked by [`ToolInit::into_spec`]).
    pub name: String,
    /// What it does, for the model (default empty).
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments (default: an object with no properties).
    #[serde(default = "empty_schema")]
    pub parameters: serde_json::Value,
    /// `"auto"` (`None` too) runs every call; `"ask"` asks the approval handler first.
    #[serde(default)]
    pub approval: Option<String>,
    /// What the tool does to the files its `path` (or `file_path`, `paths`, …) argument names.
    #[serde(default)]
    pub files: Option<cowork_core::state::FileAction>,
}

fn empty_schema() -> serde_json::Value {
    serde_json::json!({"type": "object", "properties": {}})
}

impl ToolInit {
    /// Checks the tool the way model endpoints will (names `^[A-Za-z0-9_-]{1,64}$`, an object schema).
    pub fn into_spec(self) -> Result<HostToolSpec, String> {
        let name = self.name.trim().to_owned();
        let valid = !name.is_empty()
            && name.len() <= 64
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(format!("tool name {:?} is not allowed: use 1 to 64 letters, digits, '_' or '-'", self.name));
        }
        if name.contains("__") {
            return Err(format!(
                "tool name {name:?} is not allowed: \"__\" is kept for MCP servers' tools (<server>__<tool>)"
            ));
        }
        if RESERVED_TOOLS.contains(&name.as_str()) {
            return Err(format!("{name} is built in; choose another name for the page's tool"));
        }
        if !self.parameters.is_object() || self.parameters.get("type").is_some_and(|t| t != "object") {
            return Err(format!("parameters of {name} must be a JSON Schema object ({{\"type\": \"object\", …}})"));
        }
        let approval = match self.approval.as_deref() {
            None | Some("auto") => ApprovalPolicy::Auto,
            Some("ask") => ApprovalPolicy::AskEveryTime,
            Some(other) => return Err(format!("approval of {name} must be \"auto\" or \"ask\", not {other:?}")),
        };
        Ok(HostToolSpec {
            name,
            description: self.description,
            parameters: self.parameters,
            approval,
            file_action: self.files,
        })
    }
}

/// A session as the page gets it: its `state` always has every field of the register (an empty
/// session's is filled in with the defaults, and what only extraction needs is left out).
pub fn session_for_page(mut session: cowork_core::Session) -> cowork_core::Session {
    session.state = state_for_page(&session.state);
    session
}

/// The state register with every field present.
pub fn state_for_page(state: &serde_json::Value) -> serde_json::Value {
    let mut v = serde_json::to_value(cowork_core::state::SessionState::from_json(state)).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("pending");
    }
    v
}

/// The app's stylesheet for use inside a shadow root: the page-level rules (`:root`, `html`, `body`,
/// viewport units, viewport media queries) are made relative to the host element instead.
pub fn scoped_css(app_css: &str) -> String {
    let css = app_css
        .replace(":root", ".cowork-root")
        .replace("html, body { margin: 0; height: 100%; }", "")
        .replace("height: 100vh", "height: 100%")
        .replace("@media (max-width:", "@container cowork (max-width:");
    format!("{HOST_CSS}\n{css}")
}

/// The host element is a block the page sizes (and may hide: nothing here is `!important`); inside
/// it, nothing of the page's CSS is inherited past the root's `all: initial`, and the root contains
/// the fixed-position dialogs, so they open within the element.
const HOST_CSS: &str = "\
:host { display: block; }
.cowork-root { all: initial; display: block; position: relative; overflow: hidden; contain: layout paint; \
width: 100%; height: 100%; container: cowork / inline-size; }";

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(v: serde_json::Value) -> Result<HostToolSpec, String> {
        serde_json::from_value::<ToolInit>(v).map_err(|e| e.to_string())?.into_spec()
    }

    #[test]
    fn tools_are_checked_as_model_endpoints_would() {
        let ok = tool(serde_json::json!({"name": "write_file", "parameters": {"type": "object"}, "approval": "ask"}))
            .unwrap();
        assert_eq!((ok.name.as_str(), ok.approval), ("write_file", ApprovalPolicy::AskEveryTime));
        assert_eq!(tool(serde_json::json!({"name": "read_file"})).unwrap().approval, ApprovalPolicy::Auto);
        let saves = tool(serde_json::json!({"name": "saveDocument", "files": "write"})).unwrap();
        assert_eq!(saves.file_action, Some(cowork_core::state::FileAction::Write));
        assert!(tool(serde_json::json!({"name": "t", "files": "burn"})).unwrap_err().contains("unknown variant"));
        for (bad, says) in [
            (serde_json::json!({"name": "read file"}), "not allowed"),
            (serde_json::json!({"name": ""}), "not allowed"),
            (serde_json::json!({"name": "x".repeat(65)}), "not allowed"),
            (serde_json::json!({"name": "conversation_recall"}), "built in"),
            (serde_json::json!({"name": "files__read"}), "kept for MCP servers' tools"),
            (serde_json::json!({"name": "t", "parameters": {"type": "string"}}), "JSON Schema object"),
            (serde_json::json!({"name": "t", "parameters": []}), "JSON Schema object"),
            (serde_json::json!({"name": "t", "approval": "never"}), "\"auto\" or \"ask\""),
            (serde_json::json!({"name": "t", "paramters": {}}), "unknown field `paramters`"),
        ] {
            let err = tool(bad.clone()).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn model_options_fill_in_from_the_archive_and_are_validated() {
        let base = cowork_web::settings::demo("http://127.0.0.1:8080");
        let options = |v: serde_json::Value| serde_json::from_value::<ModelOptions>(v).unwrap();
        let m = options(serde_json::json!({"model": "gpt-4o-mini"}));
        let s = model_settings(&base, Some(&m)).unwrap();
        assert_eq!((s.model.as_str(), s.base_url.as_str()), ("gpt-4o-mini", "http://127.0.0.1:8080/v1"));
        assert_eq!(model_settings(&base, None).unwrap().model, "demo");
        let bad = options(serde_json::json!({"base_url": "ftp://x", "context_window": 5}));
        let err = model_settings(&base, Some(&bad)).unwrap_err();
        assert!(err.contains("model.base_url") && err.contains("model.context_window"), "{err}");
        let unknown = model_settings(&base, Some(&options(serde_json::json!({"modle": "x"})))).unwrap_err();
        assert!(unknown.contains("unknown field `modle`"), "{unknown}");
        let kind = model_settings(&base, Some(&options(serde_json::json!({"kind": "gemini"})))).unwrap_err();
        assert!(kind.contains("unknown variant `gemini`"), "{kind}");
    }

    #[test]
    fn unknown_option_names_are_refused_not_ignored() {
        let err = serde_json::from_value::<OpenOptions>(serde_json::json!({"storge": "memory"})).unwrap_err();
        assert!(err.to_string().contains("storge"), "{err}");
        let o: OpenOptions = serde_json::from_value(serde_json::json!({"storage": "tape"})).unwrap();
        assert!(o.storage().unwrap_err().contains("\"opfs\" or \"memory\""));
    }

    #[test]
    fn worker_url_asks_for_memory_in_its_query() {
        assert_eq!(worker_url(None, "/e/w.js", StorageKind::Opfs), "/e/w.js");
        assert_eq!(worker_url(None, "/e/w.js", StorageKind::Memory), "/e/w.js?storage=memory");
        assert_eq!(worker_url(Some("/w.js?v=2"), "/e/w.js", StorageKind::Memory), "/w.js?v=2&storage=memory");
    }

    #[test]
    fn turns_and_searches_from_the_page_are_checked() {
        let t: TurnInit = serde_json::from_value(serde_json::json!({"role": "user", "content": "hi"})).unwrap();
        assert_eq!(t.into_new_turn().unwrap(), NewTurn::user("hi"));
        let t: TurnInit = serde_json::from_value(serde_json::json!({"role": "tool", "content": "ok"})).unwrap();
        assert!(t.into_new_turn().unwrap_err().contains("tool_call_id"));
        let both = SearchOptions { session_id: Some("s".into()), workspace: Some("w".into()), ..Default::default() };
        assert!(both.query("x".into()).is_err());
        let q = SearchOptions { limit: Some(0), ..Default::default() }.query("x".into()).unwrap();
        assert_eq!((q.scope, q.limit), (SearchScope::All, 1));
        assert!(ReadOptions { offset: 0, limit: 0 }.limit().is_err());
        assert!(ReadOptions { offset: 0, limit: 5_000 }.limit().is_err());
    }

    #[test]
    fn sessions_reach_the_page_with_a_complete_state_register() {
        let s = serde_json::json!({"id": "s", "workspace": "w", "title": "", "model": "", "system_prompt": "",
            "created_at": 1, "last_active_at": 1, "turn_count": 0, "prompt_tokens": 0, "completion_tokens": 0,
            "state": {}, "parent_session_id": null, "fork_turn": null, "is_archived": false});
        let session = session_for_page(serde_json::from_value(s).unwrap());
        for field in ["files_touched", "key_decisions", "current_focus", "errors_resolved", "open_tasks", "version"] {
            assert!(session.state.get(field).is_some(), "{field} missing: {}", session.state);
        }
        assert!(session.state.get("pending").is_none());
        let kept = state_for_page(&serde_json::json!({"current_focus": "auth", "files_touched": [
            {"path": "a.rs", "action": "write", "turn": 3}]}));
        assert_eq!(
            (kept["current_focus"].as_str(), kept["files_touched"][0]["path"].as_str()),
            (Some("auth"), Some("a.rs"))
        );
    }

    #[test]
    fn the_stylesheet_is_scoped_to_the_host_element() {
        let app = include_str!("../../style/app.css");
        let css = scoped_css(app);
        assert!(!css.contains(":root"), "page-level selectors remain");
        assert!(!css.contains("100vh") && !css.contains("html, body"));
        assert!(!css.contains("@media (max-width:"), "layout follows the host's width, not the window's");
        assert!(css.contains("@container cowork (max-width:") && css.contains(".cowork-root {"));
        assert!(css.starts_with(":host"));
    }
}
