//! Tile-border portals: where an edge on a tile's border meets the facing tile's edges.
//!
//! Stage: query runtime, read by the search (neighbours across tiles), the funnel (the
//! portal between two steps of a path) and surface moves. Input: a polygon edge on a
//! tile side; output: the facing polygons and the overlap of their edges with it, within
//! the border tolerance (a bake's vertical cell).

use std::sync::Arc;

use glam::Vec3;

use super::ReadSet;
use crate::mesh::runtime_tile::BorderEdge;
use crate::mesh::{PolyRef, RuntimeTile, Snapshot, TileGeneration, TilePoly, TileSlot};

/// Portals from edge `a b` of `from` (on tile side `side`) into the facing tile: each
/// overlapping border edge there, as (polygon, left end, right end) clipped to the overlap.
pub(crate) fn cross_tile_portals(
    snapshot: &Snapshot,
    from: PolyRef,
    side: u16,
    a: Vec3,
    b: Vec3,
    read_set: &mut ReadSet,
) -> Vec<(PolyRef, Vec3, Vec3)> {
    let mut portals = Vec::new();
    cross_tile_portals_into(snapshot, from, side, a, b, read_set, &mut portals);
    portals
}

/// [`cross_tile_portals`] into a caller's buffer (cleared first), so the search allocates
/// nothing per border crossing.
pub(crate) fn cross_tile_portals_into(
    snapshot: &Snapshot,
    from: PolyRef,
    side: u16,
    a: Vec3,
    b: Vec3,
    read_set: &mut ReadSet,
    portals: &mut Vec<(PolyRef, Vec3, Vec3)>,
) {
    portals.clear();
    let Some((slot, tile, generation)) = facing_tile(snapshot, from, side) else {
        return;
    };
    read_set.read_tile(slot, generation);
    let tolerance = border_tolerance(snapshot);
    for edge in &tile.border[usize::from((side + 2) % 4)] {
        let Some((first, second)) = border_portal(side, a, b, edge, tolerance) else {
            continue;
        };
        let Some(reference) = PolyRef::new(generation, slot, edge.polygon) else {
            continue;
        };
        portals.push((reference, first, second));
    }
}

/// The portal from edge `a b` of `from` (on tile side `side`) into polygon `to` of the
/// facing tile: the first of [`cross_tile_portals`] that leads into `to`, found without
/// allocating or recording reads (the follow pass asks for one portal of a corridor whose
/// reads were checked when it was adopted). `to_tile`, if the caller has it, is `to`'s live
/// tile.
pub(crate) fn cross_tile_portal_into(
    snapshot: &Snapshot,
    from: PolyRef,
    side: u16,
    a: Vec3,
    b: Vec3,
    to: PolyRef,
    to_tile: Option<&RuntimeTile>,
) -> Option<(Vec3, Vec3)> {
    if facing_slot(snapshot, from, side)? != to.slot() {
        return None;
    }
    let tile = match to_tile {
        Some(tile) => tile,
        None => match snapshot.live_slot(to.slot())? {
            (tile, generation) if generation == to.generation() => tile,
            _ => return None,
        },
    };
    let tolerance = border_tolerance(snapshot);
    // `to`'s own edges on the facing side, in edge order: the same candidates, in the same
    // order and with the same end points, as its entries in the tile's border list (built
    // polygon by polygon, edge by edge), without scanning the other polygons' entries.
    let polygon = tile.data.polygons.get(usize::from(to.polygon()))?;
    let corners = &tile.corners[usize::from(to.polygon())];
    let count = usize::from(polygon.vertex_count);
    let facing_side = (side + 2) % 4;
    (0..count).find_map(|edge| {
        let neighbour = polygon.neighbours[edge];
        if neighbour == TilePoly::NO_NEIGHBOUR
            || neighbour & TilePoly::TILE_EDGE == 0
            || neighbour & 3 != facing_side
        {
            return None;
        }
        let border = BorderEdge {
            polygon: to.polygon(),
            edge: edge as u8,
            start: corners[edge],
            end: corners[(edge + 1) % count],
        };
        border_portal(side, a, b, &border, tolerance)
    })
}

/// The live tile across side `side` of `from`'s tile, with its slot and generation.
fn facing_tile(
    snapshot: &Snapshot,
    from: PolyRef,
    side: u16,
) -> Option<(TileSlot, &Arc<RuntimeTile>, TileGeneration)> {
    let slot = facing_slot(snapshot, from, side)?;
    let (tile, generation) = snapshot.live_slot(slot)?;
    Some((slot, tile, generation))
}

/// The slot across side `side` of `from`'s tile, if the mesh has one there.
fn facing_slot(snapshot: &Snapshot, from: PolyRef, side: u16) -> Option<TileSlot> {
    let data = snapshot.data();
    let facing = match data.neighbour_slots.get(usize::from(from.slot().0)) {
        Some(neighbours) => neighbours[usize::from(side & 3)],
        None => {
            // A snapshot without the neighbour table (never published): look the tile up.
            let view = data.slots.get(usize::from(from.slot().0))?;
            let (dx, dz) = [(-1, 0), (0, 1), (1, 0), (0, -1)][usize::from(side & 3)];
            data.slot_at
                .get(&(view.tile.0 + dx, view.tile.1 + dz))
                .map_or(u16::MAX, |slot| slot.0)
        }
    };
    (facing != u16::MAX).then_some(TileSlot(facing))
}

/// How far apart in height two border edges may be and still join: the agent's climb, at
/// least 0.1 m.
fn border_tolerance(snapshot: &Snapshot) -> f32 {
    snapshot.data().params.agent_max_climb_m.max(0.1)
}

/// Edge `a b` on tile side `side` clipped to where it overlaps the facing tile's border
/// edge `edge` (at least 1 mm, with the heights at one end of the overlap within
/// `tolerance`): the overlap's ends on `a b`, in the order of `a b`, so left and right are
/// as for an ordinary edge.
fn border_portal(
    side: u16,
    a: Vec3,
    b: Vec3,
    edge: &BorderEdge,
    tolerance: f32,
) -> Option<(Vec3, Vec3)> {
    let along = |p: Vec3| if side == 0 || side == 2 { p.z } else { p.x };
    let (low, high) = (along(a).min(along(b)), along(a).max(along(b)));
    let (other_low, other_high) = (
        along(edge.start).min(along(edge.end)),
        along(edge.start).max(along(edge.end)),
    );
    let (start, end) = (low.max(other_low), high.min(other_high));
    if end - start < 1e-3 {
        return None;
    }
    let point_at = |p: Vec3, q: Vec3, t: f32| {
        let span = along(q) - along(p);
        if span.abs() < 1e-9 {
            p
        } else {
            p + (q - p) * ((t - along(p)) / span)
        }
    };
    let (mine_start, mine_end) = (point_at(a, b, start), point_at(a, b, end));
    let (theirs_start, theirs_end) = (
        point_at(edge.start, edge.end, start),
        point_at(edge.start, edge.end, end),
    );
    if (mine_start.y - theirs_start.y).abs() > tolerance
        && (mine_end.y - theirs_end.y).abs() > tolerance
    {
        return None;
    }
    Some(if along(a) <= along(b) {
        (mine_start, mine_end)
    } else {
        (mine_end, mine_start)
    })
}
