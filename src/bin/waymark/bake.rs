//! `waymark bake`: bake a level into tiles, report what came out, optionally write the
//! `.wmnav` file and a top-down SVG.

use std::io::{IsTerminal, Write};
use std::ops::Range;
use std::path::PathBuf;

use serde::Serialize;
use waymark::bake::farm::{bake_tile_range, tile_grid};
use waymark::bake::{BakeOutput, BakeWarning, STAGE_NAMES, bake_with_progress};
use waymark::debug::{draw_input, draw_tiles, picture::Picture};

use crate::bake_args::BakeArgs;
use crate::common::{peak_rss_mib, threads_arg, with_threads, write_picture};
use crate::{CliError, level};

#[derive(clap::Args, Debug, Default)]
pub struct BakeCommand {
    /// Level: an .obj, .gltf or .glb file or a built-in level name (default: the proving ground).
    level: Option<PathBuf>,
    #[command(flatten)]
    bake: BakeArgs,
    /// Write the tiles to this .wmnav file (with --tiles: a part file for `waymark merge`).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Bake only this rectangle of the level's tile grid, as half-open ranges of tile
    /// columns and rows (`--json` reports the grid as `tile_grid`): one part of a farmed
    /// bake, merged with the others by `waymark merge`.
    #[arg(long, value_name = "X0..X1,Z0..Z1", value_parser = tile_rectangle_arg)]
    tiles: Option<TileRectangle>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Draw the result, top-down, to this SVG file.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Draw the same picture to this PNG file (the caption in its text chunks).
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = threads_arg)]
    threads: Option<usize>,
}

/// A rectangle of tile columns and rows, half-open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileRectangle {
    columns: Range<u32>,
    rows: Range<u32>,
}

/// Parses `X0..X1,Z0..Z1`.
fn tile_rectangle_arg(text: &str) -> Result<TileRectangle, String> {
    let range = |part: &str| -> Option<Range<u32>> {
        let (start, end) = part.trim().split_once("..")?;
        Some(start.trim().parse().ok()?..end.trim().parse().ok()?)
    };
    let parsed = text
        .split_once(',')
        .and_then(|(columns, rows)| Some((range(columns)?, range(rows)?)));
    match parsed {
        Some((columns, rows)) if !columns.is_empty() && !rows.is_empty() => {
            Ok(TileRectangle { columns, rows })
        }
        _ => Err(format!(
            "'{text}' is not a rectangle of tiles X0..X1,Z0..Z1 (half-open column and row ranges, non-empty, e.g. 0..4,2..3)"
        )),
    }
}

#[derive(Serialize)]
struct BakeReport<'a> {
    level: &'a str,
    tile_grid: [u32; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    tile_rectangle: Option<[[u32; 2]; 2]>,
    triangles: usize,
    tiles: usize,
    polygons: usize,
    vertices: usize,
    detail_triangles: usize,
    walkable_area_m2: f64,
    bake_ms: f64,
    stage_ms: serde_json::Map<String, serde_json::Value>,
    max_vertices_per_polygon: u8,
    threads: usize,
    peak_rss_mib: Option<f64>,
    file_bytes: Option<usize>,
    warnings: Vec<String>,
}

pub fn run(command: &BakeCommand) -> Result<(), CliError> {
    let level = level::load(command.level.as_deref())?;
    let world = level.scene.world_triangles()?;
    let config = command.bake.config();
    let progress = (std::io::stdout().is_terminal() && !command.json).then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("baking {bar:40} {pos}/{len} tiles")
                .expect("the template is valid"),
        );
        bar
    });
    let report_progress = |done: usize, total: usize| {
        if let Some(bar) = &progress {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    };
    let grid = tile_grid(&world, &config)?;
    let (output, part) = match &command.tiles {
        None => {
            let output = with_threads(command.threads, || {
                bake_with_progress(&world, &config, &report_progress)
            })??;
            (output, None)
        }
        Some(rectangle) => {
            let baked = with_threads(command.threads, || {
                bake_tile_range(
                    &world,
                    &config,
                    rectangle.columns.clone(),
                    rectangle.rows.clone(),
                )
            })??;
            (baked.output, Some(baked.part))
        }
    };
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }

    let file_bytes = match &command.out {
        Some(path) => {
            let bytes = match &part {
                Some(part) => part.to_bytes(),
                None => output.to_file().to_bytes(),
            };
            std::fs::write(path, &bytes).map_err(|source| CliError::Write {
                path: path.clone(),
                source,
            })?;
            Some(bytes.len())
        }
        None => None,
    };
    if command.svg.is_some() || command.png.is_some() {
        let mut drawer = Picture::new();
        let slope_cos = config.agent_max_slope_deg.to_radians().cos();
        draw_input(&world, slope_cos, &mut drawer);
        draw_tiles(&output.tiles, &mut drawer);
        let caption = format!(
            "{}: {} polygons, {:.1} m² walkable, {} tiles, cell {} m, agent r {} m h {} m",
            level.name,
            output.stats.polygons,
            output.stats.walkable_area_m2,
            output.stats.tiles,
            config.cell_size_m,
            config.agent_radius_m,
            config.agent_height_m
        );
        write_picture(
            &drawer,
            command.svg.as_deref(),
            command.png.as_deref(),
            1200,
            &caption,
        )?;
    }

    let threads = command.threads.unwrap_or_else(rayon::current_num_threads);
    let report = report(
        &level.name,
        &output,
        threads,
        file_bytes,
        grid,
        command.tiles.as_ref(),
    );
    let mut out = std::io::stdout().lock();
    if command.json {
        serde_json::to_writer(&mut out, &report).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        writeln!(out, "level: {}", report.level)?;
        writeln!(out, "triangles: {}", report.triangles)?;
        match &command.tiles {
            Some(rectangle) => writeln!(
                out,
                "tiles: {} (of columns {:?}, rows {:?} of the {}x{} tile grid)",
                report.tiles, rectangle.columns, rectangle.rows, grid[0], grid[1]
            )?,
            None => writeln!(
                out,
                "tiles: {} (tile grid {}x{})",
                report.tiles, grid[0], grid[1]
            )?,
        }
        writeln!(
            out,
            "polygons: {} (at most {} vertices each)",
            report.polygons, report.max_vertices_per_polygon
        )?;
        writeln!(out, "vertices: {}", report.vertices)?;
        writeln!(out, "detail triangles: {}", report.detail_triangles)?;
        writeln!(out, "walkable area: {:.1} m²", report.walkable_area_m2)?;
        writeln!(
            out,
            "bake: {:.2} ms on {} threads",
            report.bake_ms, report.threads
        )?;
        for (stage, ms) in STAGE_NAMES.iter().zip(output.stats.stage_ms) {
            writeln!(out, "  {stage:<15} {ms:>8.2} ms")?;
        }
        if let Some(bytes) = report.file_bytes {
            writeln!(out, "file: {bytes} bytes")?;
        }
        if let Some(peak) = report.peak_rss_mib {
            writeln!(out, "peak resident memory: {peak:.1} MiB")?;
        }
        for warning in &report.warnings {
            writeln!(out, "warning: {warning}")?;
        }
    }
    Ok(())
}

fn report<'a>(
    level: &'a str,
    output: &BakeOutput,
    threads: usize,
    file_bytes: Option<usize>,
    tile_grid: [u32; 2],
    rectangle: Option<&TileRectangle>,
) -> BakeReport<'a> {
    let stats = &output.stats;
    let stage_ms = STAGE_NAMES
        .iter()
        .zip(stats.stage_ms)
        .map(|(name, ms)| ((*name).to_owned(), serde_json::Value::from(ms)))
        .collect();
    let warnings = output
        .warnings
        .iter()
        .map(|warning| match warning {
            BakeWarning::NoWalkableSurface => {
                "no walkable surface for this agent: the navmesh is empty".to_owned()
            }
        })
        .collect();
    BakeReport {
        level,
        tile_grid,
        tile_rectangle: rectangle.map(|rectangle| {
            [
                [rectangle.columns.start, rectangle.columns.end],
                [rectangle.rows.start, rectangle.rows.end],
            ]
        }),
        triangles: stats.triangles,
        tiles: stats.tiles,
        polygons: stats.polygons,
        vertices: stats.vertices,
        detail_triangles: stats.detail_triangles,
        walkable_area_m2: stats.walkable_area_m2,
        bake_ms: stats.bake_ms,
        stage_ms,
        max_vertices_per_polygon: output
            .tiles
            .iter()
            .flat_map(|t| &t.polygons)
            .map(|p| p.vertex_count)
            .max()
            .unwrap_or(0),
        threads,
        peak_rss_mib: peak_rss_mib(),
        file_bytes,
        warnings,
    }
}
