//! What the second core buys, pass by pass: the same crowd stepped on a one-thread and a
//! two-thread rayon pool in alternate frames, in one process.
//!
//! `cargo run --release --example pool_speedup -- [N] [FRAMES]` (defaults 10,000 agents,
//! 300 frames): N random agents with random targets on the generated city, DetourCrowd's
//! parameters, avoidance on; 100 frames on the two-thread pool first, so that the crowd
//! walks, then FRAMES frames alternating between the pools. Prints the median frame on each
//! pool and, per pass, the median wall time on each and their ratio.
//!
//! Why alternate frames in one process: this machine's speed drifts by a third from minute
//! to minute, so two runs (`RAYON_NUM_THREADS=1` against 2) compare two machines as much
//! as two thread counts. Frames next to each other see the same machine. The crowd moves
//! on between frames, so the two pools step nearly, not exactly, the same crowd (the
//! results are the same at any thread count, so neither pool changes where it goes).

use std::time::Instant;

use waymark::crowd::{CrowdConfig, KinematicController, StepStats};

#[path = "common.rs"]
mod common;
use common::city_crowd;
use waymark::harness::median;

fn main() {
    let mut args = std::env::args().skip(1);
    let agents: usize = args.next().map_or(10_000, |a| a.parse().expect("N"));
    let frames: usize = args.next().map_or(300, |a| a.parse().expect("FRAMES"));

    let (_mesh, mut crowd) = city_crowd(agents, CrowdConfig::default());

    let pools = [1, 2].map(|threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    });
    let mut controller = KinematicController;
    let dt = 1.0 / 30.0;
    for _ in 0..100 {
        pools[1].install(|| crowd.step(dt, &mut controller).expect("a valid step"));
    }
    let mut frame_ms: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut pass_ms: [Vec<[f64; StepStats::PASSES]>; 2] = [Vec::new(), Vec::new()];
    for frame in 0..frames {
        let pool = frame % 2;
        let clock = Instant::now();
        pools[pool].install(|| crowd.step(dt, &mut controller).expect("a valid step"));
        frame_ms[pool].push(clock.elapsed().as_secs_f64() * 1e3);
        pass_ms[pool].push(crowd.stats().pass_ms());
    }
    let [one, two] = frame_ms.map(|mut times| median(&mut times));
    println!(
        "{agents} agents, {frames} frames alternating: median frame {one:.3} ms on one thread, {two:.3} ms on two, {:.3}x",
        one / two
    );
    println!("median ms per pass (one thread, two threads, ratio):");
    for (index, name) in StepStats::PASS_NAMES.iter().enumerate() {
        let [one, two] = [0, 1].map(|pool| {
            let mut times: Vec<f64> = pass_ms[pool].iter().map(|pass| pass[index]).collect();
            median(&mut times)
        });
        if one > 0.0 {
            println!("  {name:>10}: {one:.3} {two:.3} {:.3}x", one / two);
        }
    }
}
