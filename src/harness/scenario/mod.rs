//! Standard crowd scenarios with measured quality: circle swap, two-way corridor traffic, a
//! bottleneck, doorway and crossing traffic, and walkers on belts (the conveyor), plus the
//! per-frame quality measure any crowd run can use.
//!
//! Stage: harness, above the crowd, for tests, benchmarks and the CLI (`waymark scenario`). Input: a scenario
//! kind and an agent count. Output: a [`Scenario`] (a hand-built navigation mesh, agent
//! parameters, starts and targets, step length) and, run, a [`ScenarioReport`]: overlapping
//! agent pairs per frame, the deepest overlap, agents outside the mesh, completion time and
//! agents that never arrive.
//!
//! The meshes describe where agent centres may go (the walkable space already shrunk by the
//! agent radius, as a bake would leave it): a wall with a 2 m door is a 2 m - 2r gap.

mod builders;
mod quality;

pub use builders::CIRCLE_SLOW_TURN_RAD;
use builders::{
    bottleneck, circle, conveyor, corridor, crossing, shuttle_crossing, turntable, two_rooms,
};

pub use quality::{DepthHistogram, FrameQuality, measure_quality};

use glam::Vec3;

use super::run::{Plans, RunOptions, run_crowd};
use crate::crowd::internals::FlowReport;
use crate::crowd::{
    AgentParams, AgentStatus, Crowd, CrowdConfig, CrowdError, CrowdEvent, LinkDock, Outcome,
    PlatformMotion, StepStats, SupportMotion,
};
use crate::ids::SupportId;
use crate::mesh::blob::BakeParams;
use crate::mesh::{LinkId, NavMesh, PolyRef, TileData, WalkablePolygon};
use crate::query::portal;

/// The scenarios of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScenarioKind {
    /// RVO2's circle example: agents evenly on a ring walk to the antipode, on a plane.
    Circle,
    /// Two groups swap ends of a corridor, passing each other.
    Corridor,
    /// A crowd leaves one room for another through a 2 m door.
    Bottleneck,
    /// Two groups swap rooms through a 20 m corridor four bodies wide, meeting head-on.
    CorridorSwap,
    /// Two groups swap rooms through one 2 m door in a wall, in both directions at once.
    Doorway,
    /// Four groups cross a square, each to the opposite side, meeting in the middle.
    Crossing,
    /// Two lanes over 30 m belts, one moving with the walkers at 1 m/s, one against them:
    /// walk times against the closed form, and nobody leaves a belt but at its ends.
    Conveyor,
    /// Two groups swap plazas over a turntable 6 m across turning at 0.5 rad/s, the only
    /// way between them: everyone crosses, nobody leaves the table but onto a dock.
    Turntable,
    /// A crowd crosses a river on a ferry (a platform shuttling 13 m between two docks,
    /// boarded and left by ramps that join it only while it is docked).
    Ferry,
    /// A crowd rides a lift car (a platform going 4 m up and down between two floors,
    /// through doors that join it only while it stands at their floor).
    Elevator,
}

/// A scenario ready to run.
pub struct Scenario {
    /// Which scenario.
    pub kind: ScenarioKind,
    /// Walkable space for agent centres.
    pub mesh: NavMesh,
    /// Every agent's parameters.
    pub params: AgentParams,
    /// Crowd settings (avoidance included).
    pub config: CrowdConfig,
    /// Step length, seconds.
    pub dt_s: f32,
    /// Start and target of each agent.
    pub agents: Vec<(Vec3, Vec3)>,
    /// The run stops here if not everyone arrived, seconds.
    pub time_limit_s: f32,
    /// The longest start-to-target straight line at the preferred speed, seconds.
    pub straight_line_s: f32,
    /// Moving supports and their motion (belts, `Crowd::set_support_velocity`; turntables,
    /// `Crowd::set_support_rotation`), set before the run.
    pub supports: Vec<(SupportId, SupportMotion)>,
    /// Each agent's walk time by the closed form, seconds (empty: the scenario has none);
    /// the report gives the largest relative difference from it.
    pub walk_times_s: Vec<f32>,
    /// Platforms (supports whose footprint moves, `Crowd::set_platform_motion`) and their
    /// motion, set before the run.
    pub platforms: Vec<(SupportId, PlatformMotion)>,
    /// The docks of the links between platforms and the ground (`Crowd::set_link_dock`).
    pub link_docks: Vec<(LinkId, LinkDock)>,
}

/// A scenario's agent count out of range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// Too few or too many agents for the scenario's layout.
    #[error("scenario {kind:?} takes {low} to {high} agents, not {agents}")]
    AgentCount {
        /// The scenario.
        kind: ScenarioKind,
        /// Asked for.
        agents: usize,
        /// Fewest.
        low: usize,
        /// Most.
        high: usize,
    },
    /// Too few or too many idle agents for the part-the-crowd block.
    #[error("part-the-crowd takes 1 to 400 idle agents, not {idle}")]
    PartTheCrowd {
        /// Asked for.
        idle: usize,
    },
    /// Too few or too many agents for the doors scenario's halls.
    #[error("doors takes 2 to 198 agents, not {agents}")]
    Doors {
        /// Asked for.
        agents: usize,
    },
    /// The crowd refused the scenario (a bug in the scenario, reported rather than hidden).
    #[error(transparent)]
    Crowd(#[from] CrowdError),
}

pub(super) fn rectangle(x0: f32, z0: f32, x1: f32, z1: f32) -> WalkablePolygon {
    WalkablePolygon::ground(vec![
        Vec3::new(x0, 0.0, z0),
        Vec3::new(x1, 0.0, z0),
        Vec3::new(x1, 0.0, z1),
        Vec3::new(x0, 0.0, z1),
    ])
}

pub(super) fn mesh_of(polygons: &[WalkablePolygon]) -> NavMesh {
    let mut mesh = NavMesh::new(BakeParams::default());
    let tile = TileData::from_walkable_polygons(polygons).expect("scenario polygons are valid");
    mesh.add_tiles(vec![tile])
        .expect("one tile fits an empty mesh");
    mesh
}

/// Human-sized walkers for the corridor and the bottleneck.
pub(super) const WALKER: AgentParams = AgentParams {
    radius_m: 0.4,
    height_m: 1.8,
    max_speed_mps: 2.0,
    preferred_speed_mps: 1.4,
    max_acceleration_mps2: 4.0,
};

impl Scenario {
    /// Builds scenario `kind` for `agents` agents.
    pub fn new(kind: ScenarioKind, agents: usize) -> Result<Scenario, ScenarioError> {
        let (low, high) = match kind {
            ScenarioKind::Circle => (2, 20_000),
            ScenarioKind::Corridor => (2, 2_000),
            ScenarioKind::Bottleneck => (1, 400),
            ScenarioKind::CorridorSwap | ScenarioKind::Doorway => (2, 2_000),
            ScenarioKind::Crossing => (4, 4_000),
            ScenarioKind::Conveyor => (2, 400),
            ScenarioKind::Turntable => (2, 400),
            ScenarioKind::Ferry | ScenarioKind::Elevator => (1, 400),
        };
        if !(low..=high).contains(&agents) {
            return Err(ScenarioError::AgentCount {
                kind,
                agents,
                low,
                high,
            });
        }
        Ok(match kind {
            ScenarioKind::Circle => circle(agents),
            ScenarioKind::Corridor => corridor(agents),
            ScenarioKind::Bottleneck => bottleneck(agents),
            ScenarioKind::CorridorSwap => two_rooms(ScenarioKind::CorridorSwap, agents, true),
            ScenarioKind::Doorway => two_rooms(ScenarioKind::Doorway, agents, true),
            ScenarioKind::Crossing => crossing(agents),
            ScenarioKind::Conveyor => conveyor(agents),
            ScenarioKind::Turntable => turntable(agents),
            ScenarioKind::Ferry => shuttle_crossing(ScenarioKind::Ferry, agents),
            ScenarioKind::Elevator => shuttle_crossing(ScenarioKind::Elevator, agents),
        })
    }

    /// The corridor swap or doorway with only the first group (the agents going left to
    /// right): the one-way reference that a two-way run's completion is compared with.
    pub fn one_way(kind: ScenarioKind, agents: usize) -> Result<Scenario, ScenarioError> {
        let mut scenario = Scenario::new(kind, agents)?;
        if matches!(kind, ScenarioKind::CorridorSwap | ScenarioKind::Doorway) {
            scenario = two_rooms(kind, agents, false);
        }
        Ok(scenario)
    }
}

/// What a scenario run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioReport {
    /// Agents.
    pub agents: usize,
    /// Agent radius, metres.
    pub radius_m: f32,
    /// Frames stepped.
    pub frames: usize,
    /// Step length, seconds.
    pub dt_s: f32,
    /// When the last agent arrived, seconds (None: not everyone did).
    pub completion_s: Option<f32>,
    /// Completion time over the longest straight-line time at the preferred speed.
    pub completion_ratio: Option<f32>,
    /// Agents that had not arrived at the end.
    pub unarrived_agents: usize,
    /// Agents that had not arrived and had made no progress along their corridors for
    /// [`STUCK_AFTER_S`](crate::harness::STUCK_AFTER_S) at the end ([`FlowReport`]).
    pub stuck_agents: usize,
    /// Complete arrivals (within the arrival tolerance of the requested target).
    pub arrivals: usize,
    /// Arrivals at the end of a partial path (target unreachable).
    pub partial_arrivals: usize,
    /// The flow measures of the run ([`FlowMeter`](crate::harness::FlowMeter)).
    pub flow: FlowReport,
    /// Arrivals per second in the steady part of the run: the middle 60% of the arrivals
    /// (from the 20th to the 80th percentile) over the time they took, leaving out the
    /// first few who walk straight in and the last stragglers (None: fewer than 5
    /// arrivals). For the bottleneck, the flow through its door.
    pub steady_arrivals_per_s: Option<f32>,
    /// Mean over frames of overlapping pairs.
    pub overlap_pairs_per_frame: f64,
    /// Mean over frames of overlapping pairs with a walker passing through in them.
    pub overlap_pairs_passing_per_frame: f64,
    /// The deepest overlap of the run, metres.
    pub max_overlap_m: f32,
    /// The most agents off the mesh in any frame (must be 0).
    pub off_mesh_agents: u32,
    /// Median step time, milliseconds.
    pub ms_per_frame_median: f64,
    /// Agents over the median step time.
    pub agents_per_ms: f64,
    /// Median time of the avoid pass, milliseconds.
    pub avoid_ms_median: f64,
    /// Agents that left a support (or stepped onto one) other than across an edge it
    /// shares with the polygon they came from, or whose support disagreed with the layer
    /// under their foot, in any frame (must be 0).
    pub fell_off_support: usize,
    /// The farthest an agent stood from its target when its order succeeded, metres.
    pub stop_error_m: f32,
    /// The largest relative difference between an agent's walk time (order to success)
    /// and the scenario's closed form ([`Scenario::walk_times_s`]); None without a closed
    /// form or when someone did not arrive.
    pub walk_time_error: Option<f32>,
}

/// What [`run_scenario`] follows per agent besides the run's own report: when each
/// arrived and how far from its target, and the support each stood on.
struct Followed {
    arrived_s: Vec<Option<f32>>,
    stop_error_m: f32,
    /// Each agent's polygon and support after the last frame (by agent index: the
    /// scenario adds its agents in order to a new crowd).
    standing: Vec<Option<(PolyRef, u32)>>,
    fell: Vec<bool>,
}

impl Followed {
    fn new(agents: usize) -> Followed {
        Followed {
            arrived_s: vec![None; agents],
            stop_error_m: 0.0,
            standing: vec![None; agents],
            fell: vec![false; agents],
        }
    }

    /// One frame: the step's successes, then every agent's support.
    fn observe(&mut self, crowd: &Crowd, events: &[CrowdEvent], scenario: &Scenario, time_s: f32) {
        for event in events {
            if let CrowdEvent::OrderEnded {
                agent,
                outcome: Outcome::Success,
                ..
            } = *event
            {
                let index = agent.index() as usize;
                let (Some(arrived), Some(&(_, target)), Ok(position)) = (
                    self.arrived_s.get_mut(index),
                    scenario.agents.get(index),
                    crowd.position(agent),
                ) else {
                    continue;
                };
                arrived.get_or_insert(time_s);
                self.stop_error_m = self.stop_error_m.max(position.distance(target));
            }
        }
        if scenario.supports.is_empty() && scenario.platforms.is_empty() {
            return;
        }
        let (lanes, snapshot) = (crowd.lanes(), crowd.snapshot());
        for slot in 0..lanes.len() {
            let index = lanes.id[slot].index() as usize;
            let (polygon, support) = (lanes.polygon[slot], lanes.support[slot]);
            let (Some(standing), Some(fell)) =
                (self.standing.get_mut(index), self.fell.get_mut(index))
            else {
                continue;
            };
            if lanes.status[slot] == AgentStatus::CrossingLink {
                // On a link: leaving a support that way is what links are for, and the
                // agent lands wherever the link ends.
                *standing = None;
                continue;
            }
            let under = snapshot.support_layer(polygon).map(u32::from);
            let crossed_badly = standing.is_some_and(|(before, was)| {
                was != support && before != polygon && !connected(snapshot, before, polygon)
            });
            *fell |= under != Some(support) || crossed_badly;
            *standing = Some((polygon, support));
        }
    }
}

/// Whether a foot may have walked from `from` to `to` in a step: they share an edge, or
/// both share one with a polygon of their tile between them (a step past a corner where
/// three polygons meet crosses the one between).
fn connected(snapshot: &crate::mesh::Snapshot, from: PolyRef, to: PolyRef) -> bool {
    use crate::mesh::Adjacent;
    if portal(snapshot, from, to).is_some() {
        return true;
    }
    let (Some(tile), Some(to_tile)) = (snapshot.tile(from), snapshot.tile(to)) else {
        return false;
    };
    let internal = |polygon: u16| {
        tile.adjacent(polygon)
            .iter()
            .filter(|adjacent| adjacent.border_side == Adjacent::INTERNAL)
            .map(|adjacent| adjacent.neighbour)
    };
    std::ptr::eq(tile, to_tile)
        && internal(from.polygon()).any(|between| internal(between).any(|n| n == to.polygon()))
}

/// A crowd on `scenario`'s mesh with its settings, moving supports, platforms and docks,
/// without agents yet.
pub fn scenario_crowd(scenario: &Scenario) -> Result<Crowd, ScenarioError> {
    let mut crowd = Crowd::new(&scenario.mesh, scenario.config)?;
    for &(support, motion) in &scenario.supports {
        crowd.set_support_motion(support, motion)?;
    }
    for &(support, motion) in &scenario.platforms {
        crowd.set_platform_motion(support, Some(motion))?;
    }
    for &(link, dock) in &scenario.link_docks {
        crowd.set_link_dock(link, Some(dock))?;
    }
    Ok(crowd)
}

/// Runs `scenario` until everyone arrived or the time limit; `on_frame` sees the crowd and
/// the step's events after every step (drawing, tracing, extra checks). Returns the report
/// and the final crowd.
pub fn run_scenario(
    scenario: &Scenario,
    mut on_frame: impl FnMut(&Crowd, &[CrowdEvent]),
) -> Result<(ScenarioReport, Crowd), ScenarioError> {
    let mut crowd = scenario_crowd(scenario)?;
    let mut plans = Plans::with_capacity(scenario.agents.len(), 1);
    for &(start, target) in &scenario.agents {
        plans.push(start, [target]);
    }
    let options = RunOptions {
        dt_s: scenario.dt_s,
        warm_up_frames: 0,
        frames: (scenario.time_limit_s / scenario.dt_s).ceil() as usize,
        measure_quality: true,
        retarget: false,
        comparison_rule: false,
        stop_when_all_arrived: true,
        skip_off_mesh_starts: false,
        save_at_frame: None,
        settings_tag: 0,
    };
    let mut followed = Followed::new(scenario.agents.len());
    let mut frames = 0;
    let run = run_crowd(
        &mut crowd,
        &plans,
        scenario.params,
        &options,
        |crowd, events| {
            frames += 1;
            followed.observe(crowd, events, scenario, frames as f32 * scenario.dt_s);
            on_frame(crowd, events)
        },
    )?;
    let walk_time_error = if scenario.walk_times_s.is_empty() {
        None
    } else {
        followed
            .arrived_s
            .iter()
            .zip(&scenario.walk_times_s)
            .map(|(arrived, &expected)| arrived.map(|s| (s / expected - 1.0).abs()))
            .try_fold(0.0f32, |largest, error| error.map(|e| largest.max(e)))
    };
    let completion_s = run.all_arrived.then_some(run.frames as f32 * scenario.dt_s);
    let arrival_frames = &run.first_arrival_frames;
    let steady_arrivals_per_s = (arrival_frames.len() >= 5).then(|| {
        let (low, high) = (arrival_frames.len() / 5, arrival_frames.len() * 4 / 5);
        let seconds = (arrival_frames[high] - arrival_frames[low]) as f32 * scenario.dt_s;
        (high - low) as f32 / seconds.max(scenario.dt_s)
    });
    let avoid = StepStats::PASS_NAMES
        .iter()
        .position(|&name| name == "avoid")
        .expect("the avoid pass is named");
    let report = ScenarioReport {
        agents: scenario.agents.len(),
        radius_m: scenario.params.radius_m,
        frames: run.frames,
        dt_s: scenario.dt_s,
        completion_s,
        completion_ratio: completion_s.map(|s| s / scenario.straight_line_s),
        unarrived_agents: scenario.agents.len() - arrival_frames.len(),
        stuck_agents: run.flow.stuck_agents,
        arrivals: run.arrivals,
        partial_arrivals: run.partial_arrivals,
        flow: run.flow.clone(),
        steady_arrivals_per_s,
        overlap_pairs_per_frame: run.overlap_pairs_per_frame(),
        overlap_pairs_passing_per_frame: run.overlap_pairs_passing_per_frame(),
        max_overlap_m: run.max_overlap_m,
        off_mesh_agents: run.off_mesh_agents,
        ms_per_frame_median: run.median_frame_ms(),
        agents_per_ms: run.agents_per_ms(),
        avoid_ms_median: run.pass_median_ms(avoid),
        fell_off_support: followed.fell.iter().filter(|&&fell| fell).count(),
        stop_error_m: followed.stop_error_m,
        walk_time_error,
    };
    Ok((report, crowd))
}
