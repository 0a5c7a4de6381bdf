//! The docs checked against the tree, for what a machine can check: every path ARCHITECTURE.md's code
//! map names exists, its account of the post-build hook lists what `scripts/post-build.sh` runs, the
//! test conventions it states hold, only the tables it names are written outside `store/rows.rs`, and
//! README.md's first screen has the two commands, a valid link for each of its sections and every
//! control word the demo model reads.
#![cfg(not(target_arch = "wasm32"))]

use std::fs;
use std::path::{Path, PathBuf};

/// The repository's root (the workspace above this package).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("cannot read {rel}: {e}"))
}

/// Fails with every problem found, one per line, under `what`.
fn report(what: &str, problems: &[String]) {
    assert!(problems.is_empty(), "{what}:\n  - {}\n", problems.join("\n  - "));
}

/// The lines of the `## title` section of `doc` (up to the next `## ` heading), with their line numbers.
fn section<'a>(doc: &'a str, title: &str) -> Vec<(usize, &'a str)> {
    let heading = format!("## {title}");
    let mut lines = doc.lines().enumerate().skip_while(|(_, l)| l.trim_end() != heading);
    assert!(lines.next().is_some(), "ARCHITECTURE.md has no `{heading}` section");
    lines.take_while(|(_, l)| !l.starts_with("## ")).map(|(i, l)| (i + 1, l)).collect()
}

/// The `backticked` spans of `text`.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The markdown bullets of `lines` (a bullet and its continuation lines joined by spaces) with the
/// line each starts on and its depth (two spaces a level); text outside bullets is a depth-0 entry of
/// its own, without a bullet.
struct Bullet {
    line: usize,
    depth: usize,
    is_bullet: bool,
    text: String,
}

fn bullets(lines: &[(usize, &str)]) -> Vec<Bullet> {
    let mut out: Vec<Bullet> = Vec::new();
    for &(n, line) in lines {
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            out.push(Bullet { line: n, depth: 0, is_bullet: false, text: String::new() });
        } else if let Some(rest) = body.strip_prefix("- ") {
            out.push(Bullet { line: n, depth: indent / 2, is_bullet: true, text: rest.to_owned() });
        } else if let Some(last) = out.last_mut().filter(|b| b.is_bullet && indent > 0) {
            last.text.push(' ');
            last.text.push_str(body);
        } else {
            out.push(Bullet { line: n, depth: 0, is_bullet: false, text: body.to_owned() });
        }
    }
    out
}

/// File endings that make a backticked token a path even without a `/`.
const PATH_ENDINGS: [&str; 9] = [".rs", ".sh", ".mjs", ".js", ".ts", ".toml", ".html", ".css", ".md"];

/// A token that names a file or folder of the repository: only path characters, a `/` or a known
/// file ending; not a URL path (`/v1/models`), an npm scope (`@nats-io/…`) or a pattern (`*.sse`).
fn path_like(token: &str) -> bool {
    let chars_ok = token.chars().all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c));
    chars_ok
        && !token.starts_with('/')
        && !token.contains("//")
        && (token.contains('/') || PATH_ENDINGS.iter().any(|e| token.ends_with(e)))
}

/// The paths `.gitignore` files keep out of the repository (build output): a path under one of them
/// is named by the docs but made by a build, so it is not looked for.
fn generated() -> Vec<String> {
    let mut out = Vec::new();
    for (dir, file) in [("", ".gitignore"), ("fuzz/", "fuzz/.gitignore")] {
        let Ok(text) = fs::read_to_string(root().join(file)) else { continue };
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let line = line.trim_start_matches('/').trim_end_matches('/');
            let line = line.strip_prefix(dir).unwrap_or(line);
            out.push(format!("{dir}{line}"));
        }
    }
    out
}

fn is_generated(path: &str, generated: &[String]) -> bool {
    let path = path.trim_end_matches('/');
    generated.iter().any(|g| path == g || path.starts_with(&format!("{g}/")) || path.contains(&format!("/{g}/")))
}

/// Resolves `token` as the code map means it: inside the folders of the bullets it is nested in
/// (innermost first), then in the heading's crate as `<crate>/src/<token>` and `<crate>/<token>`, then
/// from the repository's root. Gives the repository-relative path that exists, or every candidate.
fn resolve(token: &str, folders: &[String], krate: &str) -> Result<String, Vec<String>> {
    let mut candidates: Vec<String> = folders.iter().rev().map(|f| format!("{f}{token}")).collect();
    if !krate.is_empty() {
        candidates.push(format!("{krate}src/{token}"));
        candidates.push(format!("{krate}{token}"));
    }
    candidates.push(token.to_owned());
    match candidates.iter().find(|c| root().join(c).exists()) {
        Some(found) => Ok(found.clone()),
        None => Err(candidates),
    }
}

#[test]
fn every_path_the_code_map_names_exists() {
    let doc = read("ARCHITECTURE.md");
    let generated = generated();
    let mut missing = Vec::new();
    let mut checked = 0;
    let mut krate = String::new();
    // The folders of the enclosing bullets: (depth, repository-relative folder).
    let mut folders: Vec<(usize, String)> = Vec::new();
    for b in bullets(&section(&doc, "Code map")) {
        let heading = doc.lines().nth(b.line - 1).unwrap_or_default();
        if let Some(h) = heading.strip_prefix("### ") {
            krate = backticked(h).first().map(|s| s.to_string()).unwrap_or_default();
            assert!(krate.ends_with('/'), "line {}: a code map heading names its folder first: {h}", b.line);
            assert!(root().join(&krate).is_dir(), "line {}: the heading's folder `{krate}` does not exist", b.line);
            folders.clear();
            continue;
        }
        if !b.is_bullet && b.text.is_empty() {
            continue;
        }
        let depth = if b.is_bullet { b.depth } else { 0 };
        folders.retain(|(d, _)| *d < depth);
        let outer: Vec<String> = folders.iter().map(|(_, f)| f.clone()).collect();
        // A bullet that starts with a folder (`store/`) is the context of what it and its children name.
        let lead = b.text.strip_prefix('`').and_then(|t| t.split('`').next()).filter(|t| t.ends_with('/'));
        let mut inner = outer.clone();
        if let (true, Some(lead)) = (b.is_bullet, lead) {
            if let Ok(found) = resolve(lead, &outer, &krate) {
                folders.push((depth, found.clone()));
                inner.push(found);
            }
        }
        for token in backticked(&b.text).into_iter().filter(|t| path_like(t)) {
            checked += 1;
            if let Err(candidates) = resolve(token, &inner, &krate) {
                if !candidates.iter().any(|c| is_generated(c, &generated)) {
                    missing.push(format!("line {}: `{token}` (looked for {})", b.line, candidates.join(", ")));
                }
            }
        }
    }
    assert!(checked > 100, "the code map names only {checked} paths: is the section still there?");
    report("ARCHITECTURE.md's code map names paths that do not exist", &missing);
}

/// `one` … `ten` for `n`.
fn number_word(n: usize) -> &'static str {
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
        .get(n)
        .copied()
        .unwrap_or("many")
}

#[test]
fn the_post_build_steps_are_the_ones_architecture_lists() {
    let script = read("scripts/post-build.sh");
    let steps: Vec<&str> = script
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(|l| l.split_whitespace())
        .filter_map(|w| w.strip_prefix("scripts/"))
        .filter(|w| w.ends_with(".sh") || w.ends_with(".mjs"))
        .collect();
    assert!(steps.len() >= 2, "scripts/post-build.sh runs {steps:?}: has its form changed?");
    let doc = read("ARCHITECTURE.md");
    let scripts = section(&doc, "Code map");
    let scripts: Vec<(usize, &str)> =
        scripts.into_iter().skip_while(|(_, l)| !l.starts_with("### `scripts/`")).skip(1).collect();
    let entries = bullets(&scripts);
    let entry = entries
        .iter()
        .find(|b| b.is_bullet && b.text.starts_with("`post-build.sh`"))
        .expect("ARCHITECTURE.md's `scripts/` code map has a `post-build.sh` entry");
    let mut problems = Vec::new();
    let listed: Vec<&str> = backticked(&entry.text).into_iter().filter(|t| steps.contains(t)).collect();
    if listed != steps {
        problems.push(format!(
            "line {}: the `post-build.sh` entry lists {listed:?}, but scripts/post-build.sh runs {steps:?} in \
             that order",
            entry.line
        ));
    }
    let says = format!("runs the {} below", number_word(steps.len()));
    if !entry.text.contains(&says) {
        problems.push(format!(
            "line {}: the `post-build.sh` entry should say it {says:?} (scripts/post-build.sh runs {} steps): {}",
            entry.line,
            steps.len(),
            entry.text
        ));
    }
    for step in &steps {
        if !entries.iter().any(|b| b.is_bullet && b.text.starts_with(&format!("`{step}`"))) {
            problems.push(format!("the `scripts/` code map has no entry of its own for the post-build step `{step}`"));
        }
    }
    report("ARCHITECTURE.md's account of the post-build hook is wrong", &problems);
}

/// Every `.rs` file under a `src/` folder of the repository (build output and npm packages left out),
/// repository-relative.
fn sources() -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = format!("{rel}{name}");
            if entry.path().is_dir() {
                if !["target", "node_modules", "dist", ".git"].contains(&name.as_str()) && !name.starts_with('.') {
                    walk(&entry.path(), &format!("{path}/"), out);
                }
            } else if name.ends_with(".rs") && path.split('/').any(|c| c == "src") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), "", &mut out);
    out.sort();
    assert!(out.len() > 100, "found only {} source files under {}", out.len(), root().display());
    out
}

/// A file that is tests only: `foo/tests.rs` or anything under a `tests/` folder inside `src/`.
fn is_test_file(path: &str) -> bool {
    let after_src = path.split_once("/src/").map_or("", |(_, rest)| rest);
    after_src.ends_with("tests.rs") || after_src.split('/').any(|c| c == "tests")
}

/// The first number before `word` in `text` ("at most 120 lines" → 120 for "lines").
fn number_before(text: &str, word: &str) -> Option<usize> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(2)
        .find(|w| w[1].trim_end_matches([',', ';', ')', '.']) == word)
        .and_then(|w| w[0].trim_start_matches('~').parse().ok())
}

#[test]
fn the_test_conventions_architecture_states_hold() {
    let doc = read("ARCHITECTURE.md");
    let conventions = bullets(&section(&doc, "Conventions"));
    let rule = conventions
        .iter()
        .find(|b| b.is_bullet && b.text.contains("mod tests;"))
        .expect("ARCHITECTURE.md's Conventions say where unit tests live (`mod tests;`)");
    let mut problems = Vec::new();
    // Without a stated limit the rule is "every unit test module in `foo/tests.rs`": no inline one.
    let max_inline = number_before(&rule.text, "lines").unwrap_or_else(|| {
        problems.push(format!(
            "line {}: the test convention names no limit (`at most N lines`) for inline tests",
            rule.line
        ));
        0
    });
    let exceptions: Vec<&str> = backticked(&rule.text)
        .into_iter()
        .filter(|t| t.contains('/') && t.ends_with(".rs") && root().join(t).is_file())
        .collect();
    let length = conventions
        .iter()
        .find(|b| b.is_bullet && b.text.contains("before its tests"))
        .expect("ARCHITECTURE.md's Conventions say how long a source file may be before its tests");
    let max_code = number_before(&length.text, "lines")
        .unwrap_or_else(|| panic!("line {}: the length rule names no number of lines: {}", length.line, length.text));

    let mut inline_seen = Vec::new();
    for path in sources() {
        let text = read(&path);
        let lines: Vec<&str> = text.lines().collect();
        let tests_at = lines.iter().position(|l| l.trim() == "#[cfg(test)]");
        if !is_test_file(&path) && tests_at.unwrap_or(lines.len()) > max_code {
            problems.push(format!(
                "{path} holds {} lines before its tests; the Conventions say at most {max_code}",
                tests_at.unwrap_or(lines.len())
            ));
        }
        let Some(at) = lines.iter().position(|l| matches!(l.trim(), "mod tests {" | "pub mod tests {")) else {
            continue;
        };
        let inline = lines.len() - at;
        if inline > max_inline {
            inline_seen.push(path.clone());
            if !exceptions.contains(&path.as_str()) {
                problems.push(format!(
                    "{path} has an inline `mod tests {{` of {inline} lines (from it to the end of the file); the \
                     Conventions allow at most {max_inline}: move it to `{}/tests.rs`",
                    path.trim_end_matches(".rs").trim_end_matches("/mod")
                ));
            }
        }
    }
    for exception in exceptions {
        if !inline_seen.iter().any(|p| p == exception) {
            problems.push(format!(
                "line {}: `{exception}` is named as an exception, but it has no inline test module over {max_inline} \
                 lines any more: take it out of the Conventions",
                rule.line
            ));
        }
    }
    report("ARCHITECTURE.md's test conventions do not hold", &problems);
}

/// The table an SQL `INSERT` statement in `text` writes, for each one.
fn inserted_tables(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("INSERT") {
        let rest = &text[i..];
        let Some(into) = rest.find("INTO ").filter(|&at| at < 30) else { continue };
        let table: String = rest[into + 5..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !table.is_empty() {
            out.push(table);
        }
    }
    out
}

#[test]
fn only_the_tables_architecture_names_are_written_outside_rows_rs() {
    let doc = read("ARCHITECTURE.md");
    let entries = bullets(&section(&doc, "Code map"));
    let rows = entries
        .iter()
        .find(|b| b.is_bullet && b.text.starts_with("`rows.rs`"))
        .expect("ARCHITECTURE.md's code map has a `rows.rs` entry");
    let named: Vec<&str> = backticked(&rows.text);
    let mut problems = Vec::new();
    for path in sources().into_iter().filter(|p| p.starts_with("core/src/store/") && !is_test_file(p)) {
        if path == "core/src/store/rows.rs" {
            continue;
        }
        let text = read(&path);
        let code = text.split("\n#[cfg(test)]").next().unwrap_or_default();
        for table in inserted_tables(code) {
            // `sync_*` stands for every table of sync's own.
            let sync_own = table.starts_with("sync_") && named.contains(&"sync_*");
            if !sync_own && !named.contains(&table.as_str()) {
                problems.push(format!(
                    "{path} writes an `INSERT` into `{table}`, which the `rows.rs` entry (line {}) does not name",
                    rows.line
                ));
            }
        }
    }
    problems.sort();
    problems.dedup();
    report("ARCHITECTURE.md says rows.rs holds the store's INSERTs, but", &problems);
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn the_readme_starts_with_the_two_commands_and_its_links_lead_somewhere() {
    let readme = read("README.md");
    let first_screen: Vec<&str> = readme.lines().take(30).collect();
    let mut problems = Vec::new();
    for command in ["scripts/run.sh", "scripts/test.sh"] {
        if !first_screen.iter().any(|l| l.contains(command)) {
            problems.push(format!("`{command}` is not within README.md's first 30 lines"));
        }
    }
    let anchors: Vec<String> =
        readme.lines().filter_map(|l| l.strip_prefix('#')).map(|h| anchor(h.trim_start_matches('#'))).collect();
    for (n, line) in readme.lines().enumerate() {
        for (i, _) in line.match_indices("](") {
            let target = line[i + 2..].split(')').next().unwrap_or_default();
            if let Some(a) = target.strip_prefix('#') {
                if !anchors.iter().any(|x| x == a) {
                    problems.push(format!("line {}: the link `#{a}` names no heading of README.md", n + 1));
                }
            } else if !target.contains("://") && !root().join(target).exists() {
                problems.push(format!("line {}: the link `{target}` names no file of the repository", n + 1));
            }
        }
    }
    report("README.md's first screen or links are wrong", &problems);
}

#[test]
fn the_readme_explains_every_control_word_of_the_demo_model() {
    let model = read("tests/src/model.rs");
    // The switches the demo model reads, as its sources spell them: string constants `"[[…"`.
    let mut words: Vec<String> = Vec::new();
    for file in
        ["tests/src/model.rs", "tests/src/model/thinking.rs", "tests/src/model/mcp.rs", "tests/src/bench_reply.rs"]
    {
        let text = read(file);
        let code = text.split("\n#[cfg(test)]").next().unwrap_or_default();
        for piece in code.split('"').skip(1).step_by(2) {
            let name = piece.strip_prefix("[[").unwrap_or_default();
            let is_switch = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "-:]".contains(c));
            if is_switch && piece != "[[fault:" {
                words.push(piece.to_owned());
            }
        }
    }
    // The faults, from the model's docs ("Faults, switched …" up to "Reply shapes") and its code.
    let faults_doc = model.split("Faults, switched").nth(1).and_then(|t| t.split("Reply shapes").next()).unwrap_or("");
    let mut faults: Vec<&str> = backticked(faults_doc)
        .into_iter()
        .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == 'N'))
        .collect();
    for (i, _) in model.match_indices("fault.as_deref() == Some(\"") {
        faults.extend(model[i + 26..].split('"').next());
    }
    assert!(
        faults.len() >= 8 && words.len() >= 4,
        "found faults {faults:?} and switches {words:?}: has model.rs changed?"
    );
    words.extend(faults.iter().map(|f| format!("[[fault:{f}]]")));
    words.sort();
    words.dedup();

    let readme = read("README.md");
    let table: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `[[")).collect();
    let missing: Vec<String> = words
        .iter()
        .filter(|w| !table.iter().any(|row| row.contains(w.as_str())))
        .map(|w| format!("`{w}` has no row in README.md's table of control words"))
        .collect();
    report("README.md does not explain every control word the demo model reads", &missing);
}
