//! Path requests under one node budget per frame: oldest first, sliced, resumable.
//!
//! Requests wait in a queue in the order they were made. Each frame the scheduler answers
//! what it can from the corridor cache (no expansions), keeps one search open and steps it
//! with the rest of the frame's node budget, then opens the next; an unfinished search
//! resumes next frame where it stopped. Finished searches wait for the
//! crowd's single commit point (adoption).

use std::collections::VecDeque;
use std::sync::Arc;

use glam::Vec3;

use super::corridor::{Corridor, CorridorCache, CorridorKey};
use crate::mesh::{PolyRef, Snapshot};
use crate::query::{
    NODE_POOL_DEFAULT, NodePool, PathResult, PathSearch, Progress, QueryFilter, nearest_polygon,
};

/// A move request's identity: the logical request, its attempt (bumped on each re-issue after
/// a rejected result) and the crowd's epoch (bumped on restore).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId {
    /// The logical request.
    pub logical: u64,
    /// Attempt, from 0.
    pub attempt: u32,
    /// Crowd epoch.
    pub epoch: u32,
}

/// Node expansions all searches may spend in one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameBudget {
    /// Node expansions per step.
    pub node_expansions: u32,
}

impl Default for FrameBudget {
    fn default() -> Self {
        FrameBudget {
            node_expansions: 2048,
        }
    }
}

/// One path job.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Job {
    pub entity: hecs::Entity,
    pub request: RequestId,
    pub start: PolyRef,
    pub start_position: Vec3,
    /// The requested target; snapped to the mesh when the job's search opens.
    pub target: Vec3,
    /// The snapped goal (set when the search opens).
    pub goal: Option<(PolyRef, Vec3)>,
    pub queued_frame: u64,
}

/// What a finished job produced.
pub(crate) enum Outcome {
    /// A corridor (shared if it came from the cache).
    Corridor(Arc<Corridor>),
    /// The search could not run or its path could not become a corridor: try again.
    Retry,
    /// No walkable polygon near the target.
    NoGoal,
}

/// A finished job, waiting for adoption.
pub(crate) struct Finished {
    pub job: Job,
    pub outcome: Outcome,
}

/// Searches open at once. Oldest first means the oldest open search takes the whole
/// remaining budget; a second open search would only wait, holding a node pool.
const SEARCHES_OPEN: usize = 1;

/// Budget charged for snapping a target to the mesh, in node expansions (about the cost of
/// a nearest-polygon query), so a burst of fresh requests cannot stretch a frame.
const SNAP_COST_NODES: u32 = 8;

/// What the scheduler did in one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ScheduleStats {
    /// Node expansions spent.
    pub nodes_expanded: u32,
    /// Jobs finished (searched or cached).
    pub finished: u32,
    /// Jobs answered from the corridor cache.
    pub cache_hits: u32,
    /// Requests still queued or in flight after the step.
    pub queue_depth: u32,
    /// Frames the oldest waiting request has waited.
    pub oldest_wait_frames: u64,
}

/// The request queue, the open searches and their node pools.
pub(crate) struct Scheduler {
    queue: VecDeque<Job>,
    in_flight: Vec<(Job, PathSearch)>,
    pools: Vec<NodePool>,
    /// Heuristic weight of the searches (weighted A*).
    pub heuristic_weight: f32,
    /// Half extents of the target snapping box.
    pub snap_half_extents: Vec3,
    /// Frames each finished job waited (for the p95 report).
    pub waits: Vec<u64>,
}

impl Scheduler {
    pub fn new(heuristic_weight: f32, snap_half_extents: Vec3) -> Scheduler {
        Scheduler {
            queue: VecDeque::new(),
            in_flight: Vec::new(),
            pools: Vec::new(),
            heuristic_weight,
            snap_half_extents,
            waits: Vec::new(),
        }
    }

    pub fn enqueue(&mut self, job: Job) {
        self.queue.push_back(job);
    }

    pub fn depth(&self) -> usize {
        self.queue.len() + self.in_flight.len()
    }

    fn key(job: &Job, goal: PolyRef, filter: &QueryFilter) -> CorridorKey {
        CorridorKey {
            start: job.start,
            goal,
            filter: filter.version(),
            cost: filter.cost_version(),
        }
    }

    /// Runs one frame's worth of path finding; jobs `is_current` rejects are dropped unrun.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        snapshot: &Snapshot,
        filter: &QueryFilter,
        cache: &mut CorridorCache,
        budget: FrameBudget,
        frame: u64,
        is_current: &dyn Fn(&Job) -> bool,
        finished: &mut Vec<Finished>,
    ) -> ScheduleStats {
        let mut stats = ScheduleStats::default();
        let mut remaining = budget.node_expansions;
        loop {
            // Open searches up to the limit, answering from the cache where possible.
            while self.in_flight.len() < SEARCHES_OPEN && remaining > 0 {
                let Some(mut job) = self.queue.pop_front() else {
                    break;
                };
                if !is_current(&job) {
                    continue; // superseded, cancelled or removed since it was queued
                }
                remaining = remaining.saturating_sub(SNAP_COST_NODES);
                let goal = nearest_polygon(snapshot, job.target, self.snap_half_extents, filter)
                    .ok()
                    .flatten();
                let Some(goal) = goal else {
                    self.waits.push(frame - job.queued_frame);
                    finished.push(Finished {
                        job,
                        outcome: Outcome::NoGoal,
                    });
                    stats.finished += 1;
                    continue;
                };
                job.goal = Some((goal.polygon, goal.point));
                if let Some(corridor) =
                    cache.get(&Self::key(&job, goal.polygon, filter), snapshot, filter)
                {
                    self.waits.push(frame - job.queued_frame);
                    finished.push(Finished {
                        job,
                        outcome: Outcome::Corridor(corridor),
                    });
                    stats.cache_hits += 1;
                    stats.finished += 1;
                    continue;
                }
                let pool = self
                    .pools
                    .pop()
                    .unwrap_or_else(|| NodePool::new(NODE_POOL_DEFAULT));
                match PathSearch::new_weighted(
                    snapshot,
                    job.start,
                    job.start_position,
                    goal.polygon,
                    goal.point,
                    filter,
                    pool,
                    self.heuristic_weight,
                ) {
                    Ok(search) => self.in_flight.push((job, search)),
                    Err(_) => {
                        // A stale start: the adoption step re-issues it.
                        self.waits.push(frame - job.queued_frame);
                        finished.push(Finished {
                            job,
                            outcome: Outcome::Retry,
                        });
                        stats.finished += 1;
                    }
                }
            }
            if self.in_flight.is_empty() || remaining == 0 {
                break;
            }
            if !is_current(&self.in_flight[0].0) {
                let (_, search) = self.in_flight.remove(0);
                self.pools.push(search.into_result().1);
                continue;
            }
            // Oldest first: the first open search gets the budget until it finishes.
            let (job, search) = &mut self.in_flight[0];
            let progress = search.step(remaining);
            let expanded = match progress {
                Progress::InProgress { expanded } | Progress::Done { expanded } => expanded,
            };
            remaining -= expanded.min(remaining);
            stats.nodes_expanded += expanded;
            if search.is_finished() {
                let job = *job;
                let (_, search) = self.in_flight.remove(0);
                let (result, pool) = search.into_result();
                self.pools.push(pool);
                let goal = job.goal.expect("an open search has its goal").0;
                let outcome = match corridor_of(snapshot, &result).map(Arc::new) {
                    Some(corridor) => {
                        cache.insert(Self::key(&job, goal, filter), corridor.clone());
                        Outcome::Corridor(corridor)
                    }
                    None => Outcome::Retry,
                };
                self.waits.push(frame - job.queued_frame);
                finished.push(Finished { job, outcome });
                stats.finished += 1;
            } else if remaining == 0 {
                break;
            }
        }
        stats.queue_depth = self.depth() as u32;
        stats.oldest_wait_frames = self
            .in_flight
            .iter()
            .map(|(job, _)| job)
            .chain(self.queue.iter())
            .map(|job| frame - job.queued_frame)
            .max()
            .unwrap_or(0);
        stats
    }
}

fn corridor_of(snapshot: &Snapshot, result: &PathResult) -> Option<Corridor> {
    Corridor::from_path(snapshot, result)
}
