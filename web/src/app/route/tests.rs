use super::Route;

fn session(id: &str, turn: Option<i64>) -> Route {
    Route::Session { id: id.to_owned(), turn }
}

#[track_caller]
fn check(hash: &str, expect: Route) {
    assert_eq!(Route::parse(hash), expect, "reading the hash {hash:?}");
}

#[test]
fn hashes_name_the_welcome_screen_a_session_or_a_turn() {
    check("", Route::Home);
    check("#", Route::Home);
    check("#/", Route::Home);
    check("#/s/0193a1b2-c3d4", session("0193a1b2-c3d4", None));
    check("/s/abc", session("abc", None));
    check("#/s/abc/t/17", session("abc", Some(17)));
    // A turn that is not a turn number opens the session at its end.
    check("#/s/abc/t/x", session("abc", None));
    check("#/s/abc/t/0", session("abc", None));
    // Anything else is the welcome screen, never a session with an odd id.
    check("#/s/", Route::Home);
    check("#/settings", Route::Home);
    check("#/s/a/b/c/d/e", Route::Home);
    check("#/s/%zz", Route::Home);
}

#[test]
fn every_session_id_survives_its_url() {
    for id in ["0193a1b2-c3d4-7e8f-9abc-def012345678", "chatgpt:abc/def", "a b#c%d", "café ☕", "t/7"] {
        for turn in [None, Some(3)] {
            let route = session(id, turn);
            let hash = route.to_hash();
            assert!(!hash[1..].contains(['#', ' ']), "{hash:?} must be one fragment");
            assert_eq!(
                hash.matches('/').count(),
                if turn.is_some() { 4 } else { 2 },
                "a '/' of the id is escaped: {hash:?}"
            );
            assert_eq!(Route::parse(&hash), route, "the id {id:?} went out as {hash:?}");
        }
    }
    assert_eq!(session("abc", Some(4)).to_hash(), "#/s/abc/t/4");
    assert_eq!(Route::Home.to_hash(), "#/");
}

#[test]
fn the_app_is_where_its_open_session_is() {
    assert_eq!(Route::of(None, Some(3)), Route::Home);
    assert_eq!(Route::of(Some("abc".into()), None), session("abc", None));
    assert_eq!(Route::of(Some("abc".into()), Some(3)), session("abc", Some(3)));
}
