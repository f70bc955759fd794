//! `waymark target`: the spec's seat example (tests/fixtures/target_seat.json) gives the
//! spec's numbers through the CLI (t5, t6, t7, t8, t10); variants give the t9 and t11
//! failures; bad scenarios are one error line naming the field.

#![cfg(feature = "cli")]

mod common;

use common::waymark;

use std::path::PathBuf;

use serde_json::Value;

fn fixture() -> String {
    format!(
        "{}/tests/fixtures/target_seat.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn number(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

fn close(value: &Value, expected: f64, tolerance: f64) -> bool {
    (number(value) - expected).abs() <= tolerance
}

fn run_json(path: &str) -> Value {
    let output = waymark(&["target", path, "--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The fixture with one edit, written to a temporary file.
fn variant(name: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut scenario: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    edit(&mut scenario);
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, scenario.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn the_seat_example_gives_the_specs_numbers() {
    let svg = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("seat.svg");
    let output = waymark(&[
        "target",
        &fixture(),
        "--json",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["verdict"], "success");
    // t5: two fragments, non-empty for 0.65 <= x < 1/sqrt(1.36).
    let fragments = report["fragments"].as_array().unwrap();
    assert_eq!(fragments.len(), 2);
    for fragment in fragments {
        assert!(close(&fragment["x_extent"][0], 0.65, 1e-6));
        assert!(close(&fragment["x_extent"][1], 1.0 / 1.36f64.sqrt(), 2e-5));
        let bounds: Vec<&str> = fragment["bounds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_str().unwrap())
            .collect();
        assert!(bounds.contains(&"interaction distance max"), "{bounds:?}");
    }
    // t6: q = (0.75, 0.525), distance 0.9155, dot 0.8192, ray crossing x = 0.2 at z = 0.14.
    let chosen = &report["chosen"];
    assert_eq!(chosen["fragment"], 0);
    assert!(close(&chosen["foot"][0], 0.75, 1e-6) && close(&chosen["foot"][2], 0.525, 1e-6));
    let checks = &chosen["checks"];
    assert!(close(&checks["distance_m"], 0.9155, 1e-4));
    assert!(close(&checks["facing_dot"], 0.8192, 1e-4));
    assert!(close(&checks["facing_limit"], 0.7660, 1e-4));
    let crossing = checks["sight"]["crossings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["face_axis"] == 0)
        .unwrap();
    assert!(close(&crossing["point"][2], 0.14, 1e-5) && crossing["blocked"] == false);
    // t7: ceiling 0.4 above the capsule; the board beyond the radius.
    let body = checks["body"].as_array().unwrap();
    let clearance =
        |name: &str| number(&body.iter().find(|c| c["shape"] == name).unwrap()["clearance_m"]);
    assert!((clearance("ceiling") - 0.4).abs() < 1e-5);
    assert!(clearance("board") > 0.0 && clearance("floor").abs() < 1e-6);
    // t8: extension 0.90732, board 0.02838 from the centre line, clear.
    let probe = &checks["probe"];
    assert!(close(&probe["extension_m"], 0.90732, 1e-5));
    let board = probe["obstacles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["shape"] == "board")
        .unwrap();
    assert!(close(&board["distance_m"], 0.02838, 1e-5));
    assert_eq!(probe["passed"], true);
    // t10: the start reaches q in a straight segment on the mesh.
    assert_eq!(report["start"]["kind"], "on_mesh");
    assert_eq!(report["start"]["straight_to_pose"], true);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.starts_with("<svg") && picture.matches("<polygon").count() >= 3);
}

#[test]
fn a_bigger_probe_and_a_wider_board_fail_differently() {
    // t9: a 0.04 m probe fails its sweep at q (0.01472 from the board corner).
    let path = variant("seat_probe_004.json", |s| {
        s["target"]["interaction"]["probe"]["radius_m"] = 0.04.into();
    });
    let report = run_json(&path);
    let first = &report["attempts"][0];
    assert_eq!(first["failure"], "probe sweep");
    assert!(close(&first["foot"][2], 0.525, 1e-6));
    // t11: a 0.18 m half-width board leaves no legal region at all.
    let path = variant("seat_board_018.json", |s| {
        s["boxes"][0]["min"][2] = (-0.18).into();
        s["boxes"][0]["max"][2] = 0.18.into();
    });
    let report = run_json(&path);
    assert_eq!(report["verdict"], "no_legal_region");
    assert!(report["fragments"].as_array().unwrap().is_empty());
    // A region whose samples all fail is "candidates exhausted", reported apart.
    let path = variant("seat_short_reach.json", |s| {
        s["target"]["interaction"]["probe"]["reach_m"] = 0.5.into();
        s["target"]["candidates_max"] = 8.into();
    });
    let report = run_json(&path);
    assert_eq!(report["verdict"], "candidates_exhausted");
    assert_eq!(report["attempts"].as_array().unwrap().len(), 8);
}

#[test]
fn bad_scenarios_are_one_line_naming_the_problem() {
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: [(&str, Edit, &str); 4] = [
        (
            "bad_radius.json",
            Box::new(|s| s["body"]["radius_m"] = (-0.4).into()),
            "body.radius_m",
        ),
        (
            "bad_facing.json",
            Box::new(|s| s["target"]["facing"]["forward"] = serde_json::json!([0.0, 0.0])),
            "facing.forward",
        ),
        (
            "bad_region.json",
            Box::new(|s| {
                s["target"]["stand"]["region"]["polygons"] =
                    serde_json::json!([[[0.0, 0.0], [2.0, 1.0], [0.0, 2.0], [0.5, 1.0]]])
            }),
            "not convex",
        ),
        (
            "bad_key.json",
            Box::new(|s| s["body"]["radius"] = 0.4.into()),
            "unknown field `radius`",
        ),
    ];
    for (name, edit, expected) in cases {
        let path = variant(name, edit);
        let output = waymark(&["target", &path, "--json"]);
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{name}: {stderr}");
    }
}
