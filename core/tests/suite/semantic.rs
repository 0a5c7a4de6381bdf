//! The semantic index (recall by meaning): vectors saved per chunk, searched in scope, fused with the
//! full-text ranking, dropped with their turn, rebuilt on a model change, never exported or synced.
//!
//! The vectors come from a small stand-in embedder (`embed`): words of one topic share a dimension,
//! other words hash to the rest, so "logging in" and "auth tokens" are near without sharing a word.
//! The real model is tested in the `semantic` crate and end to end.

use cowork_core::semantic::{self, Matched, DIMS, MAX_CHUNKS, MPNET};
use cowork_core::store::{NewSession, SemanticSettings, Store};
use cowork_core::{NewTurn, SearchQuery, SearchScope, Space};

const TOPICS: &[&[&str]] = &[
    &["login", "logging", "auth", "tokens", "token", "sign", "password", "expire"],
    &["database", "postgres", "sql", "orm", "schema", "migrations"],
    &["deploy", "release", "ship", "rollout", "production"],
];

/// A unit vector for `text` of the default model's dimensions (see [`embed_in`]).
pub fn embed(text: &str) -> Vec<f32> {
    embed_in(text, DIMS)
}

/// A unit vector of `dims` components for `text`: each topic word adds to its topic's dimension,
/// every other word to a hashed one at a tenth of the weight.
pub fn embed_in(text: &str, dims: usize) -> Vec<f32> {
    let mut v = vec![0f32; dims];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let word = word.to_lowercase();
        match TOPICS.iter().position(|t| t.contains(&word.as_str())) {
            Some(topic) => v[topic] += 1.0,
            None => {
                let h = word.bytes().fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
                v[TOPICS.len() + (h as usize % (dims - TOPICS.len()))] += 0.1;
            }
        }
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
    v
}

/// The dimensions of the vectors of the index's model.
fn dims(store: &Store) -> usize {
    semantic::model(&store.semantic_model().unwrap()).expect("a known model").dims
}

/// Embeds everything pending, `per_batch` turns at a time; returns how many batches it took.
pub fn index_all(store: &mut Store, per_batch: usize) -> usize {
    let dims = dims(store);
    let mut batches = 0;
    loop {
        let batch = store.semantic_pending(per_batch).unwrap();
        if batch.is_empty() {
            return batches;
        }
        let vectors: Vec<Vec<f32>> = batch.chunks.iter().map(|c| embed_in(&c.text, dims)).collect();
        store.put_vectors(&batch, &vectors).unwrap();
        batches += 1;
        assert!(batches < 10_000, "indexing does not end");
    }
}

fn hybrid(store: &Store, text: &str, scope: SearchScope) -> Vec<(i64, Matched)> {
    let q = SearchQuery { limit: 10, ..SearchQuery::new(text, scope) };
    let vector = embed_in(text, dims(store));
    store.search_hybrid(&q, Some(&vector)).unwrap().into_iter().map(|h| (h.turn_number, h.matched)).collect()
}

fn session(store: &mut Store, workspace: &str) -> String {
    store.create_session(&NewSession::new(workspace)).unwrap().id
}

pub fn a_paraphrase_is_found_by_meaning_and_marked_so(store: &mut Store) {
    let s = session(store, "w");
    store.append_turn(&s, &NewTurn::user("Note: the auth tokens expire after an hour.")).unwrap();
    store.append_turn(&s, &NewTurn::assistant("Understood, I will refresh them.")).unwrap();
    store.append_turn(&s, &NewTurn::user("Also we ship on Fridays.")).unwrap();
    let progress = store.semantic_progress().unwrap();
    assert_eq!((progress.indexed, progress.total), (0, 3));
    index_all(store, 2);
    assert!(store.semantic_progress().unwrap().complete());

    let question = "what did we decide about logging in";
    let lexical = store.search(&SearchQuery::new(question, SearchScope::All)).unwrap();
    assert!(lexical.iter().all(|h| h.turn_number != 1), "the words alone do not find it: {lexical:?}");
    let found = hybrid(store, question, SearchScope::All);
    assert!(found.iter().take(2).any(|h| *h == (1, Matched::Meaning)), "{found:?}");
    let meaning_only = hybrid(store, "logging in", SearchScope::All);
    assert_eq!(meaning_only.first(), Some(&(1, Matched::Meaning)), "{meaning_only:?}");

    // A query whose words and meaning both point at turn 1 says so; without a vector it is lexical.
    assert_eq!(hybrid(store, "auth tokens", SearchScope::All).first(), Some(&(1, Matched::Both)));
    let q = SearchQuery::new("auth tokens", SearchScope::All);
    let plain = store.search_hybrid(&q, None).unwrap();
    assert_eq!(plain, store.search(&q).unwrap());
}

pub fn the_reply_next_to_a_strong_hit_ranks_with_it(store: &mut Store) {
    // The question (turn 1) matches the search by words and by meaning; its answer (turn 2) shares
    // no word with the search and is only a fair match by meaning. Other sessions: a turn close in
    // meaning with none of the words, and one with one of the words but about something else.
    let s = session(store, "w");
    store.append_turn(&s, &NewTurn::user("When do we deploy to production?")).unwrap();
    store.append_turn(&s, &NewTurn::assistant("On Fridays, once the postgres schema migrations ran.")).unwrap();
    let t = session(store, "w");
    store.append_turn(&t, &NewTurn::user("We ship the release as a rollout.")).unwrap();
    let u = session(store, "w");
    store
        .append_turn(&u, &NewTurn::user("The production database: postgres schema migrations for the orm and sql."))
        .unwrap();
    index_all(store, 8);
    let q = SearchQuery { limit: 10, ..SearchQuery::new("deploy production", SearchScope::All) };
    let found: Vec<(String, i64, Matched)> = store
        .search_hybrid(&q, Some(&embed("deploy production")))
        .unwrap()
        .into_iter()
        .map(|h| (h.session_id, h.turn_number, h.matched))
        .collect();
    let at = |i: usize| found.get(i).map(|h| (h.0.as_str(), h.1, h.2));
    assert_eq!(at(0), Some((s.as_str(), 1, Matched::Both)), "{found:?}");
    // Without its neighbour it would rank last of the four; next to the best hit it comes second.
    assert_eq!(at(1), Some((s.as_str(), 2, Matched::Meaning)), "the answer comes right after its question: {found:?}");
    assert_eq!(at(2), Some((t.as_str(), 1, Matched::Meaning)), "{found:?}");
    assert_eq!(at(3), Some((u.as_str(), 1, Matched::Words)), "{found:?}");
}

pub fn semantic_search_keeps_to_scope_and_fork_points(store: &mut Store) {
    let a = session(store, "alpha");
    store.append_turn(&a, &NewTurn::user("postgres schema migrations are run by hand")).unwrap();
    store.append_turn(&a, &NewTurn::assistant("ok")).unwrap();
    store.append_turn(&a, &NewTurn::user("the release goes to production on monday")).unwrap();
    let fork = store.fork_session(&a, 2).unwrap();
    store.append_turn(&fork.id, &NewTurn::user("the rollout waits for the database")).unwrap();
    let b = session(store, "beta");
    store.append_turn(&b, &NewTurn::user("deploy the orm to production")).unwrap();
    index_all(store, 3);

    // The fork shows its parent's turns 1–2 and its own turn 3, not the parent's turn 3.
    let in_fork = hybrid(store, "release rollout", SearchScope::Session { session_id: fork.id.clone() });
    assert!(in_fork.iter().any(|h| h.0 == 3), "{in_fork:?}");
    let ids: Vec<String> = store
        .search_hybrid(
            &SearchQuery::new("release production", SearchScope::Session { session_id: fork.id.clone() }),
            Some(&embed("release production")),
        )
        .unwrap()
        .into_iter()
        .map(|h| h.session_id)
        .collect();
    assert!(!ids.contains(&a) || ids.iter().all(|s| s == &fork.id || s == &a), "{ids:?}");
    let parent_turn_3 = store
        .search_hybrid(
            &SearchQuery::new("release production", SearchScope::Session { session_id: fork.id.clone() }),
            Some(&embed("release production")),
        )
        .unwrap()
        .into_iter()
        .any(|h| h.session_id == a && h.turn_number == 3);
    assert!(!parent_turn_3, "the parent's turn after the fork point is not the fork's");
    // Workspace scope: beta's turn is never an alpha hit.
    let alpha = store
        .search_hybrid(
            &SearchQuery::new("deploy", SearchScope::Workspace { workspace: "alpha".into() }),
            Some(&embed("deploy")),
        )
        .unwrap();
    assert!(alpha.iter().all(|h| h.session_id != b), "{alpha:?}");
    let all = store.search_hybrid(&SearchQuery::new("deploy", SearchScope::All), Some(&embed("deploy"))).unwrap();
    assert!(all.iter().any(|h| h.session_id == b));
}

pub fn vectors_go_with_their_turn_and_a_fork_keeps_its_copies(store: &mut Store) {
    let p = session(store, "w");
    store.append_turn(&p, &NewTurn::user("the password rotates weekly")).unwrap();
    store.append_turn(&p, &NewTurn::assistant("noted")).unwrap();
    let f = store.fork_session(&p, 1).unwrap();
    index_all(store, 10);
    // The fork shows the parent's turn 1 (not its turn 2, which is after the fork point).
    let in_fork = hybrid(store, "login", SearchScope::Session { session_id: f.id.clone() });
    assert_eq!(in_fork, [(1, Matched::Meaning)]);

    store.delete_session(&p).unwrap();
    // The parent's vectors went with it; the fork's copies of its turns are new turns, indexed anew.
    let progress = store.semantic_progress().unwrap();
    assert!(!progress.complete(), "the fork's copies wait to be embedded: {progress:?}");
    assert!(hybrid(store, "login", SearchScope::All).iter().all(|h| h.1 == Matched::Words));
    index_all(store, 10);
    let found = store.search_hybrid(&SearchQuery::new("login", SearchScope::All), Some(&embed("login"))).unwrap();
    let found: Vec<(&str, i64, Matched)> =
        found.iter().map(|h| (h.session_id.as_str(), h.turn_number, h.matched)).collect();
    assert_eq!(found, [(f.id.as_str(), 1, Matched::Meaning)]);
}

pub fn a_model_change_reindexes_and_indexing_resumes_where_it_stopped(store: &mut Store) {
    let s = session(store, "w");
    for i in 0..7 {
        store.append_turn(&s, &NewTurn::user(format!("turn {i} about postgres"))).unwrap();
    }
    store.append_turn(&s, &NewTurn::assistant("")).unwrap();
    let first = store.semantic_pending(3).unwrap();
    assert_eq!(first.chunks.len(), 3);
    let vectors: Vec<Vec<f32>> = first.chunks.iter().map(|c| embed(&c.text)).collect();
    store.put_vectors(&first, &vectors).unwrap();
    assert_eq!(store.semantic_progress().unwrap().indexed, 3);
    // The next batch starts after the saved one (a reload reads the same cursor from the archive).
    let next = store.semantic_pending(3).unwrap();
    assert_eq!(next.chunks[0].turn_id, first.chunks[2].turn_id + 1);
    assert_eq!(index_all(store, 3), 2, "5 turns left, one of them empty: two batches");
    assert!(store.semantic_progress().unwrap().complete());

    let mismatched = store.semantic_pending(1).unwrap();
    assert!(mismatched.is_empty());
    let unknown = store.set_semantic_model("another-model@1").unwrap_err().to_string();
    assert!(unknown.contains("does not know"), "{unknown}");
    assert_eq!(store.semantic_model().unwrap(), semantic::MODEL, "an unknown model changes nothing");
    assert!(store.semantic_progress().unwrap().complete());

    // The larger model: its vectors have 768 dimensions, and the 384 of the first are never compared.
    let settings = store.semantic_settings().unwrap();
    assert_eq!(settings.model, semantic::MODEL, "the settings name the index's model");
    store.set_semantic_settings(&SemanticSettings { model: MPNET.id.into(), ..settings.clone() }).unwrap();
    assert_eq!(store.semantic_model().unwrap(), "all-mpnet-base-v2@1");
    assert_eq!(store.semantic_settings().unwrap(), SemanticSettings { model: MPNET.id.into(), ..settings });
    assert_eq!(store.semantic_progress().unwrap().indexed, 0, "a new model starts from the first turn");
    let q = SearchQuery::new("database", SearchScope::All);
    let found = store.search_hybrid(&q, Some(&embed_in("database", MPNET.dims))).unwrap();
    assert!(found.iter().all(|h| h.matched == Matched::Words), "no vector of the old model is compared: {found:?}");
    let batch = store.semantic_pending(100).unwrap();
    let short: Vec<Vec<f32>> = batch.chunks.iter().map(|c| embed(&c.text)).collect();
    let refused = store.put_vectors(&batch, &short).unwrap_err().to_string();
    assert!(refused.contains("384 dimensions for an index of 768"), "{refused}");
    assert_eq!(store.semantic_progress().unwrap().indexed, 0, "nothing of the refused batch is kept");
    assert_eq!(index_all(store, 100), 1);
    assert_eq!(hybrid(store, "database", SearchScope::All).len(), 7);
    let words = SearchQuery::new("postgres", SearchScope::All);
    let other = store.search_hybrid(&words, Some(&embed("postgres"))).unwrap();
    assert_eq!(other.len(), 7, "a query embedded by the other model searches by words");
    assert!(other.iter().all(|h| h.matched == Matched::Words), "{other:?}");
}

pub fn long_turns_are_embedded_in_chunks_and_changed_text_again(store: &mut Store) {
    let s = session(store, "w");
    let filler = "lorem ipsum dolor sit amet ".repeat(200);
    store.append_turn(&s, &NewTurn::user(format!("{filler} and the deploy happens at noon"))).unwrap();
    let batch = store.semantic_pending(10).unwrap();
    assert!(batch.chunks.len() > 2 && batch.chunks.len() <= MAX_CHUNKS);
    assert!(batch.chunks.iter().enumerate().all(|(i, c)| c.chunk == i as u32 && c.turn_id == batch.chunks[0].turn_id));
    let vectors: Vec<Vec<f32>> = batch.chunks.iter().map(|c| embed(&c.text)).collect();
    store.put_vectors(&batch, &vectors).unwrap();
    // The last chunk holds "deploy": the turn is found through it.
    assert_eq!(hybrid(store, "release", SearchScope::All).first(), Some(&(1, Matched::Meaning)));

    // A reply cut short and finalised later is embedded again with its final text.
    store.append_turn(&s, &NewTurn::user("and the database?")).unwrap();
    let mut partial = NewTurn::assistant("The sql");
    partial.status = cowork_core::TurnStatus::Interrupted;
    store.append_turn(&s, &partial).unwrap();
    index_all(store, 10);
    store.finalize_turn(&s, 3, &NewTurn::assistant("The login flow refreshes tokens hourly.")).unwrap();
    assert!(!store.semantic_progress().unwrap().complete(), "the finalised turn waits to be embedded again");
    index_all(store, 10);
    assert_eq!(hybrid(store, "password", SearchScope::All).first().map(|h| h.0), Some(3));
}

/// A text file sent with a message is embedded after the message's own text, headed by its name, so a
/// question about what only the file says finds the turn by meaning; an image is not text to embed.
pub fn a_text_file_is_embedded_with_its_turn(store: &mut Store) {
    use cowork_core::NewAttachment;
    let s = session(store, "w");
    let files = [
        NewAttachment::new("notes.md", "text/markdown", "Decided: the auth tokens expire after an hour.".as_bytes()),
        NewAttachment::new("shot.png", "image/png", tiny_png()),
    ];
    store.append_turn_with_attachments(&s, &NewTurn::user("Here is the plan."), &files, 0).unwrap();
    store.append_turn(&s, &NewTurn::assistant("Thanks, I read it.")).unwrap();
    store.append_turn(&s, &NewTurn::user("We ship on Fridays.")).unwrap();
    let batch = store.semantic_pending(1).unwrap();
    let texts: Vec<&str> = batch.chunks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["Here is the plan.", "notes.md\nDecided: the auth tokens expire after an hour."]);
    assert_eq!(batch.chunks.iter().map(|c| c.chunk).collect::<Vec<_>>(), [0, 1]);
    index_all(store, 10);
    let lexical = store.search(&SearchQuery::new("logging in", SearchScope::All)).unwrap();
    assert!(lexical.is_empty(), "no word of the question is in the archive: {lexical:?}");
    assert_eq!(hybrid(store, "logging in", SearchScope::All).first(), Some(&(1, Matched::Meaning)));
}

/// The smallest valid PNG (1×1), as an image attachment.
fn tiny_png() -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
    png.extend_from_slice(&[0x1f, 0x15, 0xc4, 0x89]);
    png
}

pub fn the_index_is_in_no_export_and_no_sync_message(store: &mut Store) {
    store.set_semantic_settings(&SemanticSettings { enabled: true, ..Default::default() }).unwrap();
    store.enable_sync("Laptop").unwrap();
    let s = session(store, "w");
    store.append_turn(&s, &NewTurn::user("the auth tokens expire after an hour")).unwrap();
    let space = Space::Personal;
    let waiting = store.sync_waiting(&space).unwrap();
    let export = store.export_jsonl(None).unwrap();
    index_all(store, 10);
    assert_eq!(store.sync_waiting(&space).unwrap(), waiting, "indexing queued nothing to sync");
    assert_eq!(store.export_jsonl(None).unwrap(), export, "the export is the same with the index built");
    let messages = serde_json::to_string(&store.sync_outgoing(&space, 100).unwrap()).unwrap();
    assert!(!messages.contains("semantic") && !messages.contains("all-MiniLM"), "{messages}");
    assert!(store.semantic_settings().unwrap().enabled);
}
