//! The LoCoMo harness on a tiny hand-made conversation (no dataset needed): reading the data, the
//! import, recall at k, the age thirds and the BM25 baseline, so the harness itself can fail.
#![cfg(not(target_arch = "wasm32"))]

use cowork_bench::locomo::bm25::{tokens, without_stop_words, Bm25};
use cowork_bench::locomo::metric::{recall_at, Scores, Tally};
use cowork_bench::locomo::retriever::{self, recall_query, Context, Form, Retriever};
use cowork_bench::locomo::{
    age_third, archive, parse_conversation, parse_date_time, parse_evidence, report, Category, Conversation,
};
use cowork_core::store::Store;
use cowork_core::{Role, SearchScope};
use serde_json::json;
use std::collections::HashMap;

/// Two sessions, six turns; questions with one, two and unresolvable evidence, and an adversarial one.
fn tiny() -> Conversation {
    let c = json!({
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy called Biscuit last week!"},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely. I am training for the city marathon.",
             "blip_caption": "a photo of running shoes"},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "Good luck with the training."},
        ],
        "session_2_date_time": "9:05 am on 1 June, 2023",
        "session_2": [
            {"speaker": "Bob", "dia_id": "D2:1", "text": "I finished the marathon in four hours."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "Biscuit chewed my violin case, sadly."},
            {"speaker": "Bob", "dia_id": "D2:3", "text": "Oh no, puppies do that."},
        ],
        "session_3_date_time": "10:00 am on 2 June, 2023",
    });
    let qa = json!([
        {"question": "What is the name of Ann's puppy?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
        {"question": "What did Biscuit chew, and when was Biscuit adopted?", "evidence": ["D2:2; D1:1"], "category": 1},
        {"question": "When did Bob run the marathon?", "evidence": ["D:2:01", "D9:9"], "category": 2},
        {"question": "Does Ann like cats?", "evidence": [], "category": 3},
        {"question": "What is Bob's dog called?", "evidence": ["D1:1"], "category": 5},
    ]);
    parse_conversation("7", &c, &qa).unwrap()
}

#[test]
fn reads_sessions_questions_and_evidence_as_the_data_writes_them() {
    let conv = tiny();
    assert_eq!(conv.sessions.len(), 2, "a session with a date but no turns is no session");
    assert_eq!(
        conv.sessions[0].turns[1].content(),
        "Bob: Lovely. I am training for the city marathon. [shares a photo: a photo of running shoes]"
    );
    assert_eq!(conv.sessions[1].start_ms, parse_date_time("9:05 am on 1 June, 2023").unwrap());
    // 2023-05-08 13:56 UTC.
    assert_eq!(parse_date_time("1:56 pm on 8 May, 2023"), Some(1_683_554_160_000));
    assert_eq!(parse_date_time("12:10 am on 1 January, 2022"), Some(1_640_995_800_000));
    assert_eq!(parse_evidence("D8:6; D9:17"), ["D8:6", "D9:17"]);
    assert_eq!(parse_evidence("D:11:26"), ["D11:26"]);
    assert_eq!(parse_evidence("D30:05"), ["D30:5"]);
    assert!(parse_evidence("D").is_empty());
    let kept: Vec<(&str, Category, Vec<&str>)> = conv
        .questions
        .iter()
        .map(|q| (q.text.as_str(), q.category, q.evidence.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        kept,
        [
            ("What is the name of Ann's puppy?", Category::SingleHop, vec!["D1:1"]),
            ("What did Biscuit chew, and when was Biscuit adopted?", Category::MultiHop, vec!["D2:2", "D1:1"]),
            ("When did Bob run the marathon?", Category::Temporal, vec!["D2:1"]),
        ]
    );
    assert_eq!(
        (conv.counts.asked, conv.counts.kept, conv.counts.adversarial, conv.counts.unresolved_evidence),
        (4, 3, 1, 1)
    );
}

#[test]
fn recall_at_k_is_the_fraction_of_the_evidence_in_the_top_k() {
    let ranked = [10, 20, 30, 40, 50, 60];
    assert_eq!(recall_at(&ranked, &[10], 1), 1.0);
    assert_eq!(recall_at(&ranked, &[20, 60], 5), 0.5, "one of two evidence turns in the top 5");
    assert_eq!(recall_at(&ranked, &[20, 60], 6), 1.0);
    assert_eq!(recall_at(&ranked, &[20, 60, 70], 25), 2.0 / 3.0, "k past the end counts what was retrieved");
    assert_eq!(recall_at(&[], &[1], 5), 0.0);
    let mut tally = Tally::default();
    tally.add(&ranked, &[10]); // 1, 1, 1
    tally.add(&ranked, &[20, 60]); // 0.5, 1, 1
    tally.add(&ranked, &[99]); // 0, 0, 0
    assert_eq!(tally.n, 3);
    assert_eq!(tally.means(), [1.5 / 3.0, 2.0 / 3.0, 2.0 / 3.0], "averaged over questions, not evidence turns");

    // By age, a question counts in each third holding some of its evidence, on that evidence only.
    let mut scores = Scores::default();
    scores.add(Category::MultiHop, &ranked, &[(10, 2), (99, 0)]);
    assert_eq!(scores.overall.means(), [0.5; 3]);
    assert_eq!((scores.by_age[0].n, scores.by_age[1].n, scores.by_age[2].n), (1, 0, 1));
    assert_eq!((scores.by_age[0].means(), scores.by_age[2].means()), ([0.0; 3], [1.0; 3]));
    assert_eq!(scores.by_category[Category::MultiHop.index()].n, 1);
    assert_eq!(scores.by_category[Category::SingleHop.index()].n, 0);
    assert_eq!((0..9).map(|p| age_third(p, 9)).collect::<Vec<_>>(), [0, 0, 0, 1, 1, 1, 2, 2, 2]);
}

#[test]
fn bm25_ranks_the_obvious_document_first_and_scores_by_the_textbook() {
    assert_eq!(tokens("Ann's VIOLIN-case, 2023!"), ["ann", "s", "violin", "case", "2023"]);
    assert_eq!(without_stop_words("When did Ann's puppy chew the violin?"), "ann puppy chew violin");
    let docs = [(1, "the cat sat on the mat"), (2, "a violin and a violin case"), (3, "the dog and the cat")];
    let index = Bm25::new(docs);
    assert_eq!(index.len(), 3);
    let hits = index.search("which violin?", 10);
    assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [2], "only documents with a query term");
    // tf 2, length 6 of an average 17/3: idf(1 of 3) · 2·2.2 / (2 + 1.2·(0.25 + 0.75·6/(17/3))).
    let idf = (1.0f64 + 2.5 / 1.5).ln();
    let expected = idf * 2.0 * 2.2 / (2.0 + 1.2 * (0.25 + 0.75 * 6.0 / (17.0 / 3.0)));
    assert!((hits[0].1 - expected).abs() < 1e-12, "{} vs {expected}", hits[0].1);
    let ranked: Vec<i64> = index.search("cat", 10).iter().map(|h| h.0).collect();
    assert_eq!(ranked, [3, 1], "the same tf, the shorter document first");
    assert_eq!(index.search("the cat", 1).len(), 1, "at most the limit");
}

#[test]
fn the_import_and_the_searches_find_the_evidence_in_its_workspace_only() {
    let conv = tiny();
    let mut store = Store::open_in_memory().unwrap();
    let imported = archive::import(&mut store, &conv).unwrap();
    assert_eq!(imported.workspace, "locomo-7");
    let sessions = store
        .list_sessions(&cowork_core::store::SessionFilter { workspace: Some("locomo-7".into()), ..Default::default() })
        .unwrap();
    let mut titles: Vec<String> = sessions.iter().map(|s| s.title.clone()).collect();
    titles.sort();
    assert_eq!(titles, ["Session 1 — 1:56 pm on 8 May, 2023", "Session 2 — 9:05 am on 1 June, 2023"]);
    let turns = store.get_turns("locomo-7-session-1", 0, 10).unwrap();
    assert_eq!(turns.iter().map(|t| t.role).collect::<Vec<_>>(), [Role::User, Role::Assistant, Role::User]);
    assert_eq!(turns[0].created_at + 1000, turns[1].created_at, "one second apart");
    assert_eq!(turns[0].created_at, conv.sessions[0].start_ms);
    assert_eq!(turns[1].id, imported.turn_ids["D1:2"]);

    // Another conversation in another workspace of the same archive is never found.
    let mut other = tiny();
    other.id = "8".into();
    let other = archive::import(&mut store, &other).unwrap();
    let q = recall_query("puppy", "locomo-7");
    assert_eq!(q.scope, SearchScope::Workspace { workspace: "locomo-7".into() });
    assert!(q.roles.is_empty() && !q.prefix_last && q.limit == 25);

    let bm25 = [&imported, &other]
        .iter()
        .map(|i| (i.workspace.clone(), Bm25::new(i.texts.iter().map(|(id, t)| (*id, t.as_str())))))
        .collect::<HashMap<_, _>>();
    let embedder = retriever::load_embedder(&cowork_core::semantic::MINILM).unwrap();
    retriever::index(&mut store, &embedder).unwrap();
    let ctx = Context { store: &store, bm25, embedder: &embedder, embedded: Default::default() };
    let ours: Vec<i64> = imported.turn_ids.values().copied().collect();
    for retriever in Retriever::ALL {
        for form in Form::ALL {
            let found =
                retriever.retrieve(&ctx, "locomo-7", &form.apply("When did Ann adopt the puppy Biscuit?")).unwrap();
            assert_eq!(found.first(), Some(&imported.turn_ids["D1:1"]), "{retriever:?} {form:?}");
            assert!(found.iter().all(|id| ours.contains(id)), "{retriever:?} {form:?} stays in its workspace");
        }
    }
}

#[test]
fn a_run_scores_every_question_of_both_sets() {
    let convs: Vec<Conversation> = (0..6)
        .map(|i| {
            let mut c = tiny();
            c.id = (20 + i).to_string();
            c
        })
        .collect();
    let mut store = Store::open_in_memory().unwrap();
    let results = report::run(&mut store, &convs, &cowork_core::semantic::MINILM).unwrap();
    assert_eq!(results.rows.len(), Retriever::ALL.len() * Form::ALL.len());
    assert_eq!((results.questions(0), results.questions(1)), (15, 3), "5 conversations tune, the rest held out");
    assert_eq!(results.turns, 36);
    for row in &results.rows {
        let r = row.sets[0].overall.means();
        assert!(r[0] <= r[1] && r[1] <= r[2] && r[2] > 0.5, "{:?} {:?}: {r:?}", row.retriever, row.form);
    }
    let json = results.to_json();
    assert_eq!(json["sets"]["held_out"]["conversations"], json!(["25"]));
    assert_eq!(json["questions"]["kept"], 18);
}
