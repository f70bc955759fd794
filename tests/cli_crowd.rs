//! `waymark crowd` and the main job: the default run moves a crowd on the built-in level; the
//! shared dungeon agents through the CLI report arrivals, waiting and per-pass times; bad
//! arguments are one error line.
#![cfg(feature = "cli")]

use std::process::{Command, Output};

use serde_json::Value;

fn waymark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_waymark"))
        .args(args)
        .output()
        .expect("the waymark binary runs")
}

fn asset(name: &str) -> String {
    format!("{}/assets/levels/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_main_job_is_a_crowd_on_the_built_in_level() {
    let output = waymark(&[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.starts_with("level: proving_ground (built-in)"),
        "{text}"
    );
    assert!(text.contains("agents: 200, frames: 300"), "{text}");
    let arrivals: usize = text
        .lines()
        .find_map(|line| line.strip_prefix("arrivals: "))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .expect("an arrivals line");
    assert!(arrivals > 50, "{text}");
}

#[test]
fn the_shared_dungeon_agents_through_the_cli() {
    let output = waymark(&[
        "crowd",
        &asset("dungeon.obj"),
        "--preset",
        "recast",
        "--agents-csv",
        &asset("dungeon_crowd_agents.csv"),
        "--agents",
        "1000",
        "--json",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["agents"], 1000);
    assert_eq!(report["frames"], 300);
    assert!(report["arrivals"].as_u64().unwrap() > 300, "{report}");
    assert_eq!(report["no_path"], 0);
    // Paths are served: nobody waits at the end, and no frame spends more than the budget.
    assert!(
        report["waiting_for_path"].as_u64().unwrap() < 100,
        "{report}"
    );
    assert!(
        report["nodes_expanded_max_frame"].as_u64().unwrap()
            <= report["node_budget"].as_u64().unwrap()
    );
    for pass in [
        "ingest", "schedule", "adopt", "follow", "slope", "move", "feedback",
    ] {
        assert!(report["pass_ms"][pass].as_f64().is_some(), "{pass}");
    }
    assert!(report["lane_bytes_per_agent"].as_u64().unwrap() <= 256);
}

#[test]
fn bad_crowd_arguments_are_one_line() {
    for (args, expected) in [
        (vec!["crowd", "--dt", "0"], "--dt"),
        (
            vec!["crowd", "--heuristic-weight", "0.5"],
            "--heuristic-weight",
        ),
        (vec!["crowd", "nowhere.obj"], "nowhere.obj"),
        (vec!["crowd", "--node-budget", "0"], "--node-budget"),
    ] {
        let output = waymark(&args);
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
    }
}
