//! Planning over the hierarchy: a route of tile legs found over the ports, and its
//! refinement into polygons, leg by leg.
//!
//! A search over ports is A* whose nodes are the ports a route enters tiles by; from a
//! port it goes, at the tile's precomputed cost, to each port it can leave by, and across
//! it to the twin in the next tile. The start's own tile is searched from the start point
//! (its ports then enter the queue with their costs) and the goal's tile from the goal
//! point (every port of it gets its cost to the goal), so neither end needs a port.
//! Refinement runs the confined search of one leg again and keeps its parents: the leg's
//! polygons are exactly those its cost was found along.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

use glam::Vec3;

use super::Hierarchy;
use super::local::{LocalSearch, Stop};
use crate::mesh::{PolyRef, Snapshot, TileSlot};
use crate::query::node_pool::HEURISTIC_SCALE;
use crate::query::{
    NODE_POOL_DEFAULT, NodePool, PathResult, PathStep, QueryError, ReadSet, check_point, find_path,
};

/// The parent of a node entered straight from the start's tile.
const FROM_START: u32 = u32::MAX;

/// The reusable state of hierarchical searches (one per thread): the port search's
/// costs, the confined searches' tables and a node pool for the flat searches it falls
/// back to.
#[derive(Clone, Debug)]
pub struct HierarchyScratch {
    local: LocalSearch,
    /// By global port: cost, parent port, the port the way left the previous tile by, and
    /// stamps telling whether the three are this search's and whether it is closed.
    cost: Vec<f32>,
    parent: Vec<u32>,
    exit: Vec<u32>,
    stamp: Vec<u32>,
    closed: Vec<u32>,
    current: u32,
    /// By port of the goal's tile: its cost to the goal.
    goal_costs: Vec<f32>,
    /// By slot: the search that last recorded reading it.
    read_stamp: Vec<u32>,
    open: BinaryHeap<Reverse<(u32, u32)>>,
    pool: NodePool,
}

impl Default for HierarchyScratch {
    fn default() -> Self {
        HierarchyScratch {
            local: LocalSearch::default(),
            cost: Vec::new(),
            parent: Vec::new(),
            exit: Vec::new(),
            stamp: Vec::new(),
            closed: Vec::new(),
            current: 0,
            goal_costs: Vec::new(),
            read_stamp: Vec::new(),
            open: BinaryHeap::new(),
            pool: NodePool::new(NODE_POOL_DEFAULT),
        }
    }
}

impl HierarchyScratch {
    /// Scratch whose flat fallback searches get a pool of `nodes` nodes.
    pub fn with_pool_nodes(nodes: usize) -> HierarchyScratch {
        HierarchyScratch {
            pool: NodePool::new(nodes),
            ..HierarchyScratch::default()
        }
    }

    fn begin(&mut self, ports: usize, slots: usize) {
        if self.cost.len() < ports {
            self.cost.resize(ports, f32::INFINITY);
            self.parent.resize(ports, FROM_START);
            self.exit.resize(ports, FROM_START);
            self.stamp.resize(ports, 0);
            self.closed.resize(ports, 0);
        }
        if self.read_stamp.len() < slots {
            self.read_stamp.resize(slots, 0);
        }
        self.current = self.current.wrapping_add(1);
        if self.current == 0 {
            self.stamp.fill(0);
            self.closed.fill(0);
            self.read_stamp.fill(0);
            self.current = 1;
        }
        self.open.clear();
    }

    fn read(&mut self, read_set: &mut ReadSet, slot: TileSlot, snapshot: &Snapshot) {
        let stamp = &mut self.read_stamp[usize::from(slot.0)];
        if *stamp != self.current {
            *stamp = self.current;
            if let Some((_, generation)) = snapshot.live_slot(slot) {
                read_set.read_new_tile(slot, generation);
            }
        }
    }

    fn cost_of(&self, node: u32) -> f32 {
        if self.stamp[node as usize] == self.current {
            self.cost[node as usize]
        } else {
            f32::INFINITY
        }
    }
}

/// One tile of a route: where it is entered (None: at the start point) and left (None:
/// at the goal point), as edges of the tile's search table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileLeg {
    /// The tile.
    pub slot: TileSlot,
    entry: Option<u32>,
    exit: Option<u32>,
}

/// A route over tiles from a start to a goal: the legs, in order, each to be refined into
/// polygons when needed (see [`TileRoute::refine`]).
#[derive(Clone, Debug)]
pub struct TileRoute {
    start: PolyRef,
    start_position: Vec3,
    end: PolyRef,
    end_position: Vec3,
    legs: Vec<TileLeg>,
    cost: f32,
    expanded: u32,
    read_set: ReadSet,
}

impl TileRoute {
    /// The legs, start first.
    pub fn legs(&self) -> &[TileLeg] {
        &self.legs
    }

    /// The route's cost by the crossing model (metres times area costs): the least there
    /// is.
    pub fn cost(&self) -> f32 {
        self.cost
    }

    /// Ports expanded finding it.
    pub fn ports_expanded(&self) -> u32 {
        self.expanded
    }

    /// What finding it read: every tile whose costs it weighed, each marked whether the
    /// route crosses it.
    pub fn read_set(&self) -> &ReadSet {
        &self.read_set
    }

    /// The polygons of legs `legs`, in order (each leg's first polygon is the one its
    /// entry port leads into, so consecutive ranges join without repeating a polygon).
    pub fn refine(
        &self,
        hierarchy: &Hierarchy,
        snapshot: &Snapshot,
        legs: Range<usize>,
        scratch: &mut HierarchyScratch,
    ) -> Result<Vec<PathStep>, QueryError> {
        if !hierarchy.is_current_for(snapshot) {
            return Err(QueryError::HierarchyOutOfDate);
        }
        let mut polygons = Vec::new();
        let mut steps = Vec::new();
        let last = self.legs.len().saturating_sub(1);
        for index in legs {
            let Some(leg) = self.legs.get(index) else {
                break;
            };
            let graph = &hierarchy.tiles[usize::from(leg.slot.0)];
            let table = &graph.table;
            let (tile, generation) = snapshot
                .live_slot(leg.slot)
                .ok_or(QueryError::StaleRef(self.start))?;
            let (polygon, position) = match leg.entry {
                Some(edge) => {
                    let (owner, search_edge) = table.edge_at(edge as usize);
                    (owner, search_edge.midpoint)
                }
                None => (self.start.polygon(), self.start_position),
            };
            let (goal, stop) = match leg.exit {
                Some(edge) => (None, Stop::AtEdge(edge)),
                None => (Some((self.end.polygon(), self.end_position)), Stop::AtGoal),
            };
            debug_assert!(leg.exit.is_some() || index == last);
            scratch.local.run(
                table,
                leg.slot,
                tile,
                &hierarchy.filter,
                polygon,
                position,
                goal,
                stop,
            );
            let through = leg.exit.unwrap_or(scratch.local.goal_via);
            polygons.clear();
            scratch
                .local
                .polygons_to(table, leg.slot, polygon, through, &mut polygons);
            steps.extend(polygons.iter().filter_map(|&polygon| {
                PolyRef::new(generation, leg.slot, polygon).map(|polygon| PathStep {
                    polygon,
                    via_link: None,
                })
            }));
        }
        Ok(steps)
    }
}

impl Hierarchy {
    /// The least route over tiles from `start_position` in `start` to `end_position` in
    /// `end`; `Ok(None)` when the ports do not join them (the end cannot be reached, or a
    /// tile on the way has no search table) or `end` is outside the filter.
    pub fn plan(
        &self,
        snapshot: &Snapshot,
        start: PolyRef,
        start_position: Vec3,
        end: PolyRef,
        end_position: Vec3,
        scratch: &mut HierarchyScratch,
    ) -> Result<Option<TileRoute>, QueryError> {
        check_point("path start", start_position)?;
        check_point("path end", end_position)?;
        let (start_tile, end_tile) = (
            snapshot.tile(start).ok_or(QueryError::StaleRef(start))?,
            snapshot.tile(end).ok_or(QueryError::StaleRef(end))?,
        );
        if !self.is_current_for(snapshot) {
            return Err(QueryError::HierarchyOutOfDate);
        }
        let filter = &self.filter;
        if !filter.passes(&end_tile.data.polygons[usize::from(end.polygon())]) {
            return Ok(None);
        }
        let (start_slot, end_slot) = (start.slot(), end.slot());
        let start_graph = &self.tiles[usize::from(start_slot.0)];
        let end_graph = &self.tiles[usize::from(end_slot.0)];
        if start_graph.table.generation() != start.generation()
            || end_graph.table.generation() != end.generation()
        {
            return Ok(None); // a tile without a search table
        }
        scratch.begin(self.port_count(), self.tiles.len());
        let mut read_set = ReadSet::new(filter);
        scratch.read(&mut read_set, start_slot, snapshot);
        scratch.read(&mut read_set, end_slot, snapshot);

        // Every port of the goal's tile: its cost to the goal (a way and its reverse cost
        // the same).
        scratch.local.run(
            &end_graph.table,
            end_slot,
            end_tile,
            filter,
            end.polygon(),
            end_position,
            None,
            Stop::Exhausted,
        );
        scratch.goal_costs.clear();
        scratch.goal_costs.extend(
            end_graph
                .ports
                .iter()
                .map(|&edge| scratch.local.cost[edge as usize]),
        );

        // The start's tile, from the start point: its ports, and the goal if it is here.
        let same_tile = start_slot == end_slot;
        scratch.local.run(
            &start_graph.table,
            start_slot,
            start_tile,
            filter,
            start.polygon(),
            start_position,
            same_tile.then_some((end.polygon(), end_position)),
            Stop::Exhausted,
        );
        // The best way to the goal so far: its cost and the port it enters the goal's
        // tile by (FROM_START: straight through the start's tile).
        let mut best = (f32::INFINITY, FROM_START);
        if same_tile {
            best.0 = scratch.local.goal_cost;
        }
        for (port, &edge) in start_graph.ports.iter().enumerate() {
            let cost = scratch.local.cost[edge as usize];
            if cost.is_finite() {
                let exit = self.node(start_slot.0, port as u32);
                self.offer(scratch, exit, cost, FROM_START, end_position);
            }
        }

        let mut expanded = 0;
        while let Some(Reverse((bits, node))) = scratch.open.pop() {
            let at = node as usize;
            if scratch.closed[at] == scratch.current
                || scratch.stamp[at] != scratch.current
                || f32::from_bits(bits) < scratch.cost[at]
            {
                continue;
            }
            let cost = scratch.cost[at];
            if f32::from_bits(bits) >= best.0 {
                break; // no way left in the queue can beat the best to the goal
            }
            scratch.closed[at] = scratch.current;
            expanded += 1;
            let (slot, port) = self.port_at(node);
            scratch.read(&mut read_set, TileSlot(slot), snapshot);
            if slot == end_slot.0 {
                let to_goal = cost + scratch.goal_costs[port as usize];
                if to_goal < best.0 {
                    best = (to_goal, node);
                }
            }
            let graph = &self.tiles[usize::from(slot)];
            let count = graph.ports.len();
            let row = &graph.costs[port as usize * count..(port as usize + 1) * count];
            let first = self.port_base[usize::from(slot)];
            for (exit, &through) in row.iter().enumerate() {
                if through.is_finite() {
                    self.offer(
                        scratch,
                        first + exit as u32,
                        cost + through,
                        node,
                        end_position,
                    );
                }
            }
        }
        if !best.0.is_finite() {
            return Ok(None);
        }

        // The legs, goal first, then reversed.
        let mut legs = Vec::new();
        let mut entering = best.1;
        let mut exit = None;
        let mut slot = end_slot;
        loop {
            if entering == FROM_START {
                legs.push(TileLeg {
                    slot: start_slot,
                    entry: None,
                    exit,
                });
                break;
            }
            let (entry_slot, entry_port) = self.port_at(entering);
            debug_assert_eq!(TileSlot(entry_slot), slot);
            legs.push(TileLeg {
                slot,
                entry: Some(self.tiles[usize::from(entry_slot)].ports[entry_port as usize]),
                exit,
            });
            let (exit_slot, exit_port) = self.port_at(scratch.exit[entering as usize]);
            exit = Some(self.tiles[usize::from(exit_slot)].ports[exit_port as usize]);
            slot = TileSlot(exit_slot);
            entering = scratch.parent[entering as usize];
            if legs.len() > self.tiles.len() * 2 + self.port_count() {
                return Ok(None); // a broken chain; never for a settled route
            }
        }
        legs.reverse();
        for read in &mut read_set.tiles {
            read.on_route = legs.iter().any(|leg| leg.slot == read.slot);
        }
        Ok(Some(TileRoute {
            start,
            start_position,
            end,
            end_position,
            legs,
            cost: best.0,
            expanded,
            read_set,
        }))
    }

    /// Offers the twin of port `exit` (a port leaving a tile) at `cost`, the way having
    /// entered that tile by `parent`.
    #[inline]
    fn offer(&self, scratch: &mut HierarchyScratch, exit: u32, cost: f32, parent: u32, goal: Vec3) {
        let node = self.twin_node[exit as usize];
        if node == u32::MAX {
            return;
        }
        let at = node as usize;
        if scratch.closed[at] == scratch.current || cost >= scratch.cost_of(node) {
            return;
        }
        scratch.stamp[at] = scratch.current;
        scratch.cost[at] = cost;
        scratch.parent[at] = parent;
        scratch.exit[at] = exit;
        let total = cost + self.port_position[at].distance(goal) * HEURISTIC_SCALE;
        scratch.open.push(Reverse((total.to_bits(), node)));
    }

    /// A path from `start_position` in `start` to `end_position` in `end`: over the
    /// hierarchy and refined whole when the ports join the two, else by the flat search
    /// (an end that cannot be reached, off-mesh links the filter allows, a tile without a
    /// search table), whose partial path is the reference for ends out of reach.
    #[allow(clippy::too_many_arguments)]
    pub fn find_path(
        &self,
        snapshot: &Snapshot,
        start: PolyRef,
        start_position: Vec3,
        end: PolyRef,
        end_position: Vec3,
        scratch: &mut HierarchyScratch,
    ) -> Result<PathResult, QueryError> {
        let links_count = !snapshot.data().links.is_empty() && self.filter.links_allowed();
        if !links_count
            && let Some(route) =
                self.plan(snapshot, start, start_position, end, end_position, scratch)?
        {
            let steps = route.refine(self, snapshot, 0..route.legs.len(), scratch)?;
            if steps.last().map(|step| step.polygon) == Some(end) {
                return Ok(PathResult {
                    steps,
                    complete: true,
                    out_of_nodes: false,
                    nodes_expanded: route.expanded,
                    read_set: route.read_set,
                });
            }
        }
        if !self.is_current_for(snapshot) {
            return Err(QueryError::HierarchyOutOfDate);
        }
        find_path(
            snapshot,
            start,
            start_position,
            end,
            end_position,
            &self.filter,
            &mut scratch.pool,
        )
    }
}
