//! A baked tile prepared for queries: a bounding-volume tree over its polygons and its
//! tile-border edges sorted by side.

use glam::{Vec2, Vec3, Vec3A};
use wide::f32x8;

use super::tile::{TileData, TilePoly};
use crate::geom::{Aabb, next_around};

/// A node of a tile's polygon tree, stored depth-first: a leaf names a polygon; an inner
/// node gives how many nodes its subtree spans, so a traversal skips it in one step.
/// The bounds are kept as 16-byte vectors: a node's overlap test is then two vector
/// compares and a mask, where three-float corners would take six scalar compares and
/// branches (the traversal is most of a nearest-polygon snap).
#[derive(Clone, Copy, Debug)]
pub struct BvhNode {
    /// Smallest corner of everything below, metres.
    pub min: Vec3A,
    /// Largest corner of everything below, metres.
    pub max: Vec3A,
    /// `>= 0`: the polygon of a leaf; `< 0`: minus the number of nodes in this subtree.
    pub item: i32,
}

impl BvhNode {
    fn new(bounds: Aabb, item: i32) -> BvhNode {
        BvhNode {
            min: bounds.min.into(),
            max: bounds.max.into(),
            item,
        }
    }

    /// Whether the node's bounds overlap the box `min..=max` (touching counts), as
    /// [`Aabb::overlaps`].
    #[inline]
    fn overlaps(&self, min: Vec3A, max: Vec3A) -> bool {
        (self.min.cmple(max) & min.cmple(self.max)).all()
    }
}

/// A polygon edge on the tile border.
#[derive(Clone, Copy, Debug)]
pub struct BorderEdge {
    /// Polygon index.
    pub polygon: u16,
    /// Edge index within the polygon.
    pub edge: u8,
    /// Edge start, metres.
    pub start: Vec3,
    /// Edge end, metres.
    pub end: Vec3,
}

/// One crossable edge of a polygon, as the path search walks it: only edges with a
/// neighbour are listed, so expansion loops over exactly the ways out (no test per empty
/// edge, fewer mispredicted branches on the hottest loop of a search).
#[derive(Clone, Copy, Debug)]
pub struct Adjacent {
    /// Midpoint of the shared edge, metres (where a search places its node).
    pub midpoint: Vec3,
    /// The neighbour polygon in this tile; for a tile-border edge, the edge's number among
    /// the tile's border edges (in adjacency order), under which the snapshot keeps the
    /// portals across it ([`crate::mesh::BorderPortals`]).
    pub neighbour: u16,
    /// Edge index within the polygon.
    pub edge: u8,
    /// Tile side (0..4) for an edge on the tile border, or [`Adjacent::INTERNAL`].
    pub border_side: u8,
}

impl Adjacent {
    /// `border_side` of an edge shared with a polygon of the same tile.
    pub const INTERNAL: u8 = u8::MAX;
}

/// A tile ready for queries.
///
/// Besides the baked data it keeps, per polygon, its corners and its detail triangles as
/// world-space points in contiguous arrays: the hot queries (nearest polygon, height,
/// search) then read straight through memory instead of through two levels of indices.
/// The two questions the crowd asks of every moved agent are answered from data prepared
/// here: whether a point lies over a polygon (its edges as eight `f32` lanes, one `wide`
/// test) and the height there (one plane for a coplanar polygon, otherwise per detail
/// triangle its barycentric weight gradients, so no division per lookup).
#[derive(Debug)]
pub struct RuntimeTile {
    /// The baked data.
    pub data: TileData,
    /// Depth-first polygon tree.
    pub bvh: Vec<BvhNode>,
    /// Border edges per side (0: -X, 1: +Z, 2: +X, 3: -Z).
    pub border: [Vec<BorderEdge>; 4],
    /// Corners of each polygon (the first `vertex_count` are used), metres.
    pub corners: Vec<[Vec3; 6]>,
    /// Per polygon, its edges as eight lanes for [`RuntimeTile::contains_xz`].
    edge_lanes: Vec<EdgeLanes>,
    /// Detail triangles of all polygons, metres; polygon `p`'s are
    /// `detail[detail_ranges[p].0 as usize..detail_ranges[p].1 as usize]`.
    pub detail: Vec<[Vec3; 3]>,
    /// Range of each polygon's triangles in `detail`.
    pub detail_ranges: Vec<(u32, u32)>,
    /// The detail triangles prepared for [`RuntimeTile::height_at`] (those with area seen
    /// from above), and each polygon's range of them.
    height_triangles: Vec<HeightTriangle>,
    height_ranges: Vec<(u32, u32)>,
    /// Crossable edges of all polygons; polygon `p`'s are
    /// `adjacency[adjacency_start[p] as usize..adjacency_start[p + 1] as usize]`.
    pub adjacency: Vec<Adjacent>,
    /// Start of each polygon's edges in `adjacency`, plus the end (length polygons + 1).
    pub adjacency_start: Vec<u32>,
    /// Per polygon, the height gradient (dh/dx, dh/dz) when all its detail triangles share
    /// it (a flat or evenly sloped polygon, most of a level); `None` when it varies.
    pub uniform_gradient: Vec<Option<Vec2>>,
    /// Per polygon, the steepest gradient length |g| of its detail triangles: the slope
    /// factor `k = sqrt(1 + |g|^2)` that bounds speed anywhere on it.
    pub steepest_gradient: Vec<f32>,
    /// Boundary edges (no neighbour: the edge of walkable space) of each polygon and of its
    /// neighbours in this tile, as horizontal (x, z) segments; polygon `p`'s are
    /// `walls[walls_start[p] as usize..walls_start[p + 1] as usize]`. Local avoidance reads
    /// them so it never steers an agent into the boundary.
    pub walls: Vec<Wall>,
    /// Start of each polygon's segments in `walls`, plus the end (length polygons + 1).
    pub walls_start: Vec<u32>,
}

/// A polygon's edges for the point-over-polygon test, one edge per lane: its start and
/// its vector (end - start), seen from above. A polygon has at most six corners; the spare
/// lanes hold a zero edge at the origin, whose side value is 0 for every finite point, so
/// they always pass. The test is then one `wide` pass with no loop and no branch per edge
/// (the crowd runs it for every agent moved, several times a step), and each lane computes
/// exactly what the edge-by-edge test did, so the answers are the same to the bit.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
struct EdgeLanes {
    start_x: [f32; 8],
    start_z: [f32; 8],
    edge_x: [f32; 8],
    edge_z: [f32; 8],
}

impl EdgeLanes {
    fn new(corners: &[Vec3]) -> EdgeLanes {
        let mut lanes = EdgeLanes::default();
        for (edge, &start) in corners.iter().enumerate() {
            let end = corners[(edge + 1) % corners.len()];
            lanes.start_x[edge] = start.x;
            lanes.start_z[edge] = start.z;
            lanes.edge_x[edge] = end.x - start.x;
            lanes.edge_z[edge] = end.z - start.z;
        }
        lanes
    }

    /// Whether `point` is on the inner side of every edge (the edge's perp-dot with the
    /// point at most 1e-6; a NaN side fails).
    #[inline]
    fn contains(&self, point: Vec2) -> bool {
        let (x, z) = (f32x8::splat(point.x), f32x8::splat(point.y));
        let side = f32x8::from(self.edge_x) * (z - f32x8::from(self.start_z))
            - f32x8::from(self.edge_z) * (x - f32x8::from(self.start_x));
        side.simd_le(f32x8::splat(1e-6)).all()
    }
}

/// A detail triangle prepared for height lookups: the barycentric weights of its second
/// and third corners are linear in the point's offset from the first, so their gradients
/// are stored (divided by the area once, here, rather than per lookup) with the corners'
/// heights. Working from the first corner, not the world origin, keeps the weights as
/// precise as the triangle is small.
#[derive(Clone, Copy, Debug)]
struct HeightTriangle {
    /// The first corner, seen from above.
    origin: Vec2,
    /// d(weight)/d(x, z) of the second and third corners.
    second_gradient: Vec2,
    third_gradient: Vec2,
    /// The corners' heights, metres.
    heights: [f32; 3],
    /// The height gradient (dh/dx, dh/dz) of its plane: the slope of its patch (spec
    /// 004's piecewise planar surface), computed once here rather than per agent.
    gradient: Vec2,
}

impl HeightTriangle {
    /// `None` for a triangle without area seen from above (a vertical one has no height to
    /// give at a point).
    fn new([a, b, c]: [Vec3; 3]) -> Option<HeightTriangle> {
        let (to_b, to_c) = (
            Vec2::new(b.x - a.x, b.z - a.z),
            Vec2::new(c.x - a.x, c.z - a.z),
        );
        let area = to_b.perp_dot(to_c);
        if area.abs() < 1e-12 {
            return None;
        }
        Some(HeightTriangle {
            origin: Vec2::new(a.x, a.z),
            // weight_b = (d x to_c) / area, weight_c = (to_b x d) / area, d = point - a.
            second_gradient: Vec2::new(to_c.y, -to_c.x) / area,
            third_gradient: Vec2::new(-to_b.y, to_b.x) / area,
            heights: [a.y, b.y, c.y],
            gradient: triangle_gradient([a, b, c])?,
        })
    }

    /// The point's barycentric weights (first, second, third corner); negative outside.
    #[inline]
    fn weights(&self, point: Vec2) -> (f32, f32, f32) {
        let offset = point - self.origin;
        let (second, third) = (
            offset.dot(self.second_gradient),
            offset.dot(self.third_gradient),
        );
        (1.0 - second - third, second, third)
    }
}

/// Height gradient (dh/dx, dh/dz) of the plane through a triangle; `None` when the triangle
/// is vertical or degenerate seen from above.
pub fn triangle_gradient([a, b, c]: [Vec3; 3]) -> Option<Vec2> {
    let (e1, e2) = (b - a, c - a);
    let determinant = e1.x * e2.z - e1.z * e2.x;
    if determinant.abs() < 1e-12 {
        return None;
    }
    Some(Vec2::new(
        (e1.y * e2.z - e1.z * e2.y) / determinant,
        (e1.x * e2.y - e1.y * e2.x) / determinant,
    ))
}

/// A boundary segment seen from above, prepared for the avoid pass, which tests every
/// segment near every agent every frame: its unit direction and length are stored, so a
/// test is two dot products (no division or square root per agent and segment).
/// Walkable space lies on the segment's right (`direction.perp_dot(point - start) < 0`,
/// the tile winding).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wall {
    /// Start (x, z), metres.
    pub start: Vec2,
    /// Unit direction from start to end.
    pub direction: Vec2,
    /// Length, metres (positive: degenerate edges are left out).
    pub length_m: f32,
}

impl Wall {
    /// The segment from `start` to `end`, or `None` when it has no length to speak of.
    pub fn new(start: Vec2, end: Vec2) -> Option<Wall> {
        let length_m = start.distance(end);
        (length_m > 1e-5).then(|| Wall {
            start,
            direction: (end - start) / length_m,
            length_m,
        })
    }

    /// The end (x, z), metres.
    pub fn end(&self) -> Vec2 {
        self.start + self.direction * self.length_m
    }
}

/// The boundary edges of every polygon's one-ring in its tile (see `RuntimeTile::walls`).
fn walls_near_polygons(data: &TileData, corners: &[[Vec3; 6]]) -> (Vec<Wall>, Vec<u32>) {
    let own_walls = |polygon: usize| {
        let tile_polygon = &data.polygons[polygon];
        let count = usize::from(tile_polygon.vertex_count);
        let corners = &corners[polygon];
        (0..count)
            .filter(move |&edge| tile_polygon.neighbours[edge] == TilePoly::NO_NEIGHBOUR)
            .filter_map(move |edge| {
                let (a, b) = (corners[edge], corners[(edge + 1) % count]);
                Wall::new(Vec2::new(a.x, a.z), Vec2::new(b.x, b.z))
            })
    };
    // Room for a few walls a polygon (its own and its neighbours'), so the list rarely grows.
    let mut walls = Vec::with_capacity(6 * data.polygons.len());
    let mut walls_start = Vec::with_capacity(data.polygons.len() + 1);
    for (index, polygon) in data.polygons.iter().enumerate() {
        walls_start.push(walls.len() as u32);
        walls.extend(own_walls(index));
        for &neighbour in &polygon.neighbours[..usize::from(polygon.vertex_count)] {
            let internal =
                neighbour != TilePoly::NO_NEIGHBOUR && neighbour & TilePoly::TILE_EDGE == 0;
            if internal {
                walls.extend(own_walls(usize::from(neighbour)));
            }
        }
    }
    walls_start.push(walls.len() as u32);
    (walls, walls_start)
}

impl RuntimeTile {
    /// Prepares a tile (the data must have passed [`TileData::validate`]).
    pub fn new(data: TileData) -> RuntimeTile {
        let mut detail = Vec::with_capacity(data.detail_triangles.len());
        let mut detail_ranges = Vec::with_capacity(data.polygons.len());
        for p in 0..data.polygons.len() {
            let first = detail.len() as u32;
            detail.extend(data.detail_triangles_of(p));
            detail_ranges.push((first, detail.len() as u32));
        }
        let mut items: Vec<(u16, Aabb)> = (0..data.polygons.len())
            .map(|p| {
                let mut bounds: Aabb = data.polygons[p]
                    .vertex_indices()
                    .iter()
                    .map(|&v| data.vertex(v))
                    .collect();
                let (first, end) = detail_ranges[p];
                for &[a, b, c] in &detail[first as usize..end as usize] {
                    bounds.add_point(a);
                    bounds.add_point(b);
                    bounds.add_point(c);
                }
                (p as u16, bounds)
            })
            .collect();
        let mut bvh = Vec::with_capacity(items.len() * 2);
        // A tile can hold triangles and still no polygon (all of it too steep or too narrow).
        if !items.is_empty() {
            build_bvh(&mut items, &mut bvh);
        }
        let mut border: [Vec<BorderEdge>; 4] = Default::default();
        for (index, polygon) in data.polygons.iter().enumerate() {
            let count = polygon.vertex_count as usize;
            for edge in 0..count {
                let neighbour = polygon.neighbours[edge];
                if neighbour != TilePoly::NO_NEIGHBOUR && neighbour & TilePoly::TILE_EDGE != 0 {
                    border[usize::from(neighbour & 3)].push(BorderEdge {
                        polygon: index as u16,
                        edge: edge as u8,
                        start: data.vertex(polygon.vertices[edge]),
                        end: data.vertex(polygon.vertices[(edge + 1) % count]),
                    });
                }
            }
        }
        let corners: Vec<[Vec3; 6]> = (0..data.polygons.len())
            .map(|p| {
                let mut corners = [Vec3::ZERO; 6];
                for (slot, &v) in corners.iter_mut().zip(data.polygons[p].vertex_indices()) {
                    *slot = data.vertex(v);
                }
                corners
            })
            .collect();
        let edge_lanes = data
            .polygons
            .iter()
            .zip(&corners)
            .map(|(polygon, corners)| EdgeLanes::new(&corners[..usize::from(polygon.vertex_count)]))
            .collect();
        let mut height_triangles = Vec::with_capacity(detail.len());
        let height_ranges: Vec<(u32, u32)> = detail_ranges
            .iter()
            .map(|&(first, end)| {
                let start = height_triangles.len() as u32;
                height_triangles.extend(
                    detail[first as usize..end as usize]
                        .iter()
                        .filter_map(|&triangle| HeightTriangle::new(triangle)),
                );
                (start, height_triangles.len() as u32)
            })
            .collect();
        let edge_total: usize = data
            .polygons
            .iter()
            .map(|polygon| usize::from(polygon.vertex_count))
            .sum();
        let mut adjacency = Vec::with_capacity(edge_total);
        let mut adjacency_start = Vec::with_capacity(data.polygons.len() + 1);
        let mut border_edges = 0u16;
        for (polygon, corners) in data.polygons.iter().zip(&corners) {
            adjacency_start.push(adjacency.len() as u32);
            let count = usize::from(polygon.vertex_count);
            for edge in 0..count {
                let neighbour = polygon.neighbours[edge];
                if neighbour == TilePoly::NO_NEIGHBOUR {
                    continue;
                }
                let on_border = neighbour & TilePoly::TILE_EDGE != 0;
                // (Past 65,536 border edges the numbers wrap; the snapshot keeps no table
                // for such a tile, and its crossings are worked out where they happen.)
                let number = if on_border {
                    border_edges = border_edges.wrapping_add(1);
                    border_edges.wrapping_sub(1)
                } else {
                    neighbour
                };
                adjacency.push(Adjacent {
                    midpoint: (corners[edge] + corners[(edge + 1) % count]) * 0.5,
                    neighbour: number,
                    edge: edge as u8,
                    border_side: if on_border {
                        (neighbour & 3) as u8
                    } else {
                        Adjacent::INTERNAL
                    },
                });
            }
        }
        adjacency_start.push(adjacency.len() as u32);
        // Per polygon, one pass over its triangles' gradients: the one they all share (if
        // they do) and the steepest.
        // A height triangle is kept exactly where its gradient exists (both need area seen
        // from above, by the same test), so its gradients are the triangles' own.
        let (uniform_gradient, steepest_gradient) = height_ranges
            .iter()
            .map(|&(first, end): &(u32, u32)| {
                let mut gradients = height_triangles[first as usize..end as usize]
                    .iter()
                    .map(|triangle: &HeightTriangle| triangle.gradient);
                let Some(first) = gradients.next() else {
                    return (None, 0.0);
                };
                let (mut uniform, mut steepest) = (true, first.length());
                for gradient in gradients {
                    uniform &= gradient.distance(first) < 1e-4;
                    steepest = steepest.max(gradient.length());
                }
                (uniform.then_some(first), steepest)
            })
            .unzip();
        let (walls, walls_start) = walls_near_polygons(&data, &corners);
        RuntimeTile {
            walls,
            walls_start,
            data,
            bvh,
            border,
            corners,
            edge_lanes,
            detail,
            detail_ranges,
            height_triangles,
            height_ranges,
            adjacency,
            adjacency_start,
            uniform_gradient,
            steepest_gradient,
        }
    }

    /// Calls `visit(polygon)` for every polygon whose bounds overlap `query`.
    pub fn for_each_overlapping(&self, query: &Aabb, mut visit: impl FnMut(u16)) {
        self.for_each_overlapping_bounds(query, |polygon, _| visit(polygon));
    }

    /// [`RuntimeTile::for_each_overlapping`], with each polygon's bounds (its vertices and
    /// its detail triangles: every point of its surface lies inside them).
    pub fn for_each_overlapping_bounds(&self, query: &Aabb, mut visit: impl FnMut(u16, Aabb)) {
        let (query_min, query_max) = (Vec3A::from(query.min), Vec3A::from(query.max));
        let mut index = 0;
        while index < self.bvh.len() {
            let node = &self.bvh[index];
            let overlaps = node.overlaps(query_min, query_max);
            if node.item >= 0 {
                if overlaps {
                    let bounds = Aabb {
                        min: node.min.into(),
                        max: node.max.into(),
                    };
                    visit(node.item as u16, bounds);
                }
                index += 1;
            } else if overlaps {
                index += 1;
            } else {
                index += (-node.item) as usize;
            }
        }
    }

    /// The polygon's corners, metres.
    pub fn corners(&self, polygon: u16) -> impl Iterator<Item = Vec3> + '_ {
        let count = usize::from(self.data.polygons[polygon as usize].vertex_count);
        self.corners[polygon as usize][..count].iter().copied()
    }

    /// The polygon's crossable edges.
    #[inline]
    pub fn adjacent(&self, polygon: u16) -> &[Adjacent] {
        let index = usize::from(polygon);
        &self.adjacency
            [self.adjacency_start[index] as usize..self.adjacency_start[index + 1] as usize]
    }

    /// Boundary segments (x, z) of the polygon and its neighbours in this tile.
    #[inline]
    pub fn walls_near(&self, polygon: u16) -> &[Wall] {
        let index = usize::from(polygon);
        &self.walls[self.walls_start[index] as usize..self.walls_start[index + 1] as usize]
    }

    /// The polygon's detail triangles, metres.
    #[inline]
    pub fn detail_triangles(&self, polygon: u16) -> &[[Vec3; 3]] {
        let (first, end) = self.detail_ranges[polygon as usize];
        &self.detail[first as usize..end as usize]
    }

    /// Height of the detail surface at a horizontal point inside the polygon, or at the
    /// closest point of the detail mesh's boundary when the point is just outside it.
    pub fn height_at(&self, polygon: u16, point: Vec2) -> f32 {
        if let Some(gradient) = self.uniform_gradient[polygon as usize] {
            // A planar polygon: its plane through any corner.
            let corner = self.corners[polygon as usize][0];
            return corner.y
                + gradient.x * (point.x - corner.x)
                + gradient.y * (point.y - corner.z);
        }
        let (first, end) = self.height_ranges[polygon as usize];
        let mut best = (f32::INFINITY, 0.0f32);
        for triangle in &self.height_triangles[first as usize..end as usize] {
            let (wa, wb, wc) = triangle.weights(point);
            let outside = (-wa).max(-wb).max(-wc).max(0.0);
            if outside < best.0 {
                let (wa, wb, wc) = (wa.clamp(0.0, 1.0), wb.clamp(0.0, 1.0), wc.clamp(0.0, 1.0));
                let sum = (wa + wb + wc).max(1e-12);
                let [ha, hb, hc] = triangle.heights;
                best = (outside, (wa * ha + wb * hb + wc * hc) / sum);
                if outside == 0.0 {
                    break;
                }
            }
        }
        best.1
    }

    /// The height gradient (dh/dx, dh/dz) of the detail triangle under a horizontal point
    /// inside the polygon (or the nearest one when the point is just outside): the slope
    /// the crowd scales speeds by, with the triangle's index in the tile as a hint for
    /// the next lookup. One lookup for a planar polygon; otherwise the hinted triangle is
    /// tried first (an agent stays on one detail triangle for many steps), then the same
    /// walk as [`RuntimeTile::height_at`] over triangles whose gradients were computed
    /// with the tile. Any hint is safe: one outside the polygon's triangles is ignored.
    pub fn gradient_at(&self, polygon: u16, point: Vec2, hint: u32) -> (Vec2, u32) {
        if let Some(gradient) = self.uniform_gradient[polygon as usize] {
            return (gradient, hint);
        }
        let (first, end) = self.height_ranges[polygon as usize];
        if (first..end).contains(&hint) {
            let triangle = &self.height_triangles[hint as usize];
            let (wa, wb, wc) = triangle.weights(point);
            if wa >= 0.0 && wb >= 0.0 && wc >= 0.0 {
                return (triangle.gradient, hint);
            }
        }
        let mut best = (f32::INFINITY, Vec2::ZERO, hint);
        for (index, triangle) in
            (first..end).zip(&self.height_triangles[first as usize..end as usize])
        {
            let (wa, wb, wc) = triangle.weights(point);
            let outside = (-wa).max(-wb).max(-wc).max(0.0);
            if outside < best.0 {
                best = (outside, triangle.gradient, index);
                if outside == 0.0 {
                    break;
                }
            }
        }
        (best.1, best.2)
    }

    /// Whether the horizontal point (x, z) lies over the polygon (its edges included, with
    /// 1e-6 of slack for points computed on an edge). A NaN point lies over nothing.
    #[inline]
    pub fn contains_xz(&self, polygon: u16, point: Vec2) -> bool {
        self.edge_lanes[polygon as usize].contains(point)
    }

    /// Closest point on the polygon to `point`, with the height of the detail surface, and
    /// whether `point` lies over the polygon (seen from above).
    pub fn closest_point(&self, polygon: u16, point: Vec3) -> (Vec3, bool) {
        let count = usize::from(self.data.polygons[polygon as usize].vertex_count);
        let mut corners = [Vec2::ZERO; 6];
        for (flat, corner) in corners
            .iter_mut()
            .zip(&self.corners[polygon as usize][..count])
        {
            *flat = Vec2::new(corner.x, corner.z);
        }
        let corners = &corners[..count];
        let target = Vec2::new(point.x, point.z);
        let inside = self.contains_xz(polygon, target);
        let horizontal = if inside {
            target
        } else {
            let mut best = (f32::INFINITY, target);
            for i in 0..count {
                let (a, b) = (corners[i], corners[next_around(i, count)]);
                let edge = b - a;
                let t = ((target - a).dot(edge) / edge.length_squared().max(1e-12)).clamp(0.0, 1.0);
                let candidate = a + edge * t;
                let distance = candidate.distance_squared(target);
                if distance < best.0 {
                    best = (distance, candidate);
                }
            }
            best.1
        };
        (
            Vec3::new(
                horizontal.x,
                self.height_at(polygon, horizontal),
                horizontal.y,
            ),
            inside,
        )
    }
}

/// Builds the subtree over `items` depth-first into `nodes`, splitting at the median along
/// the longest axis of the centres.
fn build_bvh(items: &mut [(u16, Aabb)], nodes: &mut Vec<BvhNode>) {
    // Twice each item's centre, worked out once (a split compares them many times), with
    // the item's place in `items`: the split orders these, then `items` follows.
    let mut keyed: Vec<([f32; 3], u16, Aabb)> = items
        .iter()
        .map(|&(item, bounds)| ((bounds.min + bounds.max).to_array(), item, bounds))
        .collect();
    build_bvh_keyed(&mut keyed, nodes);
}

/// [`build_bvh`] over items with their doubled centres: split at the median of the
/// centres along the axis they spread most (ties by polygon number), recursively.
fn build_bvh_keyed(items: &mut [([f32; 3], u16, Aabb)], nodes: &mut Vec<BvhNode>) {
    if items.len() == 1 {
        nodes.push(BvhNode::new(items[0].2, i32::from(items[0].1)));
        return;
    }
    let mut bounds = Aabb::EMPTY;
    let mut centres = Aabb::EMPTY;
    for (doubled_centre, _, item) in items.iter() {
        bounds.add_box(item);
        centres.add_point(Vec3::from_array(*doubled_centre) * 0.5);
    }
    let size = centres.size();
    let axis = if size.x >= size.y && size.x >= size.z {
        0
    } else if size.z >= size.y {
        2
    } else {
        1
    };
    let middle = items.len() / 2;
    items.select_nth_unstable_by(middle, |a, b| {
        a.0[axis].total_cmp(&b.0[axis]).then(a.1.cmp(&b.1))
    });
    let start = nodes.len();
    nodes.push(BvhNode::new(bounds, 0));
    let (left, right) = items.split_at_mut(middle);
    build_bvh_keyed(left, nodes);
    build_bvh_keyed(right, nodes);
    nodes[start].item = -((nodes.len() - start) as i32);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tile_without_polygons_is_prepared_and_finds_nothing() {
        let tile = RuntimeTile::new(TileData::default());
        assert!(tile.bvh.is_empty());
        let mut visited = 0;
        tile.for_each_overlapping(
            &Aabb {
                min: Vec3::splat(-1e6),
                max: Vec3::splat(1e6),
            },
            |_| visited += 1,
        );
        assert_eq!(visited, 0);
    }

    /// The edge-by-edge test the lanes replace, written out.
    fn contains_edge_by_edge(corners: &[Vec3], point: Vec2) -> bool {
        (0..corners.len()).all(|i| {
            let (a, b) = (corners[i], corners[(i + 1) % corners.len()]);
            Vec2::new(b.x - a.x, b.z - a.z).perp_dot(point - Vec2::new(a.x, a.z)) <= 1e-6
        })
    }

    #[test]
    fn the_edge_lanes_answer_as_the_edge_by_edge_test() {
        let mut random = crate::geom::SplitMix64::new(5);
        let mut value = |scale: f32| (random.next_f32() * 2.0 - 1.0) * scale;
        let (mut inside, mut outside) = (0, 0);
        for round in 0..2_000 {
            // A convex polygon of 3 to 6 corners, clockwise seen from above (walkable on
            // the right of each edge, as baked), around a random centre.
            let count = 3 + round % 4;
            let centre = Vec3::new(value(50.0), value(5.0), value(50.0));
            let radius = 0.5 + value(4.0).abs();
            let corners: Vec<Vec3> = (0..count)
                .map(|i| {
                    let angle = -(i as f32) * std::f32::consts::TAU / count as f32;
                    centre + Vec3::new(angle.cos(), 0.0, angle.sin()) * radius
                })
                .collect();
            let lanes = EdgeLanes::new(&corners);
            for probe in 0..16 {
                // Points around the polygon, and points computed on its edges and corners.
                let point = if probe < 12 {
                    Vec2::new(centre.x, centre.z) + Vec2::new(value(1.5), value(1.5)) * radius
                } else {
                    let (a, b) = (corners[probe % count], corners[(probe + 1) % count]);
                    let t = [0.0, 0.5, 1.0, value(1.0).abs()][probe % 4];
                    let on = a + (b - a) * t;
                    Vec2::new(on.x, on.z)
                };
                let expected = contains_edge_by_edge(&corners, point);
                assert_eq!(
                    lanes.contains(point),
                    expected,
                    "round {round} probe {probe}"
                );
                if expected {
                    inside += 1;
                } else {
                    outside += 1;
                }
            }
            assert!(!lanes.contains(Vec2::new(f32::NAN, centre.z)));
        }
        // Both answers were exercised, many times.
        assert!(
            inside > 5_000 && outside > 5_000,
            "{inside} inside, {outside} outside"
        );
    }

    #[test]
    fn prepared_height_triangles_weigh_points_as_the_signed_areas_do() {
        let mut random = crate::geom::SplitMix64::new(9);
        let mut value = |scale: f32| (random.next_f32() * 2.0 - 1.0) * scale;
        let turn = |p: Vec2, q: Vec2, r: Vec2| (q - p).perp_dot(r - p);
        for round in 0..5_000 {
            // Triangles a few metres across, far from the origin as in a large level.
            let centre = Vec3::new(value(500.0), value(20.0), value(500.0));
            let corner = |v: &mut dyn FnMut(f32) -> f32| centre + Vec3::new(v(3.0), v(1.0), v(3.0));
            let (a, b, c) = (corner(&mut value), corner(&mut value), corner(&mut value));
            let flat = |v: Vec3| Vec2::new(v.x, v.z);
            let area = turn(flat(a), flat(b), flat(c));
            let Some(triangle) = HeightTriangle::new([a, b, c]) else {
                assert!(area.abs() < 1e-12, "round {round}: area {area} refused");
                continue;
            };
            let point = flat(centre) + Vec2::new(value(4.0), value(4.0));
            let (wa, wb, wc) = triangle.weights(point);
            let expected = (
                turn(point, flat(b), flat(c)) / area,
                turn(flat(a), point, flat(c)) / area,
                turn(flat(a), flat(b), point) / area,
            );
            // Relative to the weights' scale (a thin triangle has large weights off it).
            let scale = 1.0 + expected.0.abs().max(expected.1.abs()).max(expected.2.abs());
            for (got, want) in [(wa, expected.0), (wb, expected.1), (wc, expected.2)] {
                assert!(
                    (got - want).abs() <= 1e-3 * scale,
                    "round {round}: {got} vs {want}"
                );
            }
            assert!((wa + wb + wc - 1.0).abs() <= 1e-5 * scale);
        }
    }
}
