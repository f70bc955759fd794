//! Searches confined to one tile: the least costs from a point in one of its polygons to
//! each of its border crossings (and to a goal point in it), by the crossing model of the
//! destination tree.
//!
//! A node is one of the tile's search edges: arriving at its midpoint, about to enter the
//! polygon across. An edge whose polygon across lies in another tile is a *port*: it is
//! reached but never expanded, since the search stays in the tile. Costs are metres times
//! the area cost of the polygon walked through, so a way and its reverse cost the same.
//!
//! Invariants: the heap orders by (cost bits, edge index), so the same search settles the
//! same edges with the same parents on every run; a polygon the filter refuses is never
//! entered (the start polygon is not checked: the caller stands in it).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::Vec3;

use crate::mesh::{RuntimeTile, SearchTable, TileSlot};
use crate::query::QueryFilter;
use crate::query::node_pool::HEURISTIC_SCALE;

/// No edge: the start of a chain of parents.
pub(super) const NO_EDGE: u32 = u32::MAX;

/// Where a confined search stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Stop {
    /// When every edge it can reach is settled.
    Exhausted,
    /// When this edge is settled.
    AtEdge(u32),
    /// When the way to the goal is known.
    AtGoal,
}

/// The reusable state of confined searches (one per thread).
#[derive(Clone, Debug, Default)]
pub(crate) struct LocalSearch {
    /// By edge of the tile: least cost to its midpoint (infinite: not reached).
    pub(super) cost: Vec<f32>,
    /// By edge: the edge the way came through before it (`NO_EDGE`: from the start).
    pub(super) parent: Vec<u32>,
    settled: Vec<bool>,
    open: BinaryHeap<Reverse<(u32, u32)>>,
    /// The point an A* aims at (None: Dijkstra, every edge by cost alone).
    aim: Option<Vec3>,
    /// The least cost to the goal point, and the edge the way entered the goal's polygon
    /// by (`NO_EDGE`: the start polygon holds the goal).
    pub(super) goal_cost: f32,
    pub(super) goal_via: u32,
}

impl LocalSearch {
    /// Searches `table`'s tile (in `slot`) from `start_position` in polygon `start`,
    /// toward `goal` (its polygon and point) if given, until `stop`. A search that stops
    /// at one edge or at the goal is an A* aimed at it (straight distance, scaled as the
    /// point-to-point search's, never above the cost, so the cost found is still the
    /// least); one that runs to exhaustion is a Dijkstra.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run(
        &mut self,
        table: &SearchTable,
        slot: TileSlot,
        tile: &RuntimeTile,
        filter: &QueryFilter,
        start: u16,
        start_position: Vec3,
        goal: Option<(u16, Vec3)>,
        stop: Stop,
    ) {
        let edges = table.edge_count();
        self.cost.clear();
        self.cost.resize(edges, f32::INFINITY);
        self.parent.clear();
        self.parent.resize(edges, NO_EDGE);
        self.settled.clear();
        self.settled.resize(edges, false);
        self.open.clear();
        self.goal_cost = f32::INFINITY;
        self.goal_via = NO_EDGE;
        self.aim = match stop {
            Stop::Exhausted => None,
            Stop::AtEdge(edge) => Some(table.edge(edge as usize).midpoint),
            Stop::AtGoal => goal.map(|(_, position)| position),
        };
        self.expand(
            table,
            tile,
            filter,
            start,
            start_position,
            0.0,
            NO_EDGE,
            goal,
        );
        while let Some(Reverse((bits, edge))) = self.open.pop() {
            let index = edge as usize;
            let search_edge = table.edge(index);
            if self.settled[index]
                || f32::from_bits(bits) != self.key(self.cost[index], search_edge.midpoint)
            {
                continue;
            }
            if stop == Stop::AtGoal && f32::from_bits(bits) >= self.goal_cost {
                return; // nothing cheaper can still reach the goal
            }
            self.settled[index] = true;
            if stop == Stop::AtEdge(edge) {
                return;
            }
            let Some(across) = search_edge.neighbour else {
                continue;
            };
            if across.slot() != slot {
                continue; // a port: the way leaves the tile here
            }
            let midpoint = search_edge.midpoint;
            let cost = self.cost[index];
            self.expand(
                table,
                tile,
                filter,
                across.polygon(),
                midpoint,
                cost,
                edge,
                goal,
            );
        }
    }

    /// The queue's key of an edge reached at `cost` whose midpoint is `at`.
    #[inline]
    fn key(&self, cost: f32, at: Vec3) -> f32 {
        match self.aim {
            Some(aim) => cost + at.distance(aim) * HEURISTIC_SCALE,
            None => cost,
        }
    }

    /// Offers the edges out of `polygon`, entered at `position` at `cost` by `via`.
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &mut self,
        table: &SearchTable,
        tile: &RuntimeTile,
        filter: &QueryFilter,
        polygon: u16,
        position: Vec3,
        cost: f32,
        via: u32,
        goal: Option<(u16, Vec3)>,
    ) {
        let Some(record) = tile.data.polygons.get(usize::from(polygon)) else {
            return;
        };
        let per_metre = filter.cost(record.area);
        if let Some((goal_polygon, goal_position)) = goal
            && goal_polygon == polygon
        {
            let to_goal = cost + position.distance(goal_position) * per_metre;
            if to_goal < self.goal_cost {
                self.goal_cost = to_goal;
                self.goal_via = via;
            }
        }
        let first = table.first_edge(polygon);
        for (offset, edge) in table.edges(polygon).iter().enumerate() {
            if edge.neighbour.is_none() {
                continue; // a read marker
            }
            if !filter.passes_area_flags(edge.area, edge.flags) {
                continue;
            }
            let index = first + offset;
            let reached = cost + position.distance(edge.midpoint) * per_metre;
            if reached < self.cost[index] {
                self.cost[index] = reached;
                self.parent[index] = via;
                let key = self.key(reached, edge.midpoint);
                self.open.push(Reverse((key.to_bits(), index as u32)));
            }
        }
    }

    /// Appends to `out` the polygons of the way from the start polygon `start` through
    /// edge `last` (`NO_EDGE`: the start alone), the start first. The polygon across
    /// `last` is included when it lies in the tile (the goal's polygon, entered by
    /// `goal_via`), not when `last` is a port.
    pub(super) fn polygons_to(
        &self,
        table: &SearchTable,
        slot: TileSlot,
        start: u16,
        last: u32,
        out: &mut Vec<u16>,
    ) {
        let mark = out.len();
        let mut edge = last;
        let mut guard = self.parent.len() + 1;
        while edge != NO_EDGE && guard > 0 {
            let search_edge = table.edge(edge as usize);
            if let Some(across) = search_edge.neighbour
                && across.slot() == slot
            {
                out.push(across.polygon());
            }
            edge = self.parent[edge as usize];
            guard -= 1;
        }
        out.push(start);
        out[mark..].reverse();
    }
}
