//! The core's module graph, checked from its source: the error type depends on nothing above it, the
//! wire formats do not reach into the context engine, and no two sibling modules (at any level) refer to
//! each other, directly or around a circle.
//!
//! The resolver is a small hand-written scan, not a compiler:
//!
//! - a file's module is its path (`foo.rs` and `foo/mod.rs` are `foo`; a file under `foo/` is in the
//!   subtree of `foo`, which counts as the one node `foo` among `foo`'s siblings);
//! - references are the paths of `use` declarations (groups expanded) and every `crate::…`, `super::…`
//!   and `self::…` path in the code; comment lines (`//`, `///`, `//!`) are not code;
//! - a path is followed through modules as far as they exist, then through the names a module file
//!   imports (`use`/`pub use`, including `pub use domain::*` globs), so `crate::Role` is `domain`;
//! - a reference to an ancestor (e.g. `super::MAX_TRACKED` defined in the parent's `mod.rs`) or into a
//!   module's own children is no edge between siblings;
//! - test code is left out: files named `tests.rs` and `test_support.rs`, everything under a `tests/`
//!   folder, and inline `#[cfg(test)] mod … { … }` blocks (they are compiled only for the core's own unit
//!   tests and may reach anywhere).
//!
//! Names brought in by a glob of a sibling (`use super::sibling::*`) are not followed further; the glob's
//! path itself is an edge.
//!

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path below the crate root, e.g. `["orchestrator", "decode"]`.
type ModPath = Vec<String>;

/// One source file of the core, as the scan sees it.
struct SourceFile {
    /// The path shown in messages, relative to the crate (`src/...`).
    shown: String,
    /// The module the file defines.
    module: ModPath,
    /// `(line number, code)` of every non-comment line outside test blocks.
    lines: Vec<(usize, String)>,
}

/// A reference found in a file: the absolute path it names and where.
struct Reference {
    path: ModPath,
    line: usize,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn is_test_path(rel: &Path) -> bool {
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs" || name == "test_support.rs" || rel.components().any(|c| c.as_os_str() == "tests")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir).expect("read src dir").map(|e| e.expect("dir entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && !(parts.is_empty() && stem == "lib") {
        parts.push(stem.to_string());
    }
    parts
}

/// The code lines of a file: comment lines dropped, inline `#[cfg(test)] mod x { … }` blocks skipped
/// (rustfmt closes them with a `}` at the `mod` line's indentation).
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            if let Some(next) = lines.get(i + 1) {
                let nt = next.trim_start();
                if (nt.starts_with("mod ") || nt.starts_with("pub mod ")) && nt.trim_end().ends_with('{') {
                    let indent = &next[..next.len() - nt.len()];
                    let close = format!("{indent}}}");
                    i += 2;
                    while i < lines.len() && lines[i].trim_end() != close {
                        i += 1;
                    }
                    i += 1;
                    continue;
                }
            }
        }
        if !t.starts_with("//") {
            // Drop a trailing comment, but not `//` inside a string such as a URL.
            let code = match line.find(" // ") {
                Some(at) if line[..at].matches('"').count() & 1 == 0 => &line[..at],
                _ => line,
            };
            out.push((i + 1, code.to_string()));
        }
        i += 1;
    }
    out
}

fn load() -> Vec<SourceFile> {
    let root = src_dir();
    let mut paths = Vec::new();
    collect(&root, &mut paths);
    paths
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&root).expect("under src").to_path_buf();
            if is_test_path(&rel) {
                return None;
            }
            let text = fs::read_to_string(&p).expect("read source");
            Some(SourceFile {
                shown: format!("src/{}", rel.display()),
                module: module_of(&rel),
                lines: code_lines(&text),
            })
        })
        .collect()
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Expands a `use` tree (`a::{b, c::{d, e}}`, `x as y`, `*`) into paths of segments.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    fn split_top(s: &str) -> Vec<String> {
        let (mut depth, mut cur, mut out) = (0, String::new(), Vec::new());
        for c in s.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
            cur.push(c);
        }
        out.push(cur);
        out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
    }
    let tree: String = tree.chars().filter(|c| !c.is_whitespace() || *c == ' ').collect();
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let prefix: Vec<String> =
            tree[..open].split("::").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
        let inner = &tree[open + 1..tree.rfind('}').expect("closing brace")];
        split_top(inner)
            .into_iter()
            .flat_map(|part| {
                expand_use(&part).into_iter().map(|tail| prefix.iter().cloned().chain(tail).collect::<Vec<_>>())
            })
            .collect()
    } else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        vec![path.split("::").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()]
    }
}

/// The `use` declarations of a file: `(line, tree text)`; a declaration may span lines.
fn use_decls(file: &SourceFile) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (n, line) in &file.lines {
        if let Some((start, mut text)) = current.take() {
            text.push_str(line);
            if let Some(end) = text.find(';') {
                out.push((start, text[..end].to_string()));
            } else {
                current = Some((start, text));
            }
            continue;
        }
        let t = line.trim_start();
        let rest = ["pub(crate) use ", "pub(super) use ", "pub use ", "use "].iter().find_map(|p| t.strip_prefix(p));
        let rest = rest.or_else(|| t.strip_prefix("pub(in ").and_then(|r| r.split_once(") use ")).map(|(_, r)| r));
        if let Some(rest) = rest {
            match rest.find(';') {
                Some(end) => out.push((*n, rest[..end].to_string())),
                None => current = Some((*n, rest.to_string())),
            }
        }
    }
    out
}

/// The module graph's raw material: which modules exist, and what names each module file imports.
struct Crate {
    modules: BTreeSet<ModPath>,
    /// Per module: imported name → absolute path it stands for.
    imports: BTreeMap<ModPath, BTreeMap<String, ModPath>>,
    /// Per module: absolute paths of glob imports (`pub use domain::*`).
    globs: BTreeMap<ModPath, Vec<ModPath>>,
    /// Per module: names of the items it defines.
    defines: BTreeMap<ModPath, BTreeSet<String>>,
}

/// Makes a path from a file in `module` absolute: `crate::`, `super::`, `self::` and a leading child
/// module are resolved; anything else (std, serde, …) gives `None`.
fn absolute(module: &ModPath, segs: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    let first = segs.first()?;
    match first.as_str() {
        "crate" => Some(segs[1..].to_vec()),
        "self" => Some(module.iter().cloned().chain(segs[1..].iter().cloned()).collect()),
        "super" => {
            let mut base = module.clone();
            let mut rest = segs;
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
            Some(base.into_iter().chain(rest.iter().cloned()).collect())
        }
        _ => {
            let child: ModPath = module.iter().cloned().chain([first.clone()]).collect();
            modules.contains(&child).then(|| module.iter().cloned().chain(segs.iter().cloned()).collect())
        }
    }
}

impl Crate {
    fn new(files: &[SourceFile]) -> Crate {
        let modules: BTreeSet<ModPath> = files.iter().map(|f| f.module.clone()).collect();
        let mut imports: BTreeMap<ModPath, BTreeMap<String, ModPath>> = BTreeMap::new();
        let mut globs: BTreeMap<ModPath, Vec<ModPath>> = BTreeMap::new();
        let mut defines: BTreeMap<ModPath, BTreeSet<String>> = BTreeMap::new();
        let kinds = ["struct ", "enum ", "fn ", "const ", "static ", "type ", "trait ", "union "];
        for f in files {
            for (_, tree) in use_decls(f) {
                let alias = |t: &str| t.rsplit(" as ").next().map(|s| s.trim().to_string());
                for segs in expand_use(&tree) {
                    let Some(abs) = absolute(&f.module, &segs, &modules) else { continue };
                    let last = segs.last().cloned().unwrap_or_default();
                    if last == "*" {
                        globs.entry(f.module.clone()).or_default().push(abs[..abs.len() - 1].to_vec());
                    } else {
                        let name = if tree.contains(&format!("{last} as ")) {
                            alias(tree.split(&format!("{last} as ")).nth(1).unwrap_or("")).unwrap_or(last)
                        } else {
                            last
                        };
                        let name: String = name.chars().take_while(|c| is_ident_char(*c)).collect();
                        let abs = if segs.last().map(String::as_str) == Some("self") {
                            abs[..abs.len() - 1].to_vec()
                        } else {
                            abs
                        };
                        imports.entry(f.module.clone()).or_default().insert(name, abs);
                    }
                }
            }
            let defs = defines.entry(f.module.clone()).or_default();
            for (_, line) in &f.lines {
                for k in kinds {
                    for (at, _) in line.match_indices(k) {
                        let before_ok = at == 0 || !is_ident_char(line[..at].chars().last().unwrap_or(' '));
                        let name: String = line[at + k.len()..].chars().take_while(|c| is_ident_char(*c)).collect();
                        if before_ok && !name.is_empty() {
                            defs.insert(name);
                        }
                    }
                }
            }
        }
        Crate { modules, imports, globs, defines }
    }

    /// The module an absolute path lands in: through modules as far as they go, then through the
    /// last module's imports.
    fn resolve(&self, path: &[String], depth: usize) -> ModPath {
        let mut m: ModPath = Vec::new();
        for (i, seg) in path.iter().enumerate() {
            let child: ModPath = m.iter().cloned().chain([seg.clone()]).collect();
            if self.modules.contains(&child) {
                m = child;
                continue;
            }
            if depth > 8 || self.defines.get(&m).is_some_and(|d| d.contains(seg)) {
                return m;
            }
            if let Some(target) = self.imports.get(&m).and_then(|i| i.get(seg)) {
                let full: ModPath = target.iter().cloned().chain(path[i + 1..].iter().cloned()).collect();
                return self.resolve(&full, depth + 1);
            }
            for g in self.globs.get(&m).into_iter().flatten() {
                let g = self.resolve(g, depth + 1);
                let defined = self.defines.get(&g).is_some_and(|d| d.contains(seg));
                let imported = self.imports.get(&g).is_some_and(|i| i.contains_key(seg));
                if defined || imported {
                    let full: ModPath = g.iter().cloned().chain(path[i..].iter().cloned()).collect();
                    return self.resolve(&full, depth + 1);
                }
            }
            return m;
        }
        m
    }
}

/// Every `crate::`, `super::` and `self::` path in a line of code, as segments.
fn inline_paths(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in line.match_indices(start) {
            if at > 0 && is_ident_char(line[..at].chars().last().unwrap_or(' ')) {
                continue;
            }
            let rest = &line[at..];
            let mut segs = Vec::new();
            let mut s = rest;
            loop {
                let ident: String = s.chars().take_while(|c| is_ident_char(*c)).collect();
                if ident.is_empty() {
                    break;
                }
                s = &s[ident.len()..];
                segs.push(ident);
                match s.strip_prefix("::") {
                    Some(r) => s = r,
                    None => break,
                }
            }
            // A path that continues into a group (`crate::{a, b}`) is a `use` tree, handled there.
            if segs.len() > 1 && !s.starts_with('{') {
                out.push(segs);
            }
        }
    }
    out
}

fn references(file: &SourceFile, krate: &Crate) -> Vec<Reference> {
    let mut refs = Vec::new();
    let use_lines: BTreeSet<usize> = use_decls(file).iter().map(|(n, _)| *n).collect();
    for (n, tree) in use_decls(file) {
        for segs in expand_use(&tree) {
            if let Some(abs) = absolute(&file.module, &segs, &krate.modules) {
                let abs: ModPath = abs.into_iter().filter(|s| s != "*" && s != "self").collect();
                refs.push(Reference { path: krate.resolve(&abs, 0), line: n });
            }
        }
    }
    for (n, line) in &file.lines {
        if use_lines.contains(n) {
            continue;
        }
        for segs in inline_paths(line) {
            if let Some(abs) = absolute(&file.module, &segs, &krate.modules) {
                refs.push(Reference { path: krate.resolve(&abs, 0), line: *n });
            }
        }
    }
    refs
}

/// An edge between two siblings under `parent`, with the first place that makes it.
type Edges = BTreeMap<ModPath, BTreeMap<(String, String), String>>;

fn sibling_edges(files: &[SourceFile], krate: &Crate) -> Edges {
    let mut edges: Edges = BTreeMap::new();
    for f in files {
        for r in references(f, krate) {
            let common = f.module.iter().zip(&r.path).take_while(|(a, b)| a == b).count();
            let (Some(from), Some(to)) = (f.module.get(common), r.path.get(common)) else { continue };
            let parent = f.module[..common].to_vec();
            edges
                .entry(parent)
                .or_default()
                .entry((from.clone(), to.clone()))
                .or_insert_with(|| format!("{}:{}", f.shown, r.line));
        }
    }
    edges
}

fn show(parent: &ModPath, node: &str) -> String {
    if parent.is_empty() {
        node.to_string()
    } else {
        format!("{}::{node}", parent.join("::"))
    }
}

/// The cycles among one level's siblings: one per back edge a depth-first search meets.
fn cycles(edges: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        adj.entry(a).or_default().push(b);
    }
    fn dfs<'a>(
        n: &'a str,
        adj: &BTreeMap<&'a str, Vec<&'a str>>,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
        found: &mut Vec<Vec<String>>,
    ) {
        stack.push(n);
        for &next in adj.get(n).into_iter().flatten() {
            if let Some(at) = stack.iter().position(|s| *s == next) {
                found.push(stack[at..].iter().chain([&next]).map(|s| s.to_string()).collect());
            } else if !done.contains(next) {
                dfs(next, adj, stack, done, found);
            }
        }
        stack.pop();
        done.insert(n);
    }
    let mut found = Vec::new();
    let mut done = BTreeSet::new();
    let nodes: Vec<&str> = adj.keys().copied().collect();
    for n in nodes {
        if !done.contains(n) {
            dfs(n, &adj, &mut Vec::new(), &mut done, &mut found);
        }
    }
    found
}

#[test]
fn the_error_type_depends_on_nothing_above_it() {
    let text = fs::read_to_string(src_dir().join("error.rs")).expect("read error.rs");
    for banned in ["crate::agent", "crate::provider"] {
        assert!(!text.contains(banned), "src/error.rs mentions {banned}");
    }
}

#[test]
fn the_wire_formats_do_not_reach_into_the_context_engine() {
    let mut paths = Vec::new();
    collect(&src_dir().join("provider"), &mut paths);
    let offenders: Vec<String> = paths
        .iter()
        .filter(|p| fs::read_to_string(p).expect("read").contains("crate::context"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "files under src/provider mention crate::context: {offenders:?}");
}

#[test]
fn no_sibling_modules_form_a_cycle() {
    let files = load();
    let krate = Crate::new(&files);
    let edges = sibling_edges(&files, &krate);
    let mut report = Vec::new();
    for (parent, level) in &edges {
        for cycle in cycles(level) {
            let path = cycle.iter().map(|n| show(parent, n)).collect::<Vec<_>>().join(" → ");
            let mut text = format!("cycle: {path}");
            for pair in cycle.windows(2) {
                let at = &level[&(pair[0].clone(), pair[1].clone())];
                text.push_str(&format!("\n    {} → {}: {at}", pair[0], pair[1]));
            }
            report.push(text);
        }
    }
    assert!(report.is_empty(), "the core's modules form cycles:\n{}", report.join("\n"));
}

#[test]
fn the_resolver_sees_known_edges() {
    // Guards the scan itself: an edge that certainly exists must be found, so an empty cycle report
    // means something.
    let files = load();
    let krate = Crate::new(&files);
    let edges = sibling_edges(&files, &krate);
    let top = &edges[&Vec::new()];
    for (a, b) in [("context", "domain"), ("agent", "context"), ("recall", "state")] {
        assert!(top.contains_key(&(a.to_string(), b.to_string())), "missing edge {a} → {b}");
    }
    assert_eq!(
        expand_use("crate::{a::{B, c::D}, E as F}"),
        vec![vec!["crate", "a", "B"], vec!["crate", "a", "c", "D"], vec!["crate", "E"],]
    );
}
