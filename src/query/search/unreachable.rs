//! Ends out of reach: a search whose end lies in another component of the mesh
//! ([`Components`](crate::mesh::Components)) heads for the polygon of its own component
//! nearest the end instead of expanding everything it can reach.
//!
//! Without this, a search proves an end out of reach only by exhausting its component (or
//! its node pool), then returns the way to the node it expanded nearest the end. With
//! it, the search is a directed one to the reachable polygon nearest the end (3-D distance
//! to its closest point), and its result is still partial. What it depends on is what a
//! flood would have read: every tile of the start's component and the tiles across their
//! sides (a change there could join the two components), so it is recorded as read.
//!
//! Where the shortcut does not apply, the search floods as before: no components (a tile
//! without a search table), or a start component over
//! [`SMALL_COMPONENT_TILES_MAX`](crate::mesh::components::SMALL_COMPONENT_TILES_MAX)
//! tiles (its read set would list them all).

use glam::Vec3;

use crate::mesh::{PolyRef, Snapshot, TileSlot};
use crate::query::QueryFilter;

/// Where a search from `start` toward `end` heads instead when `end` is out of its
/// reach: the nearest reachable polygon, the point on it nearest `end_position`, and the
/// tiles the answer depends on. `None` when the end may be reachable or the shortcut does
/// not apply.
pub(super) fn substitute_end<'a>(
    snapshot: &'a Snapshot,
    start: PolyRef,
    end: PolyRef,
    end_position: Vec3,
    filter: &QueryFilter,
) -> Option<(PolyRef, Vec3, &'a [TileSlot])> {
    let components = snapshot.components()?;
    let (here, there) = (
        components.of(snapshot, start)?,
        components.of(snapshot, end)?,
    );
    if here == there {
        return None;
    }
    let (polygon, point) =
        components.nearest_member(snapshot, here, end_position, |area, flags| {
            filter.passes_area_flags(area, flags)
        })?;
    Some((polygon, point, components.slots(here)))
}
