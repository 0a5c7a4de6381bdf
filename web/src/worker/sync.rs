//! Sync in the worker that owns the archive (spec §14): the transport is NATS JetStream, spoken by
//! the official JavaScript client inside `web/sync` (bundled at build time into `sync-<hash>.js`, a
//! classic script defining `CoworkSync`, and loaded only when the user sets sync up, so the app's
//! start carries none of it); encryption
//! (AES-GCM, a key from the passphrase) happens there too, so the server sees ids, subjects, sizes
//! and times only. This side moves messages between that module and the archive: the outbox out
//! (`Store::sync_outgoing`, then `sync_published` with what the server acknowledged), the stream in
//! (`Store::apply_sync_received`, the cursor in the same transaction), and tells every tab what
//! changed and where sync stands.
//!
//! Live by push: once a fetch has read a space to its end, the space is followed (`space.follow`:
//! an ordered consumer whose messages the server sends as they are stored) and a round waits for
//! what it holds, or for a write here (`SyncRunner::wake`), not for a poll. A pushed batch that does
//! not continue where this device has read (`sync::pushed`), or a follower broken by a gap, a
//! reconnection or an error, sends the round back to fetching from there: nothing skipped, and the
//! archive applies nothing at or below its cursor twice.
//!
//! Nothing stops it for good but what the user must change (credentials, passphrase, permission):
//! a server that is away is tried again for as long as it takes; an archive that fails for a moment
//! (storage full, busy) is tried again a bounded number of times, later each time, skipping
//! nothing; a message this device cannot apply is kept aside (quarantined, still sealed) and the
//! rest of the stream applies, and messages kept by an older version are tried again at the start.
//!
//! Writes never wait for sync: the archive is only borrowed for a moment, between the steps of
//! whatever else runs, and sync goes on while a reply is written. Another device's turns for the
//! session the reply is written in wait until it is saved (`applicable_while_writing`): placing them
//! first could move the reply's turn.

use super::hub::Archive;
use crate::protocol::{Event, KeptChanges, KeptReason, SyncFailure, SyncSettings, SyncState};
use cowork_core::store::sync::{applicable_while_writing, read_message, QuarantineReason, Received, Unreadable};
use cowork_core::store::Store;
use cowork_core::Space;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

mod push;
use push::{receive, wait};

/// The global the sync bundle defines: the worker is a classic script (Trunk's `no-modules` build,
/// which cannot carry an `import()` snippet), so the bundle is a classic script too, loaded with
/// `importScripts` (allowed by the page's `script-src 'self'`).
const GLOBAL: &str = "CoworkSync";

/// Loads the sync module once and returns its namespace.
fn load_module(url: &str) -> Result<JsValue, JsValue> {
    let global = js_sys::global();
    let loaded = js_sys::Reflect::get(&global, &GLOBAL.into())?;
    if !loaded.is_undefined() {
        return Ok(loaded);
    }
    let import: js_sys::Function = js_sys::Reflect::get(&global, &"importScripts".into())?.dyn_into()?;
    import.call1(&global, &url.into())?;
    js_sys::Reflect::get(&global, &GLOBAL.into())
}

/// Messages published or applied in one round at most.
const BATCH: usize = 500;

/// Messages read and applied in one round at most, and their bytes: a catch-up (a first sync) reads
/// the stream 2,000 messages a transaction (a quarter of the reads and commits of 500), or 16 MB of
/// them when they carry attachments.
const FETCH: (usize, usize) = (2000, 16 << 20);

/// The owner's sync: its state and which run is current (a new start ends the old run).
#[derive(Default)]
pub struct SyncRunner {
    state: RefCell<SyncState>,
    run: Cell<u64>,
    /// The last settings this tab asked for: whichever worker becomes the owner starts with them.
    pub last: RefCell<Option<(SyncSettings, String)>>,
    /// Whether the browser's `offline` event is listened to (once per worker).
    listening: Cell<bool>,
    /// Ends the wait between rounds (see `wait`), or, while a round runs, `woken` says to skip it.
    wake: RefCell<Option<js_sys::Function>>,
    woken: Cell<bool>,
}

impl SyncRunner {
    /// Where sync stands.
    pub fn state(&self) -> SyncState {
        self.state.borrow().clone()
    }

    /// Something was written here: the next round starts now, so its changes go out at once.
    pub fn wake(&self) {
        match self.wake.borrow_mut().take() {
            Some(resolve) => drop(resolve.call0(&JsValue::NULL)),
            None => self.woken.set(true),
        }
    }
}

/// How the sync loop reaches the archive and the tabs.
#[derive(Clone)]
pub struct Link {
    pub archive: Archive,
    /// The session a reply is being written in on this device, if it existed before the reply.
    pub writing: Rc<RefCell<Option<String>>>,
    /// Sends an event to every tab (this one included).
    pub broadcast: Rc<dyn Fn(Event)>,
}

/// Starts syncing with `settings` (ending any earlier run), or stops with `None`.
pub fn start(sync: &Rc<SyncRunner>, link: Link, settings: Option<SyncSettings>, module_url: String) {
    let run = sync.run.get() + 1;
    sync.run.set(run);
    let Some(settings) = settings else {
        set_state(sync, &link, SyncState::Off);
        return;
    };
    if let Some(problem) = settings.problem() {
        set_state(sync, &link, SyncState::Failed { kind: SyncFailure::Settings, message: problem });
        return;
    }
    if !sync.listening.replace(true) {
        listen_for_offline(sync, &link);
    }
    let sync = sync.clone();
    wasm_bindgen_futures::spawn_local(async move { run_sync(sync, link, settings, module_url, run).await });
}

/// What the header says while the browser has no network.
const OFFLINE: &str = "This device is offline: changes are kept here and go out when it is back online.";

/// What the header says while the server cannot be reached.
const UNREACHABLE: &str = "The sync server cannot be reached: changes are kept here and go out when it is back.";

/// Whether the browser says it has a network (`navigator.onLine`; true when it cannot tell).
fn online() -> bool {
    let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).unwrap_or(JsValue::UNDEFINED);
    js_sys::Reflect::get(&navigator, &"onLine".into()).ok().and_then(|v| v.as_bool()).unwrap_or(true)
}

/// Says "Offline" the moment the browser loses the network, not when a request to the server times out.
fn listen_for_offline(sync: &Rc<SyncRunner>, link: &Link) {
    let (sync, link) = (Rc::downgrade(sync), link.clone());
    let on_offline = Closure::<dyn Fn()>::new(move || {
        let Some(sync) = sync.upgrade() else { return };
        if !matches!(sync.state(), SyncState::Off | SyncState::Failed { .. }) {
            go_offline(&sync, &link, OFFLINE.into());
        }
    });
    let global: web_sys::EventTarget = js_sys::global().unchecked_into();
    let _ = global.add_event_listener_with_callback("offline", on_offline.as_ref().unchecked_ref());
    on_offline.forget(); // one listener for the worker's life
}

/// Says Offline, why, and how many changes wait here (as last counted while a request holds the archive).
fn go_offline(sync: &SyncRunner, link: &Link, message: String) {
    let known = match sync.state() {
        SyncState::Synced { waiting, .. } | SyncState::Offline { waiting, .. } => waiting,
        _ => 0,
    };
    let waiting = waiting(link).unwrap_or(known);
    set_state(sync, link, SyncState::Offline { waiting, message });
}

fn set_state(sync: &SyncRunner, link: &Link, state: SyncState) {
    if *sync.state.borrow() != state {
        *sync.state.borrow_mut() = state.clone();
        (link.broadcast)(Event::Sync { state });
    }
}

/// A failure of the module or the archive, with what to do about it in `message`.
struct Failure {
    kind: SyncFailure,
    message: String,
}

impl Failure {
    fn from_js(e: JsValue) -> Failure {
        let get = |k: &str| js_sys::Reflect::get(&e, &k.into()).ok().and_then(|v| v.as_string());
        Failure {
            kind: get("kind").map_or(SyncFailure::Server, |k| SyncFailure::of_transport(&k)),
            message: get("message").or_else(|| e.as_string()).unwrap_or_else(|| format!("{e:?}")),
        }
    }

    /// The archive's failure, of its own kind.
    fn archive(e: cowork_core::Error) -> Failure {
        Failure { kind: SyncFailure::Archive(e.kind()), message: format!("The archive: {e}") }
    }

    /// The server is away: tried again by itself for as long as it takes (the header says Offline).
    fn away(&self) -> bool {
        matches!(self.kind, SyncFailure::Unreachable | SyncFailure::Server)
    }
}

/// How many times in a row a round that failed in the archive for a moment is tried again …
const ARCHIVE_TRIES: u32 = 8;

/// … waiting this long before the `n`th try (1 s, doubling, at most 30 s: about 2½ minutes in all).
fn backoff_ms(n: u32) -> u32 {
    (1000u32 << n.saturating_sub(1).min(5)).min(30_000)
}

async fn call(target: &JsValue, name: &str, args: &[JsValue]) -> Result<JsValue, Failure> {
    let f: js_sys::Function = js_sys::Reflect::get(target, &name.into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| Failure { kind: SyncFailure::Invalid, message: format!("the sync module has no {name}") })?;
    let args: js_sys::Array = args.iter().collect();
    let value = f.apply(target, &args).map_err(Failure::from_js)?;
    match value.dyn_into::<js_sys::Promise>() {
        Ok(p) => JsFuture::from(p).await.map_err(Failure::from_js),
        Err(v) => Ok(v),
    }
}

fn options(pairs: &[(&str, &str)]) -> JsValue {
    let o = js_sys::Object::new();
    for (k, v) in pairs {
        if !v.is_empty() {
            let _ = js_sys::Reflect::set(&o, &(*k).into(), &(*v).into());
        }
    }
    o.into()
}

/// Runs `f` on the archive when it is free now; `None` when a request holds it (try again later).
fn with_store<T>(link: &Link, f: impl FnOnce(&mut Store) -> T) -> Option<T> {
    let mut archive = link.archive.try_borrow_mut().ok()?;
    archive.as_mut().map(|(store, _)| f(store))
}

/// How many changes wait for the server, as a user counts them (`None` while a request holds the archive).
fn waiting(link: &Link) -> Option<i64> {
    with_store(link, |s| s.sync_waiting_changes().unwrap_or(0))
}

async fn run_sync(sync: Rc<SyncRunner>, link: Link, settings: SyncSettings, module_url: String, run: u64) {
    let current = || sync.run.get() == run;
    set_state(&sync, &link, SyncState::Connecting);
    let module = load_module(&module_url).ok().filter(|m| !m.is_undefined());
    let Some(module) = module else {
        let message = "The sync module could not be loaded (is the app offline since before its first use?).";
        set_state(&sync, &link, SyncState::Failed { kind: SyncFailure::Module, message: message.into() });
        return;
    };
    let device = if settings.device_name.trim().is_empty() { "this device" } else { settings.device_name.trim() };
    let mut delay = 500;
    // Connect and open the spaces; a server that is away is tried again, a refusal waits for the user.
    let (connection, mut spaces) = loop {
        if !current() {
            return;
        }
        match open(&module, &settings, device).await {
            Ok(v) => break v,
            Err(f) if f.away() => {
                go_offline(&sync, &link, f.message);
                super::archive::sleep_ms(delay).await;
                delay = (delay * 2).min(15_000);
            }
            Err(f) => {
                set_state(&sync, &link, SyncState::Failed { kind: f.kind, message: f.message });
                return;
            }
        }
    };
    // Only now, with the key checked, does the archive start keeping an outbox.
    loop {
        match with_store(&link, |s| s.enable_sync(device)) {
            Some(Ok(_)) => break,
            Some(Err(e)) => {
                let (kind, message) = (SyncFailure::Archive(e.kind()), format!("Sync could not start: {e}"));
                set_state(&sync, &link, SyncState::Failed { kind, message });
                return;
            }
            None => super::archive::sleep_ms(200).await,
        }
    }
    // The connection says when it drops (the server went away): Offline at once, not when the round
    // in flight times out.
    let on_status = {
        let (sync, link, run_now) = (sync.clone(), link.clone(), run);
        Closure::<dyn Fn(JsValue)>::new(move |change: JsValue| {
            let status = js_sys::Reflect::get(&change, &"status".into()).ok().and_then(|s| s.as_string());
            if sync.run.get() == run_now && status.as_deref() == Some("offline") {
                go_offline(&sync, &link, UNREACHABLE.into());
            }
        })
    };
    let unsubscribe = call(&connection, "onStatus", &[on_status.as_ref().clone()]).await.ok();
    // (A closed connection is not skipped: the next round fails with what to do.)
    let connected = || {
        js_sys::Reflect::get(&connection, &"status".into()).ok().and_then(|v| v.as_string()).as_deref()
            != Some("offline")
    };
    let mut idle = 0u32;
    // Failed rounds in a row that the archive caused (storage full, busy …).
    let mut archive_tries = 0u32;
    // Messages kept aside by an older version are tried again once per run, before anything new.
    for space in spaces.iter() {
        retry_kept(&link, space).await;
    }
    while current() {
        // No round while the browser or the connection is away: each would only wait for its timeout.
        let away = if !online() {
            Some(OFFLINE)
        } else if !connected() {
            Some(UNREACHABLE)
        } else {
            None
        };
        if let Some(message) = away {
            go_offline(&sync, &link, message.into());
            super::archive::sleep_ms(300).await;
            continue;
        }
        let mut result = Ok(false);
        for space in spaces.iter_mut() {
            result = match round(&link, space).await {
                Ok(worked) => result.map(|w| w || worked),
                Err(f) => Err(f),
            };
            if result.is_err() {
                break;
            }
        }
        match result {
            Ok(worked) => {
                archive_tries = 0;
                if let Some(state) = with_store(&link, |s| synced(s, &spaces)).flatten() {
                    set_state(&sync, &link, state);
                }
                idle = if worked { 0 } else { (idle + 1).min(6) };
            }
            Err(f) if f.away() => {
                go_offline(&sync, &link, f.message);
                idle = 6;
            }
            // The archive failed for a moment: nothing was skipped (the round rolled back); the same
            // round is tried again a little later, a bounded number of times, and the header says so.
            Err(f) if f.kind.passing() && archive_tries < ARCHIVE_TRIES => {
                archive_tries += 1;
                let wait = backoff_ms(archive_tries);
                let waiting = waiting(&link).unwrap_or(0);
                let message = format!(
                    "{} Sync tries again in {} s (try {archive_tries} of {ARCHIVE_TRIES}); nothing is lost meanwhile.",
                    f.message,
                    wait / 1000
                );
                set_state(&sync, &link, SyncState::Retrying { waiting, message });
                super::archive::sleep_ms(wait).await;
                continue;
            }
            Err(f) => {
                let message = if f.kind.passing() {
                    format!("{} Sync stopped after {ARCHIVE_TRIES} tries: free some space (or reload the page), then turn sync on again in Settings → Sync.", f.message)
                } else {
                    f.message
                };
                set_state(&sync, &link, SyncState::Failed { kind: f.kind, message });
                break;
            }
        }
        // Busy rounds follow each other; an idle one waits a little longer each time (≤ 300 ms),
        // unless a follower holds something or a write here wakes sync first.
        wait(&sync, &spaces, if idle == 0 { 20 } else { (50 * idle + 50).min(300) }).await;
    }
    if let Some(unsubscribe) = unsubscribe.and_then(|f| f.dyn_into::<js_sys::Function>().ok()) {
        let _ = unsubscribe.call0(&JsValue::NULL);
    }
    drop(on_status);
    for space in &spaces {
        let _ = call(&space.handle, "close", &[]).await;
    }
    let _ = call(&connection, "close", &[]).await;
}

/// Connects and opens this device's spaces: its own, then each team space it joined. A team's
/// refusal names the team (the user may leave it in Settings → Sync).
async fn open(module: &JsValue, settings: &SyncSettings, device: &str) -> Result<(JsValue, Vec<Opened>), Failure> {
    let connect = options(&[
        ("user", settings.user.trim()),
        ("pass", &settings.password),
        ("token", settings.token.trim()),
        ("creds", settings.creds.trim()),
        ("name", device),
    ]);
    // One server, or the nodes of a cluster: the module connects to one and moves to another when it goes.
    let servers: js_sys::Array = settings.servers().iter().map(|u| JsValue::from_str(u)).collect();
    let _ = js_sys::Reflect::set(&connect, &"servers".into(), &servers);
    let connection = call(module, "connect", &[connect]).await?;
    let own = (Space::Personal, settings.space_name(), settings.passphrase.clone());
    let teams = settings.teams.iter().map(|t| (Space::Team(t.name.clone()), t.name.clone(), t.key.clone()));
    let mut spaces = Vec::new();
    for (space, name, passphrase) in std::iter::once(own).chain(teams) {
        let o = options(&[("space", &name), ("passphrase", &passphrase)]);
        let _ = js_sys::Reflect::set(&o, &"create".into(), &true.into());
        let handle = match call(module, "openSpace", &[connection.clone(), o]).await {
            Ok(handle) => handle,
            Err(f) if matches!(space, Space::Team(_)) && !f.away() => {
                let message = format!(
                    "Team space {name}: {} (Settings → Sync: leave it, or ask for a new invite code.)",
                    f.message
                );
                return Err(Failure { message, ..f });
            }
            Err(f) => return Err(f),
        };
        spaces.push(Opened { space, handle, read: Read::default(), follower: None });
    }
    Ok((connection, spaces))
}

/// One open space: the archive's name for it, the module's handle, how far it was read, and its
/// follower once it has been read to its end.
struct Opened {
    space: Space,
    handle: JsValue,
    read: Read,
    follower: Option<JsValue>,
}

/// How far the transport has read a space: the sequence read up to (set-up messages and chunks
/// included, which the archive's cursor skips) and the stream's last when the read began; and the
/// session whose reply holds back the rest of the last batch, if one does (fetched again once saved).
#[derive(Default)]
struct Read {
    last_seq: i64,
    stream_last: i64,
    held_for: Option<String>,
}

/// Where sync stands after a round: what waits here, and how far the spaces are read (a first sync's
/// progress counts every space).
fn synced(store: &Store, spaces: &[Opened]) -> Option<SyncState> {
    let all = store.sync_status().ok()?.waiting;
    let waiting = store.sync_waiting_changes().ok()?;
    let (mut behind, mut stream_last) = (0, 0);
    for s in spaces {
        let cursor = store.sync_cursor(&s.space).ok()?.max(s.read.last_seq);
        behind += (s.read.stream_last - cursor).max(0);
        stream_last += s.read.stream_last;
    }
    // A workspace set to a team space this device has not joined (set on another device): its
    // changes wait, and the header says for what.
    let mut unjoined = Vec::new();
    for space in store.sync_spaces().ok()? {
        if let Space::Team(name) = &space {
            if !spaces.iter().any(|s| s.space == space) && store.sync_waiting(&space).ok()? > 0 {
                unjoined.push(name.clone());
            }
        }
    }
    Some(SyncState::Synced { waiting, sending: all > waiting, behind, stream_last, unjoined, kept: kept(store)? })
}

/// The changes kept aside, grouped by device and reason, for the sync dialog.
fn kept(store: &Store) -> Option<Vec<KeptChanges>> {
    let mut out: Vec<KeptChanges> = Vec::new();
    for q in store.sync_quarantined().ok()? {
        let reason = match q.reason {
            QuarantineReason::Undecryptable(_) => KeptReason::Undecryptable,
            QuarantineReason::NewerKind(_) => KeptReason::NewerKind,
            QuarantineReason::Malformed(_) => KeptReason::Malformed,
            QuarantineReason::Refused(_) => KeptReason::Refused,
        };
        let detail = q.reason.to_string();
        match out.iter_mut().find(|k| k.device == q.device_name && k.reason == reason && k.detail == detail) {
            Some(k) => k.count += 1,
            None => out.push(KeptChanges { device: q.device_name, reason, detail, count: 1 }),
        }
    }
    Some(out)
}

/// Tries again the messages of `opened`'s space kept aside by an older version of Cowork: each is
/// opened by the transport from its sealed bytes and applied if this version can; what still
/// cannot be stays, marked as tried by this version. Best effort: a failure leaves them for the
/// next run.
async fn retry_kept(link: &Link, opened: &Opened) {
    let Some(Ok(due)) = with_store(link, |s| s.sync_quarantine_due(&opened.space)) else { return };
    for kept in due {
        let sealed: JsValue = js_sys::Uint8Array::from(kept.sealed.as_slice()).into();
        let received = match call(&opened.handle, "unseal", &[kept.msg_id.as_str().into(), sealed]).await {
            Ok(body) => read_message(&body.as_string().unwrap_or_default()),
            Err(f) if f.away() => return,
            Err(f) => Received::Unreadable(Unreadable {
                msg_id: kept.msg_id.clone(),
                device_id: String::new(),
                device_name: String::new(),
                reason: QuarantineReason::Undecryptable(f.message),
            }),
        };
        let retried = with_store(link, |s| s.retry_quarantined(&opened.space, kept.seq, &kept.msg_id, &received));
        if let Some(Ok(None)) = retried {
            (link.broadcast)(Event::SessionsChanged { deleted: None });
        }
    }
}

/// One round in one space: publish what waits, apply what arrived. Whether anything was done.
async fn round(link: &Link, opened: &mut Opened) -> Result<bool, Failure> {
    let Opened { space, handle, read, follower } = opened;
    let space = &*space;
    let mut worked = false;
    let store_error = Failure::archive;
    if let Some(out) = with_store(link, |s| s.sync_outgoing(space, BATCH)) {
        let out = out.map_err(store_error)?;
        if !out.is_empty() {
            let list: js_sys::Array = out
                .iter()
                .map(|m| {
                    let body = serde_json::to_string(m).expect("sync messages are plain data");
                    options(&[("id", &m.id), ("subject", &m.change.subject()), ("body", &body)])
                })
                .collect();
            let acked = call(handle, "publish", &[list.into()]).await?.as_f64().unwrap_or(0.0) as usize;
            if acked > 0 {
                let seq = out[acked.min(out.len()) - 1].seq;
                with_store(link, |s| s.sync_published(space, seq)).transpose().map_err(store_error)?;
                worked = true;
            }
        }
    }
    let Some(cursor) = with_store(link, |s| s.sync_cursor(space)).transpose().map_err(store_error)? else {
        return Ok(worked);
    };
    if read.held_for.is_some() && *link.writing.borrow() == read.held_for {
        return Ok(worked);
    }
    let after = cursor.max(read.last_seq);
    let (fetched, from) = receive(handle, follower, after).await?;
    let number = |k: &str| js_sys::Reflect::get(&fetched, &k.into()).ok().and_then(|v| v.as_f64()).map(|v| v as i64);
    let read_to = number("lastSeq").unwrap_or(after);
    read.stream_last = number("streamLast").unwrap_or(read_to);
    let messages: js_sys::Array =
        js_sys::Reflect::get(&fetched, &"messages".into()).ok().and_then(|m| m.dyn_into().ok()).unwrap_or_default();
    // Each message read by this version, or kept aside as one it cannot read (one the transport
    // could not open, one of a kind from a newer version): the rest of the stream applies.
    let text = |m: &JsValue, k: &str| js_sys::Reflect::get(m, &k.into()).ok().and_then(|v| v.as_string());
    let mut batch = Vec::with_capacity(messages.length() as usize);
    for m in messages.iter().skip(from) {
        let seq = js_sys::Reflect::get(&m, &"seq".into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0) as i64;
        let received = match (text(&m, "body"), text(&m, "error")) {
            // Kept aside under the transport's id, which its seal is bound to (a pack's changes share
            // one sequence: the id tells them apart).
            (Some(body), _) => match read_message(&body) {
                Received::Unreadable(u) => {
                    Received::Unreadable(Unreadable { msg_id: text(&m, "id").unwrap_or(u.msg_id), ..u })
                }
                change => change,
            },
            (None, error) => Received::Unreadable(Unreadable {
                msg_id: text(&m, "id").unwrap_or_default(),
                device_id: String::new(),
                device_name: String::new(),
                reason: QuarantineReason::Undecryptable(error.unwrap_or_else(|| "the transport gave no body".into())),
            }),
        };
        batch.push((seq, received));
    }
    // What the stream holds of the batch's `i`th message, still sealed: kept for one not applied.
    let mut sealed = |i: usize| {
        let m = messages.get((from + i) as u32);
        js_sys::Reflect::get(&m, &"sealed".into())
            .ok()
            .and_then(|v| v.dyn_into::<js_sys::Uint8Array>().ok())
            .map(|a| a.to_vec())
            .unwrap_or_default()
    };
    if batch.is_empty() {
        // Only set-up messages or the first chunks of one, or what a fetch read already: nothing to apply.
        read.last_seq = read.last_seq.max(read_to);
        return Ok(worked);
    }
    let writing = link.writing.borrow().clone();
    let Some(applied) = with_store(link, |s| {
        let stop = match &writing {
            Some(session) => {
                let own = s.sync_device()?.map(|d| d.id).unwrap_or_default();
                applicable_while_writing(&batch, &own, session)
            }
            None => batch.len(),
        };
        let applied = if stop > 0 { Some(s.apply_sync_received(space, &batch[..stop], &mut sealed)?) } else { None };
        let turns = applied.as_ref().map(|a| s.turns_by_gid(&a.turns)).transpose()?.unwrap_or_default();
        Ok::<_, cowork_core::Error>((applied, turns, stop))
    }) else {
        return Ok(worked);
    };
    let (applied, turns, stop) = applied.map_err(store_error)?;
    read.held_for = if stop < batch.len() { writing } else { None };
    let Some(applied) = applied else { return Ok(worked) };
    read.last_seq = if stop == batch.len() { read_to } else { batch[stop - 1].0 };
    for turn in turns {
        (link.broadcast)(Event::turn_appended(turn));
    }
    for deleted in &applied.deleted {
        (link.broadcast)(Event::SessionsChanged { deleted: Some(deleted.clone()) });
    }
    if applied.changes > 0 {
        (link.broadcast)(Event::SessionsChanged { deleted: None });
    }
    Ok(true)
}
