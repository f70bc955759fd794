//! A whole query, the way games (and Detour's reference runs) ask it: from a point to a
//! point, each end snapped to the nearest polygon, a path search, and the straight path.

use glam::Vec3;

use super::{
    Corner, Nearest, NodePool, PathResult, QueryError, QueryFilter, find_path, nearest_polygon,
    straight_path,
};
use crate::mesh::Snapshot;

/// A found route.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    /// Where the start snapped to.
    pub start: Nearest,
    /// Where the end snapped to.
    pub end: Nearest,
    /// The polygon path (partial when the end cannot be reached).
    pub path: PathResult,
    /// The straight path: to the end, or, for a partial path, to the point of the last
    /// polygon nearest the end.
    pub corners: Vec<Corner>,
}

impl Route {
    /// Length of the straight path, metres (3-D, along its corners).
    pub fn length_m(&self) -> f32 {
        self.corners
            .windows(2)
            .map(|pair| pair[0].position.distance(pair[1].position))
            .sum()
    }
}

/// Routes from `start` to `end`; `Ok(None)` when either has no polygon within
/// `half_extents`.
pub fn route(
    snapshot: &Snapshot,
    start: Vec3,
    end: Vec3,
    half_extents: Vec3,
    filter: &QueryFilter,
    pool: &mut NodePool,
) -> Result<Option<Route>, QueryError> {
    let from = nearest_polygon(snapshot, start, half_extents, filter)?;
    let to = nearest_polygon(snapshot, end, half_extents, filter)?;
    let (Some(from), Some(to)) = (from, to) else {
        return Ok(None);
    };
    let path = find_path(
        snapshot,
        from.polygon,
        from.point,
        to.polygon,
        to.point,
        filter,
        pool,
    )?;
    let goal = if path.complete {
        to.point
    } else {
        let last = path.steps.last().map_or(from.polygon, |step| step.polygon);
        let tile = snapshot.tile(last).ok_or(QueryError::StaleRef(last))?;
        tile.closest_point(last.polygon(), to.point).0
    };
    let corners = straight_path(snapshot, &path.steps, from.point, goal)?;
    Ok(Some(Route {
        start: from,
        end: to,
        path,
        corners,
    }))
}
