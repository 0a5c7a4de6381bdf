//! Context assembly reads a session through the turns it read for the request before
//! (`store/turn_cache.rs`): whatever changed in between, the next request is what a fresh read of the
//! whole session gives.

use super::{session, user};
use cowork_core::context::{assemble_context, AssembledContext, ContextSettings};
use cowork_core::state::SessionState;
use cowork_core::store::{SessionTurns, Store};
use cowork_core::{Error, NewTurn, TurnStatus};

/// The context of `sid` as the agent loop assembles it (through the kept turns), checked against the
/// same assembly over every turn read afresh; returns it.
fn assembled(store: &Store, sid: &str, window: i64) -> AssembledContext {
    let settings = ContextSettings { context_window: window, output_reserve: 500, ..ContextSettings::default() };
    let state = SessionState::default();
    let kept = assemble_context(&settings, "You help.", &state, &SessionTurns::new(store, sid).unwrap())
        .unwrap_or_else(|e| panic!("assembling {sid} at {window} tokens: {e}"));
    let all = store.turns_range(sid, 1, store.turn_count(sid).unwrap()).unwrap();
    let fresh = assemble_context(&settings, "You help.", &state, all.as_slice()).unwrap();
    assert_eq!(kept, fresh, "session {sid} at a {window}-token window: the kept turns are stale");
    kept
}

/// Whether a message of the request holds `needle`.
fn sent(ctx: &AssembledContext, needle: &str) -> bool {
    ctx.messages.iter().any(|m| m.content.contains(needle))
}

pub fn context_sees_every_change_since_the_last_request(store: &mut Store) {
    let sid = session(store, "w");
    for i in 1..=40 {
        user(store, &sid, &format!("question {i} about the harbour"));
        store.append_turn(&sid, &NewTurn::assistant(format!("answer {i}: the tide is at {i} metres"))).unwrap();
    }
    // A small window reads only the newest turns; a large one then reads the older ones too.
    let small = assembled(store, &sid, 1_500);
    assert!(sent(&small, "answer 40") && !sent(&small, "answer 1:"), "{:?}", small.manifest);
    let large = assembled(store, &sid, 200_000);
    assert!(sent(&large, "answer 1:") && sent(&large, "answer 40"));

    // A new turn is in the next request.
    user(store, &sid, "and the moon?");
    assert!(sent(&assembled(store, &sid, 200_000), "and the moon?"));

    // A reply streamed in as the agent loop writes it (an interrupted turn, checkpointed, finalised)
    // leaves the archive's change counter alone, so the next request still reads only what is new...
    let generation = |store: &Store| -> i64 {
        store.connection().query_row("SELECT generation FROM turn_changes", [], |r| r.get(0)).unwrap()
    };
    let before = generation(store);
    let reply = store.append_turn(&sid, &NewTurn::assistant("").with_status(TurnStatus::Interrupted)).unwrap();
    store.checkpoint_turn(&sid, reply.turn_number, "Tides follow").unwrap();
    store.finalize_turn(&sid, reply.turn_number, &NewTurn::assistant("Tides follow the moon.")).unwrap();
    assert_eq!(generation(store), before, "a streamed reply does not empty what is kept");
    assert!(sent(&assembled(store, &sid, 200_000), "Tides follow the moon."));
    // ...and one read while it was still streaming is read again: its checkpoints and its final text
    // replace what was kept.
    let reply = store.append_turn(&sid, &NewTurn::assistant("").with_status(TurnStatus::Interrupted)).unwrap();
    assembled(store, &sid, 200_000);
    store.checkpoint_turn(&sid, reply.turn_number, "The moon pulls").unwrap();
    assert!(sent(&assembled(store, &sid, 200_000), "The moon pulls"));
    store.finalize_turn(&sid, reply.turn_number, &NewTurn::assistant("The moon pulls the sea.")).unwrap();
    assert!(sent(&assembled(store, &sid, 200_000), "The moon pulls the sea."));
    // A reply stopped for good stays interrupted, kept, and checked each time.
    let stopped = store.append_turn(&sid, &NewTurn::assistant("").with_status(TurnStatus::Interrupted)).unwrap();
    store.checkpoint_turn(&sid, stopped.turn_number, "The sea rises twi").unwrap();
    user(store, &sid, "go on");
    assert!(sent(&assembled(store, &sid, 200_000), "The sea rises twi"));
    user(store, &sid, "and then?");
    assert!(sent(&assembled(store, &sid, 200_000), "and then?"));

    // A fork shows its parent's turns up to the fork point, then its own; both stay right while
    // requests alternate between them and other sessions push them out of what is kept.
    let fork = store.fork_session(&sid, 19).unwrap().id;
    user(store, &fork, "fork: what about wind?");
    let f = assembled(store, &fork, 200_000);
    assert!(sent(&f, "question 10 about") && sent(&f, "fork: what about wind?") && !sent(&f, "answer 10:"));
    let others: Vec<String> = (0..3).map(|i| session(store, &format!("other{i}"))).collect();
    for o in &others {
        user(store, o, "unrelated");
        assembled(store, o, 200_000);
    }
    user(store, &sid, "parent again");
    assert!(sent(&assembled(store, &sid, 200_000), "parent again"));
    assert!(!sent(&assembled(store, &fork, 200_000), "parent again"));

    // The parent deleted: the fork keeps every turn it showed.
    store.delete_session(&sid).unwrap();
    let f = assembled(store, &fork, 200_000);
    assert!(sent(&f, "question 1 about") && sent(&f, "fork: what about wind?"));
    assert!(matches!(SessionTurns::new(store, &sid), Err(Error::SessionNotFound(_))));
}
