//! A generated ChatGPT data export (`conversations.json`) for the import benchmark: deterministic
//! conversations of generated turns ([`crate::gen::text`]), each a `mapping` tree whose every seventh
//! conversation has a regenerated answer (a branch), as ChatGPT writes them.

use crate::gen::{text, Rng};
use serde_json::{json, Map, Value};

/// An export of `conversations` conversations of about `bytes / conversations` bytes each (sizes
/// vary from a quarter to twice that); returns the file and the size of its largest conversation.
pub fn chatgpt_export(seed: u64, conversations: usize, bytes: usize) -> (Vec<u8>, usize) {
    let mut rng = Rng::new(seed);
    let per = bytes / conversations.max(1);
    let mut out = Vec::with_capacity(bytes + bytes / 8);
    let mut largest = 0;
    out.push(b'[');
    for i in 0..conversations {
        if i > 0 {
            out.push(b',');
        }
        let target = per / 4 + rng.below(per * 7 / 4 + 1);
        let c = serde_json::to_vec(&conversation(&mut rng, i, target)).expect("plain JSON");
        largest = largest.max(c.len());
        out.extend_from_slice(&c);
    }
    out.push(b']');
    (out, largest)
}

fn message(id: &str, role: &str, text: &str, time: f64) -> Value {
    json!({
        "id": id, "author": {"role": role, "name": null, "metadata": {}}, "create_time": time,
        "update_time": null, "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {}, "recipient": "all"
    })
}

/// One conversation of about `target` bytes: alternate user and assistant messages on a path from
/// the root; every seventh conversation has a second answer to its first question.
fn conversation(rng: &mut Rng, index: usize, target: usize) -> Value {
    let start = 1_700_000_000.0 + index as f64 * 3_600.0;
    let mut mapping = Map::new();
    let mut parent = "root".to_owned();
    let mut children: Vec<(String, String)> = Vec::new(); // (parent, child)
    let (mut size, mut n) = (0, 0);
    let mut nodes: Vec<(String, Value, String)> = Vec::new();
    while size < target || n < 2 {
        let id = format!("c{index}-m{n}");
        let role = if n % 2 == 0 { "user" } else { "assistant" };
        let len = 200 + rng.below(500);
        let body = text(rng, len);
        size += body.len() + 330;
        nodes.push((id.clone(), message(&id, role, &body, start + n as f64 * 30.0), parent.clone()));
        children.push((parent, id.clone()));
        parent = id;
        n += 1;
    }
    let current = parent;
    if index.is_multiple_of(7) {
        let id = format!("c{index}-alt");
        let body = text(rng, 300);
        nodes.push((id.clone(), message(&id, "assistant", &body, start + 45.0), format!("c{index}-m0")));
        children.push((format!("c{index}-m0"), id));
    }
    let kids = |of: &str| -> Vec<String> { children.iter().filter(|(p, _)| p == of).map(|(_, c)| c.clone()).collect() };
    mapping.insert("root".into(), json!({"id": "root", "message": null, "parent": null, "children": kids("root")}));
    for (id, message, parent) in nodes {
        let node = json!({"id": id, "message": message, "parent": parent, "children": kids(&id)});
        mapping.insert(id, node);
    }
    json!({
        "title": format!("Generated conversation {index}"), "create_time": start, "update_time": start + n as f64 * 30.0,
        "mapping": mapping, "moderation_results": [], "current_node": current,
        "conversation_id": format!("gen-{index:05}"), "id": format!("gen-{index:05}"),
    })
}
