//! The polygon nearest a point, within a box of half extents around it.

use glam::{Vec2, Vec3};

use super::{QueryError, QueryFilter, check_point};
use crate::geom::Aabb;
use crate::mesh::{PolyRef, RuntimeTile, Snapshot, TileGeneration, TileSlot};

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

/// The side of a vertical plane an interaction must be approached from (spec 000): points
/// `p` with `(p - origin) · outward >= 0`, horizontally.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ApproachSide {
    /// A point on the plane (x, z), metres.
    pub origin: Vec2,
    /// The plane's normal towards the allowed side (x, z); need not be unit length.
    pub outward: Vec2,
}

/// Restrictions on which polygons [`nearest_polygon_with`] considers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NearestOptions {
    /// Only polygons on this support layer (0: static ground, `n + 1`: support `n`).
    pub layer: Option<u16>,
    /// Only polygons whose closest point lies on this side.
    pub approach_side: Option<ApproachSide>,
}

/// The polygon nearest `center` among those that pass `filter` and whose bounds overlap the
/// box `center ± half_extents`; `Ok(None)` when there is none.
pub fn nearest_polygon(
    snapshot: &Snapshot,
    center: Vec3,
    half_extents: Vec3,
    filter: &QueryFilter,
) -> Result<Option<Nearest>, QueryError> {
    nearest_polygon_with(
        snapshot,
        center,
        half_extents,
        filter,
        &NearestOptions::default(),
    )
}

/// Like [`nearest_polygon`], restricted by `options`.
///
/// Nearness: a polygon the point lies over is as near as its height difference beyond the
/// climb (so the floor under a standing agent wins over a wall edge beside it); otherwise
/// the 3-D distance to its closest point. Ties go to the lower reference, so the answer does
/// not depend on traversal order.
pub fn nearest_polygon_with(
    snapshot: &Snapshot,
    center: Vec3,
    half_extents: Vec3,
    filter: &QueryFilter,
    options: &NearestOptions,
) -> Result<Option<Nearest>, QueryError> {
    check_nearest_inputs(center, half_extents, options)?;
    let mut choice = Closest::new(center, snapshot.data().params.agent_max_climb_m);
    let query = Aabb {
        min: center - half_extents,
        max: center + half_extents,
    };
    for (slot, generation, tile) in snapshot.tiles_overlapping(&query) {
        // A tile's candidates are gathered with the least nearness their bounds allow, then
        // tried least first: once one's bound cannot beat the best, none left can, so the
        // fewest closest points (the costly part) are worked out. Past the buffer's room
        // the rest are tried in tree order, pruned against the best so far.
        let mut pending = [(0.0f32, 0u16); PENDING_MAX];
        let mut count = 0;
        tile.for_each_overlapping_bounds(&query, |polygon, bounds| {
            if !admitted(tile, polygon, filter, options) {
                return;
            }
            let bound = choice.least_distance(&bounds);
            if count < PENDING_MAX {
                pending[count] = (bound, polygon);
                count += 1;
            } else if choice.could_beat(bound) {
                if let Some(candidate) = candidate(slot, generation, tile, polygon, center, options)
                {
                    choice.offer(candidate);
                }
            }
        });
        while count > 0 {
            let mut least = 0;
            for position in 1..count {
                if pending[position].0 < pending[least].0 {
                    least = position;
                }
            }
            let (bound, polygon) = pending[least];
            count -= 1;
            pending[least] = pending[count];
            if !choice.could_beat(bound) {
                break;
            }
            if let Some(candidate) = candidate(slot, generation, tile, polygon, center, options) {
                choice.offer(candidate);
            }
        }
    }
    Ok(choice.best.map(|(_, nearest)| nearest))
}

/// Candidates [`nearest_polygon_with`] gathers per tile before trying them least first.
const PENDING_MAX: usize = 32;

/// Whether polygon `polygon` of `tile` passes `filter` and lies on `options`' layer.
fn admitted(
    tile: &RuntimeTile,
    polygon: u16,
    filter: &QueryFilter,
    options: &NearestOptions,
) -> bool {
    let data = &tile.data.polygons[usize::from(polygon)];
    filter.passes(data) && options.layer.is_none_or(|layer| layer == data.layer)
}

/// Polygon `polygon` of `tile` (in `slot`, at `generation`) as a candidate for a query
/// from `center`: its closest point, if it lies on the allowed side of `options`.
fn candidate(
    slot: TileSlot,
    generation: TileGeneration,
    tile: &RuntimeTile,
    polygon: u16,
    center: Vec3,
    options: &NearestOptions,
) -> Option<Nearest> {
    let (point, over) = tile.closest_point(polygon, center);
    if let Some(side) = options.approach_side {
        if (Vec2::new(point.x, point.z) - side.origin).dot(side.outward) < 0.0 {
            return None;
        }
    }
    Some(Nearest {
        polygon: PolyRef::new(generation, slot, polygon)?,
        point,
        over_polygon: over,
    })
}

/// The nearest candidate so far by [`nearest_polygon_with`]'s measure.
struct Closest {
    center: Vec3,
    climb_m: f32,
    /// The best candidate and its squared distance.
    best: Option<(f32, Nearest)>,
}

impl Closest {
    fn new(center: Vec3, climb_m: f32) -> Closest {
        Closest {
            center,
            climb_m,
            best: None,
        }
    }

    /// Squared nearness: the height gap beyond the climb for a polygon the point lies over,
    /// otherwise the 3-D distance to its closest point.
    fn distance(&self, candidate: &Nearest) -> f32 {
        if candidate.over_polygon {
            ((candidate.point.y - self.center.y).abs() - self.climb_m)
                .max(0.0)
                .powi(2)
        } else {
            candidate.point.distance_squared(self.center)
        }
    }

    /// Keeps `candidate` if it is nearer than the best so far (ties to the lower reference).
    fn offer(&mut self, candidate: Nearest) {
        let distance = self.distance(&candidate);
        let better = self.best.is_none_or(|(best, current)| {
            distance < best || (distance == best && candidate.polygon < current.polygon)
        });
        if better {
            self.best = Some((distance, candidate));
        }
    }

    /// The least squared nearness a polygon within `bounds` (every point of its surface
    /// inside them) can have.
    fn least_distance(&self, bounds: &Aabb) -> f32 {
        let outside = (bounds.min - self.center)
            .max(self.center - bounds.max)
            .max(Vec3::ZERO);
        if outside.x > 0.0 || outside.z > 0.0 {
            // Not over the polygon: the 3-D distance is at least the box's.
            outside.length_squared()
        } else {
            // Maybe over it: the height gap beyond the climb is at least the box's.
            (outside.y - self.climb_m).max(0.0).powi(2)
        }
    }

    /// Whether a polygon whose least squared nearness is `bound` could be nearer than the
    /// best so far. One that cannot is skipped before its closest point, the costly part of
    /// a candidate, is computed.
    fn could_beat(&self, bound: f32) -> bool {
        let Some((best, _)) = self.best else {
            return true;
        };
        // A little slack, so rounding in the closest point never drops a tie.
        bound * (1.0 - 1e-5) - 1e-9 <= best
    }
}

/// Every polygon within a horizontal distance `horizontal_m` and a vertical distance
/// `vertical_m` (both may be zero) of `center` (measured to its closest point), that passes `filter` and
/// `options`, nearest first (3-D distance, ties by reference): the candidates of a
/// tolerance projection (spec 000), each keeping its identity. The tolerances are applied
/// exactly as given; nothing outside them is returned.
pub fn polygons_within(
    snapshot: &Snapshot,
    center: Vec3,
    horizontal_m: f32,
    vertical_m: f32,
    filter: &QueryFilter,
    options: &NearestOptions,
) -> Result<Vec<Nearest>, QueryError> {
    if !(horizontal_m >= 0.0
        && vertical_m >= 0.0
        && horizontal_m.is_finite()
        && vertical_m.is_finite())
    {
        return Err(QueryError::BadExtents(Vec3::new(
            horizontal_m,
            vertical_m,
            horizontal_m,
        )));
    }
    // The box only gathers polygons (a zero tolerance still needs a box with volume); the
    // exact test below applies the tolerances as given.
    let half_extents = Vec3::new(horizontal_m, vertical_m, horizontal_m).max(Vec3::splat(1e-4));
    check_nearest_inputs(center, half_extents, options)?;
    let mut found: Vec<(f32, Nearest)> = Vec::new();
    for_each_candidate(
        snapshot,
        center,
        half_extents,
        filter,
        options,
        |candidate| {
            let offset = candidate.point - center;
            let horizontal = Vec2::new(offset.x, offset.z).length();
            if horizontal <= horizontal_m && offset.y.abs() <= vertical_m {
                found.push((offset.length(), candidate));
            }
        },
    );
    found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.polygon.cmp(&b.1.polygon)));
    Ok(found.into_iter().map(|(_, nearest)| nearest).collect())
}

fn check_nearest_inputs(
    center: Vec3,
    half_extents: Vec3,
    options: &NearestOptions,
) -> Result<(), QueryError> {
    check_point("nearest_polygon center", center)?;
    if !(half_extents.is_finite() && half_extents.min_element() > 0.0) {
        return Err(QueryError::BadExtents(half_extents));
    }
    if let Some(side) = options.approach_side {
        if !(side.origin.is_finite()
            && side.outward.is_finite()
            && side.outward.length_squared() > 0.0)
        {
            return Err(QueryError::BadApproachSide {
                origin: side.origin,
                outward: side.outward,
            });
        }
    }
    Ok(())
}

/// Calls `visit` with the closest point of every polygon whose bounds overlap the box
/// `center ± half_extents` and that passes `filter` and `options`.
fn for_each_candidate(
    snapshot: &Snapshot,
    center: Vec3,
    half_extents: Vec3,
    filter: &QueryFilter,
    options: &NearestOptions,
    mut visit: impl FnMut(Nearest),
) {
    let query = Aabb {
        min: center - half_extents,
        max: center + half_extents,
    };
    for (slot, generation, tile) in snapshot.tiles_overlapping(&query) {
        tile.for_each_overlapping_bounds(&query, |polygon, _| {
            if !admitted(tile, polygon, filter, options) {
                return;
            }
            if let Some(found) = candidate(slot, generation, tile, polygon, center, options) {
                visit(found);
            }
        });
    }
}

#[cfg(all(test, feature = "harness"))]
mod tests {
    use super::*;
    use crate::bake::{BakeConfig, Preset, bake};
    use crate::mesh::NavMesh;

    /// The nearest polygon without the bounds test: every candidate's closest point.
    fn nearest_unpruned(snapshot: &Snapshot, center: Vec3, half_extents: Vec3) -> Option<Nearest> {
        let mut choice = Closest::new(center, snapshot.data().params.agent_max_climb_m);
        for_each_candidate(
            snapshot,
            center,
            half_extents,
            &QueryFilter::new(),
            &NearestOptions::default(),
            |candidate| choice.offer(candidate),
        );
        choice.best.map(|(_, nearest)| nearest)
    }

    #[test]
    fn skipping_polygons_by_their_bounds_never_changes_the_nearest() {
        // A city with ramps and several storeys of street, in 48-cell tiles and in one tile
        // (whose widest boxes hold more candidates than the least-first buffer, so the
        // tree-order fallback past it is checked too): points scattered through its
        // volume, above, below and between the walkable surfaces.
        let city = crate::scene::city::city(400, 5);
        let world = city.scene.world_triangles().unwrap();
        let (low, high) = (world.bounds.min, world.bounds.max);
        let (mut found, mut checked, mut overflowing) = (0, 0, 0);
        for tile_size_cells in [Some(48), None] {
            let config = BakeConfig {
                tile_size_cells,
                ..BakeConfig::preset(Preset::Recast)
            };
            let mesh = NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap();
            let snapshot = mesh.snapshot();
            let mut state = 0x9E37_79B9_7F4A_7C15u64;
            let mut unit = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 24) as f32
            };
            for _ in 0..5_000 {
                let center = low + (high - low) * Vec3::new(unit(), unit(), unit());
                for half_extents in [
                    Vec3::new(2.0, 4.0, 2.0),
                    Vec3::new(6.0, 1.0, 6.0),
                    Vec3::new(20.0, 6.0, 20.0),
                ] {
                    let query = Aabb {
                        min: center - half_extents,
                        max: center + half_extents,
                    };
                    // The most candidates any one tile offers this query.
                    let mut most_in_a_tile = 0;
                    for (_, _, tile) in snapshot.tiles_overlapping(&query) {
                        let mut in_tile = 0;
                        tile.for_each_overlapping_bounds(&query, |_, _| in_tile += 1);
                        most_in_a_tile = most_in_a_tile.max(in_tile);
                    }
                    overflowing += usize::from(most_in_a_tile > PENDING_MAX);
                    let pruned =
                        nearest_polygon(&snapshot, center, half_extents, &QueryFilter::new())
                            .unwrap();
                    assert_eq!(
                        pruned,
                        nearest_unpruned(&snapshot, center, half_extents),
                        "{center} {half_extents} {tile_size_cells:?}"
                    );
                    found += usize::from(pruned.is_some());
                    checked += 1;
                }
            }
        }
        // (Buildings make the volume tall: about a fifth of the points are near a surface.)
        assert!(
            found > checked / 8,
            "only {found} of {checked} points near the mesh"
        );
        assert!(
            overflowing > 100,
            "only {overflowing} queries past {PENDING_MAX} candidates in a tile"
        );
    }
}
