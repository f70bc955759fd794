//! Tile-border portals: where an edge on a tile's border meets the facing tile's edges, and
//! the table of them a snapshot keeps.
//!
//! Stage: runtime mesh, built when a snapshot is published. Input: the live tiles and the
//! slots across each tile side. Output: per live tile, for each of its border edges (in the
//! order of its adjacency lists, the number [`Adjacent::neighbour`] holds for a border edge),
//! the facing polygons and the overlap of their edges with it, within the border tolerance
//! (the bake's climb, at least 0.1 m); and per side, the facing tile read to find them.
//!
//! A path search crosses a tile border about once a polygon on meshes of small tiles, and
//! working the portals out there took five dependent reads (the facing slot, its tile, the
//! tile's border list, each edge) and a division per overlap end. A snapshot never changes,
//! so the search reads them from this table instead; publishing a change works out the
//! tables of the tiles it touched and of their neighbours, and keeps every other tile's.
//!
//! Invariants: a table lists exactly what `border_portal` gives over the facing tile's
//! border list, in that list's order, so a search that reads the table and one that works
//! the portals out expand the same neighbours in the same order.

use std::sync::Arc;

use glam::Vec3;

use super::navmesh::{SlotState, SnapshotData};
use super::poly_ref::{PolyRef, TileGeneration, TileSlot};
use super::runtime_tile::{Adjacent, BorderEdge, RuntimeTile};

/// One portal across a tile border: the polygon on the far side and the overlap's ends on
/// the near edge (left and right as for an ordinary edge).
pub type BorderPortal = (PolyRef, Vec3, Vec3);

/// The portals across one live tile's borders, in one snapshot.
#[derive(Debug, PartialEq)]
pub struct BorderPortals {
    /// The tile's generation, and per side the facing tile's slot and generation when it is
    /// live (what a search across that side reads).
    generation: TileGeneration,
    facing: [Option<(TileSlot, TileGeneration)>; 4],
    /// Start of each border edge's portals in `portals`, plus the end.
    start: Vec<u32>,
    portals: Vec<BorderPortal>,
}

impl BorderPortals {
    /// The table of a slot without a live tile: no tile has generation 0, so no search
    /// reads it.
    fn empty() -> BorderPortals {
        BorderPortals {
            generation: TileGeneration(0),
            facing: [None; 4],
            start: Vec::new(),
            portals: Vec::new(),
        }
    }

    /// The table of `tile` (generation `generation`) against the tiles across its sides
    /// (`facing`, by side, as the snapshot has them). `kept`, a table of the same tile
    /// against other facing tiles, gives the portals of every side whose facing tile is
    /// unchanged: a neighbour going pending or coming back changes one side of a table.
    fn new(
        tile: &RuntimeTile,
        generation: TileGeneration,
        facing: [Option<(TileSlot, TileGeneration, &RuntimeTile)>; 4],
        tolerance: f32,
        kept: Option<&BorderPortals>,
    ) -> BorderPortals {
        let kept = kept.filter(|kept| kept.generation == generation);
        let facing_now =
            facing.map(|facing| facing.map(|(slot, generation, _)| (slot, generation)));
        // One entry per border edge, and about one portal each.
        let border_edges: usize = tile.border.iter().map(Vec::len).sum();
        let mut start = Vec::with_capacity(border_edges + 1);
        let mut portals = Vec::with_capacity(border_edges + 4);
        for (polygon, corners) in tile.corners.iter().enumerate() {
            let count = usize::from(tile.data.polygons[polygon].vertex_count);
            for adjacent in tile.adjacent(polygon as u16) {
                if adjacent.border_side == Adjacent::INTERNAL {
                    continue;
                }
                let number = start.len() as u16;
                start.push(portals.len() as u32);
                let side = u16::from(adjacent.border_side);
                if let Some(kept) = kept {
                    if kept.facing[usize::from(side & 3)] == facing_now[usize::from(side & 3)] {
                        portals.extend_from_slice(kept.portals(number));
                        continue;
                    }
                }
                let Some((slot, facing_generation, other)) = facing[usize::from(side & 3)] else {
                    continue;
                };
                let edge = usize::from(adjacent.edge);
                let (a, b) = (corners[edge], corners[(edge + 1) % count]);
                // Most facing edges lie elsewhere along the side: they are passed over on
                // their spans alone (the test `border_portal` starts with).
                let span = side_span(side, a, b);
                for border in &other.border[usize::from((side + 2) % 4)] {
                    if spans_overlap(span, side_span(side, border.start, border.end)).is_none() {
                        continue;
                    }
                    let Some((first, second)) = border_portal(side, a, b, border, tolerance) else {
                        continue;
                    };
                    if let Some(reference) = PolyRef::new(facing_generation, slot, border.polygon) {
                        portals.push((reference, first, second));
                    }
                }
            }
        }
        start.push(portals.len() as u32);
        if start.len() > usize::from(u16::MAX) + 2 {
            // More border edges than a 16-bit number tells apart: no table (no tile has
            // generation 0), so crossings of this tile are worked out where they happen.
            return BorderPortals::empty();
        }
        BorderPortals {
            generation,
            facing: facing_now,
            start,
            portals,
        }
    }

    /// The generation of the tile the table was worked out for.
    pub fn generation(&self) -> TileGeneration {
        self.generation
    }

    /// The facing tile across `side` (0..4), if live: its slot and generation.
    #[inline]
    pub fn facing(&self, side: u16) -> Option<(TileSlot, TileGeneration)> {
        self.facing[usize::from(side & 3)]
    }

    /// The portals across the border edge numbered `border_edge` (a border edge's
    /// [`Adjacent::neighbour`]); empty for a number the tile does not have.
    #[inline]
    pub fn portals(&self, border_edge: u16) -> &[BorderPortal] {
        run(&self.start, &self.portals, usize::from(border_edge))
    }

    /// Whether this table was worked out for the same tile against the same facing tiles.
    fn still_fits(
        &self,
        generation: TileGeneration,
        facing: &[Option<(TileSlot, TileGeneration, &RuntimeTile)>; 4],
    ) -> bool {
        self.generation == generation
            && self
                .facing
                .iter()
                .zip(facing)
                .all(|(kept, now)| *kept == now.map(|(slot, generation, _)| (slot, generation)))
    }
}

/// Every slot's table for `data` (whose `neighbour_slots` are set), keeping the tables of
/// `previous` (the snapshot before, by slot) that still fit: a slot whose tile and facing
/// tiles kept their generations keeps its table. Slots without a live tile get an empty one.
pub(super) fn border_tables(
    data: &SnapshotData,
    previous: &[Arc<BorderPortals>],
) -> Vec<Arc<BorderPortals>> {
    let tolerance = border_tolerance(data);
    let live = |slot: u16| -> Option<(TileSlot, TileGeneration, &RuntimeTile)> {
        let view = data.slots.get(usize::from(slot))?;
        match &view.state {
            SlotState::Live(tile) => Some((TileSlot(slot), view.generation, tile)),
            _ => None,
        }
    };
    let empty = Arc::new(BorderPortals::empty());
    data.slots
        .iter()
        .enumerate()
        .map(|(index, view)| {
            let SlotState::Live(tile) = &view.state else {
                return empty.clone();
            };
            let facing = data
                .neighbour_slots
                .get(index)
                .map_or([None; 4], |slots| slots.map(live));
            let kept = previous.get(index).map(|kept| &**kept);
            match kept {
                Some(kept) if kept.still_fits(view.generation, &facing) => previous[index].clone(),
                _ => Arc::new(BorderPortals::new(
                    tile,
                    view.generation,
                    facing,
                    tolerance,
                    kept,
                )),
            }
        })
        .collect()
}

/// Run `index` of `items`, cut into runs at `start` (each run's first item, plus the end):
/// empty for an index past the runs.
#[inline]
pub(super) fn run<'a, T>(start: &[u32], items: &'a [T], index: usize) -> &'a [T] {
    match (start.get(index), start.get(index + 1)) {
        (Some(&first), Some(&end)) => &items[first as usize..end as usize],
        _ => &[],
    }
}

/// How far apart in height two border edges may be and still join: the agent's climb, at
/// least 0.1 m.
pub(crate) fn border_tolerance(data: &SnapshotData) -> f32 {
    data.params.agent_max_climb_m.max(0.1)
}

/// Least overlap along a tile side of two border edges that makes a portal, metres.
const PORTAL_OVERLAP_MIN_M: f32 = 1e-3;

/// A point's place along tile side `side` (z on the -X and +X sides, x on the others).
fn along_side(side: u16, point: Vec3) -> f32 {
    if side == 0 || side == 2 {
        point.z
    } else {
        point.x
    }
}

/// The span `a b` covers along tile side `side`, low end first.
fn side_span(side: u16, a: Vec3, b: Vec3) -> (f32, f32) {
    let (a, b) = (along_side(side, a), along_side(side, b));
    (a.min(b), a.max(b))
}

/// Where two spans along a side overlap, if by at least [`PORTAL_OVERLAP_MIN_M`].
fn spans_overlap(
    (low, high): (f32, f32),
    (other_low, other_high): (f32, f32),
) -> Option<(f32, f32)> {
    let (start, end) = (low.max(other_low), high.min(other_high));
    (end - start >= PORTAL_OVERLAP_MIN_M).then_some((start, end))
}

/// Edge `a b` on tile side `side` clipped to where it overlaps the facing tile's border
/// edge `edge` (at least 1 mm, with the heights at one end of the overlap within
/// `tolerance`): the overlap's ends on `a b`, in the order of `a b`, so left and right are
/// as for an ordinary edge.
pub(crate) fn border_portal(
    side: u16,
    a: Vec3,
    b: Vec3,
    edge: &BorderEdge,
    tolerance: f32,
) -> Option<(Vec3, Vec3)> {
    let along = |p: Vec3| along_side(side, p);
    let (start, end) = spans_overlap(side_span(side, a, b), side_span(side, edge.start, edge.end))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::blob::BakeParams;
    use crate::mesh::{NavMesh, TileData, TilePoly, WalkablePolygon};
    use glam::Vec3;

    /// Tile (x, z) of a grid of 10 m tiles: two 5 m x 10 m polygons, their edges on the
    /// tile's square marked as its border.
    fn tile(x: i32, z: i32) -> TileData {
        let (x0, z0) = (x as f32 * 10.0, z as f32 * 10.0);
        let half = |from: f32| {
            WalkablePolygon::ground(vec![
                Vec3::new(from, 0.0, z0),
                Vec3::new(from + 5.0, 0.0, z0),
                Vec3::new(from + 5.0, 0.0, z0 + 10.0),
                Vec3::new(from, 0.0, z0 + 10.0),
            ])
        };
        let mut tile = TileData::from_walkable_polygons(&[half(x0), half(x0 + 5.0)]).unwrap();
        tile.header.tile_x = x;
        tile.header.tile_z = z;
        let vertices = tile.vertices.clone();
        for polygon in &mut tile.polygons {
            let count = usize::from(polygon.vertex_count);
            for edge in 0..count {
                let a = vertices[usize::from(polygon.vertices[edge])];
                let b = vertices[usize::from(polygon.vertices[(edge + 1) % count])];
                let side = if a[0] == x0 && b[0] == x0 {
                    0
                } else if a[2] == z0 + 10.0 && b[2] == z0 + 10.0 {
                    1
                } else if a[0] == x0 + 10.0 && b[0] == x0 + 10.0 {
                    2
                } else if a[2] == z0 && b[2] == z0 {
                    3
                } else {
                    continue;
                };
                polygon.neighbours[edge] = TilePoly::TILE_EDGE | side;
            }
        }
        tile
    }

    #[test]
    fn tables_kept_in_part_equal_tables_worked_out_afresh() {
        let mut mesh = NavMesh::new(BakeParams::default());
        let tiles: Vec<TileData> = (0..3)
            .flat_map(|z| (0..3).map(move |x| tile(x, z)))
            .collect();
        mesh.add_tiles(tiles).unwrap();
        let check = |mesh: &NavMesh| {
            let snapshot = mesh.snapshot();
            let fresh = border_tables(snapshot.data(), &[]);
            assert_eq!(snapshot.data().border_portals, fresh);
            fresh.iter().map(|table| table.portals.len()).sum::<usize>()
        };
        let all = check(&mesh);
        // Each of the 12 inner sides is crossed both ways: the 6 along z by the one polygon
        // touching it on each side, the 6 along x by both.
        assert_eq!(all, 6 * 2 + 6 * 2 * 2);
        for at in [(1, 1), (0, 1), (2, 2)] {
            mesh.apply_source_changes_reaching(&[], &[at]);
            assert!(check(&mesh) < all, "the pending tile's portals are gone");
            mesh.commit_rebuilt_tile(tile(at.0, at.1)).unwrap();
            assert_eq!(check(&mesh), all);
        }
    }
}
