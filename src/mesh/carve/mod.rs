//! Footprints carved out of a baked tile: the fast way a temporary obstacle changes
//! walkable space, with no voxels and no level triangles.
//!
//! Stage: runtime, over [`tile`](super::tile). Input: a tile as baked and footprints, each
//! a convex outline seen from above with the band of floor heights it reaches, either
//! cutting walkable space out or marking an area on it. Output: the tile with every
//! footprint cut from (or marked on) the ground polygons it overlaps.
//!
//! How: each ground polygon a footprint overlaps is split along the footprint's edges (a
//! convex polygon cut by a line gives two convex polygons), the pieces outside kept, the
//! piece inside dropped or given the area. Points where a cut meets an edge are then put
//! into the polygon across that edge too, so shared edges keep sharing both ends and
//! adjacency stays by vertex pairs, as in a baked tile. Pieces of more than six corners
//! are split in two, new corners take their height from the polygon's detail mesh, and a
//! piece's detail mesh is its own triangulation.
//!
//! Invariants: with no footprint reaching a polygon, it keeps its vertices, neighbours
//! and detail mesh exactly, so carving with no footprint returns the tile unchanged; no
//! polygon's interior overlaps a cutting footprint; every polygon stays convex with 3 to
//! 6 corners (a corner put into an edge is collinear with that edge's ends); moving
//! support layers are never carved (they move; their tiles are the support's).

use glam::{Vec2, Vec3};

use super::tile::{TileData, TilePoly};
use crate::geom::planar::signed_area;
use crate::ids::AreaId;

mod cut;
mod join;

use cut::{HeightTriangle, NewVertices, PieceStore, carve_polygon, piece_ring};
use join::{EdgePointScratch, NewPoint, assemble, insert_edge_points, split_large};

/// Points closer than this are one; a point closer than this to a cut line lies on it,
/// metres.
const ON_LINE_M: f32 = 1e-4;

/// Pieces of less area than this are dropped, square metres.
const PIECE_AREA_MIN_M2: f32 = 1e-4;

/// Two points at one (x, z) are one vertex only within this height, metres (floors above
/// each other stay apart).
const WELD_HEIGHT_M: f32 = 0.5;

/// Most polygons a tile holds (neighbour numbers share their bits with the tile-edge flag).
pub const CARVED_POLYGONS_MAX: usize = TilePoly::TILE_EDGE as usize - 1;

/// One footprint to carve.
#[derive(Clone, Debug, PartialEq)]
pub struct CarveFootprint {
    /// Corners seen from above (x, z), world metres: convex, either winding.
    pub corners: Vec<Vec2>,
    /// Lowest floor height it reaches, metres: polygons wholly below are not touched.
    pub floor_min_m: f32,
    /// Highest floor height it reaches, metres: polygons wholly above are not touched.
    pub floor_max_m: f32,
    /// `None` cuts the floor out; `Some(area)` gives the floor under it that area.
    pub marks: Option<AreaId>,
}

/// Why a tile cannot be carved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CarveError {
    /// Carving would leave more polygons than a tile holds.
    #[error(
        "carving tile ({x}, {z}) gives {polygons} polygons; a tile holds {CARVED_POLYGONS_MAX}"
    )]
    TooManyPolygons {
        /// Tile column.
        x: i32,
        /// Tile row.
        z: i32,
        /// Polygons carving would give.
        polygons: usize,
    },
    /// Carving would leave more vertices than a tile numbers.
    #[error("carving tile ({x}, {z}) gives {vertices} vertices; a tile numbers 65,535")]
    TooManyVertices {
        /// Tile column.
        x: i32,
        /// Tile row.
        z: i32,
        /// Vertices carving would give.
        vertices: usize,
    },
}

/// What lies across one edge of a piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EdgeKind {
    /// Part of a baked edge: its neighbour code as baked.
    Baked(u16),
    /// Along a cut, or a split of a piece: whatever polygon shares it, if any.
    Cut,
}

/// A corner of a piece, and the edge that leaves it.
#[derive(Clone, Copy, Debug)]
struct Corner {
    at: Vec2,
    /// The baked vertex, for a corner that is one.
    vertex: Option<u16>,
    next_edge: EdgeKind,
}

/// A convex part of one baked polygon: its corners are a run of the carve's corner store.
#[derive(Clone, Copy, Debug)]
struct Piece {
    start: u32,
    len: u32,
    area: u8,
    flags: u16,
}

/// A footprint turned counter-clockwise, with its bounds.
struct Outline<'a> {
    corners: Vec<Vec2>,
    /// Per corner, the unit direction of the edge leaving it (zero for an edge of no
    /// length).
    directions: Vec<Vec2>,
    low: Vec2,
    high: Vec2,
    footprint: &'a CarveFootprint,
}

/// A corner of a ring: its vertex (tile numbers) and what lies across the edge leaving it.
#[derive(Clone, Copy, Debug)]
struct RingCorner {
    vertex: u16,
    next_edge: EdgeKind,
}

/// A polygon of the carved tile before numbering: its baked origin and its corners, a
/// run of the carve's ring store (a ring that grows or splits is written anew at the
/// store's end, so no ring owns an allocation).
#[derive(Clone, Copy, Debug)]
struct Ring {
    origin: usize,
    start: u32,
    len: u32,
    area: u8,
    flags: u16,
    state: RingState,
}

impl Ring {
    /// Its corners in `store`.
    fn corners<'a>(&self, store: &'a [RingCorner]) -> &'a [RingCorner] {
        &store[self.start as usize..(self.start + self.len) as usize]
    }
}

/// How a ring's detail mesh is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RingState {
    /// The baked polygon as it was: its detail mesh is kept.
    AsBaked,
    /// The baked polygon with points put into its edges: its detail mesh is kept, its
    /// corners renumbered (a detail triangle's side through such a point still covers it).
    EdgePointsAdded,
    /// A piece: triangulated anew.
    Carved,
}

/// `base` with every footprint carved (see the module doc). With no footprint reaching
/// its ground polygons, returns `base` unchanged.
pub fn carve_tile(base: &TileData, footprints: &[CarveFootprint]) -> Result<TileData, CarveError> {
    let outlines: Vec<Outline> = footprints.iter().filter_map(outline).collect();
    let Some((reach_low, reach_high)) = bounds_of(outlines.iter().flat_map(|o| [o.low, o.high]))
    else {
        return Ok(base.clone());
    };
    let flat = |vertex: u16| {
        let at = base.vertices[usize::from(vertex)];
        Vec2::new(at[0], at[2])
    };
    let polygon_bounds = |polygon: &TilePoly| {
        bounds_of(polygon.vertex_indices().iter().map(|&v| flat(v))).expect("three corners")
    };
    // Room for what carving a footprint or two across a few polygons makes, so the
    // buffers rarely grow: growing reallocates, and these are sized per call.
    let expected_corners = 16 * outlines.iter().map(|o| o.corners.len()).sum::<usize>();
    let mut vertices = Vec::with_capacity(base.vertices.len() + expected_corners);
    vertices.extend_from_slice(&base.vertices);
    let mut made = NewVertices {
        vertices,
        baked_count: base.vertices.len(),
        origins: Vec::with_capacity(expected_corners),
        by_x: Vec::with_capacity(expected_corners),
    };
    let mut changed_rings = Vec::with_capacity(expected_corners);
    let mut ring_store: Vec<RingCorner> = Vec::with_capacity(4 * expected_corners);
    let mut changed = vec![false; base.polygons.len()];
    let mut store = PieceStore::with_capacity(4 * expected_corners);
    let mut pieces = Vec::with_capacity(expected_corners);
    let mut detail: Vec<HeightTriangle> = Vec::with_capacity(16);
    for (index, polygon) in base.polygons.iter().enumerate() {
        let (low, high) = polygon_bounds(polygon);
        if !boxes_meet(low, high, reach_low, reach_high, 0.0) {
            continue;
        }
        if carve_polygon(base, index, &outlines, &mut store, &mut pieces) {
            changed[index] = true;
            detail.clear();
            detail.extend(
                base.detail_triangles_of(index)
                    .filter_map(HeightTriangle::new),
            );
            for piece in &pieces {
                let ring = piece_ring(
                    base,
                    index,
                    &detail,
                    (piece, store.corners_of(piece)),
                    &mut made,
                    &mut ring_store,
                );
                changed_rings.push(ring);
            }
        }
    }
    if changed_rings.is_empty() && !changed.contains(&true) {
        return Ok(base.clone());
    }
    let vertices = made.vertices;
    let (x, z) = (base.header.tile_x, base.header.tile_z);
    if vertices.len() >= usize::from(u16::MAX) {
        return Err(CarveError::TooManyVertices {
            x,
            z,
            vertices: vertices.len(),
        });
    }
    // Points a cut made on an edge go into every polygon holding that edge: the pieces,
    // and untouched polygons beside them.
    let new_points: Vec<NewPoint> = made
        .by_x
        .iter()
        .map(|&(_, vertex)| NewPoint {
            at: Vec3::from_array(vertices[usize::from(vertex)]),
            vertex,
        })
        .collect();
    if let Some((points_low, points_high)) = bounds_of(
        new_points
            .iter()
            .map(|point| Vec2::new(point.at.x, point.at.z)),
    ) {
        let mut scratch = EdgePointScratch::default();
        for ring in &mut changed_rings {
            insert_edge_points(ring, &mut ring_store, &vertices, &new_points, &mut scratch);
        }
        for (index, polygon) in base.polygons.iter().enumerate() {
            let (low, high) = polygon_bounds(polygon);
            if changed[index] || !boxes_meet(low, high, points_low, points_high, ON_LINE_M) {
                continue;
            }
            let mark = ring_store.len();
            let mut ring = baked_ring(index, polygon, &mut ring_store);
            if insert_edge_points(
                &mut ring,
                &mut ring_store,
                &vertices,
                &new_points,
                &mut scratch,
            ) {
                changed[index] = true;
                changed_rings.push(ring);
            } else {
                ring_store.truncate(mark);
            }
        }
    }
    let changed_rings = split_large(changed_rings, &mut ring_store, &vertices);
    let unchanged = changed.iter().filter(|&&c| !c).count();
    if unchanged + changed_rings.len() > CARVED_POLYGONS_MAX {
        return Err(CarveError::TooManyPolygons {
            x,
            z,
            polygons: unchanged + changed_rings.len(),
        });
    }
    Ok(assemble(
        base,
        &changed,
        changed_rings,
        &ring_store,
        vertices,
    ))
}

/// The index after `index` round a ring of `count` (no division: these run per corner).
fn after(index: usize, count: usize) -> usize {
    if index + 1 >= count { 0 } else { index + 1 }
}

/// The index before `index` round a ring of `count`.
fn before(index: usize, count: usize) -> usize {
    if index == 0 { count - 1 } else { index - 1 }
}

/// The least box holding `points`, `None` for no point.
fn bounds_of(points: impl Iterator<Item = Vec2>) -> Option<(Vec2, Vec2)> {
    points.fold(None, |bounds, point| match bounds {
        None => Some((point, point)),
        Some((low, high)) => Some((low.min(point), high.max(point))),
    })
}

/// Whether two boxes meet, each grown by `margin`.
fn boxes_meet(low: Vec2, high: Vec2, other_low: Vec2, other_high: Vec2, margin: f32) -> bool {
    low.x <= other_high.x + margin
        && high.x + margin >= other_low.x
        && low.y <= other_high.y + margin
        && high.y + margin >= other_low.y
}

/// The footprint counter-clockwise with its bounds; `None` for fewer than three corners
/// or no area.
fn outline(footprint: &CarveFootprint) -> Option<Outline<'_>> {
    let mut corners = footprint.corners.clone();
    let area = signed_area(&corners);
    if corners.len() < 3 || !area.is_finite() || area.abs() <= PIECE_AREA_MIN_M2 {
        return None;
    }
    if area < 0.0 {
        corners.reverse();
    }
    let (low, high) = corners.iter().fold(
        (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY)),
        |(low, high), &corner| (low.min(corner), high.max(corner)),
    );
    let count = corners.len();
    let directions = (0..count)
        .map(|i| (corners[after(i, count)] - corners[i]).normalize_or_zero())
        .collect();
    Some(Outline {
        corners,
        directions,
        low,
        high,
        footprint,
    })
}

/// The baked polygon as a ring, untouched, its corners appended to `store`.
fn baked_ring(index: usize, polygon: &TilePoly, store: &mut Vec<RingCorner>) -> Ring {
    let count = usize::from(polygon.vertex_count);
    let start = store.len() as u32;
    store.extend(
        polygon.vertices[..count]
            .iter()
            .zip(&polygon.neighbours[..count])
            .map(|(&vertex, &code)| RingCorner {
                vertex,
                next_edge: EdgeKind::Baked(code),
            }),
    );
    Ring {
        origin: index,
        start,
        len: count as u32,
        area: polygon.area,
        flags: polygon.flags,
        state: RingState::AsBaked,
    }
}

#[cfg(test)]
mod tests;
