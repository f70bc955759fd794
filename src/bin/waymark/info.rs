//! `waymark info`: what a level holds once it is in world space.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;
use waymark::scene::WorldTriangles;

use crate::{CliError, level};

#[derive(clap::Args, Debug, Default)]
pub struct InfoArgs {
    /// Level: an .obj, .gltf or .glb file or a built-in level name (default: the proving ground).
    level: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct InstanceReport<'a> {
    name: &'a str,
    source_version: u64,
    triangles: usize,
    degenerate_dropped: usize,
    mirrored: bool,
    support: Option<&'a str>,
}

#[derive(Serialize)]
struct InfoReport<'a> {
    level: &'a str,
    instances: usize,
    triangles: usize,
    triangles_read: usize,
    degenerate_dropped: usize,
    bounds_min_m: [f32; 3],
    bounds_max_m: [f32; 3],
    size_m: [f32; 3],
    triangle_area_m2: f64,
    source_versions: Vec<InstanceReport<'a>>,
}

pub fn run(args: &InfoArgs) -> Result<(), CliError> {
    let level = level::load(args.level.as_deref())?;
    let world = level.scene.world_triangles()?;
    let report = report(&level, &world);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        write_text(&mut out, &report)?;
    }
    Ok(())
}

fn report<'a>(level: &'a level::Level, world: &'a WorldTriangles) -> InfoReport<'a> {
    let source_versions = world
        .instances
        .iter()
        .map(|summary| InstanceReport {
            name: &summary.name,
            source_version: summary.source_version.0,
            triangles: summary.triangles_kept,
            degenerate_dropped: summary.degenerate_dropped,
            mirrored: summary.mirrored,
            support: summary.support.and_then(|id| level.scene.support_name(id)),
        })
        .collect();
    InfoReport {
        level: &level.name,
        instances: world.instances.len(),
        triangles: world.len(),
        triangles_read: world.triangles_read,
        degenerate_dropped: world.degenerate_dropped,
        bounds_min_m: world.bounds.min.to_array(),
        bounds_max_m: world.bounds.max.to_array(),
        size_m: world.bounds.size().to_array(),
        triangle_area_m2: world.total_area_m2(),
        source_versions,
    }
}

fn write_text(out: &mut impl Write, report: &InfoReport) -> std::io::Result<()> {
    let [min_x, min_y, min_z] = report.bounds_min_m;
    let [max_x, max_y, max_z] = report.bounds_max_m;
    let [size_x, size_y, size_z] = report.size_m;
    writeln!(out, "level: {}", report.level)?;
    writeln!(out, "instances: {}", report.instances)?;
    writeln!(
        out,
        "triangles: {} kept of {} read, {} degenerate dropped",
        report.triangles, report.triangles_read, report.degenerate_dropped
    )?;
    writeln!(
        out,
        "world bounds (m): min ({min_x:.3}, {min_y:.3}, {min_z:.3})  max ({max_x:.3}, {max_y:.3}, {max_z:.3})  size {size_x:.3} x {size_y:.3} x {size_z:.3}"
    )?;
    writeln!(out, "triangle area: {:.2} m²", report.triangle_area_m2)?;
    writeln!(out, "source versions:")?;
    for instance in &report.source_versions {
        let mut flags = String::new();
        if instance.mirrored {
            flags.push_str(" mirrored");
        }
        if let Some(support) = instance.support {
            flags.push_str(&format!(" support:{support}"));
        }
        writeln!(
            out,
            "  {:<32} v{:<5} {:>6} triangles{}{}",
            instance.name,
            instance.source_version,
            instance.triangles,
            if instance.degenerate_dropped > 0 {
                format!(" ({} degenerate dropped)", instance.degenerate_dropped)
            } else {
                String::new()
            },
            flags
        )?;
    }
    Ok(())
}
