//! Query speed on the shared query sets, per query (nearest polygon for both ends, path,
//! straight path), for comparison with Detour's figures in `../shared/levels/README.md`
//! (dungeon 8.31 µs, nav_test 7.28 µs mean per query, default bake, single thread).
//!
//! `cargo bench --bench query`. Each iteration runs all 10,000 queries of a set once: divide
//! the reported time by 10,000 for the time per query. The phases are also measured alone.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::Vec3;
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::mesh::{Landmarks, NavMesh, Snapshot};
use waymark::query::{
    DestinationTree, Hierarchy, HierarchyScratch, NODE_POOL_DEFAULT, Nearest, NodePool,
    PathBuffers, PathSearch, QueryFilter, RouteBuffers, StraightPathScratch, find_path,
    find_path_with, nearest_polygon, random_points, route_with, straight_path_with,
};
use waymark::scene::obj::{ObjOptions, load_obj};

const EXTENTS: Vec3 = Vec3::new(2.0, 4.0, 2.0);

fn load(level: &str, queries: &str) -> (NavMesh, Vec<(Vec3, Vec3)>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/levels");
    let world = load_obj(&root.join(level), &ObjOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap();
    let mesh = NavMesh::from_file(
        bake(&world, &BakeConfig::preset(Preset::Recast))
            .unwrap()
            .to_file(),
    )
    .unwrap();
    let pairs = std::fs::read_to_string(root.join(queries))
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| {
            let v: Vec<f32> = line
                .split(',')
                .take(6)
                .map(|x| x.parse().unwrap())
                .collect();
            (Vec3::new(v[0], v[1], v[2]), Vec3::new(v[3], v[4], v[5]))
        })
        .collect();
    (mesh, pairs)
}

fn ends(
    snapshot: &Snapshot,
    filter: &QueryFilter,
    pairs: &[(Vec3, Vec3)],
) -> Vec<(Nearest, Nearest)> {
    pairs
        .iter()
        .filter_map(|&(s, e)| {
            let a = nearest_polygon(snapshot, s, EXTENTS, filter).unwrap()?;
            let b = nearest_polygon(snapshot, e, EXTENTS, filter).unwrap()?;
            Some((a, b))
        })
        .collect()
}

fn query_benches(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("query");
    group.sample_size(20);
    for (level, queries) in [
        ("dungeon.obj", "dungeon_queries.csv"),
        ("nav_test.obj", "nav_test_queries.csv"),
    ] {
        let (mesh, pairs) = load(level, queries);
        let snapshot = mesh.snapshot();
        let filter = QueryFilter::new();
        let mut pool = NodePool::new(NODE_POOL_DEFAULT);
        // Every phase below runs as `waymark path --queries` runs it: buffers kept from one
        // query to the next, so that nothing is allocated once they have grown.
        let mut buffers = RouteBuffers::default();
        group.bench_function(format!("full_10k/{level}"), |bench| {
            bench.iter(|| {
                let mut corners = 0;
                for &(start, end) in &pairs {
                    let found = route_with(
                        &snapshot,
                        start,
                        end,
                        EXTENTS,
                        &filter,
                        &mut pool,
                        &mut buffers,
                    )
                    .unwrap();
                    if let Some(found) = found {
                        corners += found.corners.len();
                        buffers.recycle(found);
                    }
                }
                black_box(corners)
            })
        });
        group.bench_function(format!("landmarks_build/{level}"), |bench| {
            bench.iter(|| black_box(Landmarks::build(snapshot.data()).is_some()))
        });
        group.bench_function(format!("nearest_20k/{level}"), |bench| {
            bench.iter(|| black_box(ends(&snapshot, &filter, &pairs).len()))
        });
        let endpoints = ends(&snapshot, &filter, &pairs);
        group.bench_function(format!("path_10k/{level}"), |bench| {
            let mut buffers = PathBuffers::default();
            bench.iter(|| {
                let mut steps = 0;
                for (from, to) in &endpoints {
                    let found = find_path_with(
                        &snapshot,
                        from.polygon,
                        from.point,
                        to.polygon,
                        to.point,
                        &filter,
                        &mut pool,
                        &mut buffers,
                    )
                    .unwrap();
                    steps += found.steps.len();
                    buffers.recycle(found);
                }
                black_box(steps)
            })
        });
        let paths: Vec<_> = endpoints
            .iter()
            .map(|(from, to)| {
                find_path(
                    &snapshot,
                    from.polygon,
                    from.point,
                    to.polygon,
                    to.point,
                    &filter,
                    &mut pool,
                )
                .unwrap()
            })
            .collect();
        group.bench_function(format!("straight_10k/{level}"), |bench| {
            // As the CLI's queries run it: the working memory kept, nothing allocated.
            let mut scratch = StraightPathScratch::default();
            let mut corners = Vec::new();
            bench.iter(|| {
                let mut count = 0;
                for ((from, to), path) in endpoints.iter().zip(&paths) {
                    straight_path_with(
                        &snapshot,
                        &path.steps,
                        from.point,
                        to.point,
                        &mut scratch,
                        &mut corners,
                    )
                    .unwrap();
                    count += corners.len();
                }
                black_box(count)
            })
        });
    }
    city_searches(&mut group);
    // The largest mesh that has landmarks is about this size (3,561 search edges).
    let city = waymark::scene::city::city(4000, 7);
    let config = BakeConfig {
        tile_size_cells: Some(48),
        ..BakeConfig::preset(Preset::Recast)
    };
    let world = city.scene.world_triangles().unwrap();
    let mesh = NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap();
    group.bench_function("landmarks_build/city_4000", |bench| {
        bench.iter(|| black_box(Landmarks::build(mesh.snapshot().data()).is_some()))
    });
    group.finish();
    let mut group = criterion.benchmark_group("query");
    group.sample_size(10);
    city_hierarchy(&mut group);
    group.finish();
}

/// The city generated for `agents` agents, baked in tiles of 96 cells as `waymark crowd
/// city` bakes it.
fn tiled_city(agents: usize) -> NavMesh {
    let city = waymark::scene::city::city(agents, 1);
    let world = city.scene.world_triangles().unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(96),
        ..BakeConfig::preset(Preset::Guard)
    };
    NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap()
}

/// Exact paths (weight 1) between 1,000 pairs of random points on the city generated for
/// 100,000 agents (21,413 polygons in tiles of 96 cells): by the flat search, and over the
/// hierarchy (routes alone, and routes refined whole into corridors); and building the
/// hierarchy.
fn city_hierarchy(group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>) {
    let mesh = tiled_city(100_000);
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let starts = random_points(&snapshot, &filter, 1000, 1);
    let ends = random_points(&snapshot, &filter, 1000, 2);
    let pairs: Vec<_> = starts.into_iter().zip(ends).collect();
    let mut pool = NodePool::for_snapshot(1 << 16, &snapshot);
    group.bench_function("city_exact_paths_1k/100000", |bench| {
        bench.iter(|| {
            let mut steps = 0;
            for &((start, start_position), (end, end_position)) in &pairs {
                let path = find_path(
                    &snapshot,
                    start,
                    start_position,
                    end,
                    end_position,
                    &filter,
                    &mut pool,
                )
                .unwrap();
                steps += path.steps.len();
            }
            black_box(steps)
        })
    });
    let hierarchy = Hierarchy::new(&snapshot, &filter);
    let mut scratch = HierarchyScratch::with_pool_nodes(1 << 16);
    // The work behind the times, once: ports a route expands against polygons a flat
    // search expands, on the same pairs.
    let (mut ports, mut polygons) = (0u64, 0u64);
    for &((start, start_position), (end, end_position)) in &pairs {
        if let Some(route) = hierarchy
            .plan(
                &snapshot,
                start,
                start_position,
                end,
                end_position,
                &mut scratch,
            )
            .unwrap()
        {
            ports += u64::from(route.ports_expanded());
        }
        let flat = find_path(
            &snapshot,
            start,
            start_position,
            end,
            end_position,
            &filter,
            &mut pool,
        )
        .unwrap();
        polygons += u64::from(flat.nodes_expanded);
    }
    eprintln!(
        "hierarchy: side {} tiles, {} clusters, {} ports, {:.1} MB; a route expands {:.0} ports, a flat exact search {:.0} polygons",
        hierarchy.cluster_side(),
        hierarchy.cluster_count(),
        hierarchy.port_count(),
        hierarchy.heap_bytes() as f64 / 1e6,
        ports as f64 / pairs.len() as f64,
        polygons as f64 / pairs.len() as f64,
    );
    group.bench_function("city_hierarchy_paths_1k/100000", |bench| {
        bench.iter(|| {
            let mut steps = 0;
            for &((start, start_position), (end, end_position)) in &pairs {
                let path = hierarchy
                    .find_path(
                        &snapshot,
                        start,
                        start_position,
                        end,
                        end_position,
                        &mut scratch,
                    )
                    .unwrap();
                steps += path.steps.len();
            }
            black_box(steps)
        })
    });
    group.bench_function("city_hierarchy_routes_1k/100000", |bench| {
        bench.iter(|| {
            let mut legs = 0;
            for &((start, start_position), (end, end_position)) in &pairs {
                let route = hierarchy
                    .plan(
                        &snapshot,
                        start,
                        start_position,
                        end,
                        end_position,
                        &mut scratch,
                    )
                    .unwrap();
                legs += route.map_or(0, |route| route.legs().len());
            }
            black_box(legs)
        })
    });
    group.bench_function("city_hierarchy_build/100000", |bench| {
        bench.iter(|| black_box(Hierarchy::new(&snapshot, &filter).port_count()))
    });
}

/// The crowd's searches (weighted A*, heuristic weight 1.5) between 1,000 pairs of random
/// points on the city generated for 20,000 agents, baked in tiles of 96 cells as
/// `waymark crowd city` bakes it: a large tiled mesh, where a search crosses a tile border
/// about every other polygon and reads its neighbours from memory spread over many tiles.
fn city_searches(group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>) {
    let mesh = tiled_city(20_000);
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let starts = random_points(&snapshot, &filter, 1000, 1);
    let ends = random_points(&snapshot, &filter, 1000, 2);
    let mut pool = NodePool::for_snapshot(NODE_POOL_DEFAULT, &snapshot);
    // One shared destination for all of them: the tree from the first pair's end, and
    // every start's path read off it.
    let (goal, goal_position) = ends[0];
    group.bench_function("city_destination_tree/20000", |bench| {
        bench.iter(|| {
            let tree = DestinationTree::build(&snapshot, goal, goal_position, &filter).unwrap();
            let steps: usize = starts
                .iter()
                .filter_map(|&(start, position)| tree.path_from(&snapshot, start, position))
                .map(|path| path.steps.len())
                .sum();
            black_box(steps)
        })
    });
    group.bench_function("city_paths_1k/20000", |bench| {
        bench.iter(|| {
            let mut expanded = 0;
            for (&(start, start_position), &(end, end_position)) in starts.iter().zip(&ends) {
                let mut search = PathSearch::new_weighted(
                    &snapshot,
                    start,
                    start_position,
                    end,
                    end_position,
                    &filter,
                    std::mem::take(&mut pool),
                    1.5,
                )
                .unwrap();
                search.step(u32::MAX);
                expanded += search.nodes_expanded();
                pool = search.into_result().1;
            }
            black_box(expanded)
        })
    });
}

criterion_group!(benches, query_benches);
criterion_main!(benches);
