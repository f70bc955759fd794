//! The crowd's public items, as `src/crowd/mod.rs` exports them, are exactly the list in
//! `docs/architecture.md` ("The crowd's front door"), and there are at most 50: the count a
//! newcomer reads is the real one.

use std::collections::BTreeSet;
use std::path::Path;

const ITEMS_MAX: usize = 50;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The names `src/crowd/mod.rs` re-exports to every build: `pub use` statements outside the
/// hidden `internals` module and not behind the `harness` feature.
fn exported() -> BTreeSet<String> {
    let source = read("src/crowd/mod.rs");
    // Cut the `internals` module out, its attributes with it, braces matched.
    let module = source
        .find("pub mod internals {")
        .expect("the internals module");
    let start = source[..module].rfind("#[cfg(").unwrap_or(module);
    let mut depth = 0;
    let mut end = start;
    for (offset, character) in source[start..].char_indices() {
        match character {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = start + offset + 1;
                    break;
                }
            }
            _ => {}
        }
    }
    let code = format!("{}{}", &source[..start], &source[end..]);
    let code: String = code
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    // Each statement ends at a `;` and carries the attributes written before it.
    let mut names = BTreeSet::new();
    for statement in code.split(';') {
        let Some((attributes, tree)) = statement.split_once("pub use ") else {
            continue;
        };
        if attributes.contains("feature = \"harness\"") {
            continue;
        }
        let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
        let leaves = match (tree.find('{'), tree.rfind('}')) {
            (Some(open), Some(close)) => tree[open + 1..close].to_string(),
            _ => tree.clone(),
        };
        for leaf in leaves.split(',').filter(|leaf| !leaf.is_empty()) {
            names.insert(leaf.rsplit("::").next().unwrap_or(leaf).to_string());
        }
    }
    names
}

/// The names listed in the architecture page's block after `<!-- the crowd's public items -->`.
fn documented() -> (BTreeSet<String>, usize) {
    let page = read("docs/architecture.md");
    let marker = "<!-- the crowd's public items -->";
    let after = &page[page.find(marker).expect("the list's marker") + marker.len()..];
    let block = after
        .split("```")
        .nth(1)
        .expect("a fenced block after the marker");
    let mut names = BTreeSet::new();
    for line in block.lines().skip(1) {
        let items = line.split_once(':').map_or(line, |(_, items)| items);
        names.extend(items.split_whitespace().map(str::to_string));
    }
    let count_text = page
        .split(" item pages")
        .next()
        .and_then(|before| before.split_whitespace().last())
        .expect("the count before \"item pages\"");
    (names, count_text.parse().expect("a number of item pages"))
}

#[test]
fn the_documented_crowd_api_is_the_exported_one_and_fits_in_fifty_items() {
    let exported = exported();
    let (documented, count) = documented();
    let missing: Vec<_> = exported.difference(&documented).collect();
    let stale: Vec<_> = documented.difference(&exported).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "exported but not documented: {missing:?}; documented but not exported: {stale:?}"
    );
    assert_eq!(count, exported.len(), "the page's count of item pages");
    assert!(
        exported.len() <= ITEMS_MAX,
        "{} crowd items, at most {ITEMS_MAX}: {exported:?}",
        exported.len()
    );
    // The parser sees the crowd itself and skips what only the harness build exports.
    assert!(exported.contains("Crowd") && exported.contains("CrowdEvent"));
    assert!(!exported.contains("FlowMeter") && !exported.contains("Fnv"));
}
