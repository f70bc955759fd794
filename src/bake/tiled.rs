//! The tiled bake's two phases: rasterize the level in pieces, then build every tile from
//! the pieces its bordered grid overlaps.
//!
//! Stage: build time, inside [`bake_with`](super::bake_with) when tiles have a border.
//! Inputs: the world triangles, the validated settings, the tile layout and the bordered
//! tile jobs. Output: every tile with its stage times, in job order.
//!
//! Phase 1 rasterizes (and filters column by column) the level once, in *segments*: up to
//! [`SEGMENT_TILES`] tile interiors of one row side by side, in parallel. Phase 2 assembles
//! each tile's bordered grid by copying the columns it overlaps from the segments of its
//! own and its neighbours' rows and runs the remaining stages, in parallel. Every grid
//! shares the level's cell frame and takes its triangles in index order, so a column comes
//! out the same whatever grid rasterized it: the assembled grid equals what rasterizing the
//! bordered grid directly gives ([`tile_builder::build_tile`], used for single-tile
//! rebuilds), and the result does not depend on how the level was cut into segments or on
//! the thread count. A segment holds several tiles rather than one because a triangle
//! pays its setup once per grid it reaches: on nav_test, whose floors are few and large,
//! one grid per tile interior rasterized each triangle 3.5 times.
//!
//! Rows are built in bands of about [`BAND_TILES`] tiles: a band's segments are rasterized
//! just ahead of the tiles that need them and dropped once no later tile reaches them, so
//! memory holds a few rows of segments, not the whole level (a 1.3 km city would otherwise
//! hold a gigabyte).

use rayon::prelude::*;

use super::heightfield::Heightfield;
use super::tile_builder::{self, StageTimes, TileJob};
use super::{AreaVolume, BakeError, TileLayout, ValidBakeConfig};
use crate::mesh::TileData;
use crate::scene::WorldTriangles;

/// Tiles per band of rows built at once: enough to keep every core busy, few enough that a
/// band's segments stay small.
pub(super) const BAND_TILES: usize = 256;

/// Tile interiors per segment, at most: wide enough that a large floor is set up a few
/// times, not once per tile; narrow enough that a row splits into pieces for the cores.
const SEGMENT_TILES: u32 = 16;

/// Grid columns per segment, at most (4 MiB of column heads), so tiles of a thousand cells
/// still rasterize one at a time.
const SEGMENT_COLUMNS_MAX: u64 = 1 << 20;

/// Tiles per segment for `layout`.
fn segment_tiles(layout: &TileLayout) -> u32 {
    let tile_columns = u64::from(layout.tile_cells_x) * u64::from(layout.tile_cells_z);
    (SEGMENT_COLUMNS_MAX / tile_columns.max(1)).clamp(1, u64::from(SEGMENT_TILES)) as u32
}

/// The jobs of phase 1: every segment any triangle reaches, in row-major order, each
/// with the triangles whose bounds (one cell wider on every side, which covers points on
/// cell lines) reach its grid, in index order. A segment job's `tile_x` and `tile_z` are
/// its first tile's.
fn segment_jobs(world: &WorldTriangles, cell_size: f32, layout: &TileLayout) -> Vec<TileJob> {
    let per_segment = segment_tiles(layout);
    let segments_x = layout.tiles_x.div_ceil(per_segment);
    let mut bins: Vec<Vec<u32>> = vec![Vec::new(); (segments_x * layout.tiles_z) as usize];
    let inverse_cell_size = 1.0 / cell_size;
    let span_x = i64::from(layout.tile_cells_x) * i64::from(per_segment);
    let span_z = i64::from(layout.tile_cells_z);
    let range = |low: f32, high: f32, origin: f32, span: i64, count: u32| {
        let cell = |value: f32| ((value - origin) * inverse_cell_size).floor() as i64;
        let clamp = |cell: i64| cell.div_euclid(span).clamp(0, i64::from(count) - 1) as u32;
        (clamp(cell(low) - 1), clamp(cell(high) + 1))
    };
    for (index, [a, b, c]) in world.corners.iter().enumerate() {
        let (low, high) = (a.min(*b).min(*c), a.max(*b).max(*c));
        let (x0, x1) = range(low.x, high.x, layout.origin.x, span_x, segments_x);
        let (z0, z1) = range(low.z, high.z, layout.origin.z, span_z, layout.tiles_z);
        for row in z0..=z1 {
            for segment in x0..=x1 {
                bins[(segment + row * segments_x) as usize].push(index as u32);
            }
        }
    }
    bins.into_iter()
        .enumerate()
        .filter(|(_, triangles)| !triangles.is_empty())
        .map(|(index, triangles)| {
            let (segment, row) = (index as u32 % segments_x, index as u32 / segments_x);
            let first_tile = segment * per_segment;
            let tiles = per_segment.min(layout.tiles_x - first_tile);
            TileJob {
                tile_x: first_tile as i32,
                tile_z: row as i32,
                frame_origin: layout.origin,
                first_column: [
                    (first_tile * layout.tile_cells_x) as i32,
                    (row * layout.tile_cells_z) as i32,
                ],
                grid_width: tiles * layout.tile_cells_x,
                grid_depth: layout.tile_cells_z,
                triangles,
            }
        })
        .collect()
}

/// Builds every tile of `jobs` (bordered, row-major) in two phases (see the module doc).
/// Returns the tiles in job order with their stage times; phase 1's times are added to the
/// first tile's. `report` is called as each tile finishes.
pub(super) fn bake_tiles(
    world: &WorldTriangles,
    valid: &ValidBakeConfig,
    volumes: &[AreaVolume],
    layout: &TileLayout,
    jobs: &[TileJob],
    segments: &[TileJob],
    report: &(dyn Fn(&TileJob) + Sync),
) -> Result<Vec<(TileData, StageTimes)>, BakeError> {
    let valid = *valid;
    let mut fields: Vec<Option<Heightfield>> = vec![None; segments.len()];
    let mut segment_times = StageTimes::default();
    // Rows a border reaches on each side.
    let reach = layout
        .border_cells
        .div_ceil(layout.tile_cells_x.min(layout.tile_cells_z)) as i32;
    let mut results: Vec<(TileData, StageTimes)> = Vec::with_capacity(jobs.len());
    let rows_per_band = (BAND_TILES / layout.tiles_x.max(1) as usize).max(1) as i32;
    // Segments are in row-major order: those before `rasterized` are done, those before
    // `dropped` are done with.
    let (mut rasterized, mut dropped) = (0usize, 0usize);
    let mut band_start = 0i32;
    while band_start < layout.tiles_z as i32 {
        let band_end = (band_start + rows_per_band).min(layout.tiles_z as i32);
        // No tile from here on reaches rows above `band_start - reach`.
        while dropped < segments.len() && segments[dropped].tile_z < band_start - reach {
            fields[dropped] = None;
            dropped += 1;
        }
        let band_jobs: Vec<&TileJob> = jobs
            .iter()
            .filter(|job| job.tile_z >= band_start && job.tile_z < band_end)
            .collect();
        band_start = band_end;
        if band_jobs.is_empty() {
            continue;
        }
        // Rasterize every segment this band reaches that is not done yet, the ones with
        // the most triangles first so that the last to finish is a small one.
        let needed = band_end + reach;
        let batch_end = rasterized
            + segments[rasterized..]
                .iter()
                .take_while(|segment| segment.tile_z < needed)
                .count();
        let mut order: Vec<usize> = (rasterized..batch_end).collect();
        order.sort_by_key(|&index| std::cmp::Reverse(segments[index].triangles.len()));
        let rasterized_batch: Vec<(Heightfield, StageTimes)> = order
            .par_iter()
            .with_max_len(1)
            .map(|&index| tile_builder::rasterize_job(world, &segments[index], &valid))
            .collect();
        for (index, (field, times)) in order.into_iter().zip(rasterized_batch) {
            segment_times.add(&times);
            fields[index] = Some(field);
        }
        rasterized = batch_end;
        let fields_ref = &fields;
        let built: Vec<(TileData, StageTimes)> = band_jobs
            .par_iter()
            .map(|job| {
                let built = assemble_tile(world, job, &valid, volumes, segments, fields_ref);
                report(job);
                built
            })
            .collect::<Result<_, _>>()?;
        results.extend(built);
    }
    if let Some((_, times)) = results.first_mut() {
        times.add(&segment_times);
    }
    Ok(results)
}

/// Assembles one tile's bordered grid from the segments it overlaps (`fields`, indexed
/// like `segments`; a segment no tile of this band reaches may be absent) and runs the
/// remaining stages; the assembly time is counted in the first stage.
fn assemble_tile(
    world: &WorldTriangles,
    job: &TileJob,
    valid: &ValidBakeConfig,
    volumes: &[AreaVolume],
    segments: &[TileJob],
    fields: &[Option<Heightfield>],
) -> Result<(TileData, StageTimes), BakeError> {
    let clock = std::time::Instant::now();
    let mut field = Heightfield::in_frame(
        job.grid_width,
        job.grid_depth,
        job.frame_origin,
        job.first_column,
        valid.cell_size_m(),
        valid.cell_height_m(),
    );
    let overlaps = |low: i32, size: u32, other_low: i32, other_size: u32| {
        low < other_low + other_size as i32 && other_low < low + size as i32
    };
    // Segments are row-major: the ones this grid overlaps lie between the first whose
    // rows reach its top and the first past its bottom.
    let grid_rows = job.first_column[1]..job.first_column[1] + job.grid_depth as i32;
    let first = segments.partition_point(|segment| {
        segment.first_column[1] + segment.grid_depth as i32 <= grid_rows.start
    });
    for (segment, source) in segments[first..]
        .iter()
        .zip(&fields[first..])
        .take_while(|(segment, _)| segment.first_column[1] < grid_rows.end)
    {
        let columns_overlap = overlaps(
            job.first_column[0],
            job.grid_width,
            segment.first_column[0],
            segment.grid_width,
        );
        if let (true, Some(source)) = (columns_overlap, source) {
            field.copy_columns_from(source);
        }
    }
    let assembly_seconds = clock.elapsed().as_secs_f64();
    let (tile, mut times, _) =
        tile_builder::build_tile_from_field(world, job, field, valid, volumes)?;
    times.0[0] += assembly_seconds;
    Ok((tile, times))
}

/// The jobs of a tiled bake's two phases: the bordered tiles, and the segments of phase 1
/// (binned at the same time, on two threads).
pub(super) fn plan_jobs(
    world: &WorldTriangles,
    valid: &ValidBakeConfig,
    layout: &TileLayout,
) -> (Vec<TileJob>, Vec<TileJob>) {
    rayon::join(
        || super::tile_jobs(world, valid, layout),
        || segment_jobs(world, valid.cell_size_m(), layout),
    )
}
