//! The importer: core's readers of other tools' exports, and its writers of exports in other tools'
//! formats, as a wasm module of their own (`importer/`, built into `import/` by
//! `scripts/importer.sh`), loaded with `importScripts` the first time an import or such an export
//! needs it and kept for the worker's life — so they are not part of what every start loads. [`load`]
//! brings it in; [`read`] hands each conversation it reads to the store as soon as it is read;
//! [`export`] makes a ChatGPT or Markdown file from what the archive gathered.

use crate::protocol::{ErrorKind, FilePayload, Problem};
use cowork_core::export::ExportSource;
use cowork_core::import::{Conversation, ReadFailure, ReadSummary};
use cowork_core::{Error, Result};
use js_sys::{Array, Function, Object, Reflect, Uint8Array};
use std::cell::Cell;
use wasm_bindgen::closure::ScopedClosure;
use wasm_bindgen::{JsCast, JsValue};

/// The importer's script and wasm, beside the worker's own files.
const SCRIPT: &str = "import/importer.js";
const WASM: &str = "import/importer_bg.wasm";
/// The global its script defines (wasm-bindgen's `--no-modules-global`).
const GLOBAL: &str = "coworkImporter";

thread_local! {
    static LOADED: Cell<bool> = const { Cell::new(false) };
}

/// Whether `files` need the importer: anything but one Cowork export (which the archive reads itself).
pub fn needed(files: &[FilePayload]) -> bool {
    !files.iter().all(|f| cowork_core::store::is_cowork_archive(&f.bytes))
}

/// Loads the importer once; later calls return at once.
pub async fn load() -> std::result::Result<(), Problem> {
    if LOADED.get() {
        return Ok(());
    }
    let failed = |step: &str, e: JsValue| {
        let why = e.as_string().or_else(|| Reflect::get(&e, &"message".into()).ok()?.as_string());
        Problem::new(
            ErrorKind::Network,
            format!(
                "the importer could not be {step} ({}): {}; nothing was imported or exported. Reload the \
                 page and try again (the first import, or export in another tool's format, needs the \
                 connection once; later ones work offline)",
                SCRIPT,
                why.unwrap_or_else(|| "no reason given".into())
            ),
        )
    };
    let global = js_sys::global();
    let import_scripts: Function = Reflect::get(&global, &"importScripts".into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| failed("loaded", "this is not a worker".into()))?;
    import_scripts.call1(&global, &SCRIPT.into()).map_err(|e| failed("loaded", e))?;
    let init: Function = Reflect::get(&global, &GLOBAL.into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| failed("loaded", format!("{SCRIPT} did not define {GLOBAL}").into()))?;
    let options = Object::new();
    Reflect::set(&options, &"module_or_path".into(), &WASM.into()).map_err(|e| failed("started", e))?;
    let started = init.call1(&JsValue::NULL, &options).map_err(|e| failed("started", e))?;
    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&started)).await.map_err(|e| failed("started", e))?;
    LOADED.set(true);
    Ok(())
}

/// The loaded importer's function `name`; `not_loaded` is the error when it is not there.
fn function(name: &str, not_loaded: &str) -> Result<Function> {
    Reflect::get(&js_sys::global(), &GLOBAL.into())
        .and_then(|importer| Reflect::get(&importer, &name.into()))
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| Error::Invalid(not_loaded.into()))
}

/// The file an export in another tool's format makes from `source` (the importer [`load`]ed first).
pub fn export(source: &ExportSource) -> Result<String> {
    let render = function("render", "the exporter is not loaded; try the export again")?;
    let source = serde_json::to_string(source).map_err(|e| Error::Invalid(format!("handing the export over: {e}")))?;
    match render.call1(&JsValue::NULL, &source.into()) {
        Ok(text) => Ok(text.as_string().unwrap_or_default()),
        Err(thrown) => Err(Error::Invalid(format!(
            "the export failed: {}",
            thrown.as_string().unwrap_or_else(|| format!("{thrown:?}"))
        ))),
    }
}

/// Reads `files` with the importer ([`load`] first), handing every conversation to `each` as soon as it
/// is read. `each`'s error stops the reading and is returned as it was.
pub fn read(files: &[FilePayload], each: &mut dyn FnMut(Conversation) -> Result<()>) -> Result<ReadSummary> {
    let read = function("read", "the importer is not loaded; try the import again")?;
    let names: Array = files.iter().map(|f| JsValue::from_str(&f.name)).collect();
    let contents: Array = files.iter().map(|f| JsValue::from(Uint8Array::from(&f.bytes[..]))).collect();
    let mut stopped: Option<Error> = None;
    let answer = {
        let mut on_conversation = |json: String| -> bool {
            let handed = serde_json::from_str::<Conversation>(&json)
                .map_err(|e| Error::Invalid(format!("the importer handed on a conversation that cannot be read: {e}")))
                .and_then(&mut *each);
            match handed {
                Ok(()) => true,
                Err(e) => {
                    stopped = Some(e);
                    false
                }
            }
        };
        let callback = ScopedClosure::<dyn FnMut(String) -> bool>::borrow_mut(&mut on_conversation);
        read.call3(&JsValue::NULL, &names, &contents, callback.as_ref())
    };
    if let Some(e) = stopped {
        return Err(e);
    }
    let json = |v: JsValue| v.as_string().unwrap_or_default();
    match answer {
        Ok(summary) => serde_json::from_str(&json(summary))
            .map_err(|e| Error::Invalid(format!("the importer's answer cannot be read: {e}"))),
        Err(thrown) => Err(match serde_json::from_str::<ReadFailure>(&json(thrown.clone())) {
            Ok(failure) => failure.into(),
            Err(_) => Error::Invalid(format!("the importer failed: {thrown:?}")),
        }),
    }
}
