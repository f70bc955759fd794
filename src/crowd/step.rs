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
//! This file holds the order and the glue of the follow and avoid passes; the passes
//! themselves live beside it: ingest and adoption in `adopt.rs`, link crossing in
//! `crossing.rs`, the feedback pass in `feedback.rs`, following and slope in `passes.rs`,
//! avoidance in `avoid/`, separation in `separation.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use glam::{Vec2, Vec3};
use rayon::prelude::*;

use super::adopt::walks_while_replanned;
use super::agent::AgentId;
use super::avoid::{avoid_pass, gather_bodies, gather_carried, gather_frames};
use super::components::{Cancelling, Ending, HoldOrder, MoveRequest, Slot, VelocityRequest};
use super::config::BlockedPolicy;
use super::congestion::crowding_factors;
use super::controller::{Controller, StepFeedback};
use super::events::{
    CANCEL_CONFIRM_S, CrowdError, CrowdEvent, FailureCondition, FeedbackFault, FeedbackField,
    Outcome,
};
use super::hold::{FactChange, HoldObservation, HoldPhase};
use super::interaction::{InteractionOrder, InteractionWorld};
use super::lanes::{AgentStatus, lane_view};
use super::passes::{CORNER_REFRESH_FRAMES, follow_pass, slope_pass};
use super::platform::platform_frames;
use super::runtime::Crowd;
use super::scheduler::{Job, ScheduleStats};
use super::separation::separation_pass;
use super::support::{SupportMotion, lean_into_carry, support_end_velocity};
use crate::query::{RECONNECT_NODES_MAX, Validity, reconnect};

/// Requests turned into path jobs per step at least; more when the budget gives more
/// head starts a step (each fresh job can be answered by one at once).
const INGEST_PER_FRAME_MIN: usize = 1024;

/// Every this many frames (with avoidance on), the agents' slots are put in the neighbour
/// grid's cell order. Passes over slots (move, separation's write-back, slope, feedback)
/// and passes over cells (the grid's queries, avoid, separation) then walk the agents in
/// nearly the same order, so each thread's part of one pass is mostly the data it held in
/// the last, instead of lines fetched from the other core. The reorder costs about a
/// millisecond for 10,000 agents (swaps in place, one lane a task), once in this many
/// frames; agents walk a few metres, about a cell, in between.
const SLOT_ORDER_FRAMES: u64 = 32;

/// Time and work of one pass in one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassStats {
    /// Wall time, milliseconds.
    pub time_ms: f64,
    /// Items processed (agents, jobs or results).
    pub items: u32,
}

/// Counters of one step, per pass.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Interaction orders' targets placed and poses checked (`interaction.rs`).
    pub interactions: PassStats,
    /// Requests turned into path jobs.
    pub ingest: PassStats,
    /// Path finding under the budget.
    pub schedule: PassStats,
    /// Results checked at the commit point.
    pub adopt: PassStats,
    /// Corridor following.
    pub follow: PassStats,
    /// Slope limits.
    pub slope: PassStats,
    /// The neighbour grid and every agent's K nearest (rebuilt alongside schedule, adopt,
    /// follow and slope, so its time overlaps theirs).
    pub neighbours: PassStats,
    /// Local avoidance (after the neighbour grid).
    pub avoid: PassStats,
    /// Separation of overlapping agents after the move.
    pub separate: PassStats,
    /// The controller.
    pub movement: PassStats,
    /// Feedback, statuses and events.
    pub feedback: PassStats,
    /// The scheduler's own counters.
    pub scheduler: ScheduleStats,
    /// Agents without their searched path after the step: queued, searched, or walking a
    /// head start meanwhile.
    pub waiting_for_path: u32,
    /// Results rejected at adoption (stale request or read set).
    pub rejected: u32,
    /// Agents whose funnel ran this step (the others kept their corner).
    pub funnel_runs: u32,
    /// Walkers found off their corridor and joined back to it by a few polygons
    /// ([`reconnect`]) instead of asking for a new path.
    pub reconnected: u32,
    /// Agents for which avoidance found no admissible velocity (it took the least violating
    /// one): how crowded the step was.
    pub jammed_agents: u32,
}

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

/// How long a keep-awake job spins without finding work before it gives up.
const KEEP_AWAKE_IDLE: std::time::Duration = std::time::Duration::from_millis(2);

impl StepStats {
    /// The passes' names, in step order, as [`StepStats::pass_stats`] lists them.
    pub const PASS_NAMES: [&'static str; StepStats::PASSES] = [
        "interactions",
        "ingest",
        "schedule",
        "adopt",
        "follow",
        "slope",
        "neighbours",
        "avoid",
        "move",
        "separate",
        "feedback",
    ];

    /// How many passes are counted.
    pub const PASSES: usize = 11;

    /// Every pass's counters, in the order of [`StepStats::PASS_NAMES`] (`neighbours` runs
    /// alongside `schedule`, so its time lies inside `schedule`'s too).
    pub fn pass_stats(&self) -> [PassStats; StepStats::PASSES] {
        [
            self.interactions,
            self.ingest,
            self.schedule,
            self.adopt,
            self.follow,
            self.slope,
            self.neighbours,
            self.avoid,
            self.movement,
            self.separate,
            self.feedback,
        ]
    }
}

fn timed<T>(stats: &mut PassStats, items: usize, run: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let value = run();
    stats.time_ms = start.elapsed().as_secs_f64() * 1e3;
    stats.items = items as u32;
    value
}

/// The step lengths a crowd takes, seconds: from a tenth of a millisecond (a 10 kHz
/// physics tick) to a second (a crowd stepped rarely, far from the player). Outside it the
/// passes' rates lose their meaning: at 1e-30 s no agent moves a representable distance,
/// and at 1e9 s every walker crosses the world in one step and the acceleration limit
/// allows any velocity.
pub const STEP_RANGE_S: std::ops::RangeInclusive<f32> = 1e-4..=1.0;

impl Crowd {
    /// Advances the crowd by `dt` seconds (within [`STEP_RANGE_S`], else
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

    pub(super) fn step_in(
        &mut self,
        dt: f32,
        controller: &mut (impl Controller + Send),
        world: Option<&dyn InteractionWorld>,
    ) -> Result<Vec<CrowdEvent>, CrowdError> {
        if !STEP_RANGE_S.contains(&dt) {
            return Err(CrowdError::BadStep(dt));
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
        let interacting = self.interactions_under_way();
        timed(&mut stats.interactions, interacting, || {
            self.keep_interactions(world, dt, &mut events)
        });

        // Ingest is budgeted too: a burst of requests (10,000 agents told to move at once)
        // spreads over frames instead of stretching one. The rest waits, in order.
        let most = INGEST_PER_FRAME_MIN.max(self.config.budget.head_starts as usize);
        let take = self.pending.len().min(most);
        let pending: Vec<AgentId> = self.pending.drain(..take).collect();
        timed(&mut stats.ingest, pending.len(), || {
            self.ingest(&pending, &mut events)
        });

        let snapshot = self.snapshot.clone();
        // The neighbour grid is rebuilt alongside schedule, adopt, follow and slope: it
        // reads only the positions the last step left (nothing before the move changes
        // them; it works on a copy, so the other passes keep the lanes), and those passes
        // read nothing of it. Each side's serial stretches (the grid's counting sort, the
        // searches' rounds, adoption, the link starts) then leave the other thread the
        // other side's work instead of nothing.
        let avoidance = self.config.avoidance;
        let mut grid = std::mem::take(&mut self.neighbour_grid);
        let mut positions = std::mem::take(&mut self.scratch.grid_positions);
        // Platforms where they stand this frame and after it (`platform.rs`): the grid
        // sees every agent at its world place.
        let platforms_now = platform_frames(&self.platforms, self.frame, dt);
        if avoidance.enabled {
            for (copy, lane) in positions.iter_mut().zip([
                &self.lanes.position_x,
                &self.lanes.position_y,
                &self.lanes.position_z,
            ]) {
                copy.clear();
                copy.extend_from_slice(lane);
            }
            if !platforms_now.is_empty() {
                for (slot, &layer) in self.lanes.support.iter().enumerate() {
                    let placed = platforms_now.place(layer, self.lanes.position(slot));
                    positions[0][slot] = placed.x;
                    positions[1][slot] = placed.y;
                    positions[2][slot] = placed.z;
                }
            }
        }
        let mut neighbours = PassStats::default();
        let ((), ()) = rayon::join(
            || self.schedule_adopt_follow_slope(dt, &snapshot, &mut stats, &mut events),
            || {
                if avoidance.enabled {
                    let [x, y, z] = &positions;
                    timed(&mut neighbours, x.len(), || {
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
        stats.neighbours = neighbours;
        self.neighbour_grid = grid;
        self.scratch.grid_positions = positions;

        let agents = self.lanes.len();
        if self.config.avoidance.enabled {
            stats.jammed_agents =
                timed(&mut stats.avoid, agents, || self.avoid(dt, &platforms_now));
        }
        // Per-frame buffers live in the crowd: megabytes allocated and freed every frame
        // would go to the system allocator's mmap path and fault their pages in again.
        let mut requests = std::mem::take(&mut self.scratch.requests);
        let mut feedback = std::mem::take(&mut self.scratch.feedback);
        timed(&mut stats.movement, agents, || {
            let support_motions = &self.support_motions;
            (0..agents)
                .into_par_iter()
                .with_min_len(super::parallel::LIGHT_AGENTS_PER_TASK)
                .map(|slot| {
                    let mut request = self.lanes.step_request(slot, dt);
                    if let Some(motion) = support_motions.get(request.support as usize) {
                        request.support_velocity = motion.velocity_at(request.foot);
                        request.support_angular_velocity_rad_s = motion.angular_velocity_rad_s;
                    }
                    request
                })
                .collect_into_vec(&mut requests);
            controller.step_agents(&snapshot, &self.filters, &requests, &mut feedback);
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
            let mut scratch = std::mem::take(&mut self.scratch.separation);
            timed(&mut stats.separate, agents, || {
                separation_pass(
                    &self.neighbour_grid,
                    &self.scratch.avoid_bodies,
                    &self.config.avoidance,
                    &snapshot,
                    &self.filters,
                    &self.profiles,
                    dt,
                    &self.support_motions,
                    &platforms_end,
                    &mut feedback,
                    &mut scratch,
                )
            });
            self.scratch.separation = scratch;
        }
        self.carry_goals_on_supports(dt);
        timed(&mut stats.feedback, agents, || {
            self.feedback(&feedback, &mut events)
        });
        self.confirm_cancels(dt, &mut events);
        self.scratch.requests = requests;
        self.scratch.feedback = feedback;

        stats.waiting_for_path = self
            .lanes
            .status
            .iter()
            .zip(&self.lanes.on_head_start)
            .filter(|&(status, &head_start)| *status == AgentStatus::WaitingForPath || head_start)
            .count() as u32;
        self.last_stats = stats;
        if self.config.avoidance.enabled
            && self.frame % SLOT_ORDER_FRAMES == SLOT_ORDER_FRAMES - 1
            && self.neighbour_grid.len() == self.lanes.len()
        {
            self.order_slots_by_cell();
        }
        // Routes invalidated during the step (a link closed at its entry, a corridor stale
        // at landing) are reported with it.
        events.append(&mut self.deferred_events);
        self.log_outcomes(&events);
        self.frame += 1;
        self.last_dt_s = dt;
        for platform in &mut self.platforms {
            platform.motion = platform.motion.after_step(dt);
        }
        Ok(events)
    }

    /// Walkers on a turning support going to a goal off it lean into its carry: the follow
    /// pass's wish is where to go in the world, the step's request a velocity relative to
    /// the support, so the wish becomes the relative velocity whose sum with the carry
    /// under the foot keeps heading the same way ([`lean_into_carry`]). On a turntable the
    /// carry grows towards the rim and turns with the table: a walker that only re-aimed
    /// each frame would be swept along the rim past its exit. On a belt the carry is the
    /// same everywhere and the follow pass's re-aim absorbs its drift, while leaning would
    /// refuse the belt's help whenever the way turns off it (measured: conveyor walk times
    /// 5.7% off the closed form instead of 2.9%), so belts are left as they are. A walker
    /// whose goal rides the same support aims at it in the support's frame already.
    /// Nothing to do (no lane read) while no support turns.
    fn lean_into_carries(&mut self) {
        let turning = |motion: &SupportMotion| motion.angular_velocity_rad_s != 0.0;
        if !self.support_motions.iter().any(turning) {
            return;
        }
        let lanes = &mut self.lanes;
        for slot in 0..lanes.len() {
            if lanes.status[slot] != AgentStatus::Moving {
                continue;
            }
            let support = lanes.support[slot];
            let Some(motion) = self.support_motions.get(support as usize) else {
                continue;
            };
            let goal_layer = self.snapshot.support_layer(lanes.goal_polygon[slot]);
            if !turning(motion) || goal_layer.map(u32::from) == Some(support) {
                continue;
            }
            let carry = motion.velocity_at(lanes.position(slot));
            let wish = Vec2::new(lanes.desired_x[slot], lanes.desired_z[slot]);
            let leaned =
                lean_into_carry(wish, Vec2::new(carry.x, carry.z), lanes.speed_limit[slot]);
            lanes.desired_x[slot] = leaned.x;
            lanes.desired_z[slot] = leaned.y;
        }
    }

    /// A foot that ended the step on another support's polygon (off a belt's end onto the
    /// ground, from the ground onto a turntable) switched supports mid-step: it keeps its
    /// world velocity, and the support velocity its relative end velocity is taken from is
    /// the new support's at the foot, not the old one's (spec 004: the inherited world
    /// velocity, no subtraction of the old support's). The controller knows only the
    /// support it was given; the crowd knows them all. Nothing to do while no support
    /// moves.
    fn inherit_world_velocities(
        &self,
        requests: &[super::controller::StepRequest],
        feedback: &mut [StepFeedback],
    ) {
        if self.support_motions.iter().all(SupportMotion::is_still) {
            return;
        }
        for (step, request) in feedback.iter_mut().zip(requests) {
            if step.support != request.support {
                step.velocity_support_end =
                    support_end_velocity(&self.support_motions, step.support, step.foot);
            }
        }
    }

    /// Carries each walker's goal that lies on a moving surface (a belt,
    /// [`Crowd::set_support_velocity`]; a turntable, [`Crowd::set_support_rotation`]) along
    /// with it over the step, as the controller carried the bodies on it: a stop on a
    /// support is judged in the support's frame (spec 004), so the goal is a place on the
    /// support, and a walker catches it up and stands on the support there, riding on. A
    /// goal carried off its polygon stays where it was. Nothing to do (no lane read) while
    /// no support moves.
    fn carry_goals_on_supports(&mut self, dt: f32) {
        if self.support_motions.iter().all(SupportMotion::is_still) {
            return;
        }
        let lanes = &mut self.lanes;
        for slot in 0..lanes.len() {
            if lanes.status[slot] != AgentStatus::Moving || lanes.on_head_start[slot] {
                continue;
            }
            let polygon = lanes.goal_polygon[slot];
            let Some(layer) = self.snapshot.support_layer(polygon).filter(|&l| l > 0) else {
                continue;
            };
            let Some(motion) = self.support_motions.get(usize::from(layer)) else {
                continue;
            };
            let goal = Vec3::new(lanes.goal_x[slot], lanes.goal_y[slot], lanes.goal_z[slot]);
            let carried = motion.carry(goal, dt);
            let carried = Vec2::new(carried.x, carried.z);
            let Some(tile) = self.snapshot.tile(polygon) else {
                continue;
            };
            if !motion.is_still() && tile.contains_xz(polygon.polygon(), carried) {
                lanes.goal_x[slot] = carried.x;
                lanes.goal_y[slot] = tile.height_at(polygon.polygon(), carried);
                lanes.goal_z[slot] = carried.y;
            }
        }
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
        let swaps = super::lanes::permutation_swaps(&order);
        let windows = &mut self.portal_windows;
        rayon::join(
            || self.lanes.permute(&swaps),
            || super::lanes::apply_swaps(windows, &swaps),
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
        stats.scheduler = timed(&mut stats.schedule, self.scheduler.depth(), || {
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
                self.config.budget,
                self.frame,
                &is_current,
                &standing,
                &around_crowds,
                &mut finished,
            )
        });
        let count = finished.len();
        stats.rejected = timed(&mut stats.adopt, count, || self.adopt(finished, events));
        let agents = self.lanes.len();
        (stats.funnel_runs, stats.reconnected) =
            timed(&mut stats.follow, agents, || self.follow(dt, events));
        timed(&mut stats.slope, agents, || {
            slope_pass(snapshot, &mut self.lanes)
        });
        self.lean_into_carries();
        self.apply_velocity_requests();
        self.keep_holds(events);
    }

    /// Orders whose deadline has come and that have not ended fail: their agents brake
    /// to a stop as after a cancel (the outcome comes once they stand).
    fn expire_deadlines(&mut self) {
        if self.deadlines.is_empty() {
            return;
        }
        let frame = self.frame;
        let mut due = Vec::new();
        self.deadlines.retain(|&entry| {
            let (deadline, _, _) = entry;
            if deadline <= frame {
                due.push(entry);
            }
            deadline > frame
        });
        for (_, agent, order) in due {
            let current = self
                .world
                .get::<&MoveRequest>(self.ids.entity(agent))
                .is_ok_and(|request| request.order == order);
            if let (true, Ok(slot)) = (current, self.slot(agent)) {
                self.start_braking(agent, slot, Ending::Deadline);
            }
        }
    }

    /// Cancels whose agents have stopped get their receipt and free the mover; those not
    /// stopped in time are reported once as faults. In slot order.
    fn confirm_cancels(&mut self, dt: f32, events: &mut Vec<CrowdEvent>) {
        let mut cancelling: Vec<usize> = self
            .world
            .query::<(&Slot, &Cancelling)>()
            .iter()
            .map(|(slot, _)| slot.0)
            .collect();
        if cancelling.is_empty() {
            return;
        }
        cancelling.sort_unstable();
        let stop_speed = self.config.stop_speed_mps;
        for slot in cancelling {
            let agent = self.lanes.id[slot];
            let lanes = &mut self.lanes;
            let speed = Vec2::new(lanes.velocity_x[slot], lanes.velocity_z[slot]).length();
            if lanes.status[slot] == AgentStatus::CrossingLink {
                continue; // a crossing is not cut short: the cancel's time starts at landing
            }
            let stopped = lanes.velocity_valid[slot] && speed < stop_speed;
            if stopped {
                let state = self
                    .world
                    .remove_one::<Cancelling>(self.ids.entity(agent))
                    .expect("listed above");
                lanes.handoff[slot] = lanes.handoff[slot].wrapping_add(1);
                lanes.status[slot] = AgentStatus::Idle;
                if state.receipt_owed {
                    events.push(CrowdEvent::Cancelled {
                        agent,
                        record: state.record,
                    });
                }
                let outcome = match state.ending {
                    Ending::Cancel => Outcome::Cancelled,
                    Ending::Deadline => Outcome::Failure(FailureCondition::DeadlinePassed),
                    Ending::Blocked(by) => Outcome::Failure(FailureCondition::Blocked(by)),
                    Ending::Hold(why) => Outcome::Failure(FailureCondition::Hold(why)),
                    Ending::Interaction(why) => {
                        Outcome::Failure(FailureCondition::Interaction(why))
                    }
                };
                if let Some(order) = state.record.order {
                    events.push(CrowdEvent::OrderEnded {
                        agent,
                        order,
                        outcome,
                    });
                }
                continue;
            }
            let mut state = self
                .world
                .get::<&mut Cancelling>(self.ids.entity(agent))
                .expect("listed above");
            state.waited_s += dt;
            if state.waited_s > CANCEL_CONFIRM_S && !state.faulted {
                state.faulted = true;
                events.push(CrowdEvent::CancelFault {
                    agent,
                    record: state.record,
                });
            }
        }
    }

    /// Agents under velocity control want the velocity their host asked for, within their
    /// patch's speed limit (the slope pass's V/k, as a walker's cruise is held to it).
    /// Station keeping: each holding agent's stand fact judged on where the last step left
    /// it, then its preferred velocity toward its pose (`hold.rs`). A hold that fails
    /// brakes its agent to a stop, as a deadline does. Few agents hold at a time: a query
    /// over the hold component, its changes reported in slot order.
    fn keep_holds(&mut self, events: &mut Vec<CrowdEvent>) {
        let tick = self.frame;
        let lanes = &mut self.lanes;
        let support_motions = &self.support_motions;
        let mut changes = Vec::new();
        for (slot, hold, interaction) in
            self.world
                .query_mut::<(&Slot, &mut HoldOrder, Option<&InteractionOrder>)>()
        {
            let slot = slot.0;
            if lanes.status[slot] != AgentStatus::Holding {
                continue; // (crossing a link: it lands first)
            }
            let foot = lanes.position(slot);
            // An interaction's hold judges its checks at the actual foot (run by the
            // interaction pass at the step's start) and carries its moving target.
            let (checks_pass, target_velocity) = interaction.map_or((true, Vec3::ZERO), |order| {
                (order.checks_pass, order.foot_velocity)
            });
            // On a moving support (a belt) the body's world velocity is its velocity
            // relative to the support plus the support's; holding still in the world is
            // walking against it (spec 001's h3).
            let support_velocity = support_motions
                .get(lanes.support[slot] as usize)
                .map_or(Vec3::ZERO, |motion| motion.velocity_at(foot));
            let relative = Vec3::new(lanes.velocity_x[slot], 0.0, lanes.velocity_z[slot]);
            let seen = HoldObservation {
                tick,
                target: hold.target,
                target_velocity,
                foot,
                velocity: relative + support_velocity,
                checks_pass,
            };
            let mut change = hold.keeper.observe(&seen);
            let preferred = hold.keeper.preferred_relative_velocity(
                hold.target,
                target_velocity,
                foot,
                support_velocity,
                lanes.speed_limit[slot],
            );
            let wanted = preferred.unwrap_or(Vec2::ZERO);
            lanes.desired_x[slot] = wanted.x;
            lanes.desired_z[slot] = wanted.y;
            if let (None, HoldPhase::Failed(why), FactChange::None) =
                (preferred, hold.keeper.phase(), change)
            {
                change = FactChange::Failed(why);
            }
            if change != FactChange::None {
                changes.push((slot, lanes.id[slot], hold.order, change));
            }
        }
        changes.sort_unstable_by_key(|&(slot, ..)| slot);
        for (slot, agent, order, change) in changes {
            events.push(CrowdEvent::StandFact {
                agent,
                order,
                change,
            });
            match change {
                FactChange::Established(_) => self.interaction_established(agent, events),
                FactChange::Failed(why) => {
                    self.interaction_hold_failed(agent, why, events);
                    self.start_braking(agent, slot, Ending::Hold(why));
                }
                _ => {}
            }
        }
    }

    fn apply_velocity_requests(&mut self) {
        let lanes = &mut self.lanes;
        for (slot, request) in self.world.query::<(&Slot, &VelocityRequest)>().iter() {
            let slot = slot.0;
            if lanes.status[slot] != AgentStatus::VelocityControlled {
                continue; // (crossing a link: it lands first)
            }
            let wanted = request.velocity.clamp_length_max(lanes.speed_limit[slot]);
            lanes.desired_x[slot] = wanted.x;
            lanes.desired_z[slot] = wanted.y;
        }
    }

    /// Follow: cursor, corner and preferred velocity for every moving agent. Returns how
    /// many agents ran the funnel and how many off their corridor were reconnected to it.
    fn follow(&mut self, dt: f32, events: &mut Vec<CrowdEvent>) -> (u32, u32) {
        let mut outputs = std::mem::take(&mut self.scratch.follow_outputs);
        follow_pass(
            &self.snapshot,
            &self.lanes,
            &mut self.portal_windows,
            dt,
            self.config.arrive_tolerance_m,
            &mut outputs,
        );
        // Written back in parallel over runs of slots; the agents off their corridor and
        // those at a link's entry are noted, in slot order, and handled after.
        let (funnel_runs, lost, at_link) = FollowLanes::new(&mut self.lanes)
            .into_pieces(super::parallel::LIGHT_AGENTS_PER_TASK)
            .map(|view| {
                let outputs = &outputs[view.first..view.first + view.len];
                follow_write_back(view, outputs)
            })
            .reduce(
                || (0, Vec::new(), Vec::new()),
                |mut left, right| {
                    left.0 += right.0;
                    left.1.extend(right.1);
                    left.2.extend(right.2);
                    left
                },
            );
        let mut reconnected = 0;
        for agent in lost {
            // Off the corridor (pushed away, or the corridor's tiles changed): back to it
            // by the fewest polygons if it is near, else a new path from where the agent
            // actually is. Off a head start, the agent waits for the path its request is
            // already queued for.
            if let Ok(slot) = self.slot(agent) {
                if !self.lanes.on_head_start[slot] && self.reconnect(slot) {
                    reconnected += 1;
                    continue;
                }
                self.lanes.corridor[slot] = None;
                if self.lanes.on_head_start[slot] {
                    self.lanes.on_head_start[slot] = false;
                    self.lanes.status[slot] = AgentStatus::WaitingForPath;
                    continue;
                }
            }
            self.reissue(agent);
        }
        for slot in at_link {
            self.start_crossing(slot, dt, events);
        }
        self.scratch.follow_outputs = outputs;
        (funnel_runs, reconnected)
    }

    /// Joins the corridor of the agent in `slot`, which follow found it off, from the
    /// polygon it stands on: the fewest polygons (at most [`RECONNECT_NODES_MAX`] looked
    /// at, through polygons its filter passes) to its corridor's polygon one behind to
    /// eight ahead of its cursor, on the piece it walks (never across a link), then the
    /// corridor on from there. The agent keeps its order, its query's identity and its
    /// place; the new corridor's reads are the old one's and the reconnection's. False,
    /// with nothing changed, when the corridor is no longer valid or no such way exists.
    fn reconnect(&mut self, slot: usize) -> bool {
        let Some(corridor) = self.lanes.corridor[slot].clone() else {
            return false;
        };
        let Some(filter) = self.filters.get(self.lanes.filter[slot].index()) else {
            return false;
        };
        if corridor.reads.still_valid_in(&self.snapshot, filter) != Validity::Valid {
            return false;
        }
        let cursor = self.lanes.cursor[slot] as usize;
        let (first, last) = corridor.walkable_piece(cursor);
        let back = cursor.saturating_sub(1).max(first)..=(cursor + 8).min(last);
        let snapshot = &self.snapshot;
        let mut join = None;
        let found = reconnect(
            snapshot,
            self.lanes.polygon[slot],
            filter,
            RECONNECT_NODES_MAX,
            |polygon| {
                // Furthest ahead first, as follow's own search of the corridor does.
                join = back
                    .clone()
                    .rev()
                    .find(|&index| corridor.polygon(snapshot, index) == Some(polygon));
                join.is_some()
            },
        );
        let (Ok(Some(path)), Some(join)) = (found, join) else {
            return false;
        };
        let Some(joined) = corridor.reconnected(&path, join) else {
            return false;
        };
        self.lanes.corridor[slot] = Some(Arc::new(joined));
        self.lanes.cursor[slot] = 0;
        self.lanes.cursor_polygon[slot] = self.lanes.polygon[slot];
        // The kept corner belongs to the old corridor: the funnel runs next step.
        self.lanes.corner_age[slot] = CORNER_REFRESH_FRAMES;
        true
    }

    /// Avoid: the neighbour grid, then a negotiated velocity for every agent, which becomes
    /// its request to the controller. Returns how many agents were jammed.
    fn avoid(&mut self, dt: f32, platforms: &super::platform::PlatformFrames) -> u32 {
        let avoidance = self.config.avoidance;
        // The grid was rebuilt alongside the path searches, on these same positions.
        let mut velocities = std::mem::take(&mut self.scratch.avoid_velocities);
        let mut bodies = std::mem::take(&mut self.scratch.avoid_bodies);
        let mut carried = std::mem::take(&mut self.scratch.avoid_carried);
        let mut frames = std::mem::take(&mut self.scratch.avoid_frames);
        gather_bodies(&self.lanes, &self.neighbour_grid, &mut bodies);
        gather_carried(
            &self.lanes,
            &self.neighbour_grid,
            &self.support_motions,
            platforms,
            &mut carried,
        );
        gather_frames(&self.lanes, &self.neighbour_grid, platforms, &mut frames);
        avoid_pass(
            &self.neighbour_grid,
            &bodies,
            &carried,
            &frames,
            &self.snapshot,
            &avoidance,
            &self.profiles,
            dt,
            &mut velocities,
        );
        // Back to slot order: each slot reads its answer (a gather, on the pool) rather
        // than the answers being scattered to the slots one by one.
        let grid = &self.neighbour_grid;
        let jammed = self
            .lanes
            .desired_x
            .par_iter_mut()
            .zip(self.lanes.desired_z.par_iter_mut())
            .enumerate()
            .with_min_len(super::parallel::LIGHT_AGENTS_PER_TASK)
            .map(|(slot, (desired_x, desired_z))| {
                let solved = grid
                    .index_of_slot(slot)
                    .and_then(|index| velocities.get(index))
                    .copied()
                    .unwrap_or_default();
                *desired_x = solved.velocity.x;
                *desired_z = solved.velocity.y;
                u32::from(solved.jammed)
            })
            .sum();
        self.scratch.avoid_velocities = velocities;
        self.scratch.avoid_bodies = bodies;
        self.scratch.avoid_carried = carried;
        self.scratch.avoid_frames = frames;
        jammed
    }
}

lane_view! {
    /// What the follow pass's write-back writes of each agent, and what it reads beside.
    FollowLanes {
        write {
            cursor: u32,
            cursor_polygon: crate::mesh::PolyRef,
            corner_is_horizon: bool,
            corner_x: f32,
            corner_z: f32,
            slow_x: f32,
            slow_z: f32,
            slow_speed: f32,
            desired_x: f32,
            desired_z: f32,
            stop_distance: f32,
            corner_after_m: f32,
            corner_age: u8,
        }
        read {
            polygon: crate::mesh::PolyRef,
            id: AgentId,
        }
    }
}

/// The follow pass's outputs for one run of slots written to its lanes. Returns how many
/// of the run's agents ran the funnel, the agents off their corridor (to be re-issued) and
/// the slots at a link's entry, in slot order.
fn follow_write_back(
    view: FollowLanes<'_>,
    outputs: &[Option<super::passes::FollowOutput>],
) -> (u32, Vec<AgentId>, Vec<usize>) {
    let (mut funnel_runs, mut lost, mut at_link) = (0, Vec::new(), Vec::new());
    for (offset, &output) in outputs.iter().enumerate() {
        match output {
            Some(output) if !output.off_corridor => {
                funnel_runs += u32::from(output.refreshed);
                // The polygon the corner was found from: the corridor's at the cursor, or
                // the one beside the corridor the agent was pushed into (its window starts
                // with the edge back in). Either way the agent's own polygon, so an agent
                // walking beside its corridor keeps its corner as long as it stays there,
                // as one walking in the corridor does.
                view.cursor_polygon[offset] = view.polygon[offset];
                if output.refreshed {
                    view.corner_is_horizon[offset] = output.horizon;
                }
                view.cursor[offset] = output.cursor;
                view.corner_x[offset] = output.corner.x;
                view.corner_z[offset] = output.corner.y;
                if let Some((point, speed)) = output.slowdown {
                    view.slow_x[offset] = point.x;
                    view.slow_z[offset] = point.y;
                    view.slow_speed[offset] = speed;
                }
                // The follow pass capped it for the next slow-down point.
                view.desired_x[offset] = output.desired.x;
                view.desired_z[offset] = output.desired.y;
                view.stop_distance[offset] = output.stop_distance;
                view.corner_after_m[offset] = output.corner_after;
                view.corner_age[offset] = if output.refreshed {
                    0
                } else {
                    view.corner_age[offset].saturating_add(1)
                };
                if output.link_ready {
                    at_link.push(view.first + offset);
                }
            }
            Some(_) => {
                view.desired_x[offset] = 0.0;
                view.desired_z[offset] = 0.0;
                lost.push(view.id[offset]);
            }
            None => {
                view.desired_x[offset] = 0.0;
                view.desired_z[offset] = 0.0;
            }
        }
    }
    (funnel_runs, lost, at_link)
}

impl Crowd {
    /// Screens the controller's answers before any pass reads them: an answer with a value
    /// no body can have (non-finite, a foot outside the world, a velocity past the speed
    /// limit) quarantines its agent with an event naming the field and the value, and every
    /// quarantined agent's answer is replaced by standing where it stood, so one agent's
    /// bad answer never reaches its neighbours through separation or avoidance. A parallel
    /// scan finds the few to fix; the common frame fixes none.
    fn screen_feedback(
        &mut self,
        dt: f32,
        feedback: &mut [StepFeedback],
        events: &mut Vec<CrowdEvent>,
    ) {
        let status = &self.lanes.status;
        let faults: Vec<(usize, Option<FeedbackFault>)> = feedback
            .par_iter()
            .enumerate()
            .with_min_len(super::parallel::LIGHT_AGENTS_PER_TASK)
            .filter_map(|(slot, step)| {
                let fault = feedback_fault(step);
                (fault.is_some() || status[slot] == AgentStatus::Quarantined)
                    .then_some((slot, fault))
            })
            .collect();
        for (slot, fault) in faults {
            let lanes = &mut self.lanes;
            feedback[slot] = StepFeedback {
                dt,
                foot: lanes.position(slot),
                polygon: lanes.polygon[slot],
                displacement: Vec3::ZERO,
                displacement_support: Vec3::ZERO,
                displacement_correction: Vec3::ZERO,
                support: lanes.support[slot],
                contact: true,
                velocity_world_end: Vec3::ZERO,
                velocity_support_end: Vec3::ZERO,
                velocity_valid: true,
                blocked: None,
            };
            if let Some(fault) = fault {
                if lanes.status[slot] != AgentStatus::Quarantined {
                    lanes.status[slot] = AgentStatus::Quarantined;
                    for lane in [
                        &mut lanes.velocity_x,
                        &mut lanes.velocity_z,
                        &mut lanes.desired_x,
                        &mut lanes.desired_z,
                    ] {
                        lane[slot] = 0.0;
                    }
                    events.push(CrowdEvent::Quarantined {
                        agent: lanes.id[slot],
                        fault,
                    });
                }
            }
        }
    }
}

/// The first value of `step` no body can have, if any.
fn feedback_fault(step: &StepFeedback) -> Option<FeedbackFault> {
    use crate::geom::limits::{COORDINATE_MAX_M, SPEED_MAX_MPS, within_each};
    let fault = |field: FeedbackField, value: Vec3| {
        let largest = if value.is_nan() {
            f32::NAN
        } else {
            value.abs().max_element()
        };
        Some(FeedbackFault {
            field,
            value_bits: largest.to_bits(),
        })
    };
    if !STEP_RANGE_S.contains(&step.dt) {
        return fault(FeedbackField::StepLength, Vec3::splat(step.dt));
    }
    if !within_each(step.foot, COORDINATE_MAX_M) {
        return fault(FeedbackField::Foot, step.foot);
    }
    if step.velocity_valid && !within_each(step.velocity_world_end, SPEED_MAX_MPS) {
        return fault(FeedbackField::Velocity, step.velocity_world_end);
    }
    if !within_each(step.velocity_support_end, SPEED_MAX_MPS) {
        return fault(FeedbackField::SupportVelocity, step.velocity_support_end);
    }
    for displacement in [
        step.displacement,
        step.displacement_support,
        step.displacement_correction,
    ] {
        if !within_each(displacement, 2.0 * COORDINATE_MAX_M) {
            return fault(FeedbackField::Displacement, displacement);
        }
    }
    None
}
