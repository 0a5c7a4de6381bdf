use super::*;
use crate::chat::test_data::{session, turn, turns};
use crate::chat::VISIBLE_TURNS;
use crate::protocol::{ErrorKind, Problem};

/// A view with session "s" open (two turns shown), session "t" listed, and a draft.
fn open_view() -> ChatView {
    ChatView {
        sessions: vec![session("s", "first", "w", "m"), session("t", "", "w", "m")],
        current: Some("s".into()),
        turns: turns(1..=2),
        draft: "half a thought".into(),
        ..ChatView::default()
    }
}

/// Applies `event` to `view` and returns the result.
fn after(mut view: ChatView, request: u64, event: Event) -> ChatView {
    view.apply_event(request, &event);
    view
}

fn assistant(n: i64, session_id: &str, text: &str) -> Turn {
    Turn { role: Role::Assistant, session_id: session_id.into(), content: text.into(), ..turn(n) }
}

#[test]
fn a_session_created_by_this_tab_opens_first_in_the_list() {
    let new = session("n", "", "w", "m");
    let v = after(open_view(), 7, Event::SessionCreated { session: new.clone() });
    assert_eq!(v.current.as_deref(), Some("n"));
    assert_eq!(v.sessions[0], new);
    assert_eq!(v.sessions.len(), 3);
}

#[test]
fn a_saved_user_turn_clears_the_draft_and_joins_the_window() {
    let v = after(open_view(), 7, Event::turn_appended(turn(3)));
    assert_eq!(v.draft, "", "the message is saved: the draft has done its job");
    assert_eq!(v.turns.iter().map(|t| t.turn_number).collect::<Vec<_>>(), [1, 2, 3]);
    // An assistant turn, updated in place (checkpoint, then final): the draft typed meanwhile stays.
    let v = after(open_view(), 7, Event::turn_appended(assistant(2, "s", "final")));
    assert_eq!(v.draft, "half a thought");
    assert_eq!(v.turns.len(), 2);
    assert_eq!(v.turns[1].content, "final");
    // A turn of a session that is not open is not shown.
    let v = after(open_view(), 7, Event::turn_appended(assistant(9, "t", "elsewhere")));
    assert_eq!(v.turns, turns(1..=2));
}

#[test]
fn a_saved_message_titles_its_untitled_session_and_lists_it_first() {
    // Sent from this tab (the composer says where a reply is written by this title).
    let message = Turn { session_id: "t".into(), content: "Plan the trip\nwith details".into(), ..turn(1) };
    let v = after(open_view(), 7, Event::turn_appended(message));
    assert_eq!((v.sessions[0].id.as_str(), v.sessions[0].title.as_str()), ("t", "Plan the trip"));
    assert_eq!(v.sessions[1].title, "first", "a titled session keeps its title");
}

#[test]
fn an_edited_message_leaves_the_composer_draft_alone() {
    let edit = Turn { metadata: serde_json::json!({"edited_from": {"session_id": "s", "turn_number": 1}}), ..turn(3) };
    let v = after(open_view(), 7, Event::turn_appended(edit));
    assert_eq!(v.draft, "half a thought", "the draft was not the message sent");
    assert_eq!(v.turns.len(), 3, "the edit is shown");
}

#[test]
fn the_window_stays_bounded_as_turns_arrive() {
    let mut v = ChatView { current: Some("s".into()), turns: turns(1..=VISIBLE_TURNS as i64), ..ChatView::default() };
    v.apply_event(7, &Event::turn_appended(turn(VISIBLE_TURNS as i64 + 1)));
    assert_eq!(v.turns.len(), VISIBLE_TURNS);
    assert_eq!(v.turns[0].turn_number, 2, "the oldest leaves");
}

#[test]
fn deltas_grow_the_streaming_text_only() {
    let delta = |n: i64, text: &str| Event::Delta { session_id: "s".into(), turn_number: n, text: text.into() };
    let v = after(open_view(), 7, delta(3, "Hel"));
    let v = after(v, 7, delta(3, "lo"));
    assert_eq!(v.streaming, Some((3, "Hello".to_owned())));
    assert_eq!(ChatView { streaming: None, ..v.clone() }, open_view(), "nothing else changed");
    assert_eq!(reduce(7, &delta(3, "x")), [Change::Streamed { turn_number: 3, text: "x".into() }]);
    let v = after(v, 7, delta(5, "Next"));
    assert_eq!(v.streaming, Some((5, "Next".to_owned())), "a new turn starts over");
}

/// The model's reasoning streams live beside (never into) the reply's text, and ends when the turn is
/// saved finished: from then on the turn shows the reasoning it was saved with.
#[test]
fn reasoning_streams_apart_from_the_text_until_the_turn_is_saved() {
    let thought =
        |n: i64, text: &str| Event::ReasoningDelta { session_id: "s".into(), turn_number: n, text: text.into() };
    let delta = |n: i64, text: &str| Event::Delta { session_id: "s".into(), turn_number: n, text: text.into() };
    assert_eq!(reduce(7, &thought(3, "Hm")), [Change::Thought { turn_number: 3, text: "Hm".into() }]);
    assert_eq!(reduce(0, &thought(3, "Hm")), [], "another tab's reply streams in that tab");
    let started = Turn { status: cowork_core::TurnStatus::Interrupted, ..assistant(3, "s", "") };
    let v = after(open_view(), 7, Event::turn_appended(started.clone()));
    let v = after(v, 7, thought(3, "Let me "));
    let v = after(v, 7, thought(3, "think."));
    assert_eq!(v.thinking, Some((3, "Let me think.".to_owned())));
    assert_eq!(v.streaming, None, "no reply text yet");
    let v = after(v, 7, delta(3, "Answer"));
    assert_eq!(v.thinking, Some((3, "Let me think.".to_owned())), "the text does not end the thinking");
    assert_eq!(v.streaming, Some((3, "Answer".to_owned())));
    // A reply continued after a takeover is re-announced interrupted: its reasoning streams again.
    let again = after(v.clone(), 7, Event::turn_appended(started));
    assert_eq!(again.thinking, None);
    // Another turn's save leaves it alone; this turn's finished save ends it.
    assert_eq!(after(v.clone(), 7, Event::turn_appended(assistant(2, "s", "x"))).thinking, v.thinking);
    let done = after(v, 7, Event::turn_appended(assistant(3, "s", "Answer")));
    assert_eq!(done.thinking, None);
    assert_eq!(done.turns.last().map(|t| t.content.as_str()), Some("Answer"));
    // The next call's reasoning (after a tool call) starts over.
    let next = after(done, 7, thought(5, "Now"));
    assert_eq!(next.thinking, Some((5, "Now".to_owned())));
}

/// A new owner continuing a reply after a takeover re-announces the cut turn and streams from its saved
/// words: the tab shows them once, not after what the old owner had already streamed.
#[test]
fn a_reply_continued_after_a_takeover_is_shown_once() {
    let delta = |n: i64, text: &str| Event::Delta { session_id: "s".into(), turn_number: n, text: text.into() };
    let v = after(open_view(), 7, delta(3, "Once upon a time, "));
    let v = after(v, 7, delta(3, "there"));
    let cut = Turn { status: cowork_core::TurnStatus::Interrupted, ..assistant(3, "s", "Once upon a time,") };
    let v = after(v, 7, Event::turn_appended(cut));
    assert_eq!(v.streaming, None, "the stream starts again");
    let v = after(v, 7, delta(3, "Once upon a time,"));
    let v = after(v, 7, delta(3, " there was a token."));
    assert_eq!(v.streaming, Some((3, "Once upon a time, there was a token.".to_owned())));
    // A finished turn, or another turn, leaves the stream alone.
    let done = assistant(4, "s", "other");
    assert_eq!(after(v.clone(), 7, Event::turn_appended(done)).streaming, v.streaming);
}

#[test]
fn tools_say_they_are_running_until_they_finish() {
    let started =
        Event::ToolStarted { session_id: "s".into(), turn_number: 3, name: "read_file".into(), arguments: "{}".into() };
    let v = after(open_view(), 7, started);
    assert_eq!(v.notice, Some(Notice::info("Running read_file…").about(Some("s".into()))));
    let finished = Event::ToolFinished {
        session_id: "s".into(),
        turn_number: 3,
        name: "read_file".into(),
        success: true,
        duration_ms: 4,
    };
    assert_eq!(after(v, 7, finished).notice, None);
}

#[test]
fn a_retry_counts_down_and_keeps_its_kind() {
    let retrying = Event::Retrying {
        attempt: 1,
        wait_ms: 1_500,
        kind: ErrorKind::Network,
        reason: "Could not reach the model endpoint (refused).".into(),
    };
    let v = after(open_view(), 7, retrying);
    let notice = v.notice.expect("a notice");
    assert_eq!(notice.text, "Could not reach the model endpoint (refused). Retrying in 2 s…");
    assert_eq!(notice.fix(), Some(Fix::Settings));
}

#[test]
fn a_delegated_task_keeps_its_checklist_through_status_only_events() {
    use cowork_core::orchestrator::ChecklistItem;
    let progress = |status: &str, checklist: Vec<ChecklistItem>| Event::TaskProgress {
        session_id: "s".into(),
        task_id: "t1".into(),
        event_type: "progress".into(),
        status: status.into(),
        goal: "add tests".into(),
        checklist,
    };
    let step = ChecklistItem { label: "Analyze".into(), status: "running".into(), detail: None, approval: None };
    let v = after(open_view(), 7, progress("executing", vec![step.clone()]));
    let v = after(v, 7, progress("completed", vec![]));
    assert_eq!(v.tasks.len(), 1);
    assert_eq!((v.tasks[0].status.as_str(), &v.tasks[0].checklist), ("completed", &vec![step]));
    assert!(v.tasks[0].is_over());
}

#[test]
fn an_approval_request_waits_for_the_user() {
    let asked = Event::ApprovalNeeded {
        call_id: "c1".into(),
        name: "delegate_task".into(),
        arguments: r#"{"goal":"x"}"#.into(),
    };
    let v = after(open_view(), 7, asked);
    let want = Approval { call_id: "c1".into(), name: "delegate_task".into(), arguments: r#"{"goal":"x"}"#.into() };
    assert_eq!(v.approval, Some(want));
}

#[test]
fn a_page_tool_request_changes_nothing_on_screen() {
    let requested = Event::ToolRequested { call_id: "c1".into(), name: "read_file".into(), arguments: "{}".into() };
    assert_eq!(after(open_view(), 7, requested), open_view(), "the client's tool runner answers it");
}

#[test]
fn an_error_is_shown_with_its_kind() {
    let problem = Problem::new(ErrorKind::StorageFull, "the browser's storage for this site is full");
    let v = after(open_view(), 7, Event::Error(problem.clone()));
    assert_eq!(v.notice, Some(Notice::problem(&problem).about(Some("s".into()))), "about the open session's reply");
    assert_eq!(v.notice.unwrap().fix(), Some(Fix::Storage));
}

#[test]
fn a_deleted_open_session_closes_and_the_list_is_read_again() {
    let v = after(open_view(), 7, Event::SessionsChanged { deleted: Some("s".into()) });
    assert_eq!((v.current.as_deref(), v.turns.len(), v.sessions.len()), (None, 0, 1));
    assert_eq!(v.sessions_stale, 1);
    let v = after(open_view(), 7, Event::SessionsChanged { deleted: None });
    assert_eq!((v.current.as_deref(), v.turns.len(), v.sessions_stale), (Some("s"), 2, 1));
}

#[test]
fn changes_from_other_tabs_show_turns_and_sessions_but_never_touch_this_tab() {
    // A turn: shown in the open session, its session to the top with its count and title.
    let mut first = turn(1);
    first.session_id = "t".into();
    first.content = "Plan the release\nsecond line".into();
    let v = after(open_view(), 0, Event::turn_appended(first));
    assert_eq!(v.turns, turns(1..=2), "session t is not open");
    assert_eq!((v.sessions[0].id.as_str(), v.sessions[0].title.as_str()), ("t", "Plan the release"));
    assert_eq!(v.draft, "half a thought", "the draft is this tab's");
    let v = after(open_view(), 0, Event::turn_appended(turn(3)));
    assert_eq!(v.turns.len(), 3);
    assert_eq!((v.sessions[0].turn_count, v.draft.as_str()), (3, "half a thought"));
    // A session: listed, not opened; listed once.
    let other = session("o", "", "w", "m");
    let v = after(open_view(), 0, Event::SessionCreated { session: other.clone() });
    let v = after(v, 0, Event::SessionCreated { session: other });
    assert_eq!((v.current.as_deref(), v.sessions.len()), (Some("s"), 3));
    // Deletions apply; progress of other tabs' replies does not reach this screen.
    let v = after(open_view(), 0, Event::SessionsChanged { deleted: Some("s".into()) });
    assert_eq!((v.current, v.sessions_stale), (None, 1));
    let quiet = [
        Event::Delta { session_id: "s".into(), turn_number: 3, text: "x".into() },
        Event::Error(Problem::new(ErrorKind::Auth, "bad key")),
        Event::ToolStarted { session_id: "s".into(), turn_number: 3, name: "x".into(), arguments: "{}".into() },
        Event::ApprovalNeeded { call_id: "c".into(), name: "delegate_task".into(), arguments: "{}".into() },
    ];
    for event in quiet {
        assert_eq!(after(open_view(), 0, event.clone()), open_view(), "{event:?}");
    }
}

/// Regression: `reduce` dropped `TaskProgress.session_id`, so while session A delegated, opening B
/// showed A's checklist (with Cancel and Approve) and A's notices under B.
#[test]
fn a_replys_cards_and_notices_belong_to_its_session() {
    use cowork_core::orchestrator::ChecklistItem;
    // A reply is written in "s"; the user has opened "t" meanwhile.
    let mut v = ChatView { replying_in: Some("s".into()), current: Some("t".into()), ..open_view() };
    v.apply_event(
        7,
        &Event::TaskProgress {
            session_id: "s".into(),
            task_id: "t1".into(),
            event_type: "progress".into(),
            status: "executing".into(),
            goal: "add tests".into(),
            checklist: vec![ChecklistItem {
                label: "Analyze".into(),
                status: "running".into(),
                detail: None,
                approval: None,
            }],
        },
    );
    assert_eq!(v.tasks[0].session_id, "s", "the card knows its session");
    let started = Event::ToolStarted {
        session_id: "s".into(),
        turn_number: 3,
        name: "delegate_task".into(),
        arguments: "{}".into(),
    };
    v.apply_event(7, &started);
    let notice = v.notice.clone().expect("a notice");
    assert_eq!(notice.session.as_deref(), Some("s"));
    assert!(!notice.shown_in(Some("t")), "not shown under another session");
    assert!(notice.shown_in(Some("s")), "shown in its own");
    let failed = Problem::new(ErrorKind::Network, "the orchestrator went away");
    v.apply_event(7, &Event::Error(failed));
    assert!(!v.notice.as_ref().unwrap().shown_in(Some("t")), "a reply's failure too");
    assert!(Notice::info("Storage is not available").shown_in(Some("t")), "the app's notices show anywhere");
}
