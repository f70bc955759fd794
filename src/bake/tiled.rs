//! The tiled bake's two phases: rasterize the level in pieces, then build every tile from
//! the pieces its bordered grid overlaps.
//!
//! Stage: build time, inside [`bake_with`](super::bake_with) when tiles have a border.
//! Inputs: the world triangles, the validated settings, the tile layout and the bordered
//! tile jobs. Output: every tile with its stage times, in job order.
//!
//! Phase 1 rasterizes and filters the level once, in *segments*: up to [`SEGMENT_TILES`]
//! tile interiors of one row side by side, each with a margin of [`SEGMENT_MARGIN`] column
//! on every side, in parallel. Phase 2 builds each tile's compact heightfield straight
//! from the columns its bordered grid overlaps in the segments of its own and its
//! neighbours' rows (never a margin) and runs the remaining stages, in parallel. Every
//! grid shares the level's cell frame and takes its triangles in index order, so a column
//! comes out the same whatever grid rasterized it. The ledge filter reads a column's four
//! neighbours: run on a segment, every column the segment hands out has its true
//! neighbours (the margin's), so it is filtered as in the bordered grid, except on that
//! grid's outermost ring, where the per-tile filter leaves no walkable span (its outside
//! counting as a drop): phase 2 reads nothing there. A tile so equals what rasterizing and
//! filtering its bordered grid directly gives ([`tile_builder::build_tile`], used for
//! single-tile rebuilds; tested byte for byte), and the result does not depend on how the
//! level was cut into segments or on the thread count. The ledge filter runs on each
//! column about once, where on the bordered grids it would run on their whole area (1.46
//! times the level's with tiles of 48 cells), and no tile copies its columns into a grid of
//! its own. A segment holds several tiles rather than one because a triangle pays its
//! setup once per grid it reaches: on nav_test, whose floors are few and large, one grid
//! per tile interior rasterized each triangle 3.5 times.
//!
//! The phases are not separated by a barrier: a tile starts as soon as the segments its grid
//! overlaps are in, so on two cores the one that finishes its segments first builds tiles
//! while the other rasterizes the largest segment (a level's segments can differ
//! severalfold in triangles, and behind a barrier one core waited for the largest).
//!
//! Rows are built in bands of about [`BAND_TILES`] tiles: a band's segments are rasterized
//! just ahead of the tiles that need them and dropped once no later tile reaches them, so
//! memory holds a few rows of segments, not the whole level (a 1.3 km city would otherwise
//! hold a gigabyte).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::compact::{CompactHeightfield, GridFrame};
use super::filter;
use super::heightfield::Heightfield;
use super::tile_builder::{self, Stage, StageTimes, TileJob};
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

/// Columns a segment's grid reaches past its tile interiors on every side: the neighbours
/// the ledge filter reads for the columns it hands out.
const SEGMENT_MARGIN: u32 = 1;

/// Tiles per segment for `layout`.
fn segment_tiles(layout: &TileLayout) -> u32 {
    let tile_columns = u64::from(layout.tile_cells_x) * u64::from(layout.tile_cells_z);
    (SEGMENT_COLUMNS_MAX / tile_columns.max(1)).clamp(1, u64::from(SEGMENT_TILES)) as u32
}

/// The jobs of phase 1: every segment any triangle reaches, in row-major order, each
/// with the triangles whose bounds (one cell wider on every side, which covers points on
/// cell lines) reach its grid, margin included, in index order. A segment job's `tile_x`
/// and `tile_z` are its first tile's.
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
        let reach = 1 + i64::from(SEGMENT_MARGIN);
        (clamp(cell(low) - reach), clamp(cell(high) + reach))
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
                    (first_tile * layout.tile_cells_x) as i32 - SEGMENT_MARGIN as i32,
                    (row * layout.tile_cells_z) as i32 - SEGMENT_MARGIN as i32,
                ],
                grid_width: tiles * layout.tile_cells_x + 2 * SEGMENT_MARGIN,
                grid_depth: layout.tile_cells_z + 2 * SEGMENT_MARGIN,
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
    let mut fields: Vec<OnceLock<Heightfield>> =
        (0..segments.len()).map(|_| OnceLock::new()).collect();
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
            fields[dropped].take();
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
        let built = build_band(
            world,
            &valid,
            volumes,
            segments,
            &mut fields,
            &order,
            rasterized..batch_end,
            &band_jobs,
            report,
        )?;
        for index in rasterized..batch_end {
            if let Some(times) = &built.segment_times[index - rasterized] {
                segment_times.add(times);
            }
        }
        rasterized = batch_end;
        results.extend(built.tiles);
    }
    if let Some((_, times)) = results.first_mut() {
        times.add(&segment_times);
    }
    Ok(results)
}

/// A band's tiles and the stage times of the segments it rasterized.
struct BuiltBand {
    /// The band's tiles, in job order.
    tiles: Vec<(TileData, StageTimes)>,
    /// Stage times of the batch's segments, by index from the batch's first.
    segment_times: Vec<Option<StageTimes>>,
}

/// Rasterizes and filters the segments of `batch` (into `fields`, in `order`: the most
/// triangles first) and builds `band_jobs`, each as soon as the batch's segments its grid
/// overlaps are in: one parallel scope, not a phase barrier, so a core that finishes its
/// segments starts on tiles instead of waiting for the largest segment. Every tile reads
/// only the segments it overlaps, each written once before any reader starts, so the
/// result does not depend on the order tasks run in.
#[allow(clippy::too_many_arguments)]
fn build_band(
    world: &WorldTriangles,
    valid: &ValidBakeConfig,
    volumes: &[AreaVolume],
    segments: &[TileJob],
    fields: &mut [OnceLock<Heightfield>],
    order: &[usize],
    batch: std::ops::Range<usize>,
    band_jobs: &[&TileJob],
    report: &(dyn Fn(&TileJob) + Sync),
) -> Result<BuiltBand, BakeError> {
    // For each of the batch's segments, the band jobs waiting on it; for each job, how
    // many of the batch's segments it still waits on.
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); batch.len()];
    let waiting: Vec<AtomicUsize> = band_jobs
        .iter()
        .enumerate()
        .map(|(job_index, job)| {
            let mut count = 0;
            for segment in overlapped_segments(job, segments) {
                if batch.contains(&segment) {
                    dependents[segment - batch.start].push(job_index);
                    count += 1;
                }
            }
            AtomicUsize::new(count)
        })
        .collect();
    let tiles: Vec<OnceLock<Result<(TileData, StageTimes), BakeError>>> =
        band_jobs.iter().map(|_| OnceLock::new()).collect();
    let segment_times: Vec<OnceLock<StageTimes>> = batch.clone().map(|_| OnceLock::new()).collect();
    let fields: &[OnceLock<Heightfield>] = fields;
    let build = |job_index: usize| {
        let job = band_jobs[job_index];
        let built = assemble_tile(world, job, valid, volumes, segments, fields);
        report(job);
        // Each job is built once: the task that takes its count to zero spawns it.
        let _ = tiles[job_index].set(built);
    };
    rayon::scope_fifo(|scope| {
        for (job_index, count) in waiting.iter().enumerate() {
            if count.load(Ordering::Relaxed) == 0 {
                scope.spawn_fifo(move |_| build(job_index));
            }
        }
        for &index in order {
            let (dependents, waiting) = (&dependents, &waiting);
            let (segment_times, build) = (&segment_times, &build);
            scope.spawn_fifo(move |scope| {
                let (mut field, mut times) =
                    tile_builder::rasterize_job(world, &segments[index], valid);
                let clock = std::time::Instant::now();
                filter::filter_ledges(
                    &mut field,
                    valid.walkable_height_cells,
                    valid.walkable_climb_cells,
                );
                times.0[Stage::Filter as usize] += clock.elapsed().as_secs_f64();
                let _ = fields[index].set(field);
                let _ = segment_times[index - batch.start].set(times);
                for &job_index in &dependents[index - batch.start] {
                    // The last of its segments in: the job can start.
                    if waiting[job_index].fetch_sub(1, Ordering::AcqRel) == 1 {
                        scope.spawn_fifo(move |_| build(job_index));
                    }
                }
            });
        }
    });
    let tiles = tiles
        .into_iter()
        .map(|built| built.into_inner().expect("every job of the band is built"))
        .collect::<Result<_, _>>()?;
    Ok(BuiltBand {
        tiles,
        segment_times: segment_times
            .into_iter()
            .map(OnceLock::into_inner)
            .collect(),
    })
}

/// The indices of the segments (row-major) whose grids overlap `job`'s bordered grid.
fn overlapped_segments<'a>(
    job: &'a TileJob,
    segments: &'a [TileJob],
) -> impl Iterator<Item = usize> + 'a {
    let overlaps = |low: i32, size: u32, other_low: i32, other_size: u32| {
        low < other_low + other_size as i32 && other_low < low + size as i32
    };
    // Segments are row-major: the ones this grid overlaps lie between the first whose
    // rows reach its top and the first past its bottom.
    let grid_rows = job.first_column[1]..job.first_column[1] + job.grid_depth as i32;
    let first = segments.partition_point(|segment| {
        segment.first_column[1] + segment.grid_depth as i32 <= grid_rows.start
    });
    segments[first..]
        .iter()
        .enumerate()
        .take_while(move |(_, segment)| segment.first_column[1] < grid_rows.end)
        .filter(move |(_, segment)| {
            overlaps(
                job.first_column[0],
                job.grid_width,
                segment.first_column[0],
                segment.grid_width,
            )
        })
        .map(move |(offset, _)| first + offset)
}

/// Builds one tile from the segments its bordered grid overlaps (`fields`, indexed like
/// `segments`; a segment no tile of this band reaches may be absent): its compact
/// heightfield is read straight from the segments' columns, then the remaining stages run.
fn assemble_tile(
    world: &WorldTriangles,
    job: &TileJob,
    valid: &ValidBakeConfig,
    volumes: &[AreaVolume],
    segments: &[TileJob],
    fields: &[OnceLock<Heightfield>],
) -> Result<(TileData, StageTimes), BakeError> {
    let clock = std::time::Instant::now();
    let frame = GridFrame {
        width: job.grid_width,
        depth: job.grid_depth,
        origin: job.grid_origin(valid.cell_size_m()),
        cell_size: valid.cell_size_m(),
        cell_height: valid.cell_height_m(),
    };
    let sources: Vec<(&TileJob, &Heightfield)> = overlapped_segments(job, segments)
        .filter_map(|index| Some((&segments[index], fields[index].get()?)))
        .collect();
    let mut columns = SegmentColumns::new(job, &sources);
    let compact = CompactHeightfield::build_from_columns(
        frame,
        valid.walkable_height_cells,
        valid.walkable_climb_cells,
        valid.border_cells,
        |column| columns.source(column),
    );
    let mut compact_times = StageTimes::default();
    compact_times.0[Stage::Compact as usize] = clock.elapsed().as_secs_f64();
    let (tile, times, _) = tile_builder::build_tile_from_compact(
        world,
        job,
        (compact, compact_times),
        valid,
        volumes,
    )?;
    Ok((tile, times))
}

/// Walks a tile's bordered grid column by column (X fastest) and names, for each, the
/// segment column holding its spans: the segment whose interior (margin excluded) holds
/// it. The grid's outermost ring has none: the tile's own ledge filter would leave no
/// walkable span there (its outside counting as a drop), and an unwalkable span is not
/// compacted, so reading nothing there equals filtering the bordered grid directly.
struct SegmentColumns<'a> {
    job: &'a TileJob,
    sources: &'a [(&'a TileJob, &'a Heightfield)],
    /// The next column's place in the grid.
    x: u32,
    z: u32,
    /// The sources whose interiors hold row `z`.
    row: Vec<(&'a TileJob, &'a Heightfield)>,
}

impl<'a> SegmentColumns<'a> {
    fn new(job: &'a TileJob, sources: &'a [(&'a TileJob, &'a Heightfield)]) -> Self {
        let mut columns = SegmentColumns {
            job,
            sources,
            x: 0,
            z: 0,
            row: Vec::with_capacity(sources.len()),
        };
        columns.find_row();
        columns
    }

    /// The sources whose interiors hold the current row.
    fn find_row(&mut self) {
        let row = self.job.first_column[1] + self.z as i32;
        let margin = SEGMENT_MARGIN as i32;
        self.row.clear();
        self.row
            .extend(self.sources.iter().copied().filter(|(segment, _)| {
                let first = segment.first_column[1] + margin;
                row >= first && row < first + (segment.grid_depth - 2 * SEGMENT_MARGIN) as i32
            }));
    }

    /// The source of `column`, the column after the last one asked for (the walk goes
    /// row by row, so a row's sources are found once), then moves on.
    fn source(&mut self, column: usize) -> Option<(&'a Heightfield, usize)> {
        let (x, z) = (self.x, self.z);
        let (width, depth) = (self.job.grid_width, self.job.grid_depth);
        debug_assert_eq!(
            column,
            x as usize + z as usize * width as usize,
            "columns are walked in order"
        );
        self.x += 1;
        if self.x == width {
            self.x = 0;
            self.z += 1;
            self.find_row();
        }
        if x == 0 || z == 0 || x + 1 == width || z + 1 == depth {
            return None;
        }
        let (column, row) = (
            self.job.first_column[0] + x as i32,
            self.job.first_column[1] + z as i32,
        );
        let margin = SEGMENT_MARGIN as i32;
        self.row.iter().find_map(|&(segment, field)| {
            let first = segment.first_column[0] + margin;
            let interior = (segment.grid_width - 2 * SEGMENT_MARGIN) as i32;
            (column >= first && column < first + interior).then(|| {
                let local_x = (column - segment.first_column[0]) as u32;
                let local_z = (row - segment.first_column[1]) as u32;
                (field, field.column_index(local_x, local_z))
            })
        })
    }
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
