//! `waymark crowd` and the main job: the default run moves a crowd on the built-in level; the
//! shared dungeon agents through the CLI report arrivals, waiting and per-pass times; bad
//! arguments are one error line.

#![cfg(feature = "cli")]

mod common;

use common::waymark;

use serde_json::Value;

fn asset(name: &str) -> String {
    format!("{}/assets/levels/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A successful run's JSON report.
fn json_of(args: &[&str]) -> Value {
    let output = waymark(args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The first 1,000 shared agents on dungeon.obj with DetourCrowd's parameters, as JSON.
fn shared_dungeon_agents(avoidance: &str) -> Value {
    json_of(&[
        "crowd",
        &asset("dungeon.obj"),
        "--preset",
        "recast",
        "--agents-csv",
        &asset("dungeon_crowd_agents.csv"),
        "--agents",
        "1000",
        "--avoidance",
        avoidance,
        "--json",
    ])
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
    let counted = |label: &str| -> usize {
        text.lines()
            .flat_map(|line| line.split("; "))
            .find_map(|part| part.split_once(label).map(|(_, rest)| rest))
            .and_then(|rest| rest.split([',', ';']).next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no '{label}' in {text}"))
    };
    // Every target is where its agent can walk, so no order ends at a partial path's end;
    // complete arrivals are what the crowd delivers (measured 696 in 10 s; 1,127 without
    // avoidance, walking through each other; 581 with the boundary respected 1 s ahead).
    assert_eq!(counted("(at the end of a partial path): "), 0, "{text}");
    let arrivals = counted("complete arrivals: ");
    assert!(arrivals > 640, "{text}");
    assert!(text.contains("depth p50") && text.contains("p99"), "{text}");
    assert!(text.contains("avoidance on:"), "{text}");
    assert!(text.contains("off the mesh: 0"), "{text}");
    // The turntable bay's table turns under the agents standing on it (13 measured).
    let riding: usize = text
        .lines()
        .find_map(|line| line.strip_prefix("moving supports: "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a moving supports line");
    assert!(riding > 0, "{text}");
    // And the lift bay's car carries some between its floors (8 measured).
    let lift_riders: usize = text
        .lines()
        .find_map(|line| line.strip_prefix("moving supports: "))
        .and_then(|rest| rest.split("; ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a count of platform riders");
    assert!(lift_riders > 0, "{text}");
    // The boundary's horizon is the crowd's to set: a second ahead, walkers are held off
    // the edges their paths turn round and deliver fewer.
    let output = waymark(&["crowd", "--wall-time-horizon", "1"]);
    let text = String::from_utf8_lossy(&output.stdout);
    let held_off = text
        .lines()
        .find_map(|line| line.strip_prefix("complete arrivals: "))
        .and_then(|rest| rest.split(';').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no arrivals in {text}"));
    assert!(held_off + 50 < arrivals, "{held_off} against {arrivals}");
}

#[test]
fn the_shared_dungeon_agents_through_the_cli() {
    let report = shared_dungeon_agents("off");
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
    // The slowest measured frame is named, and the frames over twice the median are
    // counted among the 300 (the slowest is one of them exactly when it is over).
    let slowest = report["slowest_frame"].as_u64().unwrap();
    assert!(slowest < 300, "{report}");
    let over = report["frames_over_twice_median"].as_u64().unwrap();
    let (max, median) = (
        report["ms_per_frame_max"].as_f64().unwrap(),
        report["ms_per_frame_median"].as_f64().unwrap(),
    );
    assert!(max >= median && over < 300, "{report}");
    assert_eq!(over > 0, max > 2.0 * median, "{report}");
    // Of those, the ones the machine took a core in: counted on Linux, at most all of them.
    let over_waiting = &report["frames_over_twice_median_waiting_for_cpu"];
    if cfg!(target_os = "linux") {
        assert!(over_waiting.as_u64().unwrap() <= over, "{report}");
    } else {
        assert!(over_waiting.is_null(), "{report}");
    }
    // Memory: the corridors held or cached at the end, their parts adding up, and the
    // process's resident memory under its peak.
    let corridors = &report["corridors"];
    let (count, cached) = (
        corridors["count"].as_u64().unwrap(),
        corridors["cached"].as_u64().unwrap(),
    );
    // Distinct corridors: those cached and those agents hold that the cache does not.
    assert!(
        count >= 300 && (cached..=cached + 1000).contains(&count),
        "{report}"
    );
    let bytes = |part: &str| corridors[part].as_u64().unwrap();
    // At least 4 bytes per corridor polygon, 2 per tile read.
    assert!(bytes("polygon_bytes") >= 4 * count, "{report}");
    assert!(bytes("read_set_bytes") >= 2 * count, "{report}");
    assert_eq!(
        bytes("polygon_bytes") + bytes("read_set_bytes") + bytes("other_bytes"),
        bytes("bytes")
    );
    if let (Some(resident), Some(peak)) = (
        report["resident_mib"].as_f64(),
        report["peak_rss_mib"].as_f64(),
    ) {
        assert!(resident > 0.0 && resident <= peak, "{report}");
    }
    // Walking through each other: thousands of overlapping pairs per frame.
    assert!(report["overlap_pairs_per_frame"].as_f64().unwrap() > 1000.0);
    // With avoidance off nobody passes through anybody: there is nothing to escalate.
    assert_eq!(report["overlap_pairs_passing_per_frame"], 0.0, "{report}");
    assert_eq!(report["off_mesh_agents"], 0);
    // Flow: nothing in the way, so moving agents walk their corridors at nearly cruising
    // speed (measured 0.90; braking for goals and corners takes the rest), every order is
    // answered within a few frames (12 at the 95th percentile: the first frame's burst
    // waits for the node budget), nobody is stuck, and complete arrivals per agent-minute
    // are the arrivals over 1,000 agents and 10 s.
    let efficiency = report["progress_efficiency"].as_f64().unwrap();
    assert!((0.8..1.0).contains(&efficiency), "{report}");
    assert!(
        report["order_to_motion_frames_p95"].as_u64().unwrap() <= 20,
        "{report}"
    );
    assert_eq!(report["stuck_agents"], 0, "{report}");
    let arrivals = report["arrivals"].as_f64().unwrap();
    let per_minute = report["arrivals_per_agent_minute"].as_f64().unwrap();
    assert!(arrivals > 100.0, "{report}");
    assert!(
        (per_minute - arrivals / 1000.0 / (10.0 / 60.0)).abs() < 1e-3,
        "{report}"
    );
}

#[test]
fn avoidance_cuts_the_overlaps_of_the_shared_dungeon_agents_and_delivers() {
    let report = shared_dungeon_agents("on");
    assert_eq!(report["avoidance"], true);
    for field in ["completion_s", "stuck_agents", "max_overlap_m"] {
        assert!(report.get(field).is_some(), "{field}");
    }
    assert!(report["pass_ms"]["avoid"].as_f64().unwrap() > 0.0);
    assert!(report["pass_ms"]["neighbours"].as_f64().unwrap() > 0.0);
    // Each order's one outcome. Agents take their next target as soon as they are within
    // 0.25 m of the target or of a partial corridor's end (the comparison rule), usually
    // before they stop, which cancels the order (reported with the next step's events, so
    // those of the last frame are not in the run); an order the crowd ended itself
    // (stopped there) counts as its success or its unreachable target.
    let outcomes = &report["order_outcomes"];
    let count = |value: &Value| value.as_u64().unwrap();
    let ended = count(&outcomes["success"])
        + count(&outcomes["unreachable"])
        + count(&outcomes["cancelled"]);
    let reached = count(&report["arrivals"]) + count(&report["partial_arrivals"]);
    assert!(ended <= reached && ended + 5 >= reached, "{report}");
    assert!(
        count(&outcomes["success"]) <= count(&report["arrivals"]),
        "{report}"
    );
    assert_eq!(outcomes["no_path"], report["no_path"], "{report}");
    for never in ["deadline_passed", "blocked"] {
        assert_eq!(outcomes[never], 0, "{never}: {report}");
    }
    // The starts overlap (the CSV packs a body on 1.6 m² of floor, 71% of the floor
    // covered); avoidance spreads them out. Native DetourCrowd leaves 4,463 overlapping
    // pairs per frame on the same agents in these 300 frames and completes 126 arrivals
    // (`target/detourcrowd/crowd_reference assets/levels/dungeon.obj
    // assets/levels/dungeon_crowd_agents.csv 1000 3 300`). Measured here: 1,230 pairs
    // (0.28 of DetourCrowd's) and 60-67 complete arrivals, by build and setting (the
    // crowd is chaotic, and these 300 frames are mostly its start from overlapping
    // places). The suite's acceptance above 30% coverage (at least half of DetourCrowd's
    // arrivals, a quarter of its pairs) is checked over 1,800 frames, where the start
    // weighs less, by `tests/flow_against_detourcrowd.rs`; here the run must deliver
    // two fifths of DetourCrowd's arrivals.
    let overlaps = report["overlap_pairs_per_frame"].as_f64().unwrap();
    assert!(overlaps < 0.3 * 4463.0, "{report}");
    // Packed, walkers held for a second pass through: some of the pairs are theirs.
    let passing = report["overlap_pairs_passing_per_frame"].as_f64().unwrap();
    assert!(passing > 0.0 && passing <= overlaps, "{report}");
    assert_eq!(report["off_mesh_agents"], 0);
    // At most 1% stuck (measured 3). Partial ends are not arrivals.
    assert!(report["stuck_agents"].as_u64().unwrap() <= 10, "{report}");
    assert!(
        report["arrivals"].as_u64().unwrap() * 5 >= 126 * 2,
        "{report}"
    );
}

#[test]
fn a_city_with_moving_floors_carries_its_share_of_the_crowd() {
    // A tenth of a 2,000-agent city's walkable area as belts, in whole squares: some of
    // the crowd stands on them (measured 99 at frame 90; the 10,000-agent city's share is
    // about a tenth, stress/supports_speed.sh), everyone stays on the mesh, every order
    // finds a path.
    let moving = json_of(&[
        "crowd",
        "city",
        "--agents",
        "2000",
        "--frames",
        "90",
        "--belt-share",
        "0.1",
        "--json",
    ]);
    let on = moving["agents_on_moving_supports"].as_u64().unwrap();
    assert!((50..=400).contains(&on), "{moving}");
    assert_eq!(moving["off_mesh_agents"], 0);
    assert_eq!(moving["no_path"], 0, "the belts join the streets: {moving}");
    let still = json_of(&[
        "crowd", "city", "--agents", "2000", "--frames", "90", "--json",
    ]);
    assert_eq!(still["agents_on_moving_supports"], 0);
    // Out of range, or not the city: refused by value.
    for bad in [
        &["crowd", "city", "--agents", "200", "--belt-share", "0.7"][..],
        &["crowd", "--agents", "200", "--belt-share", "0.1"][..],
    ] {
        let output = waymark(bad);
        assert!(!output.status.success());
        let text = String::from_utf8_lossy(&output.stderr);
        assert!(text.contains("--belt-share"), "{text}");
    }
}

#[test]
fn the_bottleneck_scenario_through_the_cli() {
    let output = waymark(&["scenario", "bottleneck", "--agents", "40", "--json"]);
    assert!(output.status.success());
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["scenario"], "bottleneck");
    assert_eq!(report["stuck_agents"], 0, "{report}");
    assert_eq!(report["off_mesh_agents"], 0);
    assert!(report["completion_s"].as_f64().unwrap() > 0.0);
    for field in [
        "overlap_pairs_per_frame",
        "max_overlap_m",
        "completion_ratio",
        "radius_m",
        "agents_per_ms",
    ] {
        assert!(report[field].as_f64().is_some(), "{field}");
    }
    // Run on the threads asked for, and says so; the result is the same.
    let one = waymark(&[
        "scenario",
        "bottleneck",
        "--agents",
        "40",
        "--threads",
        "1",
        "--json",
    ]);
    assert!(one.status.success());
    let one: Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(one["threads"], 1, "{one}");
    assert_eq!(one["completion_s"], report["completion_s"]);
}

#[test]
fn the_ferry_and_elevator_scenarios_through_the_cli_deliver_everyone_and_nobody_falls_off() {
    for (name, agents) in [("ferry", "30"), ("elevator", "30")] {
        let output = waymark(&["scenario", name, "--agents", agents, "--json"]);
        assert!(output.status.success(), "{name}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["scenario"], name);
        assert_eq!(report["arrivals"], 30, "{report}");
        assert_eq!(report["unarrived_agents"], 0, "{report}");
        assert_eq!(report["stuck_agents"], 0, "{report}");
        assert_eq!(report["off_mesh_agents"], 0, "{report}");
        assert_eq!(report["fell_off_support"], 0, "{report}");
        assert!(report["stop_error_m"].as_f64().unwrap() < 0.25, "{report}");
        // Nobody crosses before the platform's first stop is over and its journey done:
        // the first arrivals need at least a crossing of the platform and a journey.
        assert!(report["completion_s"].as_f64().unwrap() > 20.0, "{report}");
    }
}

#[test]
fn bad_crowd_arguments_are_one_line() {
    for (args, expected) in [
        (vec!["crowd", "--dt", "0"], "--dt"),
        // A step of a billion seconds or of 1e-30 s is no frame of a game.
        (
            vec!["crowd", "--dt", "1e9"],
            "--dt 1000000000 s is outside 0.0001..=1 s",
        ),
        (vec!["crowd", "--dt", "1e-30"], "s is outside 0.0001..=1 s"),
        (
            vec!["crowd", "--heuristic-weight", "0.5"],
            "--heuristic-weight",
        ),
        (vec!["crowd", "nowhere.obj"], "nowhere.obj"),
        (vec!["crowd", "--node-budget", "0"], "--node-budget"),
        (vec!["scenario", "circle", "--agents", "1"], "not 1"),
        // Sizes past their limits are refused before anything is built.
        (
            vec!["crowd", "city", "--agents", "1000000000000"],
            "1000000000000 is outside 1..=1000000",
        ),
        (vec!["crowd", "--frames", "5000000"], "5000000 is outside"),
        (vec!["crowd", "--threads", "0"], "--threads"),
        (
            vec!["crowd", "--wall-time-horizon", "0"],
            "avoidance.wall_time_horizon_s = 0 is invalid",
        ),
        (vec!["scenario", "circle", "--agents", "2000000"], "2000000"),
        (vec!["bake", "--threads", "100000"], "--threads"),
    ] {
        let output = waymark(&args);
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
    }
}

#[test]
fn skipping_the_quality_measurement_leaves_its_fields_null_and_the_timing() {
    let run = |extra: &[&str]| {
        let mut args = vec!["crowd", "--agents", "300", "--frames", "20", "--json"];
        args.extend_from_slice(extra);
        let output = waymark(&args);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let measured = run(&[]);
    let skipped = run(&["--skip-quality"]);
    for field in [
        "overlap_pairs_per_frame",
        "overlap_pairs_passing_per_frame",
        "max_overlap_m",
        "off_mesh_agents",
    ] {
        assert!(measured[field].is_number(), "{field}: {measured}");
        assert!(skipped[field].is_null(), "{field}: {skipped}");
    }
    assert!(skipped["ms_per_frame_median"].as_f64().unwrap() > 0.0);
    // Quality is read, never written: the crowd moves the same.
    assert_eq!(measured["arrivals"], skipped["arrivals"]);
    assert_eq!(measured["blocked"], skipped["blocked"]);
}

#[test]
fn warm_up_frames_are_run_untimed_before_the_measured_ones() {
    // 3,000 agents on the generated city under the fixed budget (2,048 nodes a frame)
    // measured over frames 0-19 and, after 300 untimed frames, over frames 300-319: by
    // then the first frame's path requests are served (measured: 1,942 waiting at frame
    // 20, none at frame 320), and the JSON says how many frames were measured and how many
    // ran before.
    let run = |warm_up: &str| {
        json_of(&[
            "crowd",
            "city",
            "--agents",
            "3000",
            "--frames",
            "20",
            "--warm-up-frames",
            warm_up,
            "--node-budget-per-agent",
            "0",
            "--head-starts-per-agent",
            "0",
            "--skip-quality",
            "--json",
        ])
    };
    let cold = run("0");
    let warm = run("300");
    assert_eq!(cold["frames"], 20);
    assert_eq!(warm["frames"], 20);
    assert_eq!(cold["warm_up_frames"], 0);
    assert_eq!(warm["warm_up_frames"], 300);
    let waiting = |report: &Value| report["waiting_for_path"].as_u64().unwrap();
    assert!(
        waiting(&cold) > 1000 && waiting(&warm) < 100,
        "waiting: {} after the warm-up, {} without",
        waiting(&warm),
        waiting(&cold)
    );
}

#[test]
fn the_hills_terrain_is_a_built_in_level_its_crowd_walks() {
    // 1,000 agents on the generated terrain (106 m a side, one plateau, one ridge): every
    // agent on the mesh, walking its corridor at most of its cruising speed over the
    // slopes (measured 0.83-0.87), at most 1% stuck (measured 0-1).
    let report = json_of(&[
        "crowd", "hills", "--agents", "1000", "--frames", "150", "--json",
    ]);
    let level = report["level"].as_str().unwrap();
    assert!(
        level.starts_with("hills (") && level.contains("1 plateaus"),
        "{level}"
    );
    assert_eq!(report["agents"], 1000);
    assert_eq!(report["off_mesh_agents"], 0, "{report}");
    assert!(report["stuck_agents"].as_u64().unwrap() <= 10, "{report}");
    assert_eq!(report["waiting_for_path"], 0, "{report}");
    let efficiency = report["progress_efficiency"].as_f64().unwrap();
    assert!((0.7..1.0).contains(&efficiency), "{report}");
    assert!(report["arrivals"].as_u64().unwrap() > 0, "{report}");
    // A level past its size limit is refused by value, before anything is built (the
    // command line's bound on --agents is the hills level's own).
    let output = waymark(&["crowd", "hills", "--agents", "2000000"]);
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("2000000 is outside 1..=1000000"), "{error}");
}

#[test]
fn ordered_agents_start_walking_within_frames_and_every_first_path_comes() {
    // 3,000 agents ordered at once on the generated city: head starts get 2,048 of them
    // walking in the first frame and the rest in the second (measured p95 3 frames; the
    // searched paths alone came at p95 51), and by frame 300 no order is still without
    // its first searched path; agents waiting then are re-plans after a push off their
    // corridors.
    let report = json_of(&[
        "crowd",
        "city",
        "--agents",
        "3000",
        "--frames",
        "300",
        "--skip-quality",
        "--json",
    ]);
    assert!(
        report["order_to_motion_frames_p95"].as_u64().unwrap() <= 5,
        "{report}"
    );
    assert_eq!(report["waiting_for_first_path"], 0, "{report}");
    assert!(
        report["oldest_path_wait_frames"].as_u64().unwrap() <= 2,
        "{report}"
    );
    assert_eq!(report["head_starts"], 2048);
    // Walkers keep their corner between funnel runs, also when pushed beside their
    // corridors: every corner is found again once it is 30 frames old (a floor of one in
    // 31 walkers a frame), and few more often (211 a frame when walkers beside their
    // corridor found theirs every frame).
    let funnel_runs = report["funnel_runs_per_frame"].as_f64().unwrap();
    assert!(
        (3000.0 / 31.0..3000.0 / 20.0).contains(&funnel_runs),
        "{funnel_runs} funnel runs a frame"
    );
}

#[test]
fn the_state_hash_is_the_same_for_the_same_run_at_any_thread_count() {
    let hash = |extra: &[&str]| {
        let mut args = vec!["crowd", "--agents", "80", "--json"];
        if !extra.contains(&"--frames") {
            args.extend_from_slice(&["--frames", "90"]);
        }
        args.extend_from_slice(extra);
        let report = json_of(&args);
        report["state_hash"].as_str().unwrap().to_owned()
    };
    let one = hash(&["--threads", "1"]);
    assert_eq!(one.len(), 16, "{one}");
    assert_eq!(one, hash(&["--threads", "2"]));
    assert_eq!(one, hash(&["--threads", "1"]));
    assert_ne!(one, hash(&["--threads", "1", "--seed", "2"]));
    assert_ne!(one, hash(&["--threads", "1", "--frames", "91"]));
}

#[test]
fn the_copy_compiled_for_the_build_target_and_the_one_the_cpu_allows_step_the_same() {
    // The avoid pass runs an x86-64-v3 copy where the CPU has AVX2 and FMA; both copies
    // must give the same bits (on a CPU without those features both runs take the same
    // copy, and the test shows only that the flag is accepted).
    let hash = |extra: &[&str]| {
        let mut args = vec!["crowd", "--agents", "2000", "--frames", "120", "--json"];
        args.extend_from_slice(extra);
        let report = json_of(&args);
        assert!(
            report["pass_ms"]["avoid"].as_f64().unwrap() > 0.0,
            "{report}"
        );
        report["state_hash"].as_str().unwrap().to_owned()
    };
    assert_eq!(hash(&[]), hash(&["--baseline-cpu"]));
}

/// The state hash after a whole run of `frames` with `flags`, and after the same run saved
/// at `save_at` and resumed for the rest, at `threads`.
fn whole_and_resumed(
    flags: &[&str],
    frames: usize,
    save_at: usize,
    threads: &str,
) -> (String, String) {
    let state = std::env::temp_dir().join(format!(
        "waymark_resume_{}_{threads}_{}.state",
        std::process::id(),
        flags.len()
    ));
    let state = state.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["crowd"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--json", "--skip-quality", "--threads", threads]);
        args.extend_from_slice(extra);
        let report = json_of(&args);
        // Run on the threads asked for, and says so.
        assert_eq!(report["threads"].to_string(), threads, "{report}");
        report["state_hash"].as_str().unwrap().to_owned()
    };
    let (frames_text, save_text, rest_text) = (
        frames.to_string(),
        save_at.to_string(),
        (frames - save_at).to_string(),
    );
    let whole = run(&[
        "--frames",
        &frames_text,
        "--save-at",
        &save_text,
        "--state-out",
        state,
    ]);
    let resumed = run(&["--frames", &rest_text, "--resume", state]);
    // Resumed with other flags: refused, naming what differs.
    let mut other = vec!["crowd"];
    other.extend_from_slice(flags);
    other.extend_from_slice(&["--frames", "1", "--node-budget", "7", "--resume", state]);
    let refused = waymark(&other);
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("other crowd settings"), "{message}");
    // Or with another step length: the saved crowd would go on at another pace.
    let mut other = vec!["crowd"];
    other.extend_from_slice(flags);
    other.extend_from_slice(&["--frames", "1", "--dt", "0.05", "--resume", state]);
    let refused = waymark(&other);
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("step length"), "{message}");
    std::fs::remove_file(state).unwrap();
    (whole, resumed)
}

#[test]
fn a_run_saved_halfway_and_resumed_ends_in_the_same_state_on_the_dungeon() {
    let dungeon = asset("dungeon.obj");
    let agents = asset("dungeon_crowd_agents.csv");
    let flags = [
        dungeon.as_str(),
        "--preset",
        "recast",
        "--agents-csv",
        &agents,
        "--agents",
        "1000",
    ];
    for threads in ["1", "2"] {
        let (whole, resumed) = whole_and_resumed(&flags, 300, 150, threads);
        assert_eq!(resumed, whole, "{threads} threads");
    }
}

#[test]
fn a_run_resumed_on_the_same_level_baked_with_other_settings_is_refused() {
    // Same file, same agents, one tile either way: only the baked content differs, and the
    // saved agents would go on over polygons that are not the ones they were saved on.
    let dungeon = asset("dungeon.obj");
    let agents = asset("dungeon_crowd_agents.csv");
    let state = std::env::temp_dir().join(format!("waymark_rebake_{}.state", std::process::id()));
    let state = state.to_str().unwrap();
    let common = [
        "crowd",
        dungeon.as_str(),
        "--preset",
        "recast",
        "--agents-csv",
        &agents,
        "--agents",
        "100",
        "--skip-quality",
        "--json",
    ];
    let mut saving = common.to_vec();
    saving.extend_from_slice(&["--frames", "20", "--save-at", "10", "--state-out", state]);
    assert!(waymark(&saving).status.success());
    let mut resuming = common.to_vec();
    resuming.extend_from_slice(&["--frames", "10", "--resume", state, "--cell-size", "0.25"]);
    let refused = waymark(&resuming);
    assert_eq!(refused.status.code(), Some(1));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("other crowd settings"), "{message}");
    let mut resuming = common.to_vec();
    resuming.extend_from_slice(&["--frames", "10", "--resume", state]);
    assert!(waymark(&resuming).status.success());
    std::fs::remove_file(state).unwrap();
}

#[test]
fn a_run_saved_halfway_and_resumed_ends_in_the_same_state_on_the_city() {
    // 2,000 agents here to keep the test quick; docs/benchmarks.md has the 10,000.
    let flags = ["city", "--agents", "2000"];
    let (whole, resumed) = whole_and_resumed(&flags, 200, 80, "2");
    assert_eq!(resumed, whole);
}

#[test]
fn a_city_run_saved_with_belts_resumed_without_them_is_refused() {
    // The belt share shapes the level (which floors move), not the crowd: a resume without
    // it would continue the saved agents on still floors.
    let state = std::env::temp_dir().join(format!("waymark_belts_{}.state", std::process::id()));
    let state = state.to_str().unwrap();
    let common = [
        "crowd",
        "city",
        "--agents",
        "200",
        "--skip-quality",
        "--json",
    ];
    let mut saving = common.to_vec();
    saving.extend_from_slice(&["--belt-share", "0.2", "--frames", "20", "--save-at", "10"]);
    saving.extend_from_slice(&["--state-out", state]);
    assert!(waymark(&saving).status.success());
    for belts in [None, Some("0.1")] {
        let mut resuming = common.to_vec();
        resuming.extend_from_slice(&["--frames", "10", "--resume", state]);
        if let Some(share) = belts {
            resuming.extend_from_slice(&["--belt-share", share]);
        }
        let refused = waymark(&resuming);
        assert_eq!(refused.status.code(), Some(1), "belt share {belts:?}");
        let message = String::from_utf8_lossy(&refused.stderr);
        assert!(message.contains("other crowd settings"), "{message}");
    }
    let mut resuming = common.to_vec();
    resuming.extend_from_slice(&["--belt-share", "0.2", "--frames", "10", "--resume", state]);
    assert!(waymark(&resuming).status.success());
    std::fs::remove_file(state).unwrap();
}

#[test]
fn a_save_frame_outside_the_run_and_a_state_file_that_is_not_one_are_refused() {
    let output = waymark(&[
        "crowd",
        "--frames",
        "10",
        "--save-at",
        "11",
        "--state-out",
        "/tmp/x",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("--save-at 11 is not a frame of this run (1 to 10)"),
        "{message}"
    );
    let output = waymark(&["crowd", "--save-at", "5"]);
    assert_eq!(output.status.code(), Some(2), "--save-at needs --state-out");
    let not_a_state =
        std::env::temp_dir().join(format!("waymark_not_a_state_{}", std::process::id()));
    std::fs::write(&not_a_state, b"hello").unwrap();
    let output = waymark(&[
        "crowd",
        "--frames",
        "1",
        "--resume",
        not_a_state.to_str().unwrap(),
    ]);
    std::fs::remove_file(&not_a_state).unwrap();
    assert!(!output.status.success());
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("not a saved run"), "{message}");
}
