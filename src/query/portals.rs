//! Tile-border portals: where an edge on a tile's border meets the facing tile's edges.
//!
//! Stage: query runtime, read by the search (neighbours across tiles), the funnel (the
//! portal between two steps of a path) and surface moves. Input: a polygon edge on a
//! tile side; output: the facing polygons and the overlap of their edges with it, within
//! the border tolerance (the bake's climb). The geometry is the mesh's
//! (`mesh::borders`), which also keeps a snapshot's portals in a table; the walks over
//! polygons read that table ([`border_crossing`]).

use std::sync::Arc;

use glam::Vec3;

#[cfg(test)]
use super::ReadSet;
use crate::geom::next_around;
use crate::mesh::borders::{border_portal, border_tolerance};
use crate::mesh::runtime_tile::BorderEdge;
use crate::mesh::{
    Adjacent, BorderPortal, PolyRef, RuntimeTile, Snapshot, TileGeneration, TilePoly, TileSlot,
};

/// The portals across the border edge `adjacent` of `from` (its edge `a b`), and the facing
/// tile they were looked for in (its slot and generation, when it is live): what a query
/// that crosses there has read. From the snapshot's table of `from`'s tile, or, for a
/// snapshot without one, worked out into `scratch`; the same portals in the same order
/// either way.
#[inline]
pub(crate) fn border_crossing<'a>(
    snapshot: &'a Snapshot,
    from: PolyRef,
    adjacent: &Adjacent,
    (a, b): (Vec3, Vec3),
    scratch: &'a mut Vec<BorderPortal>,
) -> (Option<(TileSlot, TileGeneration)>, &'a [BorderPortal]) {
    let side = u16::from(adjacent.border_side);
    let table = snapshot
        .border_portals(from.slot())
        .filter(|table| table.generation() == from.generation());
    if let Some(table) = table {
        return (table.facing(side), table.portals(adjacent.neighbour));
    }
    let facing = cross_tile_portals_into(snapshot, from, side, a, b, scratch);
    (facing, scratch)
}

/// Portals from edge `a b` of `from` (on tile side `side`) into the facing tile: each
/// overlapping border edge there, as (polygon, left end, right end) clipped to the overlap.
/// (The walks read them from the snapshot's table; tests check the table against this.)
#[cfg(test)]
pub(crate) fn cross_tile_portals(
    snapshot: &Snapshot,
    from: PolyRef,
    side: u16,
    a: Vec3,
    b: Vec3,
    read_set: &mut ReadSet,
) -> Vec<(PolyRef, Vec3, Vec3)> {
    let mut portals = Vec::new();
    let facing = cross_tile_portals_into(snapshot, from, side, a, b, &mut portals);
    if let Some((slot, generation)) = facing {
        read_set.read_tile(slot, generation);
    }
    portals
}

/// [`cross_tile_portals`] into a caller's buffer (cleared first), returning the facing tile
/// looked in (slot and generation) when it is live, for the caller to record as read.
fn cross_tile_portals_into(
    snapshot: &Snapshot,
    from: PolyRef,
    side: u16,
    a: Vec3,
    b: Vec3,
    portals: &mut Vec<(PolyRef, Vec3, Vec3)>,
) -> Option<(TileSlot, TileGeneration)> {
    portals.clear();
    let (slot, tile, generation) = facing_tile(snapshot, from, side)?;
    let tolerance = border_tolerance(snapshot.data());
    for edge in &tile.border[usize::from((side + 2) % 4)] {
        let Some((first, second)) = border_portal(side, a, b, edge, tolerance) else {
            continue;
        };
        let Some(reference) = PolyRef::new(generation, slot, edge.polygon) else {
            continue;
        };
        portals.push((reference, first, second));
    }
    Some((slot, generation))
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
    let tolerance = border_tolerance(snapshot.data());
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
            end: corners[next_around(edge, count)],
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
