//! The agent loop's [`Transport`] in the browser: `fetch` with a streaming body reader and an
//! `AbortController` for Stop. Works in the storage worker (it uses the global scope, not `window`).

use cowork_core::agent::{HttpResponse, ResponseBody, Transport, TransportError};
use cowork_core::provider::HttpRequest;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, ReadableStreamDefaultReader, RequestInit, Response, WorkerGlobalScope};

/// Fetch-based transport; [`FetchTransport::abort`] cancels the request in flight (the Stop button).
#[derive(Clone, Default)]
pub struct FetchTransport {
    current: Rc<RefCell<Option<AbortController>>>,
}

impl FetchTransport {
    /// Aborts the model call in flight; the loop saves what streamed so far as an interrupted turn.
    pub fn abort(&self) {
        if let Some(c) = self.current.borrow_mut().take() {
            c.abort();
        }
    }
}

fn scope() -> WorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn describe(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_else(|| format!("{e:?}"))
}

fn is_abort(e: &JsValue) -> bool {
    e.dyn_ref::<js_sys::Error>().is_some_and(|e| e.name() == "AbortError")
}

/// A fetch response's body, read chunk by chunk from its stream (`None`: the response had no body).
pub struct FetchBody {
    reader: Option<ReadableStreamDefaultReader>,
}

impl ResponseBody for FetchBody {
    async fn chunk(&mut self) -> Option<Result<Vec<u8>, TransportError>> {
        let reader = self.reader.as_ref()?;
        match JsFuture::from(reader.read()).await {
            Ok(result) => {
                let done = js_sys::Reflect::get(&result, &"done".into()).ok()?.as_bool().unwrap_or(true);
                if done {
                    self.reader = None;
                    return None;
                }
                let value = js_sys::Reflect::get(&result, &"value".into()).ok()?;
                Some(Ok(js_sys::Uint8Array::new(&value).to_vec()))
            }
            Err(e) if is_abort(&e) => Some(Err(TransportError::Aborted)),
            Err(e) => Some(Err(TransportError::Network(describe(&e)))),
        }
    }
}

impl Transport for FetchTransport {
    type Body = FetchBody;

    async fn send(&self, req: &HttpRequest) -> Result<HttpResponse<FetchBody>, TransportError> {
        self.fetch(req).await
    }

    async fn sleep_ms(&self, ms: u64) {
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            let _ =
                scope().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms.min(i32::MAX as u64) as i32);
        });
        let _ = JsFuture::from(promise).await;
    }

    fn now_ms(&self) -> i64 {
        js_sys::Date::now() as i64
    }
}

impl FetchTransport {
    async fn fetch(&self, req: &HttpRequest) -> Result<HttpResponse<FetchBody>, TransportError> {
        let controller = AbortController::new().map_err(|e| TransportError::Network(describe(&e)))?;
        let init = RequestInit::new();
        init.set_method(&req.method);
        // fetch refuses a body on GET and HEAD, even an empty one.
        if !matches!(req.method.as_str(), "GET" | "HEAD") {
            init.set_body(&JsValue::from_str(&req.body));
        }
        init.set_signal(Some(&controller.signal()));
        let headers = web_sys::Headers::new().map_err(|e| TransportError::Network(describe(&e)))?;
        for (k, v) in &req.headers {
            headers.set(k, v).map_err(|e| TransportError::Network(describe(&e)))?;
        }
        init.set_headers(&headers);
        *self.current.borrow_mut() = Some(controller);
        let resp: Response = match JsFuture::from(scope().fetch_with_str_and_init(&req.url, &init)).await {
            Ok(r) => r.unchecked_into(),
            Err(e) if is_abort(&e) => return Err(TransportError::Aborted),
            // fetch gives the same TypeError for "offline" and "blocked by CORS"; say both.
            Err(e) => {
                return Err(TransportError::Network(format!(
                    "{} (the endpoint is unreachable, or it does not allow requests from this page's origin: check \
                     the URL, your connection, and the endpoint's CORS settings)",
                    describe(&e)
                )))
            }
        };
        let mut out_headers = Vec::new();
        for name in ["retry-after", "content-type"] {
            if let Ok(Some(v)) = resp.headers().get(name) {
                out_headers.push((name.to_owned(), v));
            }
        }
        let reader = resp.body().map(|b| b.get_reader().unchecked_into::<ReadableStreamDefaultReader>());
        Ok(HttpResponse { status: resp.status(), headers: out_headers, body: FetchBody { reader } })
    }
}
