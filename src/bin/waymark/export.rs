//! `waymark export`: a level as an OBJ file and a crowd on it as an agents CSV, so that
//! another crowd (the native DetourCrowd reference of `stress/`) runs on the same
//! triangles and the same agents.
//!
//! LEVEL is any level `waymark crowd` takes as geometry: an `.obj` file, the proving
//! ground, `city` or `hills` (generated, sized for `--size-for` agents, seeded), or one of
//! the flow suite's levels, `plaza` and `corridor` (`waymark::scene::flow_levels`). The
//! agents are `--agents` of them, or as many as cover `--coverage` of the baked walkable
//! area with bodies of the bake's agent radius. On random levels each starts at a seeded
//! random point of the baked mesh with 16 random targets; on the flow levels each belongs
//! to a group and alternates between its group's zones.

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;
use waymark::harness::{AgentPlan, random_plans};
use waymark::mesh::NavMesh;
use waymark::scene::Scene;
use waymark::scene::flow_levels::{counterflow_corridor, plaza};

use crate::bake_args::BakeArgs;
use crate::common::agents_arg;
use crate::{CliError, level};

/// Targets per agent in the CSV.
const TARGETS: usize = 16;

/// Generated levels are sized for at most this many agents here.
const SIZE_FOR_MAX: usize = 100_000;

#[derive(clap::Args, Debug)]
pub struct ExportCommand {
    /// Level: an .obj, .gltf or .glb file, `city`, `hills`, `plaza`, `corridor` or the proving ground
    /// (default).
    pub level: Option<PathBuf>,
    /// Agents to place.
    #[arg(long, value_parser = agents_arg, conflicts_with = "coverage")]
    pub agents: Option<usize>,
    /// Place as many agents as cover this share of the walkable area (0 to 0.9).
    #[arg(long, value_name = "SHARE")]
    pub coverage: Option<f32>,
    /// With `city` or `hills`: the agent count the level is sized for (10 m² of ground
    /// per agent; default: the agents placed).
    #[arg(long, value_name = "N")]
    pub size_for: Option<usize>,
    /// Seed of the generated level and of the agents.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where to write the level's world triangles.
    #[arg(long, value_name = "FILE")]
    pub obj: Option<PathBuf>,
    /// Where to write the agents (`agent,sx,sy,sz,t0x,t0y,t0z,...`, a header row).
    #[arg(long, value_name = "FILE")]
    pub agents_csv: Option<PathBuf>,
    #[command(flatten)]
    pub bake: BakeArgs,
}

/// How the agents are placed on a level.
enum Placement {
    /// Seeded random points of the baked mesh.
    Random,
    /// The flow level's groups.
    Groups(waymark::scene::flow_levels::FlowLevel),
}

pub fn run(command: &ExportCommand) -> Result<(), CliError> {
    if let Some(coverage) = command.coverage
        && !(coverage > 0.0 && coverage <= 0.9)
    {
        return Err(CliError::Usage(format!(
            "--coverage {coverage} takes a share above 0 and at most 0.9"
        )));
    }
    if command.agents.is_none() && command.coverage.is_none() && command.agents_csv.is_some() {
        return Err(CliError::Usage(
            "--agents-csv needs --agents or --coverage".to_owned(),
        ));
    }
    let size_for = command
        .size_for
        .or(command.agents)
        .unwrap_or(1_000)
        .clamp(1, usize::MAX);
    if size_for > SIZE_FOR_MAX {
        return Err(CliError::Usage(format!(
            "--size-for {size_for} is above {SIZE_FOR_MAX}"
        )));
    }
    let (scene, name, placement) = scene_of(command, size_for)?;
    let world = scene.world_triangles()?;
    if let Some(path) = &command.obj {
        std::fs::write(path, waymark::scene::obj::write_obj(&world)).map_err(|source| {
            CliError::Write {
                path: path.clone(),
                source,
            }
        })?;
    }
    let config = command.bake.config();
    let baked = waymark::bake::bake(&world, &config)?;
    let walkable_m2 = baked.stats.walkable_area_m2;
    let body_m2 = std::f64::consts::PI * f64::from(config.agent_radius_m).powi(2);
    let agents = match (command.agents, command.coverage) {
        (Some(agents), _) => agents,
        (None, Some(coverage)) => (f64::from(coverage) * walkable_m2 / body_m2).round() as usize,
        (None, None) => 0,
    };
    if agents > 0 && walkable_m2 <= 0.0 {
        return Err(CliError::Usage(format!(
            "level '{name}' bakes to no walkable area: no agents can be placed"
        )));
    }
    let mesh = NavMesh::from_file(baked.to_file()).map_err(level::LevelError::from)?;
    let plans: Vec<AgentPlan> = match &placement {
        Placement::Random => random_plans(&mesh, agents, TARGETS, command.seed),
        Placement::Groups(flow) => flow
            .plans(agents, TARGETS, command.seed)
            .into_iter()
            .map(|(start, targets)| AgentPlan { start, targets })
            .collect(),
    };
    if let Some(path) = &command.agents_csv {
        let mut text = String::from("agent,sx,sy,sz");
        for k in 0..TARGETS {
            text.push_str(&format!(",t{k}x,t{k}y,t{k}z"));
        }
        text.push('\n');
        for (index, plan) in plans.iter().enumerate() {
            text.push_str(&index.to_string());
            for point in std::iter::once(&plan.start).chain(&plan.targets) {
                text.push_str(&format!(",{},{},{}", point.x, point.y, point.z));
            }
            text.push('\n');
        }
        std::fs::write(path, text).map_err(|source| CliError::Write {
            path: path.clone(),
            source,
        })?;
    }
    let report = json!({
        "level": name,
        "triangles": world.corners.len(),
        "walkable_area_m2": walkable_m2,
        "agent_radius_m": config.agent_radius_m,
        "agents": plans.len(),
        "coverage": plans.len() as f64 * body_m2 / walkable_m2.max(f64::MIN_POSITIVE),
        "obj": command.obj.as_ref().map(|path| path.display().to_string()),
        "agents_csv": command.agents_csv.as_ref().map(|path| path.display().to_string()),
    });
    writeln!(std::io::stdout().lock(), "{report}")?;
    Ok(())
}

/// The level's scene, its name, and how agents are placed on it.
fn scene_of(
    command: &ExportCommand,
    size_for: usize,
) -> Result<(Scene, String, Placement), CliError> {
    let named = |name: &str| {
        command
            .level
            .as_deref()
            .is_some_and(|path| path.as_os_str() == name)
    };
    if named("city") {
        let city = waymark::scene::city::city(size_for, command.seed);
        let name = format!("city (seed {}, sized for {size_for})", command.seed);
        return Ok((city.scene, name, Placement::Random));
    }
    if named("hills") {
        let hills = waymark::scene::hills::hills(size_for, command.seed)?;
        let name = format!("hills (seed {}, sized for {size_for})", command.seed);
        return Ok((hills.scene, name, Placement::Random));
    }
    if named("plaza") || named("corridor") {
        let flow = if named("plaza") {
            plaza()
        } else {
            counterflow_corridor()
        };
        let name = command
            .level
            .as_deref()
            .map(|path| path.display().to_string())
            .unwrap_or_default();
        return Ok((flow.scene.clone(), name, Placement::Groups(flow)));
    }
    let loaded = level::load(command.level.as_deref())?;
    Ok((loaded.scene, loaded.name, Placement::Random))
}
