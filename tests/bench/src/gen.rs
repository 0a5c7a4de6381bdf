//! Deterministic, realistic turns: ~400 characters of mixed prose, code and paths, as a long working
//! session with a coding model produces them. The same seed gives the same archive on every machine.

use cowork_core::{NewTurn, ToolCall};

/// A small, fast PRNG (xorshift64*): deterministic, no dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any seed, 0 too: the state is never 0).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` must not be 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Index into a list of `n`, skewed to the front (roughly Zipf-like: common words are common).
    pub fn skewed(&mut self, n: usize) -> usize {
        let a = self.below(n);
        let b = self.below(n);
        let c = self.below(n);
        a.min(b).min(c)
    }

    /// One of `items`, uniformly (`items` must not be empty).
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const COMMON: &[&str] = &[
    "the",
    "to",
    "and",
    "a",
    "of",
    "is",
    "in",
    "that",
    "it",
    "for",
    "we",
    "this",
    "with",
    "on",
    "be",
    "not",
    "function",
    "error",
    "value",
    "file",
    "test",
    "should",
    "when",
    "use",
    "can",
    "if",
    "data",
    "return",
    "request",
    "session",
    "user",
    "token",
    "call",
    "change",
    "code",
    "now",
    "then",
    "from",
    "but",
    "so",
    "config",
    "server",
    "client",
    "query",
    "index",
    "cache",
    "build",
    "fix",
    "type",
    "field",
    "check",
    "update",
    "handler",
    "response",
    "module",
    "database",
    "schema",
    "table",
    "row",
    "column",
    "migration",
    "retry",
    "timeout",
    "stream",
    "buffer",
    "parse",
    "format",
    "json",
    "string",
    "number",
    "list",
    "map",
    "async",
    "await",
    "promise",
    "worker",
    "thread",
    "lock",
    "state",
    "event",
    "queue",
    "job",
    "task",
    "refresh",
    "rotate",
    "expire",
    "validate",
    "encode",
    "decode",
    "hash",
    "key",
    "secret",
    "header",
    "connection",
    "pool",
    "limit",
    "batch",
    "commit",
    "rollback",
    "transaction",
    "log",
    "trace",
    "span",
    "deploy",
    "release",
    "version",
    "branch",
    "merge",
    "review",
    "comment",
    "docs",
    "example",
    "case",
];

const PHRASES: &[&str] = &[
    "refresh token",
    "connection pool",
    "rate limit",
    "race condition",
    "error handling",
    "unit test",
    "integration test",
    "database migration",
    "cache invalidation",
    "retry with backoff",
    "feature flag",
    "dead letter queue",
    "memory leak",
    "off by one",
    "null pointer",
    "type error",
    "stack trace",
];

const IDENTS: &[&str] = &[
    "rotate_refresh_token_v2",
    "refresh_token",
    "access_token",
    "session_store",
    "parse_header",
    "ConnectionPool",
    "RetryPolicy",
    "validate_jwt",
    "encode_cursor",
    "decode_cursor",
    "user_id",
    "max_retries",
    "HttpClient",
    "build_request",
    "handle_error",
    "flush_buffer",
    "next_page_token",
    "expires_at",
    "created_at",
    "update_state",
    "fetch_rows",
    "with_timeout",
    "RateLimiter",
];

const PATHS: &[&str] = &[
    "src/auth.py",
    "src/auth/session.rs",
    "src/db/pool.rs",
    "api/handlers/login.ts",
    "web/src/app.rs",
    "tests/test_auth.py",
    "migrations/0042_tokens.sql",
    "config/settings.toml",
    "lib/retry.js",
    "core/src/store/mod.rs",
    "docs/ARCHITECTURE.md",
    "scripts/deploy.sh",
    "src/cache/lru.go",
];

/// Words that appear in about one turn in 5,000 (the "rare" queries).
pub const RARE: &[&str] = &["zanzibar", "quokka", "marmalade", "xylophone", "kilimanjaro", "pemberton"];

/// The fixed query mix of spec §13: rare words, very common words, phrases, identifier/path substrings.
pub const QUERIES: &[(&str, &[&str])] = &[
    ("rare", &["zanzibar", "quokka", "marmalade", "xylophone", "kilimanjaro", "pemberton"]),
    ("common", &["the", "error", "function", "token", "session", "the error"]),
    (
        "phrase",
        &[
            "\"refresh token\"",
            "\"connection pool\"",
            "\"race condition\"",
            "\"rate limit\"",
            "\"memory leak\"",
            "\"stack trace\"",
        ],
    ),
    (
        "ident",
        &["refresh_token", "src/auth.py", "rotate_refresh_token_v2", "ConnectionPool", "next_page_token", "db/pool.rs"],
    ),
];

/// The text `LIKE '%q%'` looks for, for a query of the mix (quotes removed; identifiers as typed).
pub fn like_text(q: &str) -> String {
    q.trim_matches('"').to_owned()
}

fn sentence(rng: &mut Rng, out: &mut String) {
    let words = 6 + rng.below(10);
    for i in 0..words {
        if i > 0 {
            out.push(' ');
        }
        match rng.below(20) {
            0 => out.push_str(rng.pick(PHRASES)),
            1 => {
                out.push('`');
                out.push_str(rng.pick(IDENTS));
                out.push('`');
            }
            2 => out.push_str(rng.pick(PATHS)),
            _ => out.push_str(COMMON[rng.skewed(COMMON.len())]),
        }
    }
    if rng.below(5000 / 3) == 0 {
        out.push(' ');
        out.push_str(rng.pick(RARE));
    }
    out.push_str(". ");
}

fn code(rng: &mut Rng, out: &mut String) {
    let a = rng.pick(IDENTS);
    let b = rng.pick(IDENTS);
    out.push_str("\n```\nlet ");
    out.push_str(a);
    out.push_str(" = ");
    out.push_str(b);
    out.push_str("(&ctx, ");
    out.push_str(&rng.below(1000).to_string());
    out.push_str(")?;\n// see ");
    out.push_str(rng.pick(PATHS));
    out.push_str("\n```\n");
}

/// About `target` characters of mixed text.
pub fn text(rng: &mut Rng, target: usize) -> String {
    let mut out = String::with_capacity(target + 80);
    while out.len() < target {
        if rng.below(6) == 0 {
            code(rng, &mut out);
        } else {
            sentence(rng, &mut out);
        }
    }
    out
}

/// Turn `i` (0-based) of a generated session: user and assistant alternate; every tenth exchange the
/// assistant calls a tool and its result follows.
pub fn turn(rng: &mut Rng, i: usize) -> NewTurn {
    let len = 340 + rng.below(120);
    let body = text(rng, len);
    match i % 20 {
        18 => NewTurn::assistant_calls(
            body,
            vec![ToolCall {
                id: format!("call_{i}"),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"{}\"}}", rng.pick(PATHS)),
            }],
        ),
        19 => NewTurn::tool_result(format!("call_{}", i - 1), "read_file", body),
        n if n % 2 == 0 => NewTurn::user(body),
        _ => NewTurn::assistant(body),
    }
}

/// `n` turns of one session, from turn index `start`.
pub fn turns(rng: &mut Rng, start: usize, n: usize) -> Vec<NewTurn> {
    (start..start + n).map(|i| turn(rng, i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_about_400_chars() {
        let a = turns(&mut Rng::new(7), 0, 200);
        let b = turns(&mut Rng::new(7), 0, 200);
        assert_eq!(a, b);
        let mean = a.iter().map(|t| t.content.len()).sum::<usize>() / a.len();
        assert!((350..=550).contains(&mean), "mean length {mean}");
        assert!(a.iter().any(|t| t.content.contains("```")));
        assert!(a.iter().any(|t| t.content.contains('/')));
    }
}
