//! Stage [`Stage::PolygonMesh`](super::Stage::PolygonMesh): turn contours into convex polygons with adjacency.
//!
//! Each contour is triangulated by ear clipping (shortest diagonal first, which avoids
//! slivers), then triangles are merged greedily into convex polygons of at most
//! `verts_per_poly_max` vertices, longest shared edge first. Vertices are shared across
//! contours (same cell corner, heights within two cell heights), so neighbouring regions'
//! polygons share edges and adjacency is found by edge.
//!
//! Invariants: polygons wind counter-clockwise seen from above; every polygon is strictly
//! convex in (x, z); `neighbours[p][e]` is the polygon across edge `e` (from vertex `e` to
//! `e + 1`), [`NO_NEIGHBOUR`], or [`TILE_EDGE`] | side when the edge lies on the tile border.

use std::collections::HashMap;

use super::contours::{ContourSet, ContourVertex};

/// Unused vertex slot of a polygon.
pub const NO_VERTEX: u16 = u16::MAX;
/// No polygon across this edge: a wall.
pub const NO_NEIGHBOUR: u16 = u16::MAX;
/// Flag: the edge lies on the tile border; the low bits give the side (0: -X, 1: +Z, 2: +X,
/// 3: -Z), where the neighbouring tile's polygon continues.
pub const TILE_EDGE: u16 = 0x8000;
/// Most vertices a polygon can have.
pub const POLY_VERTICES_MAX: usize = 6;

/// Convex polygons in tile cell coordinates.
#[derive(Clone, Debug, Default)]
pub struct PolyMesh {
    /// Vertices: x and z in cells from the tile's minimum corner, y in cell heights.
    pub vertices: Vec<[u16; 3]>,
    /// Vertex indices per polygon, [`NO_VERTEX`] past the end.
    pub polygons: Vec<[u16; POLY_VERTICES_MAX]>,
    /// Neighbour per polygon edge.
    pub neighbours: Vec<[u16; POLY_VERTICES_MAX]>,
    /// Area per polygon.
    pub areas: Vec<u8>,
    /// Region per polygon (the contour it came from).
    pub regions: Vec<u16>,
}

impl PolyMesh {
    /// Number of vertices of polygon `polygon`.
    pub fn vertex_count(&self, polygon: usize) -> usize {
        self.polygons[polygon]
            .iter()
            .take_while(|&&v| v != NO_VERTEX)
            .count()
    }
}

/// Polygon stage parameters.
#[derive(Clone, Copy, Debug)]
pub struct PolyParams {
    /// Most vertices per polygon (3..=6).
    pub verts_per_poly_max: usize,
    /// Border cells to strip from contour coordinates.
    pub border: u32,
    /// Tile size in cells without the border (0 for a solo bake: no tile edges).
    pub tile_width: u32,
    /// Tile depth in cells without the border.
    pub tile_depth: u32,
}

type Point = (i64, i64);

/// Twice the signed area of triangle `a b c` in (x, z); positive when counter-clockwise
/// seen from above (+Y): with X right, Z points towards the viewer's bottom.
fn turn(a: Point, b: Point, c: Point) -> i64 {
    -((b.0 - a.0) * (c.1 - a.1) - (c.0 - a.0) * (b.1 - a.1))
}

fn left(a: Point, b: Point, c: Point) -> bool {
    turn(a, b, c) > 0
}

fn left_on(a: Point, b: Point, c: Point) -> bool {
    turn(a, b, c) >= 0
}

fn collinear(a: Point, b: Point, c: Point) -> bool {
    turn(a, b, c) == 0
}

/// Whether segments `a b` and `c d` cross properly or touch in their interiors.
fn intersect(a: Point, b: Point, c: Point, d: Point) -> bool {
    let proper = (left(a, b, c) ^ left(a, b, d))
        && (left(c, d, a) ^ left(c, d, b))
        && !collinear(a, b, c)
        && !collinear(a, b, d)
        && !collinear(c, d, a)
        && !collinear(c, d, b);
    if proper {
        return true;
    }
    let between = |a: Point, b: Point, c: Point| {
        collinear(a, b, c)
            && if a.0 != b.0 {
                (a.0 <= c.0 && c.0 <= b.0) || (a.0 >= c.0 && c.0 >= b.0)
            } else {
                (a.1 <= c.1 && c.1 <= b.1) || (a.1 >= c.1 && c.1 >= b.1)
            }
    };
    between(a, b, c) || between(a, b, d) || between(c, d, a) || between(c, d, b)
}

/// Whether the diagonal from `points[remaining[i]]` to `points[remaining[j]]` lies inside
/// the polygon `remaining` (in the cone at `i`) and crosses none of its edges.
fn diagonal_is_clear(points: &[Point], remaining: &[usize], i: usize, j: usize) -> bool {
    let count = remaining.len();
    let p = |k: usize| points[remaining[k % count]];
    let (a, b) = (p(i), p(j));
    let (previous, next) = (p(i + count - 1), p(i + 1));
    let in_cone = if left_on(previous, a, next) {
        left(a, b, previous) && left(b, a, next)
    } else {
        !(left_on(a, b, next) && left_on(b, a, previous))
    };
    in_cone
        && (0..count).all(|k| {
            let k_next = (k + 1) % count;
            let (c, d) = (p(k), p(k_next));
            // Edges at either end of the diagonal cannot cross it.
            [k, k_next].iter().any(|&x| x == i || x == j)
                || c == a
                || c == b
                || d == a
                || d == b
                || !intersect(a, b, c, d)
        })
}

/// Ear clipping over `points` (a simple polygon, possibly touching itself at bridge
/// vertices). Returns triangles as index triples into `points`; an empty result means the
/// polygon could not be triangulated.
fn triangulate(points: &[Point]) -> Vec<[usize; 3]> {
    let mut remaining: Vec<usize> = (0..points.len()).collect();
    let mut triangles = Vec::with_capacity(points.len().saturating_sub(2));
    let diagonal =
        |remaining: &[usize], i: usize, j: usize| diagonal_is_clear(points, remaining, i, j);
    // Convex corners by the length of the diagonal that would cut them off, shortest first.
    let mut candidates: Vec<(i64, usize)> = Vec::with_capacity(points.len());
    while remaining.len() > 3 {
        let count = remaining.len();
        // The ear is the convex corner with the shortest clear diagonal (the first by index
        // among equals). Clearance costs a pass over every edge, so the corners are tried
        // shortest first and the first clear one is taken: a long contour triangulates in
        // a few clearance tests a corner instead of one for every corner.
        candidates.clear();
        for i in 0..count {
            let (a, b, c) = (
                points[remaining[(i + count - 1) % count]],
                points[remaining[i]],
                points[remaining[(i + 1) % count]],
            );
            if left(a, b, c) {
                candidates.push(((c.0 - a.0).pow(2) + (c.1 - a.1).pow(2), i));
            }
        }
        let clear =
            |&(_, i): &(i64, usize)| diagonal(&remaining, (i + count - 1) % count, (i + 1) % count);
        // Most often the shortest is clear: found by one scan, the sort is skipped.
        let shortest = candidates.iter().copied().min().filter(clear);
        let best = shortest.or_else(|| {
            candidates.sort_unstable();
            candidates.iter().copied().find(clear)
        });
        let Some((_, ear)) = best else {
            // Degenerate input (collinear runs, overlapping bridges): clip any convex-or-flat
            // vertex whose removal keeps the rest valid rather than lose the region.
            let fallback = (0..count).find(|&i| {
                let (a, b, c) = (
                    points[remaining[(i + count - 1) % count]],
                    points[remaining[i]],
                    points[remaining[(i + 1) % count]],
                );
                left_on(a, b, c)
            });
            match fallback {
                Some(i) => {
                    let (a, b, c) = (
                        remaining[(i + count - 1) % count],
                        remaining[i],
                        remaining[(i + 1) % count],
                    );
                    if left(points[a], points[b], points[c]) {
                        triangles.push([a, b, c]);
                    }
                    remaining.remove(i);
                    continue;
                }
                None => return Vec::new(),
            }
        };
        let (previous, next) = ((ear + count - 1) % count, (ear + 1) % count);
        triangles.push([remaining[previous], remaining[ear], remaining[next]]);
        remaining.remove(ear);
    }
    if remaining.len() == 3
        && left(
            points[remaining[0]],
            points[remaining[1]],
            points[remaining[2]],
        )
    {
        triangles.push([remaining[0], remaining[1], remaining[2]]);
    }
    triangles
}

/// Shared-vertex table: cell corner (x, z) plus a height within two cell heights.
struct VertexTable {
    vertices: Vec<[u16; 3]>,
    by_position: HashMap<(u16, u16), Vec<u16>>,
}

impl VertexTable {
    fn add(&mut self, x: u16, y: u16, z: u16) -> u16 {
        let bucket = self.by_position.entry((x, z)).or_default();
        if let Some(&found) = bucket
            .iter()
            .find(|&&index| self.vertices[index as usize][1].abs_diff(y) <= 2)
        {
            return found;
        }
        let index = self.vertices.len() as u16;
        self.vertices.push([x, y, z]);
        bucket.push(index);
        index
    }
}

/// Largest vertex count one tile's mesh may have (indices are `u16`, one value is the
/// "no vertex" marker).
pub const MESH_VERTICES_MAX: usize = NO_VERTEX as usize - 1;

/// Most polygons one tile's mesh may have: a neighbour link is a polygon index whose top
/// bit marks a tile-border edge ([`TILE_EDGE`]), so indices stop below it.
pub const TILE_POLYGONS_MAX: usize = TILE_EDGE as usize - 1;

/// A tile whose polygon mesh would need more vertices or polygons than its 16-bit indices
/// hold: the tile must be smaller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolyMeshOverflow {
    /// `vertices` or `polygons`.
    pub what: &'static str,
    /// How many the mesh needed (for vertices: at least this many).
    pub count: usize,
    /// [`MESH_VERTICES_MAX`] or [`TILE_POLYGONS_MAX`].
    pub limit: usize,
}

/// Builds the polygon mesh of a contour set; refused when it would overflow its indices.
pub fn build_poly_mesh(
    contours: &ContourSet,
    params: &PolyParams,
) -> Result<PolyMesh, PolyMeshOverflow> {
    let nvp = params.verts_per_poly_max.clamp(3, POLY_VERTICES_MAX);
    let border = params.border as i32;
    let mut table = VertexTable {
        vertices: Vec::new(),
        by_position: HashMap::new(),
    };
    let mut mesh = PolyMesh::default();
    for contour in &contours.contours {
        let shifted: Vec<ContourVertex> = contour
            .vertices
            .iter()
            .map(|v| ContourVertex {
                x: v.x - border,
                z: v.z - border,
                ..*v
            })
            .collect();
        if shifted.iter().any(|v| {
            v.x < 0 || v.z < 0 || v.y < 0 || v.x > i32::from(u16::MAX) || v.z > i32::from(u16::MAX)
        }) {
            // Contours of a tile's own regions stay inside the tile; anything else is a bug
            // upstream, and skipping keeps the bake total.
            debug_assert!(false, "contour vertex outside the tile");
            continue;
        }
        let points: Vec<Point> = shifted
            .iter()
            .map(|v| (i64::from(v.x), i64::from(v.z)))
            .collect();
        let triangles = triangulate(&points);
        if triangles.is_empty() {
            continue;
        }
        if table.vertices.len() + shifted.len() > MESH_VERTICES_MAX {
            return Err(PolyMeshOverflow {
                what: "vertices",
                count: table.vertices.len() + shifted.len(),
                limit: MESH_VERTICES_MAX,
            });
        }
        let indices: Vec<u16> = shifted
            .iter()
            .map(|v| table.add(v.x as u16, v.y.min(i32::from(u16::MAX)) as u16, v.z as u16))
            .collect();
        let mut polygons: Vec<Vec<u16>> = triangles
            .iter()
            .map(|t| vec![indices[t[0]], indices[t[1]], indices[t[2]]])
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .collect();
        merge_polygons(&mut polygons, &table.vertices, nvp);
        for polygon in polygons {
            let mut slots = [NO_VERTEX; POLY_VERTICES_MAX];
            slots[..polygon.len()].copy_from_slice(&polygon);
            mesh.polygons.push(slots);
            mesh.areas.push(contour.area);
            mesh.regions.push(contour.region);
        }
    }
    if mesh.polygons.len() > TILE_POLYGONS_MAX {
        return Err(PolyMeshOverflow {
            what: "polygons",
            count: mesh.polygons.len(),
            limit: TILE_POLYGONS_MAX,
        });
    }
    mesh.vertices = table.vertices;
    build_adjacency(&mut mesh, params);
    Ok(mesh)
}

/// Merges polygons pairwise while a merge keeps them convex and within `nvp` vertices,
/// longest shared edge first.
fn merge_polygons(polygons: &mut Vec<Vec<u16>>, vertices: &[[u16; 3]], nvp: usize) {
    if nvp <= 3 {
        return;
    }
    let point = |index: u16| -> Point {
        let v = vertices[index as usize];
        (i64::from(v[0]), i64::from(v[2]))
    };
    // Only polygons that share an edge can merge: each round pairs them through a sorted
    // list of (edge, polygon), so a round costs the edges' count, not the polygons' square
    // (a contour 100 km long once took minutes here).
    let mut edges: Vec<((u16, u16), u32)> = Vec::new();
    loop {
        edges.clear();
        for (index, polygon) in polygons.iter().enumerate() {
            for (corner, &start) in polygon.iter().enumerate() {
                let end = polygon[(corner + 1) % polygon.len()];
                edges.push(((start.min(end), start.max(end)), index as u32));
            }
        }
        edges.sort_unstable();
        // The longest shared edge wins; among equals, the first pair (a, b) in index
        // order, as a scan of every pair would find it.
        let mut best: Option<(usize, usize, usize, usize, i64)> = None;
        for run in edges.chunk_by(|x, y| x.0 == y.0) {
            for (first, &(_, a)) in run.iter().enumerate() {
                for &(_, b) in &run[first + 1..] {
                    let (a, b) = (a as usize, b as usize);
                    if a == b {
                        continue;
                    }
                    let Some((edge_a, edge_b, length)) =
                        merge_value(&polygons[a], &polygons[b], nvp, &point)
                    else {
                        continue;
                    };
                    let better = best.is_none_or(|(best_a, best_b, _, _, best_length)| {
                        length > best_length || (length == best_length && (a, b) < (best_a, best_b))
                    });
                    if better {
                        best = Some((a, b, edge_a, edge_b, length));
                    }
                }
            }
        }
        let Some((a, b, edge_a, edge_b, _)) = best else {
            break;
        };
        let (pa, pb) = (&polygons[a], &polygons[b]);
        let (na, nb) = (pa.len(), pb.len());
        let mut merged = Vec::with_capacity(na + nb - 2);
        for offset in 0..na - 1 {
            merged.push(pa[(edge_a + 1 + offset) % na]);
        }
        for offset in 0..nb - 1 {
            merged.push(pb[(edge_b + 1 + offset) % nb]);
        }
        polygons[a] = merged;
        polygons.swap_remove(b);
    }
}

/// If `a` and `b` share an edge and their union is convex with at most `nvp` vertices:
/// the shared edge's index in each and its squared length.
fn merge_value(
    a: &[u16],
    b: &[u16],
    nvp: usize,
    point: &impl Fn(u16) -> Point,
) -> Option<(usize, usize, i64)> {
    let (na, nb) = (a.len(), b.len());
    if na + nb - 2 > nvp {
        return None;
    }
    let mut shared = None;
    for i in 0..na {
        let (a0, a1) = (a[i], a[(i + 1) % na]);
        for j in 0..nb {
            if b[j] == a1 && b[(j + 1) % nb] == a0 {
                shared = Some((i, j));
            }
        }
    }
    let (edge_a, edge_b) = shared?;
    // Convex at both ends of the shared edge once merged.
    let a_before = point(a[(edge_a + na - 1) % na]);
    let a_start = point(a[edge_a]);
    let b_after_end = point(b[(edge_b + 2) % nb]);
    if !left(a_before, a_start, b_after_end) {
        return None;
    }
    let b_before = point(b[(edge_b + nb - 1) % nb]);
    let b_start = point(b[edge_b]);
    let a_after_end = point(a[(edge_a + 2) % na]);
    if !left(b_before, b_start, a_after_end) {
        return None;
    }
    let (p, q) = (point(a[edge_a]), point(a[(edge_a + 1) % na]));
    Some((edge_a, edge_b, (q.0 - p.0).pow(2) + (q.1 - p.1).pow(2)))
}

/// Fills `neighbours`: shared edges link polygons, tile-border edges are flagged.
fn build_adjacency(mesh: &mut PolyMesh, params: &PolyParams) {
    let polygon_count = mesh.polygons.len();
    mesh.neighbours = vec![[NO_NEIGHBOUR; POLY_VERTICES_MAX]; polygon_count];
    let mut edges: HashMap<(u16, u16), (usize, usize)> = HashMap::new();
    for polygon in 0..polygon_count {
        let count = mesh.vertex_count(polygon);
        for edge in 0..count {
            let (a, b) = (
                mesh.polygons[polygon][edge],
                mesh.polygons[polygon][(edge + 1) % count],
            );
            if let Some(&(other, other_edge)) = edges.get(&(b, a)) {
                mesh.neighbours[polygon][edge] = other as u16;
                mesh.neighbours[other][other_edge] = polygon as u16;
            } else {
                edges.insert((a, b), (polygon, edge));
            }
        }
    }
    if params.tile_width == 0 {
        return;
    }
    let (width, depth) = (params.tile_width as u16, params.tile_depth as u16);
    for polygon in 0..polygon_count {
        let count = mesh.vertex_count(polygon);
        for edge in 0..count {
            if mesh.neighbours[polygon][edge] != NO_NEIGHBOUR {
                continue;
            }
            let a = mesh.vertices[mesh.polygons[polygon][edge] as usize];
            let b = mesh.vertices[mesh.polygons[polygon][(edge + 1) % count] as usize];
            let side = if a[0] == 0 && b[0] == 0 {
                Some(0)
            } else if a[2] == depth && b[2] == depth {
                Some(1)
            } else if a[0] == width && b[0] == width {
                Some(2)
            } else if a[2] == 0 && b[2] == 0 {
                Some(3)
            } else {
                None
            };
            if let Some(side) = side {
                mesh.neighbours[polygon][edge] = TILE_EDGE | side;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::SplitMix64;

    /// The ear choice by its definition: every convex corner's diagonal tested, the
    /// shortest clear one taken (the first among equals). `triangulate`, which tests the
    /// shortest first and stops at the first clear one, must agree.
    fn shortest_clear_ear_by_testing_all(points: &[Point], remaining: &[usize]) -> Option<usize> {
        let count = remaining.len();
        let p = |k: usize| points[remaining[k % count]];
        let clear = |i: usize, j: usize| diagonal_is_clear(points, remaining, i, j);
        let mut best: Option<(usize, i64)> = None;
        for i in 0..count {
            let (previous, next) = ((i + count - 1) % count, (i + 1) % count);
            let (a, b, c) = (p(previous), p(i), p(next));
            if !left(a, b, c) || !clear(previous, next) {
                continue;
            }
            let length = (c.0 - a.0).pow(2) + (c.1 - a.1).pow(2);
            if best.is_none_or(|(_, best_length)| length < best_length) {
                best = Some((i, length));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Merging by its definition: every pair of polygons tested each round.
    fn merge_by_testing_every_pair(
        polygons: &mut Vec<Vec<u16>>,
        vertices: &[[u16; 3]],
        nvp: usize,
    ) {
        let point = |index: u16| -> Point {
            let v = vertices[index as usize];
            (i64::from(v[0]), i64::from(v[2]))
        };
        loop {
            let mut best: Option<(usize, usize, usize, usize, i64)> = None;
            for a in 0..polygons.len() {
                for b in a + 1..polygons.len() {
                    if let Some((edge_a, edge_b, length)) =
                        merge_value(&polygons[a], &polygons[b], nvp, &point)
                    {
                        if best.is_none_or(|(_, _, _, _, best_length)| length > best_length) {
                            best = Some((a, b, edge_a, edge_b, length));
                        }
                    }
                }
            }
            let Some((a, b, edge_a, edge_b, _)) = best else {
                break;
            };
            let (pa, pb) = (&polygons[a], &polygons[b]);
            let (na, nb) = (pa.len(), pb.len());
            let mut merged: Vec<u16> = (0..na - 1).map(|o| pa[(edge_a + 1 + o) % na]).collect();
            merged.extend((0..nb - 1).map(|o| pb[(edge_b + 1 + o) % nb]));
            polygons[a] = merged;
            polygons.swap_remove(b);
        }
    }

    /// A star-shaped polygon about (500, 500) with `corners` corners at seeded radii, or a
    /// long thin strip with seeded bumps (the shape whose contour once took minutes); wound
    /// as contours are (a positive `turn` at convex corners).
    fn polygon(seed: u64, corners: usize, strip: bool) -> Vec<Point> {
        let mut random = SplitMix64::new(seed);
        let mut next = |bound: u64| (random.next_u64() % bound) as i64;
        if strip {
            // Every other strip has bumps of one unit on alternate corners only: its
            // edges are of a few lengths, so merges tie and the tie-break decides.
            let bump = |i: usize, next: &mut dyn FnMut(u64) -> i64| match seed % 4 {
                1 => (i % 2) as i64,
                _ => next(3),
            };
            let half = corners / 2;
            let mut points: Vec<Point> = (0..half)
                .map(|i| (i as i64 * 4, bump(i, &mut next)))
                .collect();
            points.extend(
                (0..half)
                    .rev()
                    .map(|i| (i as i64 * 4, 40 - bump(i, &mut next))),
            );
            points.reverse();
            return points;
        }
        (0..corners)
            .rev()
            .map(|i| {
                let angle = i as f64 / corners as f64 * std::f64::consts::TAU;
                let radius = 100.0 + next(300) as f64;
                (
                    500 + (radius * angle.cos()) as i64,
                    500 + (radius * angle.sin()) as i64,
                )
            })
            .collect()
    }

    #[test]
    fn triangulation_and_merging_take_what_testing_every_candidate_takes() {
        for seed in 0..40 {
            let strip = seed % 2 == 1;
            let points = polygon(seed, 8 + (seed as usize * 7) % 120, strip);
            // The ears chosen one by one, against the definition.
            let triangles = triangulate(&points);
            assert_eq!(triangles.len(), points.len() - 2, "seed {seed}");
            let mut remaining: Vec<usize> = (0..points.len()).collect();
            for triangle in &triangles[..triangles.len().saturating_sub(1)] {
                let ear = shortest_clear_ear_by_testing_all(&points, &remaining)
                    .expect("a simple polygon has an ear");
                assert_eq!(remaining[ear], triangle[1], "seed {seed}");
                remaining.remove(ear);
            }
            // Merged into convex polygons of up to six corners, against every pair tested.
            let vertices: Vec<[u16; 3]> = points
                .iter()
                .map(|&(x, z)| [x as u16, 0, z as u16])
                .collect();
            let as_polygons = || -> Vec<Vec<u16>> {
                triangles
                    .iter()
                    .map(|t| t.iter().map(|&i| i as u16).collect())
                    .collect()
            };
            let (mut fast, mut reference) = (as_polygons(), as_polygons());
            merge_polygons(&mut fast, &vertices, 6);
            merge_by_testing_every_pair(&mut reference, &vertices, 6);
            assert_eq!(fast, reference, "seed {seed}");
            assert!(fast.len() < triangles.len(), "seed {seed}: nothing merged");
        }
    }

    #[test]
    fn l_shape_triangulates_into_its_area() {
        // An L, counter-clockwise seen from above (x right, z towards the viewer).
        let points: Vec<Point> = vec![(0, 0), (0, 4), (4, 4), (4, 2), (2, 2), (2, 0)];
        let area2: i64 = (0..points.len())
            .map(|i| turn((0, 0), points[i], points[(i + 1) % points.len()]))
            .sum();
        assert_eq!(area2, 24, "the L has area 12");
        let triangles = triangulate(&points);
        assert_eq!(triangles.len(), 4);
        let covered: i64 = triangles
            .iter()
            .map(|t| turn(points[t[0]], points[t[1]], points[t[2]]))
            .sum();
        assert_eq!(covered, area2);
    }
}
