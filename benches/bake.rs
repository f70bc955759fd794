//! Bake speed on Recast's levels with RecastDemo's default settings, for comparison with
//! Recast's figures in `../shared/levels/README.md` (solo 29.0 / 46.1 ms, tiled 37.7 / 53.3
//! ms, single thread).
//!
//! `cargo bench --bench bake`
//!
//! - `solo_1_thread/*`: one tile on one thread, like Recast's solo bake;
//! - `tiled_48/*`: 48-cell tiles on every core of the machine (2 here);
//! - `tiled_48_1_thread/*`: the same tiles on one thread (the cost of tiling itself);
//! - `obstacle_48/*`: a cylinder obstacle (radius 1 m, height 2 m) at the first reference
//!   query's start, its tiles rebuilt from the tile cache (carving, its default) and
//!   committed, then removed and rebuilt again: one cycle of what
//!   `target/detourcrowd/tilecache_reference LEVEL QUERIES` times for `dtTileCache`
//!   (`addObstacle` + `update` to completion, `removeObstacle` + `update`).
//! - `obstacle_add_48/*`: the adding half of that cycle alone (the native run's
//!   `add_and_update_ms`).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::Vec3;
use waymark::bake::tile_cache::{ObstacleEffect, ObstacleShape, TileCache};
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::mesh::NavMesh;
use waymark::query::{QueryFilter, nearest_polygon};
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
        let (output, mut cache) = TileCache::bake(&world, &tiled).unwrap();
        let mut mesh = NavMesh::from_file(output.to_file()).unwrap();
        // The obstacle stands at the first reference query's start, as in the native run
        // (stress/detourcrowd/native/tilecache_reference.cpp).
        let queries =
            std::fs::read_to_string(path.with_file_name(name.replace(".obj", "_queries.csv")))
                .unwrap();
        let first: Vec<f32> = queries
            .lines()
            .nth(1)
            .unwrap()
            .split(',')
            .take(3)
            .map(|value| value.parse().unwrap())
            .collect();
        let base = nearest_polygon(
            &mesh.snapshot(),
            Vec3::new(first[0], first[1], first[2]),
            Vec3::splat(2.0),
            &QueryFilter::new(),
        )
        .unwrap()
        .unwrap()
        .point;
        let shape = ObstacleShape::Cylinder {
            base,
            radius_m: 1.0,
            height_m: 2.0,
        };
        group.bench_function(format!("obstacle_48/{name}"), |bench| {
            bench.iter(|| {
                let id = cache
                    .add_obstacle(&mut mesh, shape, ObstacleEffect::Cut)
                    .unwrap();
                cache.update(&mut mesh, usize::MAX).unwrap();
                cache.remove_obstacle(&mut mesh, id).unwrap();
                cache.update(&mut mesh, usize::MAX).unwrap();
            })
        });
        // The add half alone (the native run's `add_and_update_ms`); the removal that
        // restores the mesh between samples is not timed.
        group.bench_function(format!("obstacle_add_48/{name}"), |bench| {
            bench.iter_custom(|iterations| {
                let mut timed = std::time::Duration::ZERO;
                for _ in 0..iterations {
                    let start = std::time::Instant::now();
                    let id = cache
                        .add_obstacle(&mut mesh, shape, ObstacleEffect::Cut)
                        .unwrap();
                    cache.update(&mut mesh, usize::MAX).unwrap();
                    timed += start.elapsed();
                    cache.remove_obstacle(&mut mesh, id).unwrap();
                    cache.update(&mut mesh, usize::MAX).unwrap();
                }
                timed
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bake_benches);
criterion_main!(benches);
