//! `waymark path`: the shared query set through the CLI gives Detour's verdicts and lengths;
//! the per-query CSV has one row per query; a bad CSV line is one error line naming it.

#![cfg(feature = "cli")]

mod common;

use common::waymark;

use std::path::PathBuf;

fn asset(name: &str) -> String {
    format!("{}/assets/levels/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn dungeon_queries_through_the_cli_match_detour() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dungeon_paths.csv");
    let output = waymark(&[
        "path",
        &asset("dungeon.obj"),
        "--preset",
        "recast",
        "--queries",
        &asset("dungeon_queries.csv"),
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["queries"], 10_000);
    // Detour: complete fraction 0.822, mean length of complete paths 45.76 m.
    let complete = report["complete_fraction"].as_f64().unwrap();
    assert!((complete - 0.8223).abs() < 0.001, "{complete}");
    let length = report["mean_length_complete"].as_f64().unwrap();
    assert!((length - 45.76).abs() < 0.05, "{length}");
    for key in ["mean_us", "median_us", "p99_us"] {
        assert!(report[key].as_f64().is_some_and(|v| v > 0.0), "{key}");
    }
    let rows = std::fs::read_to_string(&out).unwrap();
    let mut lines = rows.lines();
    assert_eq!(
        lines.next(),
        Some("complete,length,path_polys,straight_points")
    );
    assert_eq!(lines.count(), 10_000);
}

#[test]
fn a_bad_query_line_is_named() {
    let csv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bad_queries.csv");
    std::fs::write(&csv, "sx,sy,sz,ex,ey,ez\n1,2,3,4,5,6\n1,2,nan,4,5,6\n").unwrap();
    let output = waymark(&[
        "path",
        &asset("dungeon.obj"),
        "--queries",
        csv.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("line 3") && !stderr.contains("panicked"),
        "{stderr}"
    );
    let output = waymark(&[
        "path",
        "/no/such/level.wmnav",
        "--queries",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read '/no/such/level.wmnav'"));
}
