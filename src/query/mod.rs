//! Queries on a navigation mesh snapshot: nearest polygon, paths, straight paths, rays along
//! the surface and constrained moves.
//!
//! Stage: runtime, above [`mesh`](crate::mesh). Every query runs on a [`Snapshot`] it holds
//! until it completes, and returns with its result a [`ReadSet`]: the tiles and generations
//! it read (and which lie on the route), the off-mesh link versions it considered, and the
//! filter and cost versions it ran under. [`ReadSet::still_valid`] tells, at adoption,
//! whether the result is still true of the current mesh; changes to tiles it did not read
//! leave it valid (spec 001).
//!
//! Invariants: a query never panics on bad input; a NaN point, a stale [`PolyRef`] or a
//! pending tile is a [`QueryError`] or "not found", never a wrong answer.
//!
//! [`Snapshot`]: crate::mesh::Snapshot

mod destination;
mod filter;
mod funnel;
mod head_start;
mod hierarchy;
mod nearest;
mod node_pool;
mod portals;
mod read_set;
mod reconnect;
mod route;
mod sample;
mod search;
mod surface;

pub use destination::DestinationTree;
pub use filter::QueryFilter;
pub use funnel::{
    Corner, CornerFlags, StraightPathScratch, portal, portal_in, pull, straight_path,
    straight_path_with,
};
pub use head_start::{HEAD_START_STEPS, head_start};
pub use hierarchy::{
    CLUSTER_POLYGONS_TARGET, CLUSTER_SIDE_MAX, ClusterSideError, HierarchicalRoute, Hierarchy,
    HierarchyScratch, RouteLeg,
};
pub use nearest::{
    ApproachSide, Nearest, NearestOptions, nearest_polygon, nearest_polygon_with, polygons_within,
};
pub use node_pool::{NODE_POOL_DEFAULT, NodePool};
pub use read_set::{ReadSet, TileRead, Validity};
pub use reconnect::{RECONNECT_NODES_MAX, reconnect};
pub use route::{Route, RouteBuffers, route, route_with};
pub use sample::{RandomPoints, random_points};
pub use search::{
    PathBuffers, PathResult, PathSearch, PathStep, Progress, find_path, find_path_with,
};
pub use surface::{RaycastHit, SURFACE_POLYGONS_MAX, SurfaceMove, move_along_surface, raycast};

use glam::Vec3;

use crate::mesh::PolyRef;

/// A query that cannot run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum QueryError {
    /// A point had a NaN or infinite coordinate.
    #[error("{what} {value} is not finite")]
    NotFinite {
        /// Which input.
        what: &'static str,
        /// Its value.
        value: Vec3,
    },
    /// A reference into a tile that has been replaced, removed, or is pending.
    #[error("{0:?} is stale: its tile was replaced or is being rebuilt")]
    StaleRef(PolyRef),
    /// A [`Hierarchy`] asked about a snapshot it was not brought up to.
    #[error("the hierarchy was built for another state of the mesh: update it to this snapshot")]
    HierarchyOutOfDate,
    /// Half extents that are not positive.
    #[error("half extents {0} must be positive and finite")]
    BadExtents(Vec3),
    /// An approach side with a NaN or zero normal.
    #[error(
        "approach side at {origin} with outward {outward}: needs a finite origin and a non-zero finite normal"
    )]
    BadApproachSide {
        /// Its origin.
        origin: glam::Vec2,
        /// Its normal.
        outward: glam::Vec2,
    },
}

pub(crate) fn check_point(what: &'static str, value: Vec3) -> Result<(), QueryError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(QueryError::NotFinite { what, value })
    }
}
