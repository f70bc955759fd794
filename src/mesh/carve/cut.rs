//! Cutting: each ground polygon a footprint overlaps split along the footprint's edges into
//! convex pieces, and the pieces' new corners welded and given their floor's height.

use glam::{Vec2, Vec3};

use super::{
    Corner, EdgeKind, ON_LINE_M, Outline, PIECE_AREA_MIN_M2, Piece, Ring, RingCorner, RingState,
    WELD_HEIGHT_M, after,
};
use crate::mesh::tile::{PolyFlags, TileData};

/// Buffers carving reuses from polygon to polygon: every piece's corners (a [`Piece`]
/// names its run of them), the pieces of the footprint being cut, and the halves a
/// split writes.
pub(super) struct PieceStore {
    pub(super) corners: Vec<Corner>,
    next: Vec<Piece>,
    rest: Vec<Corner>,
    left: Vec<Corner>,
    right: Vec<Corner>,
}

impl PieceStore {
    /// A store with room for `corners` corners.
    pub(super) fn with_capacity(corners: usize) -> PieceStore {
        PieceStore {
            corners: Vec::with_capacity(corners),
            next: Vec::with_capacity(32),
            rest: Vec::with_capacity(32),
            left: Vec::with_capacity(32),
            right: Vec::with_capacity(32),
        }
    }

    /// The corners of `piece`.
    pub(super) fn corners_of(&self, piece: &Piece) -> &[Corner] {
        &self.corners[piece.start as usize..(piece.start + piece.len) as usize]
    }
}

/// A piece of `corners` appended to `store`.
fn stored_piece(store: &mut Vec<Corner>, corners: &[Corner], area: u8, flags: u16) -> Piece {
    let start = store.len() as u32;
    store.extend_from_slice(corners);
    Piece {
        start,
        len: corners.len() as u32,
        area,
        flags,
    }
}

/// Carves baked polygon `index`: `pieces` (cleared first) gets the pieces it is cut into,
/// their corners in `store`. Returns whether a footprint changed it (with none, `pieces`
/// is left empty).
pub(super) fn carve_polygon(
    base: &TileData,
    index: usize,
    outlines: &[Outline],
    store: &mut PieceStore,
    pieces: &mut Vec<Piece>,
) -> bool {
    pieces.clear();
    let polygon = &base.polygons[index];
    if polygon.layer != 0 {
        return false;
    }
    let count = usize::from(polygon.vertex_count);
    let mut low = Vec3::splat(f32::INFINITY);
    let mut high = Vec3::splat(f32::NEG_INFINITY);
    for &vertex in &polygon.vertices[..count] {
        let at = base.vertex(vertex);
        (low, high) = (low.min(at), high.max(at));
    }
    for triangle in base.detail_triangles_of(index) {
        for at in triangle {
            (low, high) = (low.min(at), high.max(at));
        }
    }
    let mut changed_any = false;
    for outline in outlines {
        let reaches = outline.low.x < high.x
            && outline.high.x > low.x
            && outline.low.y < high.z
            && outline.high.y > low.z
            && outline.footprint.floor_min_m <= high.y
            && outline.footprint.floor_max_m >= low.y;
        if !reaches {
            continue;
        }
        if pieces.is_empty() {
            let start = store.corners.len() as u32;
            store.corners.extend((0..count).map(|corner| {
                let vertex = polygon.vertices[corner];
                let at = base.vertex(vertex);
                Corner {
                    at: Vec2::new(at.x, at.z),
                    vertex: Some(vertex),
                    next_edge: EdgeKind::Baked(polygon.neighbours[corner]),
                }
            }));
            pieces.push(Piece {
                start,
                len: count as u32,
                area: polygon.area,
                flags: polygon.flags,
            });
        }
        let mut next = std::mem::take(&mut store.next);
        next.clear();
        let mut changed = false;
        for &piece in pieces.iter() {
            match subtract(store, piece, outline, &mut next) {
                None => next.push(piece),
                Some(_) => changed = true,
            }
        }
        // A footprint that missed every piece leaves the polygon as it was so far.
        if changed {
            std::mem::swap(pieces, &mut next);
            changed_any = true;
        }
        store.next = next;
    }
    if !changed_any {
        pieces.clear();
    }
    changed_any
}

/// `piece` (convex) less the counter-clockwise convex `outline`: the convex parts outside
/// it pushed to `out`, then, for a marking outline, the part inside it (if it has area)
/// with the outline's area. `None` when they do not overlap.
fn subtract(
    store: &mut PieceStore,
    piece: Piece,
    outline: &Outline,
    out: &mut Vec<Piece>,
) -> Option<()> {
    let PieceStore {
        corners: stored,
        rest,
        left,
        right,
        ..
    } = store;
    rest.clear();
    rest.extend_from_slice(&stored[piece.start as usize..(piece.start + piece.len) as usize]);
    if !overlap(rest, outline) {
        return None;
    }
    for (&from, &direction) in outline.corners.iter().zip(&outline.directions) {
        if direction == Vec2::ZERO {
            continue;
        }
        // A line with the whole rest on its inner side (or on it) cuts nothing off.
        if rest
            .iter()
            .all(|corner| direction.perp_dot(corner.at - from) >= -ON_LINE_M)
        {
            continue;
        }
        split(rest, from, direction, left, right);
        if has_area(right) {
            out.push(stored_piece(stored, right, piece.area, piece.flags));
        }
        if !has_area(left) {
            return Some(());
        }
        std::mem::swap(rest, left);
    }
    if let Some(area) = outline.footprint.marks {
        out.push(stored_piece(
            stored,
            rest,
            area.0,
            PolyFlags::for_area(area.0),
        ));
    }
    Some(())
}

/// Whether a convex polygon and a footprint overlap with area (separating axes; touching
/// is apart).
fn overlap(corners: &[Corner], outline: &Outline) -> bool {
    // Whether every one of `others` lies on the outer side (or on) the edge from `from`
    // along `direction` (unit), the inner side being left of it for `inner_sign` 1.
    fn separated(
        from: Vec2,
        direction: Vec2,
        inner_sign: f32,
        mut others: impl Iterator<Item = Vec2>,
    ) -> bool {
        others.all(|point| inner_sign * direction.perp_dot(point - from) <= ON_LINE_M)
    }
    let points = || corners.iter().map(|c| c.at);
    // The footprint is counter-clockwise: its inside is left of each edge.
    if outline
        .corners
        .iter()
        .zip(&outline.directions)
        .any(|(&from, &direction)| separated(from, direction, 1.0, points()))
    {
        return false;
    }
    let sign = doubled_area(corners).signum();
    let count = corners.len();
    !(0..count).any(|i| {
        let from = corners[i].at;
        let direction = (corners[after(i, count)].at - from).normalize_or_zero();
        separated(from, direction, sign, outline.corners.iter().copied())
    })
}

/// Twice the signed area of a ring of corners (positive counter-clockwise).
fn doubled_area(corners: &[Corner]) -> f32 {
    let count = corners.len();
    (0..count)
        .map(|i| corners[i].at.perp_dot(corners[after(i, count)].at))
        .sum()
}

fn has_area(corners: &[Corner]) -> bool {
    corners.len() >= 3 && doubled_area(corners).abs() > 2.0 * PIECE_AREA_MIN_M2
}

/// A convex polygon split by the line through `point` along `direction` (unit) into the
/// part left of it and the part right of it (written over `left` and `right`), each with
/// its edges' kinds (a corner on the line goes to both).
fn split(
    corners: &[Corner],
    point: Vec2,
    direction: Vec2,
    left: &mut Vec<Corner>,
    right: &mut Vec<Corner>,
) {
    let count = corners.len();
    let side_of = |index: usize| direction.perp_dot(corners[index].at - point);
    let class = |side: f32| {
        if side > ON_LINE_M {
            1
        } else if side < -ON_LINE_M {
            -1
        } else {
            0
        }
    };
    left.clear();
    right.clear();
    for index in 0..count {
        let next = after(index, count);
        let (a, side_a, side_b) = (corners[index], side_of(index), side_of(next));
        let (class_a, class_b) = (class(side_a), class(side_b));
        // After a corner on one side, the edge is the baked one while the next corner on
        // that side lies along it; otherwise the side's outline runs along the line.
        if class_a >= 0 {
            let along = class_a > 0 || class_b >= 0;
            left.push(Corner {
                next_edge: if along { a.next_edge } else { EdgeKind::Cut },
                ..a
            });
        }
        if class_a <= 0 {
            let along = class_a < 0 || class_b <= 0;
            right.push(Corner {
                next_edge: if along { a.next_edge } else { EdgeKind::Cut },
                ..a
            });
        }
        if class_a * class_b < 0 {
            let at = crossing(a.at, side_a, corners[next].at, side_b);
            left.push(Corner {
                at,
                vertex: None,
                next_edge: if class_b > 0 {
                    a.next_edge
                } else {
                    EdgeKind::Cut
                },
            });
            right.push(Corner {
                at,
                vertex: None,
                next_edge: if class_b < 0 {
                    a.next_edge
                } else {
                    EdgeKind::Cut
                },
            });
        }
    }
}

/// Where the segment from `a` to `b` crosses the line, given their signed distances to
/// it; worked from the lesser end so both polygons sharing the edge get the same point.
fn crossing(a: Vec2, side_a: f32, b: Vec2, side_b: f32) -> Vec2 {
    let a_first = (a.x, a.y) <= (b.x, b.y);
    let (from, side_from, to, side_to) = if a_first {
        (a, side_a, b, side_b)
    } else {
        (b, side_b, a, side_a)
    };
    from + (to - from) * (side_from / (side_from - side_to))
}

/// A piece as a ring of tile vertices, its corners appended to `ring_store`: its baked
/// corners keep their numbers, new ones are welded to a new vertex already made there or
/// added, at the height of the detail mesh (`detail`, its triangles) of the polygon it was
/// cut from.
pub(super) fn piece_ring(
    base: &TileData,
    origin: usize,
    detail: &[HeightTriangle],
    (piece, corners): (&Piece, &[Corner]),
    made: &mut NewVertices,
    ring_store: &mut Vec<RingCorner>,
) -> Ring {
    let start = ring_store.len() as u32;
    ring_store.extend(corners.iter().map(|corner| {
        let vertex = corner.vertex.unwrap_or_else(|| {
            made.find_or_add(corner.at, origin, || {
                height_on(base, origin, detail, corner.at)
            })
        });
        RingCorner {
            vertex,
            next_edge: corner.next_edge,
        }
    }));
    Ring {
        origin,
        start,
        len: corners.len() as u32,
        area: piece.area,
        flags: piece.flags,
        state: RingState::Carved,
    }
}

/// The tile's vertices with those carving made, the latter findable by place.
pub(super) struct NewVertices {
    pub(super) vertices: Vec<[f32; 3]>,
    pub(super) baked_count: usize,
    /// Per new vertex, the baked polygon it was made from.
    pub(super) origins: Vec<usize>,
    /// The new vertices by x, then by number, for finding one at a place without a scan.
    pub(super) by_x: Vec<(f32, u16)>,
}

impl NewVertices {
    /// The vertex for a new corner at `at` (x, z) of a piece of baked polygon `origin`:
    /// the first new vertex within the on-line tolerance made from the same polygon (on
    /// the same floor: no height needed), else the first there within the weld height of
    /// the floor's height there (`height`, asked only then), else a new vertex at that
    /// height. One search of the list by x serves all three.
    fn find_or_add(&mut self, at: Vec2, origin: usize, height: impl FnOnce() -> f32) -> u16 {
        let first = self.by_x.partition_point(|&(x, _)| x < at.x - ON_LINE_M);
        let window = self.by_x[first..]
            .iter()
            .take_while(|&&(x, _)| x <= at.x + ON_LINE_M)
            .count();
        let (vertices, origins, baked_count) = (&self.vertices, &self.origins, self.baked_count);
        let mut near = self.by_x[first..first + window]
            .iter()
            .map(|&(_, vertex)| vertex)
            .filter(|&vertex| {
                let v = vertices[usize::from(vertex)];
                Vec2::new(v[0], v[2]).distance_squared(at) <= ON_LINE_M * ON_LINE_M
            });
        if let Some(vertex) = near
            .clone()
            .find(|&vertex| origins[usize::from(vertex) - baked_count] == origin)
        {
            return vertex;
        }
        let height = height();
        if let Some(vertex) =
            near.find(|&vertex| (vertices[usize::from(vertex)][1] - height).abs() <= WELD_HEIGHT_M)
        {
            return vertex;
        }
        // After any at the same x: with numbers rising, the list is in (x, number) order.
        let slot = first
            + self.by_x[first..first + window]
                .iter()
                .take_while(|&&(x, _)| x <= at.x)
                .count();
        self.vertices.push([at.x, height, at.y]);
        self.origins.push(origin);
        // (Checked against the limit by the caller before any number is used.)
        let vertex = (self.vertices.len() - 1).min(usize::from(u16::MAX)) as u16;
        self.by_x.insert(slot, (at.x, vertex));
        vertex
    }
}

/// One detail triangle, ready for height lookups: its corners, its bounds from above and
/// the inverse of twice its area.
pub(super) struct HeightTriangle {
    corners: [Vec3; 3],
    low: Vec2,
    high: Vec2,
    inverse_doubled: f32,
}

impl HeightTriangle {
    pub(super) fn new(corners: [Vec3; 3]) -> Option<HeightTriangle> {
        let flat = corners.map(|c| Vec2::new(c.x, c.z));
        let doubled = (flat[1] - flat[0]).perp_dot(flat[2] - flat[0]);
        (doubled.abs() > 1e-12).then(|| HeightTriangle {
            corners,
            low: flat[0].min(flat[1]).min(flat[2]),
            high: flat[0].max(flat[1]).max(flat[2]),
            inverse_doubled: 1.0 / doubled,
        })
    }

    /// The height of its plane at `at`, and how far outside it `at` is in barycentric
    /// terms (0 inside).
    fn height_at(&self, at: Vec2) -> (f32, f32) {
        let [a, b, c] = self.corners;
        let (a2, b2, c2) = (
            Vec2::new(a.x, a.z),
            Vec2::new(b.x, b.z),
            Vec2::new(c.x, c.z),
        );
        let u = (c2 - b2).perp_dot(at - b2) * self.inverse_doubled;
        let v = (a2 - c2).perp_dot(at - c2) * self.inverse_doubled;
        let w = 1.0 - u - v;
        (u * a.y + v * b.y + w * c.y, (-u).max(-v).max(-w).max(0.0))
    }
}

/// The height at `at` (x, z) of the detail mesh `detail` of polygon `polygon`; off every
/// triangle (by rounding), the plane of the nearest one.
pub(super) fn height_on(
    base: &TileData,
    polygon: usize,
    detail: &[HeightTriangle],
    at: Vec2,
) -> f32 {
    let slack = Vec2::splat(ON_LINE_M);
    let holding = detail.iter().find(|triangle| {
        at.cmpge(triangle.low - slack).all()
            && at.cmple(triangle.high + slack).all()
            && triangle.height_at(at).1 == 0.0
    });
    if let Some(triangle) = holding {
        return triangle.height_at(at).0;
    }
    let nearest = detail
        .iter()
        .map(|triangle| triangle.height_at(at))
        .min_by(|x, y| x.1.total_cmp(&y.1));
    nearest.map_or_else(
        || {
            let polygon = &base.polygons[polygon];
            polygon
                .vertex_indices()
                .iter()
                .map(|&v| base.vertex(v).y)
                .sum::<f32>()
                / f32::from(polygon.vertex_count)
        },
        |(height, _)| height,
    )
}
