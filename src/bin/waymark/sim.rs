//! `waymark sim SCENARIO.json [--trace OUT.jsonl] [--json]`: a scripted crowd run for the
//! action handoff (spec 001). A level, named agents, and commands at ticks (move, velocity,
//! cancel, teleport, add, remove, door open/close, save, restore from the last save); each
//! tick runs its commands in file order, then one crowd step. The trace has one JSON line
//! per tick: the commands with what they returned, the commit point's decisions on path
//! results (from the crowd's ordered log), the step's events, and every agent whose
//! position, status, order or query identity, or owner changed. The format is documented in
//! `docs/sim_scenario.md`.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use glam::Vec3;
use serde::Deserialize;
use serde_json::{Value, json};
use waymark::crowd::{
    AgentId, AgentParams, AvoidanceProfile, BlockedBy, BlockedPolicy, CancelRecord,
    ConnectionWindow, Crowd, CrowdConfig, CrowdEvent, Decision, FactChange, FailureCondition,
    FrameBudget, HoldFailure, HoldPhase, HoldPolicy, HostWorld, InteractionFailure,
    InteractionPhase, KinematicController, LogEntry, LogRecord, MoverAction, MoverOwner, Outcome,
    Rejection, RequestId,
};
use waymark::ids::SupportId;
use waymark::mesh::blob::BakeParams;
use waymark::mesh::{LinkDesc, LinkId, LinkKind, NavMesh, TileData, WalkablePolygon};

use crate::CliError;
use crate::bake_args::{BakeArgs, PresetArg};
use crate::target::{
    BodySpec, BoxSpec, CapsuleSpec, PlaneSpec, TargetSpec, build_record_of, build_world_of,
};
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    level: LevelSpec,
    /// Step length, seconds.
    #[serde(default = "default_dt")]
    dt_s: f32,
    /// Ticks to run.
    ticks: u64,
    #[serde(default)]
    crowd: CrowdSpec,
    agents: Vec<AgentSpec>,
    #[serde(default)]
    commands: Vec<TimedCommand>,
}

fn default_dt() -> f32 {
    1.0 / 30.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LevelSpec {
    /// Hand-built walkable space for agent centres (convex polygons sharing edges).
    #[serde(default)]
    walkable: Vec<WalkableSpec>,
    /// Or a level: a built-in name or a file (`.obj`, baked; `.wmnav`), relative to the
    /// scenario file.
    #[serde(default)]
    file: Option<PathBuf>,
    /// Bake preset for an `.obj` level: "guard" (default) or "recast".
    #[serde(default)]
    preset: Option<String>,
    /// The body size a hand-built level is for (agents default to it).
    #[serde(default = "default_radius")]
    agent_radius_m: f32,
    #[serde(default = "default_height")]
    agent_height_m: f32,
    /// Off-mesh links (doors and the like), by name.
    #[serde(default)]
    links: Vec<LinkSpec>,
    /// The collision world interaction orders check their poses in (as `waymark target`'s
    /// scenario lists it).
    #[serde(default)]
    boxes: Vec<BoxSpec>,
    #[serde(default)]
    planes: Vec<PlaneSpec>,
    #[serde(default)]
    capsules: Vec<CapsuleSpec>,
}

fn default_radius() -> f32 {
    0.4
}

fn default_height() -> f32 {
    1.5
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WalkableSpec {
    corners: Vec<[f32; 3]>,
    /// Support layer: 0 the static ground (default), `n + 1` moving support `n`.
    #[serde(default)]
    layer: u16,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkSpec {
    name: String,
    start: [f32; 3],
    end: [f32; 3],
    #[serde(default = "default_true")]
    bidirectional: bool,
    #[serde(default = "default_link_radius")]
    radius_m: f32,
    #[serde(default = "default_true")]
    open: bool,
}

fn default_true() -> bool {
    true
}

fn default_link_radius() -> f32 {
    1.0
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CrowdSpec {
    /// Node expansions per step.
    #[serde(default)]
    node_expansions: Option<u32>,
    /// Head starts per step.
    #[serde(default)]
    head_starts: Option<u32>,
    /// "wait" (default), "replan", or { "fail_after_s": seconds }.
    #[serde(default)]
    blocked_policy: Option<Value>,
    /// Seconds a stuck agent waits before it may pass through a jammed neighbour.
    #[serde(default)]
    pass_through_after_s: Option<f32>,
    /// Local avoidance on (default) or off.
    #[serde(default)]
    avoidance: Option<bool>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct AgentSpec {
    name: String,
    position: [f32; 3],
    #[serde(default)]
    radius_m: Option<f32>,
    #[serde(default)]
    height_m: Option<f32>,
    #[serde(default)]
    max_speed_mps: Option<f32>,
    #[serde(default)]
    preferred_speed_mps: Option<f32>,
    #[serde(default)]
    max_acceleration_mps2: Option<f32>,
    /// false: the agent does not negotiate (others avoid it; it keeps its velocity).
    #[serde(default = "default_true")]
    negotiates: bool,
    /// Its avoidance profile's horizons (the crowd's by default).
    #[serde(default)]
    time_horizon_s: Option<f32>,
    #[serde(default)]
    wall_time_horizon_s: Option<f32>,
}

#[derive(Deserialize)]
struct TimedCommand {
    tick: u64,
    #[serde(flatten)]
    command: CommandSpec,
}

#[derive(Deserialize, Debug)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
enum CommandSpec {
    Move {
        agent: String,
        target: [f32; 3],
        /// A deadline this many ticks after the order.
        #[serde(default)]
        deadline_in_ticks: Option<u64>,
        /// Hold the target afterwards (spec 001's example policy).
        #[serde(default)]
        then_hold: bool,
    },
    Velocity {
        agent: String,
        velocity: [f32; 3],
    },
    Cancel {
        agent: String,
    },
    /// A mode exit's first step: the agent's hold releases its stand fact (then `cancel`).
    Release {
        agent: String,
    },
    /// Sets a moving support's surface velocity (a conveyor belt: polygons of layer
    /// `support + 1`).
    Belt {
        support: u32,
        velocity: [f32; 3],
    },
    /// Turns a moving support about Up through `centre` (a turntable: polygons of layer
    /// `support + 1`), rad/s, positive from +x towards -z.
    Turntable {
        support: u32,
        centre: [f32; 3],
        angular_velocity_rad_s: f32,
    },
    Teleport {
        agent: String,
        position: [f32; 3],
    },
    /// Displaces the agent by a vector (an outside force: it lands where it is put).
    Push {
        agent: String,
        by: [f32; 3],
    },
    /// Station keeping at `target` (spec 001).
    Hold {
        agent: String,
        target: [f32; 3],
        #[serde(default)]
        kp_per_s: Option<f32>,
        #[serde(default)]
        correction_cap_mps: Option<f32>,
        #[serde(default)]
        brake_budget_mps2: Option<f32>,
        #[serde(default)]
        position_deadband_m: Option<f32>,
        #[serde(default)]
        enter_m: Option<f32>,
        #[serde(default)]
        exit_m: Option<f32>,
        #[serde(default)]
        speed_enter_mps: Option<f32>,
        #[serde(default)]
        recovery_ticks: Option<u64>,
    },
    /// Walk to a verified interaction pose and hold it (spec 000, spec 001): the target
    /// as `waymark target`'s scenario gives it, in the level's collision world.
    Interact {
        agent: String,
        target_shape: String,
        body: BodySpec,
        target: Box<TargetSpec>,
        /// The hold's policy (spec 001's example where a field is left out).
        #[serde(default)]
        hold: PolicySpec,
    },
    Add(AgentSpec),
    Remove {
        agent: String,
    },
    Door {
        link: String,
        open: bool,
    },
    /// A connection window on a link (`Crowd::set_link_window`); all three fields left out
    /// remove it.
    LinkWindow {
        link: String,
        #[serde(default)]
        first_open_frame: Option<u64>,
        #[serde(default)]
        open_frames: Option<u64>,
        #[serde(default)]
        period_frames: Option<u64>,
    },
    Save,
    Restore,
}

/// A hold policy's fields, each defaulting to spec 001's example.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct PolicySpec {
    #[serde(default)]
    kp_per_s: Option<f32>,
    #[serde(default)]
    correction_cap_mps: Option<f32>,
    #[serde(default)]
    brake_budget_mps2: Option<f32>,
    #[serde(default)]
    position_deadband_m: Option<f32>,
    #[serde(default)]
    enter_m: Option<f32>,
    #[serde(default)]
    exit_m: Option<f32>,
    #[serde(default)]
    speed_enter_mps: Option<f32>,
    #[serde(default)]
    recovery_ticks: Option<u64>,
}

impl PolicySpec {
    fn policy(&self) -> HoldPolicy {
        let defaults = HoldPolicy::SPEC_EXAMPLE;
        HoldPolicy {
            kp_per_s: self.kp_per_s.unwrap_or(defaults.kp_per_s),
            correction_cap_mps: self
                .correction_cap_mps
                .unwrap_or(defaults.correction_cap_mps),
            brake_budget_mps2: self.brake_budget_mps2.unwrap_or(defaults.brake_budget_mps2),
            position_deadband_m: self
                .position_deadband_m
                .unwrap_or(defaults.position_deadband_m),
            enter_m: self.enter_m.unwrap_or(defaults.enter_m),
            exit_m: self.exit_m.unwrap_or(defaults.exit_m),
            speed_enter_mps: self.speed_enter_mps.unwrap_or(defaults.speed_enter_mps),
            recovery_ticks: self.recovery_ticks.unwrap_or(defaults.recovery_ticks),
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
        if !waymark::crowd::STEP_RANGE_S.contains(&scenario.dt_s) {
            return Err(CliError::Usage(format!(
                "dt_s {} s is outside 0.0001..=1 s",
                scenario.dt_s
            )));
        }
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
                crate::level::load_navmesh(&path, &bake)?
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

    /// Gives one command; returns its trace record. A command the crowd refuses is traced
    /// with the crowd's error and the run goes on; a name the scenario does not define
    /// stops it.
    fn give(&mut self, tick: u64, command: &CommandSpec) -> Result<Value, CliError> {
        let result: Result<Value, String> = match command {
            CommandSpec::Move {
                agent,
                target,
                deadline_in_ticks,
                then_hold,
            } => {
                let id = self.agent(agent, tick)?;
                let target = Vec3::from(*target);
                if *then_hold && deadline_in_ticks.is_some() {
                    return Err(CliError::Usage(format!(
                        "tick {tick}: a move with `then_hold` takes no deadline"
                    )));
                }
                let issued = match deadline_in_ticks {
                    _ if *then_hold => self
                        .crowd
                        .request_move_then_hold(id, target, HoldPolicy::SPEC_EXAMPLE)
                        .map(|(order, hold)| {
                            json!({ "order": identity(order), "hold": identity(hold) })
                        }),
                    Some(ticks) => self
                        .crowd
                        .request_move_by(id, target, self.crowd.frame().saturating_add(*ticks))
                        .map(|order| json!({ "order": identity(order) })),
                    None => self
                        .crowd
                        .request_move(id, target)
                        .map(|order| json!({ "order": identity(order) })),
                };
                issued.map_err(|error| error.to_string())
            }
            CommandSpec::Velocity { agent, velocity } => {
                let id = self.agent(agent, tick)?;
                self.crowd
                    .request_velocity(id, Vec3::from(*velocity))
                    .map(|order| json!({ "order": identity(order) }))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Cancel { agent } => {
                let id = self.agent(agent, tick)?;
                self.crowd
                    .cancel(id)
                    .map(|record| json!({ "record": cancel_record(record) }))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Belt { support, velocity } => self
                .crowd
                .set_support_velocity(SupportId(*support), Vec3::from(*velocity))
                .map(|()| json!({}))
                .map_err(|error| error.to_string()),
            CommandSpec::Turntable {
                support,
                centre,
                angular_velocity_rad_s,
            } => self
                .crowd
                .set_support_rotation(
                    SupportId(*support),
                    Vec3::from(*centre),
                    *angular_velocity_rad_s,
                )
                .map(|()| json!({}))
                .map_err(|error| error.to_string()),
            CommandSpec::Release { agent } => {
                let id = self.agent(agent, tick)?;
                let hold = self.crowd.hold(id).ok().flatten().map(|hold| hold.order);
                match hold {
                    None => Err(format!("{agent} holds no pose")),
                    Some(hold) => self
                        .crowd
                        .release_hold(id, hold)
                        .map(|()| json!({ "hold": identity(hold) }))
                        .map_err(|error| error.to_string()),
                }
            }
            CommandSpec::Teleport { agent, position } => {
                let id = self.agent(agent, tick)?;
                self.crowd
                    .teleport(id, Vec3::from(*position))
                    .map(|()| json!({}))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Push { agent, by } => {
                let id = self.agent(agent, tick)?;
                self.crowd
                    .push(id, Vec3::from(*by))
                    .map(|()| json!({}))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Hold {
                agent,
                target,
                kp_per_s,
                correction_cap_mps,
                brake_budget_mps2,
                position_deadband_m,
                enter_m,
                exit_m,
                speed_enter_mps,
                recovery_ticks,
            } => {
                let id = self.agent(agent, tick)?;
                let policy = PolicySpec {
                    kp_per_s: *kp_per_s,
                    correction_cap_mps: *correction_cap_mps,
                    brake_budget_mps2: *brake_budget_mps2,
                    position_deadband_m: *position_deadband_m,
                    enter_m: *enter_m,
                    exit_m: *exit_m,
                    speed_enter_mps: *speed_enter_mps,
                    recovery_ticks: *recovery_ticks,
                }
                .policy();
                self.crowd
                    .request_hold(id, Vec3::from(*target), policy)
                    .map(|order| json!({ "order": identity(order) }))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Interact {
                agent,
                target_shape,
                body,
                target,
                hold,
            } => {
                let id = self.agent(agent, tick)?;
                let record = build_record_of(target_shape, body, target, &self.world)?;
                let host = HostWorld {
                    collision: &self.world,
                    objects: &[],
                    fixed: &[],
                };
                self.crowd
                    .request_interaction(id, record, hold.policy(), &host)
                    .map(|(order, hold)| {
                        let foot = self
                            .crowd
                            .interaction(id)
                            .ok()
                            .flatten()
                            .map(|view| v3(view.foot));
                        json!({ "order": identity(order), "hold": identity(hold), "foot": foot })
                    })
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Add(agent) => match self.add(agent) {
                Ok(id) => Ok(json!({ "id": id.to_bits() })),
                Err(CliError::Crowd(error)) => Err(error.to_string()),
                Err(other) => return Err(other),
            },
            CommandSpec::Remove { agent } => {
                let id = self.agent(agent, tick)?;
                let removed = self.crowd.remove_agent(id);
                if removed.is_ok() {
                    self.agents.retain(|&(_, known)| known != id);
                    self.last.remove(&id);
                }
                removed
                    .map(|()| json!({}))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Door { link, open } => {
                let &id = self.links.get(link).ok_or_else(|| {
                    CliError::Usage(format!("tick {tick}: no link named '{link}'"))
                })?;
                match self.mesh.set_link_open(id, *open) {
                    Ok(version) => {
                        self.crowd.set_mesh(&self.mesh);
                        Ok(json!({ "version": version.0 }))
                    }
                    Err(error) => Err(error.to_string()),
                }
            }
            CommandSpec::LinkWindow {
                link,
                first_open_frame,
                open_frames,
                period_frames,
            } => {
                let &id = self.links.get(link).ok_or_else(|| {
                    CliError::Usage(format!("tick {tick}: no link named '{link}'"))
                })?;
                let window = match (first_open_frame, open_frames, period_frames) {
                    (None, None, None) => None,
                    (Some(first), Some(open), Some(period)) => Some(ConnectionWindow {
                        first_open_frame: *first,
                        open_frames: *open,
                        period_frames: *period,
                    }),
                    _ => {
                        return Err(CliError::Usage(format!(
                            "tick {tick}: link_window takes first_open_frame, open_frames and \
                             period_frames together, or none of them"
                        )));
                    }
                };
                self.crowd
                    .set_link_window(id, window)
                    .map(|()| json!({}))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Save => {
                let bytes = self.crowd.save();
                let size = bytes.len();
                self.save = Some(SavedGame {
                    bytes,
                    agents: self.agents.clone(),
                    profiles: self.profiles.clone(),
                });
                Ok(json!({ "bytes": size }))
            }
            CommandSpec::Restore => match &self.save {
                None => Err("no save to restore".to_string()),
                Some(saved) => match Crowd::restore(&self.mesh, self.config, &saved.bytes) {
                    Ok(crowd) => {
                        self.crowd = crowd;
                        self.agents = saved.agents.clone();
                        self.profiles = saved.profiles.clone();
                        Ok(json!({ "epoch": self.crowd.epoch() }))
                    }
                    Err(error) => Err(error.to_string()),
                },
            },
        };
        let name = command_name(command);
        let mut record = json!({ "command": name });
        let fields = record.as_object_mut().expect("an object");
        if let Some(agent) = command_agent(command) {
            fields.insert("agent".into(), json!(agent));
        }
        match result {
            Ok(Value::Object(returned)) => fields.extend(returned),
            Ok(_) => {}
            Err(error) => {
                fields.insert("refused".into(), json!(error));
                self.refused
                    .push(json!({ "tick": tick, "command": name, "error": error }));
            }
        }
        Ok(record)
    }

    /// The commit point's decisions of the step, from the ordered log.
    fn decisions(&self, log: &[LogEntry]) -> Vec<Value> {
        log.iter()
            .filter_map(|entry| match &entry.record {
                LogRecord::Result(result) => {
                    let mut record = json!({
                        "agent": self.name(result.agent),
                        "query": identity(result.query),
                        "decision": decision_name(result.decision),
                    });
                    if let Decision::Rejected(Rejection::Stale(changed)) = result.decision {
                        record["changed"] = json!(format!("{changed:?}"));
                    }
                    Some(record)
                }
                LogRecord::Expired {
                    agent,
                    query,
                    changed,
                } => Some(json!({
                    "agent": self.name(*agent),
                    "query": identity(*query),
                    "decision": "expired",
                    "changed": format!("{changed:?}"),
                })),
                _ => None,
            })
            .collect()
    }

    fn event(&mut self, tick: u64, event: &CrowdEvent) -> Value {
        let (kind, agent, mut details) = match *event {
            CrowdEvent::Arrived { agent, request } => {
                ("arrived", agent, json!({ "order": identity(request) }))
            }
            CrowdEvent::PartialArrived { agent, request } => (
                "partial_arrived",
                agent,
                json!({ "order": identity(request) }),
            ),
            CrowdEvent::Blocked { agent, request, by } => (
                "blocked",
                agent,
                json!({ "order": identity(request), "by": blocked_by(by) }),
            ),
            CrowdEvent::LinkStarted { agent, link } => {
                ("link_started", agent, json!({ "link": link.0 }))
            }
            CrowdEvent::LinkFinished { agent, link } => {
                ("link_finished", agent, json!({ "link": link.0 }))
            }
            CrowdEvent::Cancelled { agent, record } => (
                "cancelled",
                agent,
                json!({ "record": cancel_record(record) }),
            ),
            CrowdEvent::CancelFault { agent, record } => (
                "cancel_fault",
                agent,
                json!({ "record": cancel_record(record) }),
            ),
            CrowdEvent::RouteInvalidated {
                agent,
                request,
                changed,
            } => (
                "route_invalidated",
                agent,
                json!({ "order": identity(request), "changed": format!("{changed:?}") }),
            ),
            CrowdEvent::NoPath { agent, request } => {
                ("no_path", agent, json!({ "order": identity(request) }))
            }
            CrowdEvent::Quarantined { agent, fault } => (
                "quarantined",
                agent,
                json!({ "field": fault.field.name(), "value": format!("{}", fault.value()) }),
            ),
            CrowdEvent::StandFact {
                agent,
                order,
                change,
            } => {
                let change = match change {
                    FactChange::None => json!("none"),
                    FactChange::Established(generation) => {
                        json!({ "established": generation })
                    }
                    FactChange::Invalidated { deadline_tick } => {
                        json!({ "invalidated": { "deadline_frame": deadline_tick } })
                    }
                    FactChange::Failed(why) => json!({ "failed": hold_failure(why) }),
                    FactChange::Released => json!("released"),
                };
                (
                    "stand_fact",
                    agent,
                    json!({ "order": identity(order), "change": change }),
                )
            }
            CrowdEvent::OrderEnded {
                agent,
                order,
                outcome,
            } => {
                self.ended.push((tick, self.name(agent), order, outcome));
                (
                    "order_ended",
                    agent,
                    json!({ "order": identity(order), "outcome": outcome_name(outcome) }),
                )
            }
        };
        details["event"] = json!(kind);
        details["agent"] = json!(self.name(agent));
        details
    }

    /// Agents whose position, status, order, query or owner changed since last traced.
    fn changed_agents(&mut self) -> Vec<Value> {
        let mut changed = Vec::new();
        for (name, agent) in &self.agents {
            let state = agent_state(&self.crowd, *agent);
            if self.last.get(agent) != Some(&state) {
                let mut record = state.clone();
                record["name"] = json!(name);
                changed.push(record);
                self.last.insert(*agent, state);
            }
        }
        changed
    }

    fn report(
        &self,
        command: &SimCommand,
        scenario: &Scenario,
        out: &mut dyn Write,
    ) -> Result<(), CliError> {
        let mut counts: HashMap<&'static str, usize> = HashMap::new();
        for (_, _, _, outcome) in &self.ended {
            *counts.entry(outcome_name(*outcome)).or_default() += 1;
        }
        let agents: Vec<Value> = self
            .agents
            .iter()
            .map(|(name, agent)| {
                let mut state = agent_state(&self.crowd, *agent);
                state["name"] = json!(name);
                state
            })
            .collect();
        let hash = waymark::harness::state_hash(&self.crowd);
        if command.json {
            let summary = json!({
                "scenario": command.scenario.display().to_string(),
                "ticks": scenario.ticks,
                "frame": self.crowd.frame(),
                "epoch": self.crowd.epoch(),
                "agents": agents,
                "orders": self.ended.iter().map(|(tick, name, order, outcome)| json!({
                    "tick": tick,
                    "agent": name,
                    "order": identity(*order),
                    "outcome": outcome_name(*outcome),
                })).collect::<Vec<_>>(),
                "outcomes": counts,
                "refused": self.refused,
                "state_hash": format!("{hash:016x}"),
            });
            writeln!(out, "{summary}")?;
        } else {
            writeln!(
                out,
                "{}: {} ticks, frame {}, epoch {}",
                command.scenario.display(),
                scenario.ticks,
                self.crowd.frame(),
                self.crowd.epoch()
            )?;
            for (tick, name, order, outcome) in &self.ended {
                writeln!(
                    out,
                    "  tick {tick:>4}: {name} order {}.{}.{} ended {}",
                    order.logical,
                    order.attempt,
                    order.epoch,
                    outcome_name(*outcome)
                )?;
            }
            for refused in &self.refused {
                writeln!(out, "  refused: {refused}")?;
            }
            writeln!(out, "  state hash {hash:016x}")?;
        }
        Ok(())
    }
}

fn crowd_config(spec: &CrowdSpec) -> Result<CrowdConfig, CliError> {
    let mut config = CrowdConfig {
        ordered_log: true,
        ..CrowdConfig::default()
    };
    config.budget = FrameBudget {
        node_expansions: spec
            .node_expansions
            .unwrap_or(config.budget.node_expansions),
        head_starts: spec.head_starts.unwrap_or(config.budget.head_starts),
        ..config.budget
    };
    if let Some(seconds) = spec.pass_through_after_s {
        config.avoidance.pass_through_after_s = seconds;
    }
    if let Some(enabled) = spec.avoidance {
        config.avoidance.enabled = enabled;
    }
    config.blocked_policy = match &spec.blocked_policy {
        None => BlockedPolicy::Wait,
        Some(Value::String(name)) if name == "wait" => BlockedPolicy::Wait,
        Some(Value::String(name)) if name == "replan" => BlockedPolicy::Replan,
        Some(Value::Object(fields)) if fields.len() == 1 && fields.contains_key("fail_after_s") => {
            let seconds = fields["fail_after_s"].as_f64().ok_or_else(|| {
                CliError::Usage(format!(
                    "blocked_policy fail_after_s {} is not a number",
                    fields["fail_after_s"]
                ))
            })?;
            BlockedPolicy::FailAfter {
                seconds: seconds as f32,
            }
        }
        Some(other) => {
            return Err(CliError::Usage(format!(
                "blocked_policy {other} is none of \"wait\", \"replan\", {{\"fail_after_s\": seconds}}"
            )));
        }
    };
    Ok(config)
}

/// What the trace shows of an agent.
fn agent_state(crowd: &Crowd, agent: AgentId) -> Value {
    let Ok(position) = crowd.position(agent) else {
        return json!({ "removed": true });
    };
    let status = crowd.status(agent).map(|s| format!("{s:?}")).ok();
    let order = crowd.request(agent).ok().flatten().map(identity);
    let query = crowd.query(agent).ok().flatten().map(identity);
    let owner = crowd.owner(agent).ok().flatten().map(owner_record);
    let velocity = crowd.world_velocity(agent).unwrap_or(Vec3::ZERO);
    let hold = crowd.hold(agent).ok().flatten().map(|hold| {
        let phase = match hold.phase {
            HoldPhase::Settling => json!("settling"),
            HoldPhase::Standing => json!("standing"),
            HoldPhase::Recovering { deadline_tick } => {
                json!({ "recovering": { "deadline_frame": deadline_tick } })
            }
            HoldPhase::Failed(why) => json!({ "failed": hold_failure(why) }),
            HoldPhase::Released => json!("released"),
        };
        json!({ "order": identity(hold.order), "phase": phase, "fact": hold.fact })
    });
    let interaction = crowd.interaction(agent).ok().flatten().map(|view| {
        let phase = match view.phase {
            InteractionPhase::Walking => "walking",
            InteractionPhase::Verifying => "verifying",
            InteractionPhase::Holding => "holding",
        };
        json!({
            "order": identity(view.order),
            "phase": phase,
            "foot": v3(view.foot),
            "checks_pass": view.checks_pass,
        })
    });
    // Positions to the millimetre: a trace records motion, not float noise.
    let rounded = |value: f32| (f64::from(value) * 1000.0).round() / 1000.0;
    json!({
        "position": [rounded(position.x), rounded(position.y), rounded(position.z)],
        "velocity": [rounded(velocity.x), rounded(velocity.y), rounded(velocity.z)],
        "hold": hold,
        "interaction": interaction,
        "status": status,
        "order": order,
        "query": query,
        "owner": owner,
    })
}

/// A point to the micrometre.
fn v3(point: Vec3) -> Value {
    let rounded = |value: f32| (f64::from(value) * 1e6).round() / 1e6;
    json!([rounded(point.x), rounded(point.y), rounded(point.z)])
}

fn identity(id: RequestId) -> Value {
    json!({ "logical": id.logical, "attempt": id.attempt, "epoch": id.epoch })
}

fn cancel_record(record: CancelRecord) -> Value {
    json!({ "order": record.order.map(identity), "frame": record.frame })
}

fn owner_record(owner: MoverOwner) -> Value {
    let (action, id) = match owner.action {
        MoverAction::Move(order) => ("move", identity(order)),
        MoverAction::Velocity(order) => ("velocity", identity(order)),
        MoverAction::Braking(record) => ("braking", cancel_record(record)),
        MoverAction::Hold(order) => ("hold", identity(order)),
    };
    json!({ "action": action, "id": id, "handoff": owner.handoff })
}

fn blocked_by(by: BlockedBy) -> &'static str {
    match by {
        BlockedBy::Crowd => "crowd",
        BlockedBy::Wall => "wall",
    }
}

fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "success",
        Outcome::Cancelled => "cancelled",
        Outcome::Failure(FailureCondition::Unreachable) => "unreachable",
        Outcome::Failure(FailureCondition::NoPath) => "no_path",
        Outcome::Failure(FailureCondition::DeadlinePassed) => "deadline_passed",
        Outcome::Failure(FailureCondition::Blocked(BlockedBy::Crowd)) => "blocked_by_crowd",
        Outcome::Failure(FailureCondition::Blocked(BlockedBy::Wall)) => "blocked_by_wall",
        Outcome::Failure(FailureCondition::Hold(HoldFailure::CapabilityInsufficient)) => {
            "hold_capability_insufficient"
        }
        Outcome::Failure(FailureCondition::Hold(HoldFailure::DeadlinePassed)) => {
            "hold_deadline_passed"
        }
        Outcome::Failure(FailureCondition::Interaction(why)) => match why {
            InteractionFailure::NoLegalRegion => "interaction_no_legal_region",
            InteractionFailure::CandidatesExhausted => "interaction_candidates_exhausted",
            InteractionFailure::PoseCheck(_) => "interaction_pose_check",
            InteractionFailure::TargetTeleported => "interaction_target_teleported",
            InteractionFailure::TargetReplaced => "interaction_target_replaced",
            InteractionFailure::TargetMoved => "interaction_target_moved",
            InteractionFailure::TargetMissing => "interaction_target_missing",
            InteractionFailure::NoWorld => "interaction_no_world",
            InteractionFailure::Unreachable => "interaction_unreachable",
        },
    }
}

fn hold_failure(why: HoldFailure) -> &'static str {
    match why {
        HoldFailure::CapabilityInsufficient => "capability_insufficient",
        HoldFailure::DeadlinePassed => "deadline_passed",
    }
}

fn decision_name(decision: Decision) -> &'static str {
    match decision {
        Decision::Adopted => "adopted",
        Decision::HeadStartWalked => "head_start_walked",
        Decision::HeadStartSkipped => "head_start_skipped",
        Decision::Failed => "failed",
        Decision::Rejected(Rejection::NotCurrent) => "rejected_not_current",
        Decision::Rejected(Rejection::NoCorridor) => "rejected_no_corridor",
        Decision::Rejected(Rejection::Stale(_)) => "rejected_stale",
        Decision::Rejected(Rejection::OffCorridor) => "rejected_off_corridor",
    }
}

fn command_name(command: &CommandSpec) -> &'static str {
    match command {
        CommandSpec::Move { .. } => "move",
        CommandSpec::Velocity { .. } => "velocity",
        CommandSpec::Cancel { .. } => "cancel",
        CommandSpec::Release { .. } => "release",
        CommandSpec::Belt { .. } => "belt",
        CommandSpec::Turntable { .. } => "turntable",
        CommandSpec::Teleport { .. } => "teleport",
        CommandSpec::Push { .. } => "push",
        CommandSpec::Hold { .. } => "hold",
        CommandSpec::Interact { .. } => "interact",
        CommandSpec::Add(_) => "add",
        CommandSpec::Remove { .. } => "remove",
        CommandSpec::Door { .. } => "door",
        CommandSpec::LinkWindow { .. } => "link_window",
        CommandSpec::Save => "save",
        CommandSpec::Restore => "restore",
    }
}

fn command_agent(command: &CommandSpec) -> Option<&str> {
    match command {
        CommandSpec::Move { agent, .. }
        | CommandSpec::Velocity { agent, .. }
        | CommandSpec::Cancel { agent }
        | CommandSpec::Release { agent }
        | CommandSpec::Teleport { agent, .. }
        | CommandSpec::Push { agent, .. }
        | CommandSpec::Hold { agent, .. }
        | CommandSpec::Interact { agent, .. }
        | CommandSpec::Remove { agent } => Some(agent),
        CommandSpec::Add(agent) => Some(&agent.name),
        CommandSpec::Door { .. }
        | CommandSpec::LinkWindow { .. }
        | CommandSpec::Belt { .. }
        | CommandSpec::Turntable { .. }
        | CommandSpec::Save
        | CommandSpec::Restore => None,
    }
}
