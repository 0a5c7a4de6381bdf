//! What an archive and a UI mounted from it share: the page's tools (run for the storage client), its
//! approval handler, and the event listeners the worker's events are passed on to.

use super::convert::{message_of, to_js};
use crate::options;
use cowork_web::client::{StorageClient, ToolAnswer, ToolRunner};
use cowork_web::protocol::{ops, Event, HostOptions, HostToolSpec};
use cowork_web::settings::ModelSettings;
use js_sys::{Function, Object, Promise, Reflect};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// What an archive and a UI mounted from it share: the page's tools, its approval handler, the event
/// listeners, the default model.
pub(crate) struct Shared {
    pub(crate) tools: RefCell<BTreeMap<String, (HostToolSpec, Function)>>,
    pub(crate) approval: RefCell<Option<Function>>,
    pub(crate) listeners: RefCell<Vec<(u32, String, Function)>>,
    pub(crate) next_listener: Cell<u32>,
    pub(crate) settings: RefCell<ModelSettings>,
    pub(crate) instructions: RefCell<String>,
    /// Tool handlers running now.
    pub(crate) running_tools: Cell<u32>,
}

impl Shared {
    fn emit(&self, name: &str, payload: &JsValue) {
        let listeners: Vec<Function> =
            self.listeners.borrow().iter().filter(|(_, n, _)| n == name).map(|(_, _, f)| f.clone()).collect();
        for f in listeners {
            if let Err(e) = f.call1(&JsValue::NULL, payload) {
                web_sys::console::error_2(&format!("a Cowork \"{name}\" listener threw:").into(), &e);
            }
        }
    }

    /// Passes a worker event on to the page's listeners (`id` 0: a change made elsewhere).
    pub(crate) fn dispatch(&self, id: u64, event: &Event) {
        let name = match event {
            Event::TurnAppended { .. } => "turn",
            Event::SessionCreated { .. } => "session",
            Event::SessionsChanged { .. } => "sessions",
            Event::Delta { .. } if id != 0 => "delta",
            Event::ToolStarted { .. } | Event::ToolFinished { .. } if id != 0 => "tool",
            Event::TaskProgress { .. } if id != 0 => "task",
            Event::Retrying { .. } if id != 0 => "retry",
            Event::Error(_) if id != 0 => "error",
            _ => return,
        };
        let payload = match event {
            Event::SessionCreated { session } => {
                to_js(&Event::SessionCreated { session: options::session_for_page(session.clone()) }.page_json())
            }
            other => to_js(&other.page_json()),
        };
        match payload {
            Ok(payload) => self.emit(name, &payload),
            Err(e) => web_sys::console::error_1(&format!("a Cowork event could not be passed on: {e}").into()),
        }
    }

    pub(crate) fn host_options(&self, instructions: Option<String>) -> HostOptions {
        HostOptions {
            tools: self.tools.borrow().values().map(|(spec, _)| spec.clone()).collect(),
            instructions: instructions.unwrap_or_else(|| self.instructions.borrow().clone()),
        }
    }
}

/// Runs the page's tools for the storage client.
pub(crate) struct Runner(pub(crate) Rc<Shared>);

impl ToolRunner for Runner {
    fn host_options(&self) -> HostOptions {
        self.0.host_options(None)
    }

    fn run(&self, call_id: String, name: String, arguments: String) -> Pin<Box<dyn Future<Output = ToolAnswer>>> {
        let shared = self.0.clone();
        Box::pin(async move {
            let handler = shared.tools.borrow().get(&name).map(|(_, f)| f.clone());
            let Some(handler) = handler else {
                return ToolAnswer {
                    content: format!("Error: the tool {name:?} is no longer registered in this page."),
                    success: false,
                };
            };
            let args = match js_sys::JSON::parse(if arguments.trim().is_empty() { "{}" } else { &arguments }) {
                Ok(v) => v,
                Err(e) => {
                    return ToolAnswer {
                        content: format!(
                            "Error: the arguments are not valid JSON ({}); send a JSON object that matches the tool's schema.",
                            message_of(&e)
                        ),
                        success: false,
                    }
                }
            };
            let call = Object::new();
            let _ = Reflect::set(&call, &"call_id".into(), &call_id.into());
            let _ = Reflect::set(&call, &"name".into(), &name.clone().into());
            shared.running_tools.set(shared.running_tools.get() + 1);
            let result = match handler.call2(&JsValue::NULL, &args, &call) {
                Ok(v) => JsFuture::from(Promise::resolve(&v)).await,
                Err(e) => Err(e),
            };
            shared.running_tools.set(shared.running_tools.get().saturating_sub(1));
            match result {
                Ok(v) if v.is_undefined() || v.is_null() => ToolAnswer { content: String::new(), success: true },
                Ok(v) => match v.as_string() {
                    Some(s) => ToolAnswer { content: s, success: true },
                    None => match js_sys::JSON::stringify(&v) {
                        Ok(s) => ToolAnswer { content: String::from(s), success: true },
                        Err(e) => ToolAnswer {
                            content: format!("Error: {name} returned a value that is not JSON: {}", message_of(&e)),
                            success: false,
                        },
                    },
                },
                Err(e) => ToolAnswer { content: format!("Error: {}", message_of(&e)), success: false },
            }
        })
    }
}

/// Asks the page's approval handler (none: the call is declined) and answers the worker.
pub(crate) fn ask_approval(
    shared: &Rc<Shared>,
    client: &StorageClient,
    call_id: String,
    name: String,
    arguments: String,
) {
    let mcp = cowork_web::protocol::McpCallee::of(&name);
    let handler = shared.approval.borrow().clone();
    let client = client.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let approved = match handler {
            None => {
                web_sys::console::warn_1(
                    &format!("Cowork: {name} needs approval and the page set no approval handler, so it was declined")
                        .into(),
                );
                false
            }
            Some(f) => {
                let request = Object::new();
                let _ = Reflect::set(&request, &"call_id".into(), &call_id.clone().into());
                let _ = Reflect::set(&request, &"name".into(), &name.into());
                let args = js_sys::JSON::parse(&arguments).unwrap_or_else(|_| arguments.into());
                let _ = Reflect::set(&request, &"arguments".into(), &args);
                if let Some(callee) = mcp.and_then(|m| to_js(&m).ok()) {
                    let _ = Reflect::set(&request, &"mcp".into(), &callee);
                }
                match f.call1(&JsValue::NULL, &request) {
                    Ok(v) => JsFuture::from(Promise::resolve(&v)).await.is_ok_and(|v| v.is_truthy()),
                    Err(_) => false,
                }
            }
        };
        let _ = client.call(ops::Approve { call_id, approved }).await;
    });
}
