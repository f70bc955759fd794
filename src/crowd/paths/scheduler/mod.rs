//! Path requests under one node budget per frame: oldest first, sliced, resumable.
//!
//! Requests wait in a queue in the order they were made. Each frame the scheduler first
//! gives up to [`FrameBudget::head_starts`] fresh requests a head start (a few polygons
//! toward the target by greedy descent, [`head_start`]: no search, a few adjacency reads),
//! so an agent ordered to move starts walking within frames even in a burst of thousands
//! of orders; its request stays queued for the real path. Then it answers what it can from
//! the corridor cache (no expansions), keeps a few searches open and steps them in
//! parallel rounds, each with an equal share of the rest of the frame's node budget,
//! opening the next as one finishes; an unfinished search resumes next frame where it
//! stopped. A search starts where its agent stands when it opens (after walking its head
//! start), not where it stood when ordered. Finished searches and head starts wait for
//! the crowd's single commit point (adoption).

use crate::crowd::agents::RequestId;
use std::collections::VecDeque;
use std::sync::Arc;

use glam::Vec3;
use rayon::prelude::*;

use super::corridor::{Corridor, CorridorCache, CorridorKey};
use crate::crowd::agents::{AgentId, FilterId};
use crate::crowd::codec::RestoreError;
use crate::crowd::codec::{Reader, Saved, Writer, saved_struct};
use crate::mesh::{PolyRef, Snapshot};
use crate::query::{
    HEAD_START_STEPS, NODE_POOL_DEFAULT, NodePool, PathResult, PathSearch, Progress, QueryFilter,
    head_start, nearest_polygon,
};
use shared::{SHARED_PATH_COST_NODES, SharedDestinations};
pub(crate) use waits::PathWaits;

/// Queue room beyond one request per agent (re-issued attempts whose superseded job is
/// still queued).
const QUEUE_MARGIN: usize = 256;

/// What path finding may spend in one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FrameBudget {
    /// Node expansions per step, all searches together.
    pub node_expansions: u32,
    /// Fresh requests given a head start per step (a few adjacency reads each, about a
    /// microsecond; 0: none, agents stand until their path is found).
    pub head_starts: u32,
    /// Wall-clock time the searches may take per step, milliseconds, on top of the node
    /// budget (0: no time limit). The scheduler stops opening and stepping searches once
    /// it is spent, after at least one round (so paths still come on a slow frame). A
    /// time limit makes which searches finish in a frame depend on the machine's speed,
    /// so runs are no longer repeatable bit for bit; the node budget alone keeps them so.
    pub search_time_ms: f32,
}

impl FrameBudget {
    /// The crowd's default budget.
    pub(crate) const DEFAULT: FrameBudget = FrameBudget {
        node_expansions: 2048,
        // A burst of 10,000 orders walking within 5 frames, 100,000 within 49.
        head_starts: 2048,
        search_time_ms: 0.0,
    };
}

impl Default for FrameBudget {
    fn default() -> Self {
        FrameBudget::DEFAULT
    }
}

/// One path job.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Job {
    pub agent: AgentId,
    /// The agent's query filter when the request was issued.
    pub filter: FilterId,
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
pub(crate) enum Answer {
    /// A corridor (shared if it came from the cache).
    Corridor(Arc<Corridor>),
    /// A head start to walk while the request stays queued for its path.
    HeadStart(Arc<Corridor>),
    /// The search could not run or its path could not become a corridor: try again.
    Retry,
    /// No walkable polygon near the target.
    NoGoal,
}

/// A search finished in a round, with its corridor built.
struct Done {
    job: Job,
    corridor: Option<Arc<Corridor>>,
    pool: NodePool,
}

/// A finished job, waiting for adoption.
pub(crate) struct Finished {
    pub job: Job,
    pub outcome: Answer,
}

/// Searches open at once. They share each round's budget equally (the first ones get the
/// remainder's extra nodes) and are stepped in parallel; the number is a constant, not
/// the thread count, so which search gets how many nodes, and so every result, is the
/// same on any number of threads.
const SEARCHES_OPEN: usize = 16;

/// Budget charged for snapping a target to the mesh, in node expansions (about the cost of
/// a nearest-polygon query), so a burst of fresh requests cannot stretch a frame.
const SNAP_COST_NODES: u32 = 8;

/// The identities of a step's answers so far, looked up in constant time: a step that
/// answers ten thousand requests would otherwise compare each new one with every answer
/// before it.
struct AnsweredThisStep {
    identities: std::collections::HashSet<(AgentId, RequestId)>,
    /// Answers in `finished` taken in so far.
    taken: usize,
}

impl AnsweredThisStep {
    /// None yet; the step's answers start at `finished[from]`.
    fn from(from: usize) -> AnsweredThisStep {
        AnsweredThisStep {
            identities: std::collections::HashSet::new(),
            taken: from,
        }
    }

    /// Takes in the answers added to `finished` since the last call.
    fn catch_up(&mut self, finished: &[Finished]) {
        for done in &finished[self.taken..] {
            self.identities.insert((done.job.agent, done.job.request));
        }
        self.taken = finished.len();
    }

    fn contains(&self, job: &Job) -> bool {
        self.identities.contains(&(job.agent, job.request))
    }
}

/// What the scheduler did in one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ScheduleStats {
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
    /// Requests not yet given a head start, newer than every request in `queue`.
    fresh: VecDeque<Job>,
    /// Requests waiting for a search, oldest first.
    queue: VecDeque<Job>,
    in_flight: Vec<(Job, PathSearch)>,
    pools: Vec<NodePool>,
    /// The fresh jobs given a head start this frame, and their walks (reused buffers).
    head_start_batch: Vec<Job>,
    head_start_corridors: Vec<Option<Arc<Corridor>>>,
    /// Heuristic weight of the searches (weighted A*).
    pub heuristic_weight: f32,
    /// Half extents of the target snapping box.
    pub snap_half_extents: Vec3,
    /// Frames each finished job waited (for the p95 report).
    pub waits: PathWaits,
    /// Targets many queued jobs share, and the trees that answer them.
    shared: SharedDestinations,
}

impl Scheduler {
    /// A scheduler with its [`SEARCHES_OPEN`] node pools made for `snapshot`'s mesh (see
    /// [`NodePool::for_snapshot`]).
    pub fn new(heuristic_weight: f32, snap_half_extents: Vec3, snapshot: &Snapshot) -> Scheduler {
        Scheduler {
            fresh: VecDeque::new(),
            queue: VecDeque::new(),
            in_flight: Vec::new(),
            pools: (0..SEARCHES_OPEN)
                .map(|_| NodePool::for_snapshot(NODE_POOL_DEFAULT, snapshot))
                .collect(),
            head_start_batch: Vec::new(),
            head_start_corridors: Vec::new(),
            heuristic_weight,
            snap_half_extents,
            waits: PathWaits::default(),
            shared: SharedDestinations::default(),
        }
    }

    pub fn enqueue(&mut self, job: Job) {
        self.fresh.push_back(job);
    }

    /// The oldest request waiting for a search: those that had a head start are older
    /// than those that did not.
    fn pop_oldest(&mut self) -> Option<Job> {
        self.queue.pop_front().or_else(|| self.fresh.pop_front())
    }

    /// Whether a query of the same identity (logical id, attempt and epoch, for the same
    /// agent) is searching now or among this step's answers (`answered`, kept up to date
    /// with `finished` from `answers_from` on by [`AnsweredThisStep::catch_up`]): dispatch
    /// is deduplicated by identity, so a query queued twice is searched once (spec 001).
    fn dispatched(&self, job: &Job, answered: &AnsweredThisStep) -> bool {
        let same = |other: &Job| other.request == job.request && other.agent == job.agent;
        self.in_flight.iter().any(|(open, _)| same(open)) || answered.contains(job)
    }

    /// Makes room in the queue for one request per agent and a margin, so a burst of
    /// requests (every agent told to move at once) does not regrow it inside a step: a
    /// doubling would copy the whole queue at once. `fresh_most` is the most fresh
    /// requests expected at once (taken in at the ingest
    /// rate and given head starts at the same rate, the fresh queue holds about one frame's
    /// worth; it still grows past that if it must).
    pub fn try_reserve_for_agents(
        &mut self,
        agents: usize,
        fresh_most: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        let most = agents.saturating_add(QUEUE_MARGIN);
        self.queue
            .try_reserve(most.saturating_sub(self.queue.len()))?;
        let fresh_most = fresh_most.saturating_add(QUEUE_MARGIN);
        self.fresh
            .try_reserve(fresh_most.saturating_sub(self.fresh.len()))
    }

    pub fn depth(&self) -> usize {
        self.fresh.len() + self.queue.len() + self.in_flight.len()
    }

    /// Gives up to `most` fresh requests a head start, oldest first, computed in parallel
    /// and reported in queue order; each then waits in the queue for its search. A walk
    /// that goes nowhere (the agent already stands nearest the target among its
    /// neighbours) or fails is not reported.
    fn head_starts(
        &mut self,
        snapshot: &Snapshot,
        filters: &[QueryFilter],
        most: u32,
        is_current: &dyn Fn(&Job) -> bool,
        finished: &mut Vec<Finished>,
    ) {
        // Both buffers are the scheduler's, reused frame after frame.
        let mut batch = std::mem::take(&mut self.head_start_batch);
        let mut corridors = std::mem::take(&mut self.head_start_corridors);
        batch.clear();
        while batch.len() < most as usize {
            let Some(job) = self.fresh.pop_front() else {
                break;
            };
            if is_current(&job) {
                batch.push(job);
            }
        }
        batch
            .par_iter()
            .with_min_len(crate::crowd::compute::parallel::task_min(64))
            .map(|job| {
                head_start_corridor(
                    snapshot,
                    job.start,
                    job.start_position,
                    job.target,
                    &filters[job.filter.index()],
                    true,
                )
            })
            .collect_into_vec(&mut corridors);
        for (&job, corridor) in batch.iter().zip(corridors.drain(..)) {
            if let Some(corridor) = corridor {
                finished.push(Finished {
                    job,
                    outcome: Answer::HeadStart(corridor),
                });
            }
            self.queue.push_back(job);
        }
        self.head_start_batch = batch;
        self.head_start_corridors = corridors;
    }

    fn key(job: &Job, goal: PolyRef, filter: &QueryFilter) -> CorridorKey {
        CorridorKey {
            start: job.start,
            goal,
            filter_id: job.filter,
            filter: filter.version(),
            cost: filter.cost_version(),
        }
    }

    /// The search of `job` (its goal snapped), on a pool from the scheduler's spares.
    fn open_search(
        &mut self,
        snapshot: &Snapshot,
        job: &Job,
        filter: &QueryFilter,
    ) -> Result<PathSearch, crate::query::QueryError> {
        let (goal, goal_position) = job.goal.expect("the job's goal is snapped first");
        let pool = self
            .pools
            .pop()
            .unwrap_or_else(|| NodePool::new(NODE_POOL_DEFAULT));
        PathSearch::new_weighted(
            snapshot,
            job.start,
            job.start_position,
            goal,
            goal_position,
            filter,
            pool,
            self.heuristic_weight,
        )
    }

    /// Runs one frame's worth of path finding; jobs `is_current` rejects are dropped unrun.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        snapshot: &Snapshot,
        filters: &[QueryFilter],
        cache: &mut CorridorCache,
        budget: FrameBudget,
        frame: u64,
        is_current: &dyn Fn(&Job) -> bool,
        standing: &dyn Fn(&Job) -> Option<(PolyRef, Vec3)>,
        around_crowds: &dyn Fn(&Job) -> Option<Arc<[f32]>>,
        finished: &mut Vec<Finished>,
    ) -> ScheduleStats {
        let mut stats = ScheduleStats::default();
        self.head_starts(snapshot, filters, budget.head_starts, is_current, finished);
        self.shared
            .count(self.queue.iter().chain(self.fresh.iter()), snapshot);
        // This step's answers start here (the head starts before them are no answers).
        let answers_from = finished.len();
        let mut answered = AnsweredThisStep::from(answers_from);
        let mut remaining = budget.node_expansions;
        let clock = std::time::Instant::now();
        let out_of_time = || {
            budget.search_time_ms > 0.0
                && clock.elapsed().as_secs_f32() * 1e3 >= budget.search_time_ms
        };
        let mut rounds_run = 0u32;
        loop {
            // Open searches up to the limit, answering from the cache where possible.
            while self.in_flight.len() < SEARCHES_OPEN && remaining > 0 {
                let Some(mut job) = self.pop_oldest() else {
                    break;
                };
                if !is_current(&job) {
                    continue; // superseded, cancelled or removed since it was queued
                }
                answered.catch_up(finished);
                if self.dispatched(&job, &answered) {
                    continue; // the same query (logical id and attempt) is served already
                }
                // From where the agent stands now: it may have walked a head start.
                if let Some((start, position)) = standing(&job) {
                    job.start = start;
                    job.start_position = position;
                }
                remaining = remaining.saturating_sub(SNAP_COST_NODES);
                let filter = &filters[job.filter.index()];
                let goal = nearest_polygon(snapshot, job.target, self.snap_half_extents, filter)
                    .ok()
                    .flatten();
                let Some(goal) = goal else {
                    self.waits.record(frame - job.queued_frame);
                    finished.push(Finished {
                        job,
                        outcome: Answer::NoGoal,
                    });
                    stats.finished += 1;
                    continue;
                };
                job.goal = Some((goal.polygon, goal.point));
                if let Some(factors) = around_crowds(&job) {
                    // A walker's re-plan round crowds: searched to the end now, on this
                    // thread (rare, and never left in flight between steps), charged to
                    // the budget, neither served from the cache nor kept in it.
                    let outcome = match self.open_search(snapshot, &job, filter) {
                        Ok(mut search) => {
                            search.set_polygon_costs(factors);
                            search.step(u32::MAX);
                            let expanded = search.nodes_expanded();
                            let (result, pool) = search.into_result();
                            self.pools.push(pool);
                            remaining = remaining.saturating_sub(expanded);
                            stats.nodes_expanded += expanded;
                            corridor_of(snapshot, &result).map_or(Answer::Retry, |corridor| {
                                Answer::Corridor(Arc::new(corridor))
                            })
                        }
                        Err(_) => Answer::Retry,
                    };
                    self.waits.record(frame - job.queued_frame);
                    finished.push(Finished { job, outcome });
                    stats.finished += 1;
                    continue;
                }
                if let Some(corridor) =
                    cache.get(&Self::key(&job, goal.polygon, filter), snapshot, filter)
                {
                    self.waits.record(frame - job.queued_frame);
                    finished.push(Finished {
                        job,
                        outcome: Answer::Corridor(corridor),
                    });
                    stats.cache_hits += 1;
                    stats.finished += 1;
                    continue;
                }
                // A target many agents were sent to: read off its tree (a start the tree
                // does not reach is searched as usual).
                if self.shared.is_shared(&job) {
                    let corridor = self
                        .shared
                        .path(snapshot, &job, filter)
                        .and_then(|path| corridor_of(snapshot, &path));
                    if let Some(corridor) = corridor {
                        remaining = remaining.saturating_sub(SHARED_PATH_COST_NODES);
                        self.waits.record(frame - job.queued_frame);
                        finished.push(Finished {
                            job,
                            outcome: Answer::Corridor(Arc::new(corridor)),
                        });
                        stats.finished += 1;
                        continue;
                    }
                }
                match self.open_search(snapshot, &job, filter) {
                    Ok(search) => self.in_flight.push((job, search)),
                    Err(_) => {
                        // A stale start: the adoption step re-issues it.
                        self.waits.record(frame - job.queued_frame);
                        finished.push(Finished {
                            job,
                            outcome: Answer::Retry,
                        });
                        stats.finished += 1;
                    }
                }
            }
            // Drop searches whose request was superseded meanwhile.
            let mut kept = Vec::with_capacity(self.in_flight.len());
            for (job, search) in self.in_flight.drain(..) {
                if is_current(&job) {
                    kept.push((job, search));
                } else {
                    self.pools.push(search.into_result().1);
                }
            }
            self.in_flight = kept;
            if self.in_flight.is_empty() || remaining == 0 || (rounds_run > 0 && out_of_time()) {
                break;
            }
            rounds_run += 1;
            // One round: every open search steps with its share of what is left, in
            // parallel, oldest first in the order they were opened; a search that finishes
            // builds its corridor on the same thread.
            let open = self.in_flight.len() as u32;
            let (share, extra) = (remaining / open, remaining % open);
            let mut searches: Vec<Option<(Job, PathSearch)>> =
                self.in_flight.drain(..).map(Some).collect();
            let rounds: Vec<(u32, Option<Done>)> = searches
                .par_iter_mut()
                .with_min_len(crate::crowd::compute::parallel::task_min(1))
                .enumerate()
                .map(|(index, entry)| {
                    let nodes = share + u32::from((index as u32) < extra);
                    let (_, search) = entry.as_mut().expect("every entry is open");
                    if nodes == 0 {
                        return (0, None);
                    }
                    let expanded = match search.step(nodes) {
                        Progress::InProgress { expanded } | Progress::Done { expanded } => expanded,
                    };
                    if !search.is_finished() {
                        return (expanded, None);
                    }
                    let (job, search) = entry.take().expect("every entry is open");
                    let (result, pool) = search.into_result();
                    let corridor = corridor_of(snapshot, &result).map(Arc::new);
                    (
                        expanded,
                        Some(Done {
                            job,
                            corridor,
                            pool,
                        }),
                    )
                })
                .collect();
            self.in_flight = searches.into_iter().flatten().collect();
            let expanded: u32 = rounds.iter().map(|(expanded, _)| expanded).sum();
            remaining -= expanded.min(remaining);
            stats.nodes_expanded += expanded;
            let mut any_finished = false;
            for Done {
                job,
                corridor,
                pool,
            } in rounds.into_iter().filter_map(|(_, done)| done)
            {
                any_finished = true;
                self.pools.push(pool);
                let goal = job.goal.expect("an open search has its goal").0;
                let outcome = match corridor {
                    Some(corridor) => {
                        let filter = &filters[job.filter.index()];
                        cache.insert(Self::key(&job, goal, filter), corridor.clone());
                        Answer::Corridor(corridor)
                    }
                    None => Answer::Retry,
                };
                self.waits.record(frame - job.queued_frame);
                finished.push(Finished { job, outcome });
                stats.finished += 1;
            }
            if !any_finished && (remaining == 0 || expanded == 0) {
                break;
            }
        }
        stats.queue_depth = self.depth() as u32;
        stats.oldest_wait_frames = self
            .in_flight
            .iter()
            .map(|(job, _)| job)
            .chain(self.queue.iter())
            .chain(self.fresh.iter())
            .map(|job| frame - job.queued_frame)
            .max()
            .unwrap_or(0);
        stats
    }
}

saved_struct!(Job {
    agent,
    filter,
    request,
    start,
    start_position,
    target,
    goal,
    queued_frame,
});

impl Scheduler {
    /// Writes the queues in order and each open search as its job and the nodes it has
    /// expanded (a search is restored by running it again that far: see
    /// [`PathSearch::nodes_expanded`]), then the waits.
    pub fn write_state(&self, out: &mut Writer) {
        for queue in [&self.fresh, &self.queue] {
            out.len(queue.len());
            for job in queue {
                job.write(out);
            }
        }
        out.len(self.in_flight.len());
        for (job, search) in &self.in_flight {
            job.write(out);
            out.u32(search.nodes_expanded());
        }
        self.waits.write(out);
    }

    /// Reads what [`Scheduler::write_state`] wrote into this (new) scheduler, opening each
    /// saved search again on `snapshot` and running it as far as it had run. A job whose
    /// filter is not in `filters`, or whose search cannot open, is refused as malformed
    /// (the save's snapshot is the one it opened on).
    pub fn read_state(
        &mut self,
        input: &mut Reader,
        snapshot: &Snapshot,
        filters: &[QueryFilter],
    ) -> Result<(), RestoreError> {
        let check_filter = |input: &Reader, job: &Job| match filters.get(job.filter.index()) {
            Some(filter) => Ok(filter.clone()),
            None => Err(input.malformed(format!(
                "a path job under filter {} of a table of {}",
                job.filter.index(),
                filters.len()
            ))),
        };
        for queue in [&mut self.fresh, &mut self.queue] {
            let jobs: Vec<Job> = Saved::read(input)?;
            for job in &jobs {
                check_filter(input, job)?;
            }
            queue.extend(jobs);
        }
        let open: Vec<(Job, u32)> = Saved::read(input)?;
        if open.len() > SEARCHES_OPEN {
            return Err(input.malformed(format!(
                "{} open searches (at most {SEARCHES_OPEN})",
                open.len()
            )));
        }
        for (job, expanded) in open {
            let filter = check_filter(input, &job)?;
            let Some((goal, goal_position)) = job.goal else {
                return Err(input.malformed("an open search without its goal"));
            };
            let pool = self
                .pools
                .pop()
                .unwrap_or_else(|| NodePool::new(NODE_POOL_DEFAULT));
            let mut search = PathSearch::new_weighted(
                snapshot,
                job.start,
                job.start_position,
                goal,
                goal_position,
                &filter,
                pool,
                self.heuristic_weight,
            )
            .map_err(|error| {
                input.malformed(format!("an open search that cannot start: {error}"))
            })?;
            search.step(expanded);
            if search.nodes_expanded() != expanded {
                return Err(input.malformed(format!(
                    "an open search saved after {expanded} nodes ends after {}",
                    search.nodes_expanded()
                )));
            }
            self.in_flight.push((job, search));
        }
        self.waits = Saved::read(input)?;
        Ok(())
    }

    /// After the crowd took a new snapshot (`set_mesh`): each open search that has read
    /// something the change touched is closed and returned with what changed (its query
    /// expires: a result from it would be stale, spec 001 h1); the others go back to the
    /// head of the queue, in their order, to start again on the new snapshot (their goals
    /// snapped again when they reopen). A search keeps the snapshot it started on, and one
    /// carried across a mesh change would answer from a mesh the crowd no longer runs on,
    /// which no restore could rebuild: a restore starts open searches on the mesh it is
    /// given.
    pub fn close_open_searches(
        &mut self,
        snapshot: &Snapshot,
        filters: &[QueryFilter],
    ) -> Vec<(Job, crate::query::Validity)> {
        let mut expired = Vec::new();
        let mut restarted = Vec::new();
        for (mut job, search) in self.in_flight.drain(..) {
            let filter = &filters[job.filter.index()];
            let validity = search.read_set().still_valid_in(snapshot, filter, |_| None);
            self.pools.push(search.into_result().1);
            if validity == crate::query::Validity::Valid {
                job.goal = None;
                restarted.push(job);
            } else {
                expired.push((job, validity));
            }
        }
        for job in restarted.into_iter().rev() {
            self.queue.push_front(job);
        }
        expired
    }

    /// Gives every queued or open job that `relabel` maps a new request id (a restore's
    /// new epoch), keeping each in its place.
    pub fn relabel(&mut self, relabel: impl Fn(&Job) -> Option<RequestId>) {
        let jobs = self
            .fresh
            .iter_mut()
            .chain(self.queue.iter_mut())
            .chain(self.in_flight.iter_mut().map(|(job, _)| job));
        for job in jobs {
            if let Some(request) = relabel(job) {
                job.request = request;
            }
        }
    }
}

/// A head start from `start` toward `target` as a corridor ([`head_start`]; with
/// `sideways_first` for a first walk, without for one continued from where another ended),
/// or `None` when the walk goes nowhere or cannot run.
pub(crate) fn head_start_corridor(
    snapshot: &Snapshot,
    start: PolyRef,
    start_position: Vec3,
    target: Vec3,
    filter: &QueryFilter,
    sideways_first: bool,
) -> Option<Arc<Corridor>> {
    let path = head_start(
        snapshot,
        start,
        start_position,
        target,
        filter,
        HEAD_START_STEPS,
        sideways_first,
    )
    .ok()?;
    if path.steps.len() < 2 {
        return None;
    }
    corridor_of(snapshot, &path).map(Arc::new)
}

fn corridor_of(snapshot: &Snapshot, result: &PathResult) -> Option<Corridor> {
    Corridor::from_path(snapshot, result)
}

mod shared;
#[cfg(test)]
mod tests;
mod waits;
