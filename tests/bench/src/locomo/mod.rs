//! The LoCoMo retrieval benchmark (`examples/locomo.rs`): how well the archive's search finds the
//! turns that answer a question about a long conversation.
//!
//! LoCoMo (the public `snap-research/locomo` repository, `data/locomo10.zip`) is 10 long
//! conversations between two people, each of many dated sessions, with questions whose evidence
//! turns are annotated (`D<session>:<turn>`). Its repository states no licence, so the data is not
//! in this repository: the bench reads it from `COWORK_LOCOMO` (see README → Benchmarks).
//!
//! This module reads the data ([`load_dir`], [`parse_conversation`]); [`archive`] imports a
//! conversation as a workspace of sessions, [`retriever`] runs the searches compared, [`bm25`] is
//! the textbook baseline, [`metric`] scores recall at k and [`report`] prints and saves the figures.

pub mod archive;
pub mod bm25;
pub mod metric;
pub mod report;
pub mod retriever;

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The question categories used (5, adversarial, is left out as in the LoCoMo paper). The numbers
/// are the dataset's `category` field; its names are those of the LoCoMo evaluation code
/// (`task_eval/evaluation.py` scores 1 as multi-hop, 2–4 as single answers, 5 as adversarial, and
/// the questions read so: every category-2 question asks "when", category 3 needs world knowledge).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// 1: the answer combines several turns, often of different sessions.
    MultiHop,
    /// 2: when something happened.
    Temporal,
    /// 3: the conversation plus world knowledge or common sense.
    OpenDomain,
    /// 4: one fact said in one place.
    SingleHop,
}

impl Category {
    /// Every category used, in the dataset's order.
    pub const ALL: [Category; 4] = [Category::MultiHop, Category::Temporal, Category::OpenDomain, Category::SingleHop];

    /// The category of the dataset's number (`None` for 5, adversarial, and anything else).
    pub fn from_number(n: i64) -> Option<Category> {
        match n {
            1 => Some(Category::MultiHop),
            2 => Some(Category::Temporal),
            3 => Some(Category::OpenDomain),
            4 => Some(Category::SingleHop),
            _ => None,
        }
    }

    /// Its position in [`Category::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// A short label for tables and JSON keys.
    pub fn label(self) -> &'static str {
        ["multi-hop", "temporal", "open-domain", "single-hop"][self.index()]
    }
}

/// One turn of the dialogue.
#[derive(Debug, Clone, PartialEq)]
pub struct DialogTurn {
    /// Its id in the dataset, normalised: `D<session>:<turn>`.
    pub dia_id: String,
    /// Who says it (one of the conversation's two speakers).
    pub speaker: String,
    /// What is said.
    pub text: String,
    /// The caption of the photo shared with it, if any (`blip_caption`).
    pub caption: Option<String>,
}

impl DialogTurn {
    /// The text stored in the archive: speaker and caption too, as the LoCoMo paper's retrievers see them.
    pub fn content(&self) -> String {
        match &self.caption {
            Some(c) => format!("{}: {} [shares a photo: {c}]", self.speaker, self.text),
            None => format!("{}: {}", self.speaker, self.text),
        }
    }
}

/// One dated session of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct DialogSession {
    /// Its number (`session_N`).
    pub number: u32,
    /// The date as the dataset writes it ("1:56 pm on 8 May, 2023").
    pub date_time: String,
    /// That date in milliseconds since the Unix epoch (read as UTC).
    pub start_ms: i64,
    /// Its turns, in order.
    pub turns: Vec<DialogTurn>,
}

/// One question kept: of categories 1–4, with at least one evidence turn found in the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The question as asked.
    pub text: String,
    /// Its category.
    pub category: Category,
    /// Its evidence turns (dia ids that resolve to a turn, each once).
    pub evidence: Vec<String>,
}

/// What reading a conversation's questions kept and left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuestionCounts {
    /// Questions of categories 1–4 in the data.
    pub asked: usize,
    /// Of those, the questions kept (some evidence resolves to a turn).
    pub kept: usize,
    /// Adversarial questions (category 5), left out.
    pub adversarial: usize,
    /// Evidence ids of the kept and dropped questions that name no turn, skipped.
    pub unresolved_evidence: usize,
}

impl QuestionCounts {
    /// Adds another conversation's counts.
    pub fn add(&mut self, o: QuestionCounts) {
        self.asked += o.asked;
        self.kept += o.kept;
        self.adversarial += o.adversarial;
        self.unresolved_evidence += o.unresolved_evidence;
    }
}

/// One LoCoMo conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// Its sample number ("26" for `26.json` or `conv-26`).
    pub id: String,
    /// The first speaker (stored as the user).
    pub speaker_a: String,
    /// The second speaker (stored as the assistant).
    pub speaker_b: String,
    /// Its sessions in order.
    pub sessions: Vec<DialogSession>,
    /// Its questions kept.
    pub questions: Vec<Question>,
    /// What reading the questions kept and left out.
    pub counts: QuestionCounts,
}

impl Conversation {
    /// Every turn in order, with its session.
    pub fn turns(&self) -> impl Iterator<Item = (&DialogSession, &DialogTurn)> {
        self.sessions.iter().flat_map(|s| s.turns.iter().map(move |t| (s, t)))
    }

    /// Each turn's position in the conversation (0 = the oldest), and how many turns there are.
    pub fn positions(&self) -> (HashMap<String, usize>, usize) {
        let map: HashMap<String, usize> = self.turns().enumerate().map(|(i, (_, t))| (t.dia_id.clone(), i)).collect();
        let n = map.len();
        (map, n)
    }
}

/// The third of the conversation (0 oldest, 1 middle, 2 newest) turn `position` of `total` is in.
pub fn age_third(position: usize, total: usize) -> usize {
    (position * 3 / total.max(1)).min(2)
}

/// The dia ids an evidence string names, normalised to `D<session>:<turn>`. Tolerates what the data
/// holds besides one id per string: several ids in one string ("D8:6; D9:17", "D9:1 D4:4"), a stray
/// colon ("D:11:26") and leading zeros ("D30:05"). Anything else names nothing.
pub fn parse_evidence(raw: &str) -> Vec<String> {
    raw.split(|c: char| c == ';' || c == ',' || c.is_whitespace())
        .filter_map(|part| {
            let rest = part.strip_prefix('D')?;
            let rest = rest.strip_prefix(':').unwrap_or(rest);
            let (session, turn) = rest.split_once(':')?;
            let (session, turn) = (session.parse::<u32>().ok()?, turn.parse::<u32>().ok()?);
            Some(format!("D{session}:{turn}"))
        })
        .collect()
}

/// "1:56 pm on 8 May, 2023" as milliseconds since the Unix epoch (read as UTC).
pub fn parse_date_time(text: &str) -> Option<i64> {
    let (time, date) = text.split_once(" on ")?;
    let (clock, half) = time.trim().split_once(' ')?;
    let (h, m) = clock.split_once(':')?;
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    let h = match half.to_ascii_lowercase().as_str() {
        "am" => h % 12,
        "pm" => h % 12 + 12,
        _ => return None,
    };
    let mut parts = date.split([' ', ',']).filter(|p| !p.is_empty());
    let day: i64 = parts.next()?.parse().ok()?;
    let month = parts.next()?.to_ascii_lowercase();
    let year: i64 = parts.next()?.parse().ok()?;
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let days = cowork_core::time::days_from_civil(year, month, day);
    Some(((days * 24 + h) * 60 + m) * 60_000)
}

fn str_field<'a>(v: &'a Value, key: &str) -> Result<&'a str, String> {
    v.get(key).and_then(Value::as_str).ok_or_else(|| format!("no text field {key:?}"))
}

/// Reads one conversation: `c` holds `speaker_a`, `speaker_b`, `session_N` and `session_N_date_time`
/// (the files of `locomo10.zip` hold them at the top, `locomo10.json` under `conversation`); `qa`
/// is its list of questions.
pub fn parse_conversation(id: &str, c: &Value, qa: &Value) -> Result<Conversation, String> {
    let speaker_a = str_field(c, "speaker_a")?.to_owned();
    let speaker_b = str_field(c, "speaker_b")?.to_owned();
    let obj = c.as_object().ok_or("not an object")?;
    let mut numbers: Vec<u32> =
        obj.keys().filter_map(|k| k.strip_prefix("session_").and_then(|n| n.parse::<u32>().ok())).collect();
    numbers.sort_unstable();
    let mut sessions = Vec::new();
    for number in numbers {
        let Some(list) = obj[&format!("session_{number}")].as_array() else { continue };
        let date_time = str_field(c, &format!("session_{number}_date_time"))?.to_owned();
        let start_ms = parse_date_time(&date_time).ok_or_else(|| format!("session {number}: date {date_time:?}"))?;
        let turns = list
            .iter()
            .map(|t| {
                let dia_id = str_field(t, "dia_id")?;
                Ok(DialogTurn {
                    dia_id: parse_evidence(dia_id).pop().ok_or_else(|| format!("dia_id {dia_id:?}"))?,
                    speaker: str_field(t, "speaker")?.to_owned(),
                    text: str_field(t, "text")?.to_owned(),
                    caption: t.get("blip_caption").and_then(Value::as_str).map(str::to_owned),
                })
            })
            .collect::<Result<Vec<DialogTurn>, String>>()
            .map_err(|e| format!("session {number}: {e}"))?;
        if !turns.is_empty() {
            sessions.push(DialogSession { number, date_time, start_ms, turns });
        }
    }
    let mut conv = Conversation {
        id: id.to_owned(),
        speaker_a,
        speaker_b,
        sessions,
        questions: Vec::new(),
        counts: QuestionCounts::default(),
    };
    let (positions, _) = conv.positions();
    for q in qa.as_array().ok_or("no qa list")? {
        let Some(category) = q.get("category").and_then(Value::as_i64) else { continue };
        let Some(category) = Category::from_number(category) else {
            conv.counts.adversarial += 1;
            continue;
        };
        conv.counts.asked += 1;
        let mut evidence: Vec<String> = Vec::new();
        for raw in q.get("evidence").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            let ids = parse_evidence(raw);
            conv.counts.unresolved_evidence += usize::from(ids.is_empty());
            for id in ids {
                if !positions.contains_key(&id) {
                    conv.counts.unresolved_evidence += 1;
                } else if !evidence.contains(&id) {
                    evidence.push(id);
                }
            }
        }
        if !evidence.is_empty() {
            conv.counts.kept += 1;
            conv.questions.push(Question { text: str_field(q, "question")?.to_owned(), category, evidence });
        }
    }
    Ok(conv)
}

/// The sample number of a file stem or `sample_id` ("26", "conv-26" → 26).
fn sample_number(s: &str) -> Option<u32> {
    s.rsplit(|c: char| !c.is_ascii_digit()).next().and_then(|n| n.parse().ok())
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            json_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

/// Every conversation in the JSON files under `dir` (searched recursively): files of one
/// conversation (`26.json`, as `locomo10.zip` unpacks) or a list of them (`locomo10.json`). Other
/// JSON files are ignored; a conversation found twice is read once. Sorted by sample number, which
/// is the order of the official `locomo10.json` (26, 30, 41, …, 50).
pub fn load_dir(dir: &Path) -> Result<Vec<Conversation>, String> {
    let mut files = Vec::new();
    json_files(dir, &mut files).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    files.sort();
    let mut found: Vec<(u32, Conversation)> = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let Ok(value) = serde_json::from_str::<Value>(&text) else { continue };
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let items: Vec<(Option<u32>, &Value, &Value)> = match &value {
            Value::Array(list) => list
                .iter()
                .filter_map(|item| {
                    let n = item.get("sample_id").and_then(Value::as_str).and_then(sample_number);
                    Some((n, item.get("conversation")?, item.get("qa")?))
                })
                .collect(),
            v if v.get("speaker_a").is_some() && v.get("qa").is_some() => vec![(sample_number(stem), v, &v["qa"])],
            _ => Vec::new(),
        };
        for (n, c, qa) in items {
            let n = n.ok_or_else(|| format!("{}: a conversation without a sample number", path.display()))?;
            if found.iter().any(|(m, _)| *m == n) {
                continue;
            }
            let conv = parse_conversation(&n.to_string(), c, qa).map_err(|e| format!("{}: {e}", path.display()))?;
            found.push((n, conv));
        }
    }
    found.sort_by_key(|(n, _)| *n);
    Ok(found.into_iter().map(|(_, c)| c).collect())
}
