//! The baker: world triangles in, navigation tiles out.
//!
//! Stage: build time, after [`scene`](crate::scene). Input: [`WorldTriangles`] (metres, Y up:
//! a Z-up host maps its axes when it builds the scene) and a [`BakeConfig`]. Output:
//! [`BakeOutput`], the [`TileData`] the runtime [`mesh`](crate::mesh) reads, plus timings.
//!
//! The level's bounds are cut into square tiles of `tile_size_cells` (or one tile covering
//! everything for a solo bake: the same code path). Each tile's grid carries a border of
//! `radius + 3` cells so erosion, regions and contours see what a solo bake would see. Tiles
//! are baked in parallel with rayon, each from its own triangles into its own output, and
//! collected in tile order: the result is bit-identical at any thread count.
//!
//! Limits are checked before anything is allocated: grid columns per tile
//! ([`GRID_COLUMNS_MAX`]), cells along a solo grid's side ([`GRID_SIDE_MAX`]), tiles
//! ([`TILE_COUNT_MAX`]), height range ([`SPAN_HEIGHT_MAX`] cell heights).

pub mod areas;
pub mod compact;
pub mod config;
pub mod contours;
pub mod detail;
pub mod edit;
pub mod erode;
pub mod farm;
pub mod filter;
pub mod heightfield;
pub mod polymesh;
pub mod rasterize;
pub mod regions;
pub mod tile_builder;
pub mod tile_cache;
mod tiled;

use std::time::Instant;

use glam::Vec3;
use rayon::prelude::*;

pub use areas::{AreaVolume, AreaVolumeError};
pub use config::{BakeConfig, BakeConfigError, Partition, Preset, ValidBakeConfig};
use config::{GRID_COLUMNS_MAX, GRID_SIDE_MAX, SPAN_HEIGHT_MAX, TILE_COUNT_MAX};
pub use tile_builder::{STAGE_NAMES, Stage, StageTimes, TileJob};

use crate::mesh::TileData;
use crate::mesh::blob::{BakeParams, NavMeshFile};
use crate::scene::WorldTriangles;

/// A bake that cannot start.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BakeError {
    /// A configuration field is out of range.
    #[error(transparent)]
    Config(#[from] BakeConfigError),
    /// An area volume cannot be used.
    #[error(transparent)]
    Volume(#[from] AreaVolumeError),
    /// One grid would hold more columns than [`GRID_COLUMNS_MAX`].
    #[error(
        "the voxel grid would be {width} x {depth} = {columns} columns, over the limit of {limit}; raise cell_size_m or set a tile size"
    )]
    GridTooLarge {
        /// Columns along X.
        width: u64,
        /// Columns along Z.
        depth: u64,
        /// Their product.
        columns: u64,
        /// The limit.
        limit: u64,
    },
    /// One grid would be longer than [`GRID_SIDE_MAX`] cells along a side.
    #[error(
        "the voxel grid would be {cells} cells along {axis}, over the limit of {limit} (GRID_SIDE_MAX: a tile's vertices are 16-bit cell coordinates); set a tile size or raise cell_size_m"
    )]
    GridSideTooLong {
        /// `x` or `z`.
        axis: char,
        /// Cells along that side.
        cells: u64,
        /// The limit.
        limit: u64,
    },
    /// A tile's polygon mesh would need more vertices or polygons than its 16-bit indices
    /// hold ([`polymesh::MESH_VERTICES_MAX`], [`polymesh::TILE_POLYGONS_MAX`]).
    #[error(
        "tile ({tile_x}, {tile_z}) would have {count} {what}, over the limit of {limit} (16-bit indices); set a smaller tile size"
    )]
    TileTooDetailed {
        /// The tile's column.
        tile_x: i32,
        /// The tile's row.
        tile_z: i32,
        /// `vertices` or `polygons`.
        what: &'static str,
        /// How many it needed (for vertices: at least this many).
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// More tiles than [`TILE_COUNT_MAX`].
    #[error("the bake would have {tiles} tiles, over the limit of {limit}; raise tile_size_cells")]
    TooManyTiles {
        /// Tiles needed.
        tiles: u64,
        /// The limit.
        limit: u64,
    },
    /// The level is taller than heights can be stored at this cell height.
    #[error(
        "the level is {extent_m} m tall, over {limit_m} m at this cell height; raise cell_height_m"
    )]
    TooTall {
        /// Vertical extent of the level.
        extent_m: f32,
        /// The most that fits.
        limit_m: f32,
    },
    /// A farmed bake's rectangle ([`farm::bake_tile_range`]) is empty or reaches past the
    /// level's tile grid.
    #[error(
        "tiles {}..{},{}..{} are not a rectangle of the level's {}x{} tile grid (columns 0..{}, rows 0..{}, half-open, non-empty)",
        columns.start, columns.end, rows.start, rows.end, grid[0], grid[1], grid[0], grid[1]
    )]
    TileRange {
        /// The columns asked.
        columns: std::ops::Range<u32>,
        /// The rows asked.
        rows: std::ops::Range<u32>,
        /// The grid: columns, rows.
        grid: [u32; 2],
    },
    /// A scene edit ([`edit`]) moved the level's bounds so its tile grid no longer lines up
    /// with the mesh's tiles: bake the level again.
    #[error(
        "the edit moves the level's tile grid: tile ({}, {}) starts at x {}, z {} in the mesh but at x {}, z {} after the edit; bake the level again",
        tile.0, tile.1, mesh_corner[0], mesh_corner[1], edit_corner[0], edit_corner[1]
    )]
    GridMoved {
        /// The tile compared.
        tile: (i32, i32),
        /// Its minimum corner (x, z) in the mesh, metres.
        mesh_corner: [f32; 2],
        /// Where the edited level's grid puts it.
        edit_corner: [f32; 2],
    },
    /// The mesh refused a rebuilt tile for another reason than a stale source.
    #[error(transparent)]
    Commit(crate::mesh::NavMeshError),
    /// Obstacles could not be carved out of a tile.
    #[error(transparent)]
    Carve(#[from] crate::mesh::carve::CarveError),
}

/// Something worth telling the user about a bake that still produced output.
#[derive(Clone, Debug, PartialEq)]
pub enum BakeWarning {
    /// No polygon survived: the level has no walkable surface for this agent.
    NoWalkableSurface,
}

/// Totals of one bake.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BakeStats {
    /// Triangles baked.
    pub triangles: usize,
    /// Tiles in the output.
    pub tiles: usize,
    /// Polygons over all tiles.
    pub polygons: usize,
    /// Polygon vertices over all tiles.
    pub vertices: usize,
    /// Detail triangles over all tiles.
    pub detail_triangles: usize,
    /// Sum of polygon areas projected on the horizontal plane, m².
    pub walkable_area_m2: f64,
    /// Wall-clock time of the whole bake, milliseconds.
    pub bake_ms: f64,
    /// Time per stage summed over tiles (CPU time when tiles run in parallel), milliseconds.
    pub stage_ms: [f64; tile_builder::STAGE_COUNT],
}

/// The tiles of a bake and what it cost.
#[derive(Clone, Debug, Default)]
pub struct BakeOutput {
    /// The configuration as validated.
    pub config: Option<ValidBakeConfig>,
    /// Tiles with at least one triangle, in row-major tile order.
    pub tiles: Vec<TileData>,
    /// Totals.
    pub stats: BakeStats,
    /// Warnings.
    pub warnings: Vec<BakeWarning>,
}

/// The tile grid of a bake.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TileLayout {
    /// Minimum corner of the level's grid, metres.
    pub origin: Vec3,
    /// Tiles along X.
    pub tiles_x: u32,
    /// Tiles along Z.
    pub tiles_z: u32,
    /// Tile edge in cells (the whole grid for a solo bake).
    pub tile_cells_x: u32,
    /// Tile edge in cells along Z.
    pub tile_cells_z: u32,
    /// Border cells around each tile's grid.
    pub border_cells: u32,
}

/// Plans the tiles of a bake, checking every limit before anything is allocated.
pub fn plan_tiles(
    world: &WorldTriangles,
    config: &ValidBakeConfig,
) -> Result<TileLayout, BakeError> {
    let cell_size = config.cell_size_m();
    let bounds = world.bounds;
    let size = bounds.size();
    let extent_limit_m = SPAN_HEIGHT_MAX as f32 * config.cell_height_m();
    if size.y > extent_limit_m {
        return Err(BakeError::TooTall {
            extent_m: size.y,
            limit_m: extent_limit_m,
        });
    }
    let width = u64::from(((size.x / cell_size).ceil() as u32).max(1));
    let depth = u64::from(((size.z / cell_size).ceil() as u32).max(1));
    let border = u64::from(config.border_cells);
    let side_check = |axis: char, cells: u64| {
        if cells > GRID_SIDE_MAX {
            return Err(BakeError::GridSideTooLong {
                axis,
                cells,
                limit: GRID_SIDE_MAX,
            });
        }
        Ok(())
    };
    let layout = match config.config.tile_size_cells {
        None => {
            if width * depth > GRID_COLUMNS_MAX {
                return Err(BakeError::GridTooLarge {
                    width,
                    depth,
                    columns: width * depth,
                    limit: GRID_COLUMNS_MAX,
                });
            }
            side_check('x', width)?;
            side_check('z', depth)?;
            TileLayout {
                origin: bounds.min,
                tiles_x: 1,
                tiles_z: 1,
                tile_cells_x: width as u32,
                tile_cells_z: depth as u32,
                border_cells: 0,
            }
        }
        Some(tile_size) => {
            let tile_size = u64::from(tile_size);
            let (tiles_x, tiles_z) = (width.div_ceil(tile_size), depth.div_ceil(tile_size));
            if tiles_x * tiles_z > TILE_COUNT_MAX {
                return Err(BakeError::TooManyTiles {
                    tiles: tiles_x * tiles_z,
                    limit: TILE_COUNT_MAX,
                });
            }
            let grid = tile_size + 2 * border;
            if grid * grid > GRID_COLUMNS_MAX {
                return Err(BakeError::GridTooLarge {
                    width: grid,
                    depth: grid,
                    columns: grid * grid,
                    limit: GRID_COLUMNS_MAX,
                });
            }
            TileLayout {
                origin: bounds.min,
                tiles_x: tiles_x as u32,
                tiles_z: tiles_z as u32,
                tile_cells_x: tile_size as u32,
                tile_cells_z: tile_size as u32,
                border_cells: border as u32,
            }
        }
    };
    Ok(layout)
}

/// Bins each triangle into every tile whose grid, grown by `margin_cells` around the tile
/// proper, its bounds reach. Returns one job per tile that received a triangle, in row-major
/// tile order, each with its triangles in index order.
fn bin_triangles(
    world: &WorldTriangles,
    config: &ValidBakeConfig,
    layout: &TileLayout,
    margin_cells: u32,
) -> Vec<TileJob> {
    let cell_size = config.cell_size_m();
    let inverse_cell_size = 1.0 / cell_size;
    let (tile_cells_x, tile_cells_z) = (layout.tile_cells_x as i64, layout.tile_cells_z as i64);
    let margin = i64::from(margin_cells);
    let mut bins: Vec<Vec<u32>> = vec![Vec::new(); (layout.tiles_x * layout.tiles_z) as usize];
    // Tiles whose columns [t * size - margin, (t + 1) * size + margin) a cell range reaches.
    let tile_range = |low_cell: i64, high_cell: i64, size: i64, count: u32| -> (u32, u32) {
        let first = (low_cell - margin)
            .div_euclid(size)
            .clamp(0, i64::from(count) - 1) as u32;
        let last = (high_cell + margin)
            .div_euclid(size)
            .clamp(0, i64::from(count) - 1) as u32;
        (first, last)
    };
    for (index, [a, b, c]) in world.corners.iter().enumerate() {
        let (low, high) = (a.min(*b).min(*c), a.max(*b).max(*c));
        // One cell of slack each side covers points on cell lines.
        let cell = |value: f32, origin: f32| ((value - origin) * inverse_cell_size).floor() as i64;
        let (x0, x1) = tile_range(
            cell(low.x, layout.origin.x) - 1,
            cell(high.x, layout.origin.x) + 1,
            tile_cells_x,
            layout.tiles_x,
        );
        let (z0, z1) = tile_range(
            cell(low.z, layout.origin.z) - 1,
            cell(high.z, layout.origin.z) + 1,
            tile_cells_z,
            layout.tiles_z,
        );
        for tile_z in z0..=z1 {
            for tile_x in x0..=x1 {
                bins[(tile_x + tile_z * layout.tiles_x) as usize].push(index as u32);
            }
        }
    }
    bins.into_iter()
        .enumerate()
        .filter(|(_, triangles)| !triangles.is_empty())
        .map(|(index, triangles)| {
            let (tile_x, tile_z) = (index as u32 % layout.tiles_x, index as u32 / layout.tiles_x);
            tile_job(layout, margin_cells, [tile_x, tile_z], triangles)
        })
        .collect()
}

/// The job of tile `[column, row]` of `layout` over `triangles`, its grid `margin_cells`
/// wider on every side.
fn tile_job(
    layout: &TileLayout,
    margin_cells: u32,
    tile: [u32; 2],
    triangles: Vec<u32>,
) -> TileJob {
    let margin = i64::from(margin_cells);
    TileJob {
        tile_x: tile[0] as i32,
        tile_z: tile[1] as i32,
        frame_origin: layout.origin,
        first_column: [
            (i64::from(tile[0]) * i64::from(layout.tile_cells_x) - margin) as i32,
            (i64::from(tile[1]) * i64::from(layout.tile_cells_z) - margin) as i32,
        ],
        grid_width: layout.tile_cells_x + 2 * margin_cells,
        grid_depth: layout.tile_cells_z + 2 * margin_cells,
        triangles,
    }
}

/// The job of every tile that any triangle reaches, each grid including its border.
pub fn tile_jobs(
    world: &WorldTriangles,
    config: &ValidBakeConfig,
    layout: &TileLayout,
) -> Vec<TileJob> {
    bin_triangles(world, config, layout, layout.border_cells)
}

/// Bakes the world triangles.
pub fn bake(world: &WorldTriangles, config: &BakeConfig) -> Result<BakeOutput, BakeError> {
    bake_with_progress(world, config, &|_, _| {})
}

/// Rebuilds the tiles at `tiles` (column, row) from the world triangles as they are now:
/// what a game runs after an edit ([`NavMesh::apply_source_changes`](crate::mesh::NavMesh::apply_source_changes)
/// returns the tiles to rebuild), then commits each with
/// [`NavMesh::commit_rebuilt_tile`](crate::mesh::NavMesh::commit_rebuilt_tile). The tile
/// grid is planned from the world's bounds, as the first bake planned it: an edit inside
/// the level keeps them. Tiles no triangle reaches, or outside the grid, are not returned.
pub fn rebuild_tiles(
    world: &WorldTriangles,
    config: &BakeConfig,
    tiles: &[(i32, i32)],
) -> Result<Vec<TileData>, BakeError> {
    let valid = config.validate()?;
    let layout = plan_tiles(world, &valid)?;
    let jobs = tile_jobs(world, &valid, &layout);
    jobs.par_iter()
        .filter(|job| tiles.contains(&(job.tile_x, job.tile_z)))
        .map(|job| Ok(tile_builder::build_tile(world, job, &valid, &[])?.0))
        .collect()
}

/// Bakes the world triangles, calling `progress(done, total)` as tiles finish (from worker
/// threads, in no particular order).
pub fn bake_with_progress(
    world: &WorldTriangles,
    config: &BakeConfig,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<BakeOutput, BakeError> {
    bake_with(world, config, &[], progress)
}

/// Bakes the world triangles with area volumes applied (see [`areas`]), calling
/// `progress(done, total)` as tiles finish.
///
/// A tiled bake runs in two overlapping phases (`tiled.rs`). Phase 1 rasterizes and
/// filters the level once, in pieces of up to a row of tiles, in parallel. Phase 2 builds
/// each tile from the columns of the pieces its bordered grid overlaps, as soon as they
/// are in, in parallel. All grids share the level's cell frame, so a tile equals what
/// rasterizing its bordered grid directly gives ([`tile_builder::build_tile`], used for
/// single-tile rebuilds), without rasterizing every border region up to four times.
pub fn bake_with(
    world: &WorldTriangles,
    config: &BakeConfig,
    volumes: &[AreaVolume],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<BakeOutput, BakeError> {
    let started = Instant::now();
    let valid = config.validate()?;
    areas::validate_volumes(volumes)?;
    let layout = plan_tiles(world, &valid)?;
    let (jobs, segments) = if layout.border_cells == 0 {
        (tile_jobs(world, &valid, &layout), Vec::new())
    } else {
        tiled::plan_jobs(world, &valid, &layout)
    };
    let total = jobs.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let report = |_: &TileJob| {
        let finished = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(finished, total);
    };

    let results: Vec<(TileData, StageTimes)> = if layout.border_cells == 0 {
        jobs.par_iter()
            .map(|job| {
                let result = tile_builder::build_tile(world, job, &valid, volumes);
                report(job);
                result
            })
            .collect::<Result<_, _>>()?
    } else {
        tiled::bake_tiles(world, &valid, volumes, &layout, &jobs, &segments, &report)?
    };

    Ok(BakeOutput::gathered(valid, world, results, started))
}

impl BakeOutput {
    /// The output of tiles built from `world` (in job order, with their stage times), its
    /// totals, and the warning an empty mesh deserves.
    fn gathered(
        valid: ValidBakeConfig,
        world: &WorldTriangles,
        results: Vec<(TileData, StageTimes)>,
        started: Instant,
    ) -> BakeOutput {
        let mut output = BakeOutput {
            config: Some(valid),
            ..BakeOutput::default()
        };
        let mut stage_times = StageTimes::default();
        for (tile, times) in results {
            stage_times.add(&times);
            output.stats.polygons += tile.polygons.len();
            output.stats.vertices += tile.vertices.len();
            output.stats.detail_triangles += tile.detail_triangles.len();
            output.stats.walkable_area_m2 += tile.walkable_area_m2();
            output.tiles.push(tile);
        }
        output.stats.triangles = world.len();
        output.stats.tiles = output.tiles.len();
        output.stats.stage_ms = stage_times.0.map(|seconds| seconds * 1000.0);
        output.stats.bake_ms = started.elapsed().as_secs_f64() * 1000.0;
        if output.stats.polygons == 0 {
            output.warnings.push(BakeWarning::NoWalkableSurface);
        }
        output
    }
}

impl BakeConfig {
    /// The settings as stored in a `.wmnav` file.
    pub fn to_params(&self) -> BakeParams {
        BakeParams {
            cell_size_m: self.cell_size_m,
            cell_height_m: self.cell_height_m,
            agent_radius_m: self.agent_radius_m,
            agent_height_m: self.agent_height_m,
            agent_max_climb_m: self.agent_max_climb_m,
            agent_max_slope_deg: self.agent_max_slope_deg,
            region_min_area_m2: self.region_min_area_m2,
            region_merge_area_m2: self.region_merge_area_m2,
            edge_max_length_m: self.edge_max_length_m,
            edge_max_error_m: self.edge_max_error_m,
            detail_sample_distance_m: self.detail_sample_distance_m,
            detail_sample_max_error_m: self.detail_sample_max_error_m,
            verts_per_poly_max: self.verts_per_poly_max as u32,
            tile_size_cells: self.tile_size_cells.unwrap_or(0),
            partition: match self.partition {
                Partition::Watershed => 0,
                Partition::Monotone => 1,
            },
            padding: 0,
        }
    }
}

impl BakeOutput {
    /// The output as a `.wmnav` file's content.
    pub fn to_file(&self) -> NavMeshFile {
        NavMeshFile {
            params: self
                .config
                .map(|valid| valid.config.to_params())
                .unwrap_or_default(),
            tiles: self.tiles.clone(),
        }
    }
}
