//! Shared destinations: a path read off a destination tree is as good as one searched
//! from the same start, reaches the same verdict, and is checked against mesh changes.

use glam::Vec3;
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::mesh::NavMesh;
use waymark::query::{
    DestinationTree, NODE_POOL_DEFAULT, NodePool, PathStep, QueryError, QueryFilter, Validity,
    find_path, portal, random_points, straight_path,
};
use waymark::scene::obj::{ObjOptions, load_obj};

fn dungeon() -> NavMesh {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/levels/dungeon.obj");
    let world = load_obj(&path, &ObjOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap();
    NavMesh::from_file(
        bake(&world, &BakeConfig::preset(Preset::Recast))
            .unwrap()
            .to_file(),
    )
    .unwrap()
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

/// The cost of the way from `start` along `steps` to `goal` by the search's model:
/// through the midpoints of the portals between consecutive polygons (area cost 1).
fn model_cost(
    snapshot: &waymark::mesh::Snapshot,
    steps: &[PathStep],
    start: Vec3,
    goal: Vec3,
) -> f32 {
    let mut at = start;
    let mut total = 0.0;
    for pair in steps.windows(2) {
        let (left, right) = portal(snapshot, pair[0].polygon, pair[1].polygon).unwrap();
        let midpoint = (left + right) * 0.5;
        total += at.distance(midpoint);
        at = midpoint;
    }
    total + at.distance(goal)
}

/// For 400 random starts toward one random goal: the tree reaches exactly the starts
/// whose search is complete; its cost is its corridor's, and never above the searched
/// corridor's by the same model (the tree is exact for the model, the search keeps one
/// node a polygon and only approaches it); and over all starts its straight paths are no
/// longer than the searched ones by more than 1%. (The model itself, through portal
/// midpoints, can rank two corridors against their straight paths: on the street grid a
/// few tree corridors of lower model cost pull 5% longer than the searched ones.)
fn assert_tree_matches_searches(mesh: &NavMesh, seed: u64) {
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let (goal, goal_position) = random_points(&snapshot, &filter, 1, seed)[0];
    let tree = DestinationTree::build(&snapshot, goal, goal_position, &filter).unwrap();
    let mut pool = NodePool::new(NODE_POOL_DEFAULT);
    let mut complete = 0;
    let (mut tree_total, mut searched_total) = (0.0, 0.0);
    for (start, start_position) in random_points(&snapshot, &filter, 400, seed + 1) {
        let searched = find_path(
            &snapshot,
            start,
            start_position,
            goal,
            goal_position,
            &filter,
            &mut pool,
        )
        .unwrap();
        let along_tree = tree.path_from(&snapshot, start, start_position);
        assert_eq!(along_tree.is_some(), searched.complete, "start {start:?}");
        let cost = tree.cost_from(&snapshot, start, start_position);
        assert_eq!(cost.is_some(), searched.complete);
        let (Some(along_tree), Some(cost)) = (along_tree, cost) else {
            continue;
        };
        complete += 1;
        assert_eq!(along_tree.steps[0].polygon, start);
        assert_eq!(along_tree.steps.last().unwrap().polygon, goal);
        assert!(along_tree.read_set.tiles.iter().all(|read| read.on_route));
        let own = model_cost(&snapshot, &along_tree.steps, start_position, goal_position);
        let searched_cost = model_cost(&snapshot, &searched.steps, start_position, goal_position);
        assert!(
            (cost - own).abs() <= 1e-3 * own.max(1.0),
            "{cost} against {own}"
        );
        assert!(
            cost <= searched_cost * (1.0 + 1e-5) + 1e-4,
            "{cost} against {searched_cost}"
        );
        let length = |steps: &[PathStep]| -> f32 {
            let corners = straight_path(&snapshot, steps, start_position, goal_position).unwrap();
            corners
                .windows(2)
                .map(|pair| pair[0].position.distance(pair[1].position))
                .sum()
        };
        tree_total += length(&along_tree.steps);
        searched_total += length(&searched.steps);
    }
    assert!(complete >= 100, "only {complete} starts reach the goal");
    assert!(
        tree_total <= 1.01 * searched_total,
        "tree paths {tree_total:.0} m against searched {searched_total:.0} m"
    );
}

#[test]
fn tree_paths_match_searched_paths_on_the_dungeon() {
    let mesh = dungeon();
    for seed in [1, 7, 19] {
        assert_tree_matches_searches(&mesh, seed);
    }
}

#[test]
fn tree_paths_match_searched_paths_across_tile_borders() {
    let mesh = tiled_city();
    assert!(mesh.snapshot().data().slots.len() > 16, "a tiled level");
    for seed in [3, 11] {
        assert_tree_matches_searches(&mesh, seed);
    }
}

/// The tree reads every tile it crossed into; a changed tile makes it, and a path read off
/// it that crosses the tile, stale, and one that does not cross it stays valid.
#[test]
fn a_tree_and_its_paths_are_checked_against_mesh_changes() {
    let mut mesh = tiled_city();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let (goal, goal_position) = random_points(&snapshot, &filter, 1, 5)[0];
    let tree = DestinationTree::build(&snapshot, goal, goal_position, &filter).unwrap();
    let live_tiles = (0..snapshot.data().slots.len())
        .filter(|&slot| {
            snapshot
                .live_slot(waymark::mesh::TileSlot(slot as u16))
                .is_some()
        })
        .count();
    // The city's raised plazas and the pieces of floor cut off by buildings are not all
    // reachable; most tiles are.
    let read = tree.read_set().tiles.len();
    assert!(
        read * 4 >= live_tiles * 3 && read <= live_tiles,
        "{read} of {live_tiles} tiles read"
    );
    let starts = random_points(&snapshot, &filter, 50, 6);
    let paths: Vec<_> = starts
        .iter()
        .filter_map(|&(start, position)| tree.path_from(&snapshot, start, position))
        .collect();
    assert!(paths.len() >= 40);
    // Commit again (a new generation) the start tile of a path, away from the goal's.
    let changed_slot = paths
        .iter()
        .map(|path| path.steps[0].polygon.slot())
        .find(|&slot| slot != goal.slot())
        .unwrap();
    let (tile, _) = snapshot.live_slot(changed_slot).unwrap();
    mesh.add_tiles(vec![tile.data.clone()]).unwrap();
    let changed = mesh.snapshot();
    assert_eq!(
        tree.read_set().still_valid_in(&changed, &filter, |_| None),
        Validity::TileChanged(changed_slot)
    );
    let (mut crossing, mut clear) = (0, 0);
    for path in &paths {
        let crosses = path
            .read_set
            .tiles
            .iter()
            .any(|read| read.slot == changed_slot);
        let validity = path.read_set.still_valid_in(&changed, &filter, |_| None);
        if crosses {
            assert_eq!(validity, Validity::TileChanged(changed_slot));
            crossing += 1;
        } else {
            assert_eq!(validity, Validity::Valid);
            clear += 1;
        }
    }
    assert!(
        crossing >= 1 && clear >= 1,
        "{crossing} paths cross the tile, {clear} do not"
    );
    // A stale goal is refused by name, as is a goal point that is not finite.
    let (stale, stale_position) = paths
        .iter()
        .map(|path| path.steps[0].polygon)
        .find(|polygon| polygon.slot() == changed_slot)
        .map(|polygon| (polygon, goal_position))
        .unwrap();
    assert_eq!(
        DestinationTree::build(&changed, stale, stale_position, &filter).err(),
        Some(QueryError::StaleRef(stale))
    );
    let (fresh_goal, _) = random_points(&changed, &filter, 1, 5)[0];
    assert!(matches!(
        DestinationTree::build(&changed, fresh_goal, Vec3::NAN, &filter),
        Err(QueryError::NotFinite { .. })
    ));
}

/// A goal in an area the filter refuses is entered by no way, as the search never enters
/// it: a start beside it is not in the tree and its search is not complete; a start in
/// the goal's own polygon still reaches it.
#[test]
fn a_goal_the_filter_refuses_is_reached_from_itself_only() {
    use waymark::ids::AreaId;
    use waymark::mesh::{TileData, WalkablePolygon};
    let square = |x0: f32, area: AreaId| WalkablePolygon {
        corners: vec![
            Vec3::new(x0, 0.0, 0.0),
            Vec3::new(x0 + 2.0, 0.0, 0.0),
            Vec3::new(x0 + 2.0, 0.0, 2.0),
            Vec3::new(x0, 0.0, 2.0),
        ],
        area,
        layer: 0,
    };
    let polygons = [
        square(0.0, AreaId::GROUND),
        square(2.0, AreaId::WATER),
        square(4.0, AreaId::GROUND),
    ];
    let params = waymark::mesh::blob::BakeParams {
        agent_radius_m: 0.3,
        agent_height_m: 2.0,
        agent_max_climb_m: 0.3,
        ..Default::default()
    };
    let mut mesh = NavMesh::new(params);
    mesh.add_tiles(vec![TileData::from_walkable_polygons(&polygons).unwrap()])
        .unwrap();
    let snapshot = mesh.snapshot();
    let mut filter = QueryFilter::new();
    filter.set_area_excluded(AreaId::WATER, true);
    let at = |point: Vec3| {
        waymark::query::nearest_polygon(&snapshot, point, Vec3::splat(0.5), &QueryFilter::new())
            .unwrap()
            .unwrap()
            .polygon
    };
    let (beside, goal) = (Vec3::new(1.0, 0.0, 1.0), Vec3::new(3.0, 0.0, 1.0));
    let (beside_polygon, goal_polygon) = (at(beside), at(goal));
    let tree = DestinationTree::build(&snapshot, goal_polygon, goal, &filter).unwrap();
    let mut pool = NodePool::new(NODE_POOL_DEFAULT);
    let searched = find_path(
        &snapshot,
        beside_polygon,
        beside,
        goal_polygon,
        goal,
        &filter,
        &mut pool,
    )
    .unwrap();
    assert!(!searched.complete);
    assert!(tree.path_from(&snapshot, beside_polygon, beside).is_none());
    let from_itself = tree
        .path_from(&snapshot, goal_polygon, goal + Vec3::new(0.5, 0.0, 0.0))
        .unwrap();
    assert_eq!(from_itself.steps.len(), 1);
    // Without the exclusion the beside start reaches it through the portal.
    let open = DestinationTree::build(&snapshot, goal_polygon, goal, &QueryFilter::new()).unwrap();
    assert_eq!(
        open.path_from(&snapshot, beside_polygon, beside)
            .unwrap()
            .steps
            .len(),
        2
    );
}
