//! Live sync by push, for the runner in `sync.rs`: a space read to its end is followed (the
//! transport's `space.follow`, an ordered consumer the server sends each message to as it is stored),
//! a round takes what the follower holds when it continues where this device has read
//! (`sync::pushed`) and fetches otherwise, and the wait between rounds ends as soon as a follower
//! holds something or a write here wakes sync (`SyncRunner::wake`).

use super::{call, Failure, Opened, SyncRunner, BATCH, FETCH};
use cowork_core::store::sync::{pushed, Pushed};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// Calls the method `name` of `target` and returns what it returns, unawaited.
fn method(target: &JsValue, name: &str, args: &[JsValue]) -> Option<JsValue> {
    let f: js_sys::Function = js_sys::Reflect::get(target, &name.into()).ok()?.dyn_into().ok()?;
    f.apply(target, &args.iter().collect()).ok()
}

/// Waits `ms` at most: less when a follower holds something (or broke) or a write here wakes sync.
pub(super) async fn wait(sync: &SyncRunner, spaces: &[Opened], ms: u32) {
    if sync.woken.replace(false) {
        return;
    }
    let waits = js_sys::Array::new();
    waits.push(&js_sys::Promise::new(&mut |resolve, _| {
        let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let _ = scope.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms as i32);
        *sync.wake.borrow_mut() = Some(resolve);
    }));
    // A follower that broke already is not waited for: the next round fetches at the cadence (one
    // that cannot follow at all would otherwise end every wait at once).
    let following = |f: &&JsValue| js_sys::Reflect::get(f, &"broken".into()).is_ok_and(|b| b.is_null());
    for follower in spaces.iter().filter_map(|s| s.follower.as_ref()).filter(following) {
        if let Some(arrival) = method(follower, "wait", &[ms.into()]) {
            waits.push(&arrival);
        }
    }
    let _ = JsFuture::from(js_sys::Promise::race(&waits)).await;
    sync.wake.borrow_mut().take();
}

/// What arrived after `after` (with how many of its first messages were read already): by push when
/// the follower's batch continues there, else fetched — a first sync, after a gap, a reconnection
/// or an error; once a fetch reads to the stream's end, the space is followed from there.
pub(super) async fn receive(
    handle: &JsValue,
    follower: &mut Option<JsValue>,
    after: i64,
) -> Result<(JsValue, usize), Failure> {
    let number =
        |o: &JsValue, k: &str| js_sys::Reflect::get(o, &k.into()).ok().and_then(|v| v.as_f64()).map(|v| v as i64);
    if let Some(taken) = follower.as_ref().and_then(|f| method(f, "take", &[JsValue::from_f64(BATCH as f64)])) {
        if !taken.is_null() {
            let messages: js_sys::Array = js_sys::Reflect::get(&taken, &"messages".into())
                .ok()
                .and_then(|m| m.dyn_into().ok())
                .unwrap_or_default();
            let seqs: Vec<i64> = messages.iter().map(|m| number(&m, "seq").unwrap_or(0)).collect();
            if let Pushed::Continues { from } = pushed(after, number(&taken, "after").unwrap_or(i64::MAX), &seqs) {
                return Ok((taken, from));
            }
        }
    }
    if let Some(broken) = follower.take() {
        let _ = method(&broken, "stop", &[]); // not awaited: its consumer goes away on its own time
    }
    let (count, bytes) = (JsValue::from_f64(FETCH.0 as f64), JsValue::from_f64(FETCH.1 as f64));
    let fetched = call(handle, "fetch", &[JsValue::from_f64(after as f64), count, bytes]).await?;
    if let (Some(read_to), Some(last)) = (number(&fetched, "lastSeq"), number(&fetched, "streamLast")) {
        if read_to >= last {
            *follower = method(handle, "follow", &[JsValue::from_f64(read_to as f64)]);
        }
    }
    Ok((fetched, 0))
}
