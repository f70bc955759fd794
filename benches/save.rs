//! Saving and restoring a crowd: the generated city's 10,000 agents after 150 frames of
//! walking (some still waiting for paths, searches open), as `waymark crowd city --agents
//! 10000` runs them. The bytes of the save are printed beside the times.
//!
//! `cargo bench --bench save`
//!
//! - `save/city_10000`: `Crowd::save`, the whole crowd to bytes in a new vector, every
//!   vector kept until the round ends, so each save writes memory the system has never
//!   given the process before (the worst case);
//! - `save/city_10000_then_drop`: `Crowd::save`, the bytes dropped before the next save
//!   (a game writing them out), so the allocator hands the same memory back;
//! - `save/city_10000_into_buffer`: `Crowd::save_into` a buffer kept between saves;
//! - `fresh_memory/save_sized`: a new vector as long as the save, filled with one byte
//!   and kept like `save/city_10000`'s: what the system alone charges for first touching
//!   that many pages, the floor under any save into new memory;
//! - `restore/city_10000`: `Crowd::restore` from those bytes (checks, open searches run
//!   again, buffers sized).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::crowd::{AgentParams, Crowd, CrowdConfig};
use waymark::harness::{Plans, RunOptions, random_plans, run_crowd};
use waymark::mesh::NavMesh;

const AGENTS: usize = 10_000;

fn walking_city() -> (NavMesh, CrowdConfig, Crowd) {
    let city = waymark::scene::city::city(AGENTS, 1);
    let config = BakeConfig {
        tile_size_cells: Some(96),
        ..BakeConfig::preset(Preset::Guard)
    };
    let world = city.scene.world_triangles().unwrap();
    let mesh = NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap();
    let plans: Plans = random_plans(&mesh, AGENTS, 16, 1).into();
    let crowd_config = CrowdConfig::default();
    let mut crowd = Crowd::new(&mesh, crowd_config).unwrap();
    let params = AgentParams {
        radius_m: config.agent_radius_m,
        height_m: config.agent_height_m,
        ..AgentParams::DETOUR_REFERENCE
    };
    let options = RunOptions {
        dt_s: 1.0 / 30.0,
        warm_up_frames: 0,
        frames: 150,
        measure_quality: false,
        retarget: true,
        comparison_rule: false,
        stop_when_all_arrived: false,
        skip_off_mesh_starts: true,
        save_at_frame: None,
        settings_tag: 0,
    };
    run_crowd(&mut crowd, &plans, params, &options, |_, _| {}).unwrap();
    (mesh, crowd_config, crowd)
}

fn save_benches(criterion: &mut Criterion) {
    let (mesh, config, crowd) = walking_city();
    let bytes = crowd.save();
    eprintln!(
        "city_10000: {} agents, {} bytes saved ({:.1} per agent)",
        crowd.len(),
        bytes.len(),
        bytes.len() as f64 / crowd.len() as f64
    );
    let mut group = criterion.benchmark_group("save");
    group.sample_size(20);
    group.bench_function("city_10000", |bench| {
        bench.iter_with_large_drop(|| black_box(&crowd).save())
    });
    group.bench_function("city_10000_then_drop", |bench| {
        bench.iter(|| drop(black_box(&crowd).save()))
    });
    // A game saving every so often into the same buffer.
    let mut buffer = Vec::new();
    group.bench_function("city_10000_into_buffer", |bench| {
        bench.iter(|| black_box(&crowd).save_into(&mut buffer))
    });
    group.finish();
    let mut group = criterion.benchmark_group("fresh_memory");
    group.sample_size(20);
    group.bench_function("save_sized", |bench| {
        bench.iter_with_large_drop(|| vec![1u8; black_box(bytes.len())])
    });
    group.finish();
    let mut group = criterion.benchmark_group("restore");
    group.sample_size(20);
    group.bench_function("city_10000", |bench| {
        bench.iter_with_large_drop(|| Crowd::restore(&mesh, config, black_box(&bytes)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, save_benches);
criterion_main!(benches);
