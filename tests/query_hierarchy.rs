//! Hierarchical paths against the flat search, query by query, on Recast's levels baked
//! in tiles and on the tiled city: the same verdict (complete or partial) on every query,
//! and straight paths within 5% of the flat search's length on at least 99% of them.
//! A hierarchy brought up to a changed mesh answers as one built afresh.

use std::path::Path;

use glam::Vec3;
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::mesh::{NavMesh, PolyRef, Snapshot};
use waymark::query::{
    Hierarchy, HierarchyScratch, NodePool, PathResult, QueryError, QueryFilter, Validity,
    find_path, nearest_polygon, random_points, straight_path,
};
use waymark::scene::obj::{ObjOptions, load_obj};

/// Nodes enough for any flat search on these levels: verdicts are about reachability,
/// not about a pool running out.
const POOL_NODES: usize = 1 << 16;

fn tiled_level(name: &str, preset: Preset) -> NavMesh {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/levels")
        .join(name);
    let world = load_obj(&path, &ObjOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(48),
        ..BakeConfig::preset(preset)
    };
    NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap()
}

fn tiled_city() -> NavMesh {
    let city = waymark::scene::city::city(2000, 4);
    let world = city.scene.world_triangles().unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(48),
        ..BakeConfig::preset(Preset::Guard)
    };
    NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap()
}

/// The straight path's length from `start` along `path` to `goal` (or, for a partial
/// path, to the point of its last polygon nearest the goal).
fn length(snapshot: &Snapshot, path: &PathResult, start: Vec3, goal: Vec3) -> f32 {
    let goal = if path.complete {
        goal
    } else {
        let last = path.steps.last().unwrap().polygon;
        snapshot
            .tile(last)
            .unwrap()
            .closest_point(last.polygon(), goal)
            .0
    };
    straight_path(snapshot, &path.steps, start, goal)
        .unwrap()
        .windows(2)
        .map(|pair| pair[0].position.distance(pair[1].position))
        .sum()
}

#[derive(Default)]
struct Tally {
    queries: usize,
    complete: usize,
    within: usize,
    flat_total: f64,
    hierarchical_total: f64,
}

impl Tally {
    fn check(&self, what: &str) {
        eprintln!(
            "{what}: {} queries, {} complete, {} within 5%, {:.1} m against the flat search's {:.1} m",
            self.queries, self.complete, self.within, self.hierarchical_total, self.flat_total
        );
        assert!(
            self.within as f64 >= 0.99 * self.queries as f64,
            "{what}: {} of {} within 5%",
            self.within,
            self.queries
        );
        assert!(
            self.hierarchical_total <= self.flat_total * 1.01,
            "{what}: {:.0} m against the flat search's {:.0} m",
            self.hierarchical_total,
            self.flat_total
        );
    }
}

/// Asks one query both ways and tallies it; the verdicts must agree.
fn compare_one(
    snapshot: &Snapshot,
    hierarchy: &Hierarchy,
    scratch: &mut HierarchyScratch,
    pool: &mut NodePool,
    (start, start_position): (PolyRef, Vec3),
    (end, end_position): (PolyRef, Vec3),
    tally: &mut Tally,
) {
    let filter = hierarchy.filter();
    let flat = find_path(
        snapshot,
        start,
        start_position,
        end,
        end_position,
        filter,
        pool,
    )
    .unwrap();
    assert!(!flat.out_of_nodes);
    // The ports join two points exactly when the flat search reaches one from the other.
    let planned = hierarchy
        .plan(snapshot, start, start_position, end, end_position, scratch)
        .unwrap();
    assert_eq!(planned.is_some(), flat.complete);
    let hierarchical = hierarchy
        .find_path(snapshot, start, start_position, end, end_position, scratch)
        .unwrap();
    assert_eq!(
        hierarchical.complete, flat.complete,
        "{start_position} to {end_position}"
    );
    assert_eq!(hierarchical.steps[0].polygon, start);
    // Consecutive polygons are neighbours: the corridor is walkable.
    for pair in hierarchical.steps.windows(2) {
        assert!(
            waymark::query::portal(snapshot, pair[0].polygon, pair[1].polygon).is_some(),
            "{:?} and {:?} are not neighbours",
            pair[0].polygon,
            pair[1].polygon
        );
    }
    let ours = length(snapshot, &hierarchical, start_position, end_position);
    let theirs = length(snapshot, &flat, start_position, end_position);
    tally.queries += 1;
    tally.complete += usize::from(flat.complete);
    if ours <= theirs * 1.05 + 1e-3 {
        tally.within += 1;
    }
    tally.flat_total += f64::from(theirs);
    tally.hierarchical_total += f64::from(ours);
}

fn compare_reference_queries(level: &str, queries: &str) -> Tally {
    let mesh = tiled_level(level, Preset::Recast);
    let snapshot = mesh.snapshot();
    assert!(
        snapshot.data().slots.len() >= 9,
        "{level} is baked in tiles"
    );
    let filter = QueryFilter::new();
    let hierarchy = Hierarchy::new(&snapshot, &filter);
    let mut scratch = HierarchyScratch::with_pool_nodes(POOL_NODES);
    let mut pool = NodePool::new(POOL_NODES);
    let extents = Vec3::new(2.0, 4.0, 2.0);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/levels");
    let text = std::fs::read_to_string(root.join(queries)).unwrap();
    let mut tally = Tally::default();
    for line in text.lines().skip(1) {
        let values: Vec<f32> = line.split(',').map(|v| v.parse().unwrap()).collect();
        let start = Vec3::new(values[0], values[1], values[2]);
        let end = Vec3::new(values[3], values[4], values[5]);
        let from = nearest_polygon(&snapshot, start, extents, &filter).unwrap();
        let to = nearest_polygon(&snapshot, end, extents, &filter).unwrap();
        let (Some(from), Some(to)) = (from, to) else {
            continue;
        };
        compare_one(
            &snapshot,
            &hierarchy,
            &mut scratch,
            &mut pool,
            (from.polygon, from.point),
            (to.polygon, to.point),
            &mut tally,
        );
    }
    tally
}

#[test]
fn hierarchical_paths_match_flat_paths_on_the_dungeon() {
    let tally = compare_reference_queries("dungeon.obj", "dungeon_queries.csv");
    assert!(tally.queries >= 900, "{} queries", tally.queries);
    assert!(tally.complete >= 300, "{} complete", tally.complete);
    tally.check("dungeon");
}

#[test]
fn hierarchical_paths_match_flat_paths_on_nav_test() {
    let tally = compare_reference_queries("nav_test.obj", "nav_test_queries.csv");
    assert!(tally.queries >= 900, "{} queries", tally.queries);
    assert!(tally.complete >= 100, "{} complete", tally.complete);
    tally.check("nav_test");
}

#[test]
fn hierarchical_paths_match_flat_paths_across_the_tiled_city() {
    let mesh = tiled_city();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let hierarchy = Hierarchy::new(&snapshot, &filter);
    let mut scratch = HierarchyScratch::with_pool_nodes(POOL_NODES);
    let mut pool = NodePool::new(POOL_NODES);
    let starts = random_points(&snapshot, &filter, 300, 21);
    let ends = random_points(&snapshot, &filter, 300, 22);
    let mut tally = Tally::default();
    for (&start, &end) in starts.iter().zip(&ends) {
        compare_one(
            &snapshot,
            &hierarchy,
            &mut scratch,
            &mut pool,
            start,
            end,
            &mut tally,
        );
    }
    assert!(tally.complete >= 200, "{} complete", tally.complete);
    tally.check("city");
}

/// A tile committed again: the hierarchy refuses the new snapshot until brought up to
/// it, rebuilds that tile and its neighbours only, and then answers as one built on the
/// new snapshot; routes that read the tile are stale, the others stay valid.
#[test]
fn a_hierarchy_follows_mesh_changes() {
    let mut mesh = tiled_city();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let mut hierarchy = Hierarchy::new(&snapshot, &filter);
    assert!(hierarchy.port_count() > 100);
    let mut scratch = HierarchyScratch::with_pool_nodes(POOL_NODES);
    let starts = random_points(&snapshot, &filter, 40, 31);
    let ends = random_points(&snapshot, &filter, 40, 32);
    let routes: Vec<_> = starts
        .iter()
        .zip(&ends)
        .filter_map(|(&(start, start_position), &(end, end_position))| {
            hierarchy
                .plan(
                    &snapshot,
                    start,
                    start_position,
                    end,
                    end_position,
                    &mut scratch,
                )
                .unwrap()
        })
        .collect();
    assert!(routes.len() >= 25, "{} routes", routes.len());
    // A tile on the first route, away from its start.
    let changed_slot = routes[0]
        .read_set()
        .tiles
        .iter()
        .rev()
        .find(|read| read.on_route)
        .unwrap()
        .slot;
    let (tile, _) = snapshot.live_slot(changed_slot).unwrap();
    mesh.add_tiles(vec![tile.data.clone()]).unwrap();
    let changed = mesh.snapshot();
    let (start, start_position) = random_points(&changed, &filter, 1, 33)[0];
    let (end, end_position) = random_points(&changed, &filter, 1, 34)[0];
    assert_eq!(
        hierarchy
            .plan(
                &changed,
                start,
                start_position,
                end,
                end_position,
                &mut scratch
            )
            .err(),
        Some(QueryError::HierarchyOutOfDate)
    );
    let rebuilt = hierarchy.update(&changed);
    // The tile's cluster and those of the tiles across its sides, at most.
    assert!((1..=5).contains(&rebuilt), "{rebuilt} clusters rebuilt");
    let fresh = Hierarchy::new(&changed, &filter);
    let mut fresh_scratch = HierarchyScratch::with_pool_nodes(POOL_NODES);
    for (&(start, start_position), &(end, end_position)) in random_points(&changed, &filter, 60, 35)
        .iter()
        .zip(&random_points(&changed, &filter, 60, 36))
    {
        let kept = hierarchy
            .find_path(
                &changed,
                start,
                start_position,
                end,
                end_position,
                &mut scratch,
            )
            .unwrap();
        let built = fresh
            .find_path(
                &changed,
                start,
                start_position,
                end,
                end_position,
                &mut fresh_scratch,
            )
            .unwrap();
        assert_eq!(kept.steps, built.steps);
        assert_eq!(kept.complete, built.complete);
    }
    let (mut crossing, mut clear) = (0, 0);
    for route in &routes {
        let reads_it = route
            .read_set()
            .tiles
            .iter()
            .any(|read| read.slot == changed_slot);
        let validity = route.read_set().still_valid_in(&changed, &filter, |_| None);
        if reads_it {
            assert_eq!(validity, Validity::TileChanged(changed_slot));
            crossing += 1;
        } else {
            assert_eq!(validity, Validity::Valid);
            clear += 1;
        }
    }
    assert!(
        crossing >= 1,
        "{crossing} routes read the tile, {clear} do not"
    );
    // Refining leg by leg gives the whole corridor, the legs joined without a repeat.
    for route in &routes {
        let legs = route.legs().len();
        let whole = route.refine(&hierarchy, 0..legs, &mut scratch);
        let mut by_legs = Vec::new();
        for leg in 0..legs {
            by_legs.extend(route.refine(&hierarchy, leg..leg + 1, &mut scratch));
        }
        assert_eq!(whole, by_legs);
        for pair in whole.windows(2) {
            assert_ne!(pair[0].polygon, pair[1].polygon);
        }
    }
}

/// Bad input is refused by name: a point that is not finite, a stale polygon.
#[test]
fn a_hierarchy_refuses_bad_input() {
    let mesh = tiled_city();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let hierarchy = Hierarchy::new(&snapshot, &filter);
    let mut scratch = HierarchyScratch::default();
    let (start, start_position) = random_points(&snapshot, &filter, 1, 41)[0];
    assert!(matches!(
        hierarchy.find_path(
            &snapshot,
            start,
            start_position,
            start,
            Vec3::NAN,
            &mut scratch
        ),
        Err(QueryError::NotFinite { .. })
    ));
    let stale = PolyRef::new(
        waymark::mesh::TileGeneration(start.generation().0 + 7),
        start.slot(),
        start.polygon(),
    )
    .unwrap();
    assert_eq!(
        hierarchy
            .find_path(
                &snapshot,
                stale,
                start_position,
                start,
                start_position,
                &mut scratch
            )
            .err(),
        Some(QueryError::StaleRef(stale))
    );
}
