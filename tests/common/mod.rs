//! Levels shared by several integration tests.
#![allow(dead_code)]

use glam::Vec3;
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::mesh::{NavMesh, TileData};
use waymark::scene::{InstanceDesc, Scene, TriMesh};

/// Two rooms, A (x 0..10) and B (x 14..24), both z 0..6, 4 m apart; a corridor round the back
/// (z 8..11) joins them through two short links; an island far away (x 40..50). Guard
/// settings, 32-cell tiles, so reads are per tile.
pub fn rooms() -> (NavMesh, Vec<TileData>) {
    let mut scene = Scene::new();
    let slab = |scene: &mut Scene, name: &str, x0: f32, x1: f32, z0: f32, z1: f32| {
        let mesh = scene.add_mesh(TriMesh::axis_box(
            name,
            Vec3::new(x0, -0.2, z0),
            Vec3::new(x1, 0.0, z1),
        ));
        scene.add_instance(InstanceDesc::new(name, mesh)).unwrap();
    };
    slab(&mut scene, "room_a", 0.0, 10.0, 0.0, 6.0);
    slab(&mut scene, "room_b", 14.0, 24.0, 0.0, 6.0);
    slab(&mut scene, "corridor", 0.0, 24.0, 8.0, 11.0);
    slab(&mut scene, "left_link", 0.0, 3.0, 5.0, 9.0);
    slab(&mut scene, "right_link", 21.0, 24.0, 5.0, 9.0);
    slab(&mut scene, "far_island", 40.0, 50.0, 0.0, 6.0);
    let world = scene.world_triangles().unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(32),
        ..BakeConfig::preset(Preset::Guard)
    };
    let tiles = bake(&world, &config).unwrap().to_file().tiles;
    let mut mesh = NavMesh::new(config.to_params());
    mesh.add_tiles(tiles.clone()).unwrap();
    (mesh, tiles)
}
