//! `waymark sim`: the spec's h1, h2 and h5 cases as scenario files in
//! `tests/fixtures/`, run through the tool, checked from the trace and the summary; bad
//! scenarios are one error line naming the value.

#![cfg(feature = "cli")]

mod common;

use std::path::PathBuf;

use common::waymark;
use serde_json::{Value, json};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Runs `waymark sim SCENARIO --trace ... --json`; returns the summary and the trace's
/// lines.
fn sim(scenario: &str, trace_name: &str) -> (Value, Vec<Value>) {
    let trace = scratch(trace_name);
    let output = waymark(&[
        "sim",
        scenario,
        "--trace",
        trace.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = serde_json::from_slice(&output.stdout).unwrap();
    let lines = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (summary, lines)
}

fn id(logical: u64, attempt: u32, epoch: u32) -> Value {
    json!({ "logical": logical, "attempt": attempt, "epoch": epoch })
}

/// Every (tick, record) of the trace's `key` list (commands, decisions, events, agents).
fn records<'a>(trace: &'a [Value], key: &str) -> Vec<(u64, &'a Value)> {
    trace
        .iter()
        .flat_map(|line| {
            let tick = line["tick"].as_u64().unwrap();
            line[key].as_array().unwrap().iter().map(move |r| (tick, r))
        })
        .collect()
}

#[test]
fn h1_closing_door_d_expires_q7_for_good_and_q8_a_new_identity_goes_round() {
    let (summary, trace) = sim(&fixture("sim_h1_door.json"), "h1.jsonl");
    assert_eq!(trace.len(), 300, "a line per tick");
    // The door is open at version 8 when the guard's query is made, closed at version 9.
    let doors: Vec<(u64, u64)> = records(&trace, "commands")
        .into_iter()
        .filter(|(_, c)| c["command"] == "door")
        .map(|(tick, c)| (tick, c["version"].as_u64().unwrap()))
        .collect();
    assert_eq!(doors.last(), Some(&(2, 9)));
    assert_eq!(doors[doors.len() - 2], (0, 8));
    // Q7 (the order's first query) had read the door when it closed: the search expires
    // at the change, naming the link; Q8 is a new logical request, adopted; Q7 is never
    // adopted.
    let decisions = records(&trace, "decisions");
    let (q7, q8) = (id(0, 0, 0), id(1, 0, 0));
    let q7_decisions: Vec<&Value> = decisions
        .iter()
        .filter(|(_, d)| d["query"] == q7)
        .map(|(_, d)| *d)
        .collect();
    assert_eq!(q7_decisions.len(), 1, "{q7_decisions:?}");
    assert_eq!(q7_decisions[0]["decision"], "expired");
    assert_eq!(q7_decisions[0]["changed"], "LinkChanged(LinkId(0))");
    assert!(
        decisions
            .iter()
            .any(|(_, d)| d["query"] == q8 && d["decision"] == "adopted")
    );
    // The order keeps its identity; the agent goes round the back (z above 8) and arrives.
    assert!(records(&trace, "agents").iter().any(|(_, a)| {
        a["name"] == "guard" && a["position"][2].as_f64().unwrap() > 8.0 && a["order"] == q7
    }));
    assert_eq!(
        summary["orders"],
        json!([{ "tick": summary["orders"][0]["tick"], "agent": "guard", "order": q7, "outcome": "success" }])
    );
    let position = &summary["agents"][0]["position"];
    assert!(
        (position[0].as_f64().unwrap() - 19.0).abs() < 0.3,
        "{position}"
    );
}

#[test]
fn h2_half_a_second_of_requests_without_progress_is_blocked_and_never_a_success() {
    let (summary, trace) = sim(&fixture("sim_h2_blocked.json"), "h2.jsonl");
    let blocked: Vec<(u64, &Value)> = records(&trace, "events")
        .into_iter()
        .filter(|(_, e)| e["agent"] == "walker")
        .collect();
    assert!(!blocked.is_empty());
    for (_, event) in &blocked {
        assert_eq!(event["event"], "blocked");
        assert_eq!(event["by"], "crowd");
        assert_eq!(event["order"], id(0, 0, 0));
    }
    // Reported once per stall, never before half a second of requests (15 ticks of 1/30 s).
    assert!(blocked[0].0 >= 15, "first blocked at tick {}", blocked[0].0);
    // No success, no other outcome: under the default policy the order waits.
    assert_eq!(summary["orders"], json!([]));
    let walker = &summary["agents"][1];
    assert_eq!(walker["name"], "walker");
    assert_eq!(walker["order"], id(0, 0, 0));
    assert!(walker["position"][0].as_f64().unwrap() < 6.0);
}

#[test]
fn h4_a_guard_pushed_3_cm_off_its_hold_is_invalidated_at_once_and_stands_again_9_ticks_later() {
    let (summary, trace) = sim(&fixture("sim_h4_hold.json"), "h4.jsonl");
    let facts: Vec<(u64, Value)> = records(&trace, "events")
        .into_iter()
        .filter(|(_, e)| e["event"] == "stand_fact")
        .map(|(tick, e)| (tick, e["change"].clone()))
        .collect();
    assert_eq!(
        facts,
        [
            (0, json!({ "established": 1 })),
            (10, json!({ "invalidated": { "deadline_frame": 40 } })),
            (19, json!({ "established": 2 })),
        ]
    );
    // The hold owns the mover throughout and never ends; the trace carries its phase and
    // fact generation at every change.
    let mut phases = Vec::new();
    for (tick, agent) in records(&trace, "agents") {
        assert_eq!(agent["owner"]["action"], "hold");
        assert_eq!(agent["status"], "Holding");
        phases.push((
            tick,
            agent["hold"]["phase"].clone(),
            agent["hold"]["fact"].clone(),
        ));
    }
    assert_eq!(phases[0], (0, json!("standing"), json!(1)));
    assert!(phases.contains(&(
        10,
        json!({ "recovering": { "deadline_frame": 40 } }),
        Value::Null
    )));
    let last = phases.last().unwrap();
    assert_eq!((&last.1, &last.2), (&json!("standing"), &json!(2)));
    assert_eq!(summary["orders"], json!([]));
    let x = summary["agents"][0]["position"][0].as_f64().unwrap();
    assert!((x - 5.0).abs() < 0.005, "{x}");
}

#[test]
fn every_agent_parameter_reaches_the_crowd_an_acceleration_limit_slows_the_h4_recovery() {
    // h4's guard with 0.2 m/s² of acceleration (DetourCrowd's reference has 8): the
    // correction's velocity changes by at most 0.02 m/s a tick of 0.1 s, so the same push
    // takes longer to recover than the 9 ticks of h4, and the trace shows the limit held.
    let scenario = json!({
        "level": {"walkable": [{"corners": [[0, 0, 0], [10, 0, 0], [10, 0, 2], [0, 0, 2]]}]},
        "dt_s": 0.1,
        "ticks": 60,
        "agents": [{
            "name": "guard", "position": [5, 0, 1], "radius_m": 0.35, "height_m": 1.4,
            "max_speed_mps": 2.0, "preferred_speed_mps": 1.5, "max_acceleration_mps2": 0.2,
            "time_horizon_s": 1.5, "wall_time_horizon_s": 0.5
        }],
        "commands": [
            {"tick": 0, "command": "hold", "agent": "guard", "target": [5, 0, 1]},
            {"tick": 10, "command": "push", "agent": "guard", "by": [0.03, 0, 0]}
        ]
    });
    let path = scratch("slow_guard.json");
    std::fs::write(&path, scenario.to_string()).unwrap();
    let (summary, trace) = sim(path.to_str().unwrap(), "slow_guard.jsonl");
    let established: Vec<u64> = records(&trace, "events")
        .into_iter()
        .filter(|(_, e)| e["event"] == "stand_fact" && e["change"].get("established").is_some())
        .map(|(tick, _)| tick)
        .collect();
    assert_eq!(established.len(), 2, "{established:?}");
    assert!(established[1] > 19, "recovered at tick {}", established[1]);
    let mut previous: Option<(u64, f64)> = None;
    for (tick, agent) in records(&trace, "agents") {
        let velocity = agent["velocity"][0].as_f64().unwrap();
        if let Some((before_tick, before)) = previous
            && tick == before_tick + 1
        {
            // 0.02 m/s a tick, and the trace's millimetre per second of rounding.
            assert!(
                (velocity - before).abs() <= 0.021,
                "tick {tick}: {before} -> {velocity}"
            );
        }
        previous = Some((tick, velocity));
    }
    assert_eq!(summary["orders"], json!([]));
    // Out-of-range parameters are refused by value, naming the field.
    let bad = json!({
        "level": {"walkable": [{"corners": [[0, 0, 0], [10, 0, 0], [10, 0, 2], [0, 0, 2]]}]},
        "ticks": 1,
        "agents": [{"name": "guard", "position": [5, 0, 1], "max_acceleration_mps2": -1.0}],
        "commands": []
    });
    let bad_path = scratch("bad_acceleration.json");
    std::fs::write(&bad_path, bad.to_string()).unwrap();
    let output = waymark(&["sim", bad_path.to_str().unwrap()]);
    assert!(!output.status.success());
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(
        text.contains("max_acceleration_mps2") && text.contains("-1"),
        "{text}"
    );
}

#[test]
fn h5_interrupted_at_query_return_move_admission_and_cancel_receipt_runs_as_uninterrupted() {
    let scenario = fixture("sim_h5_interruptions.json");
    let (summary, trace) = sim(&scenario, "h5.jsonl");
    assert_eq!(summary["refused"], json!([]));
    let agents = records(&trace, "agents");
    let state = |tick: u64, name: &str| -> Value {
        agents
            .iter()
            .rev()
            .find(|(at, a)| *at <= tick && a["name"] == name)
            .map(|(_, a)| (*a).clone())
            .unwrap()
    };
    // Before the query returns (tick 2): the seeker's query, still waiting, resumes as the
    // next attempt of the same logical request in the new epoch; the order is unchanged.
    let seeker = state(2, "seeker");
    assert_eq!(seeker["status"], "WaitingForPath");
    assert_eq!(seeker["order"], id(1, 0, 0));
    assert_eq!(seeker["query"], id(1, 1, 1));
    let decisions = records(&trace, "decisions");
    assert!(
        !decisions
            .iter()
            .any(|(_, d)| d["agent"] == "seeker" && d["query"] == id(1, 0, 0))
    );
    // At move admission (tick 60): the order keeps its identity and its mover.
    let admitted = state(60, "admitted");
    let ordered = records(&trace, "commands")
        .into_iter()
        .find(|(_, c)| c["command"] == "move" && c["agent"] == "admitted")
        .unwrap()
        .1["order"]
        .clone();
    assert_eq!(admitted["order"], ordered);
    assert_eq!(admitted["owner"]["action"], "move");
    assert_eq!(admitted["owner"]["id"], ordered);
    // Before the cancel receipt (tick 41): still braking, the record kept; the receipt
    // carries the record the cancel returned.
    let record = records(&trace, "commands")
        .into_iter()
        .find(|(_, c)| c["command"] == "cancel")
        .unwrap()
        .1["record"]
        .clone();
    let stopper = state(41, "stopper");
    assert_eq!(stopper["status"], "Cancelling");
    assert_eq!(stopper["owner"]["action"], "braking");
    assert_eq!(stopper["owner"]["id"], record);
    let receipt = records(&trace, "events")
        .into_iter()
        .find(|(_, e)| e["event"] == "cancelled")
        .unwrap();
    assert!(receipt.0 > 41);
    assert_eq!(receipt.1["record"], record);

    // The same scenario without the saves and restores ends in the same state, and its
    // orders end the same way at the same ticks (epochs aside).
    let mut plain: Value =
        serde_json::from_str(&std::fs::read_to_string(&scenario).unwrap()).unwrap();
    plain["commands"]
        .as_array_mut()
        .unwrap()
        .retain(|c| c["command"] != "save" && c["command"] != "restore");
    let plain_path = scratch("h5_plain.json");
    std::fs::write(&plain_path, plain.to_string()).unwrap();
    let (uninterrupted, _) = sim(plain_path.to_str().unwrap(), "h5_plain.jsonl");
    assert_eq!(summary["state_hash"], uninterrupted["state_hash"]);
    assert_eq!(summary["epoch"], 3);
    assert_eq!(uninterrupted["epoch"], 0);
    let without_epoch = |orders: &Value| -> Vec<(u64, String, u64, String)> {
        orders
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["tick"].as_u64().unwrap(),
                    o["agent"].as_str().unwrap().to_owned(),
                    o["order"]["logical"].as_u64().unwrap(),
                    o["outcome"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let ended = without_epoch(&summary["orders"]);
    assert_eq!(ended, without_epoch(&uninterrupted["orders"]));
    assert_eq!(ended.len(), 3);
}

#[test]
fn a_restore_without_a_save_and_a_refused_order_are_traced_and_the_run_goes_on() {
    let scenario = scratch("refusals.json");
    std::fs::write(
        &scenario,
        json!({
            "level": { "walkable": [{ "corners": [[0, 0, 0], [10, 0, 0], [10, 0, 2], [0, 0, 2]] }] },
            "ticks": 20,
            "agents": [{ "name": "a", "position": [1, 0, 1] }],
            "commands": [
                { "tick": 0, "command": "restore" },
                { "tick": 0, "command": "move", "agent": "a", "target": [9, 0, 1] },
                { "tick": 10, "command": "cancel", "agent": "a" },
                { "tick": 11, "command": "move", "agent": "a", "target": [5, 0, 1] },
            ]
        })
        .to_string(),
    )
    .unwrap();
    let (summary, _) = sim(scenario.to_str().unwrap(), "refusals.jsonl");
    let refused = summary["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert_eq!(refused[0]["command"], "restore");
    assert_eq!(refused[0]["error"], "no save to restore");
    // A move while the cancel brakes a walking agent: the mover is held until the receipt.
    assert_eq!(refused[1]["command"], "move");
    assert_eq!(refused[1]["tick"], 11);
}

#[test]
fn bad_scenarios_are_one_error_line_naming_the_value() {
    let cases = [
        (
            json!({ "level": { "walkable": [] }, "ticks": 3, "agents": [] }),
            "neither `file` nor `walkable`",
        ),
        (
            json!({
                "level": { "walkable": [{ "corners": [[0, 0, 0], [4, 0, 0], [4, 0, 4]] }] },
                "ticks": 3,
                "agents": [{ "name": "a", "position": [1, 0, 1] }],
                "commands": [{ "tick": 1, "command": "move", "agent": "b", "target": [2, 0, 1] }]
            }),
            "no agent named 'b'",
        ),
        (
            json!({
                "level": { "walkable": [{ "corners": [[0, 0, 0], [4, 0, 0], [4, 0, 4]] }] },
                "ticks": 3,
                "agents": [],
                "commands": [{ "tick": 1, "command": "move", "agent": "a", "targt": [2, 0, 1] }]
            }),
            "unknown field `targt`",
        ),
        (
            json!({
                "level": { "walkable": [{ "corners": [[0, 0, 0], [4, 0, 0], [4, 0, 4]] }] },
                "ticks": 3,
                "agents": [],
                "commands": [{ "tick": 5, "command": "save" }]
            }),
            "command 0 is at tick 5, the run has ticks 0 to 2",
        ),
        (
            json!({
                "level": { "walkable": [{ "corners": [[0, 0, 0], [4, 0, 0], [4, 0, 4]] }] },
                "ticks": 3,
                "crowd": { "blocked_policy": "sulk" },
                "agents": []
            }),
            "blocked_policy \"sulk\"",
        ),
        (
            json!({
                "level": { "walkable": [{ "corners": [[0, 0, 0], [4, 0, 0], [4, 0, 4]] }] },
                "ticks": 3,
                "agents": [{ "name": "a", "position": [1, 0, 1] }, { "name": "a", "position": [2, 0, 1] }]
            }),
            "agent 'a' named twice",
        ),
    ];
    for (index, (scenario, message)) in cases.iter().enumerate() {
        let path = scratch(&format!("bad_sim_{index}.json"));
        std::fs::write(&path, scenario.to_string()).unwrap();
        let output = waymark(&["sim", path.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(1), "case {index}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "case {index}: {stderr}");
        assert!(stderr.contains(message), "case {index}: {stderr}");
    }
}

#[test]
fn t10_a_guard_told_to_interact_walks_to_q_succeeds_there_holds_and_is_released() {
    // (The fixture: interact at tick 0, release at 55, cancel at 60.)
    let (summary, trace) = sim(&fixture("sim_t10_interact.json"), "t10.jsonl");
    // The command returns both identities and the chosen pose: t6's q.
    let given = records(&trace, "commands");
    assert_eq!(given[0].1["command"], "interact");
    assert_eq!(given[0].1["foot"], json!([0.75, 0.0, 0.525]));
    let orders: Vec<(Value, Value)> = summary["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["order"]["logical"].clone(), o["outcome"].clone()))
        .collect();
    assert_eq!(
        orders,
        [(json!(0), json!("success")), (json!(1), json!("cancelled"))]
    );
    // Success comes in the tick the hold's first fact is established, with the checks
    // passing at the guard's actual pose.
    let success_tick = summary["orders"][0]["tick"].as_u64().unwrap();
    let facts: Vec<(u64, Value)> = records(&trace, "events")
        .into_iter()
        .filter(|(_, e)| e["event"] == "stand_fact")
        .map(|(tick, e)| (tick, e["change"].clone()))
        .collect();
    assert_eq!(
        facts,
        [
            (success_tick, json!({ "established": 1 })),
            (55, json!("released"))
        ]
    );
    let states = records(&trace, "agents");
    let at_success = states
        .iter()
        .rev()
        .find(|(tick, _)| *tick <= success_tick)
        .unwrap();
    assert_eq!(at_success.1["interaction"]["phase"], "holding");
    assert_eq!(at_success.1["interaction"]["checks_pass"], true);
    // Released at tick 55 (the fact ends), cancelled at 60: nothing owns the mover, the
    // guard stands at q.
    let last = &summary["agents"][0];
    assert_eq!(last["owner"], Value::Null);
    assert_eq!(last["interaction"], Value::Null);
    let (x, z) = (
        last["position"][0].as_f64().unwrap(),
        last["position"][2].as_f64().unwrap(),
    );
    assert!(
        (x - 0.75).abs() < 0.011 && (z - 0.525).abs() < 0.011,
        "{x} {z}"
    );
}

#[test]
fn h3_on_a_belt_a_hold_walks_against_it_a_push_moves_back_3_mm_and_a_1_m_per_s_cap_cannot_correct()
{
    // The fixture: a belt (support layer 1) at +1 m/s; "able" (relative cap 1.2) and
    // "weak" (cap 1.0) each hold a pose on it; "able" is pushed 3 cm at tick 40.
    let (summary, trace) = sim(&fixture("sim_h3_belt.json"), "h3.jsonl");
    let state_at = |name: &str, wanted: u64| -> Value {
        records(&trace, "agents")
            .into_iter()
            .rfind(|(tick, agent)| *tick <= wanted && agent["name"] == name)
            .unwrap()
            .1
            .clone()
    };
    let x = |state: &Value| state["position"][0].as_f64().unwrap();
    let world_vx = |state: &Value| state["velocity"][0].as_f64().unwrap();
    // Before the push "able" stands on its pose: a fact, at rest in the world while the
    // belt runs under it.
    let before = state_at("able", 39);
    assert_eq!(before["hold"]["phase"], "standing");
    assert!((x(&before) - 5.0).abs() <= 0.005 && world_vx(&before).abs() <= 0.01);
    // h3: pushed 3 cm, the next step of 0.1 s moves it back 3 mm in the world, at a world
    // velocity of -0.06 m/s (relative -1.06, within its cap of 1.2).
    let after = state_at("able", 40);
    let moved = x(&after) - (x(&before) + 0.03);
    assert!((moved - -0.003).abs() <= 0.0011, "moved {moved}");
    assert!(
        (world_vx(&after) - -0.06).abs() <= 0.006,
        "{}",
        world_vx(&after)
    );
    // It recovers with a new fact generation; "weak" could never correct.
    let facts: Vec<(u64, String, Value)> = records(&trace, "events")
        .into_iter()
        .filter(|(_, e)| e["event"] == "stand_fact")
        .map(|(tick, e)| {
            (
                tick,
                e["agent"].as_str().unwrap().to_owned(),
                e["change"].clone(),
            )
        })
        .collect();
    assert!(facts.iter().any(|(tick, agent, change)| *tick > 40
        && agent == "able"
        && *change == json!({ "established": 2 })));
    let orders: Vec<(Value, Value)> = summary["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["agent"].clone(), o["outcome"].clone()))
        .collect();
    assert_eq!(
        orders,
        [(json!("weak"), json!("hold_capability_insufficient"))]
    );
}

#[test]
fn a_passenger_waits_at_the_ferry_ramp_for_its_window_and_a_window_that_cannot_open_is_refused() {
    let (summary, trace) = sim(
        &fixture("sim_connection_window.json"),
        "connection_window.jsonl",
    );
    // The ramp is open from tick 150 for 40 ticks: the passenger, at the ramp by tick 35,
    // starts across at tick 150, with no block and no new path while it waits.
    let events = records(&trace, "events");
    let names: Vec<(u64, &str)> = events
        .iter()
        .map(|(tick, event)| (*tick, event["event"].as_str().unwrap()))
        .collect();
    assert_eq!(names[0], (150, "link_started"), "{names:?}");
    assert!(
        names
            .iter()
            .all(|(_, name)| !["blocked", "no_path", "route_invalidated"].contains(name)),
        "{names:?}"
    );
    let waiting: Vec<f64> = records(&trace, "agents")
        .iter()
        .filter(|(tick, _)| (40..150).contains(tick))
        .map(|(_, agent)| agent["position"][0].as_f64().unwrap())
        .collect();
    assert!(
        waiting.iter().all(|&x| (9.35..=9.6).contains(&x)),
        "{waiting:?}"
    );
    assert_eq!(summary["outcomes"], json!({ "success": 1 }));
    // The second window (open 0 frames) is refused, naming the limit.
    let refused = &summary["refused"][0];
    assert_eq!(refused["command"], "link_window");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("open_frames must be at least 1"),
        "{refused}"
    );
}

#[test]
fn an_obstacle_dropped_on_a_walkers_path_is_walked_round_and_refused_on_a_hand_built_level() {
    let (summary, trace) = sim(&fixture("sim_obstacle.json"), "obstacle.jsonl");
    // Both placements and the removal rebuilt their tiles (the solo bake's one tile).
    let answers: Vec<(u64, &str, u64)> = records(&trace, "commands")
        .into_iter()
        .filter(|(_, record)| record["command"] != "move")
        .map(|(tick, record)| {
            (
                tick,
                record["command"].as_str().unwrap(),
                record["tiles_rebuilt"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        answers,
        vec![
            (10, "obstacle", 1),
            (11, "obstacle", 1),
            (300, "remove_obstacle", 1)
        ]
    );
    // The runner's route read the rebuilt tile: invalidated at the barrel and again at the
    // puddle, then it arrives.
    let invalidated: Vec<u64> = records(&trace, "events")
        .into_iter()
        .filter(|(_, event)| event["event"] == "route_invalidated")
        .map(|(tick, _)| tick)
        .collect();
    assert_eq!(invalidated, vec![10, 11]);
    assert_eq!(summary["outcomes"], json!({ "success": 1 }));
    // Never within the barrel's radius plus the body's (0.6 m), less one voxel (0.3 m).
    let closest = records(&trace, "agents")
        .into_iter()
        .filter(|(tick, _)| (10..300).contains(tick))
        .map(|(_, agent)| {
            let p = &agent["position"];
            let (x, z) = (p[0].as_f64().unwrap(), p[2].as_f64().unwrap());
            ((x - 22.4).powi(2) + (z + 55.0).powi(2)).sqrt()
        })
        .fold(f64::INFINITY, f64::min);
    assert!(
        closest >= 1.0 + 0.6 - 0.3,
        "{closest} m from the barrel's axis"
    );

    // A hand-built level has no tile cache.
    let scenario = scratch("obstacle_hand_built.json");
    std::fs::write(
        &scenario,
        r#"{"level": {"walkable": [{"corners": [[0,0,0],[4,0,0],[4,0,4],[0,0,4]]}]},
            "agents": [], "ticks": 2,
            "commands": [{"tick": 1, "command": "obstacle", "name": "crate",
                          "shape": {"box": {"min": [1,0,1], "max": [2,1,2]}}}]}"#,
    )
    .unwrap();
    let output = waymark(&["sim", scenario.to_str().unwrap()]);
    let error = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{error}");
    assert!(
        error.contains("tick 1: obstacles need a level baked from a file"),
        "{error}"
    );
}
