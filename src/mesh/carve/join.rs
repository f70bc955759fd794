//! Joining: cut points put into the edges that hold them, pieces of more than six corners
//! split, and the carved tile assembled with its adjacency and detail meshes.

use glam::{Vec2, Vec3};

use super::{
    EdgeKind, ON_LINE_M, PIECE_AREA_MIN_M2, Ring, RingCorner, RingState, WELD_HEIGHT_M, after,
    before, bounds_of,
};
use crate::mesh::tile::{DetailSubMesh, TileData, TilePoly};

/// A vertex carving made, where it stands.
// Position first: a (number, position) tuple left padding between them that copying it
// moved with overlapping stores, stalling the loads after.
#[derive(Clone, Copy, Debug)]
pub(super) struct NewPoint {
    pub(super) at: Vec3,
    pub(super) vertex: u16,
}

/// Buffers [`insert_edge_points`] reuses from ring to ring.
#[derive(Default)]
pub(super) struct EdgePointScratch {
    /// The new points within a ring's bounds.
    near: Vec<NewPoint>,
    /// Per edge, the points inside it: edge, distance along it, vertex.
    found: Vec<(usize, f32, u16)>,
    /// The ring's corners.
    positions: Vec<Vec3>,
}

/// Puts every one of `new_points` (sorted by x) lying inside an edge of `ring` into that
/// edge, in order along it, so both polygons sharing an edge have the same corners on it
/// (the grown ring written at the end of `store`). Returns whether any went in.
pub(super) fn insert_edge_points(
    ring: &mut Ring,
    store: &mut Vec<RingCorner>,
    vertices: &[[f32; 3]],
    new_points: &[NewPoint],
    scratch: &mut EdgePointScratch,
) -> bool {
    let EdgePointScratch {
        near,
        found,
        positions,
    } = scratch;
    let corners = ring.corners(store);
    let count = corners.len();
    positions.clear();
    positions.extend(
        corners
            .iter()
            .map(|corner| Vec3::from_array(vertices[usize::from(corner.vertex)])),
    );
    let Some((low, high)) = bounds_of(positions.iter().map(|at| Vec2::new(at.x, at.z))) else {
        return false;
    };
    // The points within the ring's bounds: few, where a cut passes.
    let first = new_points.partition_point(|point| point.at.x < low.x - ON_LINE_M);
    near.clear();
    near.extend(
        new_points[first..]
            .iter()
            .take_while(|point| point.at.x <= high.x + ON_LINE_M)
            .filter(|point| point.at.z >= low.y - ON_LINE_M && point.at.z <= high.y + ON_LINE_M),
    );
    if near.is_empty() {
        return false;
    }
    // Per edge, the points inside it with their distance from its start.
    found.clear();
    for edge in 0..count {
        let (a, b) = (positions[edge], positions[after(edge, count)]);
        let (a2, b2) = (Vec2::new(a.x, a.z), Vec2::new(b.x, b.z));
        // `near` is sorted by x: only the run within the edge's x span can lie inside it,
        // and of that only points within its z span.
        let first = near.partition_point(|point| point.at.x < a2.x.min(b2.x) - ON_LINE_M);
        let span_end = a2.x.max(b2.x) + ON_LINE_M;
        let (z_low, z_high) = (a2.y.min(b2.y) - ON_LINE_M, a2.y.max(b2.y) + ON_LINE_M);
        let mut candidates = near[first..]
            .iter()
            .take_while(|point| point.at.x <= span_end)
            .filter(|point| point.at.z >= z_low && point.at.z <= z_high)
            .peekable();
        if candidates.peek().is_none() {
            continue;
        }
        let along = b2 - a2;
        let length = along.length();
        if length <= ON_LINE_M {
            continue;
        }
        // In units of the edge's length: along it past either end's tolerance, off it
        // within the tolerance (no division per point).
        let (margin, length_squared) = (ON_LINE_M * length, length * length);
        for &NewPoint { at, vertex } in candidates {
            let offset = Vec2::new(at.x, at.z) - a2;
            let projected = offset.dot(along);
            if projected <= margin
                || projected >= length_squared - margin
                || along.perp_dot(offset).abs() > margin
            {
                continue;
            }
            let t = projected / length_squared;
            if (a.y + (b.y - a.y) * t - at.y).abs() <= WELD_HEIGHT_M
                && !corners.iter().any(|c| c.vertex == vertex)
            {
                found.push((edge, t, vertex));
            }
        }
    }
    if found.is_empty() {
        return false;
    }
    found.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.total_cmp(&y.1)));
    let (old_start, grown_start) = (ring.start as usize, store.len());
    let mut next = found.iter().peekable();
    for edge in 0..count {
        let kept = store[old_start + edge];
        store.push(kept);
        while let Some(&(_, _, vertex)) = next.next_if(|(e, _, _)| *e == edge) {
            store.push(RingCorner {
                vertex,
                next_edge: kept.next_edge,
            });
        }
    }
    ring.start = grown_start as u32;
    ring.len = (store.len() - grown_start) as u32;
    if ring.state == RingState::AsBaked {
        ring.state = RingState::EdgePointsAdded;
    }
    true
}

/// Rings of more than six corners split into parts of at most six (a convex polygon's
/// corners taken in order are convex); parts with no area dropped. Parts are written at
/// the end of `store`.
pub(super) fn split_large(
    rings: Vec<Ring>,
    store: &mut Vec<RingCorner>,
    vertices: &[[f32; 3]],
) -> Vec<Ring> {
    // The area of the ring through `count` vertices, the `k`th being `vertex_at(k)`.
    fn area_of(vertices: &[[f32; 3]], count: usize, vertex_at: impl Fn(usize) -> u16) -> f32 {
        let flat = |vertex: u16| {
            let at = vertices[usize::from(vertex)];
            Vec2::new(at[0], at[2])
        };
        0.5 * (0..count)
            .map(|i| flat(vertex_at(i)).perp_dot(flat(vertex_at(after(i, count)))))
            .sum::<f32>()
            .abs()
    }
    let mut out = Vec::with_capacity(rings.len());
    // A stack in reverse, so rings come out in the order they went in.
    let mut work: Vec<Ring> = rings.into_iter().rev().collect();
    while let Some(mut ring) = work.pop() {
        // Repeated vertices (a weld) are one corner.
        let count = ring.len as usize;
        let first = ring.start as usize;
        let repeated =
            (0..count).any(|i| store[first + i].vertex == store[first + after(i, count)].vertex);
        if repeated {
            let kept_start = store.len();
            for i in 0..count {
                if store[first + i].vertex != store[first + after(i, count)].vertex {
                    let kept = store[first + i];
                    store.push(kept);
                }
            }
            ring.start = kept_start as u32;
            ring.len = (store.len() - kept_start) as u32;
        }
        let (count, first) = (ring.len as usize, ring.start as usize);
        if count < 3 || area_of(vertices, count, |k| store[first + k].vertex) <= PIECE_AREA_MIN_M2 {
            continue;
        }
        if count <= 6 {
            out.push(ring);
            continue;
        }
        // Cut off six corners in a row where both parts keep area (a chord between two
        // corners of one straight run would leave a part with none).
        let at = |start: usize, i: usize| store[first + (start + i) % count].vertex;
        let start = (0..count).find(|&start| {
            area_of(vertices, 6, |k| at(start, k)) > PIECE_AREA_MIN_M2
                && area_of(vertices, count - 4, |k| at(start, k + 5)) > PIECE_AREA_MIN_M2
        });
        let Some(start) = start else {
            continue;
        };
        for range in [0..=5, 5..=count] {
            let part_start = store.len();
            for i in range {
                let corner = store[first + (start + i) % count];
                store.push(corner);
            }
            store.last_mut().expect("six corners").next_edge = EdgeKind::Cut;
            work.push(Ring {
                start: part_start as u32,
                len: (store.len() - part_start) as u32,
                state: RingState::Carved,
                ..ring
            });
        }
    }
    if !out.is_sorted_by_key(|ring| ring.origin) {
        out.sort_by_key(|ring| ring.origin);
    }
    out
}

/// The carved tile: polygons in baked order, each unchanged one as it was (neighbours
/// renumbered), each changed one as its rings; a ring's neighbours found by shared vertex
/// pairs; detail meshes kept where the corners are the baked ones and triangulated where
/// they are not.
pub(super) fn assemble(
    base: &TileData,
    changed: &[bool],
    rings: Vec<Ring>,
    store: &[RingCorner],
    vertices: Vec<[f32; 3]>,
) -> TileData {
    // Rings come sorted by origin: number every polygon of the carved tile.
    let mut first_of = Vec::with_capacity(base.polygons.len());
    let mut next_ring = 0;
    let mut total = 0u16;
    for (origin, &is_changed) in changed.iter().enumerate() {
        first_of.push(total);
        if is_changed {
            while next_ring < rings.len() && rings[next_ring].origin == origin {
                next_ring += 1;
                total += 1;
            }
        } else {
            total += 1;
        }
    }
    // The rings' edges listed by their start vertex (a chain per vertex), so the edge
    // running the other way is a walk of two or three entries, with no hashing.
    let mut first_leaving = vec![u32::MAX; vertices.len()];
    let mut ring_edges: Vec<(u16, u16, u32)> = Vec::with_capacity(rings.len() * 6);
    let mut ring_start = 0;
    for (ring_index, ring) in rings.iter().enumerate() {
        if ring_index > 0 && rings[ring_index - 1].origin != ring.origin {
            ring_start = ring_index;
        }
        let number = first_of[ring.origin] + (ring_index - ring_start) as u16;
        let corners = ring.corners(store);
        let count = corners.len();
        for edge in 0..count {
            let start = usize::from(corners[edge].vertex);
            ring_edges.push((
                corners[after(edge, count)].vertex,
                number,
                first_leaving[start],
            ));
            first_leaving[start] = (ring_edges.len() - 1) as u32;
        }
    }
    let ring_across = |start: u16, end: u16| {
        let mut at = first_leaving[usize::from(end)];
        while let Some(&(to, number, next)) = ring_edges.get(at as usize) {
            if to == start {
                return Some(number);
            }
            at = next;
        }
        None
    };
    // What lies across edge `start`-`end` of a polygon whose baked neighbour code there
    // is `code` (for a ring edge along a cut, `None`).
    let across = |start: u16, end: u16, code: Option<u16>| -> u16 {
        match code {
            Some(code) if code == TilePoly::NO_NEIGHBOUR || code & TilePoly::TILE_EDGE != 0 => code,
            Some(neighbour) if !changed[usize::from(neighbour)] => {
                let other = &base.polygons[usize::from(neighbour)];
                let count = usize::from(other.vertex_count);
                let shares = (0..count)
                    .any(|e| other.vertices[e] == end && other.vertices[after(e, count)] == start);
                if shares {
                    first_of[usize::from(neighbour)]
                } else {
                    TilePoly::NO_NEIGHBOUR
                }
            }
            _ => ring_across(start, end).unwrap_or(TilePoly::NO_NEIGHBOUR),
        }
    };
    let polygon_total = usize::from(total);
    let mut tile = TileData {
        header: base.header,
        vertices: Vec::new(),
        polygons: Vec::with_capacity(polygon_total),
        detail_meshes: Vec::with_capacity(polygon_total),
        detail_vertices: Vec::with_capacity(base.detail_vertices.len()),
        detail_triangles: Vec::with_capacity(base.detail_triangles.len() + rings.len() * 4),
        sources: base.sources.clone(),
    };
    let mut rings = rings.into_iter().peekable();
    for (origin, polygon) in base.polygons.iter().enumerate() {
        if !changed[origin] {
            let count = usize::from(polygon.vertex_count);
            let mut kept = *polygon;
            for edge in 0..count {
                let (start, end) = (polygon.vertices[edge], polygon.vertices[after(edge, count)]);
                kept.neighbours[edge] = across(start, end, Some(polygon.neighbours[edge]));
            }
            push_detail(&mut tile, base, origin, None);
            tile.polygons.push(kept);
            continue;
        }
        while let Some(ring) = rings.next_if(|ring| ring.origin == origin) {
            let corners = ring.corners(store);
            let count = corners.len();
            let mut made = TilePoly {
                vertices: [TilePoly::NO_VERTEX; 6],
                neighbours: [TilePoly::NO_NEIGHBOUR; 6],
                vertex_count: count as u8,
                area: ring.area,
                region: polygon.region,
                flags: ring.flags,
                layer: polygon.layer,
            };
            for edge in 0..count {
                let (start, end) = (corners[edge].vertex, corners[after(edge, count)].vertex);
                made.vertices[edge] = start;
                let code = match corners[edge].next_edge {
                    EdgeKind::Baked(code) => Some(code),
                    EdgeKind::Cut => None,
                };
                made.neighbours[edge] = across(start, end, code);
            }
            match ring.state {
                RingState::AsBaked => push_detail(&mut tile, base, origin, None),
                RingState::EdgePointsAdded => push_detail(&mut tile, base, origin, Some(corners)),
                RingState::Carved => {
                    let mut flat = [Vec2::ZERO; 6];
                    for (slot, corner) in flat.iter_mut().zip(corners) {
                        let at = vertices[usize::from(corner.vertex)];
                        *slot = Vec2::new(at[0], at[2]);
                    }
                    let triangle_base = tile.detail_triangles.len() as u32;
                    ear_triangles(&flat[..count], &mut tile.detail_triangles);
                    tile.detail_meshes.push(DetailSubMesh {
                        vertex_base: tile.detail_vertices.len() as u32,
                        triangle_base,
                        vertex_count: 0,
                        triangle_count: tile.detail_triangles.len() as u32 - triangle_base,
                    });
                }
            }
            tile.polygons.push(made);
        }
    }
    tile.vertices = vertices;
    tile
}

/// Polygon `origin`'s baked detail mesh appended to `tile`; with `corners`, its corner
/// slots renumbered to where the baked corners stand among them.
fn push_detail(
    tile: &mut TileData,
    base: &TileData,
    origin: usize,
    corners: Option<&[RingCorner]>,
) {
    let sub = base.detail_meshes[origin];
    let triangles = sub.triangle_base as usize..(sub.triangle_base + sub.triangle_count) as usize;
    let extras = sub.vertex_base as usize..(sub.vertex_base + sub.vertex_count) as usize;
    let vertex_base = tile.detail_vertices.len() as u32;
    let triangle_base = tile.detail_triangles.len() as u32;
    tile.detail_vertices
        .extend_from_slice(&base.detail_vertices[extras]);
    match corners {
        None => tile
            .detail_triangles
            .extend_from_slice(&base.detail_triangles[triangles]),
        Some(corners) => {
            let baked = base.polygons[origin].vertex_indices();
            let slot_of = |index: u8| {
                let index = usize::from(index);
                if index < baked.len() {
                    let vertex = baked[index];
                    corners.iter().position(|c| c.vertex == vertex).unwrap_or(0) as u8
                } else {
                    (index - baked.len() + corners.len()) as u8
                }
            };
            tile.detail_triangles.extend(
                base.detail_triangles[triangles]
                    .iter()
                    .map(|t| [slot_of(t[0]), slot_of(t[1]), slot_of(t[2]), t[3]]),
            );
        }
    }
    tile.detail_meshes.push(DetailSubMesh {
        vertex_base,
        triangle_base,
        vertex_count: sub.vertex_count,
        triangle_count: sub.triangle_count,
    });
}

/// Triangles of a convex polygon of at most six corners, some perhaps collinear, none of
/// them without area, appended to `out`: each time, the corner whose triangle with its two
/// neighbours has the most area is cut off.
fn ear_triangles(corners: &[Vec2], out: &mut Vec<[u8; 4]>) {
    let mut count = corners.len().min(6);
    // Most pieces have no collinear corners: the fan from the first corner then has no
    // flat triangle.
    let fan_is_flat = (1..count.saturating_sub(1)).any(|i| {
        (corners[i] - corners[0])
            .perp_dot(corners[i + 1] - corners[i])
            .abs()
            <= 1e-9
    });
    if !fan_is_flat {
        out.extend((1..count.saturating_sub(1)).map(|i| [0, i as u8, i as u8 + 1, 0]));
        return;
    }
    let mut left = [0u8, 1, 2, 3, 4, 5];
    while count >= 3 {
        let doubled = |i: usize| {
            let (a, b, c) = (
                corners[usize::from(left[before(i, count)])],
                corners[usize::from(left[i])],
                corners[usize::from(left[after(i, count)])],
            );
            (b - a).perp_dot(c - b).abs()
        };
        let (best, area) = (0..count)
            .map(|i| (i, doubled(i)))
            .max_by(|x, y| x.1.total_cmp(&y.1))
            .expect("three corners");
        if area <= 1e-9 {
            break;
        }
        out.push([
            left[before(best, count)],
            left[best],
            left[after(best, count)],
            0,
        ]);
        left.copy_within(best + 1..count, best);
        count -= 1;
    }
}
