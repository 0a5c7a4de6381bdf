//! What crosses between JS and the archive: options objects read by name, values as plain objects,
//! failures as JS `Error`s named after the method, and the worker's replies as each method's result.

use crate::options;
use cowork_web::client::StorageError;
use cowork_web::protocol::{AttachmentData, ErrorKind, Sent};
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A rejection for a call the page made wrongly (a missing argument, a bad option): kind `invalid`.
pub(crate) fn error(what: &str, message: impl std::fmt::Display) -> JsValue {
    error_of_kind(what, ErrorKind::Invalid, message)
}

/// A JS `Error` named after the method, with `kind` (the declared `CoworkError`), so a page chooses
/// its remedy from the kind, never from the words.
pub(crate) fn error_of_kind(what: &str, kind: ErrorKind, message: impl std::fmt::Display) -> JsValue {
    let error = js_sys::Error::new(&format!("{what}: {message}"));
    let kind = serde_json::to_value(kind).ok().and_then(|k| k.as_str().map(JsValue::from_str)).unwrap_or_default();
    let _ = js_sys::Reflect::set(&error, &"kind".into(), &kind);
    error.into()
}

/// A rejection for what the archive or the model answered: the failure's own kind.
pub(crate) fn storage_error(what: &str, e: &StorageError) -> JsValue {
    error_of_kind(what, e.kind(), e)
}

/// An options object (absent: every option at its default). It goes through a JSON value so that a
/// misspelt option is refused by name (serde-wasm-bindgen reads only the fields it knows).
pub(crate) fn options_from<T: DeserializeOwned + Default>(
    what: &str,
    v: Option<impl AsRef<JsValue>>,
) -> Result<T, JsValue> {
    match v.map(|o| o.as_ref().clone()) {
        Some(o) if !o.is_undefined() && !o.is_null() => plain(o).map_err(|e| error(what, format!("options: {e}"))),
        _ => Ok(T::default()),
    }
}

/// A serde-wasm-bindgen error's message (its `Display` adds "Error: ").
pub(crate) fn swb(e: serde_wasm_bindgen::Error) -> String {
    message_of(&e.into())
}

pub(crate) fn plain<T: DeserializeOwned>(v: JsValue) -> Result<T, String> {
    let value: serde_json::Value = serde_wasm_bindgen::from_value(v).map_err(swb)?;
    serde_json::from_value(value).map_err(|e| e.to_string())
}

pub(crate) fn to_js<T: Serialize + ?Sized>(v: &T) -> Result<JsValue, String> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(swb)
}

/// A JS exception's message (an `Error`'s `message`, or the thrown value as text).
pub(crate) fn message_of(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

pub(crate) fn session_js(session: cowork_core::Session) -> Result<JsValue, String> {
    to_js(&options::session_for_page(session))
}

pub(crate) fn done(_: ()) -> Result<JsValue, String> {
    Ok(JsValue::UNDEFINED)
}

pub(crate) fn text(text: String) -> Result<JsValue, String> {
    Ok(text.into())
}

/// The outcome in words, as pages have always read it ("done", "interrupted: …").
pub(crate) fn sent(Sent { session_id, outcome }: Sent) -> Result<JsValue, String> {
    to_js(&serde_json::json!({"session_id": session_id, "outcome": outcome.describe()}))
}

pub(crate) fn required(what: &str, name: &str, v: &str) -> Result<(), JsValue> {
    if v.trim().is_empty() {
        Err(error(what, format!("{name} is required")))
    } else {
        Ok(())
    }
}

/// The page's attachments: an array of `Blob`s (`File`s are `Blob`s); `undefined` or `null` for none.
pub(crate) fn blobs(what: &str, v: Option<JsValue>) -> Result<Vec<web_sys::Blob>, JsValue> {
    let Some(v) = v.filter(|v| !v.is_undefined() && !v.is_null()) else { return Ok(Vec::new()) };
    let array: js_sys::Array =
        v.dyn_into().map_err(|_| error(what, "attachments: expected an array of Blob or File objects"))?;
    array
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.dyn_into::<web_sys::Blob>()
                .map_err(|_| error(what, format!("attachments[{i}]: expected a Blob or File")))
        })
        .collect()
}

/// `options.attachments` taken out of a request's options (the rest is read as `RequestOptions`).
pub(crate) fn split_attachments(
    what: &str,
    options: Option<super::RequestOptionsArg>,
) -> Result<(Option<super::RequestOptionsArg>, Vec<web_sys::Blob>), JsValue> {
    let Some(o) = options.map(JsValue::from).filter(|o| o.is_object()) else {
        return Ok((None, Vec::new()));
    };
    let key = JsValue::from_str("attachments");
    let files = blobs(what, js_sys::Reflect::get(&o, &key).ok())?;
    let rest = js_sys::Object::assign(&js_sys::Object::new(), o.unchecked_ref());
    let _ = js_sys::Reflect::delete_property(&rest, &key);
    Ok((Some(JsValue::from(rest).unchecked_into()), files))
}

/// An attachment's bytes as a `Blob` of its type.
pub(crate) fn attachment_blob(AttachmentData { attachment, data }: AttachmentData) -> Result<JsValue, String> {
    let bytes = cowork_core::attachment::from_base64(&data).map_err(|e| format!("the attachment's bytes: {e}"))?;
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes.as_slice()));
    let props = web_sys::BlobPropertyBag::new();
    props.set_type(&attachment.map(|a| a.mime).unwrap_or_else(|| "application/octet-stream".into()));
    web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &props).map(JsValue::from).map_err(|e| message_of(&e))
}
