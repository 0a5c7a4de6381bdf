//! The browser side: the real [`Store`] on OPFS `sahpool`, in the dedicated worker of `www/worker.js`.
//! Every measurement is taken here with `performance.now()` around the one call being measured; the
//! peers (raw OPFS, IndexedDB) are measured by the worker script around the same bytes.

use crate::gen::{self, Rng};
use cowork_core::store::{opfs, Store};
use cowork_core::NewTurn;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance)]
    fn now() -> f64;
}

thread_local! {
    static POOL: RefCell<Option<opfs::Opfs>> = const { RefCell::new(None) };
}

fn js(e: cowork_core::Error) -> JsValue {
    JsValue::from_str(&e.to_string())
}

/// Installs the OPFS VFS (once per worker).
#[wasm_bindgen]
pub async fn install_opfs() -> Result<(), JsValue> {
    let pool = opfs::install().await.map_err(|e| js(e.into()))?;
    pool.reserve(16).await.map_err(js)?;
    POOL.with(|p| *p.borrow_mut() = Some(pool));
    Ok(())
}

/// Deletes an archive file from the pool (a fresh start).
#[wasm_bindgen]
pub fn remove_archive(name: &str) -> Result<bool, JsValue> {
    POOL.with(|p| p.borrow().as_ref().map(|p| p.remove(name)).transpose()).map_err(js).map(|r| r.unwrap_or(false))
}

/// `n` generated turns as the JSON records a chat app keeps (the whole-conversation peer).
#[wasm_bindgen]
pub fn records(n: usize, seed: u32) -> String {
    let mut rng = Rng::new(seed as u64);
    let items: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let t = gen::turn(&mut rng, i);
            serde_json::json!({"turn_number": i + 1, "role": t.role.as_str(), "content": t.content, "created_at": 0})
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}

/// Bytes of this module's linear memory.
#[wasm_bindgen]
pub fn wasm_memory_bytes() -> f64 {
    let mem: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    mem.buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length() as f64
}

#[wasm_bindgen]
pub fn sqlite_version() -> String {
    cowork_core::store::sqlite_version()
}

/// One archive under benchmark.
#[wasm_bindgen]
pub struct Bench {
    store: Option<Store>,
    name: String,
    rng: Rng,
    sessions: Vec<String>,
    /// The turn prepared by `prepare_turn`, appended by `append_prepared`.
    prepared: Option<(String, NewTurn)>,
    next_index: usize,
}

#[wasm_bindgen]
impl Bench {
    /// Opens (creating) the archive `name` in the OPFS pool; the measured time is in `open_ms`.
    #[wasm_bindgen(constructor)]
    pub fn new(name: &str, seed: u32) -> Result<Bench, JsValue> {
        let store = Store::open(name).map_err(js)?;
        Ok(Bench {
            store: Some(store),
            name: name.to_owned(),
            rng: Rng::new(seed as u64),
            sessions: Vec::new(),
            prepared: None,
            next_index: 0,
        })
    }

    fn store(&self) -> Result<&Store, JsValue> {
        self.store.as_ref().ok_or_else(|| JsValue::from_str("the archive is closed"))
    }

    fn store_mut(&mut self) -> Result<&mut Store, JsValue> {
        self.store.as_mut().ok_or_else(|| JsValue::from_str("the archive is closed"))
    }

    /// Closes and reopens the archive; returns the milliseconds the reopen took.
    pub fn reopen(&mut self) -> Result<f64, JsValue> {
        self.store = None;
        let t = now();
        self.store = Some(Store::open(&self.name).map_err(js)?);
        Ok(now() - t)
    }

    pub fn close(&mut self) {
        self.store = None;
    }

    /// Runs SQL (pragmas for experiments); returns the first column of the first row as text, if any.
    pub fn exec(&self, sql: &str) -> Result<String, JsValue> {
        let conn = self.store()?.connection();
        let mut stmt = conn.prepare(sql).map_err(|e| JsValue::from_str(&e.to_string()))?;
        let mut rows = stmt.query([]).map_err(|e| JsValue::from_str(&e.to_string()))?;
        let first = rows.next().map_err(|e| JsValue::from_str(&e.to_string()))?;
        let value = first.and_then(|r| {
            r.get_ref(0).ok().map(|v| match v {
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                rusqlite::types::ValueRef::Integer(i) => i.to_string(),
                other => format!("{other:?}"),
            })
        });
        Ok(value.unwrap_or_default())
    }

    /// Creates a session of `n` generated turns; returns the milliseconds it took. The session becomes
    /// the current one (for appends) and is remembered (index = order of creation).
    pub fn seed_session(&mut self, n: usize) -> Result<f64, JsValue> {
        let t = now();
        let mut rng = self.rng.clone();
        let sid = crate::seed_session(self.store_mut()?, &mut rng, "bench", n).map_err(js)?;
        self.rng = rng;
        self.sessions.push(sid);
        self.next_index = n;
        Ok(now() - t)
    }

    /// Adds `n` turns to the current session in seeding batches; returns the milliseconds.
    pub fn grow_current(&mut self, n: usize) -> Result<f64, JsValue> {
        let sid = self.current()?;
        let t = now();
        let mut done = 0;
        while done < n {
            let batch = crate::SEED_BATCH.min(n - done);
            let turns = gen::turns(&mut self.rng, self.next_index, batch);
            self.store_mut()?.append_turns(&sid, &turns).map_err(js)?;
            self.next_index += batch;
            done += batch;
        }
        Ok(now() - t)
    }

    fn current(&self) -> Result<String, JsValue> {
        self.sessions.last().cloned().ok_or_else(|| JsValue::from_str("no session yet"))
    }

    /// Takes the archive's sessions (oldest first) as this bench's sessions (a reopened archive).
    pub fn adopt_sessions(&mut self) -> Result<usize, JsValue> {
        let filter = cowork_core::store::SessionFilter { include_archived: true, ..Default::default() };
        let mut sessions = self.store()?.list_sessions(&filter).map_err(js)?;
        sessions.sort_by_key(|s| s.created_at);
        self.sessions = sessions.into_iter().map(|s| s.id).collect();
        Ok(self.sessions.len())
    }

    pub fn session_id(&self, index: usize) -> Option<String> {
        self.sessions.get(index).cloned()
    }

    /// Generates the next turn of the current session and returns it as the JSON record the peers store
    /// (the same bytes).
    pub fn prepare_turn(&mut self) -> Result<String, JsValue> {
        let sid = self.current()?;
        let turn = gen::turn(&mut self.rng, self.next_index);
        let record = serde_json::json!({
            "session_id": sid,
            "turn_number": self.next_index + 1,
            "role": turn.role.as_str(),
            "content": turn.content,
            "created_at": 0,
        })
        .to_string();
        self.prepared = Some((sid, turn));
        Ok(record)
    }

    /// Turns sync on for this archive (every later change also goes to the sync outbox, in its own
    /// transaction; the archive so far is queued once); returns milliseconds.
    pub fn enable_sync(&mut self) -> Result<f64, JsValue> {
        let t = now();
        self.store_mut()?.enable_sync("bench").map_err(js)?;
        Ok(now() - t)
    }

    /// Names this archive a sync device (`name`) without queueing anything: the empty device of the
    /// first-sync phase.
    pub fn join_sync(&mut self, name: &str) -> Result<(), JsValue> {
        self.store_mut()?.enable_sync(name).map_err(js).map(|_| ())
    }

    /// The sync outbox's next `limit` messages as the worker hands them to the transport: a JSON list
    /// of `{ id, subject, body, seq }` (`seq`: the outbox entry, for `sync_published`).
    pub fn sync_outgoing(&mut self, limit: usize) -> Result<String, JsValue> {
        let out = self.store_mut()?.sync_outgoing(&cowork_core::Space::Personal, limit).map_err(js)?;
        let list: Vec<serde_json::Value> = out
            .iter()
            .map(|m| {
                let body = serde_json::to_string(m).expect("sync messages are plain data");
                serde_json::json!({ "id": m.id, "subject": m.change.subject(), "body": body, "seq": m.seq })
            })
            .collect();
        Ok(serde_json::Value::Array(list).to_string())
    }

    /// Records that the server acknowledged the outbox up to entry `seq`.
    pub fn sync_published(&mut self, seq: f64) -> Result<(), JsValue> {
        self.store_mut()?.sync_published(&cowork_core::Space::Personal, seq as i64).map_err(js)
    }

    /// Applies fetched messages (the transport's `fetch` gives them as `{ seq, body }` objects) in one
    /// transaction with the cursor, as the worker does; returns the milliseconds it took.
    pub fn apply_sync(&mut self, messages: js_sys::Array) -> Result<f64, JsValue> {
        let t = now();
        // As the storage worker takes a fetch's messages (web/src/worker/sync.rs): each one's
        // sequence and body read from the JavaScript object, the body parsed by `read_message`.
        let field = |m: &JsValue, k: &str| js_sys::Reflect::get(m, &k.into()).ok();
        let batch: Vec<_> = messages
            .iter()
            .map(|m| {
                let seq = field(&m, "seq").and_then(|v| v.as_f64()).unwrap_or(0.0) as i64;
                let body = field(&m, "body").and_then(|v| v.as_string()).unwrap_or_default();
                (seq, cowork_core::store::sync::read_message(&body))
            })
            .collect();
        let mut sealed = |i: usize| {
            field(&messages.get(i as u32), "sealed")
                .and_then(|v| v.dyn_into::<js_sys::Uint8Array>().ok())
                .map(|a| a.to_vec())
                .unwrap_or_default()
        };
        self.store_mut()?.apply_sync_received(&cowork_core::Space::Personal, &batch, &mut sealed).map_err(js)?;
        Ok(now() - t)
    }

    /// The stream sequence this archive has applied up to.
    pub fn sync_cursor(&self) -> Result<f64, JsValue> {
        Ok(self.store()?.sync_cursor(&cowork_core::Space::Personal).map_err(js)? as f64)
    }

    /// Changes waiting in the outbox for the server.
    pub fn sync_waiting(&self) -> Result<f64, JsValue> {
        Ok(self.store()?.sync_status().map_err(js)?.waiting as f64)
    }

    /// Appends the prepared turn durably (commit + index, `Store::append_turn`); returns milliseconds.
    pub fn append_prepared(&mut self) -> Result<f64, JsValue> {
        let (sid, turn) = self.prepared.take().ok_or_else(|| JsValue::from_str("no prepared turn"))?;
        let store = self.store_mut()?;
        let t = now();
        store.append_turn(&sid, &turn).map_err(js)?;
        let ms = now() - t;
        self.next_index += 1;
        Ok(ms)
    }

    /// Appends a user turn carrying `bytes` as one attachment (`data.bin`, stored as a new blob when
    /// the bytes are new) to the current session, durably; returns milliseconds (the blob, the turn
    /// and its link in one commit). `sha256` is the bytes' digest, which the storage worker takes from
    /// WebCrypto before saving (the caller times that part, as the worker does it).
    pub fn append_with_attachment(&mut self, bytes: &[u8], sha256: String) -> Result<f64, JsValue> {
        let sid = self.current()?;
        let store = self.store_mut()?;
        let file =
            cowork_core::NewAttachment::new("data.bin", "application/octet-stream", bytes.to_vec()).with_sha256(sha256);
        let turn = NewTurn::user("here is the file");
        let t = now();
        store.append_turn_with_attachments(&sid, &turn, std::slice::from_ref(&file), 0).map_err(js)?;
        let ms = now() - t;
        self.next_index += 1;
        Ok(ms)
    }

    /// The parts of [`Bench::append_with_attachment`], each timed alone on a new content `bytes` (a
    /// breakdown, not a second measurement of the row): `[classify, blob insert, commit]` in
    /// milliseconds. The blob goes in by plain SQL in its own transaction (no turn), so the commit is
    /// the WAL frames of the blob's pages and the flush.
    pub fn attach_parts(&mut self, bytes: &[u8], sha256: String) -> Result<Vec<f64>, JsValue> {
        let sql = |e: rusqlite::Error| JsValue::from_str(&e.to_string());
        let file =
            cowork_core::NewAttachment::new("data.bin", "application/octet-stream", bytes.to_vec()).with_sha256(sha256);
        let t = now();
        let examined = file.examine();
        let hash_ms = now() - t;
        let conn = self.store()?.connection();
        conn.execute_batch("BEGIN IMMEDIATE").map_err(sql)?;
        let t = now();
        conn.prepare_cached("INSERT INTO blobs (sha256, size, data) VALUES (?1, ?2, ?3)")
            .and_then(|mut s| s.execute(rusqlite::params![examined.sha256, bytes.len() as i64, bytes]))
            .map_err(sql)?;
        let insert_ms = now() - t;
        let t = now();
        conn.execute_batch("COMMIT").map_err(sql)?;
        Ok(vec![hash_ms, insert_ms, now() - t])
    }

    /// The app's search: `[ms, hits]`.
    pub fn search(&self, text: &str) -> Result<Vec<f64>, JsValue> {
        let store = self.store()?;
        let t = now();
        let hits = crate::search(store, text).map_err(js)?;
        Ok(vec![now() - t, hits.len() as f64])
    }

    /// Gives every turn a vector (see [`crate::index_pseudo_vectors`]): `[ms, chunks]`.
    pub fn index_vectors(&mut self) -> Result<Vec<f64>, JsValue> {
        let t = now();
        let n = crate::index_pseudo_vectors(self.store_mut()?, 2000).map_err(js)?;
        Ok(vec![now() - t, n as f64])
    }

    /// Makes `name` (one of `semantic::MODELS`) the index's model: every vector dropped, to be saved
    /// again by [`Self::index_vectors`] at that model's size.
    pub fn use_model(&mut self, name: &str) -> Result<(), JsValue> {
        let model = cowork_core::semantic::MODELS
            .into_iter()
            .find(|m| m.name == name)
            .ok_or_else(|| JsValue::from_str(&format!("unknown model {name}")))?;
        self.store_mut()?.set_semantic_model(model.id).map_err(js)
    }

    /// The app's search by words and meaning, given the query's vector (its embedding is timed by the
    /// model's own bench, `tests/e2e/semantic-bench.js`): `[ms, hits]` (the first one reads the
    /// vectors).
    pub fn search_hybrid(&self, text: &str) -> Result<Vec<f64>, JsValue> {
        let store = self.store()?;
        let vector = crate::query_vector(text, crate::index_dims(store).map_err(js)?);
        let t = now();
        let hits = crate::search_hybrid(store, text, &vector).map_err(js)?;
        Ok(vec![now() - t, hits.len() as f64])
    }

    /// The `LIKE '%q%'` scan: `[ms, rows]`.
    pub fn like(&self, text: &str) -> Result<Vec<f64>, JsValue> {
        let store = self.store()?;
        let t = now();
        let rows = crate::like_scan(store, text).map_err(js)?;
        Ok(vec![now() - t, rows as f64])
    }

    /// Resume (session + state + last `n` turns): `[ms, turns]`.
    pub fn resume(&self, session: usize, n: usize) -> Result<Vec<f64>, JsValue> {
        let sid = self.session_id(session).ok_or_else(|| JsValue::from_str("no such session"))?;
        let store = self.store()?;
        let t = now();
        let r = store.resume(&sid, n).map_err(js)?;
        Ok(vec![now() - t, r.turns.len() as f64])
    }

    /// Appends the session's next generated turn as the agent loop writes it between two model
    /// requests: a reply streams in (an interrupted turn, checkpointed, then finalised), anything else
    /// is appended. Returns milliseconds.
    pub fn append_to(&mut self, session: usize) -> Result<f64, JsValue> {
        let sid = self.session_id(session).ok_or_else(|| JsValue::from_str("no such session"))?;
        let current = self.current()? == sid;
        let n = self.store()?.turn_count(&sid).map_err(js)?;
        let turn = gen::turn(&mut self.rng, n as usize);
        let store = self.store_mut()?;
        let t = now();
        if turn.role == cowork_core::Role::Assistant {
            let open = NewTurn::assistant("").with_status(cowork_core::TurnStatus::Interrupted);
            let k = store.append_turn(&sid, &open).map_err(js)?.turn_number;
            let partial: String = turn.content.chars().take(turn.content.chars().count() / 2).collect();
            store.checkpoint_turn(&sid, k, &partial).map_err(js)?;
            store.finalize_turn(&sid, k, &turn).map_err(js)?;
        } else {
            store.append_turn(&sid, &turn).map_err(js)?;
        }
        let ms = now() - t;
        if current {
            self.next_index += 1;
        }
        Ok(ms)
    }

    /// Context assembly as the agent loop does it: `[ms, turns read, messages, estimated tokens]`.
    pub fn context(&self, session: usize, context_window: f64) -> Result<Vec<f64>, JsValue> {
        let sid = self.session_id(session).ok_or_else(|| JsValue::from_str("no such session"))?;
        let store = self.store()?;
        let t = now();
        let (ctx, read) = crate::assemble(store, &sid, context_window as i64).map_err(js)?;
        Ok(vec![now() - t, read as f64, ctx.messages.len() as f64, ctx.manifest.estimated_tokens as f64])
    }

    /// Browsing as the app does: list sessions, open each at its newest 50 turns, scroll back `pages`
    /// pages of 50, and run the search mix once. Returns milliseconds.
    pub fn browse(&self, pages: usize) -> Result<f64, JsValue> {
        let store = self.store()?;
        let t = now();
        let sessions = store.list_sessions(&Default::default()).map_err(js)?;
        for s in &sessions {
            let mut before = None;
            for _ in 0..pages {
                let turns = store.turns_before(&s.id, before, 50).map_err(js)?;
                match turns.first() {
                    Some(first) => before = Some(first.turn_number),
                    None => break,
                }
            }
        }
        for (_, queries) in gen::QUERIES {
            for q in *queries {
                crate::search(store, q).map_err(js)?;
            }
        }
        Ok(now() - t)
    }

    /// Turns in the archive.
    pub fn turn_total(&self) -> Result<f64, JsValue> {
        Ok(self.store()?.stats().map_err(js)?.turns as f64)
    }

    /// Archive bytes (page_count × page_size).
    pub fn archive_bytes(&self) -> Result<f64, JsValue> {
        Ok(self.store()?.stats().map_err(js)?.bytes as f64)
    }
}
