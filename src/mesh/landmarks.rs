//! Landmark distances over a snapshot's search graph: a lower bound on what a path search
//! still has to pay, far tighter than the straight line on levels of rooms and corridors.
//!
//! Stage: runtime mesh, worked out once per snapshot the first time a search asks
//! ([`Snapshot::landmarks`]), like its components. Input: the snapshot's search tables.
//! Output: [`Landmarks`]: for every search edge (a portal midpoint where a path search
//! places a node), its distance to [`LANDMARKS`] landmark edges of its component.
//!
//! Why: a search places its nodes at portal midpoints and pays the distance from one to
//! the next, so the cost still to pay from a node is at least the shortest chain of
//! midpoints to the end polygon (area costs and a crowd's factors are at least 1; a
//! filter only removes edges). On a level of rooms joined by corridors the straight line
//! to the end runs through walls and the search expands about twice the polygons its path
//! crosses. By the triangle inequality, for any landmark `l`, the chain from `a` to `b`
//! is at least `|d(l, a) - d(l, b)|` ("differential heuristic", Goldberg and Harrelson's
//! ALT, 2005; Sturtevant et al., 2009): with landmarks at the far ends of each component
//! that bound follows the corridors, and the search expands little beyond its path.
//!
//! The graph: a vertex per search edge that enters a polygon (read markers are not
//! vertices); two vertices are joined when their edges touch a common polygon (the polygon
//! each leaves or enters), at the distance between their midpoints. The edge from `p`
//! into `q` and the one from `q` into `p` touch the same two polygons and are joined; their
//! midpoints differ only as the two sides' heights do.
//!
//! Invariants: the landmarks of a component are chosen farthest first from its
//! lowest-numbered edge, ties to the lower number, so the same snapshot gives the same
//! table on every run and every thread. Every vertex's distances are finite and measured
//! from its own component's landmarks (a component smaller than [`LANDMARKS`] vertices
//! repeats its landmarks). A snapshot with off-mesh links (which the graph does not
//! follow), a live tile without a search table, or more than [`LANDMARK_EDGES_MAX`] edges
//! has no landmarks: searches there use the straight line alone.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::Vec3;

use super::navmesh::{SlotState, SnapshotData};
use super::{PolyRef, Snapshot};

/// Landmarks per component: one 16-byte row of distances per edge (four tighten the bound
/// nearly as much as eight on the reference levels, at half the table and the arithmetic).
pub const LANDMARKS: usize = 4;

/// Most search edges a snapshot may have for its landmarks to be worked out. The table is
/// built on the first search after each publication: a tree per landmark over the whole
/// graph, about 1.2 ms and 128 KiB for a tiled city of 3,561 edges, 0.06 ms for the
/// dungeon's 226 (`cargo bench --bench query -- landmarks_build`, Xeon). Larger meshes
/// would pay more at every publication than their searches save; they route long paths
/// through the tile hierarchy instead.
pub const LANDMARK_EDGES_MAX: usize = 1 << 12;

/// Landmark distances of one snapshot (see the module documentation).
#[derive(Debug)]
pub struct Landmarks {
    /// Per slot, the number of its live tile's edge 0 (`u32::MAX` if not live).
    edge_base: Vec<u32>,
    /// By edge number: its distances to its component's landmarks, metres (0 for read
    /// markers, which a search never asks about).
    distances: Vec<[f32; LANDMARKS]>,
    /// By dense polygon key, the start of its entering edges in `entering`, plus the end.
    entering_start: Vec<u32>,
    /// The edges that enter each polygon (from its neighbours' tables): number, midpoint.
    /// A path's last leg starts at one of them (a polygon's own edge and the edge back into
    /// it need not share a midpoint to the bit: each side has its own heights).
    entering: Vec<(u32, Vec3)>,
}

/// What one search needs to bound the cost from any edge to its end polygon: per landmark,
/// the least and greatest distance of the edges entering the end polygon, and the shortest
/// of the last legs from those edges to the end point.
#[derive(Clone, Copy, Debug)]
pub struct EndBounds {
    least: [f32; LANDMARKS],
    greatest: [f32; LANDMARKS],
    last_leg_m: f32,
}

impl Landmarks {
    /// The number of the edge at `index_in_tile` within `polygon`'s tile's table (see
    /// [`super::SearchTable::first_edge`]); `None` for a slot without a live tile or a
    /// number past `u32`.
    #[inline]
    pub fn edge_number(&self, polygon: PolyRef, index_in_tile: usize) -> Option<u32> {
        let base = *self.edge_base.get(usize::from(polygon.slot().0))?;
        if base == u32::MAX {
            return None;
        }
        base.checked_add(u32::try_from(index_in_tile).ok()?)
    }

    /// The bounds towards `end` (its polygon) at `end_point`; `None` for a polygon no edge
    /// enters (the straight line is all there is).
    pub fn end_bounds(
        &self,
        snapshot: &Snapshot,
        end: PolyRef,
        end_point: Vec3,
    ) -> Option<EndBounds> {
        let key = snapshot.polygon_key(end) as usize;
        let mut bounds = EndBounds {
            least: [f32::INFINITY; LANDMARKS],
            greatest: [f32::NEG_INFINITY; LANDMARKS],
            last_leg_m: f32::INFINITY,
        };
        for &(edge, midpoint) in super::borders::run(&self.entering_start, &self.entering, key) {
            let row = &self.distances[edge as usize];
            for (landmark, &distance) in row.iter().enumerate() {
                bounds.least[landmark] = bounds.least[landmark].min(distance);
                bounds.greatest[landmark] = bounds.greatest[landmark].max(distance);
            }
            bounds.last_leg_m = bounds.last_leg_m.min(midpoint.distance(end_point));
        }
        bounds.last_leg_m.is_finite().then_some(bounds)
    }

    /// A lower bound on the chain of midpoints from edge number `edge` (a node placed at
    /// its midpoint) into the end polygon and on to the end point, metres; 0 (a bound that
    /// always holds) for a number the table does not have.
    #[inline(always)]
    pub fn cost_bound(&self, edge: u32, end: &EndBounds) -> f32 {
        let Some(row) = self.distances.get(edge as usize) else {
            return 0.0;
        };
        // Lane by lane, then halving: plain comparisons (no NaN arises: every distance is
        // finite) that compile to packed maxima.
        let mut gap = [0.0f32; LANDMARKS];
        for (landmark, (lane, &distance)) in gap.iter_mut().zip(row).enumerate() {
            let below = end.least[landmark] - distance;
            let above = distance - end.greatest[landmark];
            *lane = if below > above { below } else { above };
        }
        let mut width = LANDMARKS / 2;
        while width > 0 {
            for lane in 0..width {
                if gap[lane + width] > gap[lane] {
                    gap[lane] = gap[lane + width];
                }
            }
            width /= 2;
        }
        let gap = if gap[0] > 0.0 { gap[0] } else { 0.0 };
        gap + end.last_leg_m
    }

    /// Bytes the table holds.
    pub fn heap_bytes(&self) -> usize {
        self.edge_base.capacity() * size_of::<u32>()
            + self.distances.capacity() * size_of::<[f32; LANDMARKS]>()
            + self.entering_start.capacity() * size_of::<u32>()
            + self.entering.capacity() * size_of::<(u32, Vec3)>()
    }

    /// Works out the landmarks of `data` (what [`Snapshot::landmarks`] keeps); `None` where
    /// it has none (see the module documentation).
    pub fn build(data: &SnapshotData) -> Option<Landmarks> {
        if !data.links.is_empty() {
            return None;
        }
        let graph = Graph::new(data)?;
        let count = graph.midpoints.len();
        let mut distances = vec![[0.0f32; LANDMARKS]; count];
        let mut seen = vec![false; count];
        let mut tree = vec![f32::INFINITY; count];
        let mut nearest_chosen = vec![f32::INFINITY; count];
        let mut heap = BinaryHeap::new();
        for seed in 0..count {
            if seen[seed] || !graph.is_vertex(seed) {
                continue;
            }
            // The component: everything a tree from its lowest vertex reaches.
            let members = graph.shortest(seed as u32, &mut tree, &mut heap);
            for &vertex in &members {
                seen[vertex as usize] = true;
                // Farthest first: the first landmark is the vertex farthest from the seed.
                nearest_chosen[vertex as usize] = tree[vertex as usize];
            }
            // `landmark` numbers a column of every member's row, not an element to iterate.
            #[allow(clippy::needless_range_loop)]
            for landmark in 0..LANDMARKS {
                // Then each next one is the vertex farthest from those chosen.
                let mut farthest = members[0];
                for &vertex in &members[1..] {
                    if nearest_chosen[vertex as usize] > nearest_chosen[farthest as usize] {
                        farthest = vertex;
                    }
                }
                for &vertex in &members {
                    tree[vertex as usize] = f32::INFINITY;
                }
                graph.shortest(farthest, &mut tree, &mut heap);
                for &vertex in &members {
                    let distance = tree[vertex as usize];
                    distances[vertex as usize][landmark] = distance;
                    let nearest = &mut nearest_chosen[vertex as usize];
                    *nearest = if landmark == 0 {
                        distance
                    } else {
                        nearest.min(distance)
                    };
                }
            }
            for &vertex in &members {
                tree[vertex as usize] = f32::INFINITY;
            }
        }
        let mut entering_start = Vec::with_capacity(graph.entering.len() + 1);
        let mut entering = Vec::new();
        for into in &graph.entering {
            entering_start.push(entering.len() as u32);
            entering.extend(
                into.iter()
                    .map(|&edge| (edge, graph.midpoints[edge as usize].expect("a vertex"))),
            );
        }
        entering_start.push(entering.len() as u32);
        Some(Landmarks {
            edge_base: graph.edge_base,
            distances,
            entering_start,
            entering,
        })
    }
}

/// The graph the landmark trees are grown on (see the module documentation).
struct Graph {
    edge_base: Vec<u32>,
    /// By edge number: its midpoint, or `None` for a read marker.
    midpoints: Vec<Option<Vec3>>,
    /// By edge number: the edges that touch a polygon it touches (itself included).
    neighbours_start: Vec<u32>,
    neighbours: Vec<u32>,
    /// By dense polygon key: the edges that enter it.
    entering: Vec<Vec<u32>>,
}

impl Graph {
    fn new(data: &SnapshotData) -> Option<Graph> {
        // Counted first, so a mesh over the limit allocates nothing.
        let edges: usize = data
            .search_tables
            .iter()
            .map(|table| table.edge_count())
            .sum();
        if edges > LANDMARK_EDGES_MAX {
            return None;
        }
        let mut edge_base = vec![u32::MAX; data.slots.len()];
        let mut midpoints = Vec::new();
        // By edge number: the polygons it touches (leaves, enters).
        let mut touches: Vec<[u32; 2]> = Vec::new();
        // By dense polygon key: the edges that touch it.
        let mut touching: Vec<Vec<u32>> = vec![Vec::new(); data.polygon_total as usize];
        let mut entering: Vec<Vec<u32>> = vec![Vec::new(); data.polygon_total as usize];
        let key = |reference: PolyRef| super::components::live_polygon_key(data, reference);
        for (slot, view) in data.slots.iter().enumerate() {
            let SlotState::Live(tile) = &view.state else {
                continue;
            };
            let table = data.search_tables.get(slot)?;
            if table.generation() != view.generation {
                return None;
            }
            edge_base[slot] = midpoints.len() as u32;
            let polygon_base = data.polygon_base[slot];
            for polygon in 0..tile.data.polygons.len() {
                let here = polygon_base + polygon as u32;
                for edge in table.edges(polygon as u16) {
                    let number = midpoints.len() as u32;
                    match edge.neighbour.and_then(key) {
                        Some(across) => {
                            midpoints.push(Some(edge.midpoint));
                            touches.push([here, across]);
                            touching[here as usize].push(number);
                            touching[across as usize].push(number);
                            entering[across as usize].push(number);
                        }
                        None => {
                            midpoints.push(None);
                            touches.push([u32::MAX; 2]);
                        }
                    }
                }
            }
        }
        let mut neighbours_start = Vec::with_capacity(midpoints.len() + 1);
        let mut neighbours = Vec::new();
        for pair in &touches {
            neighbours_start.push(neighbours.len() as u32);
            if pair[0] == u32::MAX {
                continue;
            }
            let first = neighbours.len();
            for &polygon in pair {
                neighbours.extend_from_slice(&touching[polygon as usize]);
            }
            neighbours[first..].sort_unstable();
            let mut kept = first;
            for read in first..neighbours.len() {
                if kept == first || neighbours[kept - 1] != neighbours[read] {
                    neighbours[kept] = neighbours[read];
                    kept += 1;
                }
            }
            neighbours.truncate(kept);
        }
        neighbours_start.push(neighbours.len() as u32);
        Some(Graph {
            edge_base,
            midpoints,
            neighbours_start,
            neighbours,
            entering,
        })
    }

    fn is_vertex(&self, edge: usize) -> bool {
        self.midpoints[edge].is_some()
    }

    /// Fills `tree` with the distances from `source` (infinite where it does not reach,
    /// only the reached entries touched: `tree` must come in infinite there) and returns
    /// the reached vertices, ascending.
    fn shortest(
        &self,
        source: u32,
        tree: &mut [f32],
        heap: &mut BinaryHeap<Reverse<(u32, u32)>>,
    ) -> Vec<u32> {
        let mut reached = vec![source];
        tree[source as usize] = 0.0;
        heap.clear();
        heap.push(Reverse((0, source)));
        while let Some(Reverse((bits, vertex))) = heap.pop() {
            let distance = f32::from_bits(bits);
            if distance > tree[vertex as usize] {
                continue;
            }
            let here = self.midpoints[vertex as usize].expect("vertices have midpoints");
            let (first, end) = (
                self.neighbours_start[vertex as usize] as usize,
                self.neighbours_start[vertex as usize + 1] as usize,
            );
            for &next in &self.neighbours[first..end] {
                let there = self.midpoints[next as usize].expect("vertices have midpoints");
                let through = distance + here.distance(there);
                if through < tree[next as usize] {
                    if tree[next as usize] == f32::INFINITY {
                        reached.push(next);
                    }
                    tree[next as usize] = through;
                    // Non-negative floats order as their bits do.
                    heap.push(Reverse((through.to_bits(), next)));
                }
            }
        }
        reached.sort_unstable();
        reached
    }
}

impl Snapshot {
    /// The landmark distances of this snapshot's search graph, worked out on first use;
    /// `None` where it has none (see the module documentation).
    pub fn landmarks(&self) -> Option<&Landmarks> {
        self.0
            .landmarks
            .get_or_init(|| Landmarks::build(&self.0))
            .as_ref()
    }
}

#[cfg(test)]
impl Snapshot {
    /// This snapshot without landmarks: searches on it bound the cost still to pay by the
    /// straight line alone (for tests that compare the two).
    pub(crate) fn without_landmarks(&self) -> Snapshot {
        Snapshot(std::sync::Arc::new(SnapshotData {
            landmarks: std::sync::OnceLock::from(None),
            ..self.copied_data()
        }))
    }
}
