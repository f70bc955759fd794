//! `waymark sim SCENARIO.json [--trace OUT.jsonl] [--json]`: a scripted crowd run for the
//! action handoff (spec 001). A level, named agents, and commands at ticks (move, velocity,
//! cancel, teleport, add, remove, door open/close, save, restore from the last save); each
//! tick runs its commands in file order, then one crowd step. The trace has one JSON line
//! per tick: the commands with what they returned, the commit point's decisions on path
//! results (from the crowd's ordered log), the step's events, and every agent whose
//! position, status, order or query identity, or owner changed. The format is documented in
//! `docs/sim_scenario.md`.

mod orders;
pub(crate) mod report;
mod spec;

use spec::{AgentSpec, CommandSpec, Scenario, crowd_config};
use waymark::harness::HostWorld;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use glam::Vec3;
use serde_json::{Value, json};
use waymark::crowd::{
    AgentId, AgentParams, AvoidanceProfile, Crowd, CrowdConfig, KinematicController, Outcome,
    RequestId,
};
use waymark::mesh::blob::BakeParams;
use waymark::mesh::{LinkDesc, LinkId, LinkKind, NavMesh, TileData, WalkablePolygon};

use crate::CliError;
use crate::bake_args::{BakeArgs, PresetArg};
use crate::target::build_world_of;
use waymark::target::StaticWorld;

#[derive(clap::Args, Debug)]
pub struct SimCommand {
    /// Scenario file (JSON): level, agents, commands at ticks.
    scenario: PathBuf,
    /// Write the JSON-lines trace (one line per tick) to this file.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Print the summary as one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[cfg(test)]
impl SimCommand {
    /// The command a fuzz target runs: the JSON report of the scenario at `scenario`.
    pub(crate) fn json_report(scenario: PathBuf) -> SimCommand {
        SimCommand {
            scenario,
            trace: None,
            json: true,
        }
    }
}

/// The last save: the crowd's bytes, and the game's own part (names, the profiles).
struct SavedGame {
    bytes: Vec<u8>,
    agents: Vec<(String, AgentId)>,
    profiles: Vec<(AvoidanceProfile, waymark::crowd::ProfileId)>,
}

/// What the game side of the run keeps: agent names, and the last save.
struct Sim {
    mesh: NavMesh,
    /// The tile cache a level with obstacles was baked through, and the obstacles by name.
    cache: Option<waymark::bake::tile_cache::TileCache>,
    obstacles: HashMap<String, waymark::bake::tile_cache::ObstacleId>,
    /// The level's collision world (interaction orders' checks).
    world: StaticWorld,
    links: HashMap<String, LinkId>,
    config: CrowdConfig,
    crowd: Crowd,
    /// Which agent each name is, and back.
    agents: Vec<(String, AgentId)>,
    /// The avoidance profiles agents asked for beyond the crowd's own, each registered once.
    profiles: Vec<(AvoidanceProfile, waymark::crowd::ProfileId)>,
    body: (f32, f32),
    save: Option<SavedGame>,
    /// Each agent's last traced state.
    last: HashMap<AgentId, Value>,
    /// Every order's outcome: (tick, agent, order, outcome).
    ended: Vec<(u64, String, RequestId, Outcome)>,
    refused: Vec<Value>,
}

pub fn run(command: &SimCommand) -> Result<(), CliError> {
    let text = waymark::geom::limits::read_text_file(&command.scenario).map_err(|source| {
        CliError::Usage(format!(
            "cannot read '{}': {source}",
            command.scenario.display()
        ))
    })?;
    run_text(command, &text, &mut std::io::stdout().lock())
}

/// Runs the scenario `text` (read from `command.scenario`, whose folder its level file is
/// found from), writing the report to `out`.
pub(crate) fn run_text(
    command: &SimCommand,
    text: &str,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let scenario: Scenario = serde_json::from_str(text)
        .map_err(|error| CliError::Usage(format!("'{}': {error}", command.scenario.display())))?;
    if scenario.ticks > crate::common::FRAMES_MAX as u64 {
        return Err(CliError::Usage(format!(
            "'{}': ticks {} is over the limit of {} (FRAMES_MAX)",
            command.scenario.display(),
            scenario.ticks,
            crate::common::FRAMES_MAX
        )));
    }
    let base = command.scenario.parent().unwrap_or(Path::new("."));
    let mut sim = Sim::new(&scenario, base)?;
    for agent in &scenario.agents {
        sim.add(agent)?;
    }
    check_commands(&scenario)?;

    let mut trace = match &command.trace {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(|source| CliError::Write {
                path: path.clone(),
                source,
            })?,
        )),
        None => None,
    };
    let mut log = Vec::new();
    let mut commands = scenario.commands.iter().peekable();
    for tick in 0..scenario.ticks {
        let mut given = Vec::new();
        while let Some(timed) = commands.next_if(|timed| timed.tick == tick) {
            given.push(sim.give(tick, &timed.command)?);
        }
        let frame = sim.crowd.frame();
        let host = HostWorld {
            collision: &sim.world,
            objects: &[],
            fixed: &[],
        };
        let events = sim
            .crowd
            .step_with(scenario.dt_s, &mut KinematicController, &host)
            .map_err(CliError::from)?;
        log.clear();
        sim.crowd.drain_log(&mut log);
        let line = json!({
            "tick": tick,
            "frame": frame,
            "commands": given,
            "decisions": sim.decisions(&log),
            "events": events.iter().map(|event| sim.event(tick, event)).collect::<Vec<_>>(),
            "agents": sim.changed_agents(),
        });
        if let Some(out) = trace.as_mut() {
            writeln!(out, "{line}")?;
        }
    }
    if let Some(out) = trace.as_mut() {
        out.flush()?;
    }
    sim.report(command, &scenario, out)
}

/// Refuses commands out of tick order or past the run, naming them.
fn check_commands(scenario: &Scenario) -> Result<(), CliError> {
    for (index, pair) in scenario.commands.windows(2).enumerate() {
        if pair[1].tick < pair[0].tick {
            return Err(CliError::Usage(format!(
                "command {} (tick {}) comes after one at tick {}: commands must be in tick order",
                index + 1,
                pair[1].tick,
                pair[0].tick
            )));
        }
    }
    if let Some((index, late)) = scenario
        .commands
        .iter()
        .enumerate()
        .find(|(_, timed)| timed.tick >= scenario.ticks)
    {
        return Err(CliError::Usage(format!(
            "command {index} is at tick {}, the run has ticks 0 to {}",
            late.tick,
            scenario.ticks.saturating_sub(1)
        )));
    }
    Ok(())
}

impl Sim {
    fn new(scenario: &Scenario, base: &Path) -> Result<Sim, CliError> {
        let level = &scenario.level;
        if !Crowd::STEP_RANGE_S.contains(&scenario.dt_s) {
            return Err(CliError::Usage(format!(
                "dt_s {} s is outside 0.0001..=1 s",
                scenario.dt_s
            )));
        }
        let wants_obstacles = scenario
            .commands
            .iter()
            .any(|timed| matches!(timed.command, CommandSpec::Obstacle { .. }));
        let mut cache = None;
        let mut mesh = match (&level.file, level.walkable.is_empty()) {
            (Some(_), false) => {
                return Err(CliError::Usage(
                    "the level has both `file` and `walkable`: give one".into(),
                ));
            }
            (None, true) => {
                return Err(CliError::Usage(
                    "the level has neither `file` nor `walkable`".into(),
                ));
            }
            (None, false) => {
                let polygons: Vec<WalkablePolygon> = level
                    .walkable
                    .iter()
                    .map(|spec| {
                        let mut polygon = WalkablePolygon::ground(
                            spec.corners.iter().map(|&c| Vec3::from(c)).collect(),
                        );
                        polygon.layer = spec.layer;
                        polygon
                    })
                    .collect();
                let tile =
                    TileData::from_walkable_polygons(&polygons).map_err(CliError::library)?;
                let mut mesh = NavMesh::new(BakeParams {
                    agent_radius_m: level.agent_radius_m,
                    agent_height_m: level.agent_height_m,
                    ..BakeParams::default()
                });
                mesh.add_tiles(vec![tile]).map_err(CliError::library)?;
                mesh
            }
            (Some(file), true) => {
                let preset = match level.preset.as_deref() {
                    None | Some("guard") => PresetArg::Guard,
                    Some("recast") => PresetArg::Recast,
                    Some(other) => {
                        return Err(CliError::Usage(format!(
                            "level preset '{other}' is neither \"guard\" nor \"recast\""
                        )));
                    }
                };
                let path = if file.as_os_str() == crate::level::PROVING_GROUND {
                    file.clone()
                } else {
                    base.join(file)
                };
                let bake = BakeArgs {
                    preset: Some(preset),
                    ..BakeArgs::default()
                };
                if wants_obstacles {
                    let (mesh, tile_cache) = crate::level::load_with_cache(&path, &bake)?;
                    cache = Some(tile_cache);
                    mesh
                } else {
                    crate::level::load_navmesh(&path, &bake)?
                }
            }
        };
        let mut links = HashMap::new();
        for link in &level.links {
            let id = mesh
                .add_link(LinkDesc {
                    kind: LinkKind::Door,
                    start: Vec3::from(link.start),
                    end: Vec3::from(link.end),
                    bidirectional: link.bidirectional,
                    radius_m: link.radius_m,
                    open: link.open,
                })
                .map_err(CliError::library)?;
            if links.insert(link.name.clone(), id).is_some() {
                return Err(CliError::Usage(format!("link '{}' named twice", link.name)));
            }
        }
        let config = crowd_config(&scenario.crowd)?;
        let crowd = Crowd::new(&mesh, config)?;
        let world = build_world_of(&level.boxes, &level.planes, &level.capsules)?;
        let params = mesh.snapshot().data().params;
        let body = if params.agent_radius_m > 0.0 {
            (params.agent_radius_m, params.agent_height_m)
        } else {
            (level.agent_radius_m, level.agent_height_m)
        };
        Ok(Sim {
            mesh,
            cache,
            obstacles: HashMap::new(),
            world,
            links,
            config,
            crowd,
            agents: Vec::new(),
            profiles: Vec::new(),
            body,
            save: None,
            last: HashMap::new(),
            ended: Vec::new(),
            refused: Vec::new(),
        })
    }

    fn add(&mut self, spec: &AgentSpec) -> Result<AgentId, CliError> {
        if self.agents.iter().any(|(name, _)| *name == spec.name) {
            return Err(CliError::Usage(format!(
                "agent '{}' named twice",
                spec.name
            )));
        }
        let defaults = AgentParams {
            radius_m: self.body.0,
            height_m: self.body.1,
            ..AgentParams::DETOUR_REFERENCE
        };
        let params = AgentParams {
            radius_m: spec.radius_m.unwrap_or(defaults.radius_m),
            height_m: spec.height_m.unwrap_or(defaults.height_m),
            max_speed_mps: spec.max_speed_mps.unwrap_or(defaults.max_speed_mps),
            preferred_speed_mps: spec
                .preferred_speed_mps
                .unwrap_or(defaults.preferred_speed_mps),
            max_acceleration_mps2: spec
                .max_acceleration_mps2
                .unwrap_or(defaults.max_acceleration_mps2),
        };
        let crowd_profile = AvoidanceProfile::of(&self.config.avoidance);
        let profile = AvoidanceProfile {
            negotiates: spec.negotiates,
            time_horizon_s: spec.time_horizon_s.unwrap_or(crowd_profile.time_horizon_s),
            wall_time_horizon_s: spec
                .wall_time_horizon_s
                .unwrap_or(crowd_profile.wall_time_horizon_s),
        };
        // Refused by value (naming the field) before the agent is added.
        let registered = if profile == crowd_profile {
            None
        } else if let Some(&(_, id)) = self.profiles.iter().find(|(known, _)| *known == profile) {
            Some(id)
        } else {
            let id = self.crowd.add_avoidance_profile(profile)?;
            self.profiles.push((profile, id));
            Some(id)
        };
        let agent = self.crowd.add_agent(Vec3::from(spec.position), params)?;
        if let Some(profile) = registered {
            self.crowd.set_avoidance_profile(agent, profile)?;
        }
        self.agents.push((spec.name.clone(), agent));
        Ok(agent)
    }

    fn agent(&self, name: &str, tick: u64) -> Result<AgentId, CliError> {
        self.agents
            .iter()
            .find(|(known, _)| known == name)
            .map(|&(_, agent)| agent)
            .ok_or_else(|| CliError::Usage(format!("tick {tick}: no agent named '{name}'")))
    }

    fn name(&self, agent: AgentId) -> String {
        self.agents
            .iter()
            .find(|&&(_, known)| known == agent)
            .map_or_else(|| format!("{agent:?}"), |(name, _)| name.clone())
    }
}
