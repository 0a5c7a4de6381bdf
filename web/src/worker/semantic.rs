//! Recall by meaning in the worker that owns the archive (spec §17). The embedding model runs in its
//! own worker (`semantic/semantic-worker.js`, built from the `semantic/` crate and loaded only once
//! the user turns recall by meaning on), started from here; this side feeds it the archive's
//! unindexed turns in small batches, saves their vectors (`Store::put_vectors`, the cursor in the same
//! transaction, so a reload resumes where it stopped), and embeds search queries.
//!
//! Indexing never gets in the way: turns are saved first and embedded later; the loop waits while a
//! reply is being written and between batches, and the archive is only borrowed for a moment.

use super::archive::sleep_ms;
use super::hub::Archive;
use crate::protocol::{default_model_url, model_choice, SemanticPhase, SemanticState};
use cowork_core::semantic::{next_batch_turns, SemanticSettings};
use futures_channel::oneshot;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The model worker's script, relative to the storage worker's.
const WORKER_SCRIPT: &str = "semantic/semantic-worker.js";
/// Turns in the first batch of a run; later batches follow the model's pace
/// (`semantic::next_batch_turns`), so a search's query waits at most about half a second behind one.
const FIRST_BATCH_TURNS: usize = 2;

/// The owner's semantic side: its state, which run is current, the model worker.
#[derive(Default)]
pub struct SemanticRunner {
    phase: RefCell<SemanticPhase>,
    model_url: RefCell<String>,
    run: Cell<u64>,
    model: RefCell<Option<Rc<Models>>>,
    /// The index's model id the loaded workers run.
    loaded: RefCell<String>,
}

/// What the loop needs from the hub.
#[derive(Clone)]
pub struct Link {
    pub archive: Archive,
    /// A reply is being written: indexing waits.
    pub replying: Rc<Cell<bool>>,
}

impl SemanticRunner {
    /// Where recall by meaning stands, with the archive's settings and progress.
    pub fn state(&self, archive: &Archive) -> SemanticState {
        let (settings, progress) = match archive.try_borrow().ok().as_ref().and_then(|a| a.as_ref()) {
            Some((store, _)) => {
                (store.semantic_settings().unwrap_or_default(), store.semantic_progress().unwrap_or_default())
            }
            None => Default::default(),
        };
        SemanticState {
            settings,
            progress,
            phase: self.phase.borrow().clone(),
            model_url: self.model_url.borrow().clone(),
        }
    }

    /// The model is loaded: searches can be by meaning.
    pub fn ready(&self) -> bool {
        self.model.borrow().is_some()
    }

    /// A search query's embedding and the words to search for with it (the query without its stop
    /// words: the list is in the model's worker), or `None` when the model is not loaded or fails (the
    /// search is then lexical, with the query as typed).
    pub async fn embed_query(&self, text: &str) -> Option<(Vec<f32>, String)> {
        let model = self.model.borrow().clone()?;
        let (mut vectors, words) = model.workers[0].ask_embed(&[text.to_owned()], true).await.ok()?;
        Some((vectors.pop()?, words.as_string().unwrap_or_else(|| text.to_owned())))
    }
}

/// Saves `settings` and starts (or stops) the model and the indexing to match.
pub fn configure(runner: &Rc<SemanticRunner>, link: Link, settings: &SemanticSettings) -> Result<(), String> {
    if let Some((store, _)) = link.archive.borrow_mut().as_mut() {
        store.set_semantic_settings(settings).map_err(|e| e.to_string())?;
    }
    start(runner, link);
    Ok(())
}

/// Starts the model and the indexing if this device has recall by meaning on (ending any earlier
/// run); stops them if it is off.
pub fn start(runner: &Rc<SemanticRunner>, link: Link) {
    let run = runner.run.get() + 1;
    runner.run.set(run);
    let settings = match link.archive.borrow().as_ref() {
        Some((store, _)) => store.semantic_settings().unwrap_or_default(),
        None => return,
    };
    let choice = model_choice(&settings.model);
    // Off, or another model chosen: the workers of the one loaded go.
    if !settings.enabled || *runner.loaded.borrow() != choice.model.id {
        if let Some(model) = runner.model.borrow_mut().take() {
            model.terminate();
        }
    }
    if !settings.enabled {
        runner.phase.replace(SemanticPhase::Off);
        return;
    }
    if runner.model.borrow().is_none() {
        // Said now, so the state answered to the change is not the previous model's "complete".
        runner.phase.replace(SemanticPhase::Loading);
    }
    let runner = runner.clone();
    wasm_bindgen_futures::spawn_local(async move {
        if runner.model.borrow().is_none() {
            let url = model_url(&settings.model_url, choice.model.name).await;
            runner.model_url.replace(url.clone());
            let phase = Rc::new({
                let runner = runner.clone();
                move |p: SemanticPhase| {
                    runner.phase.replace(p);
                }
            });
            match Models::load(&url, choice.model.name, phase).await {
                Ok(model) if runner.run.get() == run => {
                    *runner.model.borrow_mut() = Some(Rc::new(model));
                    runner.loaded.replace(choice.model.id.to_owned());
                }
                Ok(model) => return model.terminate(),
                Err(message) => {
                    runner.phase.replace(SemanticPhase::Failed { message });
                    return;
                }
            }
        }
        index(&runner, &link, run).await;
    });
}

/// The indexing loop of run `run`: until another run starts.
async fn index(runner: &Rc<SemanticRunner>, link: &Link, run: u64) {
    let mut failures = 0u32;
    let mut turns = FIRST_BATCH_TURNS;
    while runner.run.get() == run {
        let Some(model) = runner.model.borrow().clone() else { return };
        let batch = match link.archive.try_borrow().ok().as_ref().and_then(|a| a.as_ref()) {
            Some((store, _)) if store.semantic_settings().map(|s| s.paused).unwrap_or(false) => {
                runner.phase.replace(SemanticPhase::Paused);
                None
            }
            Some((store, _)) if !link.replying.get() => store.semantic_pending(turns).ok(),
            _ => None,
        };
        let Some(batch) = batch.filter(|b| !b.is_empty()) else {
            if !matches!(*runner.phase.borrow(), SemanticPhase::Paused) && !link.replying.get() {
                runner.phase.replace(SemanticPhase::Ready);
            }
            sleep_ms(1_000).await;
            continue;
        };
        runner.phase.replace(SemanticPhase::Indexing);
        let texts: Vec<String> = batch.chunks.iter().map(|c| c.text.clone()).collect();
        let started = js_sys::Date::now();
        let vectors = if texts.is_empty() { Ok(Vec::new()) } else { model.embed(&texts).await };
        match vectors {
            Ok(vectors) => {
                failures = 0;
                let embedded = batch.chunks.windows(2).filter(|w| w[0].turn_id != w[1].turn_id).count()
                    + usize::from(!batch.chunks.is_empty());
                turns = next_batch_turns(embedded, js_sys::Date::now() - started, model.workers.len());
                if runner.run.get() != run {
                    return;
                }
                if let Ok(mut archive) = link.archive.try_borrow_mut() {
                    if let Some((store, _)) = archive.as_mut() {
                        if let Err(e) = store.put_vectors(&batch, &vectors) {
                            runner.phase.replace(SemanticPhase::Failed { message: e.to_string() });
                            return;
                        }
                    }
                }
                // Leave the archive and the model free for a moment between batches.
                sleep_ms(20).await;
            }
            Err(message) => {
                failures += 1;
                runner.phase.replace(SemanticPhase::Failed { message: message.clone() });
                if failures >= 3 {
                    return;
                }
                sleep_ms(2_000 * failures).await;
            }
        }
    }
}

/// Where model `name`'s files come from: the user's URL; else a copy served beside the app
/// (`models/<name>/`, as the dev server does); else the model's public repository. (Once downloaded,
/// the files are read from this browser's storage.)
async fn model_url(configured: &str, name: &str) -> String {
    let configured = configured.trim();
    if !configured.is_empty() {
        return if configured.ends_with('/') { configured.to_owned() } else { format!("{configured}/") };
    }
    let local =
        web_sys::Url::new_with_base(&format!("models/{name}/"), &location()).map(|u| u.href()).unwrap_or_default();
    let probe = format!("{local}config.json");
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    match wasm_bindgen_futures::JsFuture::from(scope.fetch_with_str(&probe)).await {
        Ok(r) if r.dyn_ref::<web_sys::Response>().is_some_and(|r| r.ok()) => local,
        _ => default_model_url(name),
    }
}

fn location() -> String {
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    scope.location().href()
}

/// Model workers started: two where the device has a second core (measured in headless Chromium on
/// two cores, all-MiniLM-L6-v2, bare turns: one worker embeds about 12 turns/s, two side by side 18–20;
/// BENCHMARKS.md), else one. Each holds its own copy of the model.
const MAX_WORKERS: usize = 2;

/// The model's workers: a batch is split between them; a query goes to the first.
struct Models {
    workers: Vec<ModelWorker>,
}

impl Models {
    /// Starts the first worker (which downloads the model, or reads it from this browser's copy),
    /// then the others, which read that copy. One that fails to start is left out.
    async fn load(url: &str, name: &str, phase: Rc<dyn Fn(SemanticPhase)>) -> Result<Models, String> {
        let mut workers = vec![ModelWorker::load(url, name, phase.clone()).await?];
        let cores = js_sys::Reflect::get(&js_sys::global(), &"navigator".into())
            .and_then(|n| js_sys::Reflect::get(&n, &"hardwareConcurrency".into()))
            .ok()
            .and_then(|c| c.as_f64())
            .unwrap_or(1.0) as usize;
        while workers.len() < MAX_WORKERS.min(cores) {
            match ModelWorker::load(url, name, phase.clone()).await {
                Ok(w) => workers.push(w),
                Err(_) => break,
            }
        }
        Ok(Models { workers })
    }

    /// The unit vectors of `texts`, in order: split evenly between the workers, embedded side by side.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        let per = texts.len().div_ceil(self.workers.len()).max(1);
        let parts = texts.chunks(per).zip(&self.workers).map(|(part, w)| w.embed(part));
        let mut out = Vec::with_capacity(texts.len());
        for part in futures_util::future::join_all(parts).await {
            out.extend(part?);
        }
        Ok(out)
    }

    fn terminate(&self) {
        for w in &self.workers {
            w.worker.terminate();
        }
    }
}

type Waiting = Rc<RefCell<HashMap<u32, oneshot::Sender<Result<JsValue, String>>>>>;

/// The model's worker and its answers in flight.
struct ModelWorker {
    worker: web_sys::Worker,
    waiting: Waiting,
    next: Cell<u32>,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::ErrorEvent)>,
}

impl ModelWorker {
    /// Starts the model's worker and loads model `name` from `url` (or this browser's copy), telling
    /// `phase` how the download goes.
    async fn load(url: &str, name: &str, phase: Rc<dyn Fn(SemanticPhase)>) -> Result<ModelWorker, String> {
        let script = web_sys::Url::new_with_base(WORKER_SCRIPT, &location()).map(|u| u.href()).unwrap_or_default();
        let opts = web_sys::WorkerOptions::new();
        opts.set_type(web_sys::WorkerType::Module);
        let worker = web_sys::Worker::new_with_options(&script, &opts)
            .map_err(|e| format!("could not start the model's worker ({script}): {e:?}"))?;
        let waiting: Waiting = Rc::default();
        let on_message = {
            let waiting = waiting.clone();
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
                let data = ev.data();
                let kind = get(&data, "type").as_string().unwrap_or_default();
                let id = get(&data, "id").as_f64().unwrap_or(0.0) as u32;
                if kind == "progress" {
                    let n = |k: &str| get(&data, k).as_f64().unwrap_or(0.0) as u64;
                    let (loaded, total) = (n("loaded"), n("total"));
                    // Every byte in: the model is being read into memory now.
                    phase(if total > 0 && loaded >= total {
                        SemanticPhase::Loading
                    } else {
                        SemanticPhase::Downloading { loaded, total }
                    });
                    return;
                }
                let result = if kind == "error" {
                    Err(get(&data, "message").as_string().unwrap_or_else(|| "the model failed".into()))
                } else {
                    Ok(data)
                };
                if let Some(tx) = waiting.borrow_mut().remove(&id) {
                    let _ = tx.send(result);
                }
            })
        };
        let on_error = {
            let waiting = waiting.clone();
            Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |ev: web_sys::ErrorEvent| {
                let message = format!("the model's worker failed: {}", ev.message());
                for (_, tx) in waiting.borrow_mut().drain() {
                    let _ = tx.send(Err(message.clone()));
                }
            })
        };
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let model = ModelWorker { worker, waiting, next: Cell::new(1), _on_message: on_message, _on_error: on_error };
        let msg = js_sys::Object::new();
        set(&msg, "type", &"load".into());
        set(&msg, "base_url", &url.into());
        set(&msg, "model", &name.into());
        model.ask(msg).await?;
        Ok(model)
    }

    async fn ask(&self, msg: js_sys::Object) -> Result<JsValue, String> {
        let id = self.next.get();
        self.next.set(id + 1);
        set(&msg, "id", &id.into());
        let (tx, rx) = oneshot::channel();
        self.waiting.borrow_mut().insert(id, tx);
        self.worker.post_message(&msg).map_err(|e| format!("could not reach the model's worker: {e:?}"))?;
        rx.await.unwrap_or_else(|_| Err("the model's worker stopped".into()))
    }

    /// The unit vectors of `texts`, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        Ok(self.ask_embed(texts, false).await?.0)
    }

    /// The unit vectors of `texts`, in order; with `query`, also the first text's words to search for
    /// (the worker's answer's `words[0]`; undefined without).
    async fn ask_embed(&self, texts: &[String], query: bool) -> Result<(Vec<Vec<f32>>, JsValue), String> {
        let msg = js_sys::Object::new();
        set(&msg, "type", &"embed".into());
        set(&msg, "query", &query.into());
        let list = js_sys::Array::new();
        for t in texts {
            list.push(&t.into());
        }
        set(&msg, "texts", &list);
        let answer = self.ask(msg).await?;
        let dims = get(&answer, "dims").as_f64().unwrap_or(0.0) as usize;
        let flat = js_sys::Float32Array::new(&get(&answer, "vectors")).to_vec();
        if dims == 0 || flat.len() != dims * texts.len() {
            return Err(format!("the model answered {} numbers for {} texts", flat.len(), texts.len()));
        }
        let words = js_sys::Reflect::get_u32(&get(&answer, "words"), 0).unwrap_or(JsValue::UNDEFINED);
        Ok((flat.chunks(dims).map(<[f32]>::to_vec).collect(), words))
    }
}

fn get(v: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(v, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn set(o: &js_sys::Object, key: &str, v: &JsValue) {
    let _ = js_sys::Reflect::set(o, &key.into(), v);
}
