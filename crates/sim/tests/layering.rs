//! The crate's layering, checked on its source: each top-level module uses only
//! the modules below it (engine <- settings <- net <- transport <- traffic <-
//! metrics <- config <- sim <- scenario), and within every module no two
//! submodules use each other, directly or through others. Test code is exempt.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const LAYERS: &[&str] = &["engine", "settings", "net", "transport", "traffic", "metrics", "config", "sim", "scenario"];

/// A source file and its module path (`transport/tcp/sender.rs` -> [transport, tcp, sender]).
struct Source {
    module: Vec<String>,
    /// Whether the file is a `mod.rs` (its own module is its directory).
    is_mod: bool,
    text: String,
}

fn sources(dir: &Path, module: &[String], out: &mut Vec<Source>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            let mut m = module.to_vec();
            m.push(name);
            sources(&p, &m, out);
        } else if p.extension().is_some_and(|e| e == "rs") && name != "tests" && name != "lib" {
            let text = fs::read_to_string(&p).unwrap();
            // Code under #[cfg(test)] (unit tests at the end of a file) is test code.
            // Comments (doc links included) are not dependencies.
            let text: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap()
                .lines()
                .map(|l| l.split("//").next().unwrap())
                .collect::<Vec<_>>()
                .join("\n");
            let is_mod = name == "mod";
            let mut m = module.to_vec();
            if !is_mod {
                m.push(name);
            }
            out.push(Source { module: m, is_mod, text });
        }
    }
}

/// Every path the text names from `crate::` or `super::`, braces expanded.
fn paths(text: &str) -> Vec<(bool, Vec<String>)> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    for anchor in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(anchor) {
            let start = from + i;
            from = start + anchor.len();
            if start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_' || b[start - 1] == b':') {
                continue;
            }
            let mut head = vec![];
            // `super::super::x`
            let mut rest = &text[start..];
            let relative = anchor == "super::";
            while let Some(r) = rest.strip_prefix("super::") {
                head.push("super".to_string());
                rest = r;
            }
            if !relative {
                rest = &rest["crate::".len()..];
            }
            expand(rest, head, &mut |p| out.push((relative, p)));
        }
    }
    out
}

/// Expand `a::b::{c, d::e}` after `prefix` into full paths.
fn expand(text: &str, prefix: Vec<String>, emit: &mut dyn FnMut(Vec<String>)) {
    let mut path = prefix;
    let mut rest = text;
    loop {
        let n = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        if n == 0 {
            if let Some(inner) = rest.strip_prefix('{') {
                let mut depth = 1;
                let mut end = 0;
                for (i, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let mut depth = 0;
                let mut item_start = 0;
                let body = &inner[..end];
                for (i, c) in body.char_indices().chain([(body.len(), ',')]) {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            let item = body[item_start..i].trim();
                            if !item.is_empty() && item != "self" {
                                expand(item, path.clone(), emit);
                            }
                            item_start = i + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            break;
        }
        path.push(rest[..n].to_string());
        rest = &rest[n..];
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    emit(path);
}

/// Resolve a path to an absolute module path: `super` against `base`.
fn absolute(relative: bool, p: &[String], base: &[String]) -> Vec<String> {
    if !relative {
        return p.to_vec();
    }
    let mut m = base.to_vec();
    let mut i = 0;
    while i < p.len() && p[i] == "super" {
        m.pop();
        i += 1;
    }
    m.extend_from_slice(&p[i..]);
    m
}

/// Re-exports of each module's mod.rs: module -> (item name -> the child it comes from).
type Reexports = BTreeMap<Vec<String>, BTreeMap<String, String>>;
/// Sibling edges: parent module -> (from child, to child).
type Edges = BTreeMap<Vec<String>, BTreeSet<(String, String)>>;

fn reexports(files: &[Source]) -> Reexports {
    let mut out = Reexports::new();
    for f in files.iter().filter(|f| f.is_mod) {
        for line in f.text.lines().filter(|l| l.trim_start().starts_with("pub use ")) {
            let body = line.trim_start()["pub use ".len()..].trim_end_matches(';');
            let first = body.split("::").next().unwrap().to_string();
            if first == "crate" || first == "super" {
                continue;
            }
            expand(body, vec![], &mut |p| {
                if let Some(item) = p.last() {
                    out.entry(f.module.clone()).or_default().insert(item.clone(), first.clone());
                }
            });
        }
    }
    out
}

/// A path to a higher layer than the file's own, as a problem.
fn layer_problem(f: &Source, target: &[String]) -> Option<String> {
    let own = LAYERS.iter().position(|l| Some(*l) == f.module.first().map(String::as_str))?;
    let used = LAYERS.iter().position(|l| Some(*l) == target.first().map(String::as_str))?;
    (used > own).then(|| format!("{} uses {} (a higher layer)", f.module.join("/"), target.join("::")))
}

/// For every common ancestor of the file's module and `target`, the child on each
/// side, as an edge between siblings.
fn sibling_edges(f: &Source, target: &[String], modules: &BTreeSet<Vec<String>>, reexports: &Reexports, edges: &mut Edges) {
    for depth in 0..f.module.len() {
        let parent = &f.module[..depth];
        if target.len() <= depth || target[..depth] != *parent {
            continue;
        }
        let from = &f.module[depth];
        let mut to = target[depth].clone();
        if !modules.iter().any(|m| m.len() > depth && m[..depth] == *parent && m[depth] == to) {
            // An item of the parent module: a child's re-export, or its own.
            match reexports.get(parent).and_then(|r| r.get(&to)) {
                Some(child) => to = child.clone(),
                None => continue,
            }
        }
        if *from != to {
            edges.entry(parent.to_vec()).or_default().insert((from.clone(), to));
        }
    }
}

/// A cycle among the edges from `n`, by depth-first search (state 1: on the stack, 2: done).
fn visit<'a>(n: &'a String, es: &'a BTreeSet<(String, String)>, st: &mut BTreeMap<&'a String, u8>, stack: &mut Vec<&'a String>) -> Option<Vec<String>> {
    match st.get(n) {
        Some(1) => {
            let i = stack.iter().position(|x| *x == n).unwrap();
            return Some(stack[i..].iter().map(|s| s.to_string()).chain([n.clone()]).collect());
        }
        Some(2) => return None,
        _ => {}
    }
    st.insert(n, 1);
    stack.push(n);
    for (a, b) in es {
        if a == n {
            if let Some(c) = visit(b, es, st, stack) {
                return Some(c);
            }
        }
    }
    stack.pop();
    st.insert(n, 2);
    None
}

/// A cycle among the children of one parent, if any.
fn cycle(es: &BTreeSet<(String, String)>) -> Option<Vec<String>> {
    let nodes: BTreeSet<&String> = es.iter().flat_map(|(a, b)| [a, b]).collect();
    let mut state: BTreeMap<&String, u8> = BTreeMap::new();
    nodes.into_iter().find_map(|n| visit(n, es, &mut state, &mut Vec::new()))
}

#[test]
fn layers_and_submodules_form_a_dag() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &[], &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let reexports = reexports(&files);
    let mut problems = Vec::new();
    let mut edges = Edges::new();
    for f in &files {
        for (relative, p) in paths(&f.text) {
            // `super` is the parent of the file's module (a mod.rs's module is its folder).
            let target = absolute(relative, &p, &f.module);
            if target.is_empty() {
                continue;
            }
            problems.extend(layer_problem(f, &target));
            sibling_edges(f, &target, &modules, &reexports, &mut edges);
        }
    }
    for (parent, es) in &edges {
        if let Some(cycle) = cycle(es) {
            problems.push(format!("in {}: submodules depend on each other: {}", if parent.is_empty() { "crate".into() } else { parent.join("/") }, cycle.join(" -> ")));
        }
    }
    assert!(problems.is_empty(), "layering broken:\n{}", problems.join("\n"));
    // The check sees the crate: every layer has files, and some sibling edges exist.
    for l in LAYERS {
        assert!(files.iter().any(|f| f.module.first().map(String::as_str) == Some(*l)), "no files for layer {l}");
    }
    assert!(edges.get(&vec!["transport".to_string()]).is_some_and(|e| e.contains(&("tcp".into(), "cc".into()))));
}

#[test]
fn the_parser_sees_grouped_and_nested_imports() {
    let p = paths("use crate::net::{Graph, link::{LinkConfig, Link}};\nlet x = super::super::engine::SimTime(1);");
    let flat: Vec<String> = p.iter().map(|(r, v)| format!("{}{}", if *r { "~" } else { "" }, v.join("::"))).collect();
    assert_eq!(flat, vec!["net::Graph", "net::link::LinkConfig", "net::link::Link", "~super::super::engine::SimTime"]);
}

/// The integration tests' files that start a simulation themselves instead of through
/// `tests/common` (whose `run_*` check that every packet is accounted for).
fn runs_outside_common(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") && path.file_name().is_some_and(|n| n != "layering.rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            if text.contains("Simulation::new(") || text.contains("Simulation::with_registry(") {
                found.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn every_integration_test_runs_through_the_conservation_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    assert_eq!(runs_outside_common(&dir), Vec::<String>::new(), "run simulations with common::run, run_config or run_registered");
    // The check sees a file that does.
    let tmp = std::env::temp_dir().join(format!("cclab-layering-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("own.rs"), "let r = Simulation::new(cfg, vec![]).run(&mut |_| true);").unwrap();
    let seen = runs_outside_common(&tmp);
    std::fs::remove_dir_all(&tmp).unwrap();
    assert_eq!(seen, vec!["own.rs".to_string()]);
}
