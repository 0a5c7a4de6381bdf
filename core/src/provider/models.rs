//! The endpoint's list of models: the request (`GET {base}/models`, with each format's headers) and a
//! tolerant reading of the answer. Pure, like the rest of `provider/`.
//!
//! OpenAI-compatible servers answer `{"data": [{"id": …}]}` (OpenAI, OpenRouter, vLLM, LM Studio,
//! llama.cpp, Ollama's `/v1`); Anthropic answers `{"data": [{"id": …, "display_name": …}]}`. Ollama's
//! own `/api/tags` shape (`{"models": [{"name": …}]}`) and bare arrays are read too, so a base URL
//! pointing a little off still lists what it can.

use serde_json::Value;

use super::{join_url, HttpRequest, ModelSettings, ProviderKind, ANTHROPIC_VERSION};

/// One model an endpoint lists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ListedModel {
    /// The name requests use (`model`), e.g. `gpt-4o-mini`.
    pub id: String,
    /// A human name when the endpoint gives one (Anthropic's `display_name`); `None`: only the id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

/// The paths `base_url` may already end with (the full endpoint path is accepted in Settings).
const ENDPOINT_PATHS: [&str; 3] = ["/chat/completions", "/messages", "/models"];

/// The request listing the endpoint's models: `GET {base}/models` (the base URL already holds the
/// version, e.g. `https://api.openai.com/v1`, `https://api.anthropic.com/v1`), with the key as the
/// format sends it (`authorization: Bearer …`, or Anthropic's `x-api-key` and `anthropic-version`).
pub fn models_request(cfg: &ModelSettings) -> HttpRequest {
    let mut base = cfg.base_url.trim().trim_end_matches('/');
    for path in ENDPOINT_PATHS {
        base = base.strip_suffix(path).unwrap_or(base);
    }
    let key = cfg.api_key.trim();
    let mut headers = vec![("accept".to_string(), "application/json".to_string())];
    match cfg.kind {
        ProviderKind::OpenAi => {
            if !key.is_empty() {
                headers.push(("authorization".to_string(), format!("Bearer {key}")));
            }
        }
        ProviderKind::Anthropic => {
            if !key.is_empty() {
                headers.push(("x-api-key".to_string(), key.to_string()));
            }
            headers.push(("anthropic-version".to_string(), ANTHROPIC_VERSION.to_string()));
            headers.push(("anthropic-dangerous-direct-browser-access".to_string(), "true".to_string()));
        }
    }
    HttpRequest { method: "GET".to_string(), url: join_url(base, "/models"), headers, body: String::new() }
}

/// Reads a model list: the models in the endpoint's order, each id once; entries without an id are
/// skipped. An answer that is not JSON, or holds no list, is an error saying what came back.
pub fn parse_models(body: &str) -> Result<Vec<ListedModel>, String> {
    let value: Value = serde_json::from_str(body.trim()).map_err(|_| {
        let start: String = body.trim().chars().take(80).collect();
        format!("the endpoint's answer is not JSON (it starts with {start:?})")
    })?;
    let entries = match &value {
        Value::Array(items) => items,
        Value::Object(o) => match ["data", "models"].iter().find_map(|k| o.get(*k)?.as_array()) {
            Some(items) => items,
            None if o.contains_key("error") => {
                let e = &o["error"];
                let message = e["message"].as_str().or(e.as_str()).unwrap_or("no reason given");
                return Err(format!("the endpoint answered with an error: {message}"));
            }
            None => return Err("the endpoint's answer holds no model list (no `data` array)".to_string()),
        },
        _ => return Err("the endpoint's answer holds no model list".to_string()),
    };
    let mut models: Vec<ListedModel> = Vec::new();
    for entry in entries {
        let Some(model) = listed(entry) else { continue };
        if !models.iter().any(|m| m.id == model.id) {
            models.push(model);
        }
    }
    Ok(models)
}

fn listed(entry: &Value) -> Option<ListedModel> {
    let text = |v: &Value| v.as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    if let Some(id) = text(entry) {
        return Some(ListedModel { id, display_name: None });
    }
    let id = ["id", "name", "model"].iter().find_map(|k| text(&entry[*k]))?;
    let display_name = ["display_name", "name"].iter().find_map(|k| text(&entry[*k])).filter(|n| *n != id);
    Some(ListedModel { id, display_name })
}
