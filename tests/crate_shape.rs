//! The shape of the source, checked from the files themselves: the crowd's rooms import one
//! way (no cycle between them, none reached through the crowd's public re-exports), and no
//! source file grows past 800 lines.
//!
//! A room is a direct child of `src/crowd/` (a folder or a single file); an import is any
//! path in code (comments and test modules aside) that names another room, by
//! `crate::crowd::room::...` or by a chain of `super::` that climbs out of the room.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const LINES_MAX: usize = 800;

fn source_files(folder: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(folder)
        .unwrap_or_else(|error| panic!("{}: {error}", folder.display()))
        .map(|entry| entry.expect("a readable directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            source_files(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

/// The module path of a file under `src/crowd/` (`paths/corridor/mod.rs` is
/// `["paths", "corridor"]`).
fn module_path(crowd: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(crowd).expect("a file under src/crowd");
    let mut segments: Vec<String> = relative
        .with_extension("")
        .iter()
        .map(|segment| segment.to_string_lossy().into_owned())
        .collect();
    if segments.last().is_some_and(|last| last == "mod") {
        segments.pop();
    }
    segments
}

/// The code of a file: line comments removed, and its test module (at the end) cut off.
fn code_of(source: &str) -> String {
    let body = match source.find("#[cfg(test)]\nmod tests") {
        Some(start) => &source[..start],
        None => source,
    };
    body.lines()
        .map(|line| match line.find("//") {
            Some(start) => &line[..start],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path of a `use` tree, flattened: `a::{b, c::{d, e}}` gives `a::b`, `a::c::d`,
/// `a::c::e`.
fn flatten_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let (prefix, inner) = (
        &tree[..open],
        &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())],
    );
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (index, character) in inner.char_indices() {
        match character {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|part| !part.is_empty())
        .flat_map(|part| {
            flatten_use(part)
                .into_iter()
                .map(move |path| format!("{prefix}{path}"))
        })
        .collect()
}

/// The paths in `code` that start at the crowd (`crate::crowd::`) or climb with `super::`.
fn crowd_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find("use ") {
        let preceded_by_word = rest[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let after = &rest[start + 4..];
        let end = after.find(';').unwrap_or(after.len());
        if !preceded_by_word {
            paths.extend(flatten_use(&after[..end]));
        }
        rest = &after[end.min(after.len())..];
    }
    let bytes = code.as_bytes();
    for prefix in ["crate::crowd::", "super::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(prefix) {
            let start = from + found;
            let boundary = start == 0 || {
                let before = bytes[start - 1] as char;
                !(before.is_alphanumeric() || before == '_' || before == ':')
            };
            let length = code[start..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(code.len() - start);
            if boundary {
                paths.push(code[start..start + length].to_string());
            }
            from = start + length.max(1);
        }
    }
    paths
}

/// Where a path leads, as segments from the crowd's root; `None` outside the crowd.
fn resolve(path: &str, module: &[String]) -> Option<Vec<String>> {
    let path = path.trim_start_matches('$');
    if let Some(rest) = path.strip_prefix("crate::crowd::") {
        let segments: Vec<String> = rest
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        return (!segments.is_empty()).then_some(segments);
    }
    let mut segments: Vec<&str> = path.split("::").collect();
    let mut base = module.to_vec();
    let mut climbed = false;
    while segments.first() == Some(&"super") {
        base.pop()?;
        segments.remove(0);
        climbed = true;
    }
    if !climbed {
        return None;
    }
    base.extend(
        segments
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    );
    (!base.is_empty()).then_some(base)
}

fn crowd_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/crowd")
}

/// Each room and the rooms it imports; paths through the crowd's root re-exports, which
/// would hide the room they lead to, are listed apart.
fn room_imports() -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let crowd = crowd_folder();
    let mut files = Vec::new();
    source_files(&crowd, &mut files);
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut through_root = Vec::new();
    for file in files {
        let module = module_path(&crowd, &file);
        let Some(room) = module.first().cloned() else {
            continue; // the crowd's own mod.rs: the public re-exports
        };
        if module.last().is_some_and(|last| last == "tests") {
            continue;
        }
        let source = fs::read_to_string(&file).expect("a readable source file");
        let rooms = imports.entry(room.clone()).or_default();
        for path in crowd_paths(&code_of(&source)) {
            let Some(target) = resolve(&path, &module) else {
                continue;
            };
            let Some(first) = target.first() else {
                continue;
            };
            if first.starts_with(|c: char| c.is_uppercase()) {
                through_root.push(format!("{}: {path}", file.display()));
            } else if *first != room && first != "*" {
                rooms.insert(first.clone());
            }
        }
    }
    (imports, through_root)
}

/// A cycle of the graph, if it has one, as the rooms along it.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        room: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        trail: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(room.to_string(), 1);
        trail.push(room.to_string());
        for next in graph.get(room).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = trail.iter().position(|r| r == next).unwrap_or(0);
                    let mut cycle = trail[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(cycle) = visit(next, graph, state, trail) {
                        return Some(cycle);
                    }
                }
                _ => {}
            }
        }
        trail.pop();
        state.insert(room.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for room in graph.keys() {
        if state.get(room.as_str()).copied().unwrap_or(0) == 0 {
            let mut trail = Vec::new();
            if let Some(cycle) = visit(room, graph, &mut state, &mut trail) {
                return Some(cycle);
            }
        }
    }
    None
}

#[test]
fn the_crowds_rooms_import_one_way() {
    let (imports, through_root) = room_imports();
    assert!(
        imports.len() >= 10,
        "the crowd has rooms, found {:?}",
        imports.keys().collect::<Vec<_>>()
    );
    assert!(
        through_root.is_empty(),
        "paths through the crowd's re-exports hide the room they import: {through_root:#?}"
    );
    // The leaves and the top are what the rooms are for: the codec and the agents' vocabulary
    // import nothing of the crowd, and nothing imports the runtime.
    for leaf in ["codec", "agents", "compute"] {
        assert_eq!(
            imports.get(leaf),
            Some(&BTreeSet::new()),
            "{leaf} is a leaf"
        );
    }
    let importing_runtime: Vec<&String> = imports
        .iter()
        .filter(|(_, rooms)| rooms.contains("runtime"))
        .map(|(room, _)| room)
        .collect();
    assert!(
        importing_runtime.is_empty(),
        "rooms importing the runtime: {importing_runtime:?}"
    );
    assert_eq!(find_cycle(&imports), None, "rooms' imports: {imports:#?}");
}

#[test]
fn the_cycle_finder_finds_a_cycle_and_a_room_outside_its_room() {
    // The check above is only as good as these two parts.
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&graph), None);
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let module: Vec<String> = vec!["paths".into(), "corridor".into(), "cache".into()];
    assert_eq!(
        resolve("super::super::super::agents::AgentId", &module),
        Some(vec!["agents".into(), "AgentId".into()])
    );
    let found: BTreeSet<String> = crowd_paths(
        "use super::{Corridor, scheduler::{Job, Queue}};\nlet lanes = crate::crowd::lanes::AgentLanes::default();",
    )
    .into_iter()
    .collect();
    for expected in [
        "super::Corridor",
        "super::scheduler::Job",
        "super::scheduler::Queue",
        "crate::crowd::lanes::AgentLanes::default",
    ] {
        assert!(found.contains(expected), "{expected} in {found:?}");
    }
}

#[test]
fn no_source_file_is_longer_than_800_lines() {
    let mut files = Vec::new();
    source_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 50, "found {} source files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = fs::read_to_string(file).expect("readable").lines().count();
            (lines > LINES_MAX).then(|| format!("{}: {lines}", file.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over {LINES_MAX} lines: {long:#?}");
}
