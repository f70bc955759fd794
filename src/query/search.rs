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

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::Vec3;

use super::{QueryError, QueryFilter, ReadSet, check_point};
use crate::mesh::{LinkId, PolyRef, Snapshot, TilePoly};

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
    via_link: Option<LinkId>,
}

/// Search nodes with an open-addressing index from polygon to node; reused across searches
/// without reallocating.
#[derive(Clone, Debug)]
pub struct NodePool {
    nodes: Vec<Node>,
    table: Vec<u32>,
    capacity: usize,
}

impl NodePool {
    /// A pool that holds at most `capacity` nodes per search.
    pub fn new(capacity: usize) -> NodePool {
        let capacity = capacity.max(1);
        NodePool {
            nodes: Vec::with_capacity(capacity),
            table: vec![NO_NODE; (capacity * 2).next_power_of_two()],
            capacity,
        }
    }

    fn clear(&mut self) {
        self.nodes.clear();
        self.table.fill(NO_NODE);
    }

    fn slot_of(&self, polygon: PolyRef) -> usize {
        // Fibonacci hashing of the reference bits.
        let hash = polygon.to_bits().wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (hash >> 32) as usize & (self.table.len() - 1)
    }

    fn find(&self, polygon: PolyRef) -> Option<u32> {
        let mut slot = self.slot_of(polygon);
        loop {
            let index = self.table[slot];
            if index == NO_NODE {
                return None;
            }
            if self.nodes[index as usize].polygon == polygon {
                return Some(index);
            }
            slot = (slot + 1) & (self.table.len() - 1);
        }
    }

    /// Adds a node for `polygon`; `None` when the pool is full.
    fn insert(&mut self, node: Node) -> Option<u32> {
        if self.nodes.len() >= self.capacity {
            return None;
        }
        let mut slot = self.slot_of(node.polygon);
        while self.table[slot] != NO_NODE {
            slot = (slot + 1) & (self.table.len() - 1);
        }
        let index = self.nodes.len() as u32;
        self.table[slot] = index;
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

#[derive(PartialEq)]
struct OpenEntry {
    total: f32,
    polygon: PolyRef,
    node: u32,
}

impl Eq for OpenEntry {}

impl Ord for OpenEntry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Min-heap on total cost; ties on the reference, so order never depends on timing.
        other
            .total
            .total_cmp(&self.total)
            .then_with(|| other.polygon.cmp(&self.polygon))
    }
}

impl PartialOrd for OpenEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A resumable A* search on one snapshot.
pub struct PathSearch {
    snapshot: Snapshot,
    filter: QueryFilter,
    end: PolyRef,
    end_position: Vec3,
    pool: NodePool,
    open: BinaryHeap<OpenEntry>,
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
    /// reusing `pool`.
    pub fn new(
        snapshot: &Snapshot,
        start: PolyRef,
        start_position: Vec3,
        end: PolyRef,
        end_position: Vec3,
        filter: &QueryFilter,
        mut pool: NodePool,
    ) -> Result<PathSearch, QueryError> {
        check_point("path start", start_position)?;
        check_point("path end", end_position)?;
        snapshot.tile(start).ok_or(QueryError::StaleRef(start))?;
        snapshot.tile(end).ok_or(QueryError::StaleRef(end))?;
        pool.clear();
        let mut read_set = ReadSet::new(filter);
        read_set.read_tile(start.slot(), start.generation());
        read_set.read_tile(end.slot(), end.generation());
        let heuristic = start_position.distance(end_position) * HEURISTIC_SCALE;
        let node = Node {
            polygon: start,
            parent: NO_NODE,
            position: start_position,
            cost: 0.0,
            total: heuristic,
            closed: false,
            via_link: None,
        };
        let first = pool.insert(node).expect("an empty pool holds one node");
        let mut open = BinaryHeap::new();
        open.push(OpenEntry {
            total: heuristic,
            polygon: start,
            node: first,
        });
        Ok(PathSearch {
            snapshot: snapshot.clone(),
            filter: filter.clone(),
            end,
            end_position,
            pool,
            open,
            best: first,
            best_heuristic: heuristic,
            finished: false,
            complete: false,
            out_of_nodes: false,
            expanded: 0,
            read_set,
        })
    }

    /// Expands at most `node_budget` nodes.
    pub fn step(&mut self, node_budget: u32) -> Progress {
        let mut expanded = 0;
        while !self.finished && expanded < node_budget {
            let Some(entry) = self.open.pop() else {
                self.finished = true;
                break;
            };
            let node = self.pool.nodes[entry.node as usize];
            if node.closed || entry.total != node.total {
                continue; // a stale heap entry
            }
            self.pool.nodes[entry.node as usize].closed = true;
            expanded += 1;
            if node.polygon == self.end {
                self.best = entry.node;
                self.complete = true;
                self.finished = true;
                break;
            }
            self.expand(entry.node, node);
        }
        self.expanded += expanded;
        if self.finished {
            Progress::Done { expanded }
        } else {
            Progress::InProgress { expanded }
        }
    }

    fn expand(&mut self, index: u32, node: Node) {
        let snapshot = self.snapshot.clone();
        let Some(tile) = snapshot.tile(node.polygon) else {
            return;
        };
        let polygon = &tile.data.polygons[usize::from(node.polygon.polygon())];
        let area_cost = self.filter.cost(polygon.area);
        let count = usize::from(polygon.vertex_count);
        for edge in 0..count {
            let neighbour = polygon.neighbours[edge];
            if neighbour == TilePoly::NO_NEIGHBOUR {
                continue;
            }
            let a = tile.data.vertex(polygon.vertices[edge]);
            let b = tile.data.vertex(polygon.vertices[(edge + 1) % count]);
            if neighbour & TilePoly::TILE_EDGE == 0 {
                let Some(reference) =
                    PolyRef::new(node.polygon.generation(), node.polygon.slot(), neighbour)
                else {
                    continue;
                };
                self.relax(index, &node, reference, (a + b) * 0.5, area_cost, None);
            } else {
                let side = neighbour & 3;
                for (reference, left, right) in
                    cross_tile_portals(&snapshot, node.polygon, side, a, b, &mut self.read_set)
                {
                    self.relax(
                        index,
                        &node,
                        reference,
                        (left + right) * 0.5,
                        area_cost,
                        None,
                    );
                }
            }
        }
        if self.filter.links_allowed() {
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
                    let extra = node.position.distance(from) * area_cost + from.distance(to);
                    self.relax_with_cost(index, &node, target, to, node.cost + extra, Some(id));
                }
            }
        }
    }

    fn relax(
        &mut self,
        parent: u32,
        node: &Node,
        neighbour: PolyRef,
        position: Vec3,
        area_cost: f32,
        via: Option<LinkId>,
    ) {
        let cost = node.cost + node.position.distance(position) * area_cost;
        self.relax_with_cost(parent, node, neighbour, position, cost, via);
    }

    fn relax_with_cost(
        &mut self,
        parent: u32,
        node: &Node,
        neighbour: PolyRef,
        position: Vec3,
        mut cost: f32,
        via: Option<LinkId>,
    ) {
        if Some(neighbour) == self.pool.nodes.get(node.parent as usize).map(|p| p.polygon) {
            return;
        }
        let Some(tile) = self.snapshot.tile(neighbour) else {
            return;
        };
        let area = tile.data.polygons[usize::from(neighbour.polygon())].area;
        if !self.filter.passes(area) {
            return;
        }
        self.read_set
            .read_tile(neighbour.slot(), neighbour.generation());
        let heuristic = if neighbour == self.end {
            cost += position.distance(self.end_position) * self.filter.cost(area);
            0.0
        } else {
            position.distance(self.end_position) * HEURISTIC_SCALE
        };
        let total = cost + heuristic;
        let index = match self.pool.find(neighbour) {
            Some(index) => {
                let existing = &mut self.pool.nodes[index as usize];
                if total >= existing.total {
                    return;
                }
                *existing = Node {
                    polygon: neighbour,
                    parent,
                    position,
                    cost,
                    total,
                    closed: false,
                    via_link: via,
                };
                index
            }
            None => {
                let node = Node {
                    polygon: neighbour,
                    parent,
                    position,
                    cost,
                    total,
                    closed: false,
                    via_link: via,
                };
                match self.pool.insert(node) {
                    Some(index) => index,
                    None => {
                        self.out_of_nodes = true;
                        return;
                    }
                }
            }
        };
        if heuristic < self.best_heuristic
            || (heuristic == self.best_heuristic && cost < self.pool.nodes[self.best as usize].cost)
        {
            self.best_heuristic = heuristic;
            self.best = index;
        }
        self.open.push(OpenEntry {
            total,
            polygon: neighbour,
            node: index,
        });
    }

    /// Whether the search has finished.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The result (partial if the search was not finished), and the pool for reuse.
    pub fn into_result(mut self) -> (PathResult, NodePool) {
        let mut steps = Vec::new();
        let mut cursor = self.best;
        while cursor != NO_NODE {
            let node = self.pool.nodes[cursor as usize];
            steps.push(PathStep {
                polygon: node.polygon,
                via_link: node.via_link,
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
    let data = snapshot.data();
    let Some(view) = data.slots.get(usize::from(from.slot().0)) else {
        return Vec::new();
    };
    let (dx, dz) = [(-1, 0), (0, 1), (1, 0), (0, -1)][usize::from(side)];
    let Some(&slot) = data.slot_at.get(&(view.tile.0 + dx, view.tile.1 + dz)) else {
        return Vec::new();
    };
    let Some((tile, generation)) = snapshot.live_slot(slot) else {
        return Vec::new();
    };
    read_set.read_tile(slot, generation);
    let along = |p: Vec3| if side == 0 || side == 2 { p.z } else { p.x };
    let tolerance = data.params.agent_max_climb_m.max(0.1);
    let (low, high) = (along(a).min(along(b)), along(a).max(along(b)));
    let mut portals = Vec::new();
    for edge in &tile.border[usize::from((side + 2) % 4)] {
        let (other_low, other_high) = (
            along(edge.start).min(along(edge.end)),
            along(edge.start).max(along(edge.end)),
        );
        let (start, end) = (low.max(other_low), high.min(other_high));
        if end - start < 1e-3 {
            continue;
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
            continue;
        }
        let Some(reference) = PolyRef::new(generation, slot, edge.polygon) else {
            continue;
        };
        // Keep the portal's ends in the order of `a b`, so left and right are as for an
        // ordinary edge of `from`.
        let (first, second) = if along(a) <= along(b) {
            (mine_start, mine_end)
        } else {
            (mine_end, mine_start)
        };
        portals.push((reference, first, second));
    }
    portals
}

/// Searches start to end in one go with a fresh pool of `NODE_POOL_DEFAULT` nodes.
pub fn find_path(
    snapshot: &Snapshot,
    start: PolyRef,
    start_position: Vec3,
    end: PolyRef,
    end_position: Vec3,
    filter: &QueryFilter,
) -> Result<PathResult, QueryError> {
    let mut search = PathSearch::new(
        snapshot,
        start,
        start_position,
        end,
        end_position,
        filter,
        NodePool::new(NODE_POOL_DEFAULT),
    )?;
    while !search.is_finished() {
        search.step(u32::MAX);
    }
    Ok(search.into_result().0)
}
