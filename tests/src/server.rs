//! The development server: serves the built app from `dist/`, the scripted demo model at
//! `/v1/chat/completions` with its list at `GET /v1/models` ([`crate::model`]; the same model at
//! `/unlisted/v1/chat/completions`, an endpoint that lists no models, as some servers do), its
//! Anthropic-style twin at `/anthropic/v1/messages` ([`crate::model::thinking`]), a Loom-compatible
//! orchestrator at `/tasks` ([`crate::orchestrator`]) and the sentence-embedding model's files for
//! semantic recall at `/models/<model>/<file>` (from `target/models/`, where `scripts/model.sh` puts
//! them; plain GET with Content-Length, so the page can show download progress), on a loopback
//! address, with CORS for loopback origins.
//!
//! It refuses to bind anything but loopback, and can be told to stop by itself after a while so a
//! test run never leaves it behind.

use axum::Router;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

/// The largest request the demo model takes (its context, with a large paste in it).
pub const MAX_MODEL_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// How to run the server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Directory with the built app (Trunk's `dist/`).
    pub dist: PathBuf,
    /// Directory served at `/models/` (`target/models`: `<model>/<file>`, installed by `scripts/model.sh`).
    pub models: PathBuf,
    /// Must be a loopback address; port 0 picks a free port.
    pub addr: SocketAddr,
    /// Stop by itself after this long (tests); `None` runs until interrupted.
    pub lifetime: Option<Duration>,
}

/// Builds the router: the app's static files, never cached by the browser's HTTP cache (the
/// service worker decides what is cached).
pub fn router(cfg: &Config) -> Router {
    use axum::routing::{get, post};
    let files = ServeDir::new(&cfg.dist).append_index_html_on_directories(true);
    let models = ServeDir::new(&cfg.models);
    let model = Router::new()
        .route("/v1/chat/completions", post(crate::model::chat_completions))
        .route("/anthropic/v1/messages", post(crate::model::thinking::anthropic_messages))
        .route("/v1/models", get(crate::model::list_models))
        .route("/unlisted/v1/chat/completions", post(crate::model::chat_completions))
        .with_state(std::sync::Arc::new(crate::model::ModelState::default()))
        // A request carries the whole context: a 3 MB paste is more than axum's default 2 MB. Bounded.
        .layer(axum::extract::DefaultBodyLimit::max(MAX_MODEL_REQUEST_BYTES));
    let tasks = crate::orchestrator::router(std::sync::Arc::new(crate::orchestrator::Orchestrator::default()));
    let cors = tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::AllowOrigin::predicate(|origin, _| is_loopback_origin(origin.as_bytes())))
        .allow_methods(tower_http::cors::Any)
        .allow_headers(tower_http::cors::Any);
    Router::new().merge(model).merge(tasks).nest_service("/models", models).fallback_service(files).layer(cors).layer(
        SetResponseHeaderLayer::overriding(
            axum::http::header::CACHE_CONTROL,
            axum::http::HeaderValue::from_static("no-cache"),
        ),
    )
}

/// `http://localhost:…`, `http://127.x.y.z:…` or `http://[::1]:…` (what Loom also allows).
fn is_loopback_origin(origin: &[u8]) -> bool {
    let Ok(origin) = std::str::from_utf8(origin) else { return false };
    let host = origin.split("://").nth(1).unwrap_or("");
    let host = if host.starts_with('[') {
        host.split(']').next().map(|h| &h[1..]).unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    };
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Binds, announces the URL on stdout (`Cowork dev server: http://…/`), and serves until Ctrl-C or
/// the configured lifetime ends.
pub async fn serve(cfg: Config) -> std::io::Result<()> {
    if !cfg.addr.ip().is_loopback() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("refusing to listen on {}: the dev server only binds loopback addresses", cfg.addr),
        ));
    }
    if !cfg.dist.join("index.html").exists() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{} has no index.html: build the app first (scripts/run.sh does)", cfg.dist.display()),
        ));
    }
    let listener = tokio::net::TcpListener::bind(cfg.addr).await?;
    let addr = listener.local_addr()?;
    println!("Cowork dev server: http://{addr}/");
    let app = router(&cfg);
    let lifetime = cfg.lifetime;
    let shutdown = async move {
        match lifetime {
            Some(d) => tokio::select! {
                _ = tokio::time::sleep(d) => {}
                _ = tokio::signal::ctrl_c() => {}
            },
            None => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    };
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}

/// For native tests: starts a dev server on a free loopback port (serving an empty page from a temporary
/// folder named after `name`, stopping itself after two minutes) and returns its origin
/// (`http://127.0.0.1:PORT`) once it accepts connections.
pub async fn start_for_tests(name: &str) -> String {
    let dist = std::env::temp_dir().join(format!("cowork-{name}-dist-{}", std::process::id()));
    std::fs::create_dir_all(&dist).expect("a temporary folder");
    std::fs::write(dist.join("index.html"), "<!doctype html>").expect("a page to serve");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    let addr = listener.local_addr().expect("its address");
    drop(listener);
    let models = dist.join("models");
    tokio::spawn(serve(Config { dist, models, addr, lifetime: Some(std::time::Duration::from_secs(120)) }));
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    format!("http://{addr}")
}
