//! Scene edits end to end (spec 002 n6 with spec 001's rebuild protocol): moving an
//! instance or scaling its parent marks pending exactly the tiles built from its old
//! version and those its triangles reach now, in one step; rebuilt and committed, the mesh
//! equals a fresh bake of the edited scene tile for tile; a crowd's corridor over a pending
//! tile is rejected by its read set, and the walker re-plans around the moved obstacle.

#![cfg(feature = "bake")]

use std::collections::BTreeSet;

use glam::{Affine3A, Vec3};
use waymark::bake::edit::{mark_scene_edit, rebuild_pending};
use waymark::bake::{BakeConfig, BakeError, Preset, bake};
use waymark::crowd::{
    AgentParams, AgentStatus, Crowd, CrowdConfig, CrowdEvent, KinematicController,
};
use waymark::mesh::{NavMesh, TileData, TileSlot};
use waymark::query::{QueryFilter, nearest_polygon};
use waymark::scene::{InstanceDesc, InstanceId, NodeId, Scene, TriMesh, WorldTriangles};

/// A 30 m square floor and a 3 m crate standing on it at x, z 5..8, under a parent node.
fn yard() -> (Scene, NodeId, InstanceId) {
    let mut scene = Scene::new();
    let floor = scene.add_mesh(TriMesh::axis_box(
        "floor",
        Vec3::new(0.0, -0.2, 0.0),
        Vec3::new(30.0, 0.0, 30.0),
    ));
    scene
        .add_instance(InstanceDesc::new("floor", floor))
        .unwrap();
    let crate_mesh = scene.add_mesh(TriMesh::axis_box(
        "crate",
        Vec3::new(5.0, 0.0, 5.0),
        Vec3::new(8.0, 2.0, 8.0),
    ));
    let parent = scene.add_node("stack", None, Affine3A::IDENTITY).unwrap();
    let crate_instance = scene
        .add_instance(InstanceDesc::new("crate", crate_mesh).under(parent))
        .unwrap();
    (scene, parent, crate_instance)
}

fn config() -> BakeConfig {
    BakeConfig {
        tile_size_cells: Some(32),
        ..BakeConfig::preset(Preset::Recast)
    }
}

/// Tiles (column, row) of `tiles` built from `instance`.
fn tiles_from(tiles: &[TileData], instance: InstanceId) -> BTreeSet<(i32, i32)> {
    tiles
        .iter()
        .filter(|tile| {
            tile.sources
                .iter()
                .any(|source| source.instance == instance.0)
        })
        .map(|tile| (tile.header.tile_x, tile.header.tile_z))
        .collect()
}

/// The mesh's live tiles by coordinate.
fn live_tiles(mesh: &NavMesh) -> Vec<TileData> {
    let snapshot = mesh.snapshot();
    (0..snapshot.data().slots.len())
        .filter_map(|slot| snapshot.live_slot(TileSlot(slot as u16)))
        .map(|(tile, _)| tile.data.clone())
        .collect()
}

/// Marks and rebuilds the edit now in `world`, checks the marked tiles are exactly
/// `expected`, and that the mesh then equals a fresh bake of `world`.
fn edit_and_compare(mesh: &mut NavMesh, world: &WorldTriangles, expected: &BTreeSet<(i32, i32)>) {
    let generations_before: Vec<_> = mesh
        .snapshot()
        .data()
        .slots
        .iter()
        .map(|view| (view.tile, view.generation))
        .collect();
    let pending = mark_scene_edit(mesh, world, &config()).unwrap();
    let marked: BTreeSet<(i32, i32)> = pending.tiles.iter().copied().collect();
    assert_eq!(
        &marked, expected,
        "the tiles built from the old version and reached now"
    );
    assert_eq!(marked.len(), pending.tiles.len(), "each tile once");
    // Marked tiles are pending (no query sees them); every other tile kept its generation.
    let snapshot = mesh.snapshot();
    for (view, (tile, generation)) in snapshot.data().slots.iter().zip(&generations_before) {
        assert_eq!(view.tile, *tile);
        if marked.contains(tile) {
            assert!(
                matches!(view.state, waymark::mesh::SlotState::Pending),
                "{tile:?}"
            );
        } else {
            assert_eq!(view.generation, *generation, "{tile:?} untouched");
        }
    }
    let rebuilt = rebuild_pending(mesh, world, &config(), &pending.tiles).unwrap();
    assert!(rebuilt.stale.is_empty());
    assert_eq!(rebuilt.committed.len(), pending.tiles.len());
    // The same as baking the edited scene from scratch, tile for tile.
    let fresh = bake(world, &config()).unwrap().tiles;
    let mut now = live_tiles(mesh);
    now.retain(|tile| !tile.polygons.is_empty() || !tile.sources.is_empty());
    now.sort_by_key(|tile| (tile.header.tile_z, tile.header.tile_x));
    assert_eq!(now.len(), fresh.len());
    for (ours, theirs) in now.iter().zip(&fresh) {
        assert_eq!(
            ours, theirs,
            "tile ({}, {})",
            theirs.header.tile_x, theirs.header.tile_z
        );
    }
}

#[test]
fn moving_an_instance_rebuilds_its_old_and_new_tiles_and_nothing_else() {
    let (mut scene, _, crate_instance) = yard();
    let before = bake(&scene.world_triangles().unwrap(), &config()).unwrap();
    let mut mesh = NavMesh::from_file(before.to_file()).unwrap();
    let old_tiles = tiles_from(&before.tiles, crate_instance);
    scene
        .set_instance_transform(
            crate_instance,
            Affine3A::from_translation(Vec3::new(15.0, 0.0, 15.0)),
        )
        .unwrap();
    let world = scene.world_triangles().unwrap();
    let new_tiles = tiles_from(&bake(&world, &config()).unwrap().tiles, crate_instance);
    // The crate's old and new tiles differ (its grid's border reaches a shared one).
    assert!(
        !new_tiles.is_subset(&old_tiles),
        "{old_tiles:?} {new_tiles:?}"
    );
    let expected = old_tiles.union(&new_tiles).copied().collect();
    edit_and_compare(&mut mesh, &world, &expected);
    // Nothing changed since: nothing to mark.
    assert!(
        mark_scene_edit(&mut mesh, &world, &config())
            .unwrap()
            .tiles
            .is_empty()
    );
}

#[test]
fn n6_scaling_the_parent_rebuilds_the_childs_tiles_as_a_fresh_bake_would() {
    let (mut scene, parent, crate_instance) = yard();
    let before = bake(&scene.world_triangles().unwrap(), &config()).unwrap();
    let mut mesh = NavMesh::from_file(before.to_file()).unwrap();
    let old_tiles = tiles_from(&before.tiles, crate_instance);
    // Scaled 1.5 about the origin: the crate now spans x, z 7.5..12, 3 m tall.
    scene
        .set_node_transform(parent, Affine3A::from_scale(Vec3::splat(1.5)))
        .unwrap();
    let world = scene.world_triangles().unwrap();
    let new_tiles = tiles_from(&bake(&world, &config()).unwrap().tiles, crate_instance);
    let expected = old_tiles.union(&new_tiles).copied().collect();
    edit_and_compare(&mut mesh, &world, &expected);
}

#[test]
fn an_edit_that_moves_the_levels_grid_is_refused() {
    let (mut scene, _, crate_instance) = yard();
    let before = bake(&scene.world_triangles().unwrap(), &config()).unwrap();
    let mut mesh = NavMesh::from_file(before.to_file()).unwrap();
    scene
        .set_instance_transform(
            crate_instance,
            Affine3A::from_translation(Vec3::new(-20.0, 0.0, 0.0)),
        )
        .unwrap();
    let world = scene.world_triangles().unwrap();
    let error = mark_scene_edit(&mut mesh, &world, &config()).unwrap_err();
    assert!(matches!(error, BakeError::GridMoved { .. }), "{error}");
    assert!(error.to_string().contains("bake the level again"));
    // Refused before anything was marked.
    assert_eq!(live_tiles(&mesh).len(), before.tiles.len());
}

#[test]
fn a_walkers_corridor_over_the_edit_is_rejected_and_it_walks_round_the_moved_crate() {
    let (mut scene, _, crate_instance) = yard();
    let before = bake(&scene.world_triangles().unwrap(), &config()).unwrap();
    let mut mesh = NavMesh::from_file(before.to_file()).unwrap();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let params = AgentParams::DETOUR_REFERENCE;
    // Along z = 16.5, straight through where the crate will land (x, z 15..18 after it
    // moves by 10 m).
    let agent = crowd.add_agent(Vec3::new(2.0, 0.0, 16.5), params).unwrap();
    crowd
        .request_move(agent, Vec3::new(28.0, 0.0, 16.5))
        .unwrap();
    let mut controller = KinematicController;
    for _ in 0..20 {
        crowd.step(1.0 / 30.0, &mut controller).unwrap();
    }
    assert!(
        crowd.corridor(agent).unwrap().is_some(),
        "walking on a corridor"
    );

    scene
        .set_instance_transform(
            crate_instance,
            Affine3A::from_translation(Vec3::new(10.0, 0.0, 10.0)),
        )
        .unwrap();
    let world = scene.world_triangles().unwrap();
    let pending = mark_scene_edit(&mut mesh, &world, &config()).unwrap();
    crowd.set_mesh(&mesh);
    let events = crowd.step(1.0 / 30.0, &mut controller).unwrap();
    assert!(
        events.iter().any(
            |event| matches!(event, CrowdEvent::RouteInvalidated { agent: a, .. } if *a == agent)
        ),
        "the corridor read a tile that went pending: {events:?}"
    );

    // While its tile is pending the walker has no polygon to plan from: its order waits
    // (no failure) and nothing plans over the pending tiles.
    let snapshot = mesh.snapshot();
    for _ in 0..10 {
        crowd.step(1.0 / 30.0, &mut controller).unwrap();
        assert_eq!(crowd.status(agent).unwrap(), AgentStatus::WaitingForPath);
    }
    let on_pending = |point: Vec3| {
        nearest_polygon(
            &snapshot,
            point,
            Vec3::new(1.0, 2.0, 1.0),
            &QueryFilter::new(),
        )
        .unwrap()
        .is_none()
    };
    assert!(on_pending(crowd.position(agent).unwrap()));

    let rebuilt = rebuild_pending(&mut mesh, &world, &config(), &pending.tiles).unwrap();
    assert_eq!(rebuilt.committed.len(), pending.tiles.len());
    crowd.set_mesh(&mesh);
    // The body keeps its radius from the crate (x, z 15..18 now), less one cell of the
    // bake's erosion grid (0.3 m).
    let clearance = |at: Vec3| {
        let dx = (15.0 - at.x).max(at.x - 18.0).max(0.0);
        let dz = (15.0 - at.z).max(at.z - 18.0).max(0.0);
        (dx * dx + dz * dz).sqrt()
    };
    let mut arrived = false;
    for _ in 0..1200 {
        let events = crowd.step(1.0 / 30.0, &mut controller).unwrap();
        let at = crowd.position(agent).unwrap();
        assert!(
            clearance(at) >= params.radius_m - 0.3,
            "the walker stands {} m from the moved crate, at {at}",
            clearance(at)
        );
        if events
            .iter()
            .any(|event| matches!(event, CrowdEvent::Arrived { agent: a, .. } if *a == agent))
        {
            arrived = true;
            break;
        }
    }
    assert!(
        arrived,
        "the walker reaches its target round the crate: {:?} at {}, {:?}",
        crowd.status(agent),
        crowd.position(agent).unwrap(),
        crowd
            .corridor(agent)
            .unwrap()
            .map(|corridor| corridor.len())
    );
}
