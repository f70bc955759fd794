//! Agent plans: where each agent starts and the targets it walks to in turn, drawn at
//! random from the mesh (seeded), drawn where each agent can reach them, or read from an
//! agents CSV (the flow suite's shared files, which the native reference reads too).
//!
//! Stage: harness, before a run. Inputs: a mesh, a count and a seed, or a CSV file.
//! Output: [`AgentPlan`]s, or [`Plans`] kept flat for a large run; a malformed CSV is an
//! [`AgentsCsvError`] naming its line.

use std::collections::HashMap;
use std::path::Path;

use glam::Vec3;

use crate::mesh::NavMesh;
use crate::query::{QueryFilter, RandomPoints, random_points};

use super::run::{AgentPlan, Plans};

/// `count` agents starting at random points of the mesh, each with `targets` random
/// targets (seeded: the same points for the same mesh and seed).
pub fn random_plans(mesh: &NavMesh, count: usize, targets: usize, seed: u64) -> Vec<AgentPlan> {
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let starts = random_points(&snapshot, &filter, count, seed);
    let ends = random_points(&snapshot, &filter, count * targets, seed ^ 0x5eed);
    starts
        .iter()
        .enumerate()
        .map(|(index, &(_, start))| AgentPlan {
            start,
            targets: ends[index * targets..(index + 1) * targets]
                .iter()
                .map(|&(_, point)| point)
                .collect(),
        })
        .collect()
}

/// [`random_plans`] with every target where its agent can walk: starts at random points,
/// and each agent's targets drawn at random among the points of the walkable space its
/// start is joined to (by shared edges, tile borders and off-mesh links, whether open now
/// or not), so no order ends at a partial path's end. An agent on a piece of floor that
/// no random point fell on keeps unreachable targets (and says so by its partial ends).
/// Seeded like [`random_plans`].
pub fn reachable_plans(mesh: &NavMesh, count: usize, targets: usize, seed: u64) -> Plans {
    use crate::mesh::connectivity::{PolygonGraph, PolygonKey};
    let snapshot = mesh.snapshot();
    let live: Vec<(crate::mesh::TileSlot, &crate::mesh::TileData)> =
        (0..snapshot.data().slots.len())
            .filter_map(|slot| {
                let slot = crate::mesh::TileSlot(slot as u16);
                snapshot.live_slot(slot).map(|(tile, _)| (slot, &tile.data))
            })
            .collect();
    let tiles: Vec<crate::mesh::TileData> = live.iter().map(|(_, data)| (*data).clone()).collect();
    let mut graph = PolygonGraph::build(&tiles, |_, _| false);
    let tile_of: HashMap<crate::mesh::TileSlot, u32> = live
        .iter()
        .enumerate()
        .map(|(index, &(slot, _))| (slot, index as u32))
        .collect();
    let key = |polygon: crate::mesh::PolyRef| {
        tile_of.get(&polygon.slot()).map(|&tile| PolygonKey {
            tile,
            polygon: u32::from(polygon.polygon()),
        })
    };
    for link in &snapshot.data().links {
        if let (Some(start), Some(end)) = (
            link.start_polygon.and_then(key),
            link.end_polygon.and_then(key),
        ) {
            graph.join(start, end);
        }
    }
    let filter = QueryFilter::new();
    let starts = random_points(&snapshot, &filter, count, seed);
    let start_components: Vec<Option<usize>> = starts
        .iter()
        .map(|&(polygon, _)| key(polygon).map(|key| graph.component(key)))
        .collect();
    // Each piece of floor hands its agents' targets out in draw order, wrapping round when
    // it has fewer draws than targets to give, so it needs its draw count and no more of
    // its draws than its agents take: the millions of draws are never kept together.
    let mut pools: HashMap<usize, ComponentPool> = HashMap::new();
    for component in start_components.iter().flatten() {
        pools.entry(*component).or_default().wanted += targets;
    }
    let Some(draws) = RandomPoints::new(&snapshot, &filter, seed ^ 0x5eed) else {
        return Plans::default();
    };
    // Four draws a target: enough that every large piece of floor has plenty.
    for (polygon, point) in draws.clone().take(count * targets * 4) {
        let pool = key(polygon).and_then(|key| pools.get_mut(&graph.component(key)));
        if let Some(pool) = pool {
            pool.drawn += 1;
            if pool.kept.len() < pool.wanted {
                pool.kept.push(point);
            }
        }
    }
    // An agent on floor no draw fell on takes the draws of its own index, reachable or not.
    let placed = |component: &Option<usize>| {
        component
            .and_then(|component| pools.get(&component))
            .is_some_and(|pool| pool.drawn > 0)
    };
    let first_draws: Vec<Vec3> = if start_components.iter().all(placed) {
        Vec::new()
    } else {
        draws
            .take(count * targets)
            .map(|(_, point)| point)
            .collect()
    };
    let mut plans = Plans::with_capacity(starts.len(), targets);
    for (index, (&(_, start), component)) in starts.iter().zip(&start_components).enumerate() {
        match component.and_then(|component| pools.get_mut(&component)) {
            Some(pool) if pool.drawn > 0 => plans.push(
                start,
                (0..targets).map(|_| {
                    let point = pool.kept[pool.handed_out % pool.drawn];
                    pool.handed_out += 1;
                    point
                }),
            ),
            _ => plans.push(
                start,
                first_draws[index * targets..(index + 1) * targets]
                    .iter()
                    .copied(),
            ),
        }
    }
    plans
}

/// What one connected piece of floor hands out as targets in [`reachable_plans`].
#[derive(Default)]
struct ComponentPool {
    /// Targets its agents take in all.
    wanted: usize,
    /// Draws that fell on it.
    drawn: usize,
    /// Its first draws, at most `wanted` of them: the draw a target takes,
    /// `handed_out % drawn`, is below both counts.
    kept: Vec<Vec3>,
    /// Targets handed out so far.
    handed_out: usize,
}

/// A bad agents CSV.
#[derive(Debug, thiserror::Error)]
pub enum AgentsCsvError {
    /// The file cannot be read.
    #[error("cannot read '{path}': {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A row that is not `agent,sx,sy,sz,t0x,t0y,t0z,...` with finite numbers.
    #[error("'{path}' line {line}: expected agent,sx,sy,sz,t0x,t0y,t0z,..., got '{text}'")]
    BadRow {
        /// The file.
        path: String,
        /// The line, counted from 1.
        line: usize,
        /// Its text.
        text: String,
    },
    /// Fewer rows than asked for.
    #[error("'{path}' has {found} agents; {wanted} were asked for")]
    TooFew {
        /// The file.
        path: String,
        /// Rows found.
        found: usize,
        /// Rows asked for.
        wanted: usize,
    },
}

/// The first `count` agents of a CSV of `agent,sx,sy,sz,t0x,t0y,t0z,...` rows, after a
/// header if the first line is not numbers (the levels' shared crowd files have one).
/// Every coordinate must be finite and within the world's
/// ([`COORDINATE_MAX_M`](crate::geom::limits::COORDINATE_MAX_M)).
pub fn read_agents_csv(path: &Path, count: usize) -> Result<Vec<AgentPlan>, AgentsCsvError> {
    let name = path.display().to_string();
    let text =
        crate::geom::limits::read_text_file(path).map_err(|source| AgentsCsvError::Read {
            path: name.clone(),
            source,
        })?;
    parse_agents_csv(&text, &name, count)
}

/// [`read_agents_csv`] on a file's text; `name` names it in errors.
pub fn parse_agents_csv(
    text: &str,
    name: &str,
    count: usize,
) -> Result<Vec<AgentPlan>, AgentsCsvError> {
    use crate::geom::limits::{COORDINATE_MAX_M, within};
    let name = name.to_owned();
    let mut plans = Vec::with_capacity(count.min(1 << 20));
    let numbers = |line: &str| -> Result<Vec<f32>, std::num::ParseFloatError> {
        line.split(',')
            .skip(1)
            .map(|value| value.trim().parse::<f32>())
            .collect()
    };
    // The first line is a header when it is not numbers; a file without one starts with
    // its first agent, which is kept.
    let header = text
        .lines()
        .next()
        .is_some_and(|line| numbers(line).is_err());
    for (index, line) in text
        .lines()
        .enumerate()
        .skip(usize::from(header))
        .take(count)
    {
        let bad = || AgentsCsvError::BadRow {
            path: name.clone(),
            line: index + 1,
            text: line.to_owned(),
        };
        let values = numbers(line).map_err(|_| bad())?;
        if values.len() < 6
            || values.len() % 3 != 0
            || values.iter().any(|&v| !within(v, COORDINATE_MAX_M))
        {
            return Err(bad());
        }
        let mut points = values.chunks(3).map(|c| Vec3::new(c[0], c[1], c[2]));
        let start = points.next().expect("at least two points");
        plans.push(AgentPlan {
            start,
            targets: points.collect(),
        });
    }
    if plans.len() < count {
        return Err(AgentsCsvError::TooFew {
            path: name,
            found: plans.len(),
            wanted: count,
        });
    }
    Ok(plans)
}
