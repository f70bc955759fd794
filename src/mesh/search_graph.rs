//! The search graph: per live tile, each polygon's crossable edges as a path search
//! expands them, with the polygon across each one already resolved.
//!
//! Stage: runtime mesh, built when a snapshot is published, beside the border portals
//! (`borders.rs`) it reads. Input: a live tile and its [`BorderPortals`] table. Output: a
//! [`SearchTable`]: for each polygon, its [`SearchEdge`]s in the order a search offers them.
//!
//! Why: expanding a polygon from the tile's own arrays reads the tile slot, the tile, the
//! polygon record, the adjacency index and list, each neighbour's polygon record (for its
//! area and flags) and, at a tile border, the polygon's corners, the border table and each
//! facing tile. On a large tiled mesh those are a dozen cache misses an expansion, several
//! times the arithmetic. Here an expansion reads one index and one short run of edges that
//! carry everything the search needs: where it enters the neighbour, which polygon that is,
//! and the neighbour's area and flags.
//!
//! Invariants: a polygon's edges are, in order, what the search's walk over its adjacency
//! and the border table gives: an edge shared inside the tile is one edge; a tile-border
//! edge is a read marker for the facing tile (when one is live) followed by one edge per
//! portal across it, in the border table's order. So a search reading the table expands
//! the same neighbours, at the same points, in the same order, and records the same reads.
//! A table is only as current as its tile and the tiles across its sides: it is rebuilt
//! exactly when the border table is (a snapshot keeps both or replaces both).

use glam::Vec3;

use super::borders::BorderPortals;
use super::navmesh::{SlotState, SnapshotData};
use super::poly_ref::{PolyRef, TileGeneration, TileSlot};
use super::runtime_tile::{Adjacent, RuntimeTile};

/// One crossable edge of a polygon as a search expands it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchEdge {
    /// Where a path entering the neighbour is placed: the shared edge's midpoint, or the
    /// midpoint of the portal's overlap across a tile border, metres.
    pub midpoint: Vec3,
    /// The polygon across; `None` for a read marker.
    pub neighbour: Option<PolyRef>,
    /// The neighbour's flags (what a filter includes or excludes it by).
    pub flags: u16,
    /// The neighbour's area id.
    pub area: u8,
    /// For a read marker, the tile side (0..4) whose facing tile the search reads here
    /// (see [`SearchTable::facing`]); [`SearchEdge::NO_READ`] for an edge to a neighbour.
    pub read_side: u8,
}

impl SearchEdge {
    /// `read_side` of an edge that leads to a neighbour.
    pub const NO_READ: u8 = u8::MAX;
}

// Three edges to a cache line (and a half): a field added here costs every expansion.
const _: () = assert!(size_of::<SearchEdge>() == 24);

/// The search graph of one live tile in one snapshot.
#[derive(Debug, PartialEq)]
pub struct SearchTable {
    /// The tile's generation (0: no table; the search walks the tile's own arrays).
    generation: TileGeneration,
    /// Per side, the facing tile's slot and generation when live.
    facing: [Option<(TileSlot, TileGeneration)>; 4],
    /// Start of each polygon's edges in `edges`, plus the end.
    start: Vec<u32>,
    edges: Vec<SearchEdge>,
}

impl SearchTable {
    /// The table of a slot without one: generation 0 matches no live tile.
    pub(super) fn empty() -> SearchTable {
        SearchTable {
            generation: TileGeneration(0),
            facing: [None; 4],
            start: Vec::new(),
            edges: Vec::new(),
        }
    }

    /// The table of `tile` in `slot` (generation `generation`), its border crossings from
    /// `portals` (the slot's border table in the same snapshot); `data` gives the facing
    /// tiles' polygons. Without a border table for this generation (a tile with more
    /// border edges than it numbers), no table.
    pub(super) fn new(
        data: &SnapshotData,
        slot: TileSlot,
        tile: &RuntimeTile,
        generation: TileGeneration,
        portals: &BorderPortals,
    ) -> SearchTable {
        if portals.generation() != generation {
            return SearchTable::empty();
        }
        let facing = [0, 1, 2, 3].map(|side| portals.facing(side));
        let polygon_count = tile.data.polygons.len();
        let mut start = Vec::with_capacity(polygon_count + 1);
        let mut edges = Vec::with_capacity(tile.adjacency.len() + 8);
        for polygon in 0..polygon_count {
            start.push(edges.len() as u32);
            for adjacent in tile.adjacent(polygon as u16) {
                if adjacent.border_side == Adjacent::INTERNAL {
                    let across = &tile.data.polygons[usize::from(adjacent.neighbour)];
                    edges.push(SearchEdge {
                        midpoint: adjacent.midpoint,
                        neighbour: PolyRef::new(generation, slot, adjacent.neighbour),
                        flags: across.flags,
                        area: across.area,
                        read_side: SearchEdge::NO_READ,
                    });
                    continue;
                }
                let side = adjacent.border_side & 3;
                if facing[usize::from(side)].is_none() {
                    continue; // nothing across: nothing read, nothing to enter
                }
                edges.push(SearchEdge {
                    midpoint: Vec3::ZERO,
                    neighbour: None,
                    flags: 0,
                    area: 0,
                    read_side: side,
                });
                for &(reference, left, right) in portals.portals(adjacent.neighbour) {
                    let Some(across) = live_polygon(data, reference) else {
                        continue;
                    };
                    edges.push(SearchEdge {
                        midpoint: (left + right) * 0.5,
                        neighbour: Some(reference),
                        flags: across.flags,
                        area: across.area,
                        read_side: SearchEdge::NO_READ,
                    });
                }
            }
        }
        start.push(edges.len() as u32);
        SearchTable {
            generation,
            facing,
            start,
            edges,
        }
    }

    /// The generation of the tile the table was built for (0: none).
    #[inline]
    pub fn generation(&self) -> TileGeneration {
        self.generation
    }

    /// The facing tile across `side` (0..4), if live: its slot and generation.
    #[inline]
    pub fn facing(&self, side: u8) -> Option<(TileSlot, TileGeneration)> {
        self.facing[usize::from(side & 3)]
    }

    /// The edges of `polygon`, in expansion order (empty for a polygon the tile lacks).
    #[inline]
    pub fn edges(&self, polygon: u16) -> &[SearchEdge] {
        super::borders::run(&self.start, &self.edges, usize::from(polygon))
    }

    /// Edges of all the tile's polygons (what numbers them across the tile).
    #[inline]
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// The number, within the tile, of `polygon`'s first edge.
    #[inline]
    pub fn first_edge(&self, polygon: u16) -> usize {
        self.start
            .get(usize::from(polygon))
            .map_or(0, |&first| first as usize)
    }

    /// The tile's edge numbered `index` (its polygon is [`SearchTable::edge_at`]'s).
    #[inline]
    pub fn edge(&self, index: usize) -> &SearchEdge {
        &self.edges[index]
    }

    /// The polygon of the tile's edge numbered `index` and the edge.
    pub fn edge_at(&self, index: usize) -> (u16, &SearchEdge) {
        let polygon = self.start.partition_point(|&first| first as usize <= index) - 1;
        (polygon as u16, &self.edges[index])
    }

    /// Bytes the table holds.
    pub fn heap_bytes(&self) -> usize {
        self.start.capacity() * size_of::<u32>() + self.edges.capacity() * size_of::<SearchEdge>()
    }
}

/// The polygon `reference` points to, when its tile is live in `data` at its generation.
fn live_polygon(data: &SnapshotData, reference: PolyRef) -> Option<&super::TilePoly> {
    let view = data.slots.get(usize::from(reference.slot().0))?;
    match &view.state {
        SlotState::Live(tile) if view.generation == reference.generation() => {
            tile.data.polygons.get(usize::from(reference.polygon()))
        }
        _ => None,
    }
}

/// Every slot's search table for `data` (whose border tables are set), keeping those of
/// `previous` (by slot, with the border tables they were built from) whose border table
/// was kept: a table is rebuilt exactly when its border table is.
pub(super) fn search_tables(
    data: &SnapshotData,
    previous_borders: &[std::sync::Arc<BorderPortals>],
    previous: &[std::sync::Arc<SearchTable>],
) -> Vec<std::sync::Arc<SearchTable>> {
    let empty = std::sync::Arc::new(SearchTable::empty());
    data.slots
        .iter()
        .enumerate()
        .map(|(index, view)| {
            let SlotState::Live(tile) = &view.state else {
                return empty.clone();
            };
            let borders = &data.border_portals[index];
            let kept_borders = previous_borders
                .get(index)
                .is_some_and(|kept| std::sync::Arc::ptr_eq(kept, borders));
            match previous.get(index) {
                Some(kept) if kept_borders && kept.generation == view.generation => kept.clone(),
                _ => std::sync::Arc::new(SearchTable::new(
                    data,
                    TileSlot(index as u16),
                    tile,
                    view.generation,
                    borders,
                )),
            }
        })
        .collect()
}

#[cfg(test)]
impl super::Snapshot {
    /// This snapshot's content, copied with its lazily worked-out parts (components,
    /// landmarks) left to be worked out again: what the test variants below start from.
    pub(crate) fn copied_data(&self) -> SnapshotData {
        let data = &self.0;
        SnapshotData {
            slot_at: data.slot_at.clone(),
            links: data.links.clone(),
            links_from: data.links_from.clone(),
            slot_bounds: data.slot_bounds.clone(),
            tile_grid: data.tile_grid.clone(),
            neighbour_slots: data.neighbour_slots.clone(),
            polygon_base: data.polygon_base.clone(),
            polygon_total: data.polygon_total,
            border_portals: data.border_portals.clone(),
            search_tables: data.search_tables.clone(),
            ..SnapshotData::bare(data.slots.clone(), data.params)
        }
    }

    /// This snapshot without its search graph: searches on it expand polygons from the
    /// tiles' own arrays (for tests that check the two ways agree).
    pub(crate) fn without_search_tables(&self) -> super::Snapshot {
        super::Snapshot(std::sync::Arc::new(SnapshotData {
            search_tables: Vec::new(),
            ..self.copied_data()
        }))
    }
}
