//! Scene input costs: OBJ parsing and the world-triangle pass on the real levels.
//!
//! `cargo bench --bench scene`

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use waymark::scene::obj::{ObjOptions, load_obj};
use waymark::scene::proving_ground::proving_ground;

fn level_path(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/levels")
        .join(name)
}

fn scene_benches(criterion: &mut Criterion) {
    for name in ["dungeon.obj", "nav_test.obj"] {
        let path = level_path(name);
        criterion.bench_function(&format!("load_obj/{name}"), |bench| {
            bench.iter(|| load_obj(black_box(&path), &ObjOptions::default()).unwrap())
        });
        let scene = load_obj(&path, &ObjOptions::default()).unwrap();
        criterion.bench_function(&format!("world_triangles/{name}"), |bench| {
            bench.iter(|| black_box(&scene).world_triangles().unwrap())
        });
    }
    let ground = proving_ground();
    criterion.bench_function("world_triangles/proving_ground", |bench| {
        bench.iter(|| black_box(&ground.scene).world_triangles().unwrap())
    });
}

criterion_group!(benches, scene_benches);
criterion_main!(benches);
