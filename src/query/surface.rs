//! Walking on the surface: rays along the mesh and constrained moves.
//!
//! Both work in the horizontal plane (heights come from the detail mesh), polygon by
//! polygon, through ordinary and tile-border portals; a portal into a polygon the filter
//! refuses, a pending tile, or a polygon edge with nothing across it is a wall.

use glam::{Vec2, Vec3};

use super::portals::border_crossing;
use super::{QueryError, QueryFilter, check_point};
use crate::geom::next_around;
use crate::mesh::{Adjacent, BorderPortal, PolyRef, Snapshot};

/// Most polygons a ray or a move visits (the rest of a longer walk is a wall).
pub const SURFACE_POLYGONS_MAX: usize = 256;

/// Where a ray stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct RaycastHit {
    /// Fraction of the segment travelled before the wall, or `None` if the end was reached.
    pub hit_fraction: Option<f32>,
    /// Outward normal of the wall hit (horizontal, unit), if any.
    pub wall_normal: Option<Vec2>,
    /// Polygons crossed, from the start.
    pub polygons: Vec<PolyRef>,
}

/// The polygons across edge `edge` of `reference` that pass `filter`, with the portal ends,
/// into `out` (cleared first: a walk reuses one buffer for every edge it looks across).
fn across(
    snapshot: &Snapshot,
    reference: PolyRef,
    edge: usize,
    filter: &QueryFilter,
    out: &mut Vec<BorderPortal>,
) {
    out.clear();
    let Some(tile) = snapshot.tile(reference) else {
        return;
    };
    let Some(adjacent) = tile
        .adjacent(reference.polygon())
        .iter()
        .find(|adjacent| usize::from(adjacent.edge) == edge)
    else {
        return; // nothing across: a wall
    };
    let corners = &tile.corners[usize::from(reference.polygon())];
    let count = usize::from(tile.data.polygons[usize::from(reference.polygon())].vertex_count);
    let (a, b) = (corners[edge], corners[next_around(edge, count)]);
    if adjacent.border_side == Adjacent::INTERNAL {
        if let Some(other) =
            PolyRef::new(reference.generation(), reference.slot(), adjacent.neighbour)
        {
            if filter.passes(&tile.data.polygons[usize::from(adjacent.neighbour)]) {
                out.push((other, a, b));
            }
        }
        return;
    }
    // (A walk records no reads: it answers now, from the snapshot it is given.)
    let mut scratch = Vec::new();
    let (_, portals) = border_crossing(snapshot, reference, adjacent, (a, b), &mut scratch);
    out.extend(portals.iter().filter(|(other, _, _)| {
        snapshot
            .tile(*other)
            .is_some_and(|t| filter.passes(&t.data.polygons[usize::from(other.polygon())]))
    }));
}

fn flat(point: Vec3) -> Vec2 {
    Vec2::new(point.x, point.z)
}

/// A polygon's corners seen from above, in a fixed array (at most six: no allocation).
fn flat_corners(tile: &crate::mesh::RuntimeTile, polygon: u16) -> ([Vec2; 6], usize) {
    let mut corners = [Vec2::ZERO; 6];
    let mut count = 0;
    for corner in tile.corners(polygon) {
        corners[count] = flat(corner);
        count += 1;
    }
    (corners, count)
}

/// Casts a ray along the surface from `start` (on `start_polygon`) towards `end`.
pub fn raycast(
    snapshot: &Snapshot,
    start_polygon: PolyRef,
    start: Vec3,
    end: Vec3,
    filter: &QueryFilter,
) -> Result<RaycastHit, QueryError> {
    check_point("raycast start", start)?;
    check_point("raycast end", end)?;
    snapshot
        .tile(start_polygon)
        .ok_or(QueryError::StaleRef(start_polygon))?;
    let (origin, direction) = (flat(start), flat(end) - flat(start));
    let mut current = start_polygon;
    let mut polygons = vec![current];
    let mut travelled = 0.0f32;
    let mut neighbours = Vec::new();
    while polygons.len() <= SURFACE_POLYGONS_MAX {
        let tile = snapshot
            .tile(current)
            .ok_or(QueryError::StaleRef(current))?;
        let (corners, count) = flat_corners(tile, current.polygon());
        let corners = &corners[..count];
        // The edge through which the segment leaves the polygon, and when.
        let mut exit: Option<(f32, usize)> = None;
        for edge in 0..count {
            let (a, b) = (corners[edge], corners[next_around(edge, count)]);
            let outward = Vec2::new(-(b - a).y, (b - a).x);
            let speed = outward.dot(direction);
            if speed <= 1e-12 {
                continue;
            }
            let t = -outward.dot(origin - a) / speed;
            if exit.is_none_or(|(best, _)| t < best) {
                exit = Some((t, edge));
            }
        }
        let Some((t, edge)) = exit else { break };
        if t >= 1.0 {
            return Ok(RaycastHit {
                hit_fraction: None,
                wall_normal: None,
                polygons,
            });
        }
        travelled = travelled.max(t);
        let crossing = origin + direction * travelled;
        // The neighbour whose portal holds the crossing point.
        across(snapshot, current, edge, filter, &mut neighbours);
        let next = neighbours.iter().copied().find(|(_, left, right)| {
            let (l, r) = (flat(*left), flat(*right));
            let span = r - l;
            let along = (crossing - l).dot(span) / span.length_squared().max(1e-12);
            (-1e-4..=1.0 + 1e-4).contains(&along)
        });
        match next {
            Some((other, _, _)) => {
                current = other;
                polygons.push(current);
            }
            None => {
                let (a, b) = (corners[edge], corners[next_around(edge, count)]);
                let normal = Vec2::new(-(b - a).y, (b - a).x).normalize_or_zero();
                return Ok(RaycastHit {
                    hit_fraction: Some(travelled.clamp(0.0, 1.0)),
                    wall_normal: Some(normal),
                    polygons,
                });
            }
        }
    }
    Ok(RaycastHit {
        hit_fraction: Some(travelled.clamp(0.0, 1.0)),
        wall_normal: None,
        polygons,
    })
}

/// Result of a constrained move.
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceMove {
    /// Where the move ends: `end` if reachable inside the move's circle, else the point of
    /// the walls nearest to it. Height from the detail mesh.
    pub position: Vec3,
    /// The polygon it ends on.
    pub polygon: PolyRef,
    /// Polygons visited.
    pub visited: Vec<PolyRef>,
}

/// Moves from `start` (on `start_polygon`) towards `end`, staying on the surface: a
/// breadth-first walk over the polygons within the circle through both points, which ends
/// at `end` if one of them holds it, else at the nearest point of their walls.
pub fn move_along_surface(
    snapshot: &Snapshot,
    start_polygon: PolyRef,
    start: Vec3,
    end: Vec3,
    filter: &QueryFilter,
) -> Result<SurfaceMove, QueryError> {
    check_point("move start", start)?;
    check_point("move end", end)?;
    snapshot
        .tile(start_polygon)
        .ok_or(QueryError::StaleRef(start_polygon))?;
    let target = flat(end);
    let centre = (flat(start) + target) * 0.5;
    let radius = flat(start).distance(target) * 0.5 + 1e-3;
    let mut visited = vec![start_polygon];
    let mut best = (f32::INFINITY, flat(start), start_polygon);
    let mut neighbours = Vec::new();
    let mut cursor = 0;
    while cursor < visited.len() {
        let current = visited[cursor];
        cursor += 1;
        let Some(tile) = snapshot.tile(current) else {
            continue;
        };
        let (corners, count) = flat_corners(tile, current.polygon());
        let corners = &corners[..count];
        if tile.contains_xz(current.polygon(), target) {
            best = (0.0, target, current);
            break;
        }
        for edge in 0..count {
            let (a, b) = (corners[edge], corners[next_around(edge, count)]);
            across(snapshot, current, edge, filter, &mut neighbours);
            if neighbours.is_empty() {
                // A wall: the nearest point on it to the target is a candidate.
                let t =
                    ((target - a).dot(b - a) / (b - a).length_squared().max(1e-12)).clamp(0.0, 1.0);
                let point = a + (b - a) * t;
                let distance = point.distance_squared(target);
                if distance < best.0 {
                    best = (distance, point, current);
                }
                continue;
            }
            // Portals outside the circle do not lead anywhere the move can go.
            let t = ((centre - a).dot(b - a) / (b - a).length_squared().max(1e-12)).clamp(0.0, 1.0);
            if (a + (b - a) * t).distance(centre) > radius {
                continue;
            }
            for &(other, _, _) in &neighbours {
                if !visited.contains(&other) && visited.len() < SURFACE_POLYGONS_MAX {
                    visited.push(other);
                }
            }
        }
    }
    let (_, point, polygon) = best;
    let height = snapshot
        .tile(polygon)
        .map_or(start.y, |tile| tile.height_at(polygon.polygon(), point));
    Ok(SurfaceMove {
        position: Vec3::new(point.x, height, point.y),
        polygon,
        visited,
    })
}
