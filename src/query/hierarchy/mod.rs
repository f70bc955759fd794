//! Hierarchical paths: a graph over the crossings between clusters of tiles, searched at
//! the scale of clusters, then refined cluster by cluster into a polygon corridor.
//!
//! Stage: query runtime, beside the point-to-point search (`search/`) and the destination
//! tree, over the search graph (`mesh/search_graph.rs`). Input: a snapshot and a filter.
//! Output: a [`Hierarchy`]: the live tiles grouped in square clusters (by tile
//! coordinates), each cluster's *ports* (the search edges that cross into another
//! cluster) and the least cost, inside the cluster, from entering at each port to
//! leaving at each other; a [`HierarchicalRoute`] found over it, and from that a
//! [`PathResult`](crate::query::PathResult).
//!
//! Why: a point-to-point search on a large mesh expands polygons all the way across it; a
//! mass order on a city of a hundred thousand agents asks for tens of thousands of such
//! searches. HPA* (Botea, Müller and Schaeffer, 2004) searches a graph of cluster
//! entrances instead, whose edges were found once inside each cluster, and refines only
//! the clusters the route crosses, nearest first. Here the entrances are every crossing
//! of a cluster's border (not one per stretch of border, as in the paper): the abstract
//! graph then holds every way the flat graph has, and a route over it costs exactly the
//! least cost by the destination tree's crossing model (the portal midpoints), never more
//! than the flat search's. A cluster spans several tiles because baked tiles are small:
//! on the city, tiles of 96 cells hold five polygons each, and a graph over single tiles
//! had as many ports as the mesh has polygons. By default a cluster's side is chosen so
//! that it holds about [`CLUSTER_POLYGONS_TARGET`] polygons on average.
//!
//! Costs: a port is entered at its midpoint into its polygon; inside a cluster, ways run
//! through the midpoints of the edges crossed, each metre times the area cost of the
//! polygon it crosses (`local.rs`); stepping across a port to its *twin* (the facing
//! cluster's crossing back) costs nothing, both sit on the same portal.
//!
//! Staleness: a cluster's ports and costs are only as current as its tiles' search
//! tables, which a snapshot rebuilds exactly when a tile or a tile across its sides
//! changes. [`Hierarchy::update`] rebuilds the clusters any of whose tables changed (or
//! whose tiles came or went) and keeps the others; a route records every tile whose costs
//! it read, so it is checked against later changes like any search's result.
//!
//! Invariants: a hierarchy answers only on a snapshot with the search tables it was last
//! brought up to (others are refused); routes never cross off-mesh links (a snapshot
//! with links, under a filter that allows them, is answered by the flat search, as is a
//! route from or to a tile without a search table); an end that cannot be reached is
//! answered by the flat search too, whose partial path is the reference.

mod local;
mod plan;

pub use plan::{HierarchicalRoute, HierarchyScratch, RouteLeg};

use std::collections::BTreeMap;
use std::sync::Arc;

use glam::Vec3;
use rayon::prelude::*;

use self::local::{LocalSearch, Origin, Stop};
use super::QueryFilter;
use crate::mesh::{PolyRef, SearchTable, Snapshot, TileSlot};

/// The polygons a cluster holds on average when [`Hierarchy::new`] chooses its side.
pub const CLUSTER_POLYGONS_TARGET: usize = 128;

/// Largest cluster side, in tiles.
pub const CLUSTER_SIDE_MAX: u16 = 64;

/// No cluster (a slot without a live tile), or no twin.
const NONE: u32 = u32::MAX;

/// The polygon across a port: outside the cluster.
const OUTSIDE: u32 = u32::MAX;

/// One edge of a cluster's polygon as its confined searches expand it (read markers
/// left out: the cluster's reads are recorded whole).
#[derive(Clone, Copy, Debug)]
struct LocalEdge {
    /// Where a way crossing it enters the polygon across: the portal's midpoint.
    midpoint: Vec3,
    /// The polygon across, by its number in the cluster; `OUTSIDE` for a port.
    into: u32,
    /// The flags and area of the polygon across (what a filter lets in).
    flags: u16,
    area: u8,
}

/// One cluster of tiles: its polygons and edges numbered across its tiles, its ports and
/// the costs between them.
#[derive(Debug)]
struct ClusterGraph {
    /// The cluster's coordinates (tile coordinates divided by the side, rounded down).
    key: (i32, i32),
    /// Its tiles' slots, ascending, and the search tables the graph was built from.
    slots: Vec<TileSlot>,
    tables: Vec<Arc<SearchTable>>,
    /// By member tile: the number of its first polygon in the cluster, plus the total.
    polygon_base: Vec<u32>,
    /// By polygon number: the polygon, its area and flags, and its first edge (plus the
    /// end).
    polygons: Vec<PolyRef>,
    areas: Vec<u8>,
    flags: Vec<u16>,
    first_edge: Vec<u32>,
    edges: Vec<LocalEdge>,
    /// The edge number of each port, ascending; by port, the polygon across (outside)
    /// and the number of the port's own polygon.
    ports: Vec<u32>,
    port_across: Vec<PolyRef>,
    port_owner: Vec<u32>,
    /// Row-major by (entry port, exit port): the least cost from entering at the first to
    /// leaving at the second inside the cluster; infinite where there is no way (and on
    /// the diagonal: leaving where one came in is never part of a least way).
    costs: Vec<f32>,
}

/// Error of a hierarchy asked for with a cluster side out of range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("cluster side {0} tiles is outside 1..={CLUSTER_SIDE_MAX}")]
pub struct ClusterSideError(pub u16);

impl ClusterGraph {
    /// The graph of the cluster `index` (coordinates `key`, tiles `slots`), given which
    /// cluster every slot of the snapshot belongs to and its place there.
    #[allow(clippy::too_many_arguments)]
    fn build(
        snapshot: &Snapshot,
        key: (i32, i32),
        slots: Vec<TileSlot>,
        index: u32,
        cluster_of_slot: &[u32],
        member_of_slot: &[u16],
        filter: &QueryFilter,
        local: &mut LocalSearch,
    ) -> ClusterGraph {
        let data = snapshot.data();
        let tables: Vec<Arc<SearchTable>> = slots
            .iter()
            .map(|slot| data.search_tables[usize::from(slot.0)].clone())
            .collect();
        let tiles: Vec<_> = slots
            .iter()
            .map(|&slot| snapshot.live_slot(slot).map(|(tile, _)| tile))
            .collect();
        let mut polygon_base = Vec::with_capacity(slots.len() + 1);
        let mut total = 0u32;
        for tile in &tiles {
            polygon_base.push(total);
            total += tile.map_or(0, |tile| tile.data.polygons.len() as u32);
        }
        polygon_base.push(total);
        let number_of = |polygon: PolyRef| -> Option<u32> {
            let slot = usize::from(polygon.slot().0);
            if cluster_of_slot.get(slot) != Some(&index) {
                return None;
            }
            let member = usize::from(member_of_slot[slot]);
            (tables[member].generation() == polygon.generation())
                .then(|| polygon_base[member] + u32::from(polygon.polygon()))
                .filter(|&number| number < polygon_base[member + 1])
        };
        let total = total as usize;
        let mut graph = ClusterGraph {
            key,
            slots: slots.clone(),
            tables: tables.clone(),
            polygon_base: polygon_base.clone(),
            polygons: Vec::with_capacity(total),
            areas: Vec::with_capacity(total),
            flags: Vec::with_capacity(total),
            first_edge: Vec::with_capacity(total + 1),
            edges: Vec::new(),
            ports: Vec::new(),
            port_across: Vec::new(),
            port_owner: Vec::new(),
            costs: Vec::new(),
        };
        for (member, (tile, table)) in tiles.iter().zip(&tables).enumerate() {
            let Some(tile) = tile else { continue };
            for (polygon, record) in tile.data.polygons.iter().enumerate() {
                let number = graph.polygons.len() as u32;
                let Some(reference) =
                    PolyRef::new(table.generation(), slots[member], polygon as u16)
                else {
                    continue;
                };
                graph.polygons.push(reference);
                graph.areas.push(record.area);
                graph.flags.push(record.flags);
                graph.first_edge.push(graph.edges.len() as u32);
                for edge in table.edges(polygon as u16) {
                    let Some(across) = edge.neighbour else {
                        continue; // a read marker
                    };
                    let into = number_of(across).unwrap_or(OUTSIDE);
                    if into == OUTSIDE {
                        graph.ports.push(graph.edges.len() as u32);
                        graph.port_across.push(across);
                        graph.port_owner.push(number);
                    }
                    graph.edges.push(LocalEdge {
                        midpoint: edge.midpoint,
                        into,
                        flags: edge.flags,
                        area: edge.area,
                    });
                }
            }
        }
        graph.first_edge.push(graph.edges.len() as u32);
        let count = graph.ports.len();
        let mut costs = vec![f32::INFINITY; count * count];
        for entry in 0..count {
            // An agent entering here walks through the port's own polygon.
            let owner = graph.port_owner[entry];
            let owner_index = owner as usize;
            if !filter.passes_area_flags(graph.areas[owner_index], graph.flags[owner_index]) {
                continue;
            }
            let origin = Origin {
                polygon: owner,
                position: graph.edges[graph.ports[entry] as usize].midpoint,
            };
            local.run(&graph, filter, origin, None, Stop::Exhausted);
            let row = &mut costs[entry * count..(entry + 1) * count];
            for (exit, &exit_edge) in graph.ports.iter().enumerate() {
                if exit != entry {
                    row[exit] = local.cost[exit_edge as usize];
                }
            }
        }
        graph.costs = costs;
        graph
    }

    /// The number in the cluster of `polygon`, a polygon of member tile `member`.
    fn number(&self, member: usize, polygon: PolyRef) -> Option<u32> {
        let table = self.tables.get(member)?;
        let number = self.polygon_base[member] + u32::from(polygon.polygon());
        (table.generation() == polygon.generation() && number < self.polygon_base[member + 1])
            .then_some(number)
    }

    /// Where a way entering the cluster by port `port` starts: the port's own polygon and
    /// the portal's midpoint.
    fn port_origin(&self, port: usize) -> Origin {
        Origin {
            polygon: self.port_owner[port],
            position: self.edges[self.ports[port] as usize].midpoint,
        }
    }

    fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<TileSlot>()
            + self.tables.capacity() * size_of::<Arc<SearchTable>>()
            + (self.polygon_base.capacity() + self.first_edge.capacity()) * size_of::<u32>()
            + self.polygons.capacity() * size_of::<PolyRef>()
            + self.areas.capacity()
            + self.flags.capacity() * size_of::<u16>()
            + self.edges.capacity() * size_of::<LocalEdge>()
            + (self.ports.capacity() + self.port_owner.capacity()) * size_of::<u32>()
            + self.port_across.capacity() * size_of::<PolyRef>()
            + self.costs.capacity() * size_of::<f32>()
    }
}

/// The abstract graph of a snapshot's tiles under one filter (see the module
/// documentation).
#[derive(Debug)]
pub struct Hierarchy {
    filter: QueryFilter,
    snapshot: Snapshot,
    /// Cluster side, tiles.
    side: u16,
    /// The clusters, by coordinates.
    clusters: Vec<Arc<ClusterGraph>>,
    /// By slot: its cluster (`NONE` without a live tile) and its place among the
    /// cluster's tiles.
    cluster_of_slot: Vec<u32>,
    member_of_slot: Vec<u16>,
    /// By cluster: the number of its first port over all clusters, plus the total.
    port_base: Vec<u32>,
    /// By port number over all clusters: its cluster, its twin's number (`NONE`: none)
    /// and its portal's midpoint, laid out flat so the port search reads no cluster to
    /// offer one.
    port_cluster: Vec<u32>,
    twin_node: Vec<u32>,
    port_position: Vec<Vec3>,
}

impl Hierarchy {
    /// The hierarchy of `snapshot`'s tiles under `filter`, its clusters sized to hold
    /// about [`CLUSTER_POLYGONS_TARGET`] polygons on average (the side is kept by later
    /// updates). Clusters are built in parallel; the result does not depend on the
    /// thread count.
    pub fn new(snapshot: &Snapshot, filter: &QueryFilter) -> Hierarchy {
        let data = snapshot.data();
        let live = data
            .slots
            .iter()
            .filter(|view| matches!(view.state, crate::mesh::SlotState::Live(_)))
            .count()
            .max(1);
        let per_tile = (data.polygon_total as f64 / live as f64).max(1.0);
        let side = (CLUSTER_POLYGONS_TARGET as f64 / per_tile)
            .sqrt()
            .round()
            .clamp(1.0, f64::from(CLUSTER_SIDE_MAX)) as u16;
        Hierarchy::with_cluster_side(snapshot, filter, side).expect("the side is in range")
    }

    /// The hierarchy with clusters of `side` × `side` tiles.
    pub fn with_cluster_side(
        snapshot: &Snapshot,
        filter: &QueryFilter,
        side: u16,
    ) -> Result<Hierarchy, ClusterSideError> {
        if !(1..=CLUSTER_SIDE_MAX).contains(&side) {
            return Err(ClusterSideError(side));
        }
        let mut hierarchy = Hierarchy {
            filter: filter.clone(),
            snapshot: snapshot.clone(),
            side,
            clusters: Vec::new(),
            cluster_of_slot: Vec::new(),
            member_of_slot: Vec::new(),
            port_base: Vec::new(),
            port_cluster: Vec::new(),
            twin_node: Vec::new(),
            port_position: Vec::new(),
        };
        hierarchy.rebuild(snapshot);
        Ok(hierarchy)
    }

    /// Brings the hierarchy up to `snapshot`: the clusters whose tiles or search tables
    /// changed are built again, the others kept. Returns how many were built.
    pub fn update(&mut self, snapshot: &Snapshot) -> usize {
        if self.snapshot.is_same(snapshot) {
            return 0;
        }
        self.snapshot = snapshot.clone();
        self.rebuild(snapshot)
    }

    fn rebuild(&mut self, snapshot: &Snapshot) -> usize {
        let data = snapshot.data();
        let side = i32::from(self.side);
        // Group the live tiles with a search table by cluster coordinates.
        let mut groups: BTreeMap<(i32, i32), Vec<TileSlot>> = BTreeMap::new();
        for (index, view) in data.slots.iter().enumerate() {
            let crate::mesh::SlotState::Live(tile) = &view.state else {
                continue;
            };
            if data
                .search_tables
                .get(index)
                .is_none_or(|table| table.generation() != view.generation)
            {
                continue; // no search table: the flat search's alone
            }
            let header = &tile.data.header;
            let key = (
                header.tile_x.div_euclid(side),
                header.tile_z.div_euclid(side),
            );
            groups.entry(key).or_default().push(TileSlot(index as u16));
        }
        self.cluster_of_slot = vec![NONE; data.slots.len()];
        self.member_of_slot = vec![0; data.slots.len()];
        for (cluster, slots) in groups.values().enumerate() {
            for (member, slot) in slots.iter().enumerate() {
                self.cluster_of_slot[usize::from(slot.0)] = cluster as u32;
                self.member_of_slot[usize::from(slot.0)] = member as u16;
            }
        }
        let previous: BTreeMap<(i32, i32), Arc<ClusterGraph>> = std::mem::take(&mut self.clusters)
            .into_iter()
            .map(|graph| (graph.key, graph))
            .collect();
        let groups: Vec<((i32, i32), Vec<TileSlot>)> = groups.into_iter().collect();
        let (filter, cluster_of_slot, member_of_slot) =
            (&self.filter, &self.cluster_of_slot, &self.member_of_slot);
        let built: Vec<(Arc<ClusterGraph>, bool)> = groups
            .into_par_iter()
            .enumerate()
            .map_init(LocalSearch::default, |local, (index, (key, slots))| {
                if let Some(kept) = previous.get(&key)
                    && kept.slots == slots
                    && kept.slots.iter().zip(&kept.tables).all(|(slot, table)| {
                        Arc::ptr_eq(table, &data.search_tables[usize::from(slot.0)])
                    })
                {
                    return (kept.clone(), false);
                }
                let graph = ClusterGraph::build(
                    snapshot,
                    key,
                    slots,
                    index as u32,
                    cluster_of_slot,
                    member_of_slot,
                    filter,
                    local,
                );
                (Arc::new(graph), true)
            })
            .collect();
        let rebuilt = built.iter().filter(|(_, fresh)| *fresh).count();
        self.clusters = built.into_iter().map(|(graph, _)| graph).collect();
        self.number_ports();
        rebuilt
    }

    /// Numbers the ports over all clusters and works out their twins and positions.
    fn number_ports(&mut self) {
        self.port_base.clear();
        let mut total = 0u32;
        for graph in &self.clusters {
            self.port_base.push(total);
            total += graph.ports.len() as u32;
        }
        self.port_base.push(total);
        self.port_cluster.clear();
        self.twin_node.clear();
        self.port_position.clear();
        for (cluster, graph) in self.clusters.iter().enumerate() {
            for (port, &edge) in graph.ports.iter().enumerate() {
                self.port_cluster.push(cluster as u32);
                let twin = self.twin_of(graph, port);
                self.twin_node.push(twin);
                self.port_position.push(graph.edges[edge as usize].midpoint);
            }
        }
    }

    /// The twin of `graph`'s port `port`: the crossing back from the polygon across, as a
    /// port number over all clusters (the one whose portal midpoint is nearest, should a
    /// pair of polygons share two portals); `NONE` if there is none.
    fn twin_of(&self, graph: &ClusterGraph, port: usize) -> u32 {
        let across = graph.port_across[port];
        let here = graph.polygons[graph.port_owner[port] as usize];
        let midpoint = graph.edges[graph.ports[port] as usize].midpoint;
        let Some((facing_index, number)) = self.locate(across) else {
            return NONE;
        };
        let facing = &self.clusters[facing_index as usize];
        let number = number as usize;
        let mut best: Option<(f32, u32)> = None;
        for edge in facing.first_edge[number]..facing.first_edge[number + 1] {
            let Ok(back) = facing.ports.binary_search(&edge) else {
                continue;
            };
            if facing.port_across[back] != here {
                continue;
            }
            let gap = facing.edges[edge as usize]
                .midpoint
                .distance_squared(midpoint);
            if best.is_none_or(|(least, _)| gap < least) {
                best = Some((gap, back as u32));
            }
        }
        best.map_or(NONE, |(_, back)| {
            self.port_base[facing_index as usize] + back
        })
    }

    /// The cluster `polygon` lies in and its number there, if its tile is in one.
    fn locate(&self, polygon: PolyRef) -> Option<(u32, u32)> {
        let slot = usize::from(polygon.slot().0);
        let cluster = *self.cluster_of_slot.get(slot)?;
        if cluster == NONE {
            return None;
        }
        let member = usize::from(self.member_of_slot[slot]);
        self.clusters[cluster as usize]
            .number(member, polygon)
            .map(|number| (cluster, number))
    }

    /// The filter the hierarchy was built under.
    pub fn filter(&self) -> &QueryFilter {
        &self.filter
    }

    /// Cluster side, tiles.
    pub fn cluster_side(&self) -> u16 {
        self.side
    }

    /// Clusters with at least one live tile.
    pub fn cluster_count(&self) -> usize {
        self.clusters.len()
    }

    /// Ports over all clusters: the abstract graph's nodes.
    pub fn port_count(&self) -> usize {
        self.port_base.last().copied().unwrap_or(0) as usize
    }

    /// Bytes the hierarchy holds (its graphs and tables of numbers; not the snapshot).
    pub fn heap_bytes(&self) -> usize {
        self.clusters
            .iter()
            .map(|graph| graph.heap_bytes())
            .sum::<usize>()
            + self.clusters.capacity() * size_of::<Arc<ClusterGraph>>()
            + (self.cluster_of_slot.capacity() + self.port_base.capacity()) * size_of::<u32>()
            + self.member_of_slot.capacity() * size_of::<u16>()
            + (self.port_cluster.capacity() + self.twin_node.capacity()) * size_of::<u32>()
            + self.port_position.capacity() * size_of::<Vec3>()
    }

    /// Whether the hierarchy answers on `snapshot`: it was last brought up to it, or to
    /// one with the very same search tables.
    pub fn is_current_for(&self, snapshot: &Snapshot) -> bool {
        if self.snapshot.is_same(snapshot) {
            return true;
        }
        let (tables, own) = (
            &snapshot.data().search_tables,
            &self.snapshot.data().search_tables,
        );
        tables.len() == own.len()
            && tables
                .iter()
                .zip(own)
                .all(|(table, kept)| Arc::ptr_eq(table, kept))
    }
}
