//! Crowd passes on the shared dungeon agents (1,000, DetourCrowd's parameters, default bake),
//! after 60 frames so that agents are moving along their corridors: the follow pass, the
//! slope pass (and its limits kernel, scalar against `wide` SIMD), the neighbour grid and the
//! avoid pass (and its ORCA constraint kernel; with the copy the CPU allows and with the
//! build target's), the kinematic controller, a whole step, and
//! the follow pass's funnel over every moving agent's window. The passes are reached
//! through `waymark::crowd::internals`, which is not part of the API.
//!
//! `cargo bench --bench crowd`. The scaling runs on the generated city are in
//! `stress/crowd_scaling.sh`.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::Vec3;
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::crowd::internals::{
    ConstraintLanes, LOOKAHEAD_PORTALS, NeighbourBatch, NeighbourGrid, PortalWindow, avoid_pass,
    follow_pass, funnel_scalar, gather_bodies, orca_constraints_scalar, slope_limits_scalar,
    slope_limits_simd, slope_pass, use_baseline_only,
};
use waymark::crowd::{
    AgentParams, AvoidanceProfile, Controller, Crowd, CrowdConfig, KinematicController, StepRequest,
};
use waymark::harness::read_agents_csv;
use waymark::mesh::NavMesh;
use waymark::query::QueryFilter;
use waymark::scene::obj::{ObjOptions, load_obj};

const AGENTS: usize = 1000;
const DT: f32 = 1.0 / 30.0;

fn dungeon_crowd() -> (NavMesh, Crowd) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/levels");
    let world = load_obj(&root.join("dungeon.obj"), &ObjOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap();
    let mesh = NavMesh::from_file(
        bake(&world, &BakeConfig::preset(Preset::Recast))
            .unwrap()
            .to_file(),
    )
    .unwrap();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    for plan in read_agents_csv(&root.join("dungeon_crowd_agents.csv"), AGENTS).unwrap() {
        let agent = crowd
            .add_agent(plan.start, AgentParams::DETOUR_REFERENCE)
            .unwrap();
        crowd.request_move(agent, plan.targets[0]).unwrap();
    }
    let mut controller = KinematicController;
    for _ in 0..60 {
        crowd.step(DT, &mut controller).unwrap();
    }
    (mesh, crowd)
}

fn crowd_benches(criterion: &mut Criterion) {
    let (_mesh, mut crowd) = dungeon_crowd();
    let windows = funnel_windows(&crowd);
    let mut group = criterion.benchmark_group("crowd_1000_dungeon");
    group.sample_size(30);

    let mut outputs = Vec::new();
    let snapshot = crowd.snapshot().clone();
    // The agents do not move between iterations, so each starts with no portal window kept
    // (the cost of an agent's first funnel; in a walking crowd most windows are kept).
    let mut portal_windows = vec![PortalWindow::EMPTY; crowd.lanes().len()];
    group.bench_function("follow_pass", |bench| {
        bench.iter(|| {
            portal_windows.fill(PortalWindow::EMPTY);
            follow_pass(
                &snapshot,
                black_box(crowd.lanes()),
                &mut portal_windows,
                DT,
                0.25,
                &mut outputs,
            );
            outputs.len()
        })
    });

    let mut lanes = crowd.lanes().clone();
    group.bench_function("slope_pass", |bench| {
        bench.iter(|| slope_pass(black_box(&snapshot), &mut lanes))
    });

    let lanes = crowd.lanes();
    let requests: Vec<StepRequest> = (0..lanes.len())
        .map(|slot| lanes.step_request(slot, DT))
        .collect();
    let filters = [QueryFilter::new()];
    let mut feedback = Vec::new();
    let mut controller = KinematicController;
    group.bench_function("kinematic_controller", |bench| {
        bench.iter(|| {
            controller.step_agents(&snapshot, &filters, black_box(&requests), &mut feedback);
            feedback.len()
        })
    });

    // The avoid pass alone: the grid rebuild and the negotiated velocities.
    let avoidance = crowd.config().avoidance;
    let mut grid = NeighbourGrid::default();
    let (mut velocities, mut bodies) = (Vec::new(), Vec::new());
    let rebuild = |grid: &mut NeighbourGrid| {
        grid.rebuild(
            lanes.positions(),
            avoidance.neighbour_range_m,
            avoidance.vertical_range_m,
            avoidance.neighbours_max,
        )
    };
    group.bench_function("neighbour_grid", |bench| {
        bench.iter(|| {
            rebuild(&mut grid);
            grid.neighbours_of(0).len()
        })
    });
    // Built here too: with a filter that skips the grid's benchmark, the avoid pass would
    // otherwise run over an empty grid (and time nothing).
    rebuild(&mut grid);
    assert_eq!(grid.len(), lanes.len(), "the grid covers the crowd");
    // The pass as a game runs it (the x86-64-v3 copy where the CPU has AVX2 and FMA), and
    // with the copy compiled for the build's own target.
    for (name, baseline_only) in [("avoid_pass", false), ("avoid_pass_baseline_cpu", true)] {
        use_baseline_only(baseline_only);
        group.bench_function(name, |bench| {
            bench.iter(|| {
                gather_bodies(lanes, &grid, &mut bodies);
                let profiles = [AvoidanceProfile::of(&avoidance)];
                avoid_pass(
                    &grid,
                    &bodies,
                    &[],
                    &[],
                    &snapshot,
                    &avoidance,
                    &profiles,
                    DT,
                    &mut velocities,
                );
                velocities.len()
            })
        });
    }
    use_baseline_only(false);

    group.bench_function("whole_step", |bench| {
        bench.iter(|| crowd.step(DT, &mut controller).unwrap().len())
    });
    group.finish();

    // The slope limits kernel alone, 10,000 lanes: scalar against `wide` (f32x8).
    let count = 10_000;
    let gradient_x: Vec<f32> = (0..count).map(|i| (i % 17) as f32 * 0.05).collect();
    let gradient_z: Vec<f32> = (0..count).map(|i| (i % 13) as f32 * 0.04).collect();
    let speed = vec![3.5f32; count];
    let acceleration = vec![8.0f32; count];
    let (mut speed_limit, mut acceleration_limit) = (vec![0.0; count], vec![0.0; count]);
    let mut group = criterion.benchmark_group("slope_limits_10k");
    group.bench_function("scalar", |bench| {
        bench.iter(|| {
            slope_limits_scalar(
                black_box(&gradient_x),
                black_box(&gradient_z),
                &speed,
                &acceleration,
                &mut speed_limit,
                &mut acceleration_limit,
            )
        })
    });
    group.bench_function("simd", |bench| {
        bench.iter(|| {
            slope_limits_simd(
                black_box(&gradient_x),
                black_box(&gradient_z),
                &speed,
                &acceleration,
                &mut speed_limit,
                &mut acceleration_limit,
            )
        })
    });
    group.finish();

    // The ORCA half-planes of 10 neighbours, 1,000 agents' worth.
    let mut random = waymark::geom::SplitMix64::new(3);
    let batches: Vec<NeighbourBatch> = (0..1000)
        .map(|_| {
            let mut batch = NeighbourBatch {
                count: 10,
                ..NeighbourBatch::default()
            };
            for i in 0..10 {
                batch.offset_x[i] = random.next_f32() * 10.0 - 5.0;
                batch.offset_z[i] = random.next_f32() * 10.0 - 5.0;
                batch.relative_velocity_x[i] = random.next_f32() * 4.0 - 2.0;
                batch.relative_velocity_z[i] = random.next_f32() * 4.0 - 2.0;
                batch.radius_sum[i] = 1.2;
                batch.share[i] = 0.5;
            }
            batch
        })
        .collect();
    let mut out = ConstraintLanes::default();
    let mut group = criterion.benchmark_group("orca_constraints_1000x10");
    let velocity = glam::Vec2::new(1.0, 0.5);
    group.bench_function("scalar", |bench| {
        bench.iter(|| {
            for batch in &batches {
                orca_constraints_scalar(velocity, 0.4, 30.0, black_box(batch), &mut out);
            }
            out.point_x[0]
        })
    });
    group.finish();

    // The follow pass's funnel on every moving agent's window.
    let mut group = criterion.benchmark_group(format!("funnel_{}_windows", windows.len()));
    let mut corners = Vec::new();
    group.bench_function("scalar", |bench| {
        bench.iter(|| {
            let mut length = 0.0;
            for window in &windows {
                length += funnel_scalar(black_box(window), &mut corners).length_m;
            }
            length
        })
    });
    group.finish();
}

/// The funnel window of every moving agent: its foot, the next portals of its corridor
/// (at most the follow pass's look-ahead) and the middle of the last one as the end.
fn funnel_windows(crowd: &Crowd) -> Vec<Vec<(Vec3, Vec3)>> {
    let lanes = crowd.lanes();
    (0..lanes.len())
        .filter_map(|slot| {
            let (corridor, cursor) = lanes.corridor_and_cursor(slot)?;
            let portals = corridor.len() - 1;
            let cursor = cursor.min(portals);
            let last = (cursor + LOOKAHEAD_PORTALS).min(portals);
            let foot = lanes.position(slot);
            let mut window = vec![(foot, foot)];
            let snapshot = crowd.snapshot();
            window.extend((cursor..last).map_while(|index| corridor.portal(snapshot, index)));
            let (left, right) = *window.last().expect("the foot");
            let end = (left + right) * 0.5;
            window.push((end, end));
            Some(window)
        })
        .collect()
}

criterion_group!(benches, crowd_benches);
criterion_main!(benches);
