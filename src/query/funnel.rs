//! String pulling: the shortest polyline through a corridor of polygons.
//!
//! The funnel walks the portals between consecutive polygons from the start, keeping the
//! narrowest wedge that still sees every portal so far; where a side would cross the other,
//! that side's end point is a corner and the funnel restarts there. An off-mesh link ends
//! the funnel at the link's entry point (a corner flagged [`CornerFlags::LINK_START`]) and
//! restarts it at the link's exit.
//!
//! Orientation: polygons wind counter-clockwise seen from above, so leaving a polygon across
//! its edge `a -> b`, `b` is on the left and `a` on the right.

use glam::Vec3;

use super::portals::cross_tile_portal_into;
use super::search::PathStep;
use super::{QueryError, check_point};
use crate::geom::next_around;
use crate::mesh::{Adjacent, LinkId, PolyRef, RuntimeTile, Snapshot};

/// What a corner is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CornerFlags(pub u8);

impl CornerFlags {
    /// The path's start.
    pub const START: CornerFlags = CornerFlags(1);
    /// The path's end.
    pub const END: CornerFlags = CornerFlags(2);
    /// The entry point of an off-mesh link: the actor must perform the link's action here.
    pub const LINK_START: CornerFlags = CornerFlags(4);

    /// Whether every flag of `other` is set.
    pub fn contains(self, other: CornerFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// A corner of a straight path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Corner {
    /// Position, metres.
    pub position: Vec3,
    /// What it is.
    pub flags: CornerFlags,
    /// The polygon the path enters at this corner (the start polygon for the start).
    pub polygon: PolyRef,
    /// The link that starts here, for a [`CornerFlags::LINK_START`] corner.
    pub link: Option<LinkId>,
}

/// Twice the signed area of `a b c` seen from above: positive when `c` is left of `a -> b`.
fn turn(a: Vec3, b: Vec3, c: Vec3) -> f32 {
    -((b.x - a.x) * (c.z - a.z) - (c.x - a.x) * (b.z - a.z))
}

/// The portal from `from` into `to`, as (left, right) seen walking from `from`; `None` when
/// the two do not share an edge (or either is stale).
#[inline]
pub fn portal(snapshot: &Snapshot, from: PolyRef, to: PolyRef) -> Option<(Vec3, Vec3)> {
    portal_in(snapshot, snapshot.tile(from)?, from, to, None)
}

/// [`portal`] with `from`'s live tile already in hand (a caller walking a corridor keeps
/// it across the polygons of one tile), and `to`'s too if the caller has it (`to_tile`:
/// `to`'s live tile, when it is in another tile). `None`, not a panic, if `from` is not a
/// polygon of `tile`.
#[inline]
pub fn portal_in(
    snapshot: &Snapshot,
    tile: &RuntimeTile,
    from: PolyRef,
    to: PolyRef,
    to_tile: Option<&RuntimeTile>,
) -> Option<(Vec3, Vec3)> {
    let polygon = tile.data.polygons.get(usize::from(from.polygon()))?;
    let count = usize::from(polygon.vertex_count);
    let same_tile = to.slot() == from.slot();
    // The prepared corners (the same points as the tile's vertices) sit together, one or two
    // cache lines, where the vertex table is one line per corner on a large mesh.
    let corners = tile.corners.get(usize::from(from.polygon()))?;
    let edge_ends = |edge: usize| (corners[edge], corners[next_around(edge, count)]);
    // Across a tile border, the snapshot's table of `from`'s tile (when `tile` is that
    // tile) lists the portals: the first into `to` is the one worked out edge by edge.
    let table = (!same_tile)
        .then(|| {
            snapshot
                .tile(from)
                .filter(|live| std::ptr::eq(&***live, tile))
        })
        .flatten()
        .and_then(|_| snapshot.border_portals(from.slot()))
        .filter(|table| table.generation() == from.generation());
    for adjacent in tile.adjacent(from.polygon()) {
        let edge = usize::from(adjacent.edge);
        if adjacent.border_side == Adjacent::INTERNAL {
            if same_tile && adjacent.neighbour == to.polygon() {
                let (a, b) = edge_ends(edge);
                return Some((b, a));
            }
        } else if !same_tile {
            let found = match table {
                Some(table) => table
                    .portals(adjacent.neighbour)
                    .iter()
                    .find(|portal| portal.0 == to)
                    .map(|&(_, first, second)| (first, second)),
                None => {
                    let (a, b) = edge_ends(edge);
                    let side = u16::from(adjacent.border_side);
                    cross_tile_portal_into(snapshot, from, side, a, b, to, to_tile)
                }
            };
            if let Some((first, second)) = found {
                return Some((second, first));
            }
        }
    }
    None
}

/// Pulls the string through `portals` (first and last are the start and end, degenerate),
/// appending corners after the start, each with the index of the portal it lies on. The
/// crowd's follow pass runs it on the next stretch of each agent's corridor.
#[inline]
pub fn pull(portals: &[(Vec3, Vec3)], corners: &mut Vec<(Vec3, usize)>) {
    let Some(&(start, _)) = portals.first() else {
        return;
    };
    let (mut apex, mut left, mut right) = (start, start, start);
    let (mut left_index, mut right_index) = (0usize, 0usize);
    let mut index = 1;
    // Bounded: each restart moves the apex forward by at least one portal.
    let mut iterations = 0usize;
    while index < portals.len() && iterations < portals.len() * portals.len() + 8 {
        iterations += 1;
        let (portal_left, portal_right) = portals[index];
        if turn(apex, right, portal_right) >= 0.0 {
            if apex == right || turn(apex, left, portal_right) < 0.0 {
                right = portal_right;
                right_index = index;
            } else {
                corners.push((left, left_index));
                apex = left;
                let apex_index = left_index;
                (left, right, right_index) = (apex, apex, apex_index);
                index = apex_index + 1;
                continue;
            }
        }
        if turn(apex, left, portal_left) <= 0.0 {
            if apex == left || turn(apex, right, portal_left) > 0.0 {
                left = portal_left;
                left_index = index;
            } else {
                corners.push((right, right_index));
                apex = right;
                let apex_index = right_index;
                (left, right, left_index) = (apex, apex, apex_index);
                index = apex_index + 1;
                continue;
            }
        }
        index += 1;
    }
    let end = portals[portals.len() - 1].0;
    if corners.last().is_none_or(|(last, _)| *last != end) {
        corners.push((end, portals.len() - 1));
    }
}

/// Pulls the string through one piece of the corridor and appends its corners (after the
/// piece's start), each with the polygon of the portal it lies on.
fn append_pulled(
    portals: &[(Vec3, Vec3)],
    portal_polygons: &[PolyRef],
    pulled: &mut Vec<(Vec3, usize)>,
    corners: &mut Vec<Corner>,
) {
    pulled.clear();
    pull(portals, pulled);
    for &(position, index) in pulled.iter() {
        corners.push(Corner {
            position,
            flags: CornerFlags::default(),
            polygon: portal_polygons[index.min(portal_polygons.len() - 1)],
            link: None,
        });
    }
}

/// The working memory of [`straight_path_with`]: the corridor's portals and the pulled
/// string, kept by a caller that asks many straight paths so that, once grown, a query
/// allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct StraightPathScratch {
    portals: Vec<(Vec3, Vec3)>,
    portal_polygons: Vec<PolyRef>,
    pulled: Vec<(Vec3, usize)>,
}

/// The straight path along `steps` from `start` to `end` (clamp `end` to the last polygon
/// for a partial path before calling).
pub fn straight_path(
    snapshot: &Snapshot,
    steps: &[PathStep],
    start: Vec3,
    end: Vec3,
) -> Result<Vec<Corner>, QueryError> {
    let mut corners = Vec::new();
    straight_path_with(
        snapshot,
        steps,
        start,
        end,
        &mut StraightPathScratch::default(),
        &mut corners,
    )?;
    Ok(corners)
}

/// [`straight_path`] into `corners` (cleared first; empty after an error), with `scratch`
/// as its working memory: the same corners, without allocating once both have grown.
pub fn straight_path_with(
    snapshot: &Snapshot,
    steps: &[PathStep],
    start: Vec3,
    end: Vec3,
    scratch: &mut StraightPathScratch,
    corners: &mut Vec<Corner>,
) -> Result<(), QueryError> {
    corners.clear();
    let pulled = pull_corridor(snapshot, steps, start, end, scratch, corners);
    if pulled.is_err() {
        corners.clear();
    }
    pulled
}

/// The body of [`straight_path_with`]: appends the corners to `corners` (which the caller
/// empties after an error).
fn pull_corridor(
    snapshot: &Snapshot,
    steps: &[PathStep],
    start: Vec3,
    end: Vec3,
    scratch: &mut StraightPathScratch,
    corners: &mut Vec<Corner>,
) -> Result<(), QueryError> {
    check_point("straight path start", start)?;
    check_point("straight path end", end)?;
    let Some(first) = steps.first() else {
        return Ok(());
    };
    corners.reserve(steps.len() + 2);
    corners.push(Corner {
        position: start,
        flags: CornerFlags::START,
        polygon: first.polygon,
        link: None,
    });
    // Split the corridor at links: each piece is pulled on its own.
    let StraightPathScratch {
        portals,
        portal_polygons,
        pulled,
    } = scratch;
    portals.clear();
    portal_polygons.clear();
    portals.push((start, start));
    portal_polygons.push(first.polygon);
    for pair in steps.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        if let Some(link_id) = to.via_link {
            let link = snapshot
                .link(link_id)
                .ok_or(QueryError::StaleRef(to.polygon))?;
            let (entry, exit) = if link.start_polygon == Some(from.polygon) {
                (link.desc.start, link.desc.end)
            } else {
                (link.desc.end, link.desc.start)
            };
            portals.push((entry, entry));
            portal_polygons.push(from.polygon);
            append_pulled(portals, portal_polygons, pulled, corners);
            if let Some(last) = corners.last_mut() {
                last.flags = CornerFlags::LINK_START;
                last.link = Some(link_id);
            }

            portals.clear();
            portals.push((exit, exit));
            portal_polygons.clear();
            portal_polygons.push(to.polygon);
            corners.push(Corner {
                position: exit,
                flags: CornerFlags::default(),
                polygon: to.polygon,
                link: None,
            });
            continue;
        }
        let (left, right) =
            portal(snapshot, from.polygon, to.polygon).ok_or(QueryError::StaleRef(to.polygon))?;
        portals.push((left, right));
        portal_polygons.push(to.polygon);
    }

    portals.push((end, end));
    portal_polygons.push(steps[steps.len() - 1].polygon);
    append_pulled(portals, portal_polygons, pulled, corners);
    if let Some(last) = corners.last_mut() {
        if last.flags == CornerFlags::default() {
            last.flags = CornerFlags::END;
        }
    }
    // Drop corners that repeat the previous one (a link exit equal to its piece's start).
    corners.dedup_by(|b, a| a.position == b.position && b.flags == CornerFlags::default());
    Ok(())
}
