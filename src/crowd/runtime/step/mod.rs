//! One crowd step: the pass order, written once.
//!
//! interactions -> ingest -> schedule -> adopt -> follow -> slope (with the neighbour grid
//! rebuilt alongside these four) -> avoid -> move -> separate -> feedback. (Interactions:
//! the few interaction orders' targets placed and poses checked in the host's world, given
//! to [`Crowd::step_with`]; `interaction.rs`.)
//! Each pass is timed and counted; the parallel ones (follow, slope, avoid, move, separate)
//! collect their results in slot order. Off-mesh links: the follow pass starts crossings
//! (agents at a link's entry), the move pass carries crossing agents along their links in
//! place of the controller. Every [`SLOT_ORDER_FRAMES`] frames the step ends by putting
//! the agents' slots in the neighbour grid's cell order (locality between the passes).
//!
//! This file holds the order and nothing else; each pass's glue lives beside it: the
//! orders' upkeep (deadlines, cancels, holds, velocity orders) and the step's close in
//! `upkeep.rs`, ingest and adoption in `adopt.rs`, the follow pass in `following.rs` (its
//! kernels and the slope pass in the walking room), link crossing in `crossing.rs`, the
//! avoid and separate passes in `avoiding.rs` (over the avoidance room), the move pass in
//! `moving.rs`, the supports' carry in `carry.rs`, the controller's answers screened in
//! `screening.rs`, the feedback pass in `feedback.rs`, interactions in `interaction.rs`;
//! what the step reports of itself is the crowd's `stats.rs`.

pub(crate) mod adopt;
pub(crate) mod avoiding;
pub(crate) mod carry;
pub(crate) mod crossing;
pub(crate) mod feedback;
pub(crate) mod following;
pub(crate) mod interaction;
pub(crate) mod moving;
pub(crate) mod screening;
pub(crate) mod upkeep;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::crowd::agents::AgentId;
use crate::crowd::agents::AgentStatus;
use crate::crowd::avoidance::congestion::crowding_factors;
use crate::crowd::components::{MoveRequest, Slot};
use crate::crowd::compute::parallel;
use crate::crowd::config::BlockedPolicy;
use crate::crowd::events::{CrowdError, CrowdEvent};
use crate::crowd::interactions::interaction::InteractionWorld;
use crate::crowd::paths::scheduler::Job;
use crate::crowd::runtime::Crowd;
use crate::crowd::stats::StepStats;
use crate::crowd::supports::controller::Controller;
use crate::crowd::supports::platform::platform_frames;
use crate::crowd::walking::passes::slope_pass;
use adopt::walks_while_replanned;

/// Requests turned into path jobs per step at least; more when the budget gives more
/// head starts a step (each fresh job can be answered by one at once).
pub(super) const INGEST_PER_FRAME_MIN: usize = 1024;

/// Every this many frames (with avoidance on), the agents' slots are put in the neighbour
/// grid's cell order. Passes over slots (move, separation's write-back, slope, feedback)
/// and passes over cells (the grid's queries, avoid, separation) then walk the agents in
/// nearly the same order, so each thread's part of one pass is mostly the data it held in
/// the last, instead of lines fetched from the other core. The reorder costs about a
/// millisecond for 10,000 agents (swaps in place, one lane a task), once in this many
/// frames; agents walk a few metres, about a cell, in between.
const SLOT_ORDER_FRAMES: u64 = 32;

/// How long a keep-awake job spins without finding work before it gives up.
const KEEP_AWAKE_IDLE: std::time::Duration = std::time::Duration::from_millis(2);

/// Keeps a pool thread busy until `done`: it runs whatever work the pool has (a pass's
/// chunks, the moment they are offered) and spins between, rather than sleeping through
/// the step's serial stretches. On the stepping thread itself (which can pick this job up
/// while it waits inside a pass) it returns at once: spinning there would stall the step
/// that sets `done`. It also gives up after [`KEEP_AWAKE_IDLE`] without finding work: when
/// several crowds step at once on one pool, a thread waiting inside one step can pick up
/// another step's job of this kind, and two such threads could each hold the step the
/// other's job waits for; with nothing left to run, one of them returns and both go on.
/// A step's serial stretches are far shorter, so the limit does not cost the waking it
/// saves. (That interleaving comes from reading how rayon's threads wait; the test that
/// steps four crowds on two threads has not hung without the limit either.)
fn keep_awake(done: &AtomicBool, stepping: Option<usize>) {
    if rayon::current_thread_index() == stepping {
        return;
    }
    let mut idle_rounds = 0u32;
    let mut idle_since = Instant::now();
    while !done.load(Ordering::Acquire) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle_rounds = 0;
            idle_since = Instant::now();
            continue;
        }
        idle_rounds += 1;
        // Now and then the core is offered to the system, so a pool with more threads
        // than cores does not starve the threads doing the work; and the idle time is
        // checked.
        if idle_rounds % 64 == 0 {
            if idle_since.elapsed() > KEEP_AWAKE_IDLE {
                return;
            }
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

fn timed<T>(time_ms: &mut f64, run: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let value = run();
    *time_ms = start.elapsed().as_secs_f64() * 1e3;
    value
}

/// The step lengths a crowd takes, seconds: from a tenth of a millisecond (a 10 kHz
/// physics tick) to a second (a crowd stepped rarely, far from the player). Outside it the
/// passes' rates lose their meaning: at 1e-30 s no agent moves a representable distance,
/// and at 1e9 s every walker crosses the world in one step and the acceleration limit
/// allows any velocity.
pub(crate) const STEP_RANGE_S: std::ops::RangeInclusive<f32> = 1e-4..=1.0;

impl Crowd {
    /// Advances the crowd by `dt` seconds (within [`Crowd::STEP_RANGE_S`], else
    /// [`CrowdError::BadStep`]); returns the step's events in order.
    ///
    /// The step runs on rayon's thread pool (the current one when called from inside a
    /// pool, the global one otherwise) as one piece: called from a thread outside the pool,
    /// every parallel pass would wait for sleeping workers to wake on its own, tens to
    /// hundreds of microseconds a pass.
    pub fn step(
        &mut self,
        dt: f32,
        controller: &mut (impl Controller + Send),
    ) -> Result<Vec<CrowdEvent>, CrowdError> {
        self.step_in(dt, controller, None)
    }

    /// [`Crowd::step`] with the host's world, which interaction orders
    /// ([`Crowd::request_interaction`]) read each step: the pose checks at the actual foot
    /// and where moving targets' objects are now. A crowd with an interaction under way
    /// must be stepped with it (stepped without, the interaction fails `NoWorld`).
    pub fn step_with(
        &mut self,
        dt: f32,
        controller: &mut (impl Controller + Send),
        world: &dyn InteractionWorld,
    ) -> Result<Vec<CrowdEvent>, CrowdError> {
        self.step_in(dt, controller, Some(world))
    }

    pub(crate) fn step_in(
        &mut self,
        dt: f32,
        controller: &mut (impl Controller + Send),
        world: Option<&dyn InteractionWorld>,
    ) -> Result<Vec<CrowdEvent>, CrowdError> {
        if !STEP_RANGE_S.contains(&dt) {
            return Err(CrowdError::BadStep(dt));
        }
        if self.lanes.len() < self.config.serial_below_agents {
            // A small crowd: the whole step on the calling thread, the pool left alone.
            return parallel::on_one_thread(true, || self.step_on_pool(dt, controller, world));
        }
        if !self.config.keep_workers_awake {
            return if rayon::current_thread_index().is_some() {
                self.step_on_pool(dt, controller, world)
            } else {
                rayon::scope(|_| self.step_on_pool(dt, controller, world))
            };
        }
        let done = AtomicBool::new(false);
        rayon::scope(|scope| {
            let stepping = rayon::current_thread_index();
            for _ in 1..rayon::current_num_threads() {
                let done = &done;
                scope.spawn(move |_| keep_awake(done, stepping));
            }
            let result = self.step_on_pool(dt, controller, world);
            done.store(true, Ordering::Release);
            result
        })
    }

    /// [`Crowd::step`] on a pool thread.
    fn step_on_pool(
        &mut self,
        dt: f32,
        controller: &mut (impl Controller + Send),
        world: Option<&dyn InteractionWorld>,
    ) -> Result<Vec<CrowdEvent>, CrowdError> {
        let mut stats = StepStats::default();
        let mut events = std::mem::take(&mut self.deferred_events);
        self.expire_deadlines();
        timed(&mut stats.interactions_ms, || {
            self.keep_interactions(world, dt, &mut events)
        });

        // Ingest is budgeted too: a burst of requests (10,000 agents told to move at once)
        // spreads over frames instead of stretching one. The rest waits, in order.
        let most = INGEST_PER_FRAME_MIN.max(self.config.head_starts_for(self.lanes.len()) as usize);
        let take = self.pending.len().min(most);
        let pending: Vec<AgentId> = self.pending.drain(..take).collect();
        timed(&mut stats.ingest_ms, || self.ingest(&pending, &mut events));

        let snapshot = self.snapshot.clone();
        // The neighbour grid is rebuilt alongside schedule, adopt, follow and slope: it
        // reads only the positions the last step left (nothing before the move changes
        // them; it works on a copy, so the other passes keep the lanes), and those passes
        // read nothing of it. Each side's serial stretches (the grid's counting sort, the
        // searches' rounds, adoption, the link starts) then leave the other thread the
        // other side's work instead of nothing.
        let avoidance = self.config.avoidance;
        let mut grid = std::mem::take(&mut self.neighbour_grid);
        // Platforms where they stand this frame and after it (`platform.rs`): the grid
        // sees every agent at its world place.
        let platforms_now = platform_frames(&self.platforms, self.frame, dt);
        let positions = self.neighbour_positions(&platforms_now);
        let mut neighbours_ms = 0.0;
        let ((), ()) = parallel::join(
            || self.schedule_adopt_follow_slope(dt, &snapshot, &mut stats, &mut events),
            || {
                if avoidance.enabled {
                    let [x, y, z] = &positions;
                    timed(&mut neighbours_ms, || {
                        grid.rebuild(
                            [x, y, z],
                            avoidance.neighbour_range_m,
                            avoidance.vertical_range_m,
                            avoidance.neighbours_max,
                        )
                    });
                }
            },
        );
        stats.neighbours_ms = neighbours_ms;
        self.neighbour_grid = grid;
        self.scratch.grid_positions = positions;

        if self.config.avoidance.enabled {
            stats.jammed_agents = timed(&mut stats.avoid_ms, || self.avoid(dt, &platforms_now));
        }
        // Per-frame buffers live in the crowd: megabytes allocated and freed every frame
        // would go to the system allocator's mmap path and fault their pages in again.
        let mut requests = std::mem::take(&mut self.scratch.requests);
        let mut feedback = std::mem::take(&mut self.scratch.feedback);
        timed(&mut stats.movement_ms, || {
            self.move_agents(dt, controller, &snapshot, &mut requests, &mut feedback)
        });
        if feedback.len() != requests.len() {
            let error = CrowdError::ControllerFeedback {
                requests: requests.len(),
                feedback: feedback.len(),
            };
            self.scratch.requests = requests;
            self.scratch.feedback = feedback;
            return Err(error);
        }
        self.screen_feedback(dt, &mut feedback, &mut events);
        self.inherit_world_velocities(&requests, &mut feedback);
        let platforms_end = platform_frames(&self.platforms, self.frame + 1, dt);
        self.advance_crossings(&mut feedback, dt, &platforms_end, &mut events);
        if self.config.avoidance.enabled && self.config.avoidance.separation {
            timed(&mut stats.separate_ms, || {
                self.separate(dt, &snapshot, &platforms_end, &mut feedback)
            });
        }
        self.carry_goals_on_supports(dt);
        timed(&mut stats.feedback_ms, || {
            self.feedback(&feedback, &mut events)
        });
        self.confirm_cancels(dt, &mut events);
        self.scratch.requests = requests;
        self.scratch.feedback = feedback;

        self.close_step(dt, stats, &mut events);
        Ok(events)
    }

    /// Puts the agents' slots in the neighbour grid's cell order (see
    /// [`SLOT_ORDER_FRAMES`]): every lane and the portal windows move with their agents,
    /// the grid's answers and hints follow, and each agent's slot component is rewritten.
    /// Slot numbers change, and with them the order of a frame's events (slot order);
    /// motion does not depend on them but through exact distance ties between neighbours
    /// (ranked by distance, then cell order), so the dungeon and city runs gave the same
    /// JSON. The new order depends only on positions: runs stay the same at any thread
    /// count (tested).
    fn order_slots_by_cell(&mut self) {
        let grid = &self.neighbour_grid;
        let order: Vec<u32> = (0..grid.len())
            .map(|index| grid.slot_at(index) as u32)
            .collect();
        let mut new_slot_of = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_slot_of[old as usize] = new as u32;
        }
        let swaps = crate::crowd::lanes::permutation_swaps(&order);
        let windows = &mut self.portal_windows;
        let parallel = !parallel::keeps_to_one_thread();
        parallel::join(
            || self.lanes.permute(&swaps, parallel),
            || crate::crowd::lanes::apply_swaps(windows, &swaps),
        );
        self.neighbour_grid.permute_slots(&order, &new_slot_of);
        // One pass over the world's slot components rather than a lookup per agent.
        for slot in self.world.query_mut::<&mut Slot>() {
            slot.0 = new_slot_of[slot.0] as usize;
        }
    }

    /// The passes before avoidance that do not need the neighbour grid: path searches
    /// under the budget, adoption at the commit point, corridor following and slope limits.
    fn schedule_adopt_follow_slope(
        &mut self,
        dt: f32,
        snapshot: &crate::mesh::Snapshot,
        stats: &mut StepStats,
        events: &mut Vec<CrowdEvent>,
    ) {
        let mut finished = Vec::new();
        let replaying = self.replaying();
        let schedule = timed(&mut stats.schedule_ms, || {
            if replaying {
                // The results come from the log (the adopt pass reads them).
                return Default::default();
            }
            let (world, ids, lanes) = (&self.world, &self.ids, &self.lanes);
            let is_current = |job: &Job| {
                world
                    .get::<&MoveRequest>(ids.entity(job.agent))
                    .is_ok_and(|m| m.awaiting && m.query == job.request)
            };
            // Where a waiting agent stands now, on a live polygon (it may have walked a
            // head start since it was ordered).
            let standing = |job: &Job| {
                let slot = world.get::<&Slot>(ids.entity(job.agent)).ok()?.0;
                let polygon = lanes.polygon[slot];
                (lanes.status[slot] != AgentStatus::CrossingLink
                    && snapshot.tile(polygon).is_some())
                .then(|| (polygon, lanes.position(slot)))
            };
            // A walker's re-plan routes round crowds (`Crowd::replan`): the factors are
            // worked out once, in the first step that opens one. Only `Replan` makes such
            // jobs, so under any other policy no job's agent is looked up for it.
            let weight = self.config.replan_congestion_weight;
            let routing = weight > 0.0 && self.config.blocked_policy == BlockedPolicy::Replan;
            let factors = std::cell::OnceCell::new();
            let around_crowds = |job: &Job| {
                if !routing {
                    return None;
                }
                let slot = world.get::<&Slot>(ids.entity(job.agent)).ok()?.0;
                walks_while_replanned(lanes, slot).then(|| {
                    factors
                        .get_or_init(|| crowding_factors(snapshot, lanes, weight))
                        .clone()
                })
            };
            self.scheduler.run(
                snapshot,
                &self.filters,
                &mut self.cache,
                self.config.budget(lanes.len()),
                self.frame,
                &is_current,
                &standing,
                &around_crowds,
                &mut finished,
            )
        });
        stats.record_schedule(schedule);
        stats.rejected = timed(&mut stats.adopt_ms, || self.adopt(finished, events));
        (stats.funnel_runs, stats.reconnected) =
            timed(&mut stats.follow_ms, || self.follow(dt, events));
        timed(&mut stats.slope_ms, || {
            slope_pass(snapshot, &mut self.lanes)
        });
        self.lean_into_carries();
        self.apply_velocity_requests();
        self.keep_holds(events);
    }
}
