//! The `.wmnav` file: baked tiles as bytes.
//!
//! Layout (little-endian, every section a whole number of its records):
//!
//! | bytes | what |
//! |---|---|
//! | 8 | magic `WMNAVMSH` |
//! | 4 | format version ([`FORMAT_VERSION`]) |
//! | 4 | tile count |
//! | 64 | [`BakeParams`]: the agent and voxel settings the tiles were baked with |
//! | per tile | [`TileHeader`] (40), six `u32` counts, then vertices, polygons, detail sub-meshes, detail vertices, detail triangles, sources |
//! | 8 | FNV-1a 64 checksum of everything before it |
//!
//! Loading checks the magic, the version, the checksum, then every count and index
//! ([`TileData::validate`]), so a truncated, foreign, damaged or hand-crafted file is
//! refused with a [`BlobError`] and never read out of bounds.

use bytemuck::{Pod, Zeroable};

use super::tile::{DetailSubMesh, TileData, TileHeader, TilePoly};

/// First bytes of every `.wmnav` file.
pub const MAGIC: [u8; 8] = *b"WMNAVMSH";
/// Format version written by this build; files of other versions are refused.
pub const FORMAT_VERSION: u32 = 2;
/// Most tiles a file may declare (matches the baker's tile limit).
pub const FILE_TILES_MAX: u32 = 1 << 16;

/// The settings tiles were baked with, stored so a loader can check the agent they fit.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BakeParams {
    /// Horizontal cell size, metres.
    pub cell_size_m: f32,
    /// Vertical cell size, metres.
    pub cell_height_m: f32,
    /// Agent radius, metres.
    pub agent_radius_m: f32,
    /// Agent height, metres.
    pub agent_height_m: f32,
    /// Agent climb, metres.
    pub agent_max_climb_m: f32,
    /// Steepest walkable slope, degrees.
    pub agent_max_slope_deg: f32,
    /// Smallest region kept, m².
    pub region_min_area_m2: f32,
    /// Regions below this merge, m².
    pub region_merge_area_m2: f32,
    /// Longest wall edge, metres.
    pub edge_max_length_m: f32,
    /// Contour error, metres.
    pub edge_max_error_m: f32,
    /// Detail sample spacing, metres.
    pub detail_sample_distance_m: f32,
    /// Detail height error, metres.
    pub detail_sample_max_error_m: f32,
    /// Most vertices per polygon.
    pub verts_per_poly_max: u32,
    /// Tile size in cells (0: solo).
    pub tile_size_cells: u32,
    /// Partition (0: watershed, 1: monotone).
    pub partition: u32,
    /// Explicit padding (zero).
    pub padding: u32,
}

impl BakeParams {
    /// The first setting out of its range, with its value: lengths finite, not negative
    /// and within [`BODY_SIZE_MAX_M`](crate::geom::limits::BODY_SIZE_MAX_M) (areas within
    /// its square), the slope below 90 degrees, counts as the baker writes them. Zero
    /// stands for "not recorded" (a mesh built by hand), so every field may be zero; a
    /// baked radius or height that is NaN or negative would switch off the crowd's check
    /// that agents fit the mesh, and is refused here.
    pub fn invalid_field(&self) -> Option<(&'static str, f32)> {
        use crate::geom::limits::BODY_SIZE_MAX_M;
        let area_max = BODY_SIZE_MAX_M * BODY_SIZE_MAX_M;
        for (field, value, limit) in [
            ("cell_size_m", self.cell_size_m, BODY_SIZE_MAX_M),
            ("cell_height_m", self.cell_height_m, BODY_SIZE_MAX_M),
            ("agent_radius_m", self.agent_radius_m, BODY_SIZE_MAX_M),
            ("agent_height_m", self.agent_height_m, BODY_SIZE_MAX_M),
            ("agent_max_climb_m", self.agent_max_climb_m, BODY_SIZE_MAX_M),
            ("agent_max_slope_deg", self.agent_max_slope_deg, 89.999),
            ("region_min_area_m2", self.region_min_area_m2, area_max),
            ("region_merge_area_m2", self.region_merge_area_m2, area_max),
            ("edge_max_length_m", self.edge_max_length_m, f32::MAX),
            ("edge_max_error_m", self.edge_max_error_m, f32::MAX),
            (
                "detail_sample_distance_m",
                self.detail_sample_distance_m,
                f32::MAX,
            ),
            (
                "detail_sample_max_error_m",
                self.detail_sample_max_error_m,
                f32::MAX,
            ),
        ] {
            if !(value.is_finite() && (0.0..=limit).contains(&value)) {
                return Some((field, value));
            }
        }
        for (field, value, ok) in [
            (
                "verts_per_poly_max",
                self.verts_per_poly_max,
                self.verts_per_poly_max == 0 || (3..=6).contains(&self.verts_per_poly_max),
            ),
            ("partition", self.partition, self.partition <= 1),
            ("padding", self.padding, self.padding == 0),
        ] {
            if !ok {
                return Some((field, value as f32));
            }
        }
        None
    }
}

/// A `.wmnav` file's content.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NavMeshFile {
    /// The settings the tiles were baked with.
    pub params: BakeParams,
    /// The tiles.
    pub tiles: Vec<TileData>,
}

/// A file that cannot be loaded.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BlobError {
    /// The file ends before a section it declares.
    #[error(
        "truncated .wmnav: {section} needs {needed} bytes at offset {offset}, but the file has {available}"
    )]
    Truncated {
        /// The section being read.
        section: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Where it starts.
        offset: usize,
        /// File length.
        available: usize,
    },
    /// A part of a farmed bake ([`super::parts`]), not a whole mesh.
    #[error(
        "a part of a farmed bake, not a whole .wmnav file: merge the parts first (waymark merge, or mesh::parts::merge_parts)"
    )]
    FarmedPart,
    /// Not a `.wmnav` file.
    #[error("not a .wmnav file: magic {found:?}, expected {MAGIC:?}")]
    BadMagic {
        /// The first eight bytes.
        found: [u8; 8],
    },
    /// Written by another format version.
    #[error(".wmnav format version {found} is not supported (this build reads {FORMAT_VERSION})")]
    UnsupportedVersion {
        /// The file's version.
        found: u32,
    },
    /// The content does not match its checksum: damaged in storage or transit.
    #[error(".wmnav checksum mismatch: stored {stored:#018x}, computed {computed:#018x}")]
    ChecksumMismatch {
        /// Checksum in the file.
        stored: u64,
        /// Checksum of the content.
        computed: u64,
    },
    /// A count or index that cannot be right.
    #[error("malformed .wmnav: tile {tile}: {problem}")]
    Malformed {
        /// Tile index (or `u32::MAX` for the file header).
        tile: u32,
        /// What is wrong, with the value.
        problem: String,
    },
    /// Bytes after the checksum.
    #[error(".wmnav has {extra} bytes after its checksum")]
    TrailingBytes {
        /// How many.
        extra: usize,
    },
}

/// FNV-1a, 64 bits: small, dependency-free, and enough to catch damage (not an attack).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    fnv1a64_continued(FNV1A64_OFFSET, bytes)
}

/// The FNV-1a hash of nothing, where [`fnv1a64_continued`] starts.
pub const FNV1A64_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// The FNV-1a hash of what `hash` hashed followed by `bytes` (so pieces hash as their
/// concatenation would).
pub fn fnv1a64_continued(mut hash: u64, bytes: &[u8]) -> u64 {
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

impl NavMeshFile {
    /// Serialises to bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.tiles.len() as u32).to_le_bytes());
        out.extend_from_slice(bytemuck::bytes_of(&self.params));
        for tile in &self.tiles {
            out.extend_from_slice(bytemuck::bytes_of(&tile.header));
            for count in [
                tile.vertices.len(),
                tile.polygons.len(),
                tile.detail_meshes.len(),
                tile.detail_vertices.len(),
                tile.detail_triangles.len(),
                tile.sources.len(),
            ] {
                out.extend_from_slice(&(count as u32).to_le_bytes());
            }
            out.extend_from_slice(bytemuck::cast_slice(&tile.vertices));
            out.extend_from_slice(bytemuck::cast_slice(&tile.polygons));
            out.extend_from_slice(bytemuck::cast_slice(&tile.detail_meshes));
            out.extend_from_slice(bytemuck::cast_slice(&tile.detail_vertices));
            out.extend_from_slice(bytemuck::cast_slice(&tile.detail_triangles));
            out.extend_from_slice(bytemuck::cast_slice(&tile.sources));
        }
        let checksum = fnv1a64(&out);
        out.extend_from_slice(&checksum.to_le_bytes());
        out
    }

    /// Parses and validates bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<NavMeshFile, BlobError> {
        let mut reader = Reader { bytes, offset: 0 };
        let magic: [u8; 8] = reader.take("magic", 8)?.try_into().expect("took 8 bytes");
        if magic == super::parts::PART_MAGIC {
            return Err(BlobError::FarmedPart);
        }
        if magic != MAGIC {
            return Err(BlobError::BadMagic { found: magic });
        }
        let version = reader.u32("format version")?;
        if version != FORMAT_VERSION {
            return Err(BlobError::UnsupportedVersion { found: version });
        }
        // Checksum before any count is trusted.
        if bytes.len() < reader.offset + 8 {
            return Err(BlobError::Truncated {
                section: "checksum",
                needed: 8,
                offset: reader.offset,
                available: bytes.len(),
            });
        }
        let body = &bytes[..bytes.len() - 8];
        let stored = u64::from_le_bytes(bytes[bytes.len() - 8..].try_into().expect("8 bytes"));
        let computed = fnv1a64(body);
        if stored != computed {
            return Err(BlobError::ChecksumMismatch { stored, computed });
        }
        let mut reader = Reader {
            bytes: body,
            offset: reader.offset,
        };
        let tile_count = reader.u32("tile count")?;
        if tile_count > FILE_TILES_MAX {
            return Err(BlobError::Malformed {
                tile: u32::MAX,
                problem: format!("{tile_count} tiles, over the limit of {FILE_TILES_MAX}"),
            });
        }
        let params: BakeParams = reader.records("bake parameters", 1)?.remove(0);
        if let Some((field, value)) = params.invalid_field() {
            return Err(BlobError::Malformed {
                tile: u32::MAX,
                problem: format!("bake parameter {field} = {value} is out of range"),
            });
        }
        let mut tiles = Vec::with_capacity(tile_count as usize);
        for _ in 0..tile_count {
            let header: TileHeader = reader.records("tile header", 1)?.remove(0);
            let mut counts = [0usize; 6];
            for count in counts.iter_mut() {
                *count = reader.u32("tile counts")? as usize;
            }
            let tile = TileData {
                header,
                vertices: reader.records("vertices", counts[0])?,
                polygons: reader.records("polygons", counts[1])?,
                detail_meshes: reader.records("detail sub-meshes", counts[2])?,
                detail_vertices: reader.records("detail vertices", counts[3])?,
                detail_triangles: reader.records("detail triangles", counts[4])?,
                sources: reader.records("sources", counts[5])?,
            };
            tiles.push(tile);
        }
        if reader.offset != body.len() {
            return Err(BlobError::TrailingBytes {
                extra: body.len() - reader.offset,
            });
        }
        for (index, tile) in tiles.iter().enumerate() {
            tile.validate().map_err(|problem| BlobError::Malformed {
                tile: index as u32,
                problem,
            })?;
        }
        Ok(NavMeshFile { params, tiles })
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, section: &'static str, length: usize) -> Result<&'a [u8], BlobError> {
        let end = self
            .offset
            .checked_add(length)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(BlobError::Truncated {
                section,
                needed: length,
                offset: self.offset,
                available: self.bytes.len(),
            });
        };
        let slice = &self.bytes[self.offset..end];
        self.offset = end;
        Ok(slice)
    }

    fn u32(&mut self, section: &'static str) -> Result<u32, BlobError> {
        Ok(u32::from_le_bytes(
            self.take(section, 4)?.try_into().expect("took 4 bytes"),
        ))
    }

    fn records<T: Pod>(
        &mut self,
        section: &'static str,
        count: usize,
    ) -> Result<Vec<T>, BlobError> {
        let length = count.saturating_mul(size_of::<T>());
        let bytes = self.take(section, length)?;
        // Copied into a fresh, aligned buffer: the file needs no particular alignment.
        let mut records = vec![T::zeroed(); count];
        bytemuck::cast_slice_mut::<T, u8>(&mut records).copy_from_slice(bytes);
        Ok(records)
    }
}

impl TileData {
    /// Checks every count and index, so that no query can read out of bounds. Returns the
    /// first problem found, with its values.
    pub fn validate(&self) -> Result<(), String> {
        use crate::geom::limits::{COORDINATE_MAX_M, within};
        // A baked tile reaches past its level's coordinates by its padding and grid
        // alignment (a level at the limit has tiles whose bounds end a few metres beyond
        // it): twice the limit still keeps every later product finite.
        const TILE_COORDINATE_MAX_M: f32 = 2.0 * COORDINATE_MAX_M;
        let vertex_total = self.vertices.len();
        let outside = |points: &[[f32; 3]]| {
            points
                .iter()
                .flatten()
                .copied()
                .find(|&c| !within(c, TILE_COORDINATE_MAX_M))
        };
        if let Some(bad) = outside(&self.vertices) {
            return Err(format!(
                "vertex coordinate {bad} is not finite or beyond {TILE_COORDINATE_MAX_M} m"
            ));
        }
        if let Some(bad) = outside(&self.detail_vertices) {
            return Err(format!(
                "detail vertex coordinate {bad} is not finite or beyond {TILE_COORDINATE_MAX_M} m"
            ));
        }
        let header = &self.header;
        if let Some(bad) = outside(&[header.bounds_min, header.bounds_max]) {
            return Err(format!(
                "bounds coordinate {bad} is not finite or beyond {TILE_COORDINATE_MAX_M} m"
            ));
        }
        if (0..3).any(|axis| header.bounds_min[axis] > header.bounds_max[axis]) {
            return Err(format!(
                "bounds minimum {:?} is above the maximum {:?}",
                header.bounds_min, header.bounds_max
            ));
        }
        for (field, value) in [
            ("cell_size_m", header.cell_size_m),
            ("cell_height_m", header.cell_height_m),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!(
                    "header {field} {value} is not finite and at least 0"
                ));
            }
        }
        if self.detail_meshes.len() != self.polygons.len() {
            return Err(format!(
                "{} detail sub-meshes for {} polygons",
                self.detail_meshes.len(),
                self.polygons.len()
            ));
        }
        for (index, polygon) in self.polygons.iter().enumerate() {
            let count = usize::from(polygon.vertex_count);
            if !(3..=6).contains(&count) {
                return Err(format!("polygon {index} has {count} vertices"));
            }
            if let Some(&bad) = polygon.vertices[..count]
                .iter()
                .find(|&&v| usize::from(v) >= vertex_total)
            {
                return Err(format!(
                    "polygon {index} uses vertex {bad} of {vertex_total}"
                ));
            }
            for &neighbour in &polygon.neighbours[..count] {
                let is_tile_edge =
                    neighbour != TilePoly::NO_NEIGHBOUR && neighbour & TilePoly::TILE_EDGE != 0;
                if neighbour != TilePoly::NO_NEIGHBOUR
                    && !is_tile_edge
                    && usize::from(neighbour) >= self.polygons.len()
                {
                    return Err(format!(
                        "polygon {index} has neighbour {neighbour} of {}",
                        self.polygons.len()
                    ));
                }
            }
            let sub: DetailSubMesh = self.detail_meshes[index];
            let vertex_end = u64::from(sub.vertex_base) + u64::from(sub.vertex_count);
            let triangle_end = u64::from(sub.triangle_base) + u64::from(sub.triangle_count);
            if vertex_end > self.detail_vertices.len() as u64
                || triangle_end > self.detail_triangles.len() as u64
            {
                return Err(format!(
                    "polygon {index}'s detail mesh runs past the tile's detail arrays"
                ));
            }
            let local_total = count as u64 + u64::from(sub.vertex_count);
            let triangles =
                &self.detail_triangles[sub.triangle_base as usize..triangle_end as usize];
            if let Some(bad) = triangles
                .iter()
                .flat_map(|t| &t[..3])
                .find(|&&i| u64::from(i) >= local_total)
            {
                return Err(format!(
                    "polygon {index}'s detail triangle uses vertex {bad} of {local_total}"
                ));
            }
        }
        Ok(())
    }
}
