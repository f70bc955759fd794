//! Hierarchical paths: a graph over the tiles' border crossings, searched at the scale of
//! tiles, then refined tile by tile into a polygon corridor.
//!
//! Stage: query runtime, beside the point-to-point search (`search/`) and the destination
//! tree, over the search graph (`mesh/search_graph.rs`). Input: a snapshot and a filter.
//! Output: a [`Hierarchy`]: for each live tile its *ports* (the search edges that cross
//! into another tile) and the least cost, inside the tile, from entering at each port to
//! leaving at each other; a [`TileRoute`] found over it, and from that a [`PathResult`].
//!
//! Why: a point-to-point search on a large mesh expands polygons all the way across it; a
//! mass order on a city of a hundred thousand agents asks for tens of thousands of such
//! searches. HPA* (Botea, Müller and Schaeffer, 2004) searches a graph of cluster
//! entrances instead, whose edges were found once inside each cluster, and refines only
//! the clusters the route crosses, nearest first. Here a cluster is a tile and its
//! entrances are every crossing of its border (not one per stretch of border, as in the
//! paper): the abstract graph then holds every way the flat graph has, and a route over
//! it costs exactly the least cost by the destination tree's crossing model (the portal
//! midpoints), never more than the flat search's.
//!
//! Costs: a port is entered at its midpoint into its polygon; inside a tile, ways run
//! through the midpoints of the edges crossed, each metre times the area cost of the
//! polygon it crosses (`local.rs`); stepping across a port to its *twin* (the facing
//! tile's crossing back) costs nothing, both sit on the same portal.
//!
//! Staleness: a tile's ports and costs are only as current as its search table, which a
//! snapshot rebuilds exactly when the tile or a tile across its sides changes.
//! [`Hierarchy::update`] rebuilds the graphs of the tiles whose table changed, and the
//! twins of their neighbours; a route records every tile whose costs it read (and which
//! lie on it), so it is checked against later changes like any search's result.
//!
//! Invariants: a hierarchy answers only on the snapshot it was last brought up to (an
//! older or newer one is refused); routes never cross off-mesh links (a snapshot with
//! links, under a filter that allows them, is answered by the flat search, as is a route
//! from or to a tile without a search table); an end that cannot be reached is answered
//! by the flat search too, whose partial path is the reference.

mod local;
mod plan;

pub use plan::{HierarchyScratch, TileLeg, TileRoute};

use std::sync::Arc;

use glam::Vec3;
use rayon::prelude::*;

use self::local::{LocalSearch, Stop};
use super::QueryFilter;
use crate::mesh::{SearchTable, Snapshot, TileSlot};

/// No twin: the facing tile has no crossing back, or no graph.
const NO_TWIN: (u16, u32) = (u16::MAX, u32::MAX);

/// The ports of one live tile and the costs between them.
#[derive(Debug)]
struct TileGraph {
    /// The search table the graph was built from (the graph is current while the
    /// snapshot's table for the slot is this very one).
    table: Arc<SearchTable>,
    /// The search-table index of each port, ascending.
    ports: Vec<u32>,
    /// Row-major by (entry port, exit port): the least cost from entering at the first to
    /// leaving at the second inside the tile; infinite where there is no way (and on the
    /// diagonal: leaving where one came in is never part of a least way).
    costs: Vec<f32>,
    /// By port: its twin's slot and port index in that slot's graph.
    twins: Vec<(u16, u32)>,
}

impl TileGraph {
    fn empty(table: Arc<SearchTable>) -> TileGraph {
        TileGraph {
            table,
            ports: Vec::new(),
            costs: Vec::new(),
            twins: Vec::new(),
        }
    }

    fn build(
        snapshot: &Snapshot,
        slot: TileSlot,
        table: Arc<SearchTable>,
        filter: &QueryFilter,
        local: &mut LocalSearch,
    ) -> TileGraph {
        let Some((tile, generation)) = snapshot.live_slot(slot) else {
            return TileGraph::empty(table);
        };
        if table.generation() != generation {
            return TileGraph::empty(table);
        }
        let ports: Vec<u32> = (0..table.edge_count())
            .filter(|&index| {
                let (_, edge) = table.edge_at(index);
                edge.neighbour.is_some_and(|across| across.slot() != slot)
            })
            .map(|index| index as u32)
            .collect();
        let count = ports.len();
        let mut costs = vec![f32::INFINITY; count * count];
        for (entry, &entry_edge) in ports.iter().enumerate() {
            let (polygon, edge) = table.edge_at(entry_edge as usize);
            // An agent entering here walks through the port's own polygon.
            let record = &tile.data.polygons[usize::from(polygon)];
            if !filter.passes(record) {
                continue;
            }
            local.run(
                &table,
                slot,
                tile,
                filter,
                polygon,
                edge.midpoint,
                None,
                Stop::Exhausted,
            );
            let row = &mut costs[entry * count..(entry + 1) * count];
            for (exit, &exit_edge) in ports.iter().enumerate() {
                if exit != entry {
                    row[exit] = local.cost[exit_edge as usize];
                }
            }
        }
        TileGraph {
            table,
            ports,
            costs,
            twins: vec![NO_TWIN; count],
        }
    }

    /// The index among the ports of search-table edge `edge`, if it is a port.
    fn port_of_edge(&self, edge: u32) -> Option<u32> {
        self.ports
            .binary_search(&edge)
            .ok()
            .map(|index| index as u32)
    }

    fn heap_bytes(&self) -> usize {
        self.ports.capacity() * size_of::<u32>()
            + self.costs.capacity() * size_of::<f32>()
            + self.twins.capacity() * size_of::<(u16, u32)>()
    }
}

/// The abstract graph of a snapshot's tiles under one filter (see the module
/// documentation).
#[derive(Debug)]
pub struct Hierarchy {
    filter: QueryFilter,
    snapshot: Snapshot,
    tiles: Vec<Arc<TileGraph>>,
    /// By slot: the number of the slot's first port over all tiles, plus the total.
    port_base: Vec<u32>,
    /// By port number over all tiles: its slot, its twin's number (`u32::MAX`: none) and
    /// its portal's midpoint, laid out flat so the port search reads no tile to offer one.
    port_slot: Vec<u16>,
    twin_node: Vec<u32>,
    port_position: Vec<Vec3>,
}

impl Hierarchy {
    /// The hierarchy of `snapshot`'s tiles under `filter` (tiles built in parallel; the
    /// result does not depend on the thread count).
    pub fn new(snapshot: &Snapshot, filter: &QueryFilter) -> Hierarchy {
        let mut hierarchy = Hierarchy {
            filter: filter.clone(),
            snapshot: snapshot.clone(),
            tiles: Vec::new(),
            port_base: Vec::new(),
            port_slot: Vec::new(),
            twin_node: Vec::new(),
            port_position: Vec::new(),
        };
        hierarchy.rebuild(snapshot);
        hierarchy
    }

    /// Brings the hierarchy up to `snapshot`: the graphs of tiles whose search table
    /// changed are built again, the others kept. Returns how many were built.
    pub fn update(&mut self, snapshot: &Snapshot) -> usize {
        if self.snapshot.is_same(snapshot) {
            return 0;
        }
        self.snapshot = snapshot.clone();
        self.rebuild(snapshot)
    }

    fn rebuild(&mut self, snapshot: &Snapshot) -> usize {
        let tables = &snapshot.data().search_tables;
        let previous = std::mem::take(&mut self.tiles);
        let filter = &self.filter;
        let rebuilt: Vec<Option<TileGraph>> = tables
            .par_iter()
            .enumerate()
            .map_init(
                LocalSearch::default,
                |local, (index, table)| match previous.get(index) {
                    Some(kept) if Arc::ptr_eq(&kept.table, table) => None,
                    _ => Some(TileGraph::build(
                        snapshot,
                        TileSlot(index as u16),
                        table.clone(),
                        filter,
                        local,
                    )),
                },
            )
            .collect();
        let count = rebuilt.iter().filter(|graph| graph.is_some()).count();
        let mut tiles: Vec<Option<TileGraph>> = Vec::with_capacity(tables.len());
        let mut kept: Vec<Option<Arc<TileGraph>>> = Vec::with_capacity(tables.len());
        for (index, graph) in rebuilt.into_iter().enumerate() {
            match graph {
                Some(graph) => {
                    tiles.push(Some(graph));
                    kept.push(None);
                }
                None => {
                    tiles.push(None);
                    kept.push(Some(previous[index].clone()));
                }
            }
        }
        // Twins of the rebuilt tiles and of every tile facing one (whose port numbers
        // may have moved).
        let neighbours = &snapshot.data().neighbour_slots;
        let mut needs_twins = vec![false; tables.len()];
        for (index, graph) in tiles.iter().enumerate() {
            if graph.is_some() {
                needs_twins[index] = true;
                for &facing in neighbours.get(index).into_iter().flatten() {
                    if let Some(flag) = needs_twins.get_mut(usize::from(facing)) {
                        *flag = true;
                    }
                }
            }
        }
        let mut twins: Vec<Option<Vec<(u16, u32)>>> = vec![None; tables.len()];
        {
            let graph_of = |slot: usize| -> Option<&TileGraph> {
                tiles
                    .get(slot)
                    .and_then(|graph| graph.as_ref())
                    .or_else(|| kept.get(slot).and_then(|graph| graph.as_deref()))
            };
            for (index, flag) in needs_twins.iter().enumerate() {
                if !*flag {
                    continue;
                }
                let Some(graph) = graph_of(index) else {
                    continue;
                };
                twins[index] = Some(
                    graph
                        .ports
                        .iter()
                        .map(|&edge| twin_of(TileSlot(index as u16), &graph.table, edge, &graph_of))
                        .collect(),
                );
            }
        }
        self.tiles = tiles
            .into_iter()
            .zip(kept)
            .zip(twins)
            .map(|((built, kept), twins)| match (built, twins) {
                (Some(mut graph), Some(twins)) => {
                    graph.twins = twins;
                    Arc::new(graph)
                }
                (Some(graph), None) => Arc::new(graph),
                (None, Some(twins)) => {
                    let kept = kept.expect("a slot not rebuilt keeps its graph");
                    Arc::new(TileGraph {
                        table: kept.table.clone(),
                        ports: kept.ports.clone(),
                        costs: kept.costs.clone(),
                        twins,
                    })
                }
                (None, None) => kept.expect("a slot not rebuilt keeps its graph"),
            })
            .collect();
        self.port_base.clear();
        let mut total = 0u32;
        for graph in &self.tiles {
            self.port_base.push(total);
            total += graph.ports.len() as u32;
        }
        self.port_base.push(total);
        self.port_slot.clear();
        self.twin_node.clear();
        self.port_position.clear();
        for (slot, graph) in self.tiles.iter().enumerate() {
            for (port, &edge) in graph.ports.iter().enumerate() {
                self.port_slot.push(slot as u16);
                let (twin_slot, twin_port) = graph.twins[port];
                self.twin_node.push(if (twin_slot, twin_port) == NO_TWIN {
                    u32::MAX
                } else {
                    self.port_base[usize::from(twin_slot)] + twin_port
                });
                self.port_position
                    .push(graph.table.edge_at(edge as usize).1.midpoint);
            }
        }
        count
    }

    /// The filter the hierarchy was built under.
    pub fn filter(&self) -> &QueryFilter {
        &self.filter
    }

    /// Ports over all tiles: the abstract graph's nodes.
    pub fn port_count(&self) -> usize {
        self.port_base.last().copied().unwrap_or(0) as usize
    }

    /// Bytes the hierarchy holds (its graphs and tables of numbers; not the snapshot).
    pub fn heap_bytes(&self) -> usize {
        self.tiles
            .iter()
            .map(|graph| graph.heap_bytes())
            .sum::<usize>()
            + self.tiles.capacity() * size_of::<Arc<TileGraph>>()
            + self.port_base.capacity() * size_of::<u32>()
            + self.port_slot.capacity() * size_of::<u16>()
            + self.twin_node.capacity() * size_of::<u32>()
            + self.port_position.capacity() * size_of::<Vec3>()
    }

    /// Whether the hierarchy answers on `snapshot` (it was last brought up to it, or to
    /// one with the very same search tables).
    pub fn is_current_for(&self, snapshot: &Snapshot) -> bool {
        if self.snapshot.is_same(snapshot) {
            return true;
        }
        let tables = &snapshot.data().search_tables;
        tables.len() == self.tiles.len()
            && tables
                .iter()
                .zip(&self.tiles)
                .all(|(table, graph)| Arc::ptr_eq(table, &graph.table))
    }

    /// Global number of port `port` of `slot`.
    #[inline]
    fn node(&self, slot: u16, port: u32) -> u32 {
        self.port_base[usize::from(slot)] + port
    }

    /// The slot and port index of global port number `node`.
    #[inline]
    fn port_at(&self, node: u32) -> (u16, u32) {
        let slot = self.port_slot[node as usize];
        (slot, node - self.port_base[usize::from(slot)])
    }
}

/// The twin of the port at search-table `edge` of `table`: the crossing back from the
/// polygon across, in the facing tile's graph (the one whose portal midpoint is nearest,
/// should a pair of polygons share two portals).
fn twin_of<'a>(
    slot: TileSlot,
    table: &SearchTable,
    edge: u32,
    graph_of: &impl Fn(usize) -> Option<&'a TileGraph>,
) -> (u16, u32) {
    let (polygon, search_edge) = table.edge_at(edge as usize);
    let Some(across) = search_edge.neighbour else {
        return NO_TWIN;
    };
    let facing_slot = across.slot();
    let Some(facing) = graph_of(usize::from(facing_slot.0)) else {
        return NO_TWIN;
    };
    if facing.table.generation() != across.generation() {
        return NO_TWIN;
    }
    let Some(here) = crate::mesh::PolyRef::new(table.generation(), slot, polygon) else {
        return NO_TWIN;
    };
    let first = facing.table.first_edge(across.polygon()) as u32;
    let mut best: Option<(f32, u32)> = None;
    for (offset, back) in facing.table.edges(across.polygon()).iter().enumerate() {
        if back.neighbour != Some(here) {
            continue;
        }
        let gap = back.midpoint.distance_squared(search_edge.midpoint);
        if best.is_none_or(|(least, _)| gap < least) {
            best = Some((gap, first + offset as u32));
        }
    }
    best.and_then(|(_, back_edge)| facing.port_of_edge(back_edge))
        .map_or(NO_TWIN, |port| (facing_slot.0, port))
}
