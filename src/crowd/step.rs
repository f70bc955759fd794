//! One crowd step: the pass order, written once.
//!
//! ingest -> schedule -> adopt -> follow -> slope (with the neighbour grid rebuilt alongside
//! these four) -> avoid -> move -> separate -> feedback.
//! Each pass is timed and counted; the parallel ones (follow, slope, avoid, move, separate)
//! collect their results in slot order. Off-mesh links: the follow pass starts crossings
//! (agents at a link's entry), the move pass carries crossing agents along their links in
//! place of the controller. Every [`SLOT_ORDER_FRAMES`] frames the step ends by putting
//! the agents' slots in the neighbour grid's cell order (locality between the passes).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use glam::{Vec2, Vec3};

use super::avoid::{avoid_pass, gather_bodies, separation_pass};
use super::controller::Controller;
use super::lanes::{AgentStatus, lane_view};
use super::passes::{feedback_velocities, follow_pass, rejoin, slope_pass, track_progress};
use super::scheduler::{Finished, Job, Outcome, ScheduleStats, head_start_corridor};
use super::{
    AgentId, Crowd, CrowdError, CrowdEvent, LinkCrossing, MoveRequest, Slot, VelocityRequest,
};
use crate::query::{Validity, nearest_polygon};

/// Requests turned into path jobs per step at least; more when the budget gives more
/// head starts a step (each fresh job can be answered by one at once).
const INGEST_PER_FRAME_MIN: usize = 1024;

/// Attempts in a row without an adopted corridor after which a request is given up.
const ATTEMPTS_MAX: u32 = 4;

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
    pub const PASS_NAMES: [&'static str; 10] = [
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

    /// Every pass's counters, in the order of [`StepStats::PASS_NAMES`] (`neighbours` runs
    /// alongside `schedule`, so its time lies inside `schedule`'s too).
    pub fn pass_stats(&self) -> [PassStats; 10] {
        [
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

impl Crowd {
    /// Advances the crowd by `dt` seconds; returns the step's events in order.
    ///
    /// The step runs on rayon's thread pool (the current one when called from inside a
    /// pool, the global one otherwise) as one piece: called from a thread outside the pool,
    /// every parallel pass would wait for sleeping workers to wake on its own, measured at
    /// 10-200 µs per pass on a 2-core VM, a tenth of a 1,000-agent step.
    pub fn step(
        &mut self,
        dt: f32,
        controller: &mut (impl Controller + Send),
    ) -> Result<Vec<CrowdEvent>, CrowdError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(CrowdError::BadStep(dt));
        }
        if !self.config.keep_workers_awake {
            return if rayon::current_thread_index().is_some() {
                self.step_on_pool(dt, controller)
            } else {
                rayon::scope(|_| self.step_on_pool(dt, controller))
            };
        }
        let done = AtomicBool::new(false);
        rayon::scope(|scope| {
            let stepping = rayon::current_thread_index();
            for _ in 1..rayon::current_num_threads() {
                let done = &done;
                scope.spawn(move |_| keep_awake(done, stepping));
            }
            let result = self.step_on_pool(dt, controller);
            done.store(true, Ordering::Release);
            result
        })
    }

    /// [`Crowd::step`] on a pool thread.
    fn step_on_pool(
        &mut self,
        dt: f32,
        controller: &mut (impl Controller + Send),
    ) -> Result<Vec<CrowdEvent>, CrowdError> {
        let mut stats = StepStats::default();
        let mut events = Vec::new();

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
        let mut positions = std::mem::take(&mut self.grid_positions);
        if avoidance.enabled {
            for (copy, lane) in positions.iter_mut().zip([
                &self.lanes.position_x,
                &self.lanes.position_y,
                &self.lanes.position_z,
            ]) {
                copy.clear();
                copy.extend_from_slice(lane);
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
        self.grid_positions = positions;

        let agents = self.lanes.len();
        if self.config.avoidance.enabled {
            stats.jammed_agents = timed(&mut stats.avoid, agents, || self.avoid(dt));
        }
        // Per-frame buffers live in the crowd: megabytes allocated and freed every frame
        // would go to the system allocator's mmap path and fault their pages in again.
        let mut requests = std::mem::take(&mut self.step_requests);
        let mut feedback = std::mem::take(&mut self.step_feedback);
        timed(&mut stats.movement, agents, || {
            (0..agents)
                .into_par_iter()
                .with_min_len(super::parallel::LIGHT_AGENTS_PER_TASK)
                .map(|slot| self.lanes.step_request(slot, dt))
                .collect_into_vec(&mut requests);
            controller.step_agents(&snapshot, &self.filters, &requests, &mut feedback);
        });
        if feedback.len() != requests.len() {
            let error = CrowdError::ControllerFeedback {
                requests: requests.len(),
                feedback: feedback.len(),
            };
            self.step_requests = requests;
            self.step_feedback = feedback;
            return Err(error);
        }
        self.advance_crossings(&mut feedback, dt, &mut events);
        if self.config.avoidance.enabled && self.config.avoidance.separation {
            let mut scratch = std::mem::take(&mut self.separation_scratch);
            timed(&mut stats.separate, agents, || {
                separation_pass(
                    &self.neighbour_grid,
                    &self.avoid_bodies,
                    &self.config.avoidance,
                    &snapshot,
                    &self.filters,
                    &self.profiles,
                    dt,
                    &mut feedback,
                    &mut scratch,
                )
            });
            self.separation_scratch = scratch;
        }
        timed(&mut stats.feedback, agents, || {
            self.feedback(&feedback, &mut events)
        });
        self.step_requests = requests;
        self.step_feedback = feedback;

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
        self.frame += 1;
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
        stats.scheduler = timed(&mut stats.schedule, self.scheduler.depth(), || {
            let (world, lanes) = (&self.world, &self.lanes);
            let is_current = |job: &Job| {
                world
                    .get::<&MoveRequest>(job.agent.entity())
                    .is_ok_and(|m| m.awaiting && m.request == job.request)
            };
            // Where a waiting agent stands now, on a live polygon (it may have walked a
            // head start since it was ordered).
            let standing = |job: &Job| {
                let slot = world.get::<&Slot>(job.agent.entity()).ok()?.0;
                let polygon = lanes.polygon[slot];
                (lanes.status[slot] != AgentStatus::CrossingLink
                    && snapshot.tile(polygon).is_some())
                .then(|| (polygon, lanes.position(slot)))
            };
            self.scheduler.run(
                snapshot,
                &self.filters,
                &mut self.cache,
                self.config.budget,
                self.frame,
                &is_current,
                &standing,
                &mut finished,
            )
        });
        let count = finished.len();
        stats.rejected = timed(&mut stats.adopt, count, || self.adopt(finished, events));
        let agents = self.lanes.len();
        stats.funnel_runs = timed(&mut stats.follow, agents, || self.follow(dt, events));
        timed(&mut stats.slope, agents, || {
            slope_pass(snapshot, &mut self.lanes)
        });
        self.apply_velocity_requests();
    }

    /// Agents under velocity control want the velocity their host asked for, within their
    /// patch's speed limit (the slope pass's V/k, as a walker's cruise is held to it).
    fn apply_velocity_requests(&mut self) {
        let lanes = &mut self.lanes;
        for (slot, request) in self.world.query::<(&Slot, &VelocityRequest)>().iter() {
            let slot = slot.0;
            if lanes.status[slot] != AgentStatus::VelocityControlled {
                continue; // (crossing a link: it lands first)
            }
            let wanted = request.0.clamp_length_max(lanes.speed_limit[slot]);
            lanes.desired_x[slot] = wanted.x;
            lanes.desired_z[slot] = wanted.y;
        }
    }

    /// The query filter of the agent in `slot`.
    pub(super) fn filter_of(&self, slot: usize) -> &crate::query::QueryFilter {
        &self.filters[self.lanes.filter[slot].index()]
    }

    /// Re-issues the agent's request as a new attempt (next frame's ingest).
    /// An agent without a request (arrived, cancelled) has nothing to re-issue.
    pub(super) fn reissue(&mut self, agent: AgentId) {
        let Ok(mut request) = self.world.get::<&mut MoveRequest>(agent.entity()) else {
            return;
        };
        request.request.attempt += 1;
        request.attempts_since_adopted += 1;
        request.awaiting = true;
        drop(request);
        if let Ok(slot) = self.slot(agent) {
            self.lanes.status[slot] = AgentStatus::WaitingForPath;
            self.lanes.on_head_start[slot] = false;
            if !self.lanes.ingest_pending[slot] {
                self.lanes.ingest_pending[slot] = true;
                self.pending.push(agent);
            }
        }
    }

    fn fail(&mut self, agent: AgentId, slot: usize, events: &mut Vec<CrowdEvent>) {
        if let Ok(request) = self.world.remove_one::<MoveRequest>(agent.entity()) {
            events.push(CrowdEvent::NoPath {
                agent,
                request: request.request,
            });
        }
        self.lanes.status[slot] = AgentStatus::Failed;
        self.lanes.corridor[slot] = None;
        self.lanes.on_head_start[slot] = false;
    }

    /// Ingest: each pending request becomes a path job (start and goal snapped to the mesh).
    fn ingest(&mut self, pending: &[AgentId], events: &mut Vec<CrowdEvent>) {
        for &agent in pending {
            let Ok(slot) = self.slot(agent) else {
                continue;
            };
            if !self.lanes.ingest_pending[slot] {
                continue;
            }
            self.lanes.ingest_pending[slot] = false;
            let Some(request) = self
                .world
                .get::<&MoveRequest>(agent.entity())
                .ok()
                .map(|m| *m)
            else {
                continue;
            };
            if !self.lanes.velocity_valid[slot]
                || self.lanes.status[slot] == AgentStatus::CrossingLink
            {
                // vUnknown: no new solve until the controller reports a valid velocity; the
                // request keeps its ownership and waits. A crossing agent's path starts
                // where it lands.
                self.lanes.ingest_pending[slot] = true;
                self.pending.push(agent);
                continue;
            }
            if request.attempts_since_adopted > ATTEMPTS_MAX {
                self.fail(agent, slot, events);
                continue;
            }
            let position = self.lanes.position(slot);
            let half = self.config.snap_half_extents;
            let start = match self.snapshot.tile(self.lanes.polygon[slot]) {
                Some(_) => Some((self.lanes.polygon[slot], position)),
                None => nearest_polygon(&self.snapshot, position, half, self.filter_of(slot))
                    .ok()
                    .flatten()
                    .map(|n| (n.polygon, n.point)),
            };
            let Some((start, start_position)) = start else {
                self.fail(agent, slot, events);
                continue;
            };
            self.lanes.polygon[slot] = start;
            self.lanes.status[slot] = AgentStatus::WaitingForPath;
            self.scheduler.enqueue(Job {
                agent,
                filter: self.lanes.filter[slot],
                request: request.request,
                start,
                start_position,
                target: request.target,
                goal: None,
                queued_frame: self.frame,
            });
        }
    }

    /// Adopt: the one commit point. Returns how many results were rejected.
    fn adopt(&mut self, finished: Vec<Finished>, events: &mut Vec<CrowdEvent>) -> u32 {
        let mut rejected = 0;
        for Finished { job, outcome } in finished {
            let Ok(slot) = self.slot(job.agent) else {
                continue;
            };
            let current = self
                .world
                .get::<&MoveRequest>(job.agent.entity())
                .ok()
                .map(|m| *m);
            let Some(current) = current.filter(|m| m.awaiting && m.request == job.request) else {
                rejected += 1; // superseded, cancelled or from an old epoch
                continue;
            };
            let corridor = match outcome {
                Outcome::NoGoal => {
                    self.fail(job.agent, slot, events);
                    continue;
                }
                Outcome::Retry => None,
                Outcome::Corridor(corridor) => Some(corridor),
                Outcome::HeadStart(corridor) => {
                    self.adopt_head_start(slot, &corridor, current.target);
                    continue;
                }
            };
            let usable = corridor.filter(|c| {
                c.reads.still_valid_in(&self.snapshot, self.filter_of(slot)) == Validity::Valid
            });
            let Some(corridor) = usable else {
                rejected += 1;
                self.reissue(job.agent);
                continue;
            };
            let (goal_polygon_snapped, goal_position) = job.goal.expect("a corridor has a goal");
            // The agent kept moving while it waited: it must still be on the corridor, or
            // beside it (the follow pass walks it back in).
            let polygon = self.lanes.polygon[slot];
            let cursor = corridor.find_near(0, polygon, 0, 16).or_else(|| {
                rejoin(&self.snapshot, &corridor, 0, polygon).map(|(cursor, _)| cursor)
            });
            let Some(cursor) = cursor else {
                rejected += 1;
                self.reissue(job.agent);
                continue;
            };
            let goal = if corridor.complete {
                goal_position
            } else {
                corridor
                    .last_polygon(&self.snapshot)
                    .and_then(|last| {
                        let tile = self.snapshot.tile(last)?;
                        Some(tile.closest_point(last.polygon(), current.target).0)
                    })
                    .unwrap_or(goal_position)
            };
            let goal_polygon = if corridor.complete {
                goal_polygon_snapped
            } else {
                // Adopted corridors passed the read-set check: their tiles are live.
                corridor
                    .last_polygon(&self.snapshot)
                    .unwrap_or(goal_polygon_snapped)
            };
            let lanes = &mut self.lanes;
            lanes.goal_x[slot] = goal.x;
            lanes.goal_y[slot] = goal.y;
            lanes.goal_z[slot] = goal.z;
            lanes.goal_polygon[slot] = goal_polygon;
            lanes.corridor[slot] = Some(corridor);
            lanes.cursor[slot] = cursor as u32;
            lanes.corner_age[slot] = u8::MAX;
            lanes.status[slot] = AgentStatus::Moving;
            lanes.on_head_start[slot] = false;
            if let Ok(mut request) = self.world.get::<&mut MoveRequest>(job.agent.entity()) {
                request.awaiting = false;
                request.attempts_since_adopted = 0;
                request.adopted_once = true;
            }
        }
        rejected
    }

    /// An agent still waiting for its path walks `corridor`, a head start toward
    /// `target`, if the mesh it read is unchanged and the agent still stands at its start;
    /// its request stays queued. Otherwise the agent just waits.
    fn adopt_head_start(
        &mut self,
        slot: usize,
        corridor: &std::sync::Arc<super::Corridor>,
        target: Vec3,
    ) {
        if self.lanes.status[slot] != AgentStatus::WaitingForPath {
            return;
        }
        self.walk_head_start(slot, corridor, target);
    }

    /// Puts the agent on `corridor`, a head start toward `target`, if the mesh it read is
    /// unchanged and the agent stands at its start.
    fn walk_head_start(
        &mut self,
        slot: usize,
        corridor: &std::sync::Arc<super::Corridor>,
        target: Vec3,
    ) {
        let lanes = &mut self.lanes;
        let filter = &self.filters[lanes.filter[slot].index()];
        if corridor.reads.still_valid_in(&self.snapshot, filter) != Validity::Valid
            || corridor.find_near(0, lanes.polygon[slot], 0, 1).is_none()
        {
            return;
        }
        let Some(last) = corridor.last_polygon(&self.snapshot) else {
            return;
        };
        let Some(tile) = self.snapshot.tile(last) else {
            return;
        };
        let goal = tile.closest_point(last.polygon(), target).0;
        lanes.goal_x[slot] = goal.x;
        lanes.goal_y[slot] = goal.y;
        lanes.goal_z[slot] = goal.z;
        lanes.goal_polygon[slot] = last;
        lanes.corridor[slot] = Some(corridor.clone());
        lanes.cursor[slot] = 0;
        lanes.corner_age[slot] = u8::MAX;
        lanes.status[slot] = AgentStatus::Moving;
        lanes.on_head_start[slot] = true;
    }

    /// Follow: cursor, corner and preferred velocity for every moving agent. Returns how
    /// many agents ran the funnel.
    fn follow(&mut self, dt: f32, events: &mut Vec<CrowdEvent>) -> u32 {
        let mut outputs = std::mem::take(&mut self.follow_outputs);
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
        let snapshot = &self.snapshot;
        let (funnel_runs, lost, at_link) = FollowLanes::new(&mut self.lanes)
            .into_pieces(super::parallel::LIGHT_AGENTS_PER_TASK)
            .map(|view| {
                let outputs = &outputs[view.first..view.first + view.len];
                follow_write_back(view, outputs, snapshot)
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
        for agent in lost {
            // Off the corridor (pushed away, or the corridor's tiles changed): a new path
            // from where the agent actually is. Off a head start, the agent waits for the
            // path its request is already queued for.
            if let Ok(slot) = self.slot(agent) {
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
        self.follow_outputs = outputs;
        funnel_runs
    }

    /// An agent at the entry of its corridor's next link starts crossing it, if the link is
    /// still open in the version its path read; otherwise it asks for a new path (a door
    /// closed in its face is never walked through).
    fn start_crossing(&mut self, slot: usize, dt: f32, events: &mut Vec<CrowdEvent>) {
        let agent = self.lanes.id[slot];
        let Some(corridor) = self.lanes.corridor[slot].clone() else {
            return;
        };
        let Some(&next) = corridor.next_link(self.lanes.cursor[slot] as usize) else {
            return;
        };
        let open_as_read = corridor.reads.links().iter().any(|&(id, version)| {
            id == next.link
                && self
                    .snapshot
                    .link(id)
                    .is_some_and(|link| link.open && link.version == version)
        });
        let landing = corridor.polygon(&self.snapshot, next.index as usize);
        let (true, Some(landing)) = (open_as_read, landing) else {
            self.lanes.corridor[slot] = None;
            self.reissue(agent);
            return;
        };
        let from = self.lanes.position(slot);
        // Crossed at the agent's cruising speed, in at least one step.
        let duration_s = (from.distance(next.exit) / self.lanes.preferred_speed[slot]).max(dt);
        let crossing = LinkCrossing {
            link: next.link,
            from,
            to: next.exit,
            elapsed_s: 0.0,
            duration_s,
            landing,
            landing_index: next.index,
        };
        self.world
            .insert_one(agent.entity(), crossing)
            .expect("a known agent");
        let velocity = (next.exit - from) / duration_s;
        let lanes = &mut self.lanes;
        lanes.status[slot] = AgentStatus::CrossingLink;
        // Neighbours see the crossing's velocity; the agent does not negotiate.
        lanes.velocity_x[slot] = velocity.x;
        lanes.velocity_z[slot] = velocity.z;
        lanes.desired_x[slot] = 0.0;
        lanes.desired_z[slot] = 0.0;
        events.push(CrowdEvent::LinkStarted {
            agent,
            link: next.link,
        });
    }

    /// Carries every crossing agent along its link for one step, replacing the controller's
    /// feedback for it (the controller was asked to stand still); an agent reaching the
    /// exit lands in the corridor polygon after the link and walks on.
    fn advance_crossings(
        &mut self,
        feedback: &mut [super::StepFeedback],
        dt: f32,
        events: &mut Vec<CrowdEvent>,
    ) {
        for (slot, step) in feedback.iter_mut().enumerate() {
            if self.lanes.status[slot] != AgentStatus::CrossingLink {
                continue;
            }
            let agent = self.lanes.id[slot];
            let Ok(mut crossing) = self
                .world
                .get::<&mut LinkCrossing>(agent.entity())
                .map(|c| *c)
            else {
                // Cannot happen (the component lives as long as the status); recover by
                // walking on from where the agent is.
                self.lanes.status[slot] = AgentStatus::Moving;
                continue;
            };
            crossing.elapsed_s += dt;
            let landed = crossing.elapsed_s >= crossing.duration_s;
            let before = self.lanes.position(slot);
            let (foot, polygon) = if landed {
                self.landing(slot, &crossing)
            } else {
                let t = crossing.elapsed_s / crossing.duration_s;
                (crossing.from.lerp(crossing.to, t), self.lanes.polygon[slot])
            };
            let velocity = if landed {
                Vec3::ZERO
            } else {
                (crossing.to - crossing.from) / crossing.duration_s
            };
            *step = super::StepFeedback {
                dt,
                foot,
                polygon,
                displacement: foot - before,
                displacement_support: Vec3::ZERO,
                displacement_correction: Vec3::ZERO,
                support: 0,
                contact: landed,
                velocity_world_end: velocity,
                velocity_support_end: Vec3::ZERO,
                velocity_valid: true,
                blocked: None,
            };
            if !landed {
                *self
                    .world
                    .get::<&mut LinkCrossing>(agent.entity())
                    .expect("read above") = crossing;
                continue;
            }
            let _ = self.world.remove_one::<LinkCrossing>(agent.entity());
            events.push(CrowdEvent::LinkFinished {
                agent,
                link: crossing.link,
            });
            self.land(slot, &crossing);
        }
    }

    /// Where a crossing ends: the exit on the landing polygon (or, if that polygon's tile
    /// was replaced meanwhile, on the nearest polygon).
    fn landing(&self, slot: usize, crossing: &LinkCrossing) -> (Vec3, crate::mesh::PolyRef) {
        let filter = self.filter_of(slot);
        if let Some(tile) = self.snapshot.tile(crossing.landing) {
            return (
                tile.closest_point(crossing.landing.polygon(), crossing.to)
                    .0,
                crossing.landing,
            );
        }
        nearest_polygon(
            &self.snapshot,
            crossing.to,
            self.config.snap_half_extents,
            filter,
        )
        .ok()
        .flatten()
        .map_or((crossing.to, crossing.landing), |nearest| {
            (nearest.point, nearest.polygon)
        })
    }

    /// The agent's state after landing: walking on along its corridor from the landing
    /// polygon, or serving what changed while it was in the air (a new request, a cancel,
    /// a corridor gone stale).
    fn land(&mut self, slot: usize, crossing: &LinkCrossing) {
        let agent = self.lanes.id[slot];
        let request = self
            .world
            .get::<&MoveRequest>(agent.entity())
            .ok()
            .map(|m| *m);
        let lanes = &mut self.lanes;
        lanes.cursor[slot] = crossing.landing_index;
        lanes.cursor_polygon[slot] = crossing.landing;
        lanes.corner_age[slot] = u8::MAX;
        lanes.corner_is_horizon[slot] = true;
        lanes.stalled_s[slot] = 0.0;
        lanes.progress_m[slot] = 0.0;
        lanes.unprogressed_s[slot] = 0.0;
        let Some(request) = request else {
            // Cancelled, or put under velocity control, during the crossing.
            let velocity_controlled = self.world.get::<&VelocityRequest>(agent.entity()).is_ok();
            lanes.status[slot] = if velocity_controlled {
                AgentStatus::VelocityControlled
            } else {
                AgentStatus::Idle
            };
            lanes.corridor[slot] = None;
            return;
        };
        if request.awaiting {
            // A new request arrived during the crossing; its ingest was deferred to now.
            lanes.status[slot] = AgentStatus::WaitingForPath;
            lanes.corridor[slot] = None;
            return;
        }
        lanes.status[slot] = AgentStatus::Moving;
        let filter = &self.filters[lanes.filter[slot].index()];
        let stale = lanes.corridor[slot].as_ref().is_none_or(|corridor| {
            corridor.reads.still_valid_in(&self.snapshot, filter) != Validity::Valid
        });
        if stale {
            lanes.corridor[slot] = None;
            self.reissue(agent);
        }
    }

    /// Avoid: the neighbour grid, then a negotiated velocity for every agent, which becomes
    /// its request to the controller. Returns how many agents were jammed.
    fn avoid(&mut self, dt: f32) -> u32 {
        let avoidance = self.config.avoidance;
        // The grid was rebuilt alongside the path searches, on these same positions.
        let mut velocities = std::mem::take(&mut self.avoid_velocities);
        let mut bodies = std::mem::take(&mut self.avoid_bodies);
        gather_bodies(&self.lanes, &self.neighbour_grid, &mut bodies);
        avoid_pass(
            &self.neighbour_grid,
            &bodies,
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
        self.avoid_velocities = velocities;
        self.avoid_bodies = bodies;
        jammed
    }

    /// Feedback: positions, vEnd, vAverage, stalls, arrivals. The lanes are written in
    /// parallel over runs of slots, each run noting the agents that have an event to
    /// report; the events, which read the world and may change it, follow in slot order.
    fn feedback(&mut self, feedback: &[super::StepFeedback], events: &mut Vec<CrowdEvent>) {
        let tolerance = self.config.arrive_tolerance_m;
        let stop_speed = self.config.stop_speed_mps;
        let snapshot = &self.snapshot;
        let marks = FeedbackLanes::new(&mut self.lanes)
            .into_pieces(super::parallel::LIGHT_AGENTS_PER_TASK)
            .map(|view| {
                let steps = &feedback[view.first..view.first + view.len];
                feedback_run(view, steps, snapshot, tolerance, stop_speed)
            })
            .reduce(Vec::new, |mut left, right| {
                left.extend(right);
                left
            });
        for (slot, mark) in marks {
            let agent = self.lanes.id[slot];
            // The request id is read from the world only when an event needs it.
            let Some(request) = self
                .world
                .get::<&MoveRequest>(agent.entity())
                .ok()
                .map(|m| m.request)
            else {
                continue;
            };
            match mark {
                FeedbackMark::Blocked => events.push(CrowdEvent::Blocked { agent, request }),
                FeedbackMark::HeadStartEnd => {
                    // The end of a head start, the path not yet come: walk on, greedily,
                    // from here, or stop and wait where no neighbour brings it nearer.
                    let target = self
                        .world
                        .get::<&MoveRequest>(agent.entity())
                        .map(|m| m.target)
                        .ok();
                    let further = target.and_then(|target| {
                        let corridor = head_start_corridor(
                            &self.snapshot,
                            self.lanes.polygon[slot],
                            self.lanes.position(slot),
                            target,
                            self.filter_of(slot),
                            false,
                        )?;
                        Some((corridor, target))
                    });
                    match further {
                        Some((corridor, target)) => self.walk_head_start(slot, &corridor, target),
                        None => {
                            // Nowhere nearer to go: the agent stops and waits.
                            let lanes = &mut self.lanes;
                            lanes.on_head_start[slot] = false;
                            lanes.corridor[slot] = None;
                            lanes.status[slot] = AgentStatus::WaitingForPath;
                        }
                    }
                }
                FeedbackMark::AtGoal => {
                    let lanes = &mut self.lanes;
                    let complete = lanes.corridor[slot].as_ref().is_some_and(|c| c.complete);
                    lanes.status[slot] = if complete {
                        AgentStatus::Arrived
                    } else {
                        AgentStatus::PartialArrived
                    };
                    lanes.corridor[slot] = None;
                    lanes.desired_x[slot] = 0.0;
                    lanes.desired_z[slot] = 0.0;
                    let _ = self.world.remove_one::<MoveRequest>(agent.entity());
                    events.push(if complete {
                        CrowdEvent::Arrived { agent, request }
                    } else {
                        CrowdEvent::PartialArrived { agent, request }
                    });
                }
            }
        }
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
            corridor: Option<std::sync::Arc<super::Corridor>>,
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
    snapshot: &crate::mesh::Snapshot,
) -> (u32, Vec<AgentId>, Vec<usize>) {
    let (mut funnel_runs, mut lost, mut at_link) = (0, Vec::new(), Vec::new());
    for (offset, &output) in outputs.iter().enumerate() {
        match output {
            Some(output) if !output.off_corridor => {
                funnel_runs += u32::from(output.refreshed);
                if output.cursor != view.cursor[offset] || output.refreshed {
                    if let Some(polygon) = view.corridor[offset]
                        .as_ref()
                        .and_then(|corridor| corridor.polygon(snapshot, output.cursor as usize))
                    {
                        view.cursor_polygon[offset] = polygon;
                    }
                }
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

lane_view! {
    /// What the feedback pass writes of each agent, and what it reads beside.
    FeedbackLanes {
        write {
            position_x: f32,
            position_y: f32,
            position_z: f32,
            polygon: crate::mesh::PolyRef,
            support: u32,
            velocity_valid: bool,
            velocity_x: f32,
            velocity_z: f32,
            average_x: f32,
            average_z: f32,
            stalled_s: f32,
            anchor_x: f32,
            anchor_z: f32,
            blocked: bool,
            progress_m: f32,
            unprogressed_s: f32,
        }
        read {
            status: AgentStatus,
            corner_x: f32,
            corner_z: f32,
            desired_x: f32,
            desired_z: f32,
            goal_x: f32,
            goal_z: f32,
            goal_polygon: crate::mesh::PolyRef,
            on_head_start: bool,
        }
    }
}

/// An event the feedback pass found for an agent, reported after the lanes are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FeedbackMark {
    /// The agent has stalled (h2): reported once per stall.
    Blocked,
    /// The agent is within the tolerance of its goal, stopped, and the goal's tile is
    /// still there.
    AtGoal,
    /// The agent walks a head start and stands on its last polygon: time to walk on.
    HeadStartEnd,
}

/// Adds a step's progress along the corridor (`along_m`, negative for a step back) to the
/// agent's count; returns the new (progress, seconds without progress): both start over
/// when the count reaches [`PROGRESS_STEP_M`](super::PROGRESS_STEP_M).
fn track_corridor_progress(
    progress_m: f32,
    unprogressed_s: f32,
    along_m: f32,
    dt: f32,
) -> (f32, f32) {
    let progress_m = progress_m + along_m;
    if progress_m >= super::PROGRESS_STEP_M {
        (0.0, 0.0)
    } else {
        (progress_m, unprogressed_s + dt)
    }
}

/// The feedback pass over one run of slots (`steps` are its agents' step feedback):
/// writes the lanes and returns the run's marks in slot order.
fn feedback_run(
    view: FeedbackLanes<'_>,
    steps: &[super::StepFeedback],
    snapshot: &crate::mesh::Snapshot,
    tolerance: f32,
    stop_speed: f32,
) -> Vec<(usize, FeedbackMark)> {
    let mut marks = Vec::new();
    for (offset, step) in steps.iter().enumerate() {
        let (end, average) = feedback_velocities(step);
        // Progress along the corridor: the net step toward the next corner, from where
        // the step began.
        let to_corner = Vec2::new(
            view.corner_x[offset] - view.position_x[offset],
            view.corner_z[offset] - view.position_z[offset],
        );
        let along_m = to_corner.normalize_or_zero().dot(average) * step.dt;
        view.position_x[offset] = step.foot.x;
        view.position_y[offset] = step.foot.y;
        view.position_z[offset] = step.foot.z;
        view.polygon[offset] = step.polygon;
        view.support[offset] = step.support;
        view.velocity_valid[offset] = step.velocity_valid;
        if step.velocity_valid {
            view.velocity_x[offset] = end.x;
            view.velocity_z[offset] = end.y;
        }
        view.average_x[offset] = average.x;
        view.average_z[offset] = average.y;
        if view.status[offset] != AgentStatus::Moving {
            view.stalled_s[offset] = 0.0;
            view.progress_m[offset] = 0.0;
            view.unprogressed_s[offset] = 0.0;
            continue;
        }
        (view.progress_m[offset], view.unprogressed_s[offset]) = track_corridor_progress(
            view.progress_m[offset],
            view.unprogressed_s[offset],
            along_m,
            step.dt,
        );
        let slot = view.first + offset;
        let flat = Vec2::new(step.foot.x, step.foot.z);
        let requesting = Vec2::new(view.desired_x[offset], view.desired_z[offset]) != Vec2::ZERO;
        let (anchor, stalled_s, stalled) = track_progress(
            Vec2::new(view.anchor_x[offset], view.anchor_z[offset]),
            view.stalled_s[offset],
            flat,
            requesting,
            step.dt,
        );
        view.anchor_x[offset] = anchor.x;
        view.anchor_z[offset] = anchor.y;
        view.stalled_s[offset] = stalled_s;
        if stalled && !view.blocked[offset] {
            view.blocked[offset] = true;
            marks.push((slot, FeedbackMark::Blocked));
        } else if !stalled && stalled_s == 0.0 {
            view.blocked[offset] = false;
        }
        let goal = Vec2::new(view.goal_x[offset], view.goal_z[offset]);
        if view.on_head_start[offset] {
            // Its end is no arrival: on its last polygon, the agent walks on (others
            // walking the same way may hold the very end point).
            if step.polygon == view.goal_polygon[offset] {
                marks.push((slot, FeedbackMark::HeadStartEnd));
            }
            continue;
        }
        let near = flat.distance(goal) <= tolerance;
        let stopped = step.velocity_valid && step.velocity_world_end.length() < stop_speed;
        // (The goal's tile is looked up only for an agent that is there.)
        if near && stopped && snapshot.tile(view.goal_polygon[offset]).is_some() {
            marks.push((slot, FeedbackMark::AtGoal));
        }
    }
    marks
}
