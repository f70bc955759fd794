//! Reconnect: the fewest polygons from where an agent stands back to a path it was pushed
//! off, found by a small breadth-first search, without a goal and without a search's
//! node budget.
//!
//! Stage: runtime query. Inputs: a snapshot, the start polygon, a filter, a node limit,
//! and which polygons count as "back" (the caller's test: the stretch of its corridor just
//! behind and ahead of where the agent was). Output: a partial [`PathResult`] from the
//! start to the first polygon the test accepts, fewest polygons first (ties: the order
//! the mesh lists edges, so the same mesh gives the same answer), or `None` when none lies
//! within the limit. Its read set covers the tiles it read, so the corridor it joins can
//! carry them (the crowd splices the two).
//!
//! A walker shoved two polygons off its corridor (a crowd's pushes, a door jamb) is
//! usually a step or two from it: reconnecting costs a few adjacency reads where a new path
//! costs a search, a new request identity and frames in the queue.
//!
//! Invariants: the path is connected, never revisits a polygon, crosses no off-mesh link,
//! and enters only polygons the filter passes (the start is where the agent already is);
//! it is never complete.

use super::portals::border_crossing;
use super::{PathResult, PathStep, QueryError, QueryFilter, ReadSet};
use crate::geom::next_around;
use crate::mesh::{Adjacent, PolyRef, Snapshot};

/// Polygons a crowd lets one reconnection visit: two or three rings of neighbours on a
/// baked level, far less than a search's node budget.
pub const RECONNECT_NODES_MAX: usize = 24;

/// The fewest polygons from `start` to one `is_back` accepts (see the module docs), at
/// most `nodes_max` polygons visited; `Ok(None)` when none is found within them.
/// `is_back(start)` gives the one-polygon path.
pub fn reconnect(
    snapshot: &Snapshot,
    start: PolyRef,
    filter: &QueryFilter,
    nodes_max: usize,
    mut is_back: impl FnMut(PolyRef) -> bool,
) -> Result<Option<PathResult>, QueryError> {
    snapshot.tile(start).ok_or(QueryError::StaleRef(start))?;
    let mut read_set = ReadSet::new(filter);
    read_set.read_tile(start.slot(), start.generation());
    // Visited polygons with the index of the one they were reached from (the start: its
    // own). Breadth-first: the queue is this list from `next` on.
    let mut visited: Vec<(PolyRef, u32)> = vec![(start, 0)];
    let mut found = is_back(start).then_some(0);
    let mut next = 0;
    let mut portals = Vec::new();
    while found.is_none() && next < visited.len() {
        let (polygon, _) = visited[next];
        let from = next as u32;
        next += 1;
        let Some(tile) = snapshot.tile(polygon) else {
            continue;
        };
        let index = usize::from(polygon.polygon());
        let corners = &tile.corners[index];
        let count = usize::from(tile.data.polygons[index].vertex_count);
        let mut offer = |candidate: PolyRef, visited: &mut Vec<(PolyRef, u32)>| {
            if found.is_some()
                || visited.len() >= nodes_max
                || visited.iter().any(|&(seen, _)| seen == candidate)
            {
                return;
            }
            let passes = snapshot.tile(candidate).is_some_and(|other| {
                filter.passes(&other.data.polygons[usize::from(candidate.polygon())])
            });
            if passes {
                visited.push((candidate, from));
                if is_back(candidate) {
                    found = Some(visited.len() - 1);
                }
            }
        };
        for adjacent in tile.adjacent(polygon.polygon()) {
            if adjacent.border_side == Adjacent::INTERNAL {
                offer(polygon.with_polygon(adjacent.neighbour), &mut visited);
            } else {
                let edge = usize::from(adjacent.edge);
                let ends = (corners[edge], corners[next_around(edge, count)]);
                let (facing, across) =
                    border_crossing(snapshot, polygon, adjacent, ends, &mut portals);
                if let Some((slot, generation)) = facing {
                    read_set.read_tile(slot, generation);
                }
                for &(neighbour, _, _) in across {
                    offer(neighbour, &mut visited);
                }
            }
        }
    }
    let Some(mut at) = found else {
        return Ok(None);
    };
    let mut steps = Vec::new();
    loop {
        let (polygon, from) = visited[at];
        steps.push(PathStep {
            polygon,
            via_link: None,
        });
        if at == 0 {
            break;
        }
        at = from as usize;
    }
    steps.reverse();
    Ok(Some(PathResult::partial(steps, read_set, next as u32)))
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::ids::AreaId;
    use crate::mesh::blob::BakeParams;
    use crate::mesh::{NavMesh, TileData, WalkablePolygon};

    /// A `columns` x `rows` grid of 2 m squares from the origin, of area 1 except the
    /// squares listed in `closed` (area 2: a filter excluding it treats them as closed
    /// doors).
    fn grid(columns: usize, rows: usize, closed: &[(usize, usize)]) -> NavMesh {
        let mut polygons = Vec::new();
        for row in 0..rows {
            for column in 0..columns {
                let (x0, z0) = (2.0 * column as f32, 2.0 * row as f32);
                let mut polygon = WalkablePolygon::ground(vec![
                    Vec3::new(x0, 0.0, z0),
                    Vec3::new(x0 + 2.0, 0.0, z0),
                    Vec3::new(x0 + 2.0, 0.0, z0 + 2.0),
                    Vec3::new(x0, 0.0, z0 + 2.0),
                ]);
                polygon.area = AreaId(if closed.contains(&(column, row)) {
                    2
                } else {
                    1
                });
                polygons.push(polygon);
            }
        }
        let mut mesh = NavMesh::new(BakeParams::default());
        mesh.add_tiles(vec![TileData::from_walkable_polygons(&polygons).unwrap()])
            .unwrap();
        mesh
    }

    /// The polygon under the centre of square (`column`, `row`).
    fn square(snapshot: &Snapshot, column: usize, row: usize) -> PolyRef {
        let point = Vec3::new(2.0 * column as f32 + 1.0, 0.0, 2.0 * row as f32 + 1.0);
        crate::query::nearest_polygon(snapshot, point, Vec3::splat(0.5), &QueryFilter::new())
            .unwrap()
            .unwrap()
            .polygon
    }

    #[test]
    fn the_fewest_polygons_back_to_the_corridor() {
        // The corridor runs along row 0; the agent stands two rows above it, at column 3.
        let mesh = grid(6, 3, &[]);
        let snapshot = mesh.snapshot();
        let corridor: Vec<PolyRef> = (0..6).map(|c| square(&snapshot, c, 0)).collect();
        let start = square(&snapshot, 3, 2);
        let path = reconnect(
            &snapshot,
            start,
            &QueryFilter::new(),
            RECONNECT_NODES_MAX,
            |polygon| corridor.contains(&polygon),
        )
        .unwrap()
        .expect("two steps away");
        let polygons: Vec<PolyRef> = path.steps.iter().map(|step| step.polygon).collect();
        assert_eq!(
            polygons,
            [start, square(&snapshot, 3, 1), square(&snapshot, 3, 0)],
            "straight down: three polygons, the last on the corridor"
        );
        assert!(!path.complete);
        assert_eq!(path.read_set.tiles.len(), 1);
        assert!(path.read_set.tiles[0].on_route);
    }

    #[test]
    fn a_closed_polygon_is_walked_around_and_a_limit_too_small_finds_nothing() {
        // (3, 1) is closed: the way down goes round it, four polygons instead of three.
        let mesh = grid(6, 3, &[(3, 1)]);
        let snapshot = mesh.snapshot();
        let corridor: Vec<PolyRef> = (0..6).map(|c| square(&snapshot, c, 0)).collect();
        let mut filter = QueryFilter::new();
        filter.set_area_excluded(AreaId(2), true);
        let start = square(&snapshot, 3, 2);
        let closed = square(&snapshot, 3, 1);
        let path = reconnect(&snapshot, start, &filter, RECONNECT_NODES_MAX, |polygon| {
            corridor.contains(&polygon)
        })
        .unwrap()
        .expect("round the closed square");
        assert_eq!(path.steps.len(), 4);
        assert!(path.steps.iter().all(|step| step.polygon != closed));
        assert!(corridor.contains(&path.steps[3].polygon));
        // Three polygons visited cannot reach row 0 round the closed square.
        let none = reconnect(&snapshot, start, &filter, 3, |polygon| {
            corridor.contains(&polygon)
        })
        .unwrap();
        assert_eq!(none, None);
    }

    #[test]
    fn a_start_already_back_is_a_path_of_one_and_a_stale_start_is_refused() {
        let mesh = grid(2, 1, &[]);
        let snapshot = mesh.snapshot();
        let start = square(&snapshot, 0, 0);
        let path = reconnect(&snapshot, start, &QueryFilter::new(), 8, |p| p == start)
            .unwrap()
            .unwrap();
        assert_eq!(path.steps.len(), 1);
        let stale = PolyRef::new(crate::mesh::TileGeneration(99), start.slot(), 0).unwrap();
        assert_eq!(
            reconnect(&snapshot, stale, &QueryFilter::new(), 8, |_| true),
            Err(QueryError::StaleRef(stale))
        );
    }
}
