//! Sliced A* over polygons, with a reusable, bounded node pool.
//!
//! A search is created with its start and end, then advanced with
//! [`PathSearch::step`]`(node_budget)` as many times as a frame budget allows; any budget
//! (1, 7, 64, ...) gives the same path as one unbounded step, because the search state lives
//! entirely in the search and the open list breaks ties on stable keys.
//!
//! Nodes sit at portal midpoints (the start and end at their points), costs are distances
//! times the area cost of the polygon crossed (and times that polygon's own factor when the
//! caller gives factors per polygon, [`PathSearch::set_polygon_costs`]: a crowd's
//! congestion), and the heuristic is the straight distance to the end (scaled by 0.999 so
//! equal-cost alternatives resolve the same way every time). When
//! the end cannot be reached, or the node pool runs out, the result is partial: the path to
//! the node nearest the end, flagged. An end in another component of the mesh is known out
//! of reach before the search starts; the search then heads for the reachable polygon
//! nearest the end (`unreachable.rs`) instead of expanding all it can reach.

use std::borrow::Borrow;
use std::sync::Arc;

use glam::Vec3;

use super::node_pool::{HEURISTIC_SCALE, NO_LINK, NO_NODE, Node, NodePool, OpenEntry};
use super::portals::border_crossing;
use super::{QueryError, QueryFilter, ReadSet, check_point};
use crate::mesh::{Adjacent, EndBounds, Landmarks, LinkId, PolyRef, Snapshot};

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

impl PathResult {
    /// A result that stops short of any goal (a head start, a reconnection): `steps` from
    /// the start, `read_set` with each tile marked whether the steps cross it.
    pub(crate) fn partial(
        steps: Vec<PathStep>,
        mut read_set: ReadSet,
        nodes_expanded: u32,
    ) -> PathResult {
        for read in &mut read_set.tiles {
            read.on_route = steps.iter().any(|step| step.polygon.slot() == read.slot);
        }
        PathResult {
            nodes_expanded,
            steps,
            complete: false,
            out_of_nodes: false,
            read_set,
        }
    }
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

/// A neighbour offered to the open list.
struct Candidate {
    /// The polygon.
    polygon: PolyRef,
    /// Its dense number in the snapshot.
    key: u32,
    /// Its area id.
    area: u8,
    /// Its flags.
    flags: u16,
    /// Where the path enters it (portal midpoint or link end).
    position: Vec3,
    /// Path cost up to `position`.
    cost: f32,
    /// The link crossed to reach it, if any.
    via: Option<LinkId>,
    /// The number of the edge crossed in the snapshot's landmarks, or [`NO_LANDMARK_EDGE`].
    landmark_edge: u32,
}

/// A candidate's `landmark_edge` where the landmarks give no bound (no landmarks, a link,
/// a walk over a tile's own arrays).
const NO_LANDMARK_EDGE: u32 = u32::MAX;

/// A resumable A* search on one snapshot.
pub struct PathSearch {
    snapshot: Snapshot,
    state: SearchState<QueryFilter>,
}

/// Everything a search changes as it runs (kept apart from the snapshot, which it only
/// reads, so expansion borrows the two separately).
struct SearchState<F> {
    filter: F,
    /// Cost factors by polygon key (see [`PathSearch::set_polygon_costs`]).
    polygon_costs: Option<Arc<[f32]>>,
    heuristic_scale: f32,
    /// Reused buffer for the portals across one tile border.
    portal_scratch: Vec<(PolyRef, Vec3, Vec3)>,
    /// Where the finished path's steps go (a caller's recycled buffer, or empty).
    steps: Vec<PathStep>,
    /// Where the search heads: the end, or for an end out of reach the reachable polygon
    /// nearest it (`end_out_of_reach`).
    end: PolyRef,
    end_position: Vec3,
    end_out_of_reach: bool,
    /// The landmarks' bounds towards the end polygon, when the snapshot has landmarks.
    end_bounds: Option<EndBounds>,
    pool: NodePool,
    best: u32,
    /// The squared straight distance from `best`'s position to the end (0 at the end).
    best_distance_squared: f32,
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

    /// Multiplies the cost of each metre through polygon `k` (its dense key,
    /// [`Snapshot::polygon_key`]) by `factors[k]` on top of its area cost, 1 past the
    /// slice's end. Factors must be at least 1 (smaller ones are taken as 1), so the
    /// heuristic still never overestimates. Set before the first step: a crowd routing
    /// around congestion gives each polygon 1 plus its crowding.
    pub fn set_polygon_costs(&mut self, factors: Arc<[f32]>) {
        self.state.polygon_costs = Some(factors);
    }

    /// Expands at most `node_budget` nodes.
    pub fn step(&mut self, node_budget: u32) -> Progress {
        self.state.run(&self.snapshot, node_budget)
    }

    /// Nodes expanded over all steps so far. A search started again from the same request
    /// on the same snapshot and stepped this many nodes at once is in the same state: how
    /// the expansions were cut into steps never changes what they do (a saved crowd
    /// restores its open searches this way).
    pub fn nodes_expanded(&self) -> u32 {
        self.state.expanded
    }

    /// What the search has read so far (tiles, links, the filter's versions).
    pub fn read_set(&self) -> &ReadSet {
        &self.state.read_set
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
        for reference in [start, end] {
            if pool.first_read(reference.slot()) {
                read_set.read_new_tile(reference.slot(), reference.generation());
            }
        }
        let substitute =
            unreachable::substitute_end(snapshot, start, end, end_position, filter.borrow());
        let end_out_of_reach = substitute.is_some();
        let (end, end_position) = match substitute {
            Some((polygon, point, depends_on)) => {
                for &slot in depends_on {
                    if let Some((_, generation)) = snapshot.live_slot(slot)
                        && pool.first_read(slot)
                    {
                        read_set.read_new_tile(slot, generation);
                    }
                }
                (polygon, point)
            }
            None => (end, end_position),
        };
        let end_bounds = snapshot
            .landmarks()
            .and_then(|landmarks| landmarks.end_bounds(snapshot, end, end_position));
        let heuristic = start_position.distance(end_position) * heuristic_scale;
        let start_area = snapshot.tile(start).map_or(0, |tile| {
            tile.data.polygons[usize::from(start.polygon())].area
        });
        let node = Node {
            polygon: start,
            parent: NO_NODE,
            position: start_position,
            cost: 0.0,
            total: heuristic,
            closed: false,
            area: start_area,
            via_link: NO_LINK,
        };
        let first = pool
            .insert(node, snapshot.polygon_key(start))
            .expect("a live start polygon fits an empty pool");
        pool.open.push(OpenEntry::new(heuristic, first));
        Ok(SearchState {
            filter,
            polygon_costs: None,
            heuristic_scale,
            portal_scratch: Vec::new(),
            steps: recycled.steps,
            end,
            end_position,
            end_out_of_reach,
            end_bounds,
            pool,
            best: first,
            best_distance_squared: start_position.distance_squared(end_position),
            finished: false,
            complete: false,
            out_of_nodes: false,
            expanded: 0,
            read_set,
        })
    }

    /// Expands at most `node_budget` nodes. Kept out of its callers: inlined into a whole
    /// route (snaps, search, straight path) its loop ran short of registers and kept
    /// reloading the search's fields from the stack (7% of a dungeon query's time).
    #[inline(never)]
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
                self.complete = !self.end_out_of_reach;
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
        let mut steps = std::mem::take(&mut self.steps);
        steps.clear();
        let mut cursor = self.best;
        let mut last_slot = None;
        while cursor != NO_NODE && steps.len() < limit {
            if steps.len() == steps.capacity() {
                // Out of room (a new buffer, or a recycled one too short): room for exactly
                // the rest, so a corridor keeping these steps holds no spare capacity.
                let mut rest = 0;
                let mut ahead = cursor;
                while ahead != NO_NODE && steps.len() + rest < limit {
                    rest += 1;
                    ahead = self.pool.nodes[ahead as usize].parent;
                }
                steps.reserve_exact(rest);
            }
            let node = self.pool.nodes[cursor as usize];
            steps.push(PathStep {
                polygon: node.polygon,
                via_link: (node.via_link != NO_LINK).then_some(LinkId(node.via_link)),
            });
            // Every tile on the route was read; mark each once per run of steps in it.
            let slot = node.polygon.slot();
            if last_slot != Some(slot) {
                self.pool.mark_on_route(slot);
                last_slot = Some(slot);
            }
            cursor = node.parent;
        }
        steps.reverse();
        for read in &mut self.read_set.tiles {
            read.on_route = self.pool.is_on_route(read.slot);
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

    /// Offers the neighbours of `node` (at `index` in the pool) from the snapshot's search
    /// graph of its tile, or from the tile's own arrays where the snapshot has none.
    fn expand(&mut self, snapshot: &Snapshot, index: u32, node: Node) {
        let slot = node.polygon.slot();
        let Some(table) = snapshot
            .search_table(slot)
            .filter(|table| table.generation() == node.polygon.generation())
        else {
            self.expand_by_adjacency(snapshot, index, node);
            return;
        };
        let key = snapshot.polygon_key(node.polygon);
        let area_cost = self.filter.borrow().cost(node.area) * self.polygon_factor(key);
        // Dense number of this tile's polygon 0: same-tile neighbours need no lookup.
        let tile_base = key.wrapping_sub(u32::from(node.polygon.polygon()));
        let parent_polygon = self
            .pool
            .nodes
            .get(node.parent as usize)
            .map(|parent| parent.polygon);
        // The landmarks, and the number of this polygon's first edge in their table.
        let landmarks = self.end_bounds.and(snapshot.landmarks());
        let first_edge = landmarks
            .and_then(|landmarks| {
                landmarks.edge_number(node.polygon, table.first_edge(node.polygon.polygon()))
            })
            .unwrap_or(NO_LANDMARK_EDGE);
        for (offset, edge) in table.edges(node.polygon.polygon()).iter().enumerate() {
            let Some(neighbour) = edge.neighbour else {
                if let Some((facing, generation)) = table.facing(edge.read_side) {
                    self.read_tile(facing, generation);
                }
                continue;
            };
            if Some(neighbour) == parent_polygon {
                continue;
            }
            let cost = node.cost + node.position.distance(edge.midpoint) * area_cost;
            self.relax(
                landmarks,
                index,
                Candidate {
                    polygon: neighbour,
                    key: if neighbour.slot() == slot {
                        tile_base.wrapping_add(u32::from(neighbour.polygon()))
                    } else {
                        snapshot.polygon_key(neighbour)
                    },
                    area: edge.area,
                    flags: edge.flags,
                    position: edge.midpoint,
                    cost,
                    via: None,
                    landmark_edge: if first_edge == NO_LANDMARK_EDGE {
                        NO_LANDMARK_EDGE
                    } else {
                        first_edge + offset as u32
                    },
                },
            );
        }
        self.expand_links(snapshot, index, node, area_cost);
    }

    /// [`Self::expand`] from the tile's adjacency and border arrays: the same neighbours
    /// in the same order, for a tile the snapshot keeps no search graph of.
    fn expand_by_adjacency(&mut self, snapshot: &Snapshot, index: u32, node: Node) {
        let Some(tile) = snapshot.tile(node.polygon) else {
            return;
        };
        let polygon = &tile.data.polygons[usize::from(node.polygon.polygon())];
        // Dense number of this tile's polygon 0: same-tile neighbours need no lookup.
        let tile_base = snapshot
            .polygon_key(node.polygon)
            .wrapping_sub(u32::from(node.polygon.polygon()));
        let area_cost = self.filter.borrow().cost(polygon.area)
            * self.polygon_factor(tile_base.wrapping_add(u32::from(node.polygon.polygon())));
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
                    None,
                    index,
                    Candidate {
                        polygon: reference,
                        key: tile_base.wrapping_add(u32::from(adjacent.neighbour)),
                        area: area.area,
                        flags: area.flags,
                        position,
                        cost,
                        via: None,
                        landmark_edge: NO_LANDMARK_EDGE,
                    },
                );
            } else {
                let corners = &tile.corners[usize::from(node.polygon.polygon())];
                let edge = usize::from(adjacent.edge);
                let (a, b) = (
                    corners[edge],
                    corners[if edge + 1 == count { 0 } else { edge + 1 }],
                );
                let mut scratch = std::mem::take(&mut self.portal_scratch);
                let (facing, portals) =
                    border_crossing(snapshot, node.polygon, adjacent, (a, b), &mut scratch);
                if let Some((slot, generation)) = facing {
                    self.read_tile(slot, generation);
                }
                for &(reference, left, right) in portals {
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
                        None,
                        index,
                        Candidate {
                            polygon: reference,
                            key: snapshot.polygon_key(reference),
                            area: area.area,
                            flags: area.flags,
                            position,
                            cost,
                            via: None,
                            landmark_edge: NO_LANDMARK_EDGE,
                        },
                    );
                }
                self.portal_scratch = scratch;
            }
        }
        self.expand_links(snapshot, index, node, area_cost);
    }

    /// Offers the polygons across the open off-mesh links that leave `node`'s polygon.
    #[inline]
    fn expand_links(&mut self, snapshot: &Snapshot, index: u32, node: Node, area_cost: f32) {
        // Most meshes have no links: no lookup (nor call) per expansion then.
        if !snapshot.data().links_from.is_empty() && self.filter.borrow().links_allowed() {
            self.expand_links_from(snapshot, index, node, area_cost);
        }
    }

    /// [`Self::expand_links`] on a mesh with links.
    #[inline(never)]
    fn expand_links_from(&mut self, snapshot: &Snapshot, index: u32, node: Node, area_cost: f32) {
        {
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
                    self.read_tile(target.slot(), target.generation());
                    let area = &other.data.polygons[usize::from(target.polygon())];
                    let cost =
                        node.cost + node.position.distance(from) * area_cost + from.distance(to);
                    self.relax(
                        None,
                        index,
                        Candidate {
                            polygon: target,
                            key: snapshot.polygon_key(target),
                            area: area.area,
                            flags: area.flags,
                            position: to,
                            cost,
                            via: Some(id),
                            landmark_edge: NO_LANDMARK_EDGE,
                        },
                    );
                }
            }
        }
    }

    /// Records that the search read the tile in `slot` (at `generation`), once.
    #[inline]
    fn read_tile(&mut self, slot: crate::mesh::TileSlot, generation: crate::mesh::TileGeneration) {
        if self.pool.first_read(slot) {
            self.read_set.read_new_tile(slot, generation);
        }
    }

    /// The caller's cost factor for the polygon of dense key `key` (1 without factors).
    #[inline]
    fn polygon_factor(&self, key: u32) -> f32 {
        self.polygon_costs
            .as_ref()
            .and_then(|factors| factors.get(key as usize))
            .map_or(1.0, |&factor| factor.max(1.0))
    }

    /// Offers `neighbour` (the polygon `entered`, reached at `position` with path cost `cost`).
    #[inline(always)]
    fn relax(&mut self, landmarks: Option<&Landmarks>, parent: u32, candidate: Candidate) {
        let Candidate {
            polygon: neighbour,
            key,
            area,
            flags,
            position,
            mut cost,
            via,
            landmark_edge,
        } = candidate;
        if !self.filter.borrow().passes_area_flags(area, flags) {
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
        // `straight`: the straight line to the end, which also picks the node nearest the
        // end for a partial path; `heuristic`: the tighter of it and the landmarks' bound.
        let (straight_squared, heuristic) = if neighbour == self.end {
            cost += position.distance(self.end_position)
                * self.filter.borrow().cost(area)
                * self.polygon_factor(key);
            (0.0, 0.0)
        } else {
            let straight_squared = position.distance_squared(self.end_position);
            // Worked out only here, past the rejection of a candidate that cannot improve.
            let landmark_bound_m = match (landmarks, &self.end_bounds) {
                (Some(landmarks), Some(bounds)) if landmark_edge != NO_LANDMARK_EDGE => {
                    landmarks.cost_bound(landmark_edge, bounds)
                }
                _ => 0.0,
            };
            // The straight line's square root only where the landmarks do not beat it.
            let bound = if landmark_bound_m * landmark_bound_m >= straight_squared {
                landmark_bound_m
            } else {
                straight_squared.sqrt()
            };
            (straight_squared, bound * self.heuristic_scale)
        };
        let total = cost + heuristic;
        let node = Node {
            polygon: neighbour,
            parent,
            position,
            cost,
            total,
            closed: false,
            area,
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
        if straight_squared < self.best_distance_squared
            || (straight_squared == self.best_distance_squared
                && cost < self.pool.nodes[self.best as usize].cost)
        {
            self.best_distance_squared = straight_squared;
            self.best = index;
        }
        self.pool.open.push(OpenEntry::new(total, index));
    }
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

mod one_shot;
#[cfg(all(test, feature = "harness"))]
mod tests;
mod unreachable;

pub use one_shot::{find_path, find_path_with};
