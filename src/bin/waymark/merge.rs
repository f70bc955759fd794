//! `waymark merge PARTS... --out LEVEL.wmnav`: the parts of a farmed bake (`waymark bake
//! --tiles ... --out PART`) merged into the file the whole bake writes, byte for byte.

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;
use waymark::mesh::parts::{TilePart, merge_parts};

use crate::CliError;

#[derive(clap::Args, Debug)]
pub struct MergeCommand {
    /// The part files, in any order.
    #[arg(required = true, value_name = "PART")]
    parts: Vec<PathBuf>,
    /// The merged .wmnav file to write.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(command: &MergeCommand) -> Result<(), CliError> {
    let mut parts = Vec::with_capacity(command.parts.len());
    for path in &command.parts {
        let name = path.display().to_string();
        let bytes = waymark::geom::limits::read_file(path)
            .map_err(|source| CliError::Usage(format!("cannot read '{name}': {source}")))?;
        let part = TilePart::from_bytes(&bytes)
            .map_err(|error| CliError::Usage(format!("part '{name}': {error}")))?;
        parts.push((name, part));
    }
    let merged = merge_parts(&parts).map_err(CliError::library)?;
    let bytes = merged.to_bytes();
    std::fs::write(&command.out, &bytes).map_err(|source| CliError::Write {
        path: command.out.clone(),
        source,
    })?;
    let polygons: usize = merged.tiles.iter().map(|tile| tile.polygons.len()).sum();
    let mut out = std::io::stdout().lock();
    if command.json {
        let report = json!({
            "parts": parts.len(),
            "tile_grid": parts[0].1.grid,
            "tiles": merged.tiles.len(),
            "polygons": polygons,
            "file_bytes": bytes.len(),
        });
        writeln!(out, "{report}")?;
    } else {
        writeln!(
            out,
            "{} parts of a {}x{} tile grid: {} tiles, {polygons} polygons, {} bytes in {}",
            parts.len(),
            parts[0].1.grid[0],
            parts[0].1.grid[1],
            merged.tiles.len(),
            bytes.len(),
            command.out.display()
        )?;
    }
    Ok(())
}
