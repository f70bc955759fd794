//! Area volumes mark the walkable surface inside them; the monotone partition bakes the real
//! levels as faithfully as the watershed one.

use std::path::Path;

use glam::{Vec2, Vec3};
use waymark::bake::{
    AreaVolume, AreaVolumeError, BakeConfig, BakeError, Partition, Preset, bake, bake_with,
};
use waymark::ids::AreaId;
use waymark::scene::obj::{ObjOptions, load_obj};
use waymark::scene::{InstanceDesc, Scene, TriMesh, WorldTriangles};

fn open_floor() -> WorldTriangles {
    let mut scene = Scene::new();
    let floor = scene.add_mesh(TriMesh::axis_box(
        "floor",
        Vec3::new(0.0, -0.2, 0.0),
        Vec3::new(12.0, 0.0, 12.0),
    ));
    scene
        .add_instance(InstanceDesc::new("floor", floor))
        .unwrap();
    scene.world_triangles().unwrap()
}

fn area_of(output: &waymark::bake::BakeOutput, area: AreaId) -> f64 {
    output
        .tiles
        .iter()
        .flat_map(|tile| {
            (0..tile.polygons.len())
                .filter(move |&p| tile.polygons[p].area == area.0)
                .map(move |p| f64::from(tile.polygon_area_m2(p)))
        })
        .sum()
}

#[test]
fn a_water_volume_turns_its_floor_into_water_polygons() {
    let world = open_floor();
    // A 4 m x 3 m pond on the floor (cell-aligned at 0.2 m cells).
    let pond = AreaVolume {
        corners: vec![
            Vec2::new(4.0, 4.0),
            Vec2::new(8.0, 4.0),
            Vec2::new(8.0, 7.0),
            Vec2::new(4.0, 7.0),
        ],
        min_y: -0.5,
        max_y: 0.5,
        area: AreaId::WATER,
    };
    let config = BakeConfig::preset(Preset::Guard);
    let output = bake_with(&world, &config, std::slice::from_ref(&pond), &|_, _| {}).unwrap();
    let water = area_of(&output, AreaId::WATER);
    assert!(
        (water - 12.0).abs() < 0.5,
        "water area {water} m², expected 12"
    );
    let plain = bake(&world, &config).unwrap();
    // The total walkable area is unchanged: the pond is marked, not cut out.
    assert!((output.stats.walkable_area_m2 - plain.stats.walkable_area_m2).abs() < 0.5);
    assert_eq!(area_of(&plain, AreaId::WATER), 0.0);
    // A volume above the floor's height range marks nothing.
    let high = AreaVolume {
        min_y: 1.0,
        max_y: 2.0,
        ..pond.clone()
    };
    let untouched = bake_with(&world, &config, &[high], &|_, _| {}).unwrap();
    assert_eq!(area_of(&untouched, AreaId::WATER), 0.0);
    // An unwalkable volume cuts exactly its footprint out of the centre-line space: volumes
    // apply after erosion, so no band is eroded around the hole.
    let hole = AreaVolume {
        area: AreaId::UNWALKABLE,
        ..pond
    };
    let cut = bake_with(&world, &config, &[hole], &|_, _| {}).unwrap();
    let lost = plain.stats.walkable_area_m2 - cut.stats.walkable_area_m2;
    assert!((lost - 12.0).abs() < 0.05, "lost {lost} m²");
}

#[test]
fn bad_volumes_are_refused_by_index_and_value() {
    let world = open_floor();
    let config = BakeConfig::preset(Preset::Guard);
    let square = vec![Vec2::ZERO, Vec2::X, Vec2::ONE, Vec2::Y];
    let good = AreaVolume {
        corners: square.clone(),
        min_y: 0.0,
        max_y: 1.0,
        area: AreaId::ROAD,
    };
    let cases = [
        AreaVolume {
            corners: square[..2].to_vec(),
            ..good.clone()
        },
        AreaVolume {
            min_y: 2.0,
            ..good.clone()
        },
        AreaVolume {
            corners: vec![
                Vec2::ZERO,
                Vec2::new(2.0, 0.0),
                Vec2::new(1.0, 0.5),
                Vec2::new(2.0, 2.0),
                Vec2::new(0.0, 2.0),
            ],
            ..good.clone()
        },
        AreaVolume {
            corners: vec![Vec2::ZERO, Vec2::new(f32::NAN, 0.0), Vec2::ONE],
            ..good.clone()
        },
        AreaVolume {
            area: AreaId(200),
            ..good.clone()
        },
    ];
    let expected = [
        AreaVolumeError::TooFewCorners { index: 1, count: 2 },
        AreaVolumeError::BadValue {
            index: 1,
            what: "height range 2..1 is not a finite, ordered range".into(),
        },
        AreaVolumeError::NotConvex {
            index: 1,
            corner: 2,
        },
        AreaVolumeError::BadValue {
            index: 1,
            what: "corner [NaN, 0] is not finite".into(),
        },
        AreaVolumeError::BadArea {
            index: 1,
            area: 200,
        },
    ];
    for (bad, expected) in cases.into_iter().zip(expected) {
        let error = bake_with(&world, &config, &[good.clone(), bad], &|_, _| {}).unwrap_err();
        assert_eq!(error, BakeError::Volume(expected));
    }
}

#[test]
fn monotone_partition_bakes_the_real_levels_within_recast_tolerances() {
    for (name, recast_area, recast_polygons) in [
        ("dungeon.obj", 1585.3, 118.0),
        ("nav_test.obj", 4002.0, 155.0),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets/levels")
            .join(name);
        let world = load_obj(&path, &ObjOptions::default())
            .unwrap()
            .world_triangles()
            .unwrap();

        let config = BakeConfig {
            partition: Partition::Monotone,
            ..BakeConfig::preset(Preset::Recast)
        };
        let monotone = bake(&world, &config).unwrap();
        let ratio = monotone.stats.walkable_area_m2 / recast_area;
        assert!(
            (ratio - 1.0).abs() <= 0.03,
            "{name}: monotone area {}",
            monotone.stats.walkable_area_m2
        );
        // The same surface, cut differently, within the polygon-count tolerance.
        let polygon_ratio = monotone.stats.polygons as f64 / recast_polygons;
        assert!(
            (polygon_ratio - 1.0).abs() <= 0.30,
            "{name}: {} monotone polygons",
            monotone.stats.polygons
        );
        for tile in &monotone.tiles {
            tile.validate().unwrap();
        }
    }
}
