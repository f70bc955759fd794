//! The measured crowd run: agents placed and ordered, stepped for a number of frames, and
//! everything a report needs measured on the way. One loop for the CLI, the scenarios, the
//! stress runs, the benchmarks and the tests.
//!
//! Stage: harness. Inputs: a crowd, each agent's start and targets ([`Plans`], built from
//! [`AgentPlan`]s or drawn flat), the run options. Output: a [`RunReport`]: frame and pass
//! times (measured frames only, after the warm-up), arrivals and other events, overlaps and
//! agents off the mesh (measured outside the timed step), flow ([`FlowMeter`]), path waits.
//!
//! Invariant: only `Crowd::step` is timed; everything else runs between steps.

use std::time::Instant;

use glam::Vec3;

use super::resume::{ByAgent, ResumeError, RunState, settings_fingerprint};
use super::scenario::{DepthHistogram, measure_quality};
use crate::crowd::Fnv;
use crate::crowd::internals::{FlowMeter, FlowReport, NeighbourGrid};
use crate::crowd::{
    AgentId, AgentParams, Crowd, CrowdConfig, CrowdError, CrowdEvent, FailureCondition,
    KinematicController, Outcome, PathWaits, StepStats,
};
use crate::mesh::NavMesh;
use crate::query::{QueryFilter, nearest_polygon};

/// One agent of a run: where it starts, and the targets it is sent to in turn.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentPlan {
    /// Start, snapped to the mesh.
    pub start: Vec3,
    /// Targets, at least one; with [`RunOptions::retarget`] the agent cycles through them.
    pub targets: Vec<Vec3>,
}

/// Every agent's plan of a run, kept flat: the starts in one list, all the targets in
/// another, and where each plan's targets end. A list of [`AgentPlan`]s holds a heap
/// allocation an agent; at 100,000 agents with 16 targets each that is 4 MB of vector
/// headers and allocator bookkeeping beside the 19 MB of targets, and the run reads the
/// plans only by index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plans {
    starts: Vec<Vec3>,
    /// Per plan, the end of its targets in `targets` (the start is the previous plan's end).
    ends: Vec<usize>,
    targets: Vec<Vec3>,
}

impl Plans {
    /// No plans, with room for `agents` plans of `targets_each` targets.
    pub fn with_capacity(agents: usize, targets_each: usize) -> Plans {
        Plans {
            starts: Vec::with_capacity(agents),
            ends: Vec::with_capacity(agents),
            targets: Vec::with_capacity(agents.saturating_mul(targets_each)),
        }
    }

    /// Adds a plan: an agent starting at `start`, sent to `targets` in turn.
    pub fn push(&mut self, start: Vec3, targets: impl IntoIterator<Item = Vec3>) {
        self.starts.push(start);
        self.targets.extend(targets);
        self.ends.push(self.targets.len());
    }

    /// Number of plans.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Plan `index`'s start; `None` past the last plan.
    pub fn start(&self, index: usize) -> Option<Vec3> {
        self.starts.get(index).copied()
    }

    /// Plan `index`'s targets (empty past the last plan).
    pub fn targets(&self, index: usize) -> &[Vec3] {
        let Some(&end) = self.ends.get(index) else {
            return &[];
        };
        let begin = index.checked_sub(1).map_or(0, |before| self.ends[before]);
        &self.targets[begin..end]
    }

    /// Each plan's start and targets, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Vec3, &[Vec3])> + '_ {
        (0..self.len()).map(|index| (self.starts[index], self.targets(index)))
    }
}

impl FromIterator<AgentPlan> for Plans {
    fn from_iter<I: IntoIterator<Item = AgentPlan>>(plans: I) -> Plans {
        let mut flat = Plans::default();
        for plan in plans {
            flat.push(plan.start, plan.targets);
        }
        flat
    }
}

impl From<Vec<AgentPlan>> for Plans {
    fn from(plans: Vec<AgentPlan>) -> Plans {
        plans.into_iter().collect()
    }
}

/// How a run goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunOptions {
    /// Step length, seconds.
    pub dt_s: f32,
    /// Frames stepped before the measured ones (left out of times and event counts).
    pub warm_up_frames: usize,
    /// Measured frames, at most.
    pub frames: usize,
    /// Whether overlaps and agents off the mesh are measured after each measured step.
    pub measure_quality: bool,
    /// Whether an agent that arrives (or reaches the end of a partial path, or has no path)
    /// is sent on to its next target; otherwise it stays.
    pub retarget: bool,
    /// Whether arrivals and partial ends are also counted, and agents sent on, by the
    /// comparison rule of the native DetourCrowd reference run (see [`run_crowd`]), which
    /// does not wait for an agent to stop; otherwise by the crowd's events alone. Only
    /// with [`RunOptions::retarget`].
    pub comparison_rule: bool,
    /// Whether the run stops once every agent has arrived once.
    pub stop_when_all_arrived: bool,
    /// Whether agents starting off the mesh are left out (counted) instead of failing the
    /// run.
    pub skip_off_mesh_starts: bool,
    /// After how many steps of this run (warm-up included) to save the run into
    /// [`RunReport::saved_state`], for [`resume_crowd`]; the run goes on.
    pub save_at_frame: Option<usize>,
    /// A fingerprint of whatever else the run depends on that the crowd does not hold (a
    /// CLI's level flags: a generated level's belt share), saved with the run and checked by
    /// [`resume_crowd`] beside the crowd's settings and the step length (0: nothing else).
    pub settings_tag: u64,
}

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Agents in the crowd.
    pub agents: usize,
    /// Planned agents left out because their start is off the mesh.
    pub skipped_off_mesh: usize,
    /// Measured frames stepped.
    pub frames: usize,
    /// Per measured frame, the step's wall time, ms.
    pub frame_ms: Vec<f64>,
    /// Per measured frame, how long the process's threads waited for a CPU, ms (empty
    /// where that is not known).
    pub cpu_wait_ms: Vec<f64>,
    /// Per measured frame, the process's threads' time on a CPU, ms (empty where that is
    /// not known): a frame that took long in wall time but little CPU time lost its cores.
    pub cpu_ms: Vec<f64>,
    /// Per measured frame, each pass's time, ms, in [`StepStats::PASS_NAMES`] order.
    pub pass_ms: Vec<[f64; StepStats::PASSES]>,
    /// Complete arrivals in the measured frames (within the arrival tolerance of the
    /// requested target; see [`run_crowd`]).
    pub arrivals: usize,
    /// Ends of partial paths (targets unreachable), counted apart from arrivals.
    pub partial_arrivals: usize,
    /// Blocked events.
    pub blocked: usize,
    /// Orders that found no polygon at their target.
    pub no_path: usize,
    /// The last step's counters.
    pub last: StepStats,
    /// The most nodes the searches expanded in a measured frame.
    pub nodes_expanded_max_frame: u32,
    /// Walkers joined back to their corridors after a push, summed over measured frames
    /// ([`StepStats::reconnected`]).
    pub reconnected: u64,
    /// Agents whose funnel ran (their corner found again), summed over measured frames
    /// ([`StepStats::funnel_runs`]).
    pub funnel_runs: u64,
    /// The 95th percentile of frames a path request waited, over requests answered in the
    /// measured frames.
    pub path_wait_frames_p95: u64,
    /// Overlapping pairs summed over measured frames (0 unless measured).
    pub overlap_pairs_total: u64,
    /// Of those, the pairs with a walker passing through in them
    /// ([`FrameQuality::overlap_pairs_passing`](crate::harness::FrameQuality::overlap_pairs_passing)).
    pub overlap_pairs_passing_total: u64,
    /// The depths of those pairs.
    pub overlap_depths: DepthHistogram,
    /// The deepest overlap seen, metres.
    pub max_overlap_m: f32,
    /// The most agents off the mesh in a frame.
    pub off_mesh_agents: u32,
    /// Flow over the measured frames.
    pub flow: FlowReport,
    /// Agents still without their first searched path after the last step.
    pub waiting_for_first_path: usize,
    /// The measured frame (counted from 1) at which each agent first arrived, in order.
    pub first_arrival_frames: Vec<usize>,
    /// Whether every agent arrived (once) before the run ended.
    pub all_arrived: bool,
    /// How the orders that ended in the measured frames ended.
    pub outcomes: OutcomeCounts,
    /// The run saved at [`RunOptions::save_at_frame`] (the crowd's bytes and each agent's
    /// place in its plan), for [`resume_crowd`].
    pub saved_state: Option<Vec<u8>>,
}

/// Orders ended, by outcome ([`CrowdEvent::OrderEnded`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutcomeCounts {
    /// Ended in `Success`.
    pub success: usize,
    /// Ended in `Failure(Unreachable)`: at a partial path's end.
    pub unreachable: usize,
    /// Ended in `Failure(NoPath)`.
    pub no_path: usize,
    /// Ended in `Failure(DeadlinePassed)`.
    pub deadline_passed: usize,
    /// Ended in `Failure(Blocked(_))`.
    pub blocked: usize,
    /// Ended `Cancelled` (a cancel, a newer order, a removal).
    pub cancelled: usize,
    /// Ended in `Failure(Hold(_))`.
    pub hold_failed: usize,
    /// Ended in `Failure(Interaction(_))`.
    pub interaction_failed: usize,
}

impl OutcomeCounts {
    /// Counts one ended order.
    pub fn count(&mut self, outcome: Outcome) {
        let counter = match outcome {
            Outcome::Success => &mut self.success,
            Outcome::Failure(FailureCondition::Unreachable) => &mut self.unreachable,
            Outcome::Failure(FailureCondition::NoPath) => &mut self.no_path,
            Outcome::Failure(FailureCondition::DeadlinePassed) => &mut self.deadline_passed,
            Outcome::Failure(FailureCondition::Blocked(_)) => &mut self.blocked,
            Outcome::Failure(FailureCondition::Hold(_)) => &mut self.hold_failed,
            Outcome::Failure(FailureCondition::Interaction(_)) => &mut self.interaction_failed,
            Outcome::Cancelled => &mut self.cancelled,
        };
        *counter += 1;
    }
}

impl RunReport {
    /// Overlapping pairs per measured frame.
    pub fn overlap_pairs_per_frame(&self) -> f64 {
        self.overlap_pairs_total as f64 / self.frames.max(1) as f64
    }

    /// Mean over measured frames of overlapping pairs with a walker passing through in
    /// them.
    pub fn overlap_pairs_passing_per_frame(&self) -> f64 {
        self.overlap_pairs_passing_total as f64 / self.frames.max(1) as f64
    }

    /// The median step time, ms.
    pub fn median_frame_ms(&self) -> f64 {
        median(&mut self.frame_ms.clone())
    }

    /// Agents over the median step time.
    pub fn agents_per_ms(&self) -> f64 {
        let median_ms = self.median_frame_ms();
        if median_ms > 0.0 {
            self.agents as f64 / median_ms
        } else {
            0.0
        }
    }

    /// The median over measured frames of pass `index` ([`StepStats::PASS_NAMES`]), ms.
    pub fn pass_median_ms(&self, index: usize) -> f64 {
        median(
            &mut self
                .pass_ms
                .iter()
                .map(|pass| pass[index])
                .collect::<Vec<_>>(),
        )
    }
}

/// Adds the planned agents with `params`, orders each to its first target, and steps the
/// crowd as `options` say; `on_frame` sees the crowd and the step's events after every
/// step and the orders it led to (drawing, checks, a test's record of events).
///
/// With [`RunOptions::comparison_rule`] arrivals are counted by the rule the native DetourCrowd
/// reference run (`stress/detourcrowd/native/crowd_reference.cpp`) counts them by, so the
/// two compare like for like: after each step, an agent whose foot is within the crowd's
/// arrival tolerance of its requested target (snapped to the mesh as the crowd snaps it),
/// horizontally, has arrived; one within it of the end of its searched corridor when
/// that corridor is partial (its last polygon is not the target's) has reached a partial
/// end. Either takes its next target at once, moving or not. The crowd's own `Arrived` and
/// `PartialArrived` events (stopped within the tolerance) count the same way, and those
/// agents, and agents with no path, take their next target too. Otherwise only the
/// crowd's events count.
pub fn run_crowd(
    crowd: &mut Crowd,
    plans: &Plans,
    params: AgentParams,
    options: &RunOptions,
    on_frame: impl FnMut(&Crowd, &[CrowdEvent]),
) -> Result<RunReport, CrowdError> {
    let mut report = RunReport::default();
    let mut meter = FlowMeter::with_capacity(crowd.len().saturating_add(plans.len()));
    let mut plan_of = ByAgent::with_capacity(crowd.len().saturating_add(plans.len()));
    crowd.reserve(plans.len())?;
    for (index, (start, targets)) in plans.iter().enumerate() {
        let agent = match crowd.add_agent(start, params) {
            Ok(agent) => agent,
            Err(CrowdError::OffMesh(_)) if options.skip_off_mesh_starts => {
                report.skipped_off_mesh += 1;
                continue;
            }
            Err(error) => return Err(error),
        };
        if let Some(&target) = targets.first() {
            crowd.request_move(agent, target)?;
            meter.ordered(agent);
        }
        // (A plan index fits: the crowd took every plan's agent, fewer than its limit.)
        plan_of.insert(agent, index as u32);
    }
    report.agents = crowd.len();
    let mut state = RunState {
        not_yet_arrived: plan_of.clone(),
        plan_of,
        next_target: vec![0; plans.len()],
    };
    run_frames(
        crowd,
        plans,
        &mut state,
        options,
        &mut report,
        &mut meter,
        on_frame,
    )?;
    Ok(report)
}

/// Resumes a run that [`RunOptions::save_at_frame`] saved ([`RunReport::saved_state`]) on
/// `mesh` (as it was at the save) under `config`, for the same `plans`, and steps it as
/// `options` say. The crowd and each agent's place in its plan are as they were at the
/// save, so the resumed run ends where the uninterrupted one does ([`state_hash`]); the
/// report covers the resumed frames (an order given before the save does not count
/// toward `order_to_motion_frames_p95`). Refused, by [`ResumeError`], for a file that is
/// not a whole saved run, or was saved for other plans or settings, or a crowd the mesh
/// no longer fits.
pub fn resume_crowd(
    mesh: &NavMesh,
    config: CrowdConfig,
    saved: &[u8],
    plans: &Plans,
    options: &RunOptions,
    on_frame: impl FnMut(&Crowd, &[CrowdEvent]),
) -> Result<(Crowd, RunReport), ResumeError> {
    let (mut state, settings, crowd_bytes) = RunState::from_bytes(saved, plans)?;
    let mut crowd = Crowd::restore(mesh, config, crowd_bytes)?;
    let now = settings_fingerprint(&crowd, options);
    if settings != now {
        return Err(ResumeError::OtherSettings {
            saved: settings,
            now,
        });
    }
    if let Some(agent) = state
        .plan_of
        .iter()
        .chain(state.not_yet_arrived.iter())
        .map(|(agent, _)| agent)
        .find(|&agent| crowd.status(agent).is_err())
    {
        return Err(ResumeError::Inconsistent {
            what: agent.to_string(),
        });
    }
    let mut report = RunReport {
        agents: crowd.len(),
        ..RunReport::default()
    };
    let mut meter = FlowMeter::new();
    run_frames(
        &mut crowd,
        plans,
        &mut state,
        options,
        &mut report,
        &mut meter,
        on_frame,
    )?;
    Ok((crowd, report))
}

/// The frames of a run: each step, timed and measured, then the orders its events lead to.
fn run_frames(
    crowd: &mut Crowd,
    plans: &Plans,
    state: &mut RunState,
    options: &RunOptions,
    report: &mut RunReport,
    meter: &mut FlowMeter,
    mut on_frame: impl FnMut(&Crowd, &[CrowdEvent]),
) -> Result<(), CrowdError> {
    let RunState {
        plan_of,
        next_target,
        not_yet_arrived,
    } = state;
    let mut controller = KinematicController;
    let mut quality_grid = NeighbourGrid::default();
    let mut waits_before = PathWaits::default();
    let total_frames = options.warm_up_frames + options.frames;
    let mut ended = Vec::new();
    let mut snapped = snapped_targets(crowd, plans, next_target);
    for frame in 0..total_frames {
        let measured = frame >= options.warm_up_frames;
        if frame == options.warm_up_frames {
            waits_before = crowd.path_waits().clone();
            // Flow is measured over the measured frames; orders given in the warm-up still
            // count from when they were given.
            meter.restart_measures();
        }
        let schedule_before = schedule_ms();
        let clock = Instant::now();
        let events = crowd.step(options.dt_s, &mut controller)?;
        if measured {
            report.frames += 1;
            report.frame_ms.push(clock.elapsed().as_secs_f64() * 1e3);
            if let Some((before, after)) = schedule_before.zip(schedule_ms()) {
                report.cpu_ms.push(after[0] - before[0]);
                report.cpu_wait_ms.push(after[1] - before[1]);
            }
            let stats = *crowd.stats();
            report.pass_ms.push(stats.pass_ms());
            report.nodes_expanded_max_frame =
                report.nodes_expanded_max_frame.max(stats.nodes_expanded);
            report.reconnected += u64::from(stats.reconnected);
            report.funnel_runs += u64::from(stats.funnel_runs);
            report.last = stats;
            if options.measure_quality {
                let quality = measure_quality(crowd, &mut quality_grid, &mut report.overlap_depths);
                report.overlap_pairs_total += u64::from(quality.overlap_pairs);
                report.overlap_pairs_passing_total += u64::from(quality.overlap_pairs_passing);
                report.max_overlap_m = report.max_overlap_m.max(quality.max_overlap_m);
                report.off_mesh_agents = report.off_mesh_agents.max(quality.off_mesh_agents);
            }
        }
        // Events count in measured frames only; agents take their next target in every one.
        let count = |counter: &mut usize| *counter += usize::from(measured);
        ended.clear();
        for &event in &events {
            let agent = match event {
                CrowdEvent::Arrived { agent, .. } => {
                    count(&mut report.arrivals);
                    if not_yet_arrived.remove(agent) {
                        report.first_arrival_frames.push(report.frames);
                    }
                    agent
                }
                CrowdEvent::PartialArrived { agent, .. } => {
                    count(&mut report.partial_arrivals);
                    if not_yet_arrived.remove(agent) {
                        report.first_arrival_frames.push(report.frames);
                    }
                    agent
                }
                CrowdEvent::NoPath { agent, .. } => {
                    count(&mut report.no_path);
                    agent
                }
                CrowdEvent::Blocked { .. } => {
                    count(&mut report.blocked);
                    continue;
                }
                CrowdEvent::LinkStarted { .. }
                | CrowdEvent::LinkFinished { .. }
                | CrowdEvent::Cancelled { .. }
                | CrowdEvent::CancelFault { .. }
                | CrowdEvent::RouteInvalidated { .. }
                | CrowdEvent::StandFact { .. }
                | CrowdEvent::Quarantined { .. } => continue,
                CrowdEvent::OrderEnded { outcome, .. } => {
                    if measured {
                        report.outcomes.count(outcome);
                    }
                    continue;
                }
            };
            ended.push(agent);
        }
        if options.retarget && options.comparison_rule {
            reached_by_rule(
                crowd,
                plans,
                plan_of,
                &snapped,
                &mut ended,
                |end| match end {
                    RuleEnd::Arrived => count(&mut report.arrivals),
                    RuleEnd::Partial => count(&mut report.partial_arrivals),
                },
            );
        }
        if !options.retarget {
            for &agent in &ended {
                meter.finished(agent);
            }
        }
        meter.observe(crowd, options.dt_s);
        if frame + 1 == total_frames {
            // After the last step, before arrivals take their next targets: the orders
            // still without their first searched path.
            report.waiting_for_first_path = crowd
                .agents()
                .filter(|view| crowd.awaiting_first_path(view.id).unwrap_or(false))
                .count();
        }
        if options.retarget {
            for &agent in &ended {
                let Some(index) = plan_of.get(agent).map(|plan| plan as usize) else {
                    continue;
                };
                let targets = plans.targets(index);
                if targets.is_empty() {
                    continue;
                }
                next_target[index] = (next_target[index] + 1) % targets.len();
                let target = targets[next_target[index]];
                snapped[index] = snap_target(crowd, target);
                crowd.request_move(agent, target)?;
                meter.ordered(agent);
            }
        }
        on_frame(crowd, &events);
        if options.save_at_frame == Some(frame + 1) {
            report.saved_state = Some(state_bytes(
                crowd,
                plans,
                options,
                plan_of,
                next_target,
                not_yet_arrived,
            ));
        }
        if options.stop_when_all_arrived && not_yet_arrived.is_empty() {
            break;
        }
    }
    report.all_arrived = not_yet_arrived.is_empty();
    report.flow = meter.report(crowd);
    if report.frames == 0 {
        waits_before = crowd.path_waits().clone();
    }
    report.path_wait_frames_p95 = crowd
        .path_waits()
        .since(&waits_before)
        .map_or(Ok(None), |waits| waits.percentile(0.95))?
        .unwrap_or(0);
    Ok(())
}

/// How an order ended by the comparison rule ([`run_crowd`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RuleEnd {
    /// Within the tolerance of the requested target.
    Arrived,
    /// Within the tolerance of a partial corridor's end.
    Partial,
}

/// Each plan's current target (`next_target`) snapped to the mesh as the crowd snaps an
/// order's target (the nearest polygon within the crowd's snap box; a target with none
/// stays as given, and nobody reaches it). One point a plan, snapped again as the plan
/// moves on: a list of every target snapped ahead would double the plans' memory (19 MB
/// at 100,000 agents with 16 targets each).
fn snapped_targets(crowd: &Crowd, plans: &Plans, next_target: &[usize]) -> Vec<Vec3> {
    plans
        .iter()
        .zip(next_target)
        .map(|((_, targets), &next)| {
            targets
                .get(next)
                .map_or(Vec3::ZERO, |&target| snap_target(crowd, target))
        })
        .collect()
}

/// `target` snapped to the mesh as the crowd snaps an order's target (itself when no
/// polygon is near).
fn snap_target(crowd: &Crowd, target: Vec3) -> Vec3 {
    let half_extents = crowd.config().snap_half_extents;
    match nearest_polygon(crowd.snapshot(), target, half_extents, &QueryFilter::new()) {
        Ok(Some(nearest)) => nearest.point,
        _ => target,
    }
}

/// Calls `counted` for each agent that reached its requested target or a partial
/// corridor's end by the comparison rule ([`run_crowd`]) and adds it to `ended` (the
/// agents whose orders the crowd ended this step, already counted: the crowd reports an
/// arrival or a partial end only within the tolerance, stopped), which is left in agent
/// order with each agent once.
fn reached_by_rule(
    crowd: &Crowd,
    plans: &Plans,
    plan_of: &ByAgent,
    snapped: &[Vec3],
    ended: &mut Vec<AgentId>,
    mut counted: impl FnMut(RuleEnd),
) {
    let tolerance = crowd.config().arrive_tolerance_m;
    let lanes = crowd.lanes();
    let horizontal = |a: Vec3, b: Vec3| glam::Vec2::new(a.x - b.x, a.z - b.z).length();
    ended.sort_unstable();
    ended.dedup();
    let by_event = ended.len();
    for slot in 0..lanes.len() {
        let agent = lanes.id[slot];
        let Some(plan) = plan_of.get(agent).map(|plan| plan as usize) else {
            continue;
        };
        if plans.targets(plan).is_empty() || ended[..by_event].binary_search(&agent).is_ok() {
            continue;
        }
        let foot = lanes.position(slot);
        let end = if horizontal(foot, snapped[plan]) <= tolerance {
            Some(RuleEnd::Arrived)
        } else {
            let partial = !lanes.on_head_start[slot]
                && lanes.corridor[slot].as_ref().is_some_and(|c| !c.complete)
                && crowd.awaiting_first_path(agent) == Ok(false);
            let goal = Vec3::new(lanes.goal_x[slot], lanes.goal_y[slot], lanes.goal_z[slot]);
            (partial && horizontal(foot, goal) <= tolerance).then_some(RuleEnd::Partial)
        };
        if let Some(end) = end {
            counted(end);
            ended.push(agent);
        }
    }
    ended.sort_unstable();
}

/// The run's state as [`RunState::to_bytes`] writes it, from its parts.
fn state_bytes(
    crowd: &Crowd,
    plans: &Plans,
    options: &RunOptions,
    plan_of: &ByAgent,
    next_target: &[usize],
    not_yet_arrived: &ByAgent,
) -> Vec<u8> {
    RunState {
        plan_of: plan_of.clone(),
        next_target: next_target.to_vec(),
        not_yet_arrived: not_yet_arrived.clone(),
    }
    .to_bytes(crowd, plans, options)
}

/// The median of `values` (the upper one of an even count; 0 for none), sorting them.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// This process's time so far, summed over its threads, ms: on a CPU, and ready but
/// waiting for one (the kernel's run queue: another process had the core), the first two
/// fields of each thread's `/proc/self/task/*/schedstat` (Linux; `None` elsewhere or if
/// any is unreadable).
fn schedule_ms() -> Option<[f64; 2]> {
    let mut total_ns = [0u64; 2];
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let text = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        let mut fields = text.split_whitespace();
        for total in &mut total_ns {
            *total += fields.next()?.parse::<u64>().ok()?;
        }
    }
    Some(total_ns.map(|ns| ns as f64 * 1e-6))
}

/// A hash of the crowd's state that two runs compare with one number: every agent's
/// position, velocity, status, and the logical ids of its order and of the query serving
/// it, in id order (so the crowd's own slot order does not matter), bit for bit (FNV-1a,
/// 64 bits). Attempts and epochs are left out: a restored crowd runs under a new epoch, in
/// which its waiting queries become their next attempts and its new orders are issued
/// (spec 001, h5), with the same motion and results as the uninterrupted run.
pub fn state_hash(crowd: &Crowd) -> u64 {
    let mut agents: Vec<_> = crowd.agents().collect();
    agents.sort_by_key(|view| view.id);
    let mut hash = Fnv::default();
    let mut mix = |value: u64| hash.mix(value);
    for view in agents {
        mix(view.id.to_bits());
        for value in [view.position, view.velocity] {
            for axis in value.to_array() {
                mix(u64::from(axis.to_bits()));
            }
        }
        mix(view.status as u64);
        for identity in [crowd.request(view.id), crowd.query(view.id)] {
            mix(identity.ok().flatten().map_or(u64::MAX, |id| id.logical));
        }
    }
    hash.0
}
