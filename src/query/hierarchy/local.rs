//! Searches confined to one cluster of tiles: the least costs from a point in one of its
//! polygons to each of its ports (and to a goal point in it), by the crossing model of
//! the destination tree.
//!
//! A node is one of the cluster's edges (see [`ClusterGraph`]): arriving at its midpoint,
//! about to enter the polygon across. A *port*, an edge whose polygon across lies outside
//! the cluster, is reached but never expanded: the search stays in the cluster. Costs are
//! metres times the area cost of the polygon walked through, so a way and its reverse
//! cost the same.
//!
//! Invariants: the heap orders by (key bits, edge number), so the same search settles the
//! same edges with the same parents on every run; a polygon the filter refuses is never
//! entered (the start polygon is not checked: the caller stands in it).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::Vec3;

use super::{ClusterGraph, OUTSIDE};
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

/// Where a confined search starts: one of the cluster's polygons (its number in the
/// cluster) and a point in it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Origin {
    pub(super) polygon: u32,
    pub(super) position: Vec3,
}

/// The reusable state of confined searches (one per thread).
#[derive(Clone, Debug, Default)]
pub(crate) struct LocalSearch {
    /// By cluster edge: least cost to its midpoint (infinite: not reached).
    pub(super) cost: Vec<f32>,
    /// By cluster edge: the edge the way came through before it (`NO_EDGE`: the start).
    parent: Vec<u32>,
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
    /// Searches `cluster` from `origin` toward `goal` (its polygon number and point) if
    /// given, until `stop`. A search that stops at one edge or at the goal is an A* aimed
    /// at it (straight distance, scaled as the point-to-point search's, never above the
    /// cost, so the cost found is still the least); one that runs to exhaustion is a
    /// Dijkstra.
    pub(super) fn run(
        &mut self,
        cluster: &ClusterGraph,
        filter: &QueryFilter,
        origin: Origin,
        goal: Option<(u32, Vec3)>,
        stop: Stop,
    ) {
        let edges = cluster.edges.len();
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
            Stop::AtEdge(edge) => Some(cluster.edges[edge as usize].midpoint),
            Stop::AtGoal => goal.map(|(_, position)| position),
        };
        if origin.polygon as usize >= cluster.polygons.len() {
            return;
        }
        self.expand(cluster, filter, origin, 0.0, NO_EDGE, goal);
        while let Some(Reverse((bits, edge))) = self.open.pop() {
            let index = edge as usize;
            let local = &cluster.edges[index];
            if self.settled[index]
                || f32::from_bits(bits) != self.key(self.cost[index], local.midpoint)
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
            if local.into == OUTSIDE {
                continue; // a port: the way leaves the cluster here
            }
            let origin = Origin {
                polygon: local.into,
                position: local.midpoint,
            };
            let cost = self.cost[index];
            self.expand(cluster, filter, origin, cost, edge, goal);
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

    /// Offers the edges out of `at.polygon`, entered at `at.position` at `cost` by `via`.
    fn expand(
        &mut self,
        cluster: &ClusterGraph,
        filter: &QueryFilter,
        at: Origin,
        cost: f32,
        via: u32,
        goal: Option<(u32, Vec3)>,
    ) {
        let polygon = at.polygon as usize;
        let per_metre = filter.cost(cluster.areas[polygon]);
        if let Some((goal_polygon, goal_position)) = goal
            && goal_polygon == at.polygon
        {
            let to_goal = cost + at.position.distance(goal_position) * per_metre;
            if to_goal < self.goal_cost {
                self.goal_cost = to_goal;
                self.goal_via = via;
            }
        }
        let (first, end) = (
            cluster.first_edge[polygon] as usize,
            cluster.first_edge[polygon + 1] as usize,
        );
        for (index, edge) in cluster.edges[first..end].iter().enumerate() {
            if !filter.passes_area_flags(edge.area, edge.flags) {
                continue;
            }
            let index = first + index;
            let reached = cost + at.position.distance(edge.midpoint) * per_metre;
            if reached < self.cost[index] {
                self.cost[index] = reached;
                self.parent[index] = via;
                let key = self.key(reached, edge.midpoint);
                self.open.push(Reverse((key.to_bits(), index as u32)));
            }
        }
    }

    /// Appends to `out` the cluster's numbers of the polygons of the way from `start`
    /// through edge `last` (`NO_EDGE`: the start alone), the start first. The polygon
    /// across `last` is included when it lies in the cluster (the goal's polygon, entered
    /// by `goal_via`), not when `last` is a port.
    pub(super) fn polygons_to(
        &self,
        cluster: &ClusterGraph,
        start: u32,
        last: u32,
        out: &mut Vec<u32>,
    ) {
        let mark = out.len();
        let mut edge = last;
        let mut guard = self.parent.len() + 1;
        while edge != NO_EDGE && guard > 0 {
            let into = cluster.edges[edge as usize].into;
            if into != OUTSIDE {
                out.push(into);
            }
            edge = self.parent[edge as usize];
            guard -= 1;
        }
        out.push(start);
        out[mark..].reverse();
    }
}
