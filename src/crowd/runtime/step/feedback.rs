//! The feedback pass: the controller's answer written back to the lanes, and what it means
//! for each order (arrived, partial end, blocked, a head start's end).
//!
//! Stage: crowd runtime, the step's last pass. Inputs: one feedback record per agent
//! (spec 004: foot, velocities, blocked reason). Outputs: positions, velocities and
//! progress measures in the lanes (parallel over runs of slots), then events in slot order.

use rayon::prelude::*;

use glam::Vec2;

use crate::crowd::agents::AgentStatus;
use crate::crowd::avoidance::velocities::AvoidanceConfig;
use crate::crowd::components::Ending;
use crate::crowd::components::MoveRequest;
use crate::crowd::config::BlockedPolicy;
use crate::crowd::events::{BlockedBy, CrowdEvent, FailureCondition, Outcome};
use crate::crowd::lanes::lane_view;
use crate::crowd::paths::scheduler::head_start_corridor;
use crate::crowd::runtime::Crowd;
use crate::crowd::walking::passes::{feedback_velocities, track_progress};

impl Crowd {
    /// Feedback: positions, vEnd, vAverage, stalls, arrivals. The lanes are written in
    /// parallel over runs of slots, each run noting the agents that have an event to
    /// report; the events, which read the world and may change it, follow in slot order.
    pub(crate) fn feedback(
        &mut self,
        feedback: &[crate::crowd::supports::controller::StepFeedback],
        events: &mut Vec<CrowdEvent>,
    ) {
        let tolerance = self.config.arrive_tolerance_m;
        let stop_speed = self.config.stop_speed_mps;
        let fail_after_s = match self.config.blocked_policy {
            BlockedPolicy::FailAfter { seconds } => seconds,
            BlockedPolicy::Wait | BlockedPolicy::Replan => f32::INFINITY,
        };
        let snapshot = &self.snapshot;
        let avoidance = self.config.avoidance;
        let marks = FeedbackLanes::new(&mut self.lanes)
            .into_pieces(crate::crowd::compute::parallel::LIGHT_AGENTS_PER_TASK)
            .map(|view| {
                let steps = &feedback[view.first..view.first + view.len];
                feedback_run(
                    view,
                    steps,
                    snapshot,
                    tolerance,
                    stop_speed,
                    fail_after_s,
                    &avoidance,
                )
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
                .get::<&MoveRequest>(self.ids.entity(agent))
                .ok()
                .map(|m| m.order)
            else {
                continue;
            };
            match mark {
                FeedbackMark::Blocked(by) => {
                    events.push(CrowdEvent::Blocked { agent, request, by });
                    if self.config.blocked_policy == BlockedPolicy::Replan {
                        self.replan(agent);
                    }
                }
                FeedbackMark::BlockedTooLong(by) => {
                    self.start_braking(agent, slot, Ending::Blocked(by));
                }
                FeedbackMark::HeadStartEnd => {
                    // The end of a head start, the path not yet come: walk on, greedily,
                    // from here, or stop and wait where no neighbour brings it nearer.
                    let target = self
                        .world
                        .get::<&MoveRequest>(self.ids.entity(agent))
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
                    let complete = self.lanes.corridor[slot]
                        .as_ref()
                        .is_some_and(|c| c.complete);
                    if complete && self.is_walking_to_interact(agent) {
                        // At an interaction's pose: no success yet; its hold settles the
                        // body and the checks judge the actual pose.
                        self.hand_interaction_to_hold(agent, slot);
                        continue;
                    }
                    let lanes = &mut self.lanes;
                    lanes.status[slot] = if complete {
                        AgentStatus::Arrived
                    } else {
                        AgentStatus::PartialArrived
                    };
                    lanes.corridor[slot] = None;
                    lanes.desired_x[slot] = 0.0;
                    lanes.desired_z[slot] = 0.0;
                    let _ = self.world.remove_one::<MoveRequest>(self.ids.entity(agent));
                    self.count_handoff(slot);
                    events.push(if complete {
                        CrowdEvent::Arrived { agent, request }
                    } else {
                        CrowdEvent::PartialArrived { agent, request }
                    });
                    events.push(CrowdEvent::OrderEnded {
                        agent,
                        order: request,
                        outcome: if complete {
                            Outcome::Success
                        } else {
                            Outcome::Failure(FailureCondition::Unreachable)
                        },
                    });
                    if complete {
                        // The same commit hands the mover to the hold reserved beside the
                        // move (one owner change: move to hold).
                        self.start_reserved_hold(agent, slot);
                    } else {
                        self.end_reserved_hold(agent, Some(events));
                        self.take_interaction(agent);
                    }
                }
            }
        }
    }
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
            blocked: Option<BlockedBy>,
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
            radius: f32,
        }
    }
}

/// An event the feedback pass found for an agent, reported after the lanes are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FeedbackMark {
    /// The agent has stalled (h2): reported once per stall.
    Blocked(BlockedBy),
    /// The agent has been blocked as long as `BlockedPolicy::FailAfter` allows.
    BlockedTooLong(BlockedBy),
    /// The agent is within the tolerance of its goal, stopped, and the goal's tile is
    /// still there.
    AtGoal,
    /// The agent walks a head start and stands on its last polygon: time to walk on.
    HeadStartEnd,
}

/// Along-corridor progress that counts as "still moving", metres: a body jostled in place,
/// or creeping up on a neighbour it cannot pass, makes less than this toward its goal in
/// the stuck rule's window (three seconds).
pub const PROGRESS_STEP_M: f32 = 0.5;

/// The progress along its corridor that ends a walker's hold, metres: [`PROGRESS_STEP_M`],
/// or for a walker passing through (held `pass_through_after_s` or longer) its whole pass,
/// `pass_through_widths` of its body widths, when that is longer. A passer counts as held,
/// and keeps passing, until it is out the other side of the body it pressed into.
#[inline]
fn progress_step_m(avoidance: &AvoidanceConfig, unprogressed_s: f32, radius_m: f32) -> f32 {
    if avoidance.passes_through_after(unprogressed_s) {
        PROGRESS_STEP_M.max(avoidance.pass_through_widths * 2.0 * radius_m)
    } else {
        PROGRESS_STEP_M
    }
}

/// Adds a step's progress along the corridor (`along_m`, negative for a step back) to the
/// agent's count; returns the new (progress, seconds without progress): both start over
/// when the count reaches `step_m` ([`PROGRESS_STEP_M`], longer for a walker passing
/// through, [`progress_step_m`]).
fn track_corridor_progress(
    progress_m: f32,
    unprogressed_s: f32,
    along_m: f32,
    dt: f32,
    step_m: f32,
) -> (f32, f32) {
    let progress_m = progress_m + along_m;
    if progress_m >= step_m {
        (0.0, 0.0)
    } else {
        (progress_m, unprogressed_s + dt)
    }
}

/// The feedback pass over one run of slots (`steps` are its agents' step feedback):
/// writes the lanes and returns the run's marks in slot order.
fn feedback_run(
    view: FeedbackLanes<'_>,
    steps: &[crate::crowd::supports::controller::StepFeedback],
    snapshot: &crate::mesh::Snapshot,
    tolerance: f32,
    stop_speed: f32,
    fail_after_s: f32,
    avoidance: &AvoidanceConfig,
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
            progress_step_m(avoidance, view.unprogressed_s[offset], view.radius[offset]),
        );
        let slot = view.first + offset;
        let flat = Vec2::new(step.foot.x, step.foot.z);
        let requesting = Vec2::new(view.desired_x[offset], view.desired_z[offset]) != Vec2::ZERO;
        // The anchor rides the support: a walker's progress is its own walking, not the
        // belt's carry (walking against a belt at more than its speed is no stall).
        let mut anchor = Vec2::new(view.anchor_x[offset], view.anchor_z[offset]);
        if step.displacement_support != glam::Vec3::ZERO {
            anchor += Vec2::new(step.displacement_support.x, step.displacement_support.z);
        }
        let (anchor, stalled_s, stalled) =
            track_progress(anchor, view.stalled_s[offset], flat, requesting, step.dt);
        view.anchor_x[offset] = anchor.x;
        view.anchor_z[offset] = anchor.y;
        view.stalled_s[offset] = stalled_s;
        // A wall the controller ran into, else the crowd in the way.
        let by = if step.blocked {
            BlockedBy::Wall
        } else {
            BlockedBy::Crowd
        };
        if stalled && view.blocked[offset].is_none() {
            view.blocked[offset] = Some(by);
            marks.push((slot, FeedbackMark::Blocked(by)));
        } else if !stalled && stalled_s == 0.0 {
            view.blocked[offset] = None;
        } else if stalled {
            view.blocked[offset] = Some(by);
        }
        // Held without progress along its corridor (jostled or not) as long as the policy
        // allows: its order fails.
        if view.unprogressed_s[offset] >= fail_after_s {
            marks.push((slot, FeedbackMark::BlockedTooLong(by)));
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
        if flat.distance(goal) > tolerance || !step.velocity_valid {
            continue;
        }
        // Stopped in the goal's frame (spec 004): relative to the support when the goal is
        // on one (a walker stopping on a belt rides on with it), in the world on the
        // static ground; the whole 3-D velocity, so sliding down is no stop. (The goal's
        // polygon is looked up only for an agent that is there.)
        let Some(goal_layer) = snapshot.support_layer(view.goal_polygon[offset]) else {
            continue;
        };
        let velocity = if goal_layer == 0 {
            step.velocity_world_end
        } else {
            step.velocity_world_end - step.velocity_support_end
        };
        if velocity.length() < stop_speed {
            marks.push((slot, FeedbackMark::AtGoal));
        }
    }
    marks
}
