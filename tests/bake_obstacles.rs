//! Temporary obstacles rebuilt from the tile cache: the cache's bake is the plain bake,
//! byte for byte; an obstacle's tiles go pending at once and come back without walkable
//! space within the body radius of its footprint (or with its area); removing every
//! obstacle gives back the original tiles exactly; bad shapes and stale handles are refused
//! naming the value.

#![cfg(feature = "bake")]

mod common;

use glam::{Vec2, Vec3};
use waymark::bake::tile_cache::{
    ObstacleEffect, ObstacleError, ObstacleRebuild, ObstacleShape, TileCache,
};
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::ids::AreaId;
use waymark::mesh::{NavMesh, TileData, TilePoly, TileSlot};
use waymark::query::{QueryFilter, nearest_polygon};
use waymark::scene::WorldTriangles;
use waymark::scene::obj::{ObjOptions, load_obj};

fn dungeon() -> WorldTriangles {
    load_obj(&common::level_path("dungeon.obj"), &ObjOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap()
}

fn config() -> BakeConfig {
    BakeConfig {
        tile_size_cells: Some(48),
        ..BakeConfig::preset(Preset::Recast)
    }
}

fn live_tiles(mesh: &NavMesh) -> Vec<TileData> {
    let snapshot = mesh.snapshot();
    let mut tiles: Vec<TileData> = (0..snapshot.data().slots.len())
        .filter_map(|slot| snapshot.live_slot(TileSlot(slot as u16)))
        .map(|(tile, _)| tile.data.clone())
        .collect();
    tiles.sort_by_key(|tile| (tile.header.tile_z, tile.header.tile_x));
    tiles
}

/// The walkable point nearest `near` on the mesh.
fn on_mesh(mesh: &NavMesh, near: Vec3) -> Option<Vec3> {
    nearest_polygon(
        &mesh.snapshot(),
        near,
        Vec3::new(2.0, 4.0, 2.0),
        &QueryFilter::new(),
    )
    .unwrap()
    .map(|nearest| nearest.point)
}

/// The least horizontal distance from `centre` to any polygon whose corners lie within
/// `heights` (0 where the centre is inside one), over the mesh.
fn clearance_from(mesh: &NavMesh, centre: Vec2, heights: std::ops::Range<f32>) -> f32 {
    let mut least = f32::INFINITY;
    for tile in live_tiles(mesh) {
        for polygon in &tile.polygons {
            let corners: Vec<Vec3> = polygon
                .vertex_indices()
                .iter()
                .map(|&v| tile.vertex(v))
                .collect();
            if !corners.iter().any(|corner| heights.contains(&corner.y)) {
                continue;
            }
            let flat: Vec<Vec2> = corners.iter().map(|c| Vec2::new(c.x, c.z)).collect();
            let mut inside = true;
            for (index, &a) in flat.iter().enumerate() {
                let b = flat[(index + 1) % flat.len()];
                let edge = b - a;
                let along = ((centre - a).dot(edge) / edge.length_squared()).clamp(0.0, 1.0);
                least = least.min(centre.distance(a + edge * along));
                // Counter-clockwise or clockwise: inside when on one side of every edge.
                inside &= edge.perp_dot(centre - a) >= 0.0;
            }
            let reversed_inside = flat.iter().enumerate().all(|(index, &a)| {
                let b = flat[(index + 1) % flat.len()];
                (b - a).perp_dot(centre - a) <= 0.0
            });
            if inside || reversed_inside {
                return 0.0;
            }
        }
    }
    least
}

#[test]
fn the_caches_bake_is_the_plain_bake() {
    let world = dungeon();
    let (output, cache) = TileCache::bake(&world, &config()).unwrap();
    let plain = bake(&world, &config()).unwrap();
    assert_eq!(output.to_file().to_bytes(), plain.to_file().to_bytes());
    // The fields are kept compressed, at under half their size.
    let (compressed, raw) = cache.field_bytes();
    assert!(
        compressed > 0 && 2 * compressed < raw,
        "{compressed} of {raw} bytes"
    );
    assert!(cache.memory_bytes() >= compressed);
    assert_eq!(cache.pending_tiles(), 0);
}

#[test]
fn a_carved_cylinder_cuts_its_footprint_grown_by_the_body_and_removing_it_restores_the_bake() {
    cylinder_cuts_and_removing_it_restores_the_bake(ObstacleRebuild::Carve);
}

#[test]
fn a_cylinder_cut_from_voxels_cuts_its_footprint_grown_by_the_body_and_removing_it_restores_the_bake()
 {
    cylinder_cuts_and_removing_it_restores_the_bake(ObstacleRebuild::Voxel);
}

fn cylinder_cuts_and_removing_it_restores_the_bake(rebuild: ObstacleRebuild) {
    let world = dungeon();
    let (output, mut cache) = TileCache::bake(&world, &config()).unwrap();
    cache.set_rebuild(rebuild);
    assert_eq!(cache.rebuild(), rebuild);
    let original = output.to_file().tiles.clone();
    let mut mesh = NavMesh::from_file(output.to_file()).unwrap();
    let base = on_mesh(&mesh, Vec3::new(-3.0, 10.0, 0.0)).expect("a floor in the great hall");
    let shape = ObstacleShape::Cylinder {
        base,
        radius_m: 1.0,
        height_m: 2.0,
    };
    let id = cache
        .add_obstacle(&mut mesh, shape, ObstacleEffect::Cut)
        .unwrap();
    // Pending at once: nothing walkable there until the rebuild commits.
    assert!(cache.pending_tiles() > 0);
    assert_eq!(
        on_mesh(&mesh, base).filter(|p| p.distance(base) < 0.5),
        None
    );
    let update = cache.update(&mut mesh, usize::MAX).unwrap();
    assert_eq!(update.remaining, 0);
    assert!(!update.committed.is_empty());
    // No polygon at the obstacle's floor within its radius plus the body's, less one cell
    // of the voxel grid.
    let body = config().agent_radius_m;
    let heights = base.y - 1.0..base.y + 2.0;
    let clearance = clearance_from(&mesh, Vec2::new(base.x, base.z), heights.clone());
    // A carved cut follows the grown outline (a 12-gon holding the circle: at most 3.5%
    // wider at its corners); a voxel cut is exact to a cell.
    let (short, wide) = match rebuild {
        ObstacleRebuild::Carve => (1e-3, 0.035 * (1.0 + body) + 1e-3),
        ObstacleRebuild::Voxel => (config().cell_size_m, 3.0 * config().cell_size_m),
    };
    assert!(
        clearance >= 1.0 + body - short,
        "a polygon {clearance} m from the cylinder's axis"
    );
    assert!(clearance < 1.0 + body + wide, "{clearance} m: cut too wide");
    let area_with: f64 = live_tiles(&mesh)
        .iter()
        .map(TileData::walkable_area_m2)
        .sum();
    let area_without: f64 = original.iter().map(TileData::walkable_area_m2).sum();
    assert!(
        area_with < area_without - 3.0,
        "{area_with} m² with, {area_without} m² without"
    );

    cache.remove_obstacle(&mut mesh, id).unwrap();
    cache.update(&mut mesh, usize::MAX).unwrap();
    assert_eq!(live_tiles(&mesh), original, "every tile as baked");
    assert_eq!(
        cache.remove_obstacle(&mut mesh, id),
        Err(ObstacleError::Unknown(id))
    );
}

#[test]
fn boxes_cut_and_mark_areas_and_the_budget_spreads_the_rebuild() {
    let world = dungeon();
    let (output, mut cache) = TileCache::bake(&world, &config()).unwrap();
    let original = output.to_file().tiles.clone();
    let mut mesh = NavMesh::from_file(output.to_file()).unwrap();
    let hall = on_mesh(&mesh, Vec3::new(-3.0, 10.0, 0.0)).unwrap();
    // A puddle beside it, on open floor: water, still walkable.
    let open_floor = |at: Vec3| {
        [Vec3::ZERO, Vec3::X, -Vec3::X, Vec3::Z, -Vec3::Z]
            .iter()
            .all(|&step| {
                let probe = at + step * 1.5;
                on_mesh(&mesh, probe)
                    .is_some_and(|p| Vec2::new(p.x - probe.x, p.z - probe.z).length() < 0.05)
            })
    };
    let puddle_at = [
        (4.0, 0.0),
        (-4.0, 0.0),
        (0.0, 4.0),
        (0.0, -4.0),
        (4.0, 4.0),
        (-4.0, -4.0),
    ]
    .into_iter()
    .filter_map(|(x, z)| on_mesh(&mesh, hall + Vec3::new(x, 0.0, z)))
    .find(|&at| open_floor(at))
    .expect("open floor near the hall's centre");
    // A crate turned 30 degrees, cutting.
    let turned = cache
        .add_obstacle(
            &mut mesh,
            ObstacleShape::TurnedBox {
                base: hall,
                half_extents_m: Vec2::new(1.5, 0.5),
                height_m: 1.0,
                yaw_rad: 30f32.to_radians(),
            },
            ObstacleEffect::Cut,
        )
        .unwrap();
    let puddle = cache
        .add_obstacle(
            &mut mesh,
            ObstacleShape::Box {
                min: puddle_at - Vec3::new(1.0, 0.5, 1.0),
                max: puddle_at + Vec3::new(1.0, 0.5, 1.0),
            },
            ObstacleEffect::Area(AreaId::WATER),
        )
        .unwrap();
    let pending = cache.pending_tiles();
    assert!(pending >= 1);
    // One tile a frame.
    let first = cache.update(&mut mesh, 1).unwrap();
    assert_eq!((first.committed.len(), first.remaining), (1, pending - 1));
    while cache.pending_tiles() > 0 {
        cache.update(&mut mesh, 1).unwrap();
    }
    assert_eq!(
        on_mesh(&mesh, hall).filter(|p| p.distance(hall) < 0.3),
        None,
        "cut"
    );
    let water = nearest_polygon(
        &mesh.snapshot(),
        puddle_at,
        Vec3::new(0.5, 2.0, 0.5),
        &QueryFilter::new(),
    )
    .unwrap()
    .expect("the puddle is walkable");
    let snapshot = mesh.snapshot();
    let tile = snapshot.tile(water.polygon).unwrap();
    assert_eq!(
        tile.data.polygons[usize::from(water.polygon.polygon())].area,
        AreaId::WATER.0
    );

    cache.remove_obstacle(&mut mesh, turned).unwrap();
    cache.remove_obstacle(&mut mesh, puddle).unwrap();
    assert_eq!(cache.obstacle_count(), 0);
    cache.update(&mut mesh, usize::MAX).unwrap();
    assert_eq!(live_tiles(&mesh), original);
}

#[test]
fn bad_obstacles_are_refused_naming_the_value() {
    let world = dungeon();
    let (output, mut cache) = TileCache::bake(&world, &config()).unwrap();
    let mut mesh = NavMesh::from_file(output.to_file()).unwrap();
    let cases = [
        (
            ObstacleShape::Cylinder {
                base: Vec3::ZERO,
                radius_m: f32::NAN,
                height_m: 1.0,
            },
            "radius",
        ),
        (
            ObstacleShape::Cylinder {
                base: Vec3::new(f32::INFINITY, 0.0, 0.0),
                radius_m: 1.0,
                height_m: 1.0,
            },
            "base",
        ),
        (
            ObstacleShape::Box {
                min: Vec3::ONE,
                max: Vec3::ZERO,
            },
            "x extent",
        ),
        (
            ObstacleShape::TurnedBox {
                base: Vec3::ZERO,
                half_extents_m: Vec2::ONE,
                height_m: 1.0,
                yaw_rad: f32::NAN,
            },
            "yaw",
        ),
    ];
    for (shape, what) in cases {
        let error = cache
            .add_obstacle(&mut mesh, shape, ObstacleEffect::Cut)
            .unwrap_err();
        assert!(
            matches!(error, ObstacleError::BadShape { what: named, .. } if named == what),
            "{error}"
        );
        assert!(error.to_string().contains(what));
    }
    let shape = ObstacleShape::Cylinder {
        base: Vec3::ZERO,
        radius_m: 1.0,
        height_m: 1.0,
    };
    assert_eq!(
        cache.add_obstacle(&mut mesh, shape, ObstacleEffect::Area(AreaId(0))),
        Err(ObstacleError::BadArea(0))
    );
    assert_eq!(cache.obstacle_count(), 0);
    assert_eq!(
        cache.pending_tiles(),
        0,
        "nothing marked for a refused obstacle"
    );
}

#[test]
fn only_walkers_whose_corridors_read_the_obstacles_tiles_replan_and_they_walk_round_it() {
    use waymark::crowd::{AgentParams, Crowd, CrowdConfig, CrowdEvent, KinematicController};
    use waymark::scene::{InstanceDesc, Scene, TriMesh};
    // A 40 m square floor in tiles of 9.6 m.
    let mut scene = Scene::new();
    let floor = scene.add_mesh(TriMesh::axis_box(
        "floor",
        Vec3::new(0.0, -0.2, 0.0),
        Vec3::new(40.0, 0.0, 40.0),
    ));
    scene
        .add_instance(InstanceDesc::new("floor", floor))
        .unwrap();
    let world = scene.world_triangles().unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(32),
        ..BakeConfig::preset(Preset::Recast)
    };
    let (output, mut cache) = TileCache::bake(&world, &config).unwrap();
    let mut mesh = NavMesh::from_file(output.to_file()).unwrap();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let params = AgentParams::DETOUR_REFERENCE;
    // One walks along z = 5 through where the barrel will stand; the other along z = 35,
    // three tiles away.
    let crossing = crowd.add_agent(Vec3::new(2.0, 0.0, 5.0), params).unwrap();
    crowd
        .request_move(crossing, Vec3::new(38.0, 0.0, 5.0))
        .unwrap();
    let far = crowd.add_agent(Vec3::new(2.0, 0.0, 35.0), params).unwrap();
    crowd.request_move(far, Vec3::new(38.0, 0.0, 35.0)).unwrap();
    let mut controller = KinematicController;
    for _ in 0..15 {
        crowd.step(1.0 / 30.0, &mut controller).unwrap();
    }
    let barrel = Vec3::new(20.0, 0.0, 5.0);
    cache
        .add_obstacle(
            &mut mesh,
            ObstacleShape::Cylinder {
                base: barrel,
                radius_m: 1.5,
                height_m: 1.0,
            },
            ObstacleEffect::Cut,
        )
        .unwrap();
    cache.update(&mut mesh, usize::MAX).unwrap();
    crowd.set_mesh(&mesh);
    let mut invalidated = Vec::new();
    let mut arrived = Vec::new();
    for _ in 0..900 {
        for event in crowd.step(1.0 / 30.0, &mut controller).unwrap() {
            match event {
                CrowdEvent::RouteInvalidated { agent, .. } => invalidated.push(agent),
                CrowdEvent::Arrived { agent, .. } => arrived.push(agent),
                _ => {}
            }
        }
        let at = crowd.position(crossing).unwrap();
        let from_axis = Vec2::new(at.x - barrel.x, at.z - barrel.z).length();
        assert!(
            from_axis >= 1.5 + params.radius_m - config.cell_size_m,
            "the walker at {at} is {from_axis} m from the barrel's axis"
        );
    }
    assert_eq!(
        invalidated,
        vec![crossing],
        "only the walker past the barrel re-plans"
    );
    arrived.sort();
    let mut both = vec![crossing, far];
    both.sort();
    assert_eq!(arrived, both, "both arrive");
}

#[test]
fn a_background_rebuild_commits_what_finished_and_drops_what_a_later_obstacle_outdated() {
    let world = dungeon();
    let (output, mut cache) = TileCache::bake(&world, &config()).unwrap();
    let mut mesh = NavMesh::from_file(output.to_file()).unwrap();
    let hall = on_mesh(&mesh, Vec3::new(-3.0, 10.0, 0.0)).unwrap();
    let barrel = |at: Vec3| ObstacleShape::Cylinder {
        base: at,
        radius_m: 0.8,
        height_m: 1.2,
    };
    cache
        .add_obstacle(&mut mesh, barrel(hall), ObstacleEffect::Cut)
        .unwrap();
    let started = cache.pending_tiles();
    let mut rebuild = cache.start_update(usize::MAX);
    assert_eq!(rebuild.outstanding(), started);
    assert_eq!(cache.pending_tiles(), 0, "handed to the background");
    // A second barrel beside the first while the rebuild runs: the tiles they share are
    // rebuilt again, their first results dropped.
    cache
        .add_obstacle(
            &mut mesh,
            barrel(hall + Vec3::new(1.0, 0.0, 1.0)),
            ObstacleEffect::Cut,
        )
        .unwrap();
    let touched_again = cache.pending_tiles();
    assert!(touched_again > 0);
    let finished = cache.finish_update(&mut mesh, &mut rebuild, true).unwrap();
    assert_eq!(rebuild.outstanding(), 0);
    assert_eq!(
        finished.committed.len(),
        started - touched_again.min(started)
    );
    assert_eq!(finished.remaining, touched_again);
    while cache.pending_tiles() > 0 {
        let mut rebuild = cache.start_update(2);
        cache.finish_update(&mut mesh, &mut rebuild, true).unwrap();
    }

    // The same as both barrels placed and rebuilt in the foreground.
    let (output, mut foreground_cache) = TileCache::bake(&world, &config()).unwrap();
    let mut foreground = NavMesh::from_file(output.to_file()).unwrap();
    for at in [hall, hall + Vec3::new(1.0, 0.0, 1.0)] {
        foreground_cache
            .add_obstacle(&mut foreground, barrel(at), ObstacleEffect::Cut)
            .unwrap();
    }
    foreground_cache
        .update(&mut foreground, usize::MAX)
        .unwrap();
    assert_eq!(live_tiles(&mesh), live_tiles(&foreground));
}

#[test]
fn an_agent_an_obstacle_lands_on_is_put_on_the_nearest_floor() {
    use waymark::crowd::{AgentParams, Crowd, CrowdConfig, KinematicController};
    let world = dungeon();
    let (output, mut cache) = TileCache::bake(&world, &config()).unwrap();
    let mut mesh = NavMesh::from_file(output.to_file()).unwrap();
    let hall = on_mesh(&mesh, Vec3::new(-3.0, 10.0, 0.0)).unwrap();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let params = AgentParams::DETOUR_REFERENCE;
    let standing = crowd.add_agent(hall, params).unwrap();
    let shape = ObstacleShape::Cylinder {
        base: hall,
        radius_m: 1.0,
        height_m: 2.0,
    };
    cache
        .add_obstacle(&mut mesh, shape, ObstacleEffect::Cut)
        .unwrap();
    cache.update(&mut mesh, usize::MAX).unwrap();
    crowd.set_mesh(&mesh);
    let at = crowd.position(standing).unwrap();
    let from_axis = Vec2::new(at.x - hall.x, at.z - hall.z).length();
    assert!(
        from_axis >= 1.0 + params.radius_m - config().cell_size_m,
        "put {from_axis} m from the axis"
    );
    // On the floor of its polygon, and it steps on from there.
    let polygon = crowd.polygon(standing).unwrap();
    let snapshot = mesh.snapshot();
    let (closest, _) = snapshot
        .tile(polygon)
        .unwrap()
        .closest_point(polygon.polygon(), at);
    assert!(Vec2::new(closest.x - at.x, closest.z - at.z).length() < 0.01);
    crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
    assert_eq!(crowd.len(), 1);
}

#[test]
fn a_tile_whose_sources_changed_since_the_caches_bake_is_reported_not_retried_forever() {
    let world = dungeon();
    let (output, mut cache) = TileCache::bake(&world, &config()).unwrap();
    let mut mesh = NavMesh::from_file(output.to_file()).unwrap();
    let hall = on_mesh(&mesh, Vec3::new(-3.0, 10.0, 0.0)).unwrap();
    // Every instance edited since the bake (as a scene edit would record it).
    let instances: std::collections::BTreeSet<u32> = output
        .tiles
        .iter()
        .flat_map(|tile| tile.sources.iter().map(|source| source.instance))
        .collect();
    let changes: Vec<_> = instances
        .iter()
        .map(|&instance| {
            let version = mesh.source_version(instance).unwrap();
            (instance, waymark::ids::SourceVersion(version.0 + 1))
        })
        .collect();
    mesh.apply_source_changes(&changes);
    let shape = ObstacleShape::Cylinder {
        base: hall,
        radius_m: 1.0,
        height_m: 2.0,
    };
    cache
        .add_obstacle(&mut mesh, shape, ObstacleEffect::Cut)
        .unwrap();
    let touched = cache.pending_tiles();
    let update = cache.update(&mut mesh, usize::MAX).unwrap();
    assert!(update.committed.is_empty());
    assert_eq!(update.stale.len(), touched);
    assert_eq!(cache.pending_tiles(), 0, "handed back, not retried");
}

/// Every polygon convex (to 0.1 mm) with 3 to 6 corners, every neighbour naming back across
/// the same two vertices, every detail mesh covering its polygon's area.
fn check_well_formed(tile: &TileData) {
    tile.validate().unwrap();
    for (index, polygon) in tile.polygons.iter().enumerate() {
        let corners: Vec<Vec2> = polygon
            .vertex_indices()
            .iter()
            .map(|&v| Vec2::new(tile.vertex(v).x, tile.vertex(v).z))
            .collect();
        let count = corners.len();
        for i in 0..count {
            let (a, b, c) = (
                corners[i],
                corners[(i + 1) % count],
                corners[(i + 2) % count],
            );
            let turn = (b - a).normalize().perp_dot(c - b);
            assert!(
                turn <= 1e-4,
                "polygon {index} turns the wrong way at {b}: {corners:?}"
            );
        }
        for edge in 0..count {
            let neighbour = polygon.neighbours[edge];
            if neighbour == TilePoly::NO_NEIGHBOUR || neighbour & TilePoly::TILE_EDGE != 0 {
                continue;
            }
            let (a, b) = (polygon.vertices[edge], polygon.vertices[(edge + 1) % count]);
            let other = &tile.polygons[usize::from(neighbour)];
            let other_count = usize::from(other.vertex_count);
            assert!(
                (0..other_count).any(|e| other.vertices[e] == b
                    && other.vertices[(e + 1) % other_count] == a
                    && usize::from(other.neighbours[e]) == index),
                "polygon {index} edge {edge} names {neighbour}, which does not name it back"
            );
        }
        let detail: f32 = tile
            .detail_triangles_of(index)
            .map(|[a, b, c]| 0.5 * (b - a).cross(c - a).y.abs())
            .sum();
        let area = tile.polygon_area_m2(index);
        assert!(
            (detail - area).abs() <= 1e-3 * area.max(1.0),
            "polygon {index}: detail {detail} m², polygon {area} m²"
        );
    }
}

#[test]
fn carving_and_voxels_take_about_the_same_floor_and_carved_tiles_are_well_formed() {
    let world = dungeon();
    let (output, _) = TileCache::bake(&world, &config()).unwrap();
    let original: f64 = output
        .to_file()
        .tiles
        .iter()
        .map(TileData::walkable_area_m2)
        .sum();
    let probe = NavMesh::from_file(output.to_file()).unwrap();
    let hall = on_mesh(&probe, Vec3::new(-3.0, 10.0, 0.0)).unwrap();
    let obstacles = [
        ObstacleShape::Cylinder {
            base: hall,
            radius_m: 1.0,
            height_m: 2.0,
        },
        ObstacleShape::TurnedBox {
            base: hall + Vec3::new(3.5, 0.0, 1.0),
            half_extents_m: Vec2::new(1.5, 0.4),
            height_m: 1.0,
            yaw_rad: 0.5,
        },
        // Overlapping the first.
        ObstacleShape::Box {
            min: hall + Vec3::new(0.5, -0.5, -2.0),
            max: hall + Vec3::new(2.0, 1.0, -0.5),
        },
    ];
    let mut taken = Vec::new();
    for rebuild in [ObstacleRebuild::Carve, ObstacleRebuild::Voxel] {
        let (output, mut cache) = TileCache::bake(&world, &config()).unwrap();
        cache.set_rebuild(rebuild);
        let mut mesh = NavMesh::from_file(output.to_file()).unwrap();
        for shape in obstacles {
            cache
                .add_obstacle(&mut mesh, shape, ObstacleEffect::Cut)
                .unwrap();
        }
        cache.update(&mut mesh, usize::MAX).unwrap();
        let tiles = live_tiles(&mesh);
        if rebuild == ObstacleRebuild::Carve {
            tiles.iter().for_each(check_well_formed);
        }
        let area: f64 = tiles.iter().map(TileData::walkable_area_m2).sum();
        taken.push(original - area);
    }
    let (carved, voxels) = (taken[0], taken[1]);
    // The voxel cut's edge moves by up to a cell (0.3 m) round a perimeter of about 25 m.
    assert!(
        carved > 10.0 && (carved - voxels).abs() <= 0.1 * voxels,
        "carving took {carved} m², voxels {voxels} m²"
    );
}

#[cfg(feature = "harness")]
#[test]
fn the_doors_scenario_walks_a_crowd_through_doors_that_close_under_it() {
    use waymark::crowd::CrowdConfig;
    use waymark::harness::{ScenarioError, run_doors};
    // 100 walkers crossing between two halls for 60 s while one door of three is shut at a
    // time and barricades come and go. Measured: 83 arrivals by 69 agents, 1,781 route
    // invalidations, 32 level changes, 41 tiles rebuilt.
    let report = run_doors(100, CrowdConfig::default()).unwrap();
    assert_eq!(report.level_changes, 32, "{report:?}");
    assert!(report.tiles_rebuilt >= report.level_changes, "{report:?}");
    assert!(report.route_invalidations > 0, "{report:?}");
    assert!(
        report.arrivals >= 60 && report.agents_arrived >= 45,
        "{report:?}"
    );
    assert_eq!(
        (
            report.through_closed_doors,
            report.stale_corridors,
            report.lost_agents
        ),
        (0, 0, 0),
        "{report:?}"
    );
    assert!(matches!(
        run_doors(1, CrowdConfig::default()),
        Err(ScenarioError::Doors { agents: 1 })
    ));
}
