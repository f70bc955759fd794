//! One baked tile: convex polygons with adjacency plus a detail mesh for heights.
//!
//! Plain struct-of-arrays of `bytemuck::Pod` records, so a tile is written and read as a
//! handful of byte slices (see [`blob`](super::blob)).
//!
//! Invariants:
//! - polygons wind counter-clockwise seen from above (+Y) and are strictly convex in (X, Z);
//! - `TilePoly::neighbours[e]` names the polygon across edge `e` (vertex `e` to `e + 1`) in
//!   this tile, [`TilePoly::NO_NEIGHBOUR`] for a wall, or [`TilePoly::TILE_EDGE`] | side for
//!   an edge on the tile border (0: -X, 1: +Z, 2: +X, 3: -Z);
//! - detail triangle indices below the polygon's vertex count name the polygon's own
//!   vertices, the rest name `detail_vertices[vertex_base + index - vertex_count]`.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use crate::ids::SourceVersion;

/// Fixed-size tile header.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct TileHeader {
    /// Tile column along X in the tile grid (0 for a solo bake).
    pub tile_x: i32,
    /// Tile row along Z in the tile grid.
    pub tile_z: i32,
    /// Minimum corner of the tile's bounds, world metres.
    pub bounds_min: [f32; 3],
    /// Maximum corner of the tile's bounds, world metres.
    pub bounds_max: [f32; 3],
    /// Horizontal cell size the tile was baked at, metres.
    pub cell_size_m: f32,
    /// Vertical cell size the tile was baked at, metres.
    pub cell_height_m: f32,
}

/// A convex polygon of a tile.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct TilePoly {
    /// Vertex indices into the tile's `vertices`; [`TilePoly::NO_VERTEX`] past the end.
    pub vertices: [u16; 6],
    /// Neighbour per edge (see the module invariants).
    pub neighbours: [u16; 6],
    /// Number of vertices (3..=6).
    pub vertex_count: u8,
    /// Area id.
    pub area: u8,
    /// Region the polygon was built from (diagnostics).
    pub region: u16,
    /// Game-defined abilities needed to enter ([`PolyFlags`]); filters include or exclude by
    /// them.
    pub flags: u16,
    /// Support layer: 0 for static ground, `n + 1` for the moving support `SupportId(n)`.
    pub layer: u16,
}

/// Common polygon flags; the game may define more in the other bits.
pub struct PolyFlags;

impl PolyFlags {
    /// Walkable on foot.
    pub const WALK: u16 = 1;
    /// Needs swimming (water).
    pub const SWIM: u16 = 2;
    /// A doorway: a filter can close every door at once.
    pub const DOOR: u16 = 4;
    /// Switched off by the game.
    pub const DISABLED: u16 = 8;

    /// The flags a freshly baked polygon of `area` gets.
    pub fn for_area(area: u8) -> u16 {
        match area {
            a if a == crate::ids::AreaId::WATER.0 => PolyFlags::SWIM,
            a if a == crate::ids::AreaId::DOOR.0 => PolyFlags::WALK | PolyFlags::DOOR,
            _ => PolyFlags::WALK,
        }
    }
}

impl TilePoly {
    /// Unused vertex slot.
    pub const NO_VERTEX: u16 = u16::MAX;
    /// No polygon across the edge.
    pub const NO_NEIGHBOUR: u16 = u16::MAX;
    /// Flag for an edge on the tile border; the low two bits give the side.
    pub const TILE_EDGE: u16 = 0x8000;

    /// The used vertex indices.
    pub fn vertex_indices(&self) -> &[u16] {
        &self.vertices[..self.vertex_count as usize]
    }
}

/// Where one polygon's detail triangles live.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DetailSubMesh {
    /// First extra vertex in `detail_vertices`.
    pub vertex_base: u32,
    /// First triangle in `detail_triangles`.
    pub triangle_base: u32,
    /// Extra vertices.
    pub vertex_count: u32,
    /// Triangles.
    pub triangle_count: u32,
}

/// Which version of one instance's source geometry a tile was built from.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct TileSource {
    /// Instance index in the scene.
    pub instance: u32,
    /// Explicit padding (zero).
    pub padding: u32,
    /// The instance's source version at bake time.
    pub version: u64,
}

impl TileSource {
    /// The recorded source version.
    pub fn source_version(&self) -> SourceVersion {
        SourceVersion(self.version)
    }
}

/// One baked tile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TileData {
    /// Position and cell sizes.
    pub header: TileHeader,
    /// Polygon vertices, world metres.
    pub vertices: Vec<[f32; 3]>,
    /// Polygons.
    pub polygons: Vec<TilePoly>,
    /// Detail sub-mesh per polygon (same index).
    pub detail_meshes: Vec<DetailSubMesh>,
    /// Extra detail vertices, world metres.
    pub detail_vertices: Vec<[f32; 3]>,
    /// Detail triangles: three indices (see the module invariants) and a spare byte.
    pub detail_triangles: Vec<[u8; 4]>,
    /// Source versions of the instances whose triangles reached this tile, by instance.
    pub sources: Vec<TileSource>,
}

impl TileData {
    /// World position of polygon vertex `vertex`.
    pub fn vertex(&self, vertex: u16) -> Vec3 {
        Vec3::from_array(self.vertices[vertex as usize])
    }

    /// Area of a polygon projected on the horizontal plane, m².
    pub fn polygon_area_m2(&self, polygon: usize) -> f32 {
        let indices = self.polygons[polygon].vertex_indices();
        let origin = self.vertex(indices[0]);
        let mut twice = 0.0;
        for pair in indices[1..].windows(2) {
            let (a, b) = (self.vertex(pair[0]) - origin, self.vertex(pair[1]) - origin);
            twice += a.z * b.x - a.x * b.z;
        }
        0.5 * twice.abs()
    }

    /// Sum of the polygons' horizontal areas, m².
    pub fn walkable_area_m2(&self) -> f64 {
        (0..self.polygons.len())
            .map(|p| f64::from(self.polygon_area_m2(p)))
            .sum()
    }

    /// World position of a detail triangle corner of polygon `polygon`.
    pub fn detail_vertex(&self, polygon: usize, index: u8) -> Vec3 {
        let poly = &self.polygons[polygon];
        if usize::from(index) < usize::from(poly.vertex_count) {
            self.vertex(poly.vertices[usize::from(index)])
        } else {
            let base = self.detail_meshes[polygon].vertex_base as usize;
            Vec3::from_array(
                self.detail_vertices[base + usize::from(index) - usize::from(poly.vertex_count)],
            )
        }
    }

    /// The detail triangles of polygon `polygon` as world-space corners.
    pub fn detail_triangles_of(&self, polygon: usize) -> impl Iterator<Item = [Vec3; 3]> + '_ {
        let sub = self.detail_meshes[polygon];
        let range = sub.triangle_base as usize..(sub.triangle_base + sub.triangle_count) as usize;
        self.detail_triangles[range].iter().map(move |t| {
            [
                self.detail_vertex(polygon, t[0]),
                self.detail_vertex(polygon, t[1]),
                self.detail_vertex(polygon, t[2]),
            ]
        })
    }
}
