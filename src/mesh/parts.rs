//! Farmed bakes: a level's tiles baked as separate parts, each a rectangle of the level's
//! tile grid, on separate machines or processes, then merged into the one `.wmnav` file the
//! whole bake writes, byte for byte.
//!
//! A part file is a small header and the `.wmnav` bytes of its tiles:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | magic `WMNAVPRT` |
//! | 4 | part format version ([`PART_FORMAT_VERSION`]) |
//! | 8 | the level's tile grid: columns, rows (`u32` each) |
//! | 16 | the part's rectangle: first column, end column, first row, end row (half-open) |
//! | 8 | FNV-1a 64 checksum of the 36 bytes before it |
//! | rest | a `.wmnav` file ([`NavMeshFile`]) of the part's tiles, with its own checksum |
//!
//! [`merge_parts`] refuses parts baked with other settings or for another grid, parts that
//! overlap, and a set of parts that leaves a tile of the grid uncovered, each error naming
//! the part. Tiles of the merged file are in the whole bake's order: by row, then column.

use std::ops::Range;

use super::blob::{BakeParams, BlobError, NavMeshFile, fnv1a64};

/// First bytes of a part file.
pub const PART_MAGIC: [u8; 8] = *b"WMNAVPRT";
/// Part format version written by this build.
pub const PART_FORMAT_VERSION: u32 = 1;
/// Bytes before the embedded `.wmnav` file.
const HEADER_BYTES: usize = 8 + 4 + 8 + 16 + 8;

/// A rectangle of a level's tiles, baked.
#[derive(Clone, Debug, PartialEq)]
pub struct TilePart {
    /// The level's tile grid: columns (along X) and rows (along Z).
    pub grid: [u32; 2],
    /// The part's columns, half-open.
    pub columns: Range<u32>,
    /// The part's rows, half-open.
    pub rows: Range<u32>,
    /// The part's tiles (those of its rectangle that hold any triangle) and the settings
    /// they were baked with.
    pub file: NavMeshFile,
}

/// A part file that cannot be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PartError {
    /// Not a part file.
    #[error("not a farmed-bake part: magic {found:?}, expected {PART_MAGIC:?}")]
    BadMagic {
        /// The first eight bytes (or fewer).
        found: Vec<u8>,
    },
    /// Shorter than its header.
    #[error("truncated part: {length} bytes, the header alone is {HEADER_BYTES}")]
    Truncated {
        /// The file's length.
        length: usize,
    },
    /// Written by another part format version.
    #[error(
        "part format version {found} is not supported (this build reads {PART_FORMAT_VERSION})"
    )]
    UnsupportedVersion {
        /// The file's version.
        found: u32,
    },
    /// The header does not match its checksum.
    #[error("part header checksum mismatch: stored {stored:#018x}, computed {computed:#018x}")]
    ChecksumMismatch {
        /// Checksum in the file.
        stored: u64,
        /// Checksum of the header.
        computed: u64,
    },
    /// The rectangle is empty or reaches past the grid.
    #[error(
        "part rectangle columns {columns:?}, rows {rows:?} is empty or outside the {}x{} tile grid",
        grid[0], grid[1]
    )]
    BadRectangle {
        /// The grid.
        grid: [u32; 2],
        /// The columns.
        columns: Range<u32>,
        /// The rows.
        rows: Range<u32>,
    },
    /// A tile lies outside the part's rectangle.
    #[error("tile ({tile_x}, {tile_z}) lies outside the part's columns {columns:?}, rows {rows:?}")]
    TileOutside {
        /// The tile's column.
        tile_x: i32,
        /// The tile's row.
        tile_z: i32,
        /// The part's columns.
        columns: Range<u32>,
        /// The part's rows.
        rows: Range<u32>,
    },
    /// The embedded `.wmnav` file is damaged.
    #[error(transparent)]
    Tiles(#[from] BlobError),
}

/// Parts that do not make one level.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no parts to merge")]
    NoParts,
    /// A part was baked with other settings than the first.
    #[error("part '{part}' was baked with other settings than '{first}'")]
    OtherSettings {
        /// The part.
        part: String,
        /// The first part, whose settings the others must share.
        first: String,
    },
    /// A part was baked for another tile grid (another level or tile size).
    #[error(
        "part '{part}' is of a {}x{} tile grid, '{first}' of a {}x{} grid",
        grid[0], grid[1], first_grid[0], first_grid[1]
    )]
    OtherGrid {
        /// The part.
        part: String,
        /// Its grid.
        grid: [u32; 2],
        /// The first part.
        first: String,
        /// The first part's grid.
        first_grid: [u32; 2],
    },
    /// Two parts share a tile.
    #[error("parts '{part}' and '{other}' both hold tile ({column}, {row})")]
    Overlap {
        /// The later part.
        part: String,
        /// The earlier part it overlaps.
        other: String,
        /// A shared tile's column.
        column: u32,
        /// Its row.
        row: u32,
    },
    /// No part holds a tile of the grid.
    #[error("no part holds tile ({column}, {row}) of the {}x{} tile grid", grid[0], grid[1])]
    Missing {
        /// The tile's column.
        column: u32,
        /// Its row.
        row: u32,
        /// The grid.
        grid: [u32; 2],
    },
}

impl TilePart {
    /// Serialises to bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES);
        out.extend_from_slice(&PART_MAGIC);
        out.extend_from_slice(&PART_FORMAT_VERSION.to_le_bytes());
        for value in [
            self.grid[0],
            self.grid[1],
            self.columns.start,
            self.columns.end,
            self.rows.start,
            self.rows.end,
        ] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        let checksum = fnv1a64(&out);
        out.extend_from_slice(&checksum.to_le_bytes());
        out.extend_from_slice(&self.file.to_bytes());
        out
    }

    /// Parses and checks bytes: the header, the embedded file, every tile inside the
    /// rectangle.
    pub fn from_bytes(bytes: &[u8]) -> Result<TilePart, PartError> {
        if bytes.len() < 8 || bytes[..8] != PART_MAGIC {
            return Err(PartError::BadMagic {
                found: bytes[..bytes.len().min(8)].to_vec(),
            });
        }
        if bytes.len() < HEADER_BYTES {
            return Err(PartError::Truncated {
                length: bytes.len(),
            });
        }
        let word = |index: usize| {
            let at = 8 + 4 * index;
            u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
        };
        if word(0) != PART_FORMAT_VERSION {
            return Err(PartError::UnsupportedVersion { found: word(0) });
        }
        let stored = u64::from_le_bytes(
            bytes[HEADER_BYTES - 8..HEADER_BYTES]
                .try_into()
                .expect("eight bytes"),
        );
        let computed = fnv1a64(&bytes[..HEADER_BYTES - 8]);
        if stored != computed {
            return Err(PartError::ChecksumMismatch { stored, computed });
        }
        let (grid, columns, rows) = ([word(1), word(2)], word(3)..word(4), word(5)..word(6));
        if columns.is_empty() || rows.is_empty() || columns.end > grid[0] || rows.end > grid[1] {
            return Err(PartError::BadRectangle {
                grid,
                columns,
                rows,
            });
        }
        let file = NavMeshFile::from_bytes(&bytes[HEADER_BYTES..])?;
        for tile in &file.tiles {
            let (tile_x, tile_z) = (tile.header.tile_x, tile.header.tile_z);
            let inside = u32::try_from(tile_x).is_ok_and(|x| columns.contains(&x))
                && u32::try_from(tile_z).is_ok_and(|z| rows.contains(&z));
            if !inside {
                return Err(PartError::TileOutside {
                    tile_x,
                    tile_z,
                    columns,
                    rows,
                });
            }
        }
        Ok(TilePart {
            grid,
            columns,
            rows,
            file,
        })
    }
}

/// Merges named parts into the file the whole bake writes: the same settings, every tile
/// of every part, by row then column. Refuses parts of other settings or grids, parts that
/// overlap, and a grid not wholly covered, naming the part (or the tile no part holds).
pub fn merge_parts(parts: &[(String, TilePart)]) -> Result<NavMeshFile, MergeError> {
    let Some((first_name, first)) = parts.first() else {
        return Err(MergeError::NoParts);
    };
    let params: BakeParams = first.file.params;
    for (index, (name, part)) in parts.iter().enumerate() {
        if part.file.params != params {
            return Err(MergeError::OtherSettings {
                part: name.clone(),
                first: first_name.clone(),
            });
        }
        if part.grid != first.grid {
            return Err(MergeError::OtherGrid {
                part: name.clone(),
                grid: part.grid,
                first: first_name.clone(),
                first_grid: first.grid,
            });
        }
        for (other_name, other) in &parts[..index] {
            let columns = part.columns.start.max(other.columns.start)
                ..part.columns.end.min(other.columns.end);
            let rows = part.rows.start.max(other.rows.start)..part.rows.end.min(other.rows.end);
            if !columns.is_empty() && !rows.is_empty() {
                return Err(MergeError::Overlap {
                    part: name.clone(),
                    other: other_name.clone(),
                    column: columns.start,
                    row: rows.start,
                });
            }
        }
    }
    let grid = first.grid;
    for row in 0..grid[1] {
        for column in 0..grid[0] {
            let covered = parts
                .iter()
                .any(|(_, part)| part.columns.contains(&column) && part.rows.contains(&row));
            if !covered {
                return Err(MergeError::Missing { column, row, grid });
            }
        }
    }
    let mut tiles: Vec<_> = parts
        .iter()
        .flat_map(|(_, part)| part.file.tiles.iter().cloned())
        .collect();
    tiles.sort_by_key(|tile| (tile.header.tile_z, tile.header.tile_x));
    Ok(NavMeshFile { params, tiles })
}
