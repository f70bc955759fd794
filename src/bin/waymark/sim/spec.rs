//! The scenario file `waymark sim` reads: its level, crowd, agents and timed commands, as
//! JSON, every field named and checked.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;
use waymark::crowd::{BlockedPolicy, CrowdConfig, HoldPolicy};

use crate::CliError;
use crate::target::{BodySpec, BoxSpec, CapsuleSpec, PlaneSpec, TargetSpec};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Scenario {
    pub(super) level: LevelSpec,
    /// Step length, seconds.
    #[serde(default = "default_dt")]
    pub(super) dt_s: f32,
    /// Ticks to run.
    pub(super) ticks: u64,
    #[serde(default)]
    pub(super) crowd: CrowdSpec,
    pub(super) agents: Vec<AgentSpec>,
    #[serde(default)]
    pub(super) commands: Vec<TimedCommand>,
}

pub(super) fn default_dt() -> f32 {
    1.0 / 30.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LevelSpec {
    /// Hand-built walkable space for agent centres (convex polygons sharing edges).
    #[serde(default)]
    pub(super) walkable: Vec<WalkableSpec>,
    /// Or a level: a built-in name or a file (`.obj`, baked; `.wmnav`), relative to the
    /// scenario file.
    #[serde(default)]
    pub(super) file: Option<PathBuf>,
    /// Bake preset for an `.obj` level: "guard" (default) or "recast".
    #[serde(default)]
    pub(super) preset: Option<String>,
    /// The body size a hand-built level is for (agents default to it).
    #[serde(default = "default_radius")]
    pub(super) agent_radius_m: f32,
    #[serde(default = "default_height")]
    pub(super) agent_height_m: f32,
    /// Off-mesh links (doors and the like), by name.
    #[serde(default)]
    pub(super) links: Vec<LinkSpec>,
    /// The collision world interaction orders check their poses in (as `waymark target`'s
    /// scenario lists it).
    #[serde(default)]
    pub(super) boxes: Vec<BoxSpec>,
    #[serde(default)]
    pub(super) planes: Vec<PlaneSpec>,
    #[serde(default)]
    pub(super) capsules: Vec<CapsuleSpec>,
}

pub(super) fn default_radius() -> f32 {
    0.4
}

pub(super) fn default_height() -> f32 {
    1.5
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WalkableSpec {
    pub(super) corners: Vec<[f32; 3]>,
    /// Support layer: 0 the static ground (default), `n + 1` moving support `n`.
    #[serde(default)]
    pub(super) layer: u16,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LinkSpec {
    pub(super) name: String,
    pub(super) start: [f32; 3],
    pub(super) end: [f32; 3],
    #[serde(default = "default_true")]
    pub(super) bidirectional: bool,
    #[serde(default = "default_link_radius")]
    pub(super) radius_m: f32,
    #[serde(default = "default_true")]
    pub(super) open: bool,
}

pub(super) fn default_true() -> bool {
    true
}

pub(super) fn default_link_radius() -> f32 {
    1.0
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct CrowdSpec {
    /// Node expansions per step.
    #[serde(default)]
    pub(super) node_expansions: Option<u32>,
    /// Head starts per step.
    #[serde(default)]
    pub(super) head_starts: Option<u32>,
    /// "wait" (default), "replan", or { "fail_after_s": seconds }.
    #[serde(default)]
    pub(super) blocked_policy: Option<Value>,
    /// Seconds a stuck agent waits before it may pass through a jammed neighbour.
    #[serde(default)]
    pub(super) pass_through_after_s: Option<f32>,
    /// Local avoidance on (default) or off.
    #[serde(default)]
    pub(super) avoidance: Option<bool>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentSpec {
    pub(super) name: String,
    pub(super) position: [f32; 3],
    #[serde(default)]
    pub(super) radius_m: Option<f32>,
    #[serde(default)]
    pub(super) height_m: Option<f32>,
    #[serde(default)]
    pub(super) max_speed_mps: Option<f32>,
    #[serde(default)]
    pub(super) preferred_speed_mps: Option<f32>,
    #[serde(default)]
    pub(super) max_acceleration_mps2: Option<f32>,
    /// false: the agent does not negotiate (others avoid it; it keeps its velocity).
    #[serde(default = "default_true")]
    pub(super) negotiates: bool,
    /// Its avoidance profile's horizons (the crowd's by default).
    #[serde(default)]
    pub(super) time_horizon_s: Option<f32>,
    #[serde(default)]
    pub(super) wall_time_horizon_s: Option<f32>,
}

/// An obstacle's shape in a scenario (metres, radians).
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum ObstacleShapeSpec {
    Cylinder {
        base: [f32; 3],
        radius_m: f32,
        height_m: f32,
    },
    Box {
        min: [f32; 3],
        max: [f32; 3],
    },
    TurnedBox {
        base: [f32; 3],
        half_extents_m: [f32; 2],
        height_m: f32,
        yaw_rad: f32,
    },
}

impl ObstacleShapeSpec {
    pub(super) fn shape(self) -> waymark::bake::tile_cache::ObstacleShape {
        use waymark::bake::tile_cache::ObstacleShape;
        match self {
            ObstacleShapeSpec::Cylinder {
                base,
                radius_m,
                height_m,
            } => ObstacleShape::Cylinder {
                base: base.into(),
                radius_m,
                height_m,
            },
            ObstacleShapeSpec::Box { min, max } => ObstacleShape::Box {
                min: min.into(),
                max: max.into(),
            },
            ObstacleShapeSpec::TurnedBox {
                base,
                half_extents_m,
                height_m,
                yaw_rad,
            } => ObstacleShape::TurnedBox {
                base: base.into(),
                half_extents_m: half_extents_m.into(),
                height_m,
                yaw_rad,
            },
        }
    }
}

#[derive(Deserialize)]
pub(super) struct TimedCommand {
    pub(super) tick: u64,
    #[serde(flatten)]
    pub(super) command: CommandSpec,
}

#[derive(Deserialize, Debug)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum CommandSpec {
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
    /// Places a temporary obstacle (a level baked from a file): it cuts the floor, or
    /// with `area` marks it; its tiles are rebuilt from the tile cache before the step.
    Obstacle {
        name: String,
        shape: ObstacleShapeSpec,
        #[serde(default)]
        area: Option<String>,
    },
    /// Takes a named obstacle away; its tiles are rebuilt before the step.
    RemoveObstacle {
        name: String,
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
pub(super) struct PolicySpec {
    #[serde(default)]
    pub(super) kp_per_s: Option<f32>,
    #[serde(default)]
    pub(super) correction_cap_mps: Option<f32>,
    #[serde(default)]
    pub(super) brake_budget_mps2: Option<f32>,
    #[serde(default)]
    pub(super) position_deadband_m: Option<f32>,
    #[serde(default)]
    pub(super) enter_m: Option<f32>,
    #[serde(default)]
    pub(super) exit_m: Option<f32>,
    #[serde(default)]
    pub(super) speed_enter_mps: Option<f32>,
    #[serde(default)]
    pub(super) recovery_ticks: Option<u64>,
}

impl PolicySpec {
    pub(super) fn policy(&self) -> HoldPolicy {
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

pub(super) fn crowd_config(spec: &CrowdSpec) -> Result<CrowdConfig, CliError> {
    let mut config = CrowdConfig {
        ordered_log: true,
        ..CrowdConfig::default()
    };
    // A budget the spec names is the budget, whatever the crowd's size.
    if let Some(nodes) = spec.node_expansions {
        config.path_nodes_per_step = nodes;
        config.path_nodes_per_agent = 0.0;
    }
    if let Some(head_starts) = spec.head_starts {
        config.head_starts_per_step = head_starts;
        config.head_starts_per_agent = 0.0;
    }
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
