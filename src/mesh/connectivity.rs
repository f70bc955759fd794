//! Connectivity of baked polygons: which polygons a body can walk between.
//!
//! Inputs: baked tiles. Output: [`PolygonGraph`], connected components over polygon
//! adjacency, with polygons on either side of a tile border joined where their border edges
//! overlap (the same rule the runtime uses to open portals between tiles).
//!
//! Invariants: two polygons are in one component exactly when a chain of shared edges and
//! overlapping tile-border edges joins them.

use glam::{Vec2, Vec3};

use super::tile::{TileData, TilePoly};

/// Largest vertical gap between two tile-border edges that still join, metres: border
/// edges of the same floor meet at the same height up to the contour's cell rounding.
const TILE_EDGE_HEIGHT_TOLERANCE_M: f32 = 0.5;
/// Smallest overlap of two tile-border edges that joins them, metres.
const TILE_EDGE_OVERLAP_MIN_M: f32 = 0.01;

/// A polygon of a tile set: (tile index, polygon index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PolygonKey {
    /// Index in the tile slice.
    pub tile: u32,
    /// Polygon index in the tile.
    pub polygon: u32,
}

/// Connected components over the polygons of a set of tiles.
#[derive(Clone, Debug)]
pub struct PolygonGraph {
    tile_offsets: Vec<usize>,
    parents: Vec<u32>,
}

impl PolygonGraph {
    /// Builds the components, optionally leaving out polygons for which `exclude` is true.
    pub fn build(tiles: &[TileData], exclude: impl Fn(&TileData, usize) -> bool) -> PolygonGraph {
        let mut tile_offsets = Vec::with_capacity(tiles.len() + 1);
        let mut total = 0;
        for tile in tiles {
            tile_offsets.push(total);
            total += tile.polygons.len();
        }
        tile_offsets.push(total);
        let mut graph = PolygonGraph {
            tile_offsets,
            parents: (0..total as u32).collect(),
        };
        let excluded: Vec<bool> = tiles
            .iter()
            .flat_map(|tile| {
                (0..tile.polygons.len())
                    .map(|p| exclude(tile, p))
                    .collect::<Vec<_>>()
            })
            .collect();

        for (tile_index, tile) in tiles.iter().enumerate() {
            for (polygon_index, polygon) in tile.polygons.iter().enumerate() {
                let here = graph.tile_offsets[tile_index] + polygon_index;
                if excluded[here] {
                    continue;
                }
                for &neighbour in &polygon.neighbours[..polygon.vertex_count as usize] {
                    if neighbour & TilePoly::TILE_EDGE == 0 && neighbour != TilePoly::NO_NEIGHBOUR {
                        let there = graph.tile_offsets[tile_index] + neighbour as usize;
                        if !excluded[there] {
                            graph.union(here, there);
                        }
                    }
                }
            }
        }

        // Tile borders: join overlapping edges on facing sides of adjacent tiles.
        let border_edges: Vec<Vec<(usize, u16, Vec3, Vec3)>> = tiles
            .iter()
            .enumerate()
            .map(|(tile_index, tile)| {
                let mut edges = Vec::new();
                for (polygon_index, polygon) in tile.polygons.iter().enumerate() {
                    let count = polygon.vertex_count as usize;
                    for edge in 0..count {
                        let neighbour = polygon.neighbours[edge];
                        if neighbour != TilePoly::NO_NEIGHBOUR
                            && neighbour & TilePoly::TILE_EDGE != 0
                        {
                            let a = tile.vertex(polygon.vertices[edge]);
                            let b = tile.vertex(polygon.vertices[(edge + 1) % count]);
                            edges.push((
                                graph.tile_offsets[tile_index] + polygon_index,
                                neighbour & 3,
                                a,
                                b,
                            ));
                        }
                    }
                }
                edges
            })
            .collect();
        for (tile_index, tile) in tiles.iter().enumerate() {
            for (other_index, other) in tiles.iter().enumerate() {
                let (dx, dz) = (
                    other.header.tile_x - tile.header.tile_x,
                    other.header.tile_z - tile.header.tile_z,
                );
                // Side towards the other tile: 2 = +X, 1 = +Z (each pair once).
                let side = match (dx, dz) {
                    (1, 0) => 2,
                    (0, 1) => 1,
                    _ => continue,
                };
                let facing = (side + 2) % 4;
                for &(here, edge_side, a, b) in &border_edges[tile_index] {
                    if edge_side != side || excluded[here] {
                        continue;
                    }
                    for &(there, other_side, c, d) in &border_edges[other_index] {
                        if other_side != facing || excluded[there] {
                            continue;
                        }
                        if border_edges_overlap(a, b, c, d, side) {
                            graph.union(here, there);
                        }
                    }
                }
            }
        }
        graph
    }

    fn find(&mut self, mut node: usize) -> usize {
        while self.parents[node] as usize != node {
            let grandparent = self.parents[self.parents[node] as usize];
            self.parents[node] = grandparent;
            node = grandparent as usize;
        }
        node
    }

    fn union(&mut self, a: usize, b: usize) {
        let (root_a, root_b) = (self.find(a), self.find(b));
        // Lower index becomes the root: components are numbered deterministically.
        let (low, high) = (root_a.min(root_b), root_a.max(root_b));
        self.parents[high] = low as u32;
    }

    /// Component of a polygon (the smallest flat index in it).
    pub fn component(&mut self, key: PolygonKey) -> usize {
        let node = self.tile_offsets[key.tile as usize] + key.polygon as usize;
        self.find(node)
    }

    /// Joins the components of two polygons: what an off-mesh link between them does for a
    /// body that crosses it (a door, a jump, a lift's landing).
    pub fn join(&mut self, a: PolygonKey, b: PolygonKey) {
        let (a, b) = (
            self.tile_offsets[a.tile as usize] + a.polygon as usize,
            self.tile_offsets[b.tile as usize] + b.polygon as usize,
        );
        self.union(a, b);
    }

    /// Whether two polygons are connected.
    pub fn connected(&mut self, a: PolygonKey, b: PolygonKey) -> bool {
        self.component(a) == self.component(b)
    }
}

fn border_edges_overlap(a: Vec3, b: Vec3, c: Vec3, d: Vec3, side: u16) -> bool {
    // Along the border: Z for an X side, X for a Z side.
    let along = |p: Vec3| if side == 2 { p.z } else { p.x };
    let (a0, a1) = (along(a).min(along(b)), along(a).max(along(b)));
    let (c0, c1) = (along(c).min(along(d)), along(c).max(along(d)));
    let (low, high) = (a0.max(c0), a1.min(c1));
    if high - low < TILE_EDGE_OVERLAP_MIN_M {
        return false;
    }
    // Compare heights at the middle of the overlap.
    let height_at = |p: Vec3, q: Vec3, t: f32| {
        let (p0, q0) = (along(p), along(q));
        if (q0 - p0).abs() < 1e-6 {
            p.y.max(q.y)
        } else {
            p.y + (q.y - p.y) * (t - p0) / (q0 - p0)
        }
    };
    let middle = 0.5 * (low + high);
    (height_at(a, b, middle) - height_at(c, d, middle)).abs() <= TILE_EDGE_HEIGHT_TOLERANCE_M
}

/// Whether `point` lies inside polygon `polygon` of `tile` seen from above (edges count).
pub fn polygon_contains(tile: &TileData, polygon: usize, point: Vec2) -> bool {
    let indices = tile.polygons[polygon].vertex_indices();
    let count = indices.len();
    (0..count).all(|i| {
        let a = tile.vertex(indices[i]);
        let b = tile.vertex(indices[(i + 1) % count]);
        let cross = -((b.x - a.x) * (point.y - a.z) - (point.x - a.x) * (b.z - a.z));
        cross >= -1e-4
    })
}

/// The polygon under `point` whose detail surface is nearest in height, within
/// `max_height_m`; a brute-force search for tests and tools (the runtime uses the per-tile
/// tree of the query layer).
pub fn find_polygon_at(tiles: &[TileData], point: Vec3, max_height_m: f32) -> Option<PolygonKey> {
    let horizontal = Vec2::new(point.x, point.z);
    let mut best: Option<(PolygonKey, f32)> = None;
    for (tile_index, tile) in tiles.iter().enumerate() {
        for polygon in 0..tile.polygons.len() {
            if !polygon_contains(tile, polygon, horizontal) {
                continue;
            }
            let height = detail_height(tile, polygon, horizontal).unwrap_or_else(|| {
                let indices = tile.polygons[polygon].vertex_indices();
                indices.iter().map(|&v| tile.vertex(v).y).sum::<f32>() / indices.len() as f32
            });
            let gap = (height - point.y).abs();
            if gap <= max_height_m && best.is_none_or(|(_, g)| gap < g) {
                best = Some((
                    PolygonKey {
                        tile: tile_index as u32,
                        polygon: polygon as u32,
                    },
                    gap,
                ));
            }
        }
    }
    best.map(|(key, _)| key)
}

/// Height of the detail surface of a polygon at a horizontal point inside it.
pub fn detail_height(tile: &TileData, polygon: usize, point: Vec2) -> Option<f32> {
    for [a, b, c] in tile.detail_triangles_of(polygon) {
        let turn =
            |p: Vec3, q: Vec3, r: Vec2| -((q.x - p.x) * (r.y - p.z) - (r.x - p.x) * (q.z - p.z));
        let area = turn(a, b, Vec2::new(c.x, c.z));
        if area.abs() < 1e-9 {
            continue;
        }
        let (wa, wb, wc) = (
            turn(b, c, point) / area,
            turn(c, a, point) / area,
            turn(a, b, point) / area,
        );
        if wa >= -1e-4 && wb >= -1e-4 && wc >= -1e-4 {
            return Some(wa * a.y + wb * b.y + wc * c.y);
        }
    }
    None
}
