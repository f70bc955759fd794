//! The baker on Recast's own test levels, compared with Recast's figures
//! (`../shared/levels/README.md`): walkable area within 3%, polygon count within 30%, every
//! polygon convex with at most 6 vertices; tiled bakes identical at any thread count; the
//! `.wmnav` file round-trips and refuses damage.

use std::path::Path;
use std::sync::OnceLock;

use glam::{Affine3A, Vec3};
use waymark::bake::{BakeConfig, BakeError, BakeOutput, BakeWarning, Preset, bake};
use waymark::mesh::blob::{BlobError, NavMeshFile};
use waymark::mesh::connectivity::{PolygonGraph, find_polygon_at};
use waymark::scene::obj::{ObjOptions, load_obj};
use waymark::scene::{InstanceDesc, Scene, TriMesh, WorldTriangles};

fn level(name: &str) -> &'static WorldTriangles {
    static DUNGEON: OnceLock<WorldTriangles> = OnceLock::new();
    static NAV_TEST: OnceLock<WorldTriangles> = OnceLock::new();
    let cell = if name == "dungeon.obj" {
        &DUNGEON
    } else {
        &NAV_TEST
    };
    cell.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets/levels")
            .join(name);
        load_obj(&path, &ObjOptions::default())
            .unwrap()
            .world_triangles()
            .unwrap()
    })
}

/// Recast's figures: (level, preset, tiled, polygons, walkable area m²).
const RECAST_REFERENCE: [(&str, Preset, bool, Option<usize>, f64); 6] = [
    ("dungeon.obj", Preset::Recast, false, Some(118), 1585.3),
    ("dungeon.obj", Preset::Guard, false, Some(175), 1722.0),
    ("dungeon.obj", Preset::Recast, true, None, 1580.9),
    ("nav_test.obj", Preset::Recast, false, Some(155), 4002.0),
    ("nav_test.obj", Preset::Guard, false, Some(227), 4464.4),
    ("nav_test.obj", Preset::Recast, true, None, 3998.0),
];

fn config(preset: Preset, tiled: bool) -> BakeConfig {
    BakeConfig {
        tile_size_cells: tiled.then_some(48),
        ..BakeConfig::preset(preset)
    }
}

fn assert_convex_and_small(output: &BakeOutput, label: &str) {
    for (tile_index, tile) in output.tiles.iter().enumerate() {
        for (index, polygon) in tile.polygons.iter().enumerate() {
            let count = polygon.vertex_count as usize;
            assert!(
                (3..=6).contains(&count),
                "{label}: polygon {index} has {count} vertices"
            );
            let corners: Vec<Vec3> = polygon
                .vertex_indices()
                .iter()
                .map(|&v| tile.vertex(v))
                .collect();
            for i in 0..count {
                let (a, b, c) = (
                    corners[i],
                    corners[(i + 1) % count],
                    corners[(i + 2) % count],
                );
                // Counter-clockwise seen from above: a strict left turn at every corner.
                let turn = -((b.x - a.x) * (c.z - a.z) - (c.x - a.x) * (b.z - a.z));
                assert!(
                    turn > 0.0,
                    "{label}: tile {tile_index} polygon {index} is not convex at corner {i}"
                );
            }
        }
        tile.validate().unwrap();
    }
}

#[test]
fn matches_recast_area_and_polygon_count_on_both_levels() {
    let mut report = Vec::new();
    for (name, preset, tiled, recast_polygons, recast_area) in RECAST_REFERENCE {
        let label = format!("{name} {preset:?}{}", if tiled { " tiled" } else { "" });
        let output = bake(level(name), &config(preset, tiled)).unwrap();
        let area_ratio = output.stats.walkable_area_m2 / recast_area;
        report.push(format!(
            "{label}: {} polygons, area {:.1} m² ({:+.2}%)",
            output.stats.polygons,
            output.stats.walkable_area_m2,
            (area_ratio - 1.0) * 100.0
        ));
        assert!(
            (area_ratio - 1.0).abs() <= 0.03,
            "{label}: area {} vs Recast {recast_area}",
            output.stats.walkable_area_m2
        );
        if let Some(recast_polygons) = recast_polygons {
            let polygon_ratio = output.stats.polygons as f64 / recast_polygons as f64;
            assert!(
                (polygon_ratio - 1.0).abs() <= 0.30,
                "{label}: {} polygons vs Recast {recast_polygons}",
                output.stats.polygons
            );
        }
        assert_convex_and_small(&output, &label);
        assert!(output.warnings.is_empty());
    }
    println!("{}", report.join("\n"));
}

#[test]
fn tiled_bake_is_bit_identical_at_1_2_and_8_threads() {
    let world = level("dungeon.obj");
    let bytes_at = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            bake(world, &config(Preset::Recast, true))
                .unwrap()
                .to_file()
                .to_bytes()
        })
    };
    let one = bytes_at(1);
    assert_eq!(one, bytes_at(2));
    assert_eq!(one, bytes_at(8));
}

#[test]
fn tiled_and_solo_bakes_connect_the_same_places() {
    // Every query pair from the shared set whose ends land on both meshes: the two bakes
    // agree on whether the ends are connected for nearly all of them.
    let world = level("dungeon.obj");
    let solo = bake(world, &config(Preset::Recast, false)).unwrap();
    let tiled = bake(world, &config(Preset::Recast, true)).unwrap();
    assert!(tiled.tiles.len() > 1);
    let mut solo_graph = PolygonGraph::build(&solo.tiles, |_, _| false);
    let mut tiled_graph = PolygonGraph::build(&tiled.tiles, |_, _| false);
    let points = [
        Vec3::new(21.58, 15.68, -73.91),
        Vec3::new(-20.43, 5.26, -12.04),
        Vec3::new(20.28, 10.20, -43.15),
        Vec3::new(23.79, 15.29, -64.41),
        Vec3::new(-7.89, 10.20, -18.66),
        Vec3::new(37.84, 10.20, 5.55),
    ];
    let mut compared = 0;
    for &a in &points {
        for &b in &points {
            let (Some(sa), Some(sb)) = (
                find_polygon_at(&solo.tiles, a, 1.0),
                find_polygon_at(&solo.tiles, b, 1.0),
            ) else {
                continue;
            };
            let (Some(ta), Some(tb)) = (
                find_polygon_at(&tiled.tiles, a, 1.0),
                find_polygon_at(&tiled.tiles, b, 1.0),
            ) else {
                continue;
            };
            assert_eq!(
                solo_graph.connected(sa, sb),
                tiled_graph.connected(ta, tb),
                "{a} -> {b}"
            );
            compared += 1;
        }
    }
    assert!(
        compared >= 16,
        "only {compared} pairs landed on both meshes"
    );
}

#[test]
fn tiles_record_the_source_versions_that_reached_them() {
    let world = level("nav_test.obj");
    let output = bake(world, &config(Preset::Recast, true)).unwrap();
    for tile in &output.tiles {
        assert!(!tile.sources.is_empty());
        for source in &tile.sources {
            let summary = &world.instances[source.instance as usize];
            assert_eq!(summary.source_version, source.source_version());
        }
    }
    // Some instance reaches only some tiles: the record is per tile, not global.
    let first = &output.tiles[0].sources;
    assert!(output.tiles.iter().any(|tile| &tile.sources != first));
}

#[test]
fn wmnav_round_trips_and_is_small() {
    let output = bake(level("dungeon.obj"), &config(Preset::Recast, false)).unwrap();
    let file = output.to_file();
    let bytes = file.to_bytes();
    // Detour's navmesh data for the same bake is 18.6 KiB; the budget is 1.5x that.
    assert!(
        bytes.len() as f64 <= 1.5 * 18.6 * 1024.0,
        "{} bytes",
        bytes.len()
    );
    assert_eq!(NavMeshFile::from_bytes(&bytes).unwrap(), file);
}

#[test]
fn damaged_wmnav_files_are_refused_with_typed_errors() {
    let output = bake(level("dungeon.obj"), &config(Preset::Recast, true)).unwrap();
    let bytes = output.to_file().to_bytes();
    // Truncated.
    assert!(matches!(
        NavMeshFile::from_bytes(&bytes[..5]),
        Err(BlobError::Truncated { .. })
    ));
    assert!(matches!(
        NavMeshFile::from_bytes(&bytes[..bytes.len() / 2]),
        Err(BlobError::ChecksumMismatch { .. })
    ));
    // Wrong magic.
    let mut foreign = bytes.clone();
    foreign[..8].copy_from_slice(b"DNAVMESH");
    assert_eq!(
        NavMeshFile::from_bytes(&foreign),
        Err(BlobError::BadMagic {
            found: *b"DNAVMESH"
        })
    );
    // Another format version.
    let mut future = bytes.clone();
    future[8..12].copy_from_slice(&99u32.to_le_bytes());
    assert_eq!(
        NavMeshFile::from_bytes(&future),
        Err(BlobError::UnsupportedVersion { found: 99 })
    );
    // One flipped bit anywhere in the body.
    for position in [20, bytes.len() / 3, bytes.len() - 9] {
        let mut damaged = bytes.clone();
        damaged[position] ^= 0x10;
        assert!(
            matches!(
                NavMeshFile::from_bytes(&damaged),
                Err(BlobError::ChecksumMismatch { .. })
            ),
            "bit at {position}"
        );
    }
    // A consistent checksum over a bad index is still refused, never read out of bounds.
    let mut file = output.to_file();
    file.tiles[0].polygons[0].vertices[0] = 60_000;
    let crafted = file.to_bytes();
    let error = NavMeshFile::from_bytes(&crafted).unwrap_err();
    assert!(
        matches!(&error, BlobError::Malformed { tile: 0, problem } if problem.contains("60000")),
        "{error}"
    );
}

fn floor_scene(extra: &[(&str, TriMesh)]) -> WorldTriangles {
    let mut scene = Scene::new();
    let floor = scene.add_mesh(TriMesh::axis_box(
        "floor",
        Vec3::new(0.0, -0.2, 0.0),
        Vec3::new(8.0, 0.0, 8.0),
    ));
    scene
        .add_instance(InstanceDesc::new("floor", floor))
        .unwrap();
    for (name, mesh) in extra {
        let id = scene.add_mesh(mesh.clone());
        scene
            .add_instance(InstanceDesc::new(*name, id).with_local(Affine3A::IDENTITY))
            .unwrap();
    }
    scene.world_triangles().unwrap()
}

#[test]
fn n1_a_corridor_narrower_than_the_body_is_closed_by_three_cell_erosion() {
    // A 0.77 m corridor through a wall across an 8 m floor: too narrow for a 0.8 m body. Its
    // walls stop 1 cm short of cell boundaries, so exactly five 0.15 m cells (z 3.6 to 4.35)
    // are open. Three cells of erosion close it; two would leave one cell open.
    let wall_left = TriMesh::axis_box(
        "wall_left",
        Vec3::new(3.9, 0.0, 0.0),
        Vec3::new(4.1, 2.5, 3.59),
    );
    let wall_right = TriMesh::axis_box(
        "wall_right",
        Vec3::new(3.9, 0.0, 4.36),
        Vec3::new(4.1, 2.5, 8.0),
    );
    let world = floor_scene(&[("wall_left", wall_left), ("wall_right", wall_right)]);
    let (a, b) = (Vec3::new(2.0, 0.0, 4.0), Vec3::new(6.0, 0.0, 4.0));
    let connected = |radius_m: f32| {
        let config = BakeConfig {
            agent_radius_m: radius_m,
            cell_size_m: 0.15,
            cell_height_m: 0.05,
            ..BakeConfig::preset(Preset::Guard)
        };
        let output = bake(&world, &config).unwrap();
        let mut graph = PolygonGraph::build(&output.tiles, |_, _| false);
        let (pa, pb) = (
            find_polygon_at(&output.tiles, a, 0.5).unwrap(),
            find_polygon_at(&output.tiles, b, 0.5).unwrap(),
        );
        graph.connected(pa, pb)
    };
    assert!(!connected(0.4), "radius 0.4 (3 cells) must not pass 0.75 m");
    assert!(connected(0.3), "radius 0.3 (2 cells) passes it");
}

#[test]
fn unwalkable_scene_gives_an_empty_mesh_with_a_warning() {
    // Only a 60° slope: nothing to stand on.
    let steep = TriMesh::quad(
        "slope",
        [
            Vec3::ZERO,
            Vec3::new(0.0, 0.0, 4.0),
            Vec3::new(2.0, 3.5, 4.0),
            Vec3::new(2.0, 3.5, 0.0),
        ],
    );
    let mut scene = Scene::new();
    let id = scene.add_mesh(steep);
    scene.add_instance(InstanceDesc::new("slope", id)).unwrap();
    let output = bake(
        &scene.world_triangles().unwrap(),
        &BakeConfig::preset(Preset::Guard),
    )
    .unwrap();
    assert_eq!(output.stats.polygons, 0);
    assert_eq!(output.warnings, vec![BakeWarning::NoWalkableSurface]);
}

#[test]
fn oversized_grids_are_refused_before_allocating() {
    // A 20 km floor at 1 cm cells would need 4e12 columns.
    let mut scene = Scene::new();
    let id = scene.add_mesh(TriMesh::axis_box(
        "plain",
        Vec3::new(0.0, -1.0, 0.0),
        Vec3::new(20_000.0, 0.0, 20_000.0),
    ));
    scene.add_instance(InstanceDesc::new("plain", id)).unwrap();
    let world = scene.world_triangles().unwrap();
    let solo = BakeConfig {
        cell_size_m: 0.01,
        cell_height_m: 0.01,
        ..BakeConfig::preset(Preset::Guard)
    };
    assert!(matches!(
        bake(&world, &solo),
        Err(BakeError::GridTooLarge { .. })
    ));
    let tiled = BakeConfig {
        tile_size_cells: Some(64),
        ..solo
    };
    assert!(matches!(
        bake(&world, &tiled),
        Err(BakeError::TooManyTiles { .. })
    ));
    let tall = BakeConfig {
        cell_height_m: 0.005,
        agent_height_m: 1.0,
        ..BakeConfig::preset(Preset::Guard)
    };
    let mut scene = Scene::new();
    let id = scene.add_mesh(TriMesh::axis_box(
        "tower",
        Vec3::ZERO,
        Vec3::new(2.0, 400.0, 2.0),
    ));
    scene.add_instance(InstanceDesc::new("tower", id)).unwrap();
    assert!(matches!(
        bake(&scene.world_triangles().unwrap(), &tall),
        Err(BakeError::TooTall { .. })
    ));
}

#[test]
fn two_phase_tiled_bake_equals_rasterizing_each_bordered_grid_directly() {
    use waymark::bake::tile_builder::build_tile;
    use waymark::bake::{plan_tiles, tile_jobs};
    for name in ["dungeon.obj", "nav_test.obj"] {
        let world = level(name);
        let config = BakeConfig {
            tile_size_cells: Some(32),
            ..BakeConfig::preset(Preset::Guard)
        };
        let output = bake(world, &config).unwrap();
        let valid = config.validate().unwrap();
        let jobs = tile_jobs(world, &valid, &plan_tiles(world, &valid).unwrap());
        let direct: Vec<_> = jobs
            .iter()
            .map(|job| build_tile(world, job, &valid, &[]).unwrap().0)
            .collect();
        assert_eq!(direct.len(), output.tiles.len());
        for (index, (one, other)) in direct.iter().zip(&output.tiles).enumerate() {
            assert!(one == other, "{name}: tile {index} differs");
        }
    }
}
