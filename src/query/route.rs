//! A whole query, the way games (and Detour's reference runs) ask it: from a point to a
//! point, each end snapped to the nearest polygon, a path search, and the straight path.

use glam::Vec3;

use super::{
    Corner, Nearest, NodePool, PathBuffers, PathResult, QueryError, QueryFilter,
    StraightPathScratch, find_path_with, nearest_polygon, straight_path_with,
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

/// The buffers of routes, handed back for the next route to fill (see [`route_with`]).
#[derive(Clone, Debug, Default)]
pub struct RouteBuffers {
    path: PathBuffers,
    corners: Vec<Corner>,
    straight: StraightPathScratch,
}

impl RouteBuffers {
    /// Takes back `route`'s buffers.
    pub fn recycle(&mut self, route: Route) {
        self.path.recycle(route.path);
        self.corners = route.corners;
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
    route_with(
        snapshot,
        start,
        end,
        half_extents,
        filter,
        pool,
        &mut RouteBuffers::default(),
    )
}

/// [`route`] built in `buffers` (taken from earlier routes by [`RouteBuffers::recycle`]):
/// the same route, and a host that hands each route back asks the allocator for nothing
/// once the buffers have grown, as Detour's callers pass arrays of their own. (No
/// allocator traffic across query threads, a steadier memory footprint; on the shared
/// query sets it saves 3% of a query's instructions and no measurable time.)
pub fn route_with(
    snapshot: &Snapshot,
    start: Vec3,
    end: Vec3,
    half_extents: Vec3,
    filter: &QueryFilter,
    pool: &mut NodePool,
    buffers: &mut RouteBuffers,
) -> Result<Option<Route>, QueryError> {
    let from = nearest_polygon(snapshot, start, half_extents, filter)?;
    let to = nearest_polygon(snapshot, end, half_extents, filter)?;
    let (Some(from), Some(to)) = (from, to) else {
        return Ok(None);
    };
    let path = find_path_with(
        snapshot,
        from.polygon,
        from.point,
        to.polygon,
        to.point,
        filter,
        pool,
        &mut buffers.path,
    )?;
    let goal = if path.complete {
        to.point
    } else {
        let last = path.steps.last().map_or(from.polygon, |step| step.polygon);
        let tile = snapshot.tile(last).ok_or(QueryError::StaleRef(last))?;
        tile.closest_point(last.polygon(), to.point).0
    };
    let mut corners = std::mem::take(&mut buffers.corners);
    straight_path_with(
        snapshot,
        &path.steps,
        from.point,
        goal,
        &mut buffers.straight,
        &mut corners,
    )?;
    Ok(Some(Route {
        start: from,
        end: to,
        path,
        corners,
    }))
}
