//! `cowork-dev-server [--dist DIR] [--models DIR] [--addr 127.0.0.1:PORT] [--exit-after SECONDS]`
//!
//! `--models` (default `target/models`) is served at `/models/`: the semantic-recall model's files.

use cowork_tests::server::{serve, Config};
use std::time::Duration;

fn main() {
    let mut cfg = Config {
        dist: "dist".into(),
        models: "target/models".into(),
        addr: "127.0.0.1:8080".parse().expect("a valid default address"),
        lifetime: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().unwrap_or_else(|| fail(&format!("{name} needs a value")));
        match arg.as_str() {
            "--dist" => cfg.dist = value("--dist").into(),
            "--models" => cfg.models = value("--models").into(),
            "--addr" => cfg.addr = value("--addr").parse().unwrap_or_else(|e| fail(&format!("--addr: {e}"))),
            "--exit-after" => {
                let secs: u64 = value("--exit-after").parse().unwrap_or_else(|e| fail(&format!("--exit-after: {e}")));
                cfg.lifetime = Some(Duration::from_secs(secs));
            }
            "-h" | "--help" => {
                println!("usage: cowork-dev-server [--dist DIR] [--models DIR] [--addr 127.0.0.1:PORT] [--exit-after SECONDS]");
                return;
            }
            other => fail(&format!("unknown argument {other}")),
        }
    }
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime");
    if let Err(e) = rt.block_on(serve(cfg)) {
        fail(&e.to_string());
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("cowork-dev-server: {msg}");
    std::process::exit(2);
}
