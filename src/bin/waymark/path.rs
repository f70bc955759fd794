//! `waymark path`: run a CSV of start/end pairs through nearest polygon, path and straight
//! path, and report verdicts, lengths and per-query times.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use glam::Vec3;
use serde::Serialize;
use waymark::query::{NODE_POOL_DEFAULT, NodePool, QueryFilter, RouteBuffers, route_with};

use crate::bake_args::BakeArgs;
use crate::{CliError, level};

/// Half extents of the nearest-polygon box around each end, metres (Detour's reference runs).
const NEAREST_HALF_EXTENTS: Vec3 = Vec3::new(2.0, 4.0, 2.0);

#[derive(clap::Args, Debug)]
pub struct PathCommand {
    /// Level: an .obj, .gltf or .glb file (baked with the flags below), a .wmnav file, or a built-in level.
    level: PathBuf,
    /// CSV with columns sx,sy,sz,ex,ey,ez (a header row; extra columns are ignored).
    #[arg(long, value_name = "FILE")]
    queries: PathBuf,
    #[command(flatten)]
    bake: BakeArgs,
    /// Write complete,length,path_polys,straight_points per query to this CSV.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct PathReport {
    queries: usize,
    complete_fraction: f64,
    mean_us: f64,
    median_us: f64,
    p99_us: f64,
    mean_length_complete: f64,
}

pub(crate) struct Answer {
    complete: bool,
    pub(crate) length: f32,
    path_polys: usize,
    straight_points: usize,
}

fn read_queries(path: &std::path::Path) -> Result<Vec<(Vec3, Vec3)>, CliError> {
    let text = waymark::geom::limits::read_text_file(path)
        .map_err(|source| CliError::Usage(format!("cannot read '{}': {source}", path.display())))?;
    parse_queries(&text, path)
}

/// The queries of a CSV file's `text` (`path` names it in errors).
pub(crate) fn parse_queries(
    text: &str,
    path: &std::path::Path,
) -> Result<Vec<(Vec3, Vec3)>, CliError> {
    use waymark::geom::limits::{COORDINATE_MAX_M, within};
    let mut queries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let values: Result<Vec<f32>, _> = line
            .split(',')
            .take(6)
            .map(|v| v.trim().parse::<f32>())
            .collect();
        // The first line is a header when it is not numbers (`sx,sy,sz,ex,ey,ez`); a file
        // without one starts with its first query, which is kept.
        if index == 0 && values.is_err() {
            continue;
        }
        let bad = || {
            CliError::Usage(format!(
                "'{}' line {}: expected six numbers sx,sy,sz,ex,ey,ez, each finite and \
                 within {COORDINATE_MAX_M} m, got '{line}'",
                path.display(),
                index + 1
            ))
        };
        let values = values.map_err(|_| bad())?;
        if values.len() < 6 || values.iter().any(|&v| !within(v, COORDINATE_MAX_M)) {
            return Err(bad());
        }
        queries.push((
            Vec3::new(values[0], values[1], values[2]),
            Vec3::new(values[3], values[4], values[5]),
        ));
    }
    Ok(queries)
}

pub fn run(command: &PathCommand) -> Result<(), CliError> {
    let mesh = level::load_navmesh(&command.level, &command.bake)?;
    let queries = read_queries(&command.queries)?;
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let mut pool = NodePool::new(NODE_POOL_DEFAULT);
    // Each route's buffers are handed back for the next, as a game's query loop would.
    let mut buffers = RouteBuffers::default();
    let mut answers = Vec::with_capacity(queries.len());
    let mut times_us = Vec::with_capacity(queries.len());
    for &(start, end) in &queries {
        // Timed as Detour's reference times its queries: both snaps, the search and the
        // straight path; the answer's length is summed outside the clock on both sides.
        let clock = Instant::now();
        let found = route(&snapshot, &filter, &mut pool, &mut buffers, start, end)?;
        times_us.push(clock.elapsed().as_secs_f64() * 1e6);
        answers.push(answer_of(found, &mut buffers));
    }
    if let Some(path) = &command.out {
        let mut text = String::from("complete,length,path_polys,straight_points\n");
        for answer in &answers {
            text.push_str(&format!(
                "{},{:.6},{},{}\n",
                u8::from(answer.complete),
                answer.length,
                answer.path_polys,
                answer.straight_points
            ));
        }
        std::fs::write(path, text).map_err(|source| CliError::Write {
            path: path.clone(),
            source,
        })?;
    }
    let report = summarize(&answers, &mut times_us);
    let mut out = std::io::stdout().lock();
    if command.json {
        serde_json::to_writer(&mut out, &report).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        writeln!(out, "queries: {}", report.queries)?;
        writeln!(out, "complete: {:.1}%", report.complete_fraction * 100.0)?;
        writeln!(
            out,
            "time per query: mean {:.2} µs, median {:.2} µs, p99 {:.2} µs",
            report.mean_us, report.median_us, report.p99_us
        )?;
        writeln!(
            out,
            "mean straight-path length (complete): {:.3} m",
            report.mean_length_complete
        )?;
    }
    Ok(())
}

/// The route from `start` to `end` as the query runs take it (ends snapped within
/// [`NEAREST_HALF_EXTENTS`]), built in `buffers`; `None` when an end has no polygon near it.
pub(crate) fn route(
    snapshot: &waymark::mesh::Snapshot,
    filter: &QueryFilter,
    pool: &mut NodePool,
    buffers: &mut RouteBuffers,
    start: Vec3,
    end: Vec3,
) -> Result<Option<waymark::query::Route>, CliError> {
    route_with(
        snapshot,
        start,
        end,
        NEAREST_HALF_EXTENTS,
        filter,
        pool,
        buffers,
    )
    .map_err(CliError::library)
}

/// The answer of a route (`None`: an end with no polygon near it), its buffers handed back.
pub(crate) fn answer_of(
    found: Option<waymark::query::Route>,
    buffers: &mut RouteBuffers,
) -> Answer {
    match found {
        Some(found) => {
            let answer = Answer {
                complete: found.path.complete,
                length: found.length_m(),
                path_polys: found.path.steps.len(),
                straight_points: found.corners.len(),
            };
            buffers.recycle(found);
            answer
        }
        None => Answer {
            complete: false,
            length: 0.0,
            path_polys: 0,
            straight_points: 0,
        },
    }
}

fn summarize(answers: &[Answer], times_us: &mut [f64]) -> PathReport {
    let queries = answers.len();
    let complete: Vec<&Answer> = answers.iter().filter(|a| a.complete).collect();
    times_us.sort_by(f64::total_cmp);
    let percentile = |p: f64| {
        if times_us.is_empty() {
            0.0
        } else {
            times_us[((times_us.len() - 1) as f64 * p).round() as usize]
        }
    };
    PathReport {
        queries,
        complete_fraction: if queries == 0 {
            0.0
        } else {
            complete.len() as f64 / queries as f64
        },
        mean_us: if queries == 0 {
            0.0
        } else {
            times_us.iter().sum::<f64>() / queries as f64
        },
        median_us: percentile(0.5),
        p99_us: percentile(0.99),
        mean_length_complete: if complete.is_empty() {
            0.0
        } else {
            complete.iter().map(|a| f64::from(a.length)).sum::<f64>() / complete.len() as f64
        },
    }
}
