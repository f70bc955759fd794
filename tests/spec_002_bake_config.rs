//! Spec 002 ("导航烘焙的数据交接"): metres to cells with the spec's rounding (n1, n3), and
//! configuration errors that name the field and value.

use waymark::bake::config::{ceil_cells, floor_cells};
use waymark::bake::{BakeConfig, BakeConfigError, Preset};

#[test]
fn n1_radius_0_4_at_cell_0_15_erodes_three_cells() {
    let config = BakeConfig {
        agent_radius_m: 0.4,
        cell_size_m: 0.15,
        cell_height_m: 0.075,
        ..BakeConfig::preset(Preset::Guard)
    };
    let valid = config.validate().unwrap();
    assert_eq!(valid.walkable_radius_cells, 3);
    // The eroded band covers the radius, and one cell fewer would not: two cells keep centres
    // only 0.3 m from a wall. (The bake test `n1_a_corridor_narrower_than_the_body_...` shows
    // the consequence on a real corridor.)
    let band_m = valid.walkable_radius_cells as f32 * config.cell_size_m;
    assert!(band_m >= config.agent_radius_m);
    assert!((valid.walkable_radius_cells - 1) as f32 * config.cell_size_m < config.agent_radius_m);
}

#[test]
fn n3_unit_conversion_rounds_to_protect_body_and_climb() {
    // The guard: r 0.4 / cs 0.2 = 2; h 1.8 / ch 0.1 = 18; climb 0.4 / 0.1 = 4 (3.9999998 in
    // f32 arithmetic, still 4).
    let guard = BakeConfig::preset(Preset::Guard).validate().unwrap();
    assert_eq!(
        (
            guard.walkable_radius_cells,
            guard.walkable_height_cells,
            guard.walkable_climb_cells
        ),
        (2, 18, 4)
    );
    // Recast's defaults: r 0.6 / 0.3 = 2; h 2.0 / 0.2 = 10; climb 0.9 / 0.2 = 4.5 -> 4.
    let recast = BakeConfig::preset(Preset::Recast).validate().unwrap();
    assert_eq!(
        (
            recast.walkable_radius_cells,
            recast.walkable_height_cells,
            recast.walkable_climb_cells
        ),
        (2, 10, 4)
    );
    // Non-integer ratios: radius and height round up, climb rounds down.
    let odd = BakeConfig {
        agent_radius_m: 0.35,
        agent_height_m: 1.75,
        agent_max_climb_m: 0.45,
        cell_size_m: 0.2,
        cell_height_m: 0.1,
        ..BakeConfig::preset(Preset::Guard)
    }
    .validate()
    .unwrap();
    assert_eq!(
        (
            odd.walkable_radius_cells,
            odd.walkable_height_cells,
            odd.walkable_climb_cells
        ),
        (2, 18, 4)
    );
    assert_eq!((ceil_cells(1.5), floor_cells(1.5)), (2, 1));
    assert_eq!((ceil_cells(2.00001), floor_cells(3.99999)), (2, 4));
}

#[test]
fn for_agent_starts_at_half_the_radius() {
    let config = BakeConfig::for_agent(0.4, 1.8);
    assert_eq!(config.cell_size_m, 0.2);
    assert_eq!(config.cell_height_m, 0.1);
    assert_eq!(config.validate().unwrap().walkable_radius_cells, 2);
}

#[test]
fn invalid_fields_are_named_with_their_value() {
    let base = BakeConfig::preset(Preset::Guard);
    let cases = [
        (
            BakeConfig {
                cell_size_m: 0.0,
                ..base
            },
            "cell_size_m",
            0.0,
        ),
        (
            BakeConfig {
                cell_height_m: f32::NAN,
                ..base
            },
            "cell_height_m",
            f32::NAN,
        ),
        (
            BakeConfig {
                agent_radius_m: -0.4,
                ..base
            },
            "agent_radius_m",
            -0.4,
        ),
        (
            BakeConfig {
                agent_height_m: 0.0,
                ..base
            },
            "agent_height_m",
            0.0,
        ),
        (
            BakeConfig {
                agent_max_slope_deg: 90.0,
                ..base
            },
            "agent_max_slope_deg",
            90.0,
        ),
        (
            BakeConfig {
                verts_per_poly_max: 7,
                ..base
            },
            "verts_per_poly_max",
            7.0,
        ),
        (
            BakeConfig {
                tile_size_cells: Some(8),
                ..base
            },
            "tile_size_cells",
            8.0,
        ),
        (
            BakeConfig {
                detail_sample_distance_m: 0.1,
                ..base
            },
            "detail_sample_distance_m",
            0.1,
        ),
    ];
    for (config, field, value) in cases {
        let error = config.validate().unwrap_err();
        let BakeConfigError::OutOfRange {
            field: named,
            value: got,
            ..
        } = &error;
        assert_eq!(*named, field);
        assert!(
            got.to_bits() == value.to_bits() || (got.is_nan() && value.is_nan()),
            "{error}"
        );
        assert!(error.to_string().contains(field), "{error}");
    }
    // A body taller than 255 cell heights cannot be stored.
    let tall = BakeConfig {
        agent_height_m: 30.0,
        ..base
    }
    .validate()
    .unwrap_err();
    assert!(tall.to_string().contains("agent_height_m"));
}
