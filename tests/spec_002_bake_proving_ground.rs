//! Spec 002 validation level: the proving ground's doors, steps, ramps, broken bridge,
//! balcony and scaled doorway must connect or separate the regions they join exactly as a
//! body of the given size can or cannot pass, checked on the polygon adjacency graph.

use glam::Vec2;
use waymark::bake::{BakeConfig, BakeOutput, Preset, bake};
use waymark::mesh::connectivity::{PolygonGraph, find_polygon_at, polygon_contains};
use waymark::scene::proving_ground::{ProvingGround, proving_ground};

fn bake_ground(ground: &ProvingGround, config: &BakeConfig) -> BakeOutput {
    let world = ground.scene.world_triangles().unwrap();
    bake(&world, config).unwrap()
}

/// Checks every feature's expectation; `expected` picks which one.
fn check_features(
    ground: &ProvingGround,
    output: &BakeOutput,
    expected: impl Fn(&waymark::scene::proving_ground::Feature) -> bool,
) {
    let mut graph = PolygonGraph::build(&output.tiles, |_, _| false);
    let mut failures = Vec::new();
    for feature in &ground.features {
        let a = find_polygon_at(&output.tiles, feature.side_a, 0.5).unwrap_or_else(|| {
            panic!(
                "{}: no polygon under side A {}",
                feature.name, feature.side_a
            )
        });
        let b = find_polygon_at(&output.tiles, feature.side_b, 0.5).unwrap_or_else(|| {
            panic!(
                "{}: no polygon under side B {}",
                feature.name, feature.side_b
            )
        });
        let connected = graph.connected(a, b);
        if connected != expected(feature) {
            failures.push(format!(
                "{}: connected = {connected}, expected {}",
                feature.name,
                expected(feature)
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn guard_connects_exactly_what_it_can_pass() {
    let ground = proving_ground();
    let config = BakeConfig::preset(Preset::Guard);
    check_features(&ground, &bake_ground(&ground, &config), |f| {
        f.connects_for_guard
    });
}

#[test]
fn guard_tiled_bake_agrees_with_solo() {
    let ground = proving_ground();
    let config = BakeConfig {
        tile_size_cells: Some(32),
        ..BakeConfig::preset(Preset::Guard)
    };
    let output = bake_ground(&ground, &config);
    assert!(output.tiles.len() > 10, "{} tiles", output.tiles.len());
    check_features(&ground, &output, |f| f.connects_for_guard);
}

/// Radius 0.3 passes the 0.7 m door with 0.05 m to spare on each side. Voxels lose up to a
/// cell on each side of an opening and erosion keeps a centre only `ceil(r / cs)` whole
/// cells from the wall, so the slack must cover about three cells: cell 0.025 m.
#[test]
fn radius_0_3_passes_the_0_7_door() {
    let ground = proving_ground();
    let config = BakeConfig {
        agent_radius_m: 0.3,
        cell_size_m: 0.025,
        region_min_area_m2: 0.25,
        region_merge_area_m2: 1.0,
        edge_max_error_m: 0.05,
        detail_sample_distance_m: 0.3,
        ..BakeConfig::preset(Preset::Guard)
    };
    check_features(&ground, &bake_ground(&ground, &config), |f| {
        f.connects_at_radius_0_3
    });
}

#[test]
fn n5_balcony_reaches_the_ground_only_through_its_stairs() {
    let ground = proving_ground();
    let output = bake_ground(&ground, &BakeConfig::preset(Preset::Guard));
    let balcony =
        find_polygon_at(&output.tiles, ground.balcony_point, 0.3).expect("balcony polygon");
    let under = find_polygon_at(&output.tiles, ground.under_balcony_point, 0.3)
        .expect("ground polygon under it");
    assert_ne!(
        balcony, under,
        "the two floors overlap horizontally but are different polygons"
    );
    let mut graph = PolygonGraph::build(&output.tiles, |_, _| false);
    assert!(graph.connected(balcony, under), "the stairs join them");
    // Without the polygons over the stairs, the floors fall apart.
    let stairs = ground.stairs_bounds;
    let over_stairs = |tile: &waymark::mesh::TileData, polygon: usize| {
        let indices = tile.polygons[polygon].vertex_indices();
        let centre =
            indices.iter().map(|&v| tile.vertex(v)).sum::<glam::Vec3>() / indices.len() as f32;
        let inside_x = centre.x >= stairs.min.x - 0.01 && centre.x <= stairs.max.x + 0.01;
        let inside_z = centre.z >= stairs.min.z - 0.01 && centre.z <= stairs.max.z + 0.01;
        inside_x && inside_z && centre.y > 0.05 && centre.y < 2.95
    };
    let stair_polygons = output.tiles[balcony.tile as usize]
        .polygons
        .iter()
        .enumerate()
        .filter(|(p, _)| over_stairs(&output.tiles[balcony.tile as usize], *p))
        .count();
    assert!(stair_polygons > 0);
    let mut cut = PolygonGraph::build(&output.tiles, over_stairs);
    assert!(
        !cut.connected(balcony, under),
        "a balcony polygon touches the ground floor directly"
    );
    let tile = &output.tiles[under.tile as usize];
    assert!(polygon_contains(
        tile,
        under.polygon as usize,
        Vec2::new(ground.under_balcony_point.x, ground.under_balcony_point.z)
    ));
}
