//! The polygon nearest a point, within a box of half extents around it.

use glam::Vec3;

use super::{QueryError, QueryFilter, check_point};
use crate::geom::Aabb;
use crate::mesh::{PolyRef, Snapshot};

/// A point on the mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nearest {
    /// The polygon.
    pub polygon: PolyRef,
    /// The closest point on it, on its detail surface.
    pub point: Vec3,
    /// Whether the query point lies over (or under) the polygon, seen from above.
    pub over_polygon: bool,
}

/// The polygon nearest `center` among those that pass `filter` and whose bounds overlap the
/// box `center ± half_extents`; `Ok(None)` when there is none.
///
/// Nearness: a polygon the point lies over is as near as its height difference beyond the
/// climb (so the floor under a standing agent wins over a wall edge beside it); otherwise
/// the 3-D distance to its closest point. Ties go to the lower reference, so the answer does
/// not depend on traversal order.
pub fn nearest_polygon(
    snapshot: &Snapshot,
    center: Vec3,
    half_extents: Vec3,
    filter: &QueryFilter,
) -> Result<Option<Nearest>, QueryError> {
    check_point("nearest_polygon center", center)?;
    if !(half_extents.is_finite() && half_extents.min_element() > 0.0) {
        return Err(QueryError::BadExtents(half_extents));
    }
    let climb = snapshot.data().params.agent_max_climb_m;
    let query = Aabb {
        min: center - half_extents,
        max: center + half_extents,
    };
    let mut best: Option<(f32, Nearest)> = None;
    for (slot, generation, tile) in snapshot.tiles_overlapping(&query) {
        tile.for_each_overlapping(&query, |polygon| {
            if !filter.passes(tile.data.polygons[usize::from(polygon)].area) {
                return;
            }
            let (point, over) = tile.closest_point(polygon, center);
            let distance = if over {
                let gap = ((point.y - center.y).abs() - climb).max(0.0);
                gap * gap
            } else {
                point.distance_squared(center)
            };
            let Some(reference) = PolyRef::new(generation, slot, polygon) else {
                return;
            };
            let better = best.is_none_or(|(d, current)| {
                distance < d || (distance == d && reference < current.polygon)
            });
            if better {
                best = Some((
                    distance,
                    Nearest {
                        polygon: reference,
                        point,
                        over_polygon: over,
                    },
                ));
            }
        });
    }
    Ok(best.map(|(_, nearest)| nearest))
}
