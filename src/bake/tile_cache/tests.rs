//! The outlines a carved cut takes: sides from the tolerance, corners within it, and the
//! reach that decides which tiles a rebuild touches holding the outline.

use super::shapes::{
    CARVED_SIDES_MAX, CARVED_SIDES_MIN, carved_outline, circumscribed_sides, outline, reach,
};
use super::*;
use crate::bake::Preset;
use crate::geom::planar::signed_area;

#[test]
fn circumscribed_sides_follow_the_tolerance_within_their_limits() {
    // RecastDemo's body (0.6 m) round a 1 m cylinder, half a 0.3 m cell.
    assert_eq!(circumscribed_sides(1.6, 0.15), 8);
    // A small disk takes the fewest, a huge one the most.
    assert_eq!(circumscribed_sides(0.3, 0.15), CARVED_SIDES_MIN);
    assert_eq!(circumscribed_sides(500.0, 0.15), CARVED_SIDES_MAX);
    // No tolerance asks for the most; a disk of no radius for the fewest.
    assert_eq!(circumscribed_sides(1.0, 0.0), CARVED_SIDES_MAX);
    assert_eq!(circumscribed_sides(0.0, 0.15), CARVED_SIDES_MIN);
    for step in 1..200 {
        let radius_m = step as f32 * 0.05;
        let sides = circumscribed_sides(radius_m, 0.15);
        let corner_m = radius_m / (std::f32::consts::PI / sides as f32).cos();
        if sides > CARVED_SIDES_MIN && sides < CARVED_SIDES_MAX {
            // The fewest that keep the corners within the tolerance: one fewer would not.
            let fewer_m = radius_m / (std::f32::consts::PI / (sides - 1) as f32).cos();
            assert!(
                corner_m <= radius_m + 0.15 + 1e-5,
                "radius {radius_m}: {sides} sides"
            );
            assert!(
                fewer_m > radius_m + 0.15,
                "radius {radius_m}: {} would do",
                sides - 1
            );
        }
    }
}

#[test]
fn carved_outlines_hold_the_grown_shape_and_lie_within_the_reach() {
    let config = BakeConfig::preset(Preset::Recast).validate().unwrap();
    let body_m = config.config.agent_radius_m;
    let tolerance_m = 0.5 * config.config.cell_size_m;
    let shapes = [
        ObstacleShape::Cylinder {
            base: Vec3::new(3.0, 1.0, -2.0),
            radius_m: 1.0,
            height_m: 2.0,
        },
        ObstacleShape::Box {
            min: Vec3::new(-1.0, 0.0, 2.0),
            max: Vec3::new(1.5, 1.0, 2.5),
        },
        ObstacleShape::TurnedBox {
            base: Vec3::new(0.0, 0.0, 0.0),
            half_extents_m: Vec2::new(2.0, 0.5),
            height_m: 1.0,
            yaw_rad: 0.6,
        },
    ];
    for shape in &shapes {
        let carved = carved_outline(shape, &config);
        let shape_outline = outline(shape);
        let (low, high) = reach(shape, ObstacleRebuild::Carve, &config);
        // Counter-clockwise or not, the signed distance inside every edge.
        let winding = signed_area(&carved).signum();
        let inside_by = |point: Vec2| {
            (0..carved.len())
                .map(|i| {
                    let (a, b) = (carved[i], carved[(i + 1) % carved.len()]);
                    winding * (b - a).normalize().perp_dot(point - a)
                })
                .fold(f32::INFINITY, f32::min)
        };
        for &corner in &carved {
            assert!(
                corner.cmpge(low).all() && corner.cmple(high).all(),
                "{shape:?}"
            );
        }
        // Every point of the shape's outline grown by the body lies inside; the cylinder's
        // outline is itself circumscribed, so test its disk.
        let probes: Vec<Vec2> = match *shape {
            ObstacleShape::Cylinder { base, radius_m, .. } => (0..360)
                .map(|degree| {
                    let angle = (degree as f32).to_radians();
                    Vec2::new(base.x, base.z) + Vec2::from_angle(angle) * (radius_m + body_m)
                })
                .collect(),
            _ => shape_outline
                .iter()
                .flat_map(|&corner| {
                    (0..36).map(move |step| {
                        corner + Vec2::from_angle((step * 10) as f32 / 57.29578) * body_m
                    })
                })
                .collect(),
        };
        for probe in probes {
            let depth = inside_by(probe);
            assert!(depth >= -1e-4, "{shape:?}: {probe} outside by {depth}");
        }
        // And no corner strays beyond the tolerance: each lies within body + tolerance of
        // the shape (a cylinder's disk; a box's outline).
        for &corner in &carved {
            let distance = match *shape {
                ObstacleShape::Cylinder { base, radius_m, .. } => {
                    corner.distance(Vec2::new(base.x, base.z)) - radius_m
                }
                _ => outline_distance(&shape_outline, corner),
            };
            assert!(
                distance <= body_m + tolerance_m + 1e-4,
                "{shape:?}: corner {corner} at {distance} m"
            );
        }
    }
}

/// Distance from `point` outside the convex `outline` to it.
fn outline_distance(outline: &[Vec2], point: Vec2) -> f32 {
    (0..outline.len())
        .map(|i| {
            let (a, b) = (outline[i], outline[(i + 1) % outline.len()]);
            let t = ((point - a).dot(b - a) / (b - a).length_squared()).clamp(0.0, 1.0);
            point.distance(a + (b - a) * t)
        })
        .fold(f32::INFINITY, f32::min)
}

#[test]
fn a_commit_refused_for_a_reason_other_than_staleness_stays_pending_for_a_retry() {
    use crate::ids::SourceVersion;
    let (fresh, stale, refused, later) = ((0, 0), (1, 0), (2, 0), (3, 0));
    let mut pending: BTreeSet<(i32, i32)> = [fresh, stale, refused].into_iter().collect();
    let mut update = CacheUpdate::default();
    let outcome = record_commits(
        &mut update,
        &mut pending,
        &[fresh, stale, refused, later],
        vec![
            Ok(TileSlot(4)),
            Err(NavMeshError::StaleSource {
                x: 1,
                z: 0,
                instance: 9,
                built: SourceVersion(1),
                current: SourceVersion(2),
            }),
            Err(NavMeshError::OutOfSlots),
            Ok(TileSlot(5)),
        ],
    );
    // Every outcome is recorded; the refusal is the error; only the refused tile is left.
    assert!(matches!(
        outcome,
        Err(BakeError::Commit(NavMeshError::OutOfSlots))
    ));
    assert_eq!(update.committed, [TileSlot(4), TileSlot(5)]);
    assert_eq!(update.stale, [stale]);
    assert_eq!(pending.into_iter().collect::<Vec<_>>(), [refused]);
}
