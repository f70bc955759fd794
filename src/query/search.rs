//! Sliced A* over polygons, with a reusable, bounded node pool.
//!
//! A search is created with its start and end, then advanced with
//! [`PathSearch::step`]`(node_budget)` as many times as a frame budget allows; any budget
//! (1, 7, 64, ...) gives the same path as one unbounded step, because the search state lives
//! entirely in the search and the open list breaks ties on stable keys.
//!
//! Nodes sit at portal midpoints (the start and end at their points), costs are distances
//! times the area cost of the polygon crossed, and the heuristic is the straight distance to
//! the end (scaled by 0.999 so equal-cost alternatives resolve the same way every time). When
//! the end cannot be reached, or the node pool runs out, the result is partial: the path to
//! the node nearest the end, flagged.

use std::borrow::Borrow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use glam::Vec3;

use super::{QueryError, QueryFilter, ReadSet, check_point};
use crate::mesh::runtime_tile::BorderEdge;
use crate::mesh::{
    Adjacent, LinkId, PolyRef, RuntimeTile, Snapshot, TileGeneration, TilePoly, TileSlot,
};

/// Node pool size used when none is given; matches the Detour reference runs.
pub const NODE_POOL_DEFAULT: usize = 2048;
const NO_NODE: u32 = u32::MAX;
const HEURISTIC_SCALE: f32 = 0.999;

#[derive(Clone, Copy, Debug)]
struct Node {
    polygon: PolyRef,
    parent: u32,
    position: Vec3,
    cost: f32,
    total: f32,
    closed: bool,
    /// The link crossed to reach this node, or [`NO_LINK`] (a plain `u32` keeps the node
    /// at 40 bytes; `Option<LinkId>` would pad it to 48).
    via_link: u32,
}

const NO_LINK: u32 = u32::MAX;

/// Largest mesh (in polygons) for which a pool indexes nodes directly by polygon rather than
/// hashing: 2^18 polygons make an 2 MiB table per pool. Larger meshes hash.
pub const DENSE_POLYGONS_MAX: u32 = 1 << 18;

/// Search nodes, an index from polygon to node, and the open list; reused across searches
/// without reallocating or clearing (index entries carry the stamp of the search that wrote
/// them, so a new search just takes a new stamp). The index is a direct table over the
/// snapshot's dense polygon numbering when the mesh is small enough, else an
/// open-addressing hash table.
#[derive(Clone, Debug, Default)]
pub struct NodePool {
    nodes: Vec<Node>,
    table: Vec<(u32, u32)>,
    dense: Vec<(u32, u32)>,
    dense_active: bool,
    always_hash: bool,
    stamp: u32,
    capacity: usize,
    open: OpenList,
}

/// Open entries before the open list moves from a linear array to a binary heap.
const OPEN_LINEAR_MAX: usize = 64;

/// The open list: a plain array scanned for its minimum while it is small (the common case on
/// game levels: no sift-up and sift-down branches to mispredict), a binary heap past
/// [`OPEN_LINEAR_MAX`] entries. Both order by (total, node index), so a search gives the same
/// result whichever it uses.
#[derive(Clone, Debug, Default)]
struct OpenList {
    small: Vec<OpenEntry>,
    heap: BinaryHeap<Reverse<OpenEntry>>,
    use_heap: bool,
}

impl OpenList {
    fn with_capacity(capacity: usize) -> OpenList {
        OpenList {
            small: Vec::with_capacity(OPEN_LINEAR_MAX + 1),
            heap: BinaryHeap::with_capacity(capacity),
            use_heap: false,
        }
    }

    fn clear(&mut self) {
        self.small.clear();
        self.heap.clear();
        self.use_heap = false;
    }

    #[inline]
    fn push(&mut self, entry: OpenEntry) {
        if self.use_heap {
            self.heap.push(Reverse(entry));
            return;
        }
        self.small.push(entry);
        if self.small.len() > OPEN_LINEAR_MAX {
            self.use_heap = true;
            self.heap.extend(self.small.drain(..).map(Reverse));
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<OpenEntry> {
        if self.use_heap {
            return self.heap.pop().map(|Reverse(entry)| entry);
        }
        // One integer compare per entry, which compiles to conditional moves.
        let mut best_key = self.small.first()?.0;
        let mut best = 0;
        for (index, entry) in self.small.iter().enumerate().skip(1) {
            let better = entry.0 < best_key;
            best_key = if better { entry.0 } else { best_key };
            best = if better { index } else { best };
        }
        Some(self.small.swap_remove(best))
    }
}

impl NodePool {
    /// A pool that holds at most `capacity` nodes per search.
    pub fn new(capacity: usize) -> NodePool {
        let capacity = capacity.max(1);
        NodePool {
            nodes: Vec::with_capacity(capacity),
            table: vec![(0, NO_NODE); (capacity * 2).next_power_of_two()],
            dense: Vec::new(),
            dense_active: false,
            always_hash: false,
            stamp: 0,
            capacity,
            open: OpenList::with_capacity(capacity),
        }
    }

    /// A pool ready for searches on `snapshot`'s mesh: its per-polygon table (on meshes of
    /// up to 2^18 polygons) is allocated and written now, so the first
    /// search does not pay for it. A crowd makes its pools this way when it is created: made
    /// on demand, sixteen fresh tables for the 10,000-agent city faulted their pages in
    /// during the first step and made it the slowest frame.
    pub fn for_snapshot(capacity: usize, snapshot: &Snapshot) -> NodePool {
        let mut pool = NodePool::new(capacity);
        pool.clear(snapshot.data().polygon_total);
        pool
    }

    /// A pool that always hashes, whatever the mesh size: the index large meshes use, for
    /// tests and for hosts that keep many pools alive and want no per-polygon table.
    pub fn hashed(capacity: usize) -> NodePool {
        NodePool {
            always_hash: true,
            ..NodePool::new(capacity)
        }
    }

    /// Most nodes one search may use.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn clear(&mut self, polygon_total: u32) {
        self.nodes.clear();
        self.open.clear();
        self.dense_active = !self.always_hash && polygon_total <= DENSE_POLYGONS_MAX;
        if self.dense_active && self.dense.len() < polygon_total as usize {
            self.dense.resize(polygon_total as usize, (0, NO_NODE));
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // After 2^32 searches the stamps wrap: clear once so no old entry looks current.
            self.table.fill((0, NO_NODE));
            self.dense.fill((0, NO_NODE));
            self.stamp = 1;
        }
    }

    fn slot_of(&self, polygon: PolyRef) -> usize {
        debug_assert!(!self.table.is_empty(), "a pool made by new()");
        // Fibonacci hashing of the reference bits.
        let hash = polygon.to_bits().wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (hash >> 32) as usize & (self.table.len() - 1)
    }

    /// The node of `polygon` (dense number `key`) in this search, if any.
    #[inline]
    fn find(&self, polygon: PolyRef, key: u32) -> Option<u32> {
        if self.dense_active {
            let (stamp, index) = *self.dense.get(key as usize)?;
            return (stamp == self.stamp).then_some(index);
        }
        let mut slot = self.slot_of(polygon);
        loop {
            let (stamp, index) = self.table[slot];
            if stamp != self.stamp {
                return None;
            }
            if self.nodes[index as usize].polygon == polygon {
                return Some(index);
            }
            slot = (slot + 1) & (self.table.len() - 1);
        }
    }

    /// Adds a node for `node.polygon` (dense number `key`); `None` when the pool is full.
    #[inline]
    fn insert(&mut self, node: Node, key: u32) -> Option<u32> {
        if self.nodes.len() >= self.capacity {
            return None;
        }
        let index = self.nodes.len() as u32;
        if self.dense_active {
            *self.dense.get_mut(key as usize)? = (self.stamp, index);
        } else {
            let mut slot = self.slot_of(node.polygon);
            while self.table[slot].0 == self.stamp {
                slot = (slot + 1) & (self.table.len() - 1);
            }
            self.table[slot] = (self.stamp, index);
        }
        self.nodes.push(node);
        Some(index)
    }
}

/// One step of a path: a polygon, and the link taken to enter it, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathStep {
    /// The polygon.
    pub polygon: PolyRef,
    /// The off-mesh link crossed to enter it (None: an ordinary portal, or the start).
    pub via_link: Option<LinkId>,
}

/// A path result's buffers, given back for the next search to fill (see
/// [`find_path_with`]): with them a search allocates nothing once they have grown.
#[derive(Clone, Debug, Default)]
pub struct PathBuffers {
    steps: Vec<PathStep>,
    read_set: ReadSet,
}

impl PathBuffers {
    /// Takes back `result`'s buffers.
    pub fn recycle(&mut self, result: PathResult) {
        self.steps = result.steps;
        self.read_set = result.read_set;
    }
}

/// A finished search.
#[derive(Clone, Debug, PartialEq)]
pub struct PathResult {
    /// Polygons from start to end (or to the reachable polygon nearest the end).
    pub steps: Vec<PathStep>,
    /// Whether the end polygon was reached.
    pub complete: bool,
    /// Whether the node pool ran out (the result is then partial).
    pub out_of_nodes: bool,
    /// Nodes expanded over all steps.
    pub nodes_expanded: u32,
    /// What the search read.
    pub read_set: ReadSet,
}

/// Where a sliced search stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// More steps needed.
    InProgress {
        /// Nodes expanded by this step.
        expanded: u32,
    },
    /// Finished; call [`PathSearch::into_result`].
    Done {
        /// Nodes expanded by this step.
        expanded: u32,
    },
}

/// An open-list entry: the node's total cost in the high 32 bits and its index in the low
/// 32, so that one integer comparison orders by total and breaks ties on the node index
/// (the order nodes were first reached: deterministic whatever the timing). Totals are
/// finite and never negative (area costs are at least 1, points are checked finite), and the
/// bits of such floats order as the floats do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct OpenEntry(u64);

impl OpenEntry {
    #[inline]
    fn new(total: f32, node: u32) -> OpenEntry {
        debug_assert!(total >= 0.0 && total.is_finite(), "total {total}");
        OpenEntry((u64::from(total.to_bits()) << 32) | u64::from(node))
    }

    #[inline]
    fn total(self) -> f32 {
        f32::from_bits((self.0 >> 32) as u32)
    }

    #[inline]
    fn node(self) -> u32 {
        self.0 as u32
    }
}

/// A neighbour offered to the open list.
struct Candidate<'a> {
    /// The polygon.
    polygon: PolyRef,
    /// Its dense number in the snapshot.
    key: u32,
    /// Its data (area, flags).
    entered: &'a TilePoly,
    /// Where the path enters it (portal midpoint or link end).
    position: Vec3,
    /// Path cost up to `position`.
    cost: f32,
    /// The link crossed to reach it, if any.
    via: Option<LinkId>,
}

/// A resumable A* search on one snapshot.
pub struct PathSearch {
    snapshot: Snapshot,
    state: SearchState<QueryFilter>,
}

/// Everything a search changes as it runs (kept apart from the snapshot, which it only
/// reads, so expansion borrows the two separately).
struct SearchState<F> {
    filter: F,
    heuristic_scale: f32,
    /// Reused buffer for the portals across one tile border.
    portal_scratch: Vec<(PolyRef, Vec3, Vec3)>,
    /// Where the finished path's steps go (a caller's recycled buffer, or empty).
    steps: Vec<PathStep>,
    end: PolyRef,
    end_position: Vec3,
    pool: NodePool,
    best: u32,
    best_heuristic: f32,
    finished: bool,
    complete: bool,
    out_of_nodes: bool,
    expanded: u32,
    read_set: ReadSet,
}

impl PathSearch {
    /// Starts a search from `start` (at `start_position`) to `end` (at `end_position`),
    /// reusing `pool`. The search keeps its own copy of `filter` and a handle on `snapshot`,
    /// so it can be stepped across frames.
    pub fn new(
        snapshot: &Snapshot,
        start: PolyRef,
        start_position: Vec3,
        end: PolyRef,
        end_position: Vec3,
        filter: &QueryFilter,
        pool: NodePool,
    ) -> Result<PathSearch, QueryError> {
        PathSearch::new_weighted(
            snapshot,
            start,
            start_position,
            end,
            end_position,
            filter,
            pool,
            1.0,
        )
    }

    /// Like [`PathSearch::new`], with the heuristic weighted by `weight` (>= 1): weighted
    /// A*, whose path costs at most `weight` times the best and which expands far fewer
    /// nodes where many routes tie (a street grid). A crowd may take that trade; a single
    /// query keeps the default. A weight below 1 or not finite is treated as 1.
    #[allow(clippy::too_many_arguments)]
    pub fn new_weighted(
        snapshot: &Snapshot,
        start: PolyRef,
        start_position: Vec3,
        end: PolyRef,
        end_position: Vec3,
        filter: &QueryFilter,
        pool: NodePool,
        weight: f32,
    ) -> Result<PathSearch, QueryError> {
        let weight = if weight.is_finite() {
            weight.max(1.0)
        } else {
            1.0
        };
        let state = SearchState::start(
            snapshot,
            start,
            start_position,
            end,
            end_position,
            filter.clone(),
            pool,
            HEURISTIC_SCALE * weight,
            PathBuffers::default(),
        )?;
        Ok(PathSearch {
            snapshot: snapshot.clone(),
            state,
        })
    }

    /// Expands at most `node_budget` nodes.
    pub fn step(&mut self, node_budget: u32) -> Progress {
        self.state.run(&self.snapshot, node_budget)
    }

    /// Whether the search has finished.
    pub fn is_finished(&self) -> bool {
        self.state.finished
    }

    /// The result (partial if the search was not finished), and the pool for reuse.
    pub fn into_result(self) -> (PathResult, NodePool) {
        self.state.finish()
    }
}

impl<F: Borrow<QueryFilter>> SearchState<F> {
    #[allow(clippy::too_many_arguments)]
    fn start(
        snapshot: &Snapshot,
        start: PolyRef,
        start_position: Vec3,
        end: PolyRef,
        end_position: Vec3,
        filter: F,
        mut pool: NodePool,
        heuristic_scale: f32,
        recycled: PathBuffers,
    ) -> Result<Self, QueryError> {
        check_search(snapshot, start, start_position, end, end_position)?;
        pool.clear(snapshot.data().polygon_total);
        let mut read_set = recycled.read_set;
        read_set.reset(filter.borrow());
        read_set.read_tile(start.slot(), start.generation());
        read_set.read_tile(end.slot(), end.generation());
        let heuristic = start_position.distance(end_position) * heuristic_scale;
        let node = Node {
            polygon: start,
            parent: NO_NODE,
            position: start_position,
            cost: 0.0,
            total: heuristic,
            closed: false,
            via_link: NO_LINK,
        };
        let first = pool
            .insert(node, snapshot.polygon_key(start))
            .expect("a live start polygon fits an empty pool");
        pool.open.push(OpenEntry::new(heuristic, first));
        Ok(SearchState {
            filter,
            heuristic_scale,
            portal_scratch: Vec::new(),
            steps: recycled.steps,
            end,
            end_position,
            pool,
            best: first,
            best_heuristic: heuristic,
            finished: false,
            complete: false,
            out_of_nodes: false,
            expanded: 0,
            read_set,
        })
    }

    fn run(&mut self, snapshot: &Snapshot, node_budget: u32) -> Progress {
        let mut expanded = 0;
        while !self.finished && expanded < node_budget {
            let Some(entry) = self.pool.open.pop() else {
                self.finished = true;
                break;
            };
            let node = self.pool.nodes[entry.node() as usize];
            if node.closed || entry.total() != node.total {
                continue; // a stale heap entry
            }
            self.pool.nodes[entry.node() as usize].closed = true;
            expanded += 1;
            if node.polygon == self.end {
                self.best = entry.node();
                self.complete = true;
                self.finished = true;
                break;
            }
            self.expand(snapshot, entry.node(), node);
        }
        self.expanded += expanded;
        if self.finished {
            Progress::Done { expanded }
        } else {
            Progress::InProgress { expanded }
        }
    }

    fn finish(mut self) -> (PathResult, NodePool) {
        // Node positions are portal midpoints that move when a node is re-parented, so costs
        // along the polygon graph need not obey the triangle inequality; the walk back is
        // bounded by the node count so that no parent chain can loop.
        let limit = self.pool.nodes.len();
        let mut length = 0;
        let mut cursor = self.best;
        while cursor != NO_NODE && length <= limit {
            length += 1;
            cursor = self.pool.nodes[cursor as usize].parent;
        }
        let mut steps = std::mem::take(&mut self.steps);
        steps.clear();
        steps.reserve(length.min(limit));
        let mut cursor = self.best;
        while cursor != NO_NODE && steps.len() < limit {
            let node = self.pool.nodes[cursor as usize];
            steps.push(PathStep {
                polygon: node.polygon,
                via_link: (node.via_link != NO_LINK).then_some(LinkId(node.via_link)),
            });
            cursor = node.parent;
        }
        steps.reverse();
        for step in &steps {
            if let Some(read) = self
                .read_set
                .tiles
                .iter_mut()
                .find(|read| read.slot == step.polygon.slot())
            {
                read.on_route = true;
            }
        }
        let result = PathResult {
            steps,
            complete: self.complete,
            out_of_nodes: self.out_of_nodes,
            nodes_expanded: self.expanded,
            read_set: self.read_set,
        };
        (result, self.pool)
    }

    fn expand(&mut self, snapshot: &Snapshot, index: u32, node: Node) {
        let Some(tile) = snapshot.tile(node.polygon) else {
            return;
        };
        let polygon = &tile.data.polygons[usize::from(node.polygon.polygon())];
        // Dense number of this tile's polygon 0: same-tile neighbours need no lookup.
        let tile_base = snapshot
            .polygon_key(node.polygon)
            .wrapping_sub(u32::from(node.polygon.polygon()));
        let area_cost = self.filter.borrow().cost(polygon.area);
        let count = usize::from(polygon.vertex_count);
        let parent_polygon = self
            .pool
            .nodes
            .get(node.parent as usize)
            .map(|parent| parent.polygon);
        for adjacent in tile.adjacent(node.polygon.polygon()) {
            if adjacent.border_side == Adjacent::INTERNAL {
                // Same tile: no lookup, no read to record (the tile is read already).
                let reference = node.polygon.with_polygon(adjacent.neighbour);
                if Some(reference) == parent_polygon {
                    continue;
                }
                let area = &tile.data.polygons[usize::from(adjacent.neighbour)];
                let position = adjacent.midpoint;
                let cost = node.cost + node.position.distance(position) * area_cost;
                self.relax(
                    index,
                    Candidate {
                        polygon: reference,
                        key: tile_base.wrapping_add(u32::from(adjacent.neighbour)),
                        entered: area,
                        position,
                        cost,
                        via: None,
                    },
                );
            } else {
                let corners = &tile.corners[usize::from(node.polygon.polygon())];
                let edge = usize::from(adjacent.edge);
                let (a, b) = (
                    corners[edge],
                    corners[if edge + 1 == count { 0 } else { edge + 1 }],
                );
                let side = u16::from(adjacent.border_side);
                let mut portals = std::mem::take(&mut self.portal_scratch);
                cross_tile_portals_into(
                    snapshot,
                    node.polygon,
                    side,
                    a,
                    b,
                    &mut self.read_set,
                    &mut portals,
                );
                for &(reference, left, right) in &portals {
                    if Some(reference) == parent_polygon {
                        continue;
                    }
                    let Some(other) = snapshot.tile(reference) else {
                        continue;
                    };
                    let area = &other.data.polygons[usize::from(reference.polygon())];
                    let position = (left + right) * 0.5;
                    let cost = node.cost + node.position.distance(position) * area_cost;
                    self.relax(
                        index,
                        Candidate {
                            polygon: reference,
                            key: snapshot.polygon_key(reference),
                            entered: area,
                            position,
                            cost,
                            via: None,
                        },
                    );
                }
                self.portal_scratch = portals;
            }
        }
        if self.filter.borrow().links_allowed() {
            if let Some(links) = snapshot.data().links_from.get(&node.polygon.to_bits()) {
                for &id in links {
                    let Some(link) = snapshot.link(id) else {
                        continue;
                    };
                    self.read_set.read_link(id, link.version);
                    if !link.open {
                        continue;
                    }
                    let (from, to, target) = if link.start_polygon == Some(node.polygon) {
                        (link.desc.start, link.desc.end, link.end_polygon)
                    } else {
                        (link.desc.end, link.desc.start, link.start_polygon)
                    };
                    let Some(target) = target else { continue };
                    let Some(other) = snapshot.tile(target) else {
                        continue;
                    };
                    self.read_set.read_tile(target.slot(), target.generation());
                    let area = &other.data.polygons[usize::from(target.polygon())];
                    let cost =
                        node.cost + node.position.distance(from) * area_cost + from.distance(to);
                    self.relax(
                        index,
                        Candidate {
                            polygon: target,
                            key: snapshot.polygon_key(target),
                            entered: area,
                            position: to,
                            cost,
                            via: Some(id),
                        },
                    );
                }
            }
        }
    }

    /// Offers `neighbour` (the polygon `entered`, reached at `position` with path cost `cost`).
    fn relax(&mut self, parent: u32, candidate: Candidate) {
        let Candidate {
            polygon: neighbour,
            key,
            entered,
            position,
            mut cost,
            via,
        } = candidate;
        if !self.filter.borrow().passes(entered) {
            return;
        }
        let existing = self.pool.find(neighbour, key);
        // The heuristic is never negative, so a path that already costs as much as the
        // existing node's total cannot improve it: reject before taking a square root.
        if let Some(index) = existing {
            let node = &self.pool.nodes[index as usize];
            if cost >= node.total {
                return;
            }
            // Weighted A* keeps closed nodes closed: its bound on path cost holds without
            // reopening, and re-parenting a closed node could close a loop of parents.
            if node.closed && self.heuristic_scale > HEURISTIC_SCALE {
                return;
            }
        }
        let heuristic = if neighbour == self.end {
            cost += position.distance(self.end_position) * self.filter.borrow().cost(entered.area);
            0.0
        } else {
            position.distance(self.end_position) * self.heuristic_scale
        };
        let total = cost + heuristic;
        let node = Node {
            polygon: neighbour,
            parent,
            position,
            cost,
            total,
            closed: false,
            via_link: via.map_or(NO_LINK, |link| link.0),
        };
        let index = match existing {
            Some(index) => {
                if total >= self.pool.nodes[index as usize].total {
                    return;
                }
                self.pool.nodes[index as usize] = node;
                index
            }
            None => match self.pool.insert(node, key) {
                Some(index) => index,
                None => {
                    self.out_of_nodes = true;
                    return;
                }
            },
        };
        if heuristic < self.best_heuristic
            || (heuristic == self.best_heuristic && cost < self.pool.nodes[self.best as usize].cost)
        {
            self.best_heuristic = heuristic;
            self.best = index;
        }
        self.pool.open.push(OpenEntry::new(total, index));
    }
}

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

fn check_search(
    snapshot: &Snapshot,
    start: PolyRef,
    start_position: Vec3,
    end: PolyRef,
    end_position: Vec3,
) -> Result<(), QueryError> {
    check_point("path start", start_position)?;
    check_point("path end", end_position)?;
    snapshot.tile(start).ok_or(QueryError::StaleRef(start))?;
    snapshot.tile(end).ok_or(QueryError::StaleRef(end))?;
    Ok(())
}

/// Searches start to end in one go, reusing `pool` (left ready for the next search).
pub fn find_path(
    snapshot: &Snapshot,
    start: PolyRef,
    start_position: Vec3,
    end: PolyRef,
    end_position: Vec3,
    filter: &QueryFilter,
    pool: &mut NodePool,
) -> Result<PathResult, QueryError> {
    let mut buffers = PathBuffers::default();
    find_path_with(
        snapshot,
        start,
        start_position,
        end,
        end_position,
        filter,
        pool,
        &mut buffers,
    )
}

/// [`find_path`] filling `buffers` (taken from an earlier result by
/// [`PathBuffers::recycle`]) instead of new ones: a host answering many queries hands each
/// result's buffers back and the searches stop allocating (as Detour's caller-sized
/// arrays do). `buffers` is left empty; the same answer either way.
#[allow(clippy::too_many_arguments)]
pub fn find_path_with(
    snapshot: &Snapshot,
    start: PolyRef,
    start_position: Vec3,
    end: PolyRef,
    end_position: Vec3,
    filter: &QueryFilter,
    pool: &mut NodePool,
    buffers: &mut PathBuffers,
) -> Result<PathResult, QueryError> {
    // Checked first so that a refused query keeps the caller's pool.
    check_search(snapshot, start, start_position, end, end_position)?;
    // `take` leaves an empty placeholder that allocates nothing. The one-shot search borrows
    // the filter and the snapshot instead of copying them as a sliced search must.
    let taken = std::mem::take(pool);
    let mut state = SearchState::start(
        snapshot,
        start,
        start_position,
        end,
        end_position,
        filter,
        taken,
        HEURISTIC_SCALE,
        std::mem::take(buffers),
    )
    .expect("the inputs were checked above");
    while !state.finished {
        state.run(snapshot, u32::MAX);
    }
    let (result, returned) = state.finish();
    *pool = returned;
    Ok(result)
}

#[cfg(all(test, feature = "bake"))]
mod tests {
    use super::*;
    use crate::bake::{BakeConfig, Preset, bake};
    use crate::mesh::NavMesh;

    /// The city generated for 400 agents from `seed`, baked in tiles of 48 cells (portals
    /// across tile borders everywhere).
    fn tiled_city(seed: u64, preset: Preset) -> NavMesh {
        let city = crate::scene::city::city(400, seed);
        let world = city.scene.world_triangles().unwrap();
        let config = BakeConfig {
            tile_size_cells: Some(48),
            ..BakeConfig::preset(preset)
        };
        NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap()
    }

    /// The follow pass asks for one cross-tile portal at a time; it must be the portal the
    /// search (and so the corridor it built) used: the first into that polygon of the full
    /// list, to the bit. Checked over every border edge of a tiled city.
    #[test]
    fn the_single_border_portal_is_the_first_of_the_full_list() {
        let mesh = tiled_city(11, Preset::Guard);
        let snapshot = mesh.snapshot();
        let mut checked = 0;
        for slot in 0..snapshot.data().slots.len() {
            let Some((tile, generation)) = snapshot.live_slot(TileSlot(slot as u16)) else {
                continue;
            };
            for (index, polygon) in tile.data.polygons.iter().enumerate() {
                let from = PolyRef::new(generation, TileSlot(slot as u16), index as u16).unwrap();
                let count = usize::from(polygon.vertex_count);
                for edge in 0..count {
                    let neighbour = polygon.neighbours[edge];
                    if neighbour == TilePoly::NO_NEIGHBOUR || neighbour & TilePoly::TILE_EDGE == 0 {
                        continue;
                    }
                    let a = tile.data.vertex(polygon.vertices[edge]);
                    let b = tile.data.vertex(polygon.vertices[(edge + 1) % count]);
                    let side = neighbour & 3;
                    let mut scratch = ReadSet::default();
                    let all = cross_tile_portals(&snapshot, from, side, a, b, &mut scratch);
                    for &(to, _, _) in &all {
                        let first = all.iter().find(|portal| portal.0 == to).unwrap();
                        let expected = Some((first.1, first.2));
                        assert_eq!(
                            cross_tile_portal_into(&snapshot, from, side, a, b, to, None),
                            expected
                        );
                        let to_tile: &RuntimeTile = snapshot.tile(to).unwrap();
                        assert_eq!(
                            cross_tile_portal_into(&snapshot, from, side, a, b, to, Some(to_tile)),
                            expected
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 200, "only {checked} border portals");
    }

    /// A pool made ready for the mesh answers every search as a pool made bare, and has
    /// its per-polygon table already in place (the crowd makes its pools this way so its
    /// first step does not fault the tables in).
    #[test]
    fn a_pool_made_for_the_mesh_finds_the_same_paths() {
        let mesh = tiled_city(5, Preset::Recast);
        let snapshot = mesh.snapshot();
        let filter = QueryFilter::new();
        let mut ready = NodePool::for_snapshot(NODE_POOL_DEFAULT, &snapshot);
        assert_eq!(ready.dense.len(), snapshot.data().polygon_total as usize);
        let mut bare = NodePool::new(NODE_POOL_DEFAULT);
        let starts = crate::query::random_points(&snapshot, &filter, 50, 1);
        let ends = crate::query::random_points(&snapshot, &filter, 50, 2);
        let mut complete = 0;
        for (&(start, start_position), &(end, end_position)) in starts.iter().zip(&ends) {
            let path = |pool: &mut NodePool| {
                find_path(
                    &snapshot,
                    start,
                    start_position,
                    end,
                    end_position,
                    &filter,
                    pool,
                )
                .unwrap()
            };
            let (with_ready, with_bare) = (path(&mut ready), path(&mut bare));
            assert_eq!(with_ready.steps, with_bare.steps);
            assert_eq!(with_ready.nodes_expanded, with_bare.nodes_expanded);
            assert_eq!(with_ready.complete, with_bare.complete);
            complete += usize::from(with_ready.complete);
        }
        assert!(complete > 40, "{complete} of 50 paths complete");
    }
}
