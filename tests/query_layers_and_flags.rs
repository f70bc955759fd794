//! Support layers, polygon flags and approach sides (what spec 000's projection needs from
//! the nearest-polygon query).

use glam::{Vec2, Vec3};
use waymark::bake::{AreaVolume, BakeConfig, Preset, bake_with};
use waymark::ids::AreaId;
use waymark::mesh::{NavMesh, PolyFlags};
use waymark::query::{
    ApproachSide, NearestOptions, QueryError, QueryFilter, nearest_polygon, nearest_polygon_with,
};
use waymark::scene::{InstanceDesc, Scene, TriMesh};

/// Ground (x 0..10), and a raft (x 12..16) riding on support "raft"; a pond on the ground.
fn level() -> NavMesh {
    let mut scene = Scene::new();
    let ground = scene.add_mesh(TriMesh::axis_box(
        "ground",
        Vec3::new(0.0, -0.2, 0.0),
        Vec3::new(10.0, 0.0, 6.0),
    ));
    scene
        .add_instance(InstanceDesc::new("ground", ground))
        .unwrap();
    let raft_support = scene.support("raft");
    let raft = scene.add_mesh(TriMesh::axis_box(
        "raft",
        Vec3::new(12.0, 0.3, 0.0),
        Vec3::new(16.0, 0.5, 6.0),
    ));
    scene
        .add_instance(InstanceDesc::new("raft", raft).on_support(raft_support))
        .unwrap();
    let world = scene.world_triangles().unwrap();
    let pond = AreaVolume {
        corners: vec![
            Vec2::new(2.0, 1.0),
            Vec2::new(5.0, 1.0),
            Vec2::new(5.0, 5.0),
            Vec2::new(2.0, 5.0),
        ],
        min_y: -1.0,
        max_y: 1.0,
        area: AreaId::WATER,
    };
    let config = BakeConfig::preset(Preset::Guard);
    let baked = bake_with(&world, &config, &[pond], &|_, _| {}).unwrap();
    NavMesh::from_file(baked.to_file()).unwrap()
}

#[test]
fn polygons_on_a_support_carry_its_layer_and_queries_can_ask_for_it() {
    let mesh = level();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let on_raft = Vec3::new(14.0, 0.5, 3.0);
    let found = nearest_polygon(&snapshot, on_raft, Vec3::new(2.0, 1.0, 2.0), &filter)
        .unwrap()
        .unwrap();
    let tile = snapshot.tile(found.polygon).unwrap();
    assert_eq!(
        tile.data.polygons[usize::from(found.polygon.polygon())].layer,
        1,
        "support 0 is layer 1"
    );
    // Asking for the ground layer near the raft finds the ground's edge instead.
    let ground = NearestOptions {
        layer: Some(0),
        ..NearestOptions::default()
    };
    let near_raft = Vec3::new(11.0, 0.3, 3.0);
    let on_ground = nearest_polygon_with(
        &snapshot,
        near_raft,
        Vec3::new(3.0, 1.0, 2.0),
        &filter,
        &ground,
    )
    .unwrap()
    .unwrap();
    assert!(on_ground.point.x < 10.0, "{}", on_ground.point);
    let raft_only = NearestOptions {
        layer: Some(1),
        ..NearestOptions::default()
    };
    let on_raft_layer = nearest_polygon_with(
        &snapshot,
        near_raft,
        Vec3::new(3.0, 1.0, 2.0),
        &filter,
        &raft_only,
    )
    .unwrap()
    .unwrap();
    assert!(on_raft_layer.point.x > 12.0, "{}", on_raft_layer.point);
}

#[test]
fn the_approach_side_rejects_polygons_behind_the_plane() {
    let mesh = level();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    // Between ground and raft; approach from +X (the raft's side) only.
    let between = Vec3::new(11.0, 0.3, 3.0);
    let extents = Vec3::new(3.0, 1.0, 2.0);
    let from_east = NearestOptions {
        approach_side: Some(ApproachSide {
            origin: Vec2::new(11.0, 0.0),
            outward: Vec2::X,
        }),
        ..NearestOptions::default()
    };
    let found = nearest_polygon_with(&snapshot, between, extents, &filter, &from_east)
        .unwrap()
        .unwrap();
    assert!(found.point.x >= 11.0, "{}", found.point);
    let from_west = NearestOptions {
        approach_side: Some(ApproachSide {
            origin: Vec2::new(11.0, 0.0),
            outward: -Vec2::X,
        }),
        ..NearestOptions::default()
    };
    let found = nearest_polygon_with(&snapshot, between, extents, &filter, &from_west)
        .unwrap()
        .unwrap();
    assert!(found.point.x <= 11.0, "{}", found.point);
    let broken = NearestOptions {
        approach_side: Some(ApproachSide {
            origin: Vec2::ZERO,
            outward: Vec2::ZERO,
        }),
        ..NearestOptions::default()
    };
    assert!(matches!(
        nearest_polygon_with(&snapshot, between, extents, &filter, &broken),
        Err(QueryError::BadApproachSide { .. })
    ));
}

#[test]
fn water_polygons_swim_and_flag_filters_exclude_them() {
    let mesh = level();
    let snapshot = mesh.snapshot();
    let in_pond = Vec3::new(3.5, 0.0, 3.0);
    let extents = Vec3::new(0.5, 1.0, 0.5);
    let walkers = QueryFilter::new();
    let found = nearest_polygon(&snapshot, in_pond, extents, &walkers)
        .unwrap()
        .unwrap();
    let polygon =
        snapshot.tile(found.polygon).unwrap().data.polygons[usize::from(found.polygon.polygon())];
    assert_eq!(
        (polygon.area, polygon.flags),
        (AreaId::WATER.0, PolyFlags::SWIM)
    );
    let mut dry = QueryFilter::new();
    let version = dry.version();
    dry.set_flags(PolyFlags::WALK, PolyFlags::SWIM);
    assert!(dry.version() > version);
    let dry_found = nearest_polygon(&snapshot, in_pond, extents, &dry).unwrap();
    // The pond (3 m x 4 m) is wider than the box: no walkable polygon within 0.5 m.
    assert_eq!(dry_found, None);
}
