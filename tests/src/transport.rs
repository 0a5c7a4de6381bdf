//! A native [`Transport`] for the agent loop: plain HTTP/1.1 over a loopback TCP connection, with a
//! streaming body, so the loop is tested against the dev server exactly as the browser uses it.

use bytes::Bytes;
use cowork_core::agent::{HttpResponse, ResponseBody, Transport, TransportError};
use cowork_core::provider::HttpRequest;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use std::time::{Duration, Instant};

/// Talks HTTP to loopback servers; `sleep_ms` can be sped up for retry tests.
pub struct HttpTransport {
    started: Instant,
    /// Divides every wait (retry backoff), so tests need not wait real seconds.
    pub time_scale: u64,
}

impl Default for HttpTransport {
    fn default() -> Self {
        HttpTransport::with_time_scale(1)
    }
}

impl HttpTransport {
    /// A transport whose waits are `scale` times shorter than asked.
    pub fn with_time_scale(scale: u64) -> HttpTransport {
        HttpTransport { started: Instant::now(), time_scale: scale }
    }
}

/// A response body of [`HttpTransport`], read frame by frame from hyper's stream.
pub struct Body(Incoming);

impl ResponseBody for Body {
    async fn chunk(&mut self) -> Option<Result<Vec<u8>, TransportError>> {
        loop {
            match self.0.frame().await? {
                Ok(frame) => {
                    if let Ok(data) = frame.into_data() {
                        return Some(Ok(data.to_vec()));
                    }
                }
                Err(e) => return Some(Err(TransportError::Network(e.to_string()))),
            }
        }
    }
}

impl Transport for HttpTransport {
    type Body = Body;

    async fn send(&self, req: &HttpRequest) -> Result<HttpResponse<Body>, TransportError> {
        let net = |e: &dyn std::fmt::Display| TransportError::Network(e.to_string());
        let uri: hyper::Uri = req.url.parse().map_err(|e| net(&e))?;
        let host = uri.host().ok_or_else(|| TransportError::Network(format!("no host in {}", req.url)))?.to_owned();
        let port = uri.port_u16().unwrap_or(80);
        let stream = tokio::net::TcpStream::connect((host.as_str(), port)).await.map_err(|e| net(&e))?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.map_err(|e| net(&e))?;
        tokio::spawn(conn);
        let mut builder = hyper::Request::builder()
            .method(req.method.as_str())
            .uri(uri.path_and_query().map(|p| p.as_str()).unwrap_or("/"))
            .header("host", format!("{host}:{port}"));
        for (k, v) in &req.headers {
            builder = builder.header(k, v);
        }
        let request = builder.body(Full::new(Bytes::from(req.body.clone()))).map_err(|e| net(&e))?;
        let resp = sender.send_request(request).await.map_err(|e| net(&e))?;
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or_default().to_owned()))
            .collect();
        Ok(HttpResponse { status: resp.status().as_u16(), headers, body: Body(resp.into_body()) })
    }

    async fn sleep_ms(&self, ms: u64) {
        tokio::time::sleep(Duration::from_millis(ms / self.time_scale.max(1))).await;
    }

    fn now_ms(&self) -> i64 {
        self.started.elapsed().as_millis() as i64
    }
}
