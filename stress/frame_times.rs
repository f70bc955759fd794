//! Frame times of the crowd on the generated city, straight through the library, and the
//! avoid pass's two halves timed alone.
//!
//! `cargo run --release --example frame_times -- [N] [FRAMES] [on|off]` (defaults 10,000
//! agents, 300 frames, avoidance off): N random agents with random targets, DetourCrowd's
//! parameters, `Crowd::step` timed per frame. Prints the median and slowest frame, the
//! frames over twice the median, and for the slowest frames the process's CPU time in the
//! frame and the time its threads were ready but waiting for a CPU (summed over its threads
//! from `/proc/self/task/*/schedstat`, Linux only): a frame whose CPU time is far below its
//! wall time is one in which the process was not running, and the waiting time says how
//! much of that another process had the core. (A virtual machine's host taking the core
//! shows in neither: the guest counts that time as running.)
//! Beside each slow frame, its passes over 0.1 ms: one pass far over its median, with
//! the usual work (nodes, agents), is a stall inside that pass; every pass stretched at
//! once is a slow machine. Then, on the crowd as the run left it, the K-nearest search (`NeighbourGrid::rebuild`)
//! and the avoid pass proper (`gather_bodies` + `avoid_pass`) alone, 300 times each,
//! microseconds per agent (median and fastest); run with `RAYON_NUM_THREADS=1` for core
//! time. Also prints each pass's median wall time over the frames.

use std::time::Instant;

use waymark::crowd::internals::{NeighbourGrid, avoid_pass, gather_bodies};
use waymark::crowd::{AgentParams, AvoidanceProfile, Crowd, CrowdConfig, StepStats};

#[path = "common.rs"]
mod common;
use common::city_plans;
use waymark::harness::{RunOptions, median, run_crowd};

fn main() {
    let mut args = std::env::args().skip(1);
    let agents: usize = args.next().map_or(10_000, |a| a.parse().expect("N"));
    let frames: usize = args.next().map_or(300, |a| a.parse().expect("FRAMES"));
    let avoidance = args.next().is_some_and(|a| a == "on");

    let mut crowd_config = CrowdConfig::default();
    crowd_config.avoidance.enabled = avoidance;
    let (mesh, plans) = city_plans(agents);
    let plans = waymark::harness::Plans::from(plans);
    let mut crowd = Crowd::new(&mesh, crowd_config).expect("a valid configuration");
    // The harness's run loop times the step alone and reads the process's CPU and waiting
    // time around it.
    let options = RunOptions {
        dt_s: 1.0 / 30.0,
        warm_up_frames: 0,
        frames,
        measure_quality: false,
        retarget: false,
        comparison_rule: false,
        stop_when_all_arrived: false,
        skip_off_mesh_starts: false,
        save_at_frame: None,
        settings_tag: 0,
    };
    let report = run_crowd(
        &mut crowd,
        &plans,
        AgentParams::DETOUR_REFERENCE,
        &options,
        |_, _| {},
    )
    .expect("a valid run");
    // Per frame: wall time, and the time on a CPU and waiting for one.
    let known = report.cpu_ms.len() == report.frame_ms.len();
    let timed: Vec<(f64, Option<[f64; 2]>)> = (0..report.frame_ms.len())
        .map(|frame| {
            let schedule = known.then(|| [report.cpu_ms[frame], report.cpu_wait_ms[frame]]);
            (report.frame_ms[frame], schedule)
        })
        .collect();
    let passes = &report.pass_ms;
    let mut walls: Vec<f64> = timed.iter().map(|t| t.0).collect();
    let median_ms = median(&mut walls);
    let over = timed.iter().filter(|t| t.0 > 2.0 * median_ms).count();
    println!(
        "{agents} agents, {frames} frames, avoidance {}: median {median_ms:.3} ms, slowest {:.3} ms, {over} frames over twice the median",
        if avoidance { "on" } else { "off" },
        walls.last().expect("frames")
    );
    let names = StepStats::PASS_NAMES;
    let per_pass: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(pass, name)| {
            let mut times: Vec<f64> = passes.iter().map(|frame| frame[pass]).collect();
            format!("{name} {:.3}", median(&mut times))
        })
        .collect();
    println!("median ms per pass: {}", per_pass.join(", "));
    let mut slowest: Vec<usize> = (0..timed.len()).collect();
    slowest.sort_by(|&a, &b| timed[b].0.total_cmp(&timed[a].0));
    let mut cpus: Vec<f64> = timed.iter().filter_map(|t| t.1.map(|s| s[0])).collect();
    if !cpus.is_empty() {
        println!("median frame CPU time {:.3} ms", median(&mut cpus));
    }
    for &frame in slowest.iter().take(5) {
        let (wall_ms, schedule_ms) = timed[frame];
        let cpu = schedule_ms.map_or(String::new(), |[cpu_ms, waiting_ms]| {
            format!(", CPU {cpu_ms:.3} ms, waiting for a CPU {waiting_ms:.3} ms")
        });
        // The passes over 0.1 ms in that frame: a pass that grew points at the step, a
        // frame whose passes all stretched at once at the machine.
        let grown: Vec<String> = names
            .iter()
            .zip(passes[frame])
            .filter(|(_, time_ms)| *time_ms > 0.1)
            .map(|(name, time_ms)| format!("{name} {time_ms:.3}"))
            .collect();
        println!(
            "  slow frame {frame}: wall {wall_ms:.3} ms{cpu}; {}",
            grown.join(", ")
        );
    }

    // The avoid pass's halves alone, on the crowd where the run left it.
    let avoidance = CrowdConfig::default().avoidance;
    let lanes = crowd.lanes();
    let positions = lanes.positions();
    let mut grid = NeighbourGrid::default();
    let rebuild = |grid: &mut NeighbourGrid| {
        grid.rebuild(
            positions,
            avoidance.neighbour_range_m,
            avoidance.vertical_range_m,
            avoidance.neighbours_max,
        )
    };
    rebuild(&mut grid);
    let per_agent_us = |run: &mut dyn FnMut()| {
        let mut times: Vec<f64> = (0..300)
            .map(|_| {
                let clock = Instant::now();
                run();
                clock.elapsed().as_secs_f64() * 1e6 / agents as f64
            })
            .collect();
        let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
        (median(&mut times), fastest)
    };
    let (search_median, search_fastest) = per_agent_us(&mut || rebuild(&mut grid));
    rebuild(&mut grid);
    let (mut bodies, mut velocities) = (Vec::new(), Vec::new());
    let (solve_median, solve_fastest) = per_agent_us(&mut || {
        gather_bodies(lanes, &grid, &mut bodies);
        avoid_pass(
            &grid,
            &bodies,
            &[],
            &[],
            crowd.snapshot(),
            &avoidance,
            &[AvoidanceProfile::of(&avoidance)],
            1.0 / 30.0,
            &mut velocities,
        );
    });
    println!(
        "K-nearest search: {search_median:.3} us per agent (fastest {search_fastest:.3}); avoid pass proper: {solve_median:.3} (fastest {solve_fastest:.3})"
    );
}
