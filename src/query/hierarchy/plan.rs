//! Planning over the hierarchy: a route of cluster legs found over the ports, and its
//! refinement into polygons, leg by leg.
//!
//! A search over ports is A* whose nodes are the ports a route enters clusters by; from
//! a port it goes, at the cluster's precomputed cost, to each port it can leave by, and
//! across it to the twin in the next cluster. The start's own cluster is searched from
//! the start point (its ports then enter the queue with their costs) and the goal's
//! cluster from the goal point (every port of it gets its cost to the goal), so neither
//! end needs a port.
//! Refinement runs the confined search of one leg again and keeps its parents: the leg's
//! polygons are exactly those its cost was found along.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::sync::Arc;

use glam::Vec3;

use super::local::{LocalSearch, Origin, Stop};
use super::{ClusterGraph, Hierarchy, NONE};
use crate::mesh::{PolyRef, Snapshot};
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
    /// By port number over all clusters: its state in the current search.
    ports: Vec<PortState>,
    current: u32,
    /// By port of the goal's cluster: its cost to the goal.
    goal_costs: Vec<f32>,
    /// By cluster: the search that last recorded reading its tiles.
    read_stamp: Vec<u32>,
    /// By slot: the search whose corridor last crossed it.
    route_stamp: Vec<u32>,
    /// The polygons of one refined leg, by their numbers in its cluster.
    polygons: Vec<u32>,
    /// Ordered by total (cost plus heuristic), then by port number.
    open: BinaryHeap<Reverse<(u32, u32)>>,
    pool: NodePool,
}

impl Default for HierarchyScratch {
    fn default() -> Self {
        HierarchyScratch {
            local: LocalSearch::default(),
            ports: Vec::new(),
            current: 0,
            goal_costs: Vec::new(),
            read_stamp: Vec::new(),
            route_stamp: Vec::new(),
            polygons: Vec::new(),
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

    fn begin(&mut self, ports: usize, clusters: usize) {
        if self.ports.len() < ports {
            self.ports.resize(ports, PortState::default());
        }
        if self.read_stamp.len() < clusters {
            self.read_stamp.resize(clusters, 0);
        }
        self.current = self.current.wrapping_add(1);
        if self.current == 0 {
            self.ports.fill(PortState::default());
            self.route_stamp.fill(0);
            self.read_stamp.fill(0);
            self.current = 1;
        }
        self.open.clear();
    }

    /// Records reading every tile of `cluster` (its costs depend on all of them).
    fn read(&mut self, read_set: &mut ReadSet, hierarchy: &Hierarchy, cluster: u32) {
        let stamp = &mut self.read_stamp[cluster as usize];
        if *stamp != self.current {
            *stamp = self.current;
            let graph = &hierarchy.clusters[cluster as usize];
            for (slot, table) in graph.slots.iter().zip(&graph.tables) {
                read_set.read_new_tile(*slot, table.generation());
            }
        }
    }

    fn cost_of(&self, node: u32) -> f32 {
        let state = &self.ports[node as usize];
        if state.stamp == self.current {
            state.cost
        } else {
            f32::INFINITY
        }
    }
}

/// One port's state in a search over ports: its cost, the port the way entered the
/// previous cluster by (its parent) and the one it left it by, and stamps telling whether
/// the three are the current search's and whether it has closed the port.
#[derive(Clone, Copy, Debug)]
struct PortState {
    cost: f32,
    parent: u32,
    exit: u32,
    stamp: u32,
    closed: u32,
}

impl Default for PortState {
    fn default() -> Self {
        PortState {
            cost: f32::INFINITY,
            parent: FROM_START,
            exit: FROM_START,
            stamp: 0,
            closed: 0,
        }
    }
}

/// One cluster of a route: where it is entered (None: at the start point) and left
/// (None: at the goal point), as the cluster's ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteLeg {
    cluster: u32,
    entry: Option<u32>,
    exit: Option<u32>,
}

/// A route over clusters from a start to a goal: the legs, in order, each to be refined
/// into polygons when needed (see [`HierarchicalRoute::refine`]).
#[derive(Clone, Debug)]
pub struct HierarchicalRoute {
    /// The start's and the end's numbers in their clusters.
    start: u32,
    start_position: Vec3,
    end: u32,
    end_position: Vec3,
    legs: Vec<RouteLeg>,
    /// By leg: the graph of its cluster as the route was planned over it (so a route
    /// refines the same way whatever the hierarchy has been brought up to since).
    graphs: Vec<Arc<ClusterGraph>>,
    cost: f32,
    expanded: u32,
    read_set: ReadSet,
}

impl HierarchicalRoute {
    /// The legs, start first.
    pub fn legs(&self) -> &[RouteLeg] {
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

    /// What finding it read: every tile of the clusters whose costs it weighed, each
    /// marked whether its cluster is on the route.
    pub fn read_set(&self) -> &ReadSet {
        &self.read_set
    }

    /// The polygons of legs `legs`, in order (each leg's first polygon is the one its
    /// entry port leads into, so consecutive ranges join without repeating a polygon).
    /// Legs are refined over the clusters as the route was planned: the polygons are
    /// those of its snapshot, and its read set tells whether they still hold.
    pub fn refine(
        &self,
        hierarchy: &Hierarchy,
        legs: Range<usize>,
        scratch: &mut HierarchyScratch,
    ) -> Vec<PathStep> {
        let mut steps = Vec::new();
        for index in legs {
            let (Some(leg), Some(cluster)) = (self.legs.get(index), self.graphs.get(index)) else {
                break;
            };
            let origin = match leg.entry {
                Some(port) => cluster.port_origin(port as usize),
                None => Origin {
                    polygon: self.start,
                    position: self.start_position,
                },
            };
            let (goal, stop) = match leg.exit {
                Some(port) => (None, Stop::AtEdge(cluster.ports[port as usize])),
                None => (Some((self.end, self.end_position)), Stop::AtGoal),
            };
            scratch
                .local
                .run(cluster, &hierarchy.filter, origin, goal, stop);
            let through = leg
                .exit
                .map_or(scratch.local.goal_via, |port| cluster.ports[port as usize]);
            scratch.polygons.clear();
            scratch
                .local
                .polygons_to(cluster, origin.polygon, through, &mut scratch.polygons);
            steps.extend(scratch.polygons.iter().map(|&number| PathStep {
                polygon: cluster.polygons[number as usize],
                via_link: None,
            }));
        }
        steps
    }
}

impl Hierarchy {
    /// The least route over clusters from `start_position` in `start` to `end_position`
    /// in `end`; `Ok(None)` when the ports do not join them (the end cannot be reached,
    /// or either end lies in a tile without a search table) or `end` is outside the
    /// filter.
    pub fn plan(
        &self,
        snapshot: &Snapshot,
        start: PolyRef,
        start_position: Vec3,
        end: PolyRef,
        end_position: Vec3,
        scratch: &mut HierarchyScratch,
    ) -> Result<Option<HierarchicalRoute>, QueryError> {
        check_point("path start", start_position)?;
        check_point("path end", end_position)?;
        let end_tile = snapshot.tile(end).ok_or(QueryError::StaleRef(end))?;
        snapshot.tile(start).ok_or(QueryError::StaleRef(start))?;
        if !self.is_current_for(snapshot) {
            return Err(QueryError::HierarchyOutOfDate);
        }
        let filter = &self.filter;
        if !filter.passes(&end_tile.data.polygons[usize::from(end.polygon())]) {
            return Ok(None);
        }
        let (Some((start_cluster, start_number)), Some((end_cluster, end_number))) =
            (self.locate(start), self.locate(end))
        else {
            return Ok(None); // a tile without a search table
        };
        scratch.begin(self.port_count(), self.clusters.len());
        let mut read_set = ReadSet::new(filter);
        scratch.read(&mut read_set, self, start_cluster);
        scratch.read(&mut read_set, self, end_cluster);

        // Every port of the goal's cluster: its cost to the goal (a way and its reverse
        // cost the same).
        let end_graph = &self.clusters[end_cluster as usize];
        let end_origin = Origin {
            polygon: end_number,
            position: end_position,
        };
        scratch
            .local
            .run(end_graph, filter, end_origin, None, Stop::Exhausted);
        scratch.goal_costs.clear();
        scratch.goal_costs.extend(
            end_graph
                .ports
                .iter()
                .map(|&edge| scratch.local.cost[edge as usize]),
        );

        // The start's cluster, from the start point: its ports, and the goal if it is
        // there.
        let same_cluster = start_cluster == end_cluster;
        let start_graph = &self.clusters[start_cluster as usize];
        let start_origin = Origin {
            polygon: start_number,
            position: start_position,
        };
        scratch.local.run(
            start_graph,
            filter,
            start_origin,
            same_cluster.then_some((end_number, end_position)),
            Stop::Exhausted,
        );
        // The best way to the goal so far: its cost and the port it enters the goal's
        // cluster by (FROM_START: straight through the start's cluster).
        let mut best = (f32::INFINITY, FROM_START);
        if same_cluster {
            best.0 = scratch.local.goal_cost;
        }
        let first_port = self.port_base[start_cluster as usize];
        for (port, &edge) in start_graph.ports.iter().enumerate() {
            let cost = scratch.local.cost[edge as usize];
            if cost.is_finite() {
                self.offer(
                    scratch,
                    first_port + port as u32,
                    cost,
                    FROM_START,
                    end_position,
                );
            }
        }

        let mut expanded = 0;
        while let Some(Reverse((bits, node))) = scratch.open.pop() {
            let at = node as usize;
            let state = &mut scratch.ports[at];
            if state.closed == scratch.current || state.stamp != scratch.current {
                continue;
            }
            if f32::from_bits(bits) >= best.0 {
                break; // no way left in the queue can beat the best to the goal
            }
            let cost = state.cost;
            state.closed = scratch.current;
            expanded += 1;
            let cluster = self.port_cluster[at];
            scratch.read(&mut read_set, self, cluster);
            let first = self.port_base[cluster as usize];
            let port = (node - first) as usize;
            if cluster == end_cluster {
                let to_goal = cost + scratch.goal_costs[port];
                if to_goal < best.0 {
                    best = (to_goal, node);
                }
            }
            let graph = &self.clusters[cluster as usize];
            let count = graph.ports.len();
            let row = &graph.costs[port * count..(port + 1) * count];
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
        let port_of =
            |node: u32| -> u32 { node - self.port_base[self.port_cluster[node as usize] as usize] };
        let mut legs = Vec::new();
        let mut entering = best.1;
        let mut exit = None;
        let mut cluster = end_cluster;
        loop {
            if entering == FROM_START {
                legs.push(RouteLeg {
                    cluster: start_cluster,
                    entry: None,
                    exit,
                });
                break;
            }
            legs.push(RouteLeg {
                cluster,
                entry: Some(port_of(entering)),
                exit,
            });
            let left_by = scratch.ports[entering as usize].exit;
            exit = Some(port_of(left_by));
            cluster = self.port_cluster[left_by as usize];
            entering = scratch.ports[entering as usize].parent;
            if legs.len() > self.port_count() + 1 {
                return Ok(None); // a broken chain; never for a settled route
            }
        }
        legs.reverse();
        for read in &mut read_set.tiles {
            let of_read = self.cluster_of_slot[usize::from(read.slot.0)];
            read.on_route = legs.iter().any(|leg| leg.cluster == of_read);
        }
        let graphs = legs
            .iter()
            .map(|leg| self.clusters[leg.cluster as usize].clone())
            .collect();
        Ok(Some(HierarchicalRoute {
            start: start_number,
            start_position,
            end: end_number,
            end_position,
            legs,
            graphs,
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
        if node == NONE {
            return;
        }
        let at = node as usize;
        if scratch.ports[at].closed == scratch.current || cost >= scratch.cost_of(node) {
            return;
        }
        scratch.ports[at] = PortState {
            cost,
            parent,
            exit,
            stamp: scratch.current,
            closed: 0,
        };
        // The exit's own midpoint: its twin's, the same portal's, read in the order the
        // exits are offered.
        let total = cost + self.port_position[exit as usize].distance(goal) * HEURISTIC_SCALE;
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
            let steps = route.refine(self, 0..route.legs.len(), scratch);
            if steps.last().map(|step| step.polygon) == Some(end) {
                // On the route, as for the flat search: the tiles the corridor crosses.
                let slots = snapshot.data().slots.len();
                if scratch.route_stamp.len() < slots {
                    scratch.route_stamp.resize(slots, 0);
                }
                for step in &steps {
                    scratch.route_stamp[usize::from(step.polygon.slot().0)] = scratch.current;
                }
                let mut read_set = route.read_set;
                for read in &mut read_set.tiles {
                    read.on_route =
                        scratch.route_stamp[usize::from(read.slot.0)] == scratch.current;
                }
                return Ok(PathResult {
                    steps,
                    complete: true,
                    out_of_nodes: false,
                    nodes_expanded: route.expanded,
                    read_set,
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
