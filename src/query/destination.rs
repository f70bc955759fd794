//! Shared destinations: one search from a goal that answers a path from every start.
//!
//! Stage: query runtime, beside the point-to-point search (`search/`). Input: a snapshot
//! (with its search graph), a goal polygon and point, a filter. Output: a
//! [`DestinationTree`]: for each polygon from which the goal can be reached under the
//! filter, the next polygon toward it and the cost of the way from there. A path from any
//! start is then a walk along the tree, with no search of its own.
//!
//! Why: agents ordered to one place (a rally point, an exit, a stadium's gates) would each
//! search much the same region. One Dijkstra from the goal over the reachable mesh costs
//! about as many expansions as the mesh has polygons (21,000 on the 100,000-agent city,
//! fewer than a hundred and fifty searches' worth) and answers every agent sent there.
//!
//! Costs are the point-to-point search's: a way runs from the start point through the
//! midpoints of the portals it crosses to the goal point, each metre times the area cost
//! of the polygon it crosses. The search keeps one node a polygon, placed where it was
//! entered, and so only approaches the least cost; the tree keeps one node a portal
//! crossing (the portal, and the polygon it is crossed into), whose cost is the least way
//! from the portal's midpoint to the goal, exactly. A start weighs each portal out of its
//! polygon from the start point. (A tree of one node a polygon, its exit fixed for the
//! polygon as a whole, chose corridors 5-10% longer than the search's for 1.5-3% of
//! starts on a street grid, where portals are wide and routes many.)
//!
//! Invariants: every walk along the tree reaches the goal (a node's next was settled
//! before it, and the walk is bounded by the node count); the tree records every tile it read, and a path taken from it
//! records the tiles on its route, so it is checked against mesh changes like any search's
//! result. Off-mesh links are not crossed, and a tile without a search graph (one with
//! more border edges than it numbers) is entered but not crossed: starts beyond them are
//! not in the tree, and their paths are searched as usual.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::Vec3;

use super::search::{PathResult, PathStep};
use super::{QueryError, QueryFilter, ReadSet, check_point};
use crate::mesh::{PolyRef, SearchTable, Snapshot};

/// No next crossing: the last portal before the goal, or a crossing not reached.
const NO_NEXT: u32 = u32::MAX;

/// The ways from every reachable polygon to one goal (see the module documentation).
#[derive(Clone, Debug)]
pub struct DestinationTree {
    goal: PolyRef,
    goal_position: Vec3,
    /// First crossing number of each slot's edges (a crossing is a polygon's edge, in its
    /// slot's search table order).
    slot_base: Vec<u32>,
    /// By crossing: the polygon crossed into (None: not reached), the least cost from the
    /// portal's midpoint to the goal, the next crossing (NO_NEXT: the goal's polygon is
    /// the one crossed into).
    into: Vec<Option<PolyRef>>,
    cost: Vec<f32>,
    next: Vec<u32>,
    filter: QueryFilter,
    settled: u32,
    read_set: ReadSet,
}

/// The search table of the live tile `polygon` lies in, at its generation.
fn table_of(snapshot: &Snapshot, polygon: PolyRef) -> Option<&SearchTable> {
    snapshot
        .search_table(polygon.slot())
        .filter(|table| table.generation() == polygon.generation())
}

impl DestinationTree {
    /// The tree of the ways to `goal_position` in polygon `goal` under `filter` over
    /// `snapshot`'s mesh, reaching every polygon the goal can be reached from.
    pub fn build(
        snapshot: &Snapshot,
        goal: PolyRef,
        goal_position: Vec3,
        filter: &QueryFilter,
    ) -> Result<DestinationTree, QueryError> {
        check_point("destination", goal_position)?;
        let goal_tile = snapshot.tile(goal).ok_or(QueryError::StaleRef(goal))?;
        let slots = snapshot.data().slots.len();
        let mut slot_base = Vec::with_capacity(slots + 1);
        let mut total = 0u32;
        for slot in 0..slots {
            slot_base.push(total);
            total += snapshot.data().search_tables[slot].edge_count() as u32;
        }
        slot_base.push(total);
        let total = total as usize;
        let mut tree = DestinationTree {
            goal,
            goal_position,
            slot_base,
            into: vec![None; total],
            cost: vec![f32::INFINITY; total],
            next: vec![NO_NEXT; total],
            filter: filter.clone(),
            settled: 0,
            read_set: ReadSet::new(filter),
        };
        let mut tiles_read = vec![false; slots];
        let mut read = |read_set: &mut ReadSet, slot: crate::mesh::TileSlot, generation| {
            let seen = &mut tiles_read[usize::from(slot.0)];
            if !*seen {
                *seen = true;
                read_set.read_new_tile(slot, generation);
            }
        };
        read(&mut tree.read_set, goal.slot(), goal.generation());
        // Costs are finite and never negative: their bits order as they do, and the
        // crossing number breaks ties the same way on every run.
        let mut open = BinaryHeap::new();
        let goal_record = &goal_tile.data.polygons[usize::from(goal.polygon())];
        let goal_cost = filter.cost(goal_record.area);
        // The crossings into the goal's polygon: from each of its neighbours, over the
        // portal between them. A goal the filter refuses is entered by no way (as the
        // search never enters it): only a start in it reaches it.
        if filter.passes(goal_record) {
            tree.offer_crossings_into(
                snapshot,
                goal,
                goal_position,
                goal_cost,
                0.0,
                NO_NEXT,
                &mut open,
                &mut read,
            );
        }
        let mut settled = vec![false; total];
        while let Some(Reverse((bits, crossing))) = open.pop() {
            let crossing = crossing as usize;
            if settled[crossing] || f32::from_bits(bits) != tree.cost[crossing] {
                continue; // reached again more cheaply since
            }
            settled[crossing] = true;
            tree.settled += 1;
            // The crossing leaves a polygon (`from`) at a portal midpoint: the ways into
            // `from` over its other portals come next.
            let (from, midpoint, area) = tree.crossing_source(snapshot, crossing);
            let cost = tree.cost[crossing];
            tree.offer_crossings_into(
                snapshot,
                from,
                midpoint,
                filter.cost(area),
                cost,
                crossing as u32,
                &mut open,
                &mut read,
            );
        }
        Ok(tree)
    }

    /// The polygon a crossing leaves, its portal's midpoint and the area of the polygon.
    fn crossing_source(&self, snapshot: &Snapshot, crossing: usize) -> (PolyRef, Vec3, u8) {
        let slot = self
            .slot_base
            .partition_point(|&base| base as usize <= crossing)
            - 1;
        let table = &snapshot.data().search_tables[slot];
        let (polygon, edge) = table.edge_at(crossing - self.slot_base[slot] as usize);
        let from = snapshot
            .poly_ref(crate::mesh::TileSlot(slot as u16), polygon)
            .expect("a crossing's tile is live in the tree's snapshot");
        let tile = snapshot.tile(from).expect("live");
        (
            from,
            edge.midpoint,
            tile.data.polygons[usize::from(polygon)].area,
        )
    }

    /// Offers, for each neighbour of `polygon` (whose area costs `area_cost` a metre), the
    /// crossing from it into `polygon`, whose way then runs through `polygon` to `exit` and
    /// on at `exit_cost` (by `next`).
    #[allow(clippy::too_many_arguments)]
    fn offer_crossings_into(
        &mut self,
        snapshot: &Snapshot,
        polygon: PolyRef,
        exit: Vec3,
        area_cost: f32,
        exit_cost: f32,
        next: u32,
        open: &mut BinaryHeap<Reverse<(u32, u32)>>,
        read: &mut impl FnMut(&mut ReadSet, crate::mesh::TileSlot, crate::mesh::TileGeneration),
    ) {
        let Some(table) = table_of(snapshot, polygon) else {
            return;
        };
        for edge in table.edges(polygon.polygon()) {
            let Some(neighbour) = edge.neighbour else {
                if let Some((slot, generation)) = table.facing(edge.read_side) {
                    read(&mut self.read_set, slot, generation);
                }
                continue;
            };
            // An agent in the neighbour walks through it: it must be allowed in.
            if !self.filter.passes_area_flags(edge.area, edge.flags) {
                continue;
            }
            // The neighbour's own edge back into `polygon`: the crossing.
            let Some((crossing, midpoint)) = self.crossing(snapshot, neighbour, polygon) else {
                continue;
            };
            let cost = exit_cost + midpoint.distance(exit) * area_cost;
            if cost < self.cost[crossing] {
                self.cost[crossing] = cost;
                self.into[crossing] = Some(polygon);
                self.next[crossing] = next;
                open.push(Reverse((cost.to_bits(), crossing as u32)));
            }
        }
    }

    /// The crossing from `from` into `into` (the first of `from`'s edges that leads
    /// there) and its portal's midpoint.
    fn crossing(&self, snapshot: &Snapshot, from: PolyRef, into: PolyRef) -> Option<(usize, Vec3)> {
        let table = table_of(snapshot, from)?;
        let first = table.first_edge(from.polygon());
        let base = self.slot_base[usize::from(from.slot().0)] as usize + first;
        table
            .edges(from.polygon())
            .iter()
            .position(|edge| edge.neighbour == Some(into))
            .map(|index| (base + index, table.edges(from.polygon())[index].midpoint))
    }

    /// The goal polygon.
    pub fn goal(&self) -> PolyRef {
        self.goal
    }

    /// The goal point.
    pub fn goal_position(&self) -> Vec3 {
        self.goal_position
    }

    /// Portal crossings settled: the expansions the tree cost.
    pub fn settled(&self) -> u32 {
        self.settled
    }

    /// What building the tree read: every tile it crossed into, under its filter's
    /// versions. Any change to them may have opened a shorter way, or closed one.
    pub fn read_set(&self) -> &ReadSet {
        &self.read_set
    }

    /// The best first crossing from `start_position` in polygon `start` (None when
    /// `start` holds the goal) and the cost of the whole way; `None` if the tree does not
    /// reach `start`.
    fn first_crossing(
        &self,
        snapshot: &Snapshot,
        start: PolyRef,
        start_position: Vec3,
    ) -> Option<(Option<usize>, f32)> {
        let table = table_of(snapshot, start)?;
        let tile = snapshot.tile(start)?;
        let own_cost = self
            .filter
            .cost(tile.data.polygons[usize::from(start.polygon())].area);
        if start == self.goal {
            return Some((None, start_position.distance(self.goal_position) * own_cost));
        }
        let base = self.slot_base[usize::from(start.slot().0)] as usize
            + table.first_edge(start.polygon());
        let mut best: Option<(Option<usize>, f32)> = None;
        for (index, edge) in table.edges(start.polygon()).iter().enumerate() {
            let crossing = base + index;
            if edge.neighbour.is_none() || self.into.get(crossing).copied().flatten().is_none() {
                continue;
            }
            let cost = start_position.distance(edge.midpoint) * own_cost + self.cost[crossing];
            if best.is_none_or(|(_, least)| cost < least) {
                best = Some((Some(crossing), cost));
            }
        }
        best
    }

    /// The cost of the way from `start_position` in polygon `start` to the goal, by the
    /// search's cost model; `None` if the tree does not reach `start`.
    pub fn cost_from(
        &self,
        snapshot: &Snapshot,
        start: PolyRef,
        start_position: Vec3,
    ) -> Option<f32> {
        self.first_crossing(snapshot, start, start_position)
            .map(|(_, cost)| cost)
    }

    /// The path from `start_position` in polygon `start` to the goal along the tree, as a
    /// complete search result whose read set holds the tiles on its route (each on the
    /// route); `None` if the tree does not reach `start`. No expansions: `nodes_expanded`
    /// is 0.
    pub fn path_from(
        &self,
        snapshot: &Snapshot,
        start: PolyRef,
        start_position: Vec3,
    ) -> Option<PathResult> {
        let (mut crossing, _) = self.first_crossing(snapshot, start, start_position)?;
        let mut steps = vec![PathStep {
            polygon: start,
            via_link: None,
        }];
        let mut read_set = ReadSet::new(&self.filter);
        read_set.read_new_tile(start.slot(), start.generation());
        let mut last_slot = start.slot();
        while let Some(at) = crossing {
            let polygon = self.into[at]?;
            steps.push(PathStep {
                polygon,
                via_link: None,
            });
            // A route crosses a few tiles, each in one run of steps: the set is scanned
            // only where the tile changes.
            if polygon.slot() != last_slot {
                last_slot = polygon.slot();
                read_set.read_tile(polygon.slot(), polygon.generation());
            }
            if steps.len() > self.into.len() + 1 {
                return None;
            }
            crossing = (self.next[at] != NO_NEXT).then_some(self.next[at] as usize);
        }
        if steps.last().map(|step| step.polygon) != Some(self.goal) {
            return None;
        }
        for read in &mut read_set.tiles {
            read.on_route = true;
        }
        Some(PathResult {
            steps,
            complete: true,
            out_of_nodes: false,
            nodes_expanded: 0,
            read_set,
        })
    }
}
