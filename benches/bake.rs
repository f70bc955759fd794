//! Bake speed on Recast's levels with RecastDemo's default settings, for comparison with
//! Recast's figures in `../shared/levels/README.md` (solo 29.0 / 46.1 ms, tiled 37.7 / 53.3
//! ms, single thread).
//!
//! `cargo bench --bench bake`
//!
//! - `solo_1_thread/*`: one tile on one thread, like Recast's solo bake;
//! - `tiled_48/*`: 48-cell tiles on every core of the machine (2 here);
//! - `tiled_48_1_thread/*`: the same tiles on one thread (the cost of tiling itself).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::scene::obj::{ObjOptions, load_obj};

fn bake_benches(criterion: &mut Criterion) {
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut group = criterion.benchmark_group("bake");
    group.sample_size(30);
    for name in ["dungeon.obj", "nav_test.obj"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets/levels")
            .join(name);
        let world = load_obj(&path, &ObjOptions::default())
            .unwrap()
            .world_triangles()
            .unwrap();
        let solo = BakeConfig::preset(Preset::Recast);
        let tiled = BakeConfig {
            tile_size_cells: Some(48),
            ..solo
        };
        group.bench_function(format!("solo_1_thread/{name}"), |bench| {
            bench.iter(|| one_thread.install(|| bake(black_box(&world), &solo).unwrap()))
        });
        group.bench_function(format!("tiled_48/{name}"), |bench| {
            bench.iter(|| bake(black_box(&world), &tiled).unwrap())
        });
        group.bench_function(format!("tiled_48_1_thread/{name}"), |bench| {
            bench.iter(|| one_thread.install(|| bake(black_box(&world), &tiled).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, bake_benches);
criterion_main!(benches);
