//! Head start: a few polygons toward a target found by greedy descent, without a search,
//! for an agent to walk while its path is searched.
//!
//! Stage: runtime query. Inputs: a snapshot, the start polygon and point, a target point
//! (not snapped: no goal polygon is needed), a filter and a step limit. Output: a partial
//! [`PathResult`] from the start: each step enters the neighbour (across a shared edge or a
//! tile border, never an off-mesh link) whose shared edge comes nearest the target seen
//! from above, as long as that is nearer than the walk has come (the first step may go
//! sideways, so an agent against a wall still gets going); it stops at the limit, at
//! the polygon over the target, or where no neighbour brings it nearer (a dead end of the
//! greedy walk, not of the mesh). Its read set covers the tiles it read, so adoption
//! checks it like a searched path.
//!
//! A crowd answers a burst of move orders with these at a cost of a few adjacency reads
//! each (a search costs tens of node expansions), so every ordered agent starts moving the
//! right way within frames; the searched corridor replaces it when it arrives.
//!
//! Invariants: the path is connected, never revisits a polygon, enters only polygons the
//! filter passes, and is never complete (the target polygon is not known).

use glam::{Vec2, Vec3};

use super::portals::border_crossing;
use super::{PathResult, PathStep, QueryError, QueryFilter, ReadSet};
use crate::geom::next_around;
use crate::mesh::{Adjacent, PolyRef, Snapshot};

/// Steps the crowd gives a head start: a few polygons, tens of metres on a baked level.
pub const HEAD_START_STEPS: usize = 4;

/// A step whose edge comes no farther from the target than this beyond where the walk
/// stands still counts as coming nearer: a walk continued from the end of another starts
/// on the very edge it should cross next, at the same distance, metres.
const LEVEL_M: f32 = 0.01;

/// The horizontal distance from the segment `a`-`b` to `point`.
fn segment_distance(a: Vec2, b: Vec2, point: Vec2) -> f32 {
    let along = b - a;
    let length_squared = along.length_squared();
    let t = if length_squared > 0.0 {
        ((point - a).dot(along) / length_squared).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a + along * t).distance(point)
}

/// The greedy walk from `start` toward `target`, at most `steps_max` polygons past the
/// start (see the module docs). With `sideways_first`, the first step may go sideways;
/// without, every step must come nearer (a walk continued from where an earlier one
/// stopped: allowing it there would pace between two polygons).
pub fn head_start(
    snapshot: &Snapshot,
    start: PolyRef,
    start_position: Vec3,
    target: Vec3,
    filter: &QueryFilter,
    steps_max: usize,
    sideways_first: bool,
) -> Result<PathResult, QueryError> {
    for (what, point) in [
        ("head start", start_position),
        ("head start target", target),
    ] {
        if !point.is_finite() {
            return Err(QueryError::NotFinite { what, value: point });
        }
    }
    let tile = snapshot.tile(start).ok_or(QueryError::StaleRef(start))?;
    let mut read_set = ReadSet::new(filter);
    read_set.read_tile(start.slot(), start.generation());
    let flat = |point: Vec3| Vec2::new(point.x, point.z);
    let goal = flat(target);
    let mut steps = vec![PathStep {
        polygon: start,
        via_link: None,
    }];
    let mut here = flat(start_position).distance(goal);
    let mut current = (start, tile);
    let mut portals = Vec::new();
    while steps.len() <= steps_max {
        let (polygon, tile) = current;
        if tile.contains_xz(polygon.polygon(), goal) {
            break; // standing over the target
        }
        let mut best: Option<(PolyRef, f32)> = None;
        // A step's measure: how near the shared edge comes to the target (a midpoint
        // would misjudge the long edges of a large polygon).
        let mut offer = |candidate: PolyRef, a: Vec3, b: Vec3, steps: &[PathStep]| {
            let distance = segment_distance(flat(a), flat(b), goal);
            if best.is_some_and(|(_, nearest)| nearest <= distance)
                || steps.iter().any(|step| step.polygon == candidate)
            {
                return;
            }
            let passes = snapshot.tile(candidate).is_some_and(|other| {
                filter.passes(&other.data.polygons[usize::from(candidate.polygon())])
            });
            if passes {
                best = Some((candidate, distance));
            }
        };
        let corners = &tile.corners[usize::from(polygon.polygon())];
        let count = usize::from(tile.data.polygons[usize::from(polygon.polygon())].vertex_count);
        for adjacent in tile.adjacent(polygon.polygon()) {
            let edge = usize::from(adjacent.edge);
            let (a, b) = (corners[edge], corners[next_around(edge, count)]);
            if adjacent.border_side == Adjacent::INTERNAL {
                offer(polygon.with_polygon(adjacent.neighbour), a, b, &steps);
            } else {
                let (facing, across) =
                    border_crossing(snapshot, polygon, adjacent, (a, b), &mut portals);
                if let Some((slot, generation)) = facing {
                    read_set.read_tile(slot, generation);
                }
                for &(reference, left, right) in across {
                    offer(reference, left, right, &steps);
                }
            }
        }
        // The first step may go sideways (an agent at its polygon's nearest point to
        // the target, against a wall, still gets going); later ones must come nearer.
        let Some((next, distance)) = best.filter(|&(_, distance)| {
            distance < here + LEVEL_M || (sideways_first && steps.len() == 1)
        }) else {
            break; // no neighbour brings the walk nearer
        };
        let Some(next_tile) = snapshot.tile(next) else {
            break;
        };
        steps.push(PathStep {
            polygon: next,
            via_link: None,
        });
        here = distance;
        current = (next, next_tile);
    }
    let nodes_expanded = steps.len() as u32;
    Ok(PathResult::partial(steps, read_set, nodes_expanded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::blob::BakeParams;
    use crate::mesh::{NavMesh, TileData, WalkablePolygon};

    /// A row of `count` 2 m squares along x, from the origin.
    fn row(count: usize) -> NavMesh {
        let square = |x0: f32, z0: f32| {
            WalkablePolygon::ground(vec![
                Vec3::new(x0, 0.0, z0),
                Vec3::new(x0 + 2.0, 0.0, z0),
                Vec3::new(x0 + 2.0, 0.0, z0 + 2.0),
                Vec3::new(x0, 0.0, z0 + 2.0),
            ])
        };
        let polygons: Vec<_> = (0..count).map(|i| square(2.0 * i as f32, 0.0)).collect();
        let mut mesh = NavMesh::new(BakeParams::default());
        mesh.add_tiles(vec![TileData::from_walkable_polygons(&polygons).unwrap()])
            .unwrap();
        mesh
    }

    fn start_of(snapshot: &Snapshot, point: Vec3) -> PolyRef {
        crate::query::nearest_polygon(snapshot, point, Vec3::splat(0.5), &QueryFilter::new())
            .unwrap()
            .unwrap()
            .polygon
    }

    #[test]
    fn the_walk_heads_for_the_target_and_stops_at_the_step_limit() {
        let mesh = row(10);
        let snapshot = mesh.snapshot();
        let start_point = Vec3::new(1.0, 0.0, 1.0);
        let start = start_of(&snapshot, start_point);
        let target = Vec3::new(19.0, 0.0, 1.0);
        let filter = QueryFilter::new();
        let path = head_start(&snapshot, start, start_point, target, &filter, 4, true).unwrap();
        assert_eq!(path.steps.len(), 5, "the start and four steps");
        assert!(!path.complete);
        for (index, step) in path.steps.iter().enumerate() {
            let tile = snapshot.tile(step.polygon).unwrap();
            let centre = Vec2::new(2.0 * index as f32 + 1.0, 1.0);
            assert!(
                tile.contains_xz(step.polygon.polygon(), centre),
                "step {index}"
            );
        }
        // Enough steps: it stops on the polygon over the target.
        let path = head_start(&snapshot, start, start_point, target, &filter, 20, true).unwrap();
        assert_eq!(path.steps.len(), 10);
        assert!(path.read_set.tiles.iter().all(|read| read.on_route));
        // A target behind the start: one step sideways (the only neighbour), then
        // nothing brings the walk nearer.
        let back = head_start(
            &snapshot,
            start,
            start_point,
            Vec3::new(-5.0, 0.0, 1.0),
            &filter,
            4,
            true,
        )
        .unwrap();
        assert_eq!(back.steps.len(), 2);
        // Continuing a walk, no sideways step: it stays.
        let stay = head_start(
            &snapshot,
            start,
            start_point,
            Vec3::new(-5.0, 0.0, 1.0),
            &filter,
            4,
            false,
        )
        .unwrap();
        assert_eq!(stay.steps.len(), 1);
    }

    #[test]
    fn bad_input_is_refused_by_name() {
        let mesh = row(3);
        let snapshot = mesh.snapshot();
        let start = start_of(&snapshot, Vec3::new(1.0, 0.0, 1.0));
        let error = head_start(
            &snapshot,
            start,
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(f32::NAN, 0.0, 0.0),
            &QueryFilter::new(),
            4,
            true,
        )
        .unwrap_err();
        assert!(error.to_string().contains("head start target"), "{error}");
    }
}
