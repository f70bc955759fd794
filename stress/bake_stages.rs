//! The solo bake's stages timed warm, in one process: what `stress/detourcrowd/
//! compare_bake_stages.sh` sets against Recast's stages (`query_reference`'s
//! `bake_stage_ms`, the median of five bakes in its process).
//!
//! `cargo run --release --example bake_stages -- LEVEL.obj [RUNS]` (default 11 runs): bakes
//! the level with RecastDemo's settings (`Preset::Recast`, one tile) on one thread, `RUNS`
//! times, and prints one JSON line: `bake_ms`, the median bake, and `bake_stage_ms`, each
//! stage's median (`waymark bake --json`'s `stage_ms` names). The first bake of a process
//! also pays for mapping its memory; the median leaves that out, as Recast's does.
//!
//! `TILE=48` bakes in 48-cell tiles instead, and `THREADS=2` on two threads (stage times
//! are then CPU time summed over tiles; `bake_ms` stays wall-clock).

use std::path::PathBuf;

use waymark::bake::{BakeConfig, Preset, STAGE_NAMES, bake};
use waymark::harness::median;
use waymark::scene::obj::{ObjOptions, load_obj};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(level) = args.next().map(PathBuf::from) else {
        eprintln!("usage: bake_stages LEVEL.obj [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = match args.next().map(|text| text.parse()) {
        None => 11,
        Some(Ok(runs)) if runs > 0 => runs,
        Some(_) => {
            eprintln!("RUNS must be a whole number above 0");
            std::process::exit(2);
        }
    };
    let scene = load_obj(&level, &ObjOptions::default()).unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(1);
    });
    let world = scene.world_triangles().unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(1);
    });
    let config = BakeConfig {
        tile_size_cells: whole_number_from_env("TILE"),
        ..BakeConfig::preset(Preset::Recast)
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(whole_number_from_env("THREADS").map_or(1, |threads| threads as usize))
        .build()
        .expect("a thread pool");
    let mut totals = Vec::with_capacity(runs);
    let mut stages: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); STAGE_NAMES.len()];
    for _ in 0..runs {
        let output = pool
            .install(|| bake(&world, &config))
            .unwrap_or_else(|error| {
                eprintln!("{error}");
                std::process::exit(1);
            });
        totals.push(output.stats.bake_ms);
        for (times, ms) in stages.iter_mut().zip(output.stats.stage_ms) {
            times.push(ms);
        }
    }
    let stage_json: Vec<String> = STAGE_NAMES
        .iter()
        .zip(&mut stages)
        .map(|(name, times)| format!("\"{name}\":{:.4}", median(times)))
        .collect();
    println!(
        "{{\"runs\":{runs},\"bake_ms\":{:.3},\"bake_stage_ms\":{{{}}}}}",
        median(&mut totals),
        stage_json.join(",")
    );
}

/// The whole number in environment variable `name`, if set; exits naming it otherwise.
fn whole_number_from_env(name: &str) -> Option<u32> {
    let text = std::env::var(name).ok()?;
    match text.parse() {
        Ok(value) if value > 0 => Some(value),
        _ => {
            eprintln!("{name}={text:?} must be a whole number above 0");
            std::process::exit(2);
        }
    }
}
