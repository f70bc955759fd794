//! Queries on Recast's levels compared with Detour's answers, pair by pair: nearest polygon
//! (half extents 2, 4, 2) for both ends, path, straight path. Acceptance: the
//! complete/incomplete verdict agrees on >= 98% of pairs; where both are complete, our
//! straight-path length is within 2% of Detour's for >= 95% of pairs and our mean is no
//! longer than Detour's mean + 1%. Every query is asked twice, the second time through
//! `route_with` in buffers recycled from the query before: the two routes must be equal.

use std::path::Path;

use glam::Vec3;
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::mesh::NavMesh;
use waymark::query::{NODE_POOL_DEFAULT, NodePool, QueryFilter, RouteBuffers, route, route_with};
use waymark::scene::obj::{ObjOptions, load_obj};

struct Comparison {
    agreement: f64,
    within_two_percent: f64,
    mean_ours: f64,
    mean_detour: f64,
    both_complete: usize,
}

fn compare(level: &str, queries: &str, preset: Preset) -> Comparison {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/levels");
    let world = load_obj(&root.join(level), &ObjOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap();
    let mesh =
        NavMesh::from_file(bake(&world, &BakeConfig::preset(preset)).unwrap().to_file()).unwrap();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let mut pool = NodePool::new(NODE_POOL_DEFAULT);
    let mut buffers = RouteBuffers::default();
    let extents = Vec3::new(2.0, 4.0, 2.0);
    let text = std::fs::read_to_string(root.join(queries)).unwrap();
    let (mut total, mut agree, mut both, mut within) = (0usize, 0usize, 0usize, 0usize);
    let (mut sum_ours, mut sum_detour) = (0.0f64, 0.0f64);
    for line in text.lines().skip(1) {
        let values: Vec<f32> = line.split(',').map(|v| v.parse().unwrap()).collect();
        let (start, end) = (
            Vec3::new(values[0], values[1], values[2]),
            Vec3::new(values[3], values[4], values[5]),
        );
        let (detour_length, detour_complete) = (values[6], values[7] == 1.0);
        let found = route(&snapshot, start, end, extents, &filter, &mut pool).unwrap();
        let recycled = route_with(
            &snapshot,
            start,
            end,
            extents,
            &filter,
            &mut pool,
            &mut buffers,
        )
        .unwrap();
        assert_eq!(recycled, found, "{line}");
        let (complete, length) = match &found {
            Some(found) => (found.path.complete, found.length_m()),
            None => (false, 0.0),
        };
        if let Some(recycled) = recycled {
            buffers.recycle(recycled);
        }
        total += 1;
        agree += usize::from(complete == detour_complete);
        if complete && detour_complete {
            both += 1;
            sum_ours += f64::from(length);
            sum_detour += f64::from(detour_length);
            within += usize::from((length - detour_length).abs() <= 0.02 * detour_length);
        }
    }
    assert_eq!(total, 10_000);
    Comparison {
        agreement: agree as f64 / total as f64,
        within_two_percent: within as f64 / both as f64,
        mean_ours: sum_ours / both as f64,
        mean_detour: sum_detour / both as f64,
        both_complete: both,
    }
}

fn check(level: &str, queries: &str, preset: Preset) {
    let result = compare(level, queries, preset);
    println!(
        "{queries}: verdicts agree {:.4}, within 2% {:.4} of {}, mean {:.3} vs Detour {:.3}",
        result.agreement,
        result.within_two_percent,
        result.both_complete,
        result.mean_ours,
        result.mean_detour
    );
    assert!(
        result.agreement >= 0.98,
        "{queries}: verdict agreement {}",
        result.agreement
    );
    assert!(
        result.within_two_percent >= 0.95,
        "{queries}: within 2% for {}",
        result.within_two_percent
    );
    assert!(
        result.mean_ours <= result.mean_detour * 1.01,
        "{queries}: mean {} vs {}",
        result.mean_ours,
        result.mean_detour
    );
}

#[test]
fn dungeon_default_bake_matches_detour() {
    check("dungeon.obj", "dungeon_queries.csv", Preset::Recast);
}

#[test]
fn dungeon_guard_bake_matches_detour() {
    check("dungeon.obj", "dungeon_guard_queries.csv", Preset::Guard);
}

#[test]
fn nav_test_default_bake_matches_detour() {
    check("nav_test.obj", "nav_test_queries.csv", Preset::Recast);
}

#[test]
fn nav_test_guard_bake_matches_detour() {
    check("nav_test.obj", "nav_test_guard_queries.csv", Preset::Guard);
}
