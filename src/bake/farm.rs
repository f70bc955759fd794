//! Farmed bakes: one rectangle of a level's tile grid baked alone, so a level too large for
//! one machine is baked as a job array (one rectangle per job) and the parts merged with
//! [`merge_parts`](crate::mesh::parts::merge_parts) into the file the whole bake writes.
//!
//! Inputs: the level's world triangles, the bake settings, the rectangle (half-open column
//! and row ranges of [`tile_grid`]). Output: a [`TilePart`]. Each tile is baked from its
//! bordered grid rasterized directly, which equals what the whole bake reads from its
//! segments, so a part's tiles are the whole bake's, bit for bit; every job plans the
//! same grid from the same triangles, so no coordination is needed beyond the grid.

use std::ops::Range;

use rayon::prelude::*;

use std::time::Instant;

use super::{BakeConfig, BakeError, BakeOutput, plan_tiles, tile_builder, tile_jobs};
use crate::mesh::parts::TilePart;
use crate::scene::WorldTriangles;

/// The level's tile grid for `config`: columns (along X) and rows (along Z); one tile
/// for a solo bake.
pub fn tile_grid(world: &WorldTriangles, config: &BakeConfig) -> Result<[u32; 2], BakeError> {
    let layout = plan_tiles(world, &config.validate()?)?;
    Ok([layout.tiles_x, layout.tiles_z])
}

/// A rectangle of tiles baked: the part to merge, and the bake's output for the rectangle
/// alone (its tiles, totals and stage times).
#[derive(Clone, Debug)]
pub struct PartBake {
    /// The part, as written to a part file.
    pub part: TilePart,
    /// The rectangle's bake: tiles, totals, stage times, warnings.
    pub output: BakeOutput,
}

/// Bakes the tiles of `columns` x `rows` (half-open ranges of [`tile_grid`]) that hold any
/// triangle. Refuses an empty rectangle or one reaching past the grid.
pub fn bake_tile_range(
    world: &WorldTriangles,
    config: &BakeConfig,
    columns: Range<u32>,
    rows: Range<u32>,
) -> Result<PartBake, BakeError> {
    let started = Instant::now();
    let valid = config.validate()?;
    let layout = plan_tiles(world, &valid)?;
    let grid = [layout.tiles_x, layout.tiles_z];
    if columns.is_empty() || rows.is_empty() || columns.end > grid[0] || rows.end > grid[1] {
        return Err(BakeError::TileRange {
            columns,
            rows,
            grid,
        });
    }
    let inside = |job: &&tile_builder::TileJob| {
        u32::try_from(job.tile_x).is_ok_and(|x| columns.contains(&x))
            && u32::try_from(job.tile_z).is_ok_and(|z| rows.contains(&z))
    };
    let results = tile_jobs(world, &valid, &layout)
        .par_iter()
        .filter(inside)
        .map(|job| tile_builder::build_tile(world, job, &valid, &[]))
        .collect::<Result<Vec<_>, BakeError>>()?;
    let output = BakeOutput::gathered(valid, world, results, started);
    Ok(PartBake {
        part: TilePart {
            grid,
            columns,
            rows,
            file: output.to_file(),
        },
        output,
    })
}
