//! Fuzz targets for the inputs only the command line reads: target scenario JSON
//! (`waymark target`), sim scenario JSON (`waymark sim`) and queries CSV (`waymark path`).
//! They run on the engine of `stress/fuzz_targets.rs` (coverage-guided in the build
//! `stress/fuzz.sh` makes), a few seconds of each in the test suite and the long run as
//! `fuzz_long` (ignored by default; `stress/fuzz.sh` runs it with its counts).
//!
//! Each target runs the subcommand on the mutated text as it would on a file, with the JSON
//! report written to a sink: a refusal is a correct answer, a panic, an execution over a
//! second or over 1 GiB is a finding.

#[path = "../../../stress/fuzz_targets.rs"]
#[allow(dead_code, missing_docs, unused_qualifications)]
mod fuzz_targets;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use fuzz_targets::Target;
use glam::Vec3;
use waymark::mesh::NavMesh;
use waymark::query::{NodePool, QueryFilter, RouteBuffers};

use crate::bake_args::BakeArgs;
use crate::path::{answer_of, parse_queries, route};
use crate::sim::SimCommand;
use crate::target::TargetCommand;

#[global_allocator]
static ALLOCATOR: fuzz_targets::CountingAllocator = fuzz_targets::CountingAllocator;

/// The folder of the JSON fixtures the scenario targets start from.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The fixtures whose names start with `prefix`, as bytes.
fn fixtures_named(prefix: &str) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .map(|entries| {
            entries
                .filter_map(|entry| Some(entry.ok()?.path()))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
        .iter()
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with(prefix))
        })
        .filter_map(|path| std::fs::read(path).ok())
        .collect()
}

/// The work a sim scenario asks for, ticks times agents, past which it is not run: a long
/// scenario takes its seconds as it should (a benchmark's input, not a fuzzer's).
const SIM_WORK_MAX: u64 = 200_000;

fn run_target_json(input: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    let command = TargetCommand::json_report(fixtures().join("fuzz_target.json"));
    let _ = crate::target::run_text(&command, &text, &mut std::io::sink());
    Ok(())
}

fn run_sim_json(input: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
        let ticks = value["ticks"].as_u64().unwrap_or(0);
        let agents = value["agents"].as_array().map_or(0, Vec::len) as u64;
        if ticks.saturating_mul(agents.max(1)) > SIM_WORK_MAX {
            return Ok(());
        }
    }
    let command = SimCommand::json_report(fixtures().join("fuzz_sim.json"));
    let _ = crate::sim::run_text(&command, &text, &mut std::io::sink());
    Ok(())
}

fn run_queries_csv(input: &[u8]) -> Result<(), String> {
    static MESH: OnceLock<NavMesh> = OnceLock::new();
    let text = String::from_utf8_lossy(input);
    let Ok(queries) = parse_queries(&text, Path::new("fuzz.csv")) else {
        return Ok(());
    };
    let mesh = MESH.get_or_init(|| {
        crate::level::load_navmesh(
            Path::new(crate::level::PROVING_GROUND),
            &BakeArgs::default(),
        )
        .expect("the built-in level")
    });
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let mut pool = NodePool::new(2048);
    let mut buffers = RouteBuffers::default();
    for &(start, end) in queries.iter().take(64) {
        let routed = route(&snapshot, &filter, &mut pool, &mut buffers, start, end);
        if let Ok(found) = routed.map(|found| answer_of(found, &mut buffers))
            && !found.length.is_finite()
        {
            return Err(format!(
                "a path of length {} from {start} to {end}",
                found.length
            ));
        }
    }
    Ok(())
}

/// The command line's targets.
fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "target_json",
            text: true,
            run: run_target_json,
            seeds: || fixtures_named("target_"),
        },
        Target {
            name: "sim_json",
            text: true,
            run: run_sim_json,
            seeds: || fixtures_named("sim_"),
        },
        Target {
            name: "queries_csv",
            text: true,
            run: run_queries_csv,
            seeds: || {
                let point = |p: Vec3| format!("{},{},{}", p.x, p.y, p.z);
                let mut text = String::from("sx,sy,sz,ex,ey,ez\n");
                for (start, end) in [
                    (Vec3::new(2.0, 0.0, 2.0), Vec3::new(30.0, 0.0, 20.0)),
                    (Vec3::new(-5.0, 0.0, 3.0), Vec3::new(12.0, 2.0, -4.0)),
                ] {
                    text.push_str(&format!("{},{}\n", point(start), point(end)));
                }
                vec![text.into_bytes(), b"1,0,1,5,0,5,extra\n".to_vec()]
            },
        },
    ]
}

#[test]
fn every_command_line_input_target_survives_its_mutated_corpus() {
    fuzz_targets::assert_each_survives(&targets(), 500, 20_261_203);
}

/// The long run: `WAYMARK_FUZZ_EXECUTIONS` (default 1,000,000) executions of each target
/// named in `WAYMARK_FUZZ_TARGETS` (default all), seed `WAYMARK_FUZZ_SEED` (default 1),
/// one CSV line per target as `stress/fuzz.rs` prints; findings' inputs are written under
/// `target/fuzz/findings/`.
#[test]
#[ignore = "the long run: stress/fuzz.sh"]
fn fuzz_long() {
    let variable = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let executions = variable("WAYMARK_FUZZ_EXECUTIONS").map_or(1_000_000, |value| {
        value.parse().expect("WAYMARK_FUZZ_EXECUTIONS: a count")
    });
    let seed = variable("WAYMARK_FUZZ_SEED").map_or(1, |value| {
        value.parse().expect("WAYMARK_FUZZ_SEED: a number")
    });
    let wanted = variable("WAYMARK_FUZZ_TARGETS").unwrap_or_default();
    let mut found = 0;
    println!("{}", fuzz_targets::REPORT_HEADER);
    for target in targets() {
        if !wanted.is_empty() && !wanted.split_whitespace().any(|name| name == target.name) {
            continue;
        }
        let clock = std::time::Instant::now();
        let findings = fuzz_targets::fuzz(&target, executions, seed);
        let seconds = clock.elapsed().as_secs_f64();
        println!(
            "{}",
            fuzz_targets::report_line(target.name, &findings, seconds)
        );
        found += findings.failures.len();
    }
    assert_eq!(found, 0, "findings: see target/fuzz/findings/");
}

/// The targets' starting inputs run to a report: the mutations start from inputs that reach
/// the subcommands' work, not from ones refused at the first field.
#[test]
fn the_command_line_targets_seeds_run_to_a_report() {
    let seeds = |prefix| fixtures_named(prefix);
    assert!(!seeds("target_").is_empty() && seeds("sim_").len() >= 5);
    for seed in seeds("target_") {
        let command = TargetCommand::json_report(fixtures().join("fuzz_target.json"));
        let mut report = Vec::new();
        crate::target::run_text(&command, &String::from_utf8_lossy(&seed), &mut report)
            .expect("the target fixture runs");
        assert!(String::from_utf8_lossy(&report).contains("\"verdict\""));
    }
    for seed in seeds("sim_") {
        let command = SimCommand::json_report(fixtures().join("fuzz_sim.json"));
        let mut report = Vec::new();
        crate::sim::run_text(&command, &String::from_utf8_lossy(&seed), &mut report)
            .expect("each sim fixture runs");
        assert!(String::from_utf8_lossy(&report).contains("\"state_hash\""));
    }
    let queries = (targets()[2].seeds)();
    let parsed = parse_queries(&String::from_utf8_lossy(&queries[0]), Path::new("q.csv"))
        .expect("the queries seed parses");
    assert_eq!(parsed.len(), 2);
}
