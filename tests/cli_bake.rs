//! `waymark bake`: the JSON report, the `.wmnav` it writes, the SVG, and one-line errors.

#![cfg(feature = "cli")]

mod common;

use common::waymark;
use std::process::Output;

use std::path::PathBuf;

use waymark::mesh::blob::NavMeshFile;

fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn level(name: &str) -> String {
    format!("{}/assets/levels/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn json(output: &Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON object")
}

#[test]
fn recast_preset_on_dungeon_reports_every_field_and_writes_a_loadable_file() {
    let out = scratch("dungeon.wmnav");
    let svg = scratch("dungeon.svg");
    let report = json(&waymark(&[
        "bake",
        &level("dungeon.obj"),
        "--preset",
        "recast",
        "--json",
        "--out",
        out.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]));
    assert_eq!(report["triangles"], 10_133);
    assert_eq!(report["tiles"], 1);
    let polygons = report["polygons"].as_u64().unwrap();
    assert!(
        (83..=153).contains(&polygons),
        "{polygons} polygons (Recast: 118)"
    );
    let area = report["walkable_area_m2"].as_f64().unwrap();
    assert!((area / 1585.3 - 1.0).abs() < 0.03, "{area} m²");
    for key in [
        "vertices",
        "detail_triangles",
        "bake_ms",
        "peak_rss_mib",
        "file_bytes",
    ] {
        assert!(
            report[key].as_f64().is_some_and(|v| v > 0.0),
            "{key}: {}",
            report[key]
        );
    }
    for stage in [
        "rasterize",
        "filter",
        "compact",
        "erode",
        "areas",
        "distance_field",
        "regions",
        "contours",
        "polygon_mesh",
        "detail",
    ] {
        assert!(
            report["stage_ms"][stage].as_f64().is_some(),
            "stage {stage}"
        );
    }
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes.len() as u64, report["file_bytes"].as_u64().unwrap());
    let file = NavMeshFile::from_bytes(&bytes).unwrap();
    assert_eq!(
        file.tiles
            .iter()
            .map(|t| t.polygons.len() as u64)
            .sum::<u64>(),
        polygons
    );
    assert_eq!(file.params.agent_radius_m, 0.6);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.starts_with("<svg")
            && picture.contains("<polygon")
            && picture.contains(&format!("{polygons} polygons"))
    );
}

#[test]
fn explicit_flags_override_the_preset() {
    let report = json(&waymark(&[
        "bake",
        "--preset",
        "guard",
        "--tile-size",
        "32",
        "--agent-radius",
        "0.3",
        "--json",
    ]));
    assert!(report["tiles"].as_u64().unwrap() > 1);
    let guard = json(&waymark(&["bake", "--preset", "guard", "--json"]));
    // A thinner agent keeps more of the proving ground walkable.
    assert!(
        report["walkable_area_m2"].as_f64().unwrap() > guard["walkable_area_m2"].as_f64().unwrap()
    );
}

#[test]
fn bad_values_name_the_field() {
    let output = waymark(&["bake", "--cell-size", "0", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cell_size_m = 0") && !stderr.contains("panicked"),
        "{stderr}"
    );
    let output = waymark(&["bake", "--agent-radius", "nan"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("agent_radius_m = NaN"));
    let output = waymark(&[
        "bake",
        "--cell-size",
        "0.01",
        "--cell-height",
        "0.01",
        "--agent-height",
        "2",
        &level("nav_test.obj"),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("over the limit"), "{stderr}");
    let output = waymark(&["bake", "--threads", "0"]);
    assert_eq!(output.status.code(), Some(2), "a usage error");
}

#[test]
fn fully_unwalkable_level_warns() {
    let path = scratch("steep.obj");
    std::fs::write(&path, "v 0 0 0\nv 0 0 4\nv 2 3.5 4\nv 2 3.5 0\nf 1 2 3 4\n").unwrap();
    let report = json(&waymark(&["bake", path.to_str().unwrap(), "--json"]));
    assert_eq!(report["polygons"], 0);
    assert!(
        report["warnings"][0]
            .as_str()
            .unwrap()
            .contains("no walkable surface")
    );
}

#[test]
fn farmed_parts_baked_by_separate_processes_merge_to_the_whole_file() {
    let dungeon = level("dungeon.obj");
    let bake = |extra: &[&str]| {
        let mut args = vec![
            "bake",
            &dungeon,
            "--preset",
            "recast",
            "--tile-size",
            "48",
            "--json",
        ];
        args.extend_from_slice(extra);
        waymark(&args)
    };
    let whole_path = scratch("farmed_whole.wmnav");
    let whole = json(&bake(&["--out", whole_path.to_str().unwrap()]));
    assert_eq!(whole["tile_grid"], serde_json::json!([6, 7]));
    assert!(whole.get("tile_rectangle").is_none());
    // Three bands of rows, baked as a job array would: one process each.
    let mut parts = Vec::new();
    for (index, rows) in ["0..2", "2..5", "5..7"].iter().enumerate() {
        let path = scratch(&format!("farmed_part_{index}.wmnav"));
        let rectangle = format!("0..6,{rows}");
        let report = json(&bake(&[
            "--tiles",
            &rectangle,
            "--out",
            path.to_str().unwrap(),
        ]));
        assert_eq!(report["tile_grid"], whole["tile_grid"]);
        parts.push(path.to_str().unwrap().to_owned());
    }
    let merged_path = scratch("farmed_merged.wmnav");
    let mut args = vec!["merge"];
    args.extend(parts.iter().rev().map(String::as_str));
    args.extend(["--out", merged_path.to_str().unwrap(), "--json"]);
    let merged = json(&waymark(&args));
    assert_eq!(merged["tiles"], whole["tiles"]);
    assert_eq!(merged["polygons"], whole["polygons"]);
    assert_eq!(
        std::fs::read(&merged_path).unwrap(),
        std::fs::read(&whole_path).unwrap()
    );

    // Refusals name the part or the tile.
    let output = waymark(&[
        "merge",
        &parts[0],
        &parts[2],
        "--out",
        merged_path.to_str().unwrap(),
    ]);
    let error = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        error.contains("no part holds tile (0, 2) of the 6x7 tile grid"),
        "{error}"
    );
    let output = waymark(&[
        "merge",
        &parts[0],
        &whole_path.to_string_lossy(),
        "--out",
        merged_path.to_str().unwrap(),
    ]);
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("farmed_whole.wmnav") && error.contains("not a farmed-bake part"),
        "{error}"
    );
    let output = bake(&["--tiles", "0..7,0..1"]);
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("6x7 tile grid"), "{error}");
    let output = waymark(&["bake", &dungeon, "--tiles", "2..1,0..1"]);
    assert_eq!(output.status.code(), Some(2));
    // A part is no level to run a crowd on.
    let output = waymark(&["crowd", &parts[0], "--agents", "5", "--frames", "5"]);
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("a part of a farmed bake"), "{error}");
}
