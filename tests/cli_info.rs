//! `waymark info`: real levels give their real counts; bad files give one line naming the
//! problem, a non-zero exit, and never a panic.

#![cfg(feature = "cli")]

mod common;

use common::waymark;
use std::process::Output;

use std::path::PathBuf;

/// Writes `text` to a file in the test scratch folder and returns its path.
fn scratch_file(name: &str, text: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text).expect("scratch folder is writable");
    path
}

fn level(name: &str) -> String {
    format!("{}/assets/levels/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Asserts a failed run: exit status 1, nothing on stdout, exactly one stderr line that
/// starts with `error:` and contains every `expected` fragment, and no panic.
fn assert_one_line_error(output: &Output, expected: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert!(output.stdout.is_empty());
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    for fragment in expected {
        assert!(
            lines[0].contains(fragment),
            "'{fragment}' missing from: {stderr}"
        );
    }
}

#[test]
fn malformed_obj_names_the_line() {
    let path = scratch_file("malformed.obj", "v 0 0 0\nv 1 0\nv 0 0 1\nf 1 2 3\n");
    let output = waymark(&["info", path.to_str().unwrap()]);
    assert_one_line_error(
        &output,
        &[
            "malformed OBJ",
            "malformed.obj",
            "position parse error",
            "line 2",
        ],
    );
}

#[test]
fn face_past_the_last_vertex_names_the_line() {
    let path = scratch_file(
        "bad_face.obj",
        "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\nf 1 2 9\n",
    );
    let output = waymark(&["info", path.to_str().unwrap()]);
    assert_one_line_error(&output, &["malformed OBJ", "line 5"]);
}

#[test]
fn missing_file_names_the_path() {
    let output = waymark(&["info", "/no/such/level.obj"]);
    assert_one_line_error(
        &output,
        &["cannot read '/no/such/level.obj'", "No such file"],
    );
}

#[test]
fn nan_vertex_names_the_group_and_vertex() {
    let path = scratch_file("nan.obj", "o ledge\nv 0 0 0\nv nan 0 1\nv 1 0 0\nf 1 2 3\n");
    let output = waymark(&["info", path.to_str().unwrap()]);
    assert_one_line_error(&output, &["ledge", "vertex 1", "not finite", "NaN"]);
}

#[test]
fn unknown_area_tag_names_the_group() {
    let path = scratch_file(
        "lava.obj",
        "g pit|area:lava\nv 0 0 0\nv 0 0 1\nv 1 0 0\nf 1 2 3\n",
    );
    let output = waymark(&["info", path.to_str().unwrap()]);
    assert_one_line_error(&output, &["pit|area:lava", "unknown area 'lava'"]);
}

#[test]
fn empty_obj_is_an_error_not_an_empty_report() {
    let path = scratch_file("empty.obj", "# nothing here\n");
    let output = waymark(&["info", path.to_str().unwrap()]);
    assert_one_line_error(&output, &["no triangles"]);
}

#[test]
fn unknown_level_kind_is_refused() {
    let output = waymark(&["info", "level.fbx"]);
    assert_one_line_error(&output, &["level.fbx", "neither a built-in level"]);
}

#[test]
fn dungeon_info_json_reports_the_real_counts() {
    let output = waymark(&["info", &level("dungeon.obj"), "--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["triangles"], 10_133);
    assert_eq!(report["degenerate_dropped"], 0);
    assert_eq!(report["instances"], 1);
    let size_x = report["size_m"][0].as_f64().unwrap();
    assert!((size_x - 74.32).abs() < 0.01, "{size_x}");
}

#[test]
fn nav_test_groups_become_instances_with_versions() {
    let output = waymark(&["info", &level("nav_test.obj"), "--json"]);
    assert!(output.status.success());
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["triangles"], 1_612);
    assert_eq!(report["instances"], 30);
    let versions = report["source_versions"].as_array().unwrap();
    let mut distinct: Vec<u64> = versions
        .iter()
        .map(|v| v["source_version"].as_u64().unwrap())
        .collect();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        30,
        "each instance has its own source version"
    );
}
