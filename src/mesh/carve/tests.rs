//! Carving checked on hand-built floors: areas, walls, marks, heights, and every carved
//! tile well formed.

use super::*;
use crate::mesh::WalkablePolygon;

/// A 4 m x 2 m floor of four 1 m x 2 m... squares: `columns` x `rows` unit squares at
/// height `y`.
fn floor(columns: usize, rows: usize, y: f32) -> TileData {
    let mut polygons = Vec::new();
    for row in 0..rows {
        for column in 0..columns {
            let (x, z) = (column as f32, row as f32);
            polygons.push(WalkablePolygon::ground(vec![
                Vec3::new(x, y, z),
                Vec3::new(x + 1.0, y, z),
                Vec3::new(x + 1.0, y, z + 1.0),
                Vec3::new(x, y, z + 1.0),
            ]));
        }
    }
    TileData::from_walkable_polygons(&polygons).unwrap()
}

fn square(centre: Vec2, half: f32, marks: Option<AreaId>) -> CarveFootprint {
    CarveFootprint {
        corners: vec![
            centre + Vec2::new(-half, -half),
            centre + Vec2::new(-half, half),
            centre + Vec2::new(half, half),
            centre + Vec2::new(half, -half),
        ],
        floor_min_m: -1.0,
        floor_max_m: 1.0,
        marks,
    }
}

fn corners_of(tile: &TileData, polygon: usize) -> Vec<Vec2> {
    tile.polygons[polygon]
        .vertex_indices()
        .iter()
        .map(|&v| {
            let at = tile.vertex(v);
            Vec2::new(at.x, at.z)
        })
        .collect()
}

/// Every polygon convex with 3-6 corners and the tile's winding, every neighbour
/// naming back across the same two vertices, every detail mesh covering its polygon.
fn check_well_formed(tile: &TileData) {
    tile.validate().unwrap();
    for (index, polygon) in tile.polygons.iter().enumerate() {
        let corners = corners_of(tile, index);
        assert!(
            signed_area(&corners) < -PIECE_AREA_MIN_M2,
            "polygon {index} wound as the tile"
        );
        // Convex: no corner more than the on-line tolerance outside the turn.
        let count = corners.len();
        for i in 0..count {
            let (a, b, c) = (
                corners[i],
                corners[(i + 1) % count],
                corners[(i + 2) % count],
            );
            let turn = (b - a).normalize().perp_dot(c - b);
            assert!(
                turn <= ON_LINE_M,
                "polygon {index} turns {turn} at {b}: {corners:?}"
            );
        }
        let count = usize::from(polygon.vertex_count);
        for edge in 0..count {
            let neighbour = polygon.neighbours[edge];
            if neighbour == TilePoly::NO_NEIGHBOUR || neighbour & TilePoly::TILE_EDGE != 0 {
                continue;
            }
            let (a, b) = (polygon.vertices[edge], polygon.vertices[(edge + 1) % count]);
            let other = &tile.polygons[usize::from(neighbour)];
            let other_count = usize::from(other.vertex_count);
            let back = (0..other_count).any(|e| {
                other.vertices[e] == b
                    && other.vertices[(e + 1) % other_count] == a
                    && usize::from(other.neighbours[e]) == index
            });
            assert!(
                back,
                "polygon {index} edge {edge} names {neighbour}, not back"
            );
        }
        let detail: f32 = tile
            .detail_triangles_of(index)
            .map(|[a, b, c]| 0.5 * (b - a).cross(c - a).y.abs())
            .sum();
        assert!(
            (detail - tile.polygon_area_m2(index)).abs() < 1e-4,
            "polygon {index}: detail {detail} m², polygon {} m²",
            tile.polygon_area_m2(index)
        );
    }
}

/// Whether any polygon's interior reaches into the square.
fn overlaps_square(tile: &TileData, centre: Vec2, half: f32) -> bool {
    let square: Vec<Vec2> = square(centre, half - 1e-3, None).corners;
    (0..tile.polygons.len()).any(|p| {
        let clipped = crate::geom::planar::intersect_convex(&corners_of(tile, p), &square);
        clipped.len() >= 3 && signed_area(&clipped).abs() > 1e-6
    })
}

#[test]
fn with_nothing_reaching_the_tile_it_is_returned_unchanged() {
    let tile = floor(4, 2, 0.0);
    assert_eq!(carve_tile(&tile, &[]).unwrap(), tile);
    let far = square(Vec2::new(20.0, 20.0), 1.0, None);
    assert_eq!(carve_tile(&tile, &[far]).unwrap(), tile);
    let below = CarveFootprint {
        floor_min_m: -5.0,
        floor_max_m: -3.0,
        ..square(Vec2::new(2.0, 1.0), 0.5, None)
    };
    assert_eq!(carve_tile(&tile, &[below]).unwrap(), tile);
}

#[test]
fn a_square_over_four_polygons_is_cut_out_and_the_rest_stays_joined() {
    let tile = floor(4, 2, 0.0);
    let centre = Vec2::new(2.0, 1.0);
    let carved = carve_tile(&tile, &[square(centre, 0.5, None)]).unwrap();
    check_well_formed(&carved);
    assert!((carved.walkable_area_m2() - (8.0 - 1.0)).abs() < 1e-4);
    assert!(!overlaps_square(&carved, centre, 0.5));
    // Polygons away from the square are as baked.
    assert!(carved.polygons.iter().any(|p| p.vertex_count == 4));
}

#[test]
fn a_footprint_inside_one_polygon_leaves_a_hole_walled_round() {
    let tile = floor(1, 1, 0.0);
    let centre = Vec2::new(0.5, 0.5);
    let carved = carve_tile(&tile, &[square(centre, 0.2, None)]).unwrap();
    check_well_formed(&carved);
    assert!((carved.walkable_area_m2() - (1.0 - 0.16)).abs() < 1e-4);
    assert!(!overlaps_square(&carved, centre, 0.2));
    let walls = carved
        .polygons
        .iter()
        .flat_map(|p| p.neighbours[..usize::from(p.vertex_count)].to_vec())
        .filter(|&n| n == TilePoly::NO_NEIGHBOUR)
        .count();
    // The square's four sides and the floor's four edges.
    assert!(walls >= 8, "{walls} walls");
}

#[test]
fn a_later_footprint_that_reaches_a_polygons_bounds_but_misses_it_keeps_the_earlier_cut() {
    let tile = floor(1, 1, 0.0);
    let centre = Vec2::new(0.5, 0.5);
    // A diamond off the square's corner: its bounds overlap the square's, its edge
    // x + z = -0.1 keeps it apart.
    let off_corner = Vec2::new(-0.3, -0.3);
    let diamond = CarveFootprint {
        corners: [(0.5, 0.0), (0.0, 0.5), (-0.5, 0.0), (0.0, -0.5)]
            .map(|(x, z)| off_corner + Vec2::new(x, z))
            .to_vec(),
        ..square(off_corner, 0.5, None)
    };
    let carved = carve_tile(&tile, &[square(centre, 0.2, None), diamond]).unwrap();
    check_well_formed(&carved);
    assert!(!overlaps_square(&carved, centre, 0.2));
    assert!((carved.walkable_area_m2() - (1.0 - 0.16)).abs() < 1e-4);
}

#[test]
fn a_marking_footprint_keeps_the_floor_and_gives_it_the_area() {
    let tile = floor(4, 2, 0.0);
    let centre = Vec2::new(1.5, 0.75);
    let carved = carve_tile(&tile, &[square(centre, 0.5, Some(AreaId(7)))]).unwrap();
    check_well_formed(&carved);
    assert!((carved.walkable_area_m2() - 8.0).abs() < 1e-4);
    let marked: f32 = (0..carved.polygons.len())
        .filter(|&p| carved.polygons[p].area == 7)
        .map(|p| carved.polygon_area_m2(p))
        .sum();
    assert!((marked - 1.0).abs() < 1e-4, "{marked} m² marked");
}

#[test]
fn overlapping_cuts_and_a_turned_octagon_leave_well_formed_convex_pieces() {
    let tile = floor(4, 3, 0.0);
    let octagon: Vec<Vec2> = (0..8)
        .map(|k| {
            let angle = 0.3 + k as f32 * std::f32::consts::TAU / 8.0;
            Vec2::new(2.1, 1.4) + Vec2::from_angle(angle) * 0.9
        })
        .collect();
    let footprints = [
        CarveFootprint {
            corners: octagon.clone(),
            floor_min_m: -1.0,
            floor_max_m: 1.0,
            marks: None,
        },
        square(Vec2::new(2.9, 1.9), 0.45, None),
        square(Vec2::new(0.6, 2.3), 0.3, Some(AreaId(5))),
    ];
    let carved = carve_tile(&tile, &footprints).unwrap();
    check_well_formed(&carved);
    let octagon_area = signed_area(&octagon).abs();
    let both = crate::geom::planar::intersect_convex(
        &octagon,
        &square(Vec2::new(2.9, 1.9), 0.45, None).corners,
    );
    let cut = octagon_area + 0.81 - signed_area(&both).abs();
    assert!(
        (carved.walkable_area_m2() as f32 - (12.0 - cut)).abs() < 1e-3,
        "{} m² left, {cut} m² cut",
        carved.walkable_area_m2()
    );
    assert!(!overlaps_square(&carved, Vec2::new(2.9, 1.9), 0.45));
}

#[test]
fn new_corners_take_the_slopes_height() {
    // A ramp rising 0.5 m per metre along x.
    let ramp = TileData::from_walkable_polygons(&[WalkablePolygon::ground(vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(2.0, 1.0, 0.0),
        Vec3::new(2.0, 1.0, 2.0),
        Vec3::new(0.0, 0.0, 2.0),
    ])])
    .unwrap();
    let carved = carve_tile(&ramp, &[square(Vec2::new(1.0, 1.0), 0.3, None)]).unwrap();
    check_well_formed(&carved);
    for vertex in &carved.vertices {
        assert!((vertex[1] - 0.5 * vertex[0]).abs() < 1e-5, "{vertex:?}");
    }
}
