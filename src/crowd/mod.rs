//! The crowd runtime: thousands of agents moved every frame along shared corridors, under
//! one node budget for path finding, with slope-aware limits and step feedback (spec 001,
//! spec 004).
//!
//! Stage: runtime, above [`query`](crate::query). Inputs: a mesh snapshot and a game's
//! orders (moves, velocities, teleports, parameters, per-agent filters and avoidance
//! profiles) for agents named by [`AgentId`]s. Outputs: each step, every agent's position,
//! velocity and status ([`Crowd::agents`]) and the step's [`CrowdEvent`]s.
//!
//! Inside, identity and protocol state (move requests with their logical id, attempt and
//! epoch; velocity requests; link crossings; parameters) live in a `hecs::World` whose
//! entities' bits are the [`AgentId`]s; the hot per-frame state lives in dense
//! struct-of-arrays lanes indexed by slot. [`Crowd::step`] runs the passes in the order
//! written once in `step.rs`: ingest -> schedule -> adopt -> follow -> slope -> avoid ->
//! move -> separate -> feedback, each timed and counted in [`StepStats`]. The avoid pass
//! (`avoid/`) negotiates velocities between neighbours found by a per-frame grid
//! (`neighbours.rs`); `docs/architecture.md` maps the rest of the files.
//!
//! Invariants: an agent is never lost (a failed step leaves it where it was, with a
//! reason); a path result is adopted only at the adopt pass, and only if its request id,
//! attempt and epoch still match the agent's request and its read set is still valid;
//! parallel passes write only their own outputs and results are collected in slot order, so
//! the same inputs give the same lanes and events at any thread count.
//!
//! # Example
//! ```
//! use glam::Vec3;
//! use waymark::crowd::{AgentParams, Crowd, CrowdConfig, CrowdEvent, KinematicController};
//! use waymark::mesh::{NavMesh, TileData, WalkablePolygon, blob::BakeParams};
//!
//! // Walkable space: a 10 m x 2 m strip (baked tiles work the same way).
//! let strip = WalkablePolygon::ground(vec![
//!     Vec3::new(0.0, 0.0, 0.0),
//!     Vec3::new(10.0, 0.0, 0.0),
//!     Vec3::new(10.0, 0.0, 2.0),
//!     Vec3::new(0.0, 0.0, 2.0),
//! ]);
//! let mut mesh = NavMesh::new(BakeParams::default());
//! mesh.add_tiles(vec![TileData::from_walkable_polygons(&[strip]).unwrap()]).unwrap();
//!
//! let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
//! let agent = crowd.add_agent(Vec3::new(1.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE).unwrap();
//! crowd.request_move(agent, Vec3::new(9.0, 0.0, 1.0)).unwrap();
//! let mut controller = KinematicController;
//! let mut arrived = false;
//! for _ in 0..300 {
//!     for event in crowd.step(1.0 / 30.0, &mut controller).unwrap() {
//!         arrived |= matches!(event, CrowdEvent::Arrived { agent: arrived_agent, .. } if arrived_agent == agent);
//!     }
//! }
//! assert!(arrived);
//! assert!(crowd.position(agent).unwrap().distance(Vec3::new(9.0, 0.0, 1.0)) < 0.3);
//! ```

mod adopt;
mod agent;
mod avoid;
mod commands;
mod controller;
mod corridor;
mod crossing;
mod feedback;
mod flow;
mod funnel;
mod lanes;
mod neighbours;
mod parallel;
mod passes;
mod scheduler;
mod scratch;
mod separation;
mod sorting_network;
mod step;

/// The crowd's passes and lanes, for the crate's benchmarks, stress runs and white-box
/// tests: not part of the API, and changed without notice.
#[doc(hidden)]
pub mod internals {
    pub use super::avoid::{
        AvoidBody, ConstraintLanes, HalfPlane, NeighbourBatch, VelocityBounds, avoid_pass,
        gather_bodies, orca_constraints_scalar, solve_velocity,
    };
    pub use super::funnel::{LOOKAHEAD_PORTALS, funnel_scalar};
    pub use super::lanes::AgentLanes;
    pub use super::neighbours::NeighbourGrid;
    pub use super::passes::{
        PortalWindow, STALL_S, feedback_velocities, follow_one, follow_pass, patch_gradient,
        profile_speed, rejoin, slope_limits_scalar, slope_limits_simd, slope_pass,
        stopping_distance, track_progress,
    };
}

pub use agent::{AgentId, AgentParams, AgentView, FilterId, ProfileId, TABLE_ENTRIES_MAX};
pub use avoid::{AvoidanceConfig, AvoidanceProfile, ContactModel};
pub use controller::{
    BlockedReason, Controller, KinematicController, StepFeedback, StepRequest, integrate_velocity,
    move_foot,
};
pub use corridor::{Corridor, CorridorCache, CorridorKey, CorridorMemory, CorridorReads};
pub use flow::{FlowMeter, FlowReport, PROGRESS_STEP_M, STUCK_AFTER_S};
pub use lanes::AgentStatus;
pub use scheduler::{FrameBudget, PathWaits, RequestId, ScheduleStats};
pub use step::{PassStats, StepStats};

use std::collections::TryReserveError;

use scratch::StepScratch;
use std::sync::Arc;

use glam::Vec3;

use crate::mesh::{NavMesh, Snapshot};
use crate::query::{QueryFilter, nearest_polygon};
use lanes::AgentLanes;
use neighbours::NeighbourGrid;
use scheduler::Scheduler;

/// Crowd settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrowdConfig {
    /// Node expansions per step for all searches.
    pub budget: FrameBudget,
    /// Horizontal distance to the goal that counts as there, metres.
    pub arrive_tolerance_m: f32,
    /// Speed below which an agent counts as stopped, m/s.
    pub stop_speed_mps: f32,
    /// Half extents of the box a target or start is snapped to the mesh in.
    pub snap_half_extents: Vec3,
    /// Heuristic weight of path searches (1: optimal A*; above 1: weighted A*, paths at
    /// most that factor longer, far fewer expansions on grid-like levels).
    pub heuristic_weight: f32,
    /// Local avoidance.
    pub avoidance: AvoidanceConfig,
    /// Whether paths may cross off-mesh links (open ones; a closed link is never crossed).
    pub use_links: bool,
    /// Whether the pool's other threads stay awake for the whole step, taking work as soon
    /// as a pass offers it, instead of going to sleep in the serial stretches between
    /// passes and being woken for the next one (which costs tens of microseconds a time on
    /// some machines, several times a step). They look for other pool work meanwhile, so
    /// a host's own parallel jobs still run. Results are the same either way.
    pub keep_workers_awake: bool,
    /// Corridors the cache keeps before it drops those no agent holds (see
    /// [`CorridorCache`]).
    pub corridor_cache_capacity: usize,
}

impl Default for CrowdConfig {
    fn default() -> Self {
        CrowdConfig {
            budget: FrameBudget::default(),
            arrive_tolerance_m: 0.25,
            stop_speed_mps: 0.05,
            snap_half_extents: Vec3::new(2.0, 4.0, 2.0),
            // Weighted A*: on grid-like levels far fewer expansions than optimal A* for
            // paths barely longer (docs/benchmarks.md).
            heuristic_weight: 1.5,
            avoidance: AvoidanceConfig::default(),
            use_links: true,
            keep_workers_awake: true,
            corridor_cache_capacity: CorridorCache::DEFAULT_CAPACITY,
        }
    }
}

impl CrowdConfig {
    /// The field that makes this configuration unusable, with its value, if any.
    pub fn invalid_field(&self) -> Option<(&'static str, f32)> {
        let finite_at_least = |value: f32, low: f32| value.is_finite() && value >= low;
        if self.budget.node_expansions == 0 {
            return Some(("budget.node_expansions", 0.0));
        }
        if !finite_at_least(self.budget.search_time_ms, 0.0) {
            return Some(("budget.search_time_ms", self.budget.search_time_ms));
        }
        if !finite_at_least(self.arrive_tolerance_m, 0.0) {
            return Some(("arrive_tolerance_m", self.arrive_tolerance_m));
        }
        if !(self.stop_speed_mps.is_finite() && self.stop_speed_mps > 0.0) {
            return Some(("stop_speed_mps", self.stop_speed_mps));
        }
        for (field, value) in [
            ("snap_half_extents.x", self.snap_half_extents.x),
            ("snap_half_extents.y", self.snap_half_extents.y),
            ("snap_half_extents.z", self.snap_half_extents.z),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Some((field, value));
            }
        }
        if !finite_at_least(self.heuristic_weight, 1.0) {
            return Some(("heuristic_weight", self.heuristic_weight));
        }
        self.avoidance.invalid_field()
    }
}

/// Something that happened to an agent in a step; each is reported once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrowdEvent {
    /// The agent reached its target and stopped.
    Arrived {
        /// The agent.
        agent: AgentId,
        /// The request.
        request: RequestId,
    },
    /// The agent reached the end of a partial path: its target is unreachable.
    PartialArrived {
        /// The agent.
        agent: AgentId,
        /// The request.
        request: RequestId,
    },
    /// 0.5 s of non-zero requests without 0.05 m of progress (spec 001, h2).
    Blocked {
        /// The agent.
        agent: AgentId,
        /// The request.
        request: RequestId,
    },
    /// The agent reached the entry of an off-mesh link on its path and starts crossing it
    /// (the host plays the link's action; the crowd carries the agent to the exit).
    LinkStarted {
        /// The agent.
        agent: AgentId,
        /// The link.
        link: crate::mesh::LinkId,
    },
    /// The agent landed at the link's exit and walks on.
    LinkFinished {
        /// The agent.
        agent: AgentId,
        /// The link.
        link: crate::mesh::LinkId,
    },
    /// The request cannot be served: no walkable polygon near the target.
    NoPath {
        /// The agent.
        agent: AgentId,
        /// The request.
        request: RequestId,
    },
}

/// A crowd call with bad input.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CrowdError {
    /// The id names no agent of this crowd (removed, or never issued by it).
    #[error("{0} is not an agent of this crowd (removed, or never issued by it)")]
    UnknownAgent(AgentId),
    /// A position with no walkable polygon within the snap box.
    #[error("position {0} is not on the navigation mesh (no polygon within the snap box)")]
    OffMesh(Vec3),
    /// A non-finite position or target.
    #[error("{what} {value} is not finite")]
    NotFinite {
        /// Which input.
        what: &'static str,
        /// The value.
        value: Vec3,
    },
    /// Agent parameters out of range.
    #[error("agent parameter {field} = {value} is invalid")]
    BadParameter {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f32,
    },
    /// A step length that is not positive and finite.
    #[error("step length {0} s must be positive and finite")]
    BadStep(f32),
    /// A crowd configuration field out of range.
    #[error("crowd configuration {field} = {value} is invalid")]
    BadConfig {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f32,
    },
    /// An agent radius wider than the mesh was baked for (its walls keep clear only that
    /// much).
    #[error("agent radius {radius_m} m exceeds the {baked_radius_m} m the mesh was baked for")]
    RadiusOverBaked {
        /// The agent's radius, metres.
        radius_m: f32,
        /// The mesh's baked agent radius, metres.
        baked_radius_m: f32,
    },
    /// An agent height taller than the mesh was baked for (it would not fit under the
    /// ceilings the bake let through).
    #[error("agent height {height_m} m exceeds the {baked_height_m} m the mesh was baked for")]
    HeightOverBaked {
        /// The agent's height, metres.
        height_m: f32,
        /// The mesh's baked agent height, metres.
        baked_height_m: f32,
    },
    /// A filter id not registered with this crowd.
    #[error("query filter {0:?} is not registered with this crowd")]
    UnknownFilter(FilterId),
    /// An avoidance profile id not registered with this crowd.
    #[error("avoidance profile {0:?} is not registered with this crowd")]
    UnknownProfile(ProfileId),
    /// A table of filters or profiles is full.
    #[error("the crowd's {table} table is full ({entries} entries)")]
    TableFull {
        /// Which table.
        table: &'static str,
        /// Its size.
        entries: usize,
    },
    /// More agents than a crowd can hold ([`AGENTS_MAX`]).
    #[error("{requested} agents exceed a crowd's limit of {AGENTS_MAX}")]
    TooManyAgents {
        /// Agents the crowd would hold.
        requested: usize,
    },
    /// A percentile asked of [`PathWaits`] with a fraction outside 0 to 1 (or NaN).
    #[error("percentile fraction {0} is not within 0 to 1")]
    BadPercentile(f64),
    /// [`PathWaits::since`] given waits that are not an earlier state of these: they count
    /// the wait of this many frames more often.
    #[error("the earlier waits count more waits of {frames} frames than these")]
    NotEarlierWaits {
        /// The first wait, in frames, counted more often.
        frames: u64,
    },
    /// The system refused the memory for this many agents' state.
    #[error("no memory for the state of {agents} agents")]
    OutOfMemory {
        /// Agents the crowd would hold.
        agents: usize,
    },
    /// The host's controller answered a step with another number of feedback records than
    /// it was given requests. The step stops there: no agent moves, none is lost, and the
    /// step's events so far are not reported.
    #[error("the controller returned {feedback} feedback records for {requests} step requests")]
    ControllerFeedback {
        /// Requests given.
        requests: usize,
        /// Feedback records returned.
        feedback: usize,
    },
}

/// Most agents one crowd holds: the neighbour grid names agents by 32-bit indices.
pub const AGENTS_MAX: usize = u32::MAX as usize;

/// An agent's slot in the lanes (a hecs component).
#[derive(Clone, Copy, Debug)]
struct Slot(usize);

/// An agent's move request (a hecs component).
#[derive(Clone, Copy, Debug)]
struct MoveRequest {
    target: Vec3,
    request: RequestId,
    /// Whether the result must be adopted (false once adopted or finished).
    awaiting: bool,
    /// Attempts since a corridor was last adopted: an agent pushed off its corridor many
    /// times over a long walk is not failing, one whose paths keep being rejected is.
    attempts_since_adopted: u32,
    /// Whether a searched corridor has been adopted for this request (a head start does
    /// not count): false while the order still waits for its first path.
    adopted_once: bool,
}

/// An agent moving at a velocity its host asked for (a hecs component), horizontal, m/s.
#[derive(Clone, Copy, Debug)]
struct VelocityRequest(glam::Vec2);

/// An agent crossing an off-mesh link (a hecs component: few agents cross at once, so the
/// crossing's state stays out of the lanes).
#[derive(Clone, Copy, Debug)]
struct LinkCrossing {
    link: crate::mesh::LinkId,
    /// Foot position where the crossing started.
    from: Vec3,
    /// The link's exit.
    to: Vec3,
    elapsed_s: f32,
    duration_s: f32,
    /// The corridor polygon the link lands in, and its index.
    landing: crate::mesh::PolyRef,
    landing_index: u32,
}

/// Where an agent is on the off-mesh link it is crossing ([`Crowd::crossing`]), for the
/// host's animation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrossingState {
    /// The link.
    pub link: crate::mesh::LinkId,
    /// Foot position where the crossing started.
    pub from: Vec3,
    /// Where it lands.
    pub to: Vec3,
    /// How far along, 0 at the start to 1 at landing.
    pub progress: f32,
    /// Seconds the whole crossing takes.
    pub duration_s: f32,
}

/// The crowd.
pub struct Crowd {
    world: hecs::World,
    lanes: AgentLanes,
    snapshot: Snapshot,
    /// The query filters agents may be given, [`FilterId::DEFAULT`] first.
    filters: Vec<QueryFilter>,
    /// The avoidance profiles agents may be given, [`ProfileId::DEFAULT`] first.
    profiles: Vec<AvoidanceProfile>,
    scheduler: Scheduler,
    cache: CorridorCache,
    config: CrowdConfig,
    frame: u64,
    epoch: u32,
    next_logical: u64,
    /// Agents whose request must be (re)issued at the next ingest, in request order.
    pending: Vec<AgentId>,
    last_stats: StepStats,
    /// The neighbours of every agent, rebuilt each step (avoidance on).
    neighbour_grid: NeighbourGrid,
    /// Per-step buffers, kept between steps.
    scratch: StepScratch,
    /// Per slot, the portals of the agent's last funnel window (cold: see
    /// [`passes::PortalWindow`]); kept in step with the lanes.
    portal_windows: Vec<passes::PortalWindow>,
}

impl Crowd {
    /// A crowd on the mesh's current snapshot; a configuration field out of range is refused
    /// by name.
    pub fn new(mesh: &NavMesh, config: CrowdConfig) -> Result<Crowd, CrowdError> {
        if let Some((field, value)) = config.invalid_field() {
            return Err(CrowdError::BadConfig { field, value });
        }
        let mut filter = QueryFilter::new();
        filter.set_links_allowed(config.use_links);
        let snapshot = mesh.snapshot();
        Ok(Crowd {
            world: hecs::World::new(),
            lanes: AgentLanes::default(),
            scheduler: Scheduler::new(config.heuristic_weight, config.snap_half_extents, &snapshot),
            snapshot,
            filters: vec![filter],
            profiles: vec![AvoidanceProfile::of(&config.avoidance)],
            cache: CorridorCache::with_capacity(config.corridor_cache_capacity),
            config,
            frame: 0,
            epoch: 0,
            next_logical: 0,
            pending: Vec::new(),
            last_stats: StepStats::default(),
            neighbour_grid: NeighbourGrid::default(),
            scratch: StepScratch::default(),
            portal_windows: Vec::new(),
        })
    }

    /// Makes room for `additional` more agents in everything that grows with the crowd
    /// (lanes, per-step buffers, path queue, corridor cache), all at once. Optional: a host
    /// that knows its crowd's size calls it before adding the agents, so the arrays are
    /// made once at their size instead of doubling agent by agent (each doubling leaves
    /// the smaller block behind in the allocator, raising peak memory). The per-step
    /// buffers' memory is written
    /// here for all of them, as `add_agent` does for one (so the first step does not fault
    /// it in), so reserve what will be added.
    ///
    /// A crowd past [`AGENTS_MAX`] is refused, and so is memory the system refuses up
    /// front; either way the crowd is left as it was, and usable. (A system that
    /// overcommits may grant more than it has and stop the process when the memory is
    /// written: reserve what the crowd will hold, as with any allocation.)
    pub fn reserve(&mut self, additional: usize) -> Result<(), CrowdError> {
        let agents = self
            .lanes
            .len()
            .checked_add(additional)
            .filter(|&agents| agents <= AGENTS_MAX)
            .ok_or(CrowdError::TooManyAgents {
                requested: self.lanes.len().saturating_add(additional),
            })?;
        let out_of_memory = |_| CrowdError::OutOfMemory { agents };
        self.lanes.try_reserve(additional).map_err(out_of_memory)?;
        self.portal_windows
            .try_reserve(additional)
            .map_err(out_of_memory)?;
        self.cache
            .try_reserve_for_agents(agents)
            .map_err(out_of_memory)?;
        self.scheduler
            .try_reserve_for_agents(agents)
            .map_err(out_of_memory)?;
        self.map_step_buffers(agents).map_err(out_of_memory)
    }

    /// Grows the per-step buffers (and the neighbour grid's) to room for `agents`, with
    /// their memory written once (see [`StepScratch::map_pages`]).
    fn map_step_buffers(&mut self, agents: usize) -> Result<(), TryReserveError> {
        let (from, to) = (self.scratch.mapped, agents);
        if to <= from {
            return Ok(());
        }
        let avoidance = self.config.avoidance.enabled;
        self.scratch.map_pages(to, avoidance)?;
        if avoidance {
            self.neighbour_grid
                .map_pages(from, to, self.config.avoidance.neighbours_max)?;
        }
        Ok(())
    }

    /// The configuration.
    pub fn config(&self) -> &CrowdConfig {
        &self.config
    }

    /// The neighbour grid of the last step (empty when avoidance is off).
    #[doc(hidden)]
    pub fn neighbour_grid(&self) -> &NeighbourGrid {
        &self.neighbour_grid
    }

    /// Takes the mesh's current snapshot (after tiles changed): corridors that read a
    /// changed tile are dropped from the cache, and agents following one ask again.
    pub fn set_mesh(&mut self, mesh: &NavMesh) {
        self.snapshot = mesh.snapshot();
        self.cache.evict_stale(&self.snapshot, &self.filters);
        let mut replan = Vec::new();
        for slot in 0..self.lanes.len() {
            if self.lanes.status[slot] == AgentStatus::CrossingLink {
                continue; // checked when it lands
            }
            let filter = &self.filters[self.lanes.filter[slot].index()];
            // An agent on a replaced tile is found again on the new one.
            if self.snapshot.tile(self.lanes.polygon[slot]).is_none() {
                let position = self.lanes.position(slot);
                if let Ok(Some(nearest)) = nearest_polygon(
                    &self.snapshot,
                    position,
                    self.config.snap_half_extents,
                    filter,
                ) {
                    self.lanes.polygon[slot] = nearest.polygon;
                }
            }
            let stale = self.lanes.corridor[slot].as_ref().is_some_and(|corridor| {
                corridor.reads.still_valid_in(&self.snapshot, filter)
                    != crate::query::Validity::Valid
            });
            if stale {
                self.lanes.corridor[slot] = None;
                replan.push(self.lanes.id[slot]);
            }
        }
        for agent in replan {
            self.reissue(agent);
        }
    }

    /// The lanes (read only), for white-box tests and benchmarks.
    #[doc(hidden)]
    pub fn lanes(&self) -> &AgentLanes {
        &self.lanes
    }

    /// The snapshot the crowd runs on.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The corridor cache (for its counters).
    pub fn cache(&self) -> &CorridorCache {
        &self.cache
    }

    /// Memory held by the corridors that agents follow or the cache keeps, each shared
    /// corridor counted once.
    pub fn corridor_memory(&self) -> CorridorMemory {
        let mut seen = std::collections::HashSet::new();
        let mut memory = CorridorMemory::default();
        let held = self.lanes.corridor.iter().flatten();
        for corridor in held.chain(self.cache.corridors()) {
            if seen.insert(Arc::as_ptr(corridor)) {
                memory += corridor.memory();
            }
        }
        memory
    }

    /// The last step's counters.
    pub fn stats(&self) -> &StepStats {
        &self.last_stats
    }

    /// Frames stepped so far.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Frames each answered path request waited, over the whole run, as a histogram.
    pub fn path_waits(&self) -> &PathWaits {
        &self.scheduler.waits
    }

    /// Number of agents.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    /// Whether the crowd has no agents.
    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    fn slot(&self, agent: AgentId) -> Result<usize, CrowdError> {
        self.world
            .get::<&Slot>(agent.entity())
            .map(|slot| slot.0)
            .map_err(|_| CrowdError::UnknownAgent(agent))
    }

    /// The agent's slot in the lanes. Slots are not stable handles: removing an agent
    /// moves the last one into its slot, and with avoidance on a step puts every agent's
    /// slot in the neighbour grid's cell order every few dozen frames. Ask again after a step;
    /// keep the id.
    pub fn slot_of(&self, agent: AgentId) -> Option<usize> {
        self.slot(agent).ok()
    }

    /// The agent's status.
    pub fn status(&self, agent: AgentId) -> Result<AgentStatus, CrowdError> {
        Ok(self.lanes.status[self.slot(agent)?])
    }

    /// The agent's foot position.
    pub fn position(&self, agent: AgentId) -> Result<Vec3, CrowdError> {
        Ok(self.lanes.position(self.slot(agent)?))
    }

    /// The agent's horizontal velocity at the end of the last step (relative to the
    /// ground; `y` is 0), m/s.
    pub fn velocity(&self, agent: AgentId) -> Result<Vec3, CrowdError> {
        let slot = self.slot(agent)?;
        Ok(Vec3::new(
            self.lanes.velocity_x[slot],
            0.0,
            self.lanes.velocity_z[slot],
        ))
    }

    /// The polygon under the agent's foot.
    pub fn polygon(&self, agent: AgentId) -> Result<crate::mesh::PolyRef, CrowdError> {
        Ok(self.lanes.polygon[self.slot(agent)?])
    }

    /// The corridor the agent follows (a head start's included), if any: its polygons and
    /// links, for drawing the agent's path.
    pub fn corridor(&self, agent: AgentId) -> Result<Option<&Corridor>, CrowdError> {
        Ok(self.lanes.corridor[self.slot(agent)?].as_deref())
    }

    /// Every agent's id, foot position, velocity and status, for rendering: one pass over
    /// the lanes, in no particular order (the crowd reorders its agents for locality).
    pub fn agents(&self) -> impl ExactSizeIterator<Item = AgentView> + '_ {
        let lanes = &self.lanes;
        (0..lanes.len()).map(move |slot| AgentView {
            id: lanes.id[slot],
            position: lanes.position(slot),
            velocity: Vec3::new(lanes.velocity_x[slot], 0.0, lanes.velocity_z[slot]),
            status: lanes.status[slot],
        })
    }

    /// The link the agent is crossing and how far along it is, if it is crossing one.
    pub fn crossing(&self, agent: AgentId) -> Result<Option<CrossingState>, CrowdError> {
        self.slot(agent)?;
        Ok(self
            .world
            .get::<&LinkCrossing>(agent.entity())
            .ok()
            .map(|crossing| CrossingState {
                link: crossing.link,
                from: crossing.from,
                to: crossing.to,
                progress: (crossing.elapsed_s / crossing.duration_s).min(1.0),
                duration_s: crossing.duration_s,
            }))
    }

    /// The agent's current request, if any.
    pub fn request(&self, agent: AgentId) -> Result<Option<RequestId>, CrowdError> {
        self.slot(agent)?;
        Ok(self
            .world
            .get::<&MoveRequest>(agent.entity())
            .ok()
            .map(|m| m.request))
    }

    /// Whether the agent has a move request still waiting for its first searched path
    /// (walking a head start meanwhile, or standing): unlike [`StepStats::waiting_for_path`],
    /// an agent re-planning after a push off its corridor does not count.
    pub fn awaiting_first_path(&self, agent: AgentId) -> Result<bool, CrowdError> {
        self.slot(agent)?;
        Ok(self
            .world
            .get::<&MoveRequest>(agent.entity())
            .is_ok_and(|m| m.awaiting && !m.adopted_once))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::blob::BakeParams;
    use crate::mesh::{TileData, WalkablePolygon};

    fn square_mesh(side_m: f32) -> NavMesh {
        let square = WalkablePolygon::ground(vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(side_m, 0.0, 0.0),
            Vec3::new(side_m, 0.0, side_m),
            Vec3::new(0.0, 0.0, side_m),
        ]);
        let mut mesh = NavMesh::new(BakeParams::default());
        mesh.add_tiles(vec![TileData::from_walkable_polygons(&[square]).unwrap()])
            .unwrap();
        mesh
    }

    /// Adds `agents` walkers in rows across a 100 m square, each sent to the mirror point.
    fn add_walkers(crowd: &mut Crowd, agents: usize) {
        for index in 0..agents {
            let (row, column) = ((index / 26) as f32, (index % 26) as f32);
            let start = Vec3::new(2.0 + column * 3.7, 0.0, 2.0 + row * 3.5);
            let agent = crowd
                .add_agent(start, AgentParams::DETOUR_REFERENCE)
                .unwrap();
            crowd
                .request_move(agent, Vec3::new(98.0 - start.x, 0.0, 98.0 - start.z))
                .unwrap();
        }
    }

    /// The buffers' addresses and capacities: unchanged means not regrown.
    fn step_buffers(crowd: &Crowd) -> Vec<(usize, usize)> {
        fn of<T>(buffer: &Vec<T>) -> (usize, usize) {
            (buffer.as_ptr() as usize, buffer.capacity())
        }
        let mut buffers = vec![
            of(&crowd.scratch.requests),
            of(&crowd.scratch.feedback),
            of(&crowd.scratch.follow_outputs),
            of(&crowd.scratch.avoid_velocities),
            of(&crowd.scratch.avoid_bodies),
        ];
        buffers.extend(crowd.scratch.grid_positions.iter().map(of));
        buffers
    }

    #[test]
    fn the_first_step_finds_its_buffers_made_by_add_agent() {
        let mesh = square_mesh(100.0);
        let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
        let agents = 700;
        add_walkers(&mut crowd, agents);
        let before = step_buffers(&crowd);
        for (_, capacity) in &before {
            assert!(*capacity >= agents, "room for {capacity} agents");
        }
        crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
        assert_eq!(
            step_buffers(&crowd),
            before,
            "a buffer regrew in the first step"
        );
        assert_eq!(crowd.scratch.feedback.len(), agents);
    }

    #[test]
    fn a_reserved_crowd_takes_its_agents_and_first_step_without_regrowing() {
        let mesh = square_mesh(100.0);
        let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
        let agents = 500;
        crowd.reserve(agents).unwrap();
        let lane = |crowd: &Crowd| {
            (
                crowd.lanes.position_x.as_ptr() as usize,
                crowd.lanes.id.as_ptr() as usize,
                crowd.portal_windows.as_ptr() as usize,
            )
        };
        let (buffers, lanes) = (step_buffers(&crowd), lane(&crowd));
        add_walkers(&mut crowd, agents);
        assert_eq!(
            (step_buffers(&crowd), lane(&crowd)),
            (buffers.clone(), lanes)
        );
        crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
        assert_eq!((step_buffers(&crowd), lane(&crowd)), (buffers, lanes));
    }

    #[test]
    fn an_impossible_reserve_is_refused_by_name_and_leaves_the_crowd_usable() {
        let mesh = square_mesh(100.0);
        let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
        add_walkers(&mut crowd, 10);
        let error = crowd.reserve(usize::MAX).unwrap_err();
        assert!(
            matches!(error, CrowdError::TooManyAgents { requested } if requested == usize::MAX),
            "{error}"
        );
        let error = crowd.reserve(AGENTS_MAX).unwrap_err();
        assert!(
            matches!(error, CrowdError::TooManyAgents { requested } if requested == AGENTS_MAX + 10),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "{} agents exceed a crowd's limit of {AGENTS_MAX}",
                AGENTS_MAX + 10
            )
        );
        // (A reserve within the limit but past the machine's memory is refused as
        // `OutOfMemory` only where the system refuses the allocation; with overcommit it
        // may grant it and fail on first touch, so no test asks for one.)
        assert_eq!(crowd.len(), 10);
        add_walkers(&mut crowd, 5);
        crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
        assert_eq!(crowd.len(), 15);
    }
}
