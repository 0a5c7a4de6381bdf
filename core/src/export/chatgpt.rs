//! ChatGPT's `conversations.json`, so a user can take their sessions to tools that read it. One
//! conversation per root session; its forks (and theirs) become branches of the message tree after
//! their fork turn, and `current_node` is the root session's last turn. An assistant turn with tool
//! calls becomes its text's message and one message per call (`recipient` = the tool), a tool turn a
//! `tool` message. Times are float seconds. Reading the file back with the ChatGPT importer gives the
//! same sessions' texts (system turns aside: ChatGPT's importers skip them).

use super::ChatGptSource;
use crate::{Role, Session, Turn};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The id of the mapping's root node, which carries no message.
const ROOT: &str = "client-created-root";

/// The conversations of `source`'s trees, in the order of its roots, as pretty JSON.
pub fn render(source: &ChatGptSource) -> String {
    let sessions: Vec<&Session> = source.sessions.iter().map(|s| &s.session).collect();
    let turns: HashMap<&str, &[Turn]> =
        source.sessions.iter().map(|s| (s.session.id.as_str(), s.turns.as_slice())).collect();
    let by_id: HashMap<&str, &Session> = sessions.iter().map(|s| (s.id.as_str(), *s)).collect();
    let mut forks: HashMap<&str, Vec<&Session>> = HashMap::new();
    for s in sessions.iter().rev() {
        if let Some(p) = s.parent_session_id.as_deref().filter(|p| by_id.contains_key(p)) {
            forks.entry(p).or_default().push(s);
        }
    }
    let conversations: Vec<Value> = source
        .roots
        .iter()
        .filter_map(|id| by_id.get(id.as_str()))
        .map(|root| conversation(root, &forks, &turns))
        .collect();
    // Plain data with string keys: serialising cannot fail.
    serde_json::to_string_pretty(&Value::Array(conversations)).expect("plain JSON")
}

fn conversation(root: &Session, forks: &HashMap<&str, Vec<&Session>>, turns: &HashMap<&str, &[Turn]>) -> Value {
    let mut tree = Tree { mapping: Map::new(), ends: HashMap::new() };
    tree.mapping.insert(ROOT.into(), json!({"id": ROOT, "message": null, "parent": null, "children": []}));
    let mut queue = std::collections::VecDeque::from([(root, ROOT.to_owned())]);
    let mut current = ROOT.to_owned();
    let mut parents: HashMap<&str, &Session> = HashMap::new();
    while let Some((s, start)) = queue.pop_front() {
        let mut prev = start;
        for t in turns.get(s.id.as_str()).copied().unwrap_or_default() {
            for (id, message) in turn_messages(t, &s.model) {
                tree.link(&prev, &id, message);
                prev = id;
            }
            tree.ends.insert((s.id.clone(), t.turn_number), prev.clone());
        }
        if s.id == root.id {
            current = prev.clone();
        }
        for f in forks.get(s.id.as_str()).into_iter().flatten() {
            parents.insert(f.id.as_str(), s);
            let at = f.fork_turn.unwrap_or(0);
            // The fork point is stored in the nearest ancestor whose own turns include it.
            let mut holder: &Session = s;
            while at <= holder.fork_turn.unwrap_or(0) {
                match parents.get(holder.id.as_str()) {
                    Some(p) => holder = *p,
                    None => break,
                }
            }
            let point = tree.ends.get(&(holder.id.clone(), at)).cloned().unwrap_or_else(|| ROOT.to_owned());
            queue.push_back((f, point));
        }
    }
    json!({
        "title": root.title,
        "create_time": seconds(root.created_at),
        "update_time": seconds(root.last_active_at),
        "mapping": Value::Object(tree.mapping),
        "current_node": current,
        "conversation_id": root.id,
        "id": root.id,
        "default_model_slug": root.model,
        "is_archived": root.is_archived,
        "moderation_results": [],
    })
}

/// The mapping being built, and each turn's last node by (storing session, turn number).
struct Tree {
    mapping: Map<String, Value>,
    ends: HashMap<(String, i64), String>,
}

impl Tree {
    fn link(&mut self, parent: &str, id: &str, message: Value) {
        if let Some(Value::Array(children)) = self.mapping.get_mut(parent).map(|p| &mut p["children"]) {
            children.push(json!(id));
        }
        self.mapping.insert(id.to_owned(), json!({"id": id, "message": message, "parent": parent, "children": []}));
    }
}

fn seconds(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

/// One turn as ChatGPT messages (node id, message): one, or for an assistant turn with calls its text
/// (if any) and one message per call.
fn turn_messages(t: &Turn, model: &str) -> Vec<(String, Value)> {
    let id = format!("{}-{}", t.session_id, t.turn_number);
    let time = seconds(t.created_at);
    let text = |role: &str, content: &str, metadata: Value| {
        json!({
            "id": "", "author": {"role": role, "name": null, "metadata": {}}, "create_time": time,
            "content": {"content_type": "text", "parts": [content]}, "status": "finished_successfully",
            "recipient": "all", "metadata": metadata,
        })
    };
    let mut out = Vec::new();
    match t.role {
        Role::User | Role::System => out.push((id, text(t.role.as_str(), &t.content, json!({})))),
        Role::Tool => {
            let mut m = text("tool", &t.content, json!({"cowork_tool_call_id": t.tool_call_id}));
            m["author"]["name"] = json!(t.tool_name.as_deref().unwrap_or("tool"));
            out.push((id, m));
        }
        Role::Assistant => {
            let slug = t.metadata["model"].as_str().unwrap_or(model);
            let metadata = if slug.is_empty() { json!({}) } else { json!({"model_slug": slug}) };
            if !t.content.is_empty() || t.tool_calls.is_empty() {
                out.push((id.clone(), text("assistant", &t.content, metadata.clone())));
            }
            for (i, call) in t.tool_calls.iter().enumerate() {
                let args = match call.arguments_json() {
                    Some(Value::Object(o)) if o.len() == 1 && o.get("input").is_some_and(Value::is_string) => {
                        o["input"].as_str().unwrap_or_default().to_owned()
                    }
                    _ => call.arguments.clone(),
                };
                let mut m = text("assistant", "", metadata.clone());
                m["content"] = json!({"content_type": "code", "language": "json", "text": args});
                m["recipient"] = json!(call.name);
                m["metadata"]["cowork_call_id"] = json!(call.id);
                out.push((format!("{id}-call-{}", i + 1), m));
            }
        }
    }
    for (node, m) in &mut out {
        m["id"] = json!(node);
    }
    out
}
