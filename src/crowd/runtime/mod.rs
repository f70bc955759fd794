//! The [`Crowd`]: its state, how it is made and sized, the mesh it runs on, and what a game
//! reads of its agents.
//!
//! Stage: crowd runtime. The state: a `hecs::World` of identity and protocol components,
//! the hot lanes, the scheduler, the corridor cache, the neighbour grid, the per-step
//! scratch, and the tables of query filters and avoidance profiles. The step lives in
//! `step.rs`, the orders in `commands.rs`. Invariant: every lane, the portal windows and
//! the world's slot components agree on every agent's slot.

use std::collections::TryReserveError;

use glam::Vec3;

use super::components::{LinkCrossing, MoveRequest, Slot};
use super::config::CrowdConfig;
use super::events::{CrowdError, CrowdEvent};
use super::lanes::AgentLanes;
use super::log::{LogRecord, OrderedLog, mesh_fingerprint};
use super::scratch::StepScratch;
use super::stats::StepStats;
use crate::crowd::agents::AgentStatus;
use crate::crowd::agents::RequestId;
use crate::crowd::agents::{AGENTS_MAX, AgentId, AgentIds, AgentView};
use crate::crowd::avoidance::neighbours::NeighbourGrid;
use crate::crowd::avoidance::velocities::{AvoidanceConfig, AvoidanceProfile};
use crate::crowd::paths::corridor::{Corridor, CorridorCache, SlotBits};
use crate::crowd::paths::scheduler::Scheduler;
use crate::crowd::walking::passes::PortalWindow;
use crate::mesh::{NavMesh, Snapshot};
use crate::query::{Nearest, QueryFilter, Validity, nearest_polygon};
use rayon::prelude::*;
use step::crossing::CrossingState;

/// How far a foot may lie beside its polygon before `set_mesh` puts it on the floor,
/// metres (rounding, not displacement).
const OFF_FLOOR_M: f32 = 1e-3;

/// Agents per parallel task of `set_mesh`'s checks: a corridor's read set is tens of
/// tiles, more work an agent than a light pass's copy.
const AGENTS_PER_CHECK_TASK: usize = 256;

#[cfg(feature = "harness")]
pub(crate) mod flow;
pub(crate) mod log;
pub(crate) mod orders;
pub(crate) mod replay;
pub(crate) mod save;
pub(crate) mod step;

/// The crowd.
pub struct Crowd {
    pub(crate) world: hecs::World,
    /// The agent ids issued, and each live one's record in `world`.
    pub(crate) ids: AgentIds,
    pub(crate) lanes: AgentLanes,
    pub(crate) snapshot: Snapshot,
    /// The snapshot `set_mesh` last checked every corridor on, if it is still `snapshot`:
    /// corridors adopted since were checked on it too, so the next `set_mesh` need only
    /// look at corridors that read a slot changed since.
    pub(crate) checked_snapshot: Option<Snapshot>,
    /// The query filters agents may be given, [`FilterId::DEFAULT`] first.
    pub(crate) filters: Vec<QueryFilter>,
    /// The avoidance profiles agents may be given, [`ProfileId::DEFAULT`] first.
    pub(crate) profiles: Vec<AvoidanceProfile>,
    pub(crate) scheduler: Scheduler,
    pub(crate) cache: CorridorCache,
    pub(crate) config: CrowdConfig,
    pub(crate) frame: u64,
    pub(crate) epoch: u32,
    pub(crate) next_logical: u64,
    /// Agents whose request must be (re)issued at the next ingest, in request order.
    pub(crate) pending: Vec<AgentId>,
    /// Move orders with a deadline: (deadline frame, agent, order), in the order given; an
    /// entry whose order has ended is dropped when its deadline comes.
    pub(crate) deadlines: Vec<(u64, AgentId, RequestId)>,
    pub(crate) last_stats: StepStats,
    /// The neighbours of every agent, rebuilt each step (avoidance on).
    pub(crate) neighbour_grid: NeighbourGrid,
    /// Per-step buffers, kept between steps.
    pub(crate) scratch: StepScratch,
    /// Events raised between steps (a route invalidated by `set_mesh`), reported first in
    /// the next step's.
    pub(crate) deferred_events: Vec<CrowdEvent>,
    /// Per slot, the portals of the agent's last funnel window (cold: see
    /// `PortalWindow`); kept in step with the lanes.
    pub(crate) portal_windows: Vec<PortalWindow>,
    /// The ordered log's outbox and frontier, and the replay's feed in replay mode.
    pub(crate) log: OrderedLog,
    /// Surface velocities of moving supports by support layer (`SupportId(n)` is layer
    /// `n + 1`; layer 0, the static ground, never moves), m/s: a belt's `u`. Empty when
    /// nothing moves.
    pub(crate) support_motions: Vec<crate::crowd::supports::support::SupportMotion>,
    /// The links that may be crossed only in a window of frames, by link id, ascending.
    pub(crate) link_windows: Vec<(
        crate::mesh::LinkId,
        crate::crowd::supports::connection::ConnectionWindow,
    )>,
    /// Supports whose footprint moves, by layer, ascending (`platform.rs`).
    pub(crate) platforms: Vec<crate::crowd::supports::platform::Platform>,
    /// The links joining a platform only while it is at a dock, by link id, ascending.
    pub(crate) link_docks: Vec<(
        crate::mesh::LinkId,
        crate::crowd::supports::platform::LinkDock,
    )>,
    /// The last step's length, seconds (1/30 before the first): what a platform's velocity
    /// between steps is measured over.
    pub(crate) last_dt_s: f32,
}

impl Crowd {
    /// Most agents one crowd holds: the neighbour grid names agents by 32-bit indices.
    pub const AGENTS_MAX: usize = AGENTS_MAX;

    /// The save format this build writes and reads ([`Crowd::save`]); a save of another
    /// is refused with [`RestoreError::Version`](crate::crowd::RestoreError::Version).
    pub const SAVE_FORMAT_VERSION: u32 = save::SAVE_FORMAT_VERSION;

    /// The step lengths [`Crowd::step`] takes, seconds: from a tenth of a millisecond (a
    /// physics tick) to a second (a crowd stepped rarely, far from the player). Outside it
    /// the passes' rates lose their meaning: at 1e-30 s no agent moves a representable
    /// distance, and at 1e9 s every walker crosses the world in one step and the
    /// acceleration limit allows any velocity.
    pub const STEP_RANGE_S: std::ops::RangeInclusive<f32> = step::STEP_RANGE_S;

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
            ids: AgentIds::default(),
            lanes: AgentLanes::default(),
            scheduler: Scheduler::new(config.heuristic_weight, config.snap_half_extents, &snapshot),
            snapshot,
            checked_snapshot: None,
            filters: vec![filter],
            profiles: vec![AvoidanceProfile::of(&config.avoidance)],
            cache: CorridorCache::with_capacity(config.corridor_cache_capacity),
            config,
            frame: 0,
            epoch: 0,
            next_logical: 0,
            pending: Vec::new(),
            deadlines: Vec::new(),
            last_stats: StepStats::default(),
            neighbour_grid: NeighbourGrid::default(),
            scratch: StepScratch::default(),
            deferred_events: Vec::new(),
            support_motions: Vec::new(),
            link_windows: Vec::new(),
            platforms: Vec::new(),
            link_docks: Vec::new(),
            last_dt_s: 1.0 / 30.0,
            portal_windows: Vec::new(),
            log: OrderedLog::default(),
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
    /// A crowd past [`Crowd::AGENTS_MAX`] is refused, and so is memory the system refuses up
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
        self.reserve_tables_for(agents)?;
        map_step_buffers(
            &mut self.scratch,
            &mut self.neighbour_grid,
            &self.config.avoidance,
            agents,
        )
        .map_err(out_of_memory)
    }

    /// The path queue and the corridor cache sized for the crowd's agents.
    pub(crate) fn reserve_tables(&mut self) -> Result<(), CrowdError> {
        self.reserve_tables_for(self.lanes.len())
    }

    fn reserve_tables_for(&mut self, agents: usize) -> Result<(), CrowdError> {
        let out_of_memory = |_| CrowdError::OutOfMemory { agents };
        self.cache
            .try_reserve_for_agents(agents)
            .map_err(out_of_memory)?;
        // With head starts, fresh requests leave their queue at the rate they come in;
        // without, they wait there for their searches, up to one an agent.
        let head_starts = self.config.head_starts_for(agents) as usize;
        let fresh_most = if head_starts == 0 {
            agents
        } else {
            2 * head_starts.max(step::INGEST_PER_FRAME_MIN)
        };
        self.scheduler
            .try_reserve_for_agents(agents, fresh_most.min(agents))
            .map_err(out_of_memory)
    }

    /// The configuration.
    pub fn config(&self) -> &CrowdConfig {
        &self.config
    }

    /// The neighbour grid of the last step (empty when avoidance is off).
    #[cfg(feature = "harness")]
    #[doc(hidden)]
    pub fn neighbour_grid(&self) -> &NeighbourGrid {
        &self.neighbour_grid
    }

    /// Takes the mesh's current snapshot (after tiles changed): corridors that read a
    /// changed tile are dropped from the cache, and agents following one ask again. An
    /// agent whose tile was rebuilt is found again on the new tile, and put on its nearest
    /// floor if it now stands where the tile has none (an obstacle dropped on it). Handing
    /// it the snapshot it already has costs nothing: call it every frame.
    pub fn set_mesh(&mut self, mesh: &NavMesh) {
        let snapshot = mesh.snapshot();
        // Nothing published since the crowd's snapshot: every corridor and search still
        // holds, and checking them all would cost a pass over the agents.
        if snapshot.is_same(&self.snapshot) {
            return;
        }
        let changed = self
            .checked_snapshot
            .as_ref()
            .filter(|checked| checked.is_same(&self.snapshot))
            .and_then(|checked| SlotBits::changed_between(checked, &snapshot));
        self.snapshot = snapshot;
        let fingerprint = mesh_fingerprint(&self.snapshot);
        self.log(|| LogRecord::SetMesh { fingerprint });
        // Searches under way that read what changed expire now, their queries asked again
        // as new ones (in replay mode, as the log says: no search runs there).
        let expired: Vec<(AgentId, RequestId, Validity)> = match self.log.replay {
            Some(_) => self.logged_expiries(),
            None => self
                .scheduler
                .close_open_searches(&self.snapshot, &self.filters)
                .into_iter()
                .map(|(job, changed)| (job.agent, job.request, changed))
                .collect(),
        };
        for (agent, query, changed) in expired {
            self.log(|| LogRecord::Expired {
                agent,
                query,
                changed,
            });
            let current = self
                .world
                .get::<&MoveRequest>(self.ids.entity(agent))
                .is_ok_and(|request| request.awaiting && request.query == query);
            if current {
                self.reissue(agent);
            }
        }
        self.cache
            .evict_stale(&self.snapshot, &self.filters, changed.as_ref());
        // Per agent, read only and in parallel: the nearest floor of one whose tile is no
        // longer live, and what changed under its corridor. Applied after in slot order,
        // as a serial pass would.
        let (snapshot, lanes, filters) = (&self.snapshot, &self.lanes, &self.filters);
        let snap_half_extents = self.config.snap_half_extents;
        let verdicts: Vec<(Option<Nearest>, Option<Validity>)> = (0..lanes.len())
            .into_par_iter()
            .with_min_len(AGENTS_PER_CHECK_TASK)
            .map(|slot| {
                if lanes.status[slot] == AgentStatus::CrossingLink {
                    return (None, None); // checked when it lands
                }
                let filter = &filters[lanes.filter[slot].index()];
                // An agent on a replaced tile is found again on the new tile; one the new
                // tile has no floor under (an obstacle placed on it) is put on the nearest
                // floor, as an outside push would.
                let nearest = if snapshot.tile(lanes.polygon[slot]).is_none() {
                    nearest_polygon(snapshot, lanes.position(slot), snap_half_extents, filter)
                        .ok()
                        .flatten()
                } else {
                    None
                };
                let changed = lanes.corridor[slot].as_ref().and_then(|corridor| {
                    let validity =
                        corridor
                            .reads
                            .still_valid_after(snapshot, filter, changed.as_ref());
                    (validity != Validity::Valid).then_some(validity)
                });
                (nearest, changed)
            })
            .collect();
        let mut replan = Vec::new();
        for (slot, (nearest, changed)) in verdicts.into_iter().enumerate() {
            if let Some(nearest) = nearest {
                let position = self.lanes.position(slot);
                self.lanes.polygon[slot] = nearest.polygon;
                let off = Vec3::new(
                    nearest.point.x - position.x,
                    0.0,
                    nearest.point.z - position.z,
                );
                if off.length() > OFF_FLOOR_M {
                    self.lanes.position_x[slot] = nearest.point.x;
                    self.lanes.position_y[slot] = nearest.point.y;
                    self.lanes.position_z[slot] = nearest.point.z;
                }
            }
            if let Some(changed) = changed {
                self.lanes.corridor[slot] = None;
                replan.push((self.lanes.id[slot], changed));
            }
        }
        for (agent, changed) in replan {
            self.report_invalidated(agent, changed);
            self.reissue(agent);
        }
        self.checked_snapshot = Some(self.snapshot.clone());
    }

    /// Reports that the agent's adopted route stopped holding, with the dependency that
    /// changed: with this step's events when found during a step, with the next step's
    /// when found by `set_mesh` between steps.
    pub(crate) fn report_invalidated(&mut self, agent: AgentId, changed: Validity) {
        if let Ok(request) = self.world.get::<&MoveRequest>(self.ids.entity(agent)) {
            self.deferred_events.push(CrowdEvent::RouteInvalidated {
                agent,
                request: request.order,
                changed,
            });
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

    /// The corridor cache (for its counters), for the crate's tests and tools.
    #[cfg(feature = "harness")]
    #[doc(hidden)]
    pub fn cache(&self) -> &CorridorCache {
        &self.cache
    }

    /// Memory held by the corridors that agents follow or the cache keeps, each shared
    /// corridor counted once.
    #[cfg(feature = "harness")]
    #[doc(hidden)]
    pub fn corridor_memory(&self) -> crate::crowd::paths::corridor::CorridorMemory {
        let mut seen = std::collections::HashSet::new();
        let mut memory = crate::crowd::paths::corridor::CorridorMemory::default();
        let held = self.lanes.corridor.iter().flatten();
        for corridor in held.chain(self.cache.corridors()) {
            if seen.insert(std::sync::Arc::as_ptr(corridor)) {
                memory += corridor.memory();
            }
        }
        memory
    }

    /// The last step's counters.
    pub fn stats(&self) -> &StepStats {
        &self.last_stats
    }

    /// The crowd's epoch: 0 when made, one more at each [`Crowd::bump_epoch`] and restore.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Frames stepped so far.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    #[cfg(feature = "harness")]
    /// Frames each answered path request waited, over the whole run, as a histogram.
    pub(crate) fn path_waits(&self) -> &crate::crowd::paths::scheduler::PathWaits {
        &self.scheduler.waits
    }

    /// How many frames the answered path requests waited, from queueing to the answer, at
    /// `fraction` (0 to 1) of the way through the waits sorted ascending (0.95: the 95th
    /// percentile); `None` before any request was answered. A fraction outside 0 to 1 (or
    /// NaN) is refused by value.
    pub fn path_wait_frames(&self, fraction: f64) -> Result<Option<u64>, CrowdError> {
        self.scheduler.waits.percentile(fraction)
    }

    /// Number of agents.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    /// Whether the crowd has no agents.
    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    pub(crate) fn slot(&self, agent: AgentId) -> Result<usize, CrowdError> {
        self.world
            .get::<&Slot>(self.ids.entity(agent))
            .map(|slot| slot.0)
            .map_err(|_| CrowdError::UnknownAgent(agent))
    }

    /// What holds the agent, if it is blocked (spec 001: Blocked is a status with its
    /// reason; it walks on as soon as it makes progress again).
    pub fn blocked(&self, agent: AgentId) -> Result<Option<super::events::BlockedBy>, CrowdError> {
        Ok(self.lanes.blocked[self.slot(agent)?])
    }

    /// The agent's slot in the lanes. Slots are not stable handles: removing an agent
    /// moves the last one into its slot, and with avoidance on a step puts every agent's
    /// slot in the neighbour grid's cell order every few dozen frames. Ask again after a step;
    /// keep the id.
    #[cfg(feature = "harness")]
    #[doc(hidden)]
    pub fn slot_of(&self, agent: AgentId) -> Option<usize> {
        self.slot(agent).ok()
    }

    /// The agent's status.
    pub fn status(&self, agent: AgentId) -> Result<AgentStatus, CrowdError> {
        Ok(self.lanes.status[self.slot(agent)?])
    }

    /// The agent's foot position in the mesh's coordinates, where its polygon and corridor
    /// are, as every position the crowd is given (starts, targets): on a platform
    /// ([`Crowd::set_platform_motion`]), in the platform's own frame.
    pub fn position(&self, agent: AgentId) -> Result<Vec3, CrowdError> {
        Ok(self.lanes.position(self.slot(agent)?))
    }

    /// The agent's foot position in the world: [`Crowd::position`] plus, on a platform,
    /// the platform's offset now (where it has carried the agent). The same elsewhere.
    pub fn world_position(&self, agent: AgentId) -> Result<Vec3, CrowdError> {
        let slot = self.slot(agent)?;
        Ok(self
            .frame_pose(self.lanes.support[slot])
            .place(self.lanes.position(slot)))
    }

    /// Every platform's offset now and velocity over a step as long as the last, by
    /// support layer (empty: no platform), as the step reads them: what places a foot in
    /// the world ([`Crowd::world_position`] adds its layer's offset).
    #[doc(hidden)]
    pub fn platform_frames(&self) -> crate::crowd::supports::platform::PlatformFrames {
        crate::crowd::supports::platform::platform_frames(
            &self.platforms,
            self.frame,
            self.last_dt_s,
        )
    }

    /// The pose that places support layer `layer`'s frame in the world now: a platform's,
    /// the identity for the ground and supports in place.
    pub(crate) fn frame_pose(&self, layer: u32) -> crate::crowd::supports::platform::PlatformPose {
        self.platform_on_layer(layer).map_or(
            crate::crowd::supports::platform::PlatformPose::IDENTITY,
            |platform| platform.motion.pose_at(self.frame),
        )
    }

    /// The platform of support layer `layer`, if it is one.
    pub(crate) fn platform_on_layer(
        &self,
        layer: u32,
    ) -> Option<&crate::crowd::supports::platform::Platform> {
        let layer = u16::try_from(layer).ok()?;
        self.platforms
            .binary_search_by_key(&layer, |platform| platform.layer)
            .ok()
            .map(|at| &self.platforms[at])
    }

    /// The agent's horizontal velocity at the end of the last step, relative to its
    /// support (the ground, or a belt it stands on; `y` is 0), m/s.
    pub fn velocity(&self, agent: AgentId) -> Result<Vec3, CrowdError> {
        let slot = self.slot(agent)?;
        Ok(Vec3::new(
            self.lanes.velocity_x[slot],
            0.0,
            self.lanes.velocity_z[slot],
        ))
    }

    /// The agent's horizontal velocity in the world at the end of the last step: relative
    /// to its support plus the support's surface velocity under its foot
    /// ([`Crowd::set_support_velocity`], [`Crowd::set_support_rotation`]) or its
    /// platform's horizontal velocity ([`Crowd::set_platform_motion`]), m/s.
    pub fn world_velocity(&self, agent: AgentId) -> Result<Vec3, CrowdError> {
        let slot = self.slot(agent)?;
        let layer = self.lanes.support[slot];
        let position = self.lanes.position(slot);
        let pose = self.frame_pose(layer);
        // On a platform the relative velocity is in its frame: turned into the world's,
        // plus the platform's velocity where the agent stands (over a step as long as the
        // last).
        let carried = self
            .support_motions
            .get(layer as usize)
            .map_or(Vec3::ZERO, |motion| motion.velocity_at(position))
            + self
                .platform_frames()
                .velocity_at(layer, pose.place(position));
        Ok(pose.place_vector(self.velocity(agent)?) + Vec3::new(carried.x, 0.0, carried.z))
    }

    /// The body-acceleration terms the agent's support adds now (spec 004: the world
    /// acceleration is their sum plus the body's own active acceleration), for a host's
    /// contact solve: a turntable's centripetal and Coriolis terms at the agent's foot and
    /// relative velocity ([`SupportMotion::body_acceleration_terms`](super::SupportMotion::body_acceleration_terms)),
    /// a shuttling platform's translation over a step as long as the last
    /// ([`Shuttle::acceleration_at`](super::Shuttle::acceleration_at)).
    pub fn body_acceleration_terms(
        &self,
        agent: AgentId,
    ) -> Result<crate::crowd::supports::support::SupportAcceleration, CrowdError> {
        let slot = self.slot(agent)?;
        let layer = self.lanes.support[slot];
        let relative = self.velocity(agent)?;
        let mut terms = self.support_motions.get(layer as usize).map_or(
            crate::crowd::supports::support::SupportAcceleration::default(),
            |motion| motion.body_acceleration_terms(self.lanes.position(slot), relative),
        );
        if let Some(platform) = self.platform_on_layer(layer) {
            // A turning platform's terms at the body's place and relative velocity in the
            // world, beside its translation.
            let frames = self.platform_frames();
            let pose = frames.pose(layer);
            let turning = frames.motions[layer as usize].body_acceleration_terms(
                pose.place(self.lanes.position(slot)),
                pose.place_vector(relative),
            );
            terms.centripetal += turning.centripetal;
            terms.coriolis += turning.coriolis;
            terms.translation += platform.motion.acceleration_at(self.frame, self.last_dt_s);
        }
        Ok(terms)
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
            position: self
                .frame_pose(lanes.support[slot])
                .place(lanes.position(slot)),
            velocity: Vec3::new(lanes.velocity_x[slot], 0.0, lanes.velocity_z[slot]),
            status: lanes.status[slot],
        })
    }

    /// The link the agent is crossing and how far along it is, if it is crossing one.
    pub fn crossing(&self, agent: AgentId) -> Result<Option<CrossingState>, CrowdError> {
        self.slot(agent)?;
        Ok(self
            .world
            .get::<&LinkCrossing>(self.ids.entity(agent))
            .ok()
            .map(|crossing| CrossingState {
                link: crossing.link,
                from: crossing.from,
                to: self
                    .frame_pose(self.layer_of(crossing.landing))
                    .place(crossing.to),
                progress: (crossing.elapsed_s / crossing.duration_s).min(1.0),
                duration_s: crossing.duration_s,
            }))
    }

    /// The agent's move order, if it has one (a refusal for an unknown agent).
    fn move_request(&self, agent: AgentId) -> Result<Option<MoveRequest>, CrowdError> {
        self.slot(agent)?;
        Ok(self
            .world
            .get::<&MoveRequest>(self.ids.entity(agent))
            .ok()
            .map(|m| *m))
    }

    /// The identity of the agent's move order, as `request_move` returned it, if it has one.
    pub fn request(&self, agent: AgentId) -> Result<Option<RequestId>, CrowdError> {
        Ok(self.move_request(agent)?.map(|m| m.order))
    }

    /// The identity of the query serving the agent's move order now, if it has one: the
    /// order's own until a result is rejected and the route is computed again under a new
    /// identity (spec 001 h1).
    pub fn query(&self, agent: AgentId) -> Result<Option<RequestId>, CrowdError> {
        Ok(self.move_request(agent)?.map(|m| m.query))
    }

    /// Whether the agent has a move request still waiting for its first searched path
    /// (walking a head start meanwhile, or standing): unlike [`StepStats::waiting_for_path`],
    /// an agent re-planning after a push off its corridor does not count.
    pub fn awaiting_first_path(&self, agent: AgentId) -> Result<bool, CrowdError> {
        Ok(self
            .move_request(agent)?
            .is_some_and(|m| m.awaiting && !m.adopted_once))
    }
}

/// Grows the per-step buffers and the neighbour grid's to room for `agents`, with their
/// memory written once (see [`StepScratch::map_pages`]).
pub(crate) fn map_step_buffers(
    scratch: &mut StepScratch,
    grid: &mut NeighbourGrid,
    avoidance: &AvoidanceConfig,
    agents: usize,
) -> Result<(), TryReserveError> {
    let (from, to) = (scratch.mapped, agents);
    if to <= from {
        return Ok(());
    }
    scratch.map_pages(to, avoidance.enabled)?;
    if avoidance.enabled {
        grid.map_pages(from, to, avoidance.neighbours_max)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crowd::agents::AgentParams;
    use crate::crowd::supports::controller::KinematicController;
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
