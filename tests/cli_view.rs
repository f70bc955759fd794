//! `waymark crowd --trace`, `waymark scenario --trace` and `waymark view`: the trace's
//! records decode to the crowd's motion (each step's displacement is its velocity times the
//! step), its events and corridors name agents and polygons that exist, the page carries
//! the level and the trace with nothing to fetch, and bad traces or a level other than the
//! recorded one are refused naming the file. The page in a real browser: `tests/view/run.sh`.

#![cfg(feature = "cli")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::waymark;
use serde_json::Value;

fn temporary(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("waymark_view_{}_{name}", std::process::id()))
}

fn run_ok(args: &[&str]) -> Value {
    let output = waymark(args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or(Value::Null)
}

/// `waymark view [level] --trace trace --out page`.
fn view(level: Option<&str>, trace: &Path, page: &Path) -> Output {
    let mut args: Vec<&str> = level.into_iter().collect();
    args.extend([
        "--trace",
        trace.to_str().unwrap(),
        "--out",
        page.to_str().unwrap(),
    ]);
    waymark(&[&["view"], &args[..]].concat())
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => u32::from(c - b'A'),
        b'a'..=b'z' => u32::from(c - b'a') + 26,
        b'0'..=b'9' => u32::from(c - b'0') + 52,
        b'+' => 62,
        b'/' => 63,
        other => panic!("{other} is not base64"),
    };
    let mut bytes = Vec::new();
    for chunk in text.as_bytes().chunks(4) {
        let data: Vec<u8> = chunk.iter().copied().filter(|&c| c != b'=').collect();
        let bits = data
            .iter()
            .enumerate()
            .fold(0u32, |bits, (i, &c)| bits | value(c) << (18 - 6 * i));
        bytes.extend(&bits.to_be_bytes()[1..data.len()]);
    }
    bytes
}

/// One agent's decoded record: world x, z, velocity x, z, status name.
struct Record {
    x: f64,
    z: f64,
    velocity_x: f64,
    velocity_z: f64,
    status: String,
}

fn records(header: &Value, frame: &Value) -> Vec<Record> {
    let bytes = base64_decode(frame["agents"].as_str().unwrap());
    let step = header["position_step_m"].as_f64().unwrap();
    let origin: Vec<f64> = serde_json::from_value(header["origin"].clone()).unwrap();
    let statuses = header["statuses"].as_array().unwrap();
    bytes
        .chunks(header["record_bytes"].as_u64().unwrap() as usize)
        .map(|record| {
            let u16_at = |at: usize| f64::from(u16::from_le_bytes([record[at], record[at + 1]]));
            let i16_at = |at: usize| f64::from(i16::from_le_bytes([record[at], record[at + 1]]));
            assert_eq!(record[9] & 0x80, 0, "no position clamped");
            Record {
                x: origin[0] + u16_at(0) * step,
                z: origin[2] + u16_at(2) * step,
                velocity_x: i16_at(4) * 0.01,
                velocity_z: i16_at(6) * 0.01,
                status: statuses[usize::from(record[9] & 0x7f)]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            }
        })
        .collect()
}

fn read_trace(path: &PathBuf) -> (Value, Vec<Value>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap());
    let header = lines.next().unwrap();
    (header, lines.collect())
}

#[test]
fn a_crowd_trace_records_the_crowds_motion_events_and_corridors() {
    let trace = temporary("crowd.jsonl");
    // Without avoidance nothing but the walk moves a body (no separation push, and the
    // dungeon has no moving floor), so each step's displacement is its velocity's.
    let level = common::level_path("dungeon.obj");
    let report = run_ok(&[
        "crowd",
        level.to_str().unwrap(),
        "--avoidance",
        "off",
        "--agents",
        "60",
        "--frames",
        "240",
        "--trace",
        trace.to_str().unwrap(),
        "--json",
    ]);
    let (header, frames) = read_trace(&trace);
    assert_eq!(header["format"], "waymark-trace");
    assert_eq!(header["version"], 1);
    assert_eq!(frames.len(), 240);
    assert_eq!(report["trace"]["frames"], 240);
    assert_eq!(
        report["trace"]["bytes"].as_u64().unwrap(),
        std::fs::metadata(&trace).unwrap().len()
    );
    let polygons = header["mesh"]["area"].as_array().unwrap().len();
    assert!(polygons > 10, "{polygons} polygons in the header's mesh");

    // Every agent appears once, in the first frame; the live set then stays whole.
    let added = frames[0]["added"].as_array().unwrap();
    assert_eq!(added.len(), 60);
    assert!(frames[1..].iter().all(|frame| frame.get("added").is_none()));
    assert_eq!(frames[0]["live"].as_array().unwrap().len(), 60);

    // Each step moves a walking agent by its velocity over the step (the velocity recorded
    // is the one the step applied), to the quantisation's few millimetres; a step that
    // slides along a wall moves less.
    let dt = header["dt_s"].as_f64().unwrap();
    let (mut compared, mut close) = (0, 0);
    for pair in frames.windows(2) {
        let (before, after) = (records(&header, &pair[0]), records(&header, &pair[1]));
        assert_eq!(before.len(), 60);
        for (a, b) in before.iter().zip(&after) {
            if a.status == "moving" && b.status == "moving" {
                let error = ((b.x - a.x - b.velocity_x * dt).powi(2)
                    + (b.z - a.z - b.velocity_z * dt).powi(2))
                .sqrt();
                compared += 1;
                close += usize::from(error < 0.01);
            }
        }
    }
    assert!(compared > 1000, "{compared} moving steps");
    assert!(
        close as f64 >= 0.99 * compared as f64,
        "{close} of {compared} steps moved by velocity x dt"
    );

    // Events name traced agents. The run gives an agent its next target when it comes
    // within 0.25 m of one (the comparison rule), which ends the order it walked: one
    // `order_ended (cancelled)` per complete arrival counted.
    let events: Vec<(u64, String)> = frames
        .iter()
        .flat_map(|frame| frame["events"].as_array().cloned().unwrap_or_default())
        .map(|event| {
            let detail = event.get(2).and_then(Value::as_str).unwrap_or("");
            (
                event[0].as_u64().unwrap(),
                format!("{} {detail}", event[1].as_str().unwrap()),
            )
        })
        .collect();
    assert!(events.iter().all(|(agent, _)| *agent < 60));
    let replaced = events
        .iter()
        .filter(|(_, name)| name == "order_ended cancelled")
        .count();
    assert_eq!(report["partial_arrivals"], 0);
    assert!(
        report["arrivals"].as_u64().unwrap() > 20,
        "{}",
        report["arrivals"]
    );
    assert_eq!(replaced as u64, report["arrivals"].as_u64().unwrap());

    // Corridors name the header mesh's polygons.
    let corridors: Vec<Vec<u64>> = frames
        .iter()
        .flat_map(|frame| frame["corridors"].as_array().cloned().unwrap_or_default())
        .map(|entry| serde_json::from_value(entry[1].clone()).unwrap())
        .collect();
    assert!(
        corridors
            .iter()
            .filter(|polygons| polygons.len() > 1)
            .count()
            > 30
    );
    assert!(corridors.iter().flatten().all(|&p| (p as usize) < polygons));
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn the_view_page_carries_level_and_trace_and_fetches_nothing() {
    let trace = temporary("page.jsonl");
    let page = temporary("page.html");
    run_ok(&[
        "crowd",
        "--agents",
        "20",
        "--frames",
        "30",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    let output = view(None, &trace, &page);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    for outside in ["src=", "href=", "http:", "https:", "@import", "fetch("] {
        assert!(
            !html.contains(outside),
            "the page refers outside with {outside}"
        );
    }
    let block = |id: &str| {
        let start = html.find(&format!("id=\"{id}\">")).unwrap() + id.len() + 6;
        let end = start + html[start..].find("</script>").unwrap();
        html[start..end].to_owned()
    };
    let level: Value = serde_json::from_str(&block("level-data")).unwrap();
    let (header, frames) = read_trace(&trace);
    assert_eq!(level["mesh"], header["mesh"]);
    let page_trace = block("trace-data");
    let mut page_lines = page_trace.lines();
    let page_header: Value = serde_json::from_str(page_lines.next().unwrap()).unwrap();
    assert!(
        page_header.get("mesh").is_none(),
        "the mesh is in the page once"
    );
    assert_eq!(page_header["statuses"], header["statuses"]);
    assert_eq!(page_lines.count(), frames.len());

    // The level named on the command line must be the recorded one.
    let output = view(Some("city"), &trace, &page);
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        error.contains("was recorded on mesh") && error.contains("city"),
        "{error}"
    );
    // The same level given by name is accepted.
    let output = view(Some("proving_ground"), &trace, &page);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for path in [&trace, &page] {
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn bad_traces_are_refused_naming_the_file_and_line() {
    let page = temporary("bad.html");
    let cases = [
        ("empty.jsonl", "", "line 1", "empty"),
        (
            "other.jsonl",
            "{\"format\":\"other\",\"version\":1}\n",
            "line 1",
            "format \"other\"",
        ),
        (
            "frame.jsonl",
            "{\"format\":\"waymark-trace\",\"version\":1,\"mesh\":{}}\n{\"frame\":1,\"agents\":\"\"}\nnot json\n",
            "line 3",
            "expected",
        ),
    ];
    for (name, text, line, what) in cases {
        let trace = temporary(name);
        std::fs::write(&trace, text).unwrap();
        let output = view(None, &trace, &page);
        let error = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{name}: {error}");
        assert!(
            error.starts_with("error: ")
                && error.contains(name)
                && error.contains(line)
                && error.contains(what),
            "{name}: {error}"
        );
        let _ = std::fs::remove_file(&trace);
    }
    let output = view(None, Path::new("/no/such/trace.jsonl"), &page);
    assert!(String::from_utf8_lossy(&output.stderr).contains("/no/such/trace.jsonl"));
}

#[test]
fn a_scenario_trace_has_a_frame_per_step_and_part_the_crowd_refuses_one() {
    let trace = temporary("circle.jsonl");
    let report = run_ok(&[
        "scenario",
        "circle",
        "--agents",
        "8",
        "--trace",
        trace.to_str().unwrap(),
        "--json",
    ]);
    let (header, frames) = read_trace(&trace);
    assert_eq!(header["level"], "circle");
    assert_eq!(frames.len() as u64, report["frames"].as_u64().unwrap());
    assert_eq!(report["trace"]["frames"], report["frames"]);
    let last = records(&header, frames.last().unwrap());
    assert_eq!(last.len(), 8);
    assert!(
        last.iter().all(|agent| agent.status == "arrived"),
        "everyone arrives on the circle"
    );
    let output = waymark(&[
        "scenario",
        "part-the-crowd",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--trace"));
    let _ = std::fs::remove_file(&trace);
}
