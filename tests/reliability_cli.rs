//! The CLI's file inputs as a hostile user feeds them: each refused with one line naming
//! the value or the limit, never a panic, never read without bound, never silently
//! reinterpreted.

#![cfg(feature = "cli")]

mod common;

use common::waymark;
use std::path::PathBuf;

fn asset(name: &str) -> String {
    common::level_path(name).display().to_string()
}

fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// The one line of stderr of a refused command, asserting it was refused (exit 1) without
/// a panic.
fn refusal(args: &[&str]) -> String {
    let output = waymark(args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    stderr
}

#[test]
fn a_queries_csv_without_a_header_keeps_its_first_query() {
    // The first line was once always skipped as a header: a file without one lost a query.
    let queries = "40.5,10.2,0.7,-20.0,10.2,10.0\n40.5,10.2,0.7,30.0,10.2,-5.0\n";
    let mut counts = Vec::new();
    for (name, text) in [
        ("queries_headerless.csv", queries.to_owned()),
        (
            "queries_header.csv",
            format!("sx,sy,sz,ex,ey,ez\n{queries}"),
        ),
    ] {
        let path = scratch(name);
        std::fs::write(&path, text).unwrap();
        let output = waymark(&[
            "path",
            &asset("dungeon.obj"),
            "--preset",
            "recast",
            "--queries",
            path.to_str().unwrap(),
            "--json",
        ]);
        assert!(output.status.success());
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        counts.push(report["queries"].as_u64().unwrap());
    }
    assert_eq!(counts, [2, 2]);
}

#[test]
fn a_query_beyond_the_world_is_refused_naming_its_line() {
    let path = scratch("queries_far.csv");
    std::fs::write(&path, "sx,sy,sz,ex,ey,ez\n0,0,0,1,0,1\n0,0,0,3e38,0,1\n").unwrap();
    let stderr = refusal(&[
        "path",
        &asset("dungeon.obj"),
        "--queries",
        path.to_str().unwrap(),
    ]);
    assert!(
        stderr.contains("line 3") && stderr.contains("100000"),
        "{stderr}"
    );
}

#[test]
fn bake_flags_given_with_a_baked_level_are_refused_by_name() {
    let baked = scratch("flags_dungeon.wmnav");
    let output = waymark(&[
        "bake",
        &asset("dungeon.obj"),
        "--preset",
        "recast",
        "--out",
        baked.to_str().unwrap(),
    ]);
    assert!(output.status.success());
    let queries = scratch("flags_queries.csv");
    std::fs::write(&queries, "40.5,10.2,0.7,-20.0,10.2,10.0\n").unwrap();
    let stderr = refusal(&[
        "path",
        baked.to_str().unwrap(),
        "--cell-size",
        "0.1",
        "--agent-radius",
        "0.3",
        "--queries",
        queries.to_str().unwrap(),
    ]);
    assert!(
        stderr.contains("--cell-size") && stderr.contains("--agent-radius"),
        "{stderr}"
    );
    // Without them the baked level loads as it is.
    let output = waymark(&[
        "path",
        baked.to_str().unwrap(),
        "--queries",
        queries.to_str().unwrap(),
    ]);
    assert!(output.status.success());
}

#[test]
fn a_level_with_nothing_walkable_is_refused_not_run_with_no_agents() {
    // One wall standing upright: no floor for any agent.
    let wall = scratch("only_a_wall.obj");
    std::fs::write(
        &wall,
        "v 0 0 0\nv 10 0 0\nv 10 10 0\nv 0 10 0\nf 1 2 3\nf 1 3 4\n",
    )
    .unwrap();
    let stderr = refusal(&["crowd", wall.to_str().unwrap(), "--frames", "5"]);
    assert!(stderr.contains("no walkable polygon"), "{stderr}");
}

#[test]
fn an_endless_stream_named_as_a_level_is_refused_at_the_input_limit() {
    // A link to a device that never ends was read until memory ran out.
    let endless = scratch("endless.obj");
    let _ = std::fs::remove_file(&endless);
    std::os::unix::fs::symlink("/dev/zero", &endless).unwrap();
    let stderr = refusal(&["bake", endless.to_str().unwrap()]);
    assert!(stderr.contains("INPUT_FILE_BYTES_MAX"), "{stderr}");
}

#[test]
fn an_edge_length_whose_square_overflows_is_refused_by_the_bake() {
    let stderr = refusal(&[
        "bake",
        &asset("dungeon.obj"),
        "--cell-size",
        "0.2",
        "--edge-max-length",
        "607400100",
    ]);
    assert!(stderr.contains("edge_max_length_m"), "{stderr}");
}

#[test]
fn a_sim_scenario_past_the_tick_limit_or_with_absurd_values_is_refused() {
    let fixture = format!(
        "{}/tests/fixtures/sim_h3_belt.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(fixture).unwrap();
    let cases = [
        (
            text.replace("\"ticks\": 60", "\"ticks\": 1000000000000"),
            "FRAMES_MAX",
        ),
        // A belt at 3e38 m/s: refused by the crowd, naming the value.
        (
            text.replace("\"velocity\": [1, 0, 0]", "\"velocity\": [3e38, 0, 0]"),
            "3",
        ),
        // A corner 3e38 m out: refused by the mesh builder.
        (text.replace("[10, 0, 0]", "[3e38, 0, 0]"), "corner"),
    ];
    for (index, (scenario, named)) in cases.iter().enumerate() {
        assert_ne!(*scenario, text, "case {index} changed nothing");
        let path = scratch(&format!("sim_absurd_{index}.json"));
        std::fs::write(&path, scenario).unwrap();
        let output = waymark(&["sim", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(!stderr.contains("panicked"), "{stderr}");
        // Refused outright, or the command refused and reported in the trace of outcomes.
        assert!(
            (!output.status.success() && stderr.contains(named))
                || stdout.contains("outside its range"),
            "case {index}: {stderr} {stdout}"
        );
    }
}
