//! Obstacle shapes as the tile cache rebuilds with them: outlines seen from above, the
//! outline a cut carves (the shape grown by the body, circumscribed within half a bake
//! cell), the bounds within which a shape can change a tile, and the floors and volumes
//! it reaches.

use glam::Vec2;

use super::ObstacleRebuild;
use super::ObstacleShape;
use crate::bake::areas::AreaVolume;
use crate::bake::config::ValidBakeConfig;
use crate::geom::planar::convex_hull;
use crate::ids::AreaId;

/// Sides of the polygon a cylinder's footprint is cut as (circumscribed: it holds the
/// circle).
const CYLINDER_SIDES: usize = 16;

/// Fewest and most sides of a circumscribed polygon a carved cut rounds a disk with
/// (see [`circumscribed_sides`]).
pub(super) const CARVED_SIDES_MIN: usize = 6;
pub(super) const CARVED_SIDES_MAX: usize = 32;

/// The shape's outline from above (x, z), convex, holding the shape.
pub(super) fn outline(shape: &ObstacleShape) -> Vec<Vec2> {
    match *shape {
        ObstacleShape::Cylinder { base, radius_m, .. } => {
            regular_polygon(Vec2::new(base.x, base.z), radius_m, CYLINDER_SIDES)
        }
        ObstacleShape::Box { min, max } => vec![
            Vec2::new(min.x, min.z),
            Vec2::new(max.x, min.z),
            Vec2::new(max.x, max.z),
            Vec2::new(min.x, max.z),
        ],
        ObstacleShape::TurnedBox {
            base,
            half_extents_m,
            yaw_rad,
            ..
        } => {
            let turn = Vec2::from_angle(yaw_rad);
            [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
                .into_iter()
                .map(|(sx, sz)| {
                    let local = Vec2::new(sx * half_extents_m.x, sz * half_extents_m.y);
                    Vec2::new(base.x, base.z) + turn.rotate(local)
                })
                .collect()
        }
    }
}

/// The outline a cut carves: the shape grown by the body's radius (the Minkowski sum
/// with a disk), circumscribed, so it holds every point within the radius of the shape,
/// and straying outside that at most half a bake cell (the finest the bake itself sees
/// the level; see [`circumscribed_sides`]).
pub(super) fn carved_outline(shape: &ObstacleShape, config: &ValidBakeConfig) -> Vec<Vec2> {
    let body_m = config.config.agent_radius_m;
    let tolerance_m = carve_tolerance_m(config);
    if let ObstacleShape::Cylinder {
        base,
        radius_m: own,
        ..
    } = *shape
    {
        // A disk grown by a disk is a disk.
        let radius_m = own + body_m;
        return regular_polygon(
            Vec2::new(base.x, base.z),
            radius_m,
            circumscribed_sides(radius_m, tolerance_m),
        );
    }
    let sides = circumscribed_sides(body_m, tolerance_m);
    let reach = corner_distance_m(body_m, sides);
    let body: Vec<Vec2> = (0..sides)
        .map(|side| {
            let angle = (side as f32 + 0.5) / sides as f32 * std::f32::consts::TAU;
            Vec2::from_angle(angle) * reach
        })
        .collect();
    let points: Vec<Vec2> = outline(shape)
        .iter()
        .flat_map(|&corner| body.iter().map(move |&offset| corner + offset))
        .collect();
    convex_hull(&points)
}

/// How far a carved cut's corners may stand outside the shape grown by the body: half a
/// bake cell, the finest the bake itself sees the level.
fn carve_tolerance_m(config: &ValidBakeConfig) -> f32 {
    0.5 * config.config.cell_size_m
}

/// Distance from the centre to the corners of the regular polygon of `sides` sides
/// circumscribed about a disk of `radius_m`.
fn corner_distance_m(radius_m: f32, sides: usize) -> f32 {
    radius_m / (std::f32::consts::PI / sides as f32).cos()
}

/// Sides of the regular polygon circumscribed about a disk of `radius_m` whose corners
/// stand at most `tolerance_m` outside the disk, within
/// [`CARVED_SIDES_MIN`]..=[`CARVED_SIDES_MAX`]. Each side is one more cut through every
/// polygon under the disk, so no more are used than the tolerance asks.
pub(super) fn circumscribed_sides(radius_m: f32, tolerance_m: f32) -> usize {
    // A circumscribed polygon of n sides has its corners at radius / cos(pi / n).
    let half_angle = (radius_m / (radius_m + tolerance_m)).acos();
    let sides = (std::f32::consts::PI / half_angle).ceil();
    if sides.is_finite() {
        (sides as usize).clamp(CARVED_SIDES_MIN, CARVED_SIDES_MAX)
    } else {
        CARVED_SIDES_MAX
    }
}

/// Bounds (x, z) holding all that `shape` can change in a tile rebuilt as `mode` says:
/// its carved outline's (carving), or its footprint's (voxels, whose tiles' grids
/// include the border the body's erosion reads). Worked out without building the outline
/// (this runs per obstacle for every tile rebuilt).
pub(super) fn reach(
    shape: &ObstacleShape,
    mode: ObstacleRebuild,
    config: &ValidBakeConfig,
) -> (Vec2, Vec2) {
    let (low, high) = shape_footprint(shape);
    if mode == ObstacleRebuild::Voxel {
        return (low, high);
    }
    let body_m = config.config.agent_radius_m;
    let tolerance_m = carve_tolerance_m(config);
    let circumscribed =
        |radius_m: f32| corner_distance_m(radius_m, circumscribed_sides(radius_m, tolerance_m));
    match *shape {
        ObstacleShape::Cylinder { base, radius_m, .. } => {
            let reach = circumscribed(radius_m + body_m);
            let centre = Vec2::new(base.x, base.z);
            (centre - Vec2::splat(reach), centre + Vec2::splat(reach))
        }
        ObstacleShape::Box { .. } | ObstacleShape::TurnedBox { .. } => {
            let reach = circumscribed(body_m);
            (low - Vec2::splat(reach), high + Vec2::splat(reach))
        }
    }
}

/// The regular polygon of `sides` circumscribing the circle of `radius_m` about `centre`.
fn regular_polygon(centre: Vec2, radius_m: f32, sides: usize) -> Vec<Vec2> {
    let reach = corner_distance_m(radius_m, sides);
    // Turning one corner to the next by a fixed rotation: one sine and cosine, not one per
    // corner (this runs at every rebuild).
    let turn = Vec2::from_angle(std::f32::consts::TAU / sides as f32);
    let mut direction = Vec2::X;
    (0..sides)
        .map(|_| {
            let corner = centre + direction * reach;
            direction = turn.rotate(direction);
            corner
        })
        .collect()
}

/// The shape's footprint bounds (x, z).
fn shape_footprint(shape: &ObstacleShape) -> (Vec2, Vec2) {
    match *shape {
        // The bounds of its outline's polygon, without making it (this runs per tile).
        ObstacleShape::Cylinder { base, radius_m, .. } => {
            let reach = corner_distance_m(radius_m, CYLINDER_SIDES);
            let centre = Vec2::new(base.x, base.z);
            (centre - Vec2::splat(reach), centre + Vec2::splat(reach))
        }
        ObstacleShape::Box { min, max } => (Vec2::new(min.x, min.z), Vec2::new(max.x, max.z)),
        ObstacleShape::TurnedBox { .. } => outline(shape).iter().fold(
            (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY)),
            |(low, high), &corner| (low.min(corner), high.max(corner)),
        ),
    }
}

/// The floor heights the shape reaches: from a climb below its foot to its top.
pub(super) fn shape_floors(shape: &ObstacleShape, climb_m: f32) -> (f32, f32) {
    let (foot, top) = match *shape {
        ObstacleShape::Cylinder { base, height_m, .. }
        | ObstacleShape::TurnedBox { base, height_m, .. } => (base.y, base.y + height_m),
        ObstacleShape::Box { min, max } => (min.y, max.y),
    };
    (foot - climb_m, top)
}

/// The shape as an area volume: floors from a climb below its foot to its top.
pub(super) fn shape_volume(shape: &ObstacleShape, area: AreaId, climb_m: f32) -> AreaVolume {
    let (min_y, max_y) = shape_floors(shape, climb_m);
    AreaVolume {
        corners: outline(shape),
        min_y,
        max_y,
        area,
    }
}
