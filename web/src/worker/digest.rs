//! Attachments' SHA-256 by the browser's WebCrypto (`crypto.subtle.digest`), native code several times
//! faster than hashing in wasm (1 MB: about 0.5–1 ms against 2.65 ms for `sha2`, BENCHMARKS.md): the
//! worker hashes a message's attachments this way before saving them, and the store uses the digest
//! ([`NewAttachment::with_sha256`]). Where WebCrypto is missing or fails, the store hashes them itself.

use cowork_core::NewAttachment;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// `attachments`, each with its SHA-256 when WebCrypto gave it.
pub(super) async fn hashed(attachments: Vec<NewAttachment>) -> Vec<NewAttachment> {
    let mut out = Vec::with_capacity(attachments.len());
    for a in attachments {
        out.push(match sha256(&a.bytes).await {
            Some(hex) => a.with_sha256(hex),
            None => a,
        });
    }
    out
}

/// SHA-256 of `bytes` in lower-case hex, by WebCrypto; `None` when it is not available here.
pub(super) async fn sha256(bytes: &[u8]) -> Option<String> {
    let crypto = js_sys::Reflect::get(&js_sys::global(), &"crypto".into()).ok()?;
    let subtle = js_sys::Reflect::get(&crypto, &"subtle".into()).ok()?;
    let digest: js_sys::Function = js_sys::Reflect::get(&subtle, &"digest".into()).ok()?.dyn_into().ok()?;
    // One copy out of wasm memory (a tenth of a millisecond for 1 MB); a view would need `unsafe`.
    let data = js_sys::Uint8Array::from(bytes);
    let promise: js_sys::Promise = digest.call2(&subtle, &JsValue::from_str("SHA-256"), &data).ok()?.dyn_into().ok()?;
    let buffer = JsFuture::from(promise).await.ok()?;
    let digest = js_sys::Uint8Array::new(&buffer).to_vec();
    (digest.len() == 32).then(|| digest.iter().map(|b| format!("{b:02x}")).collect())
}
