//! The interaction pass, at the start of a step: each order's target placed where its
//! object is now, walks handed to their holds near the pose, the checks run at the actual
//! foot of those settling or holding, and the orders' ends (established, failed, taken).
//!
//! Stage: crowd, the step's first pass (`step.rs` has the order). Inputs: the interaction
//! orders, the lanes and the host's [`InteractionWorld`]. Outputs: orders' phases, holds,
//! new paths and events; every order is judged on its own, on all cores, and what changes
//! an agent's other state is applied after, in slot order.

use crate::target::ObjectState;
use glam::{Vec2, Vec3};
use rayon::prelude::*;

use crate::crowd::agents::AgentId;
use crate::crowd::agents::AgentStatus;
use crate::crowd::components::{Ending, HoldOrder, HoldReserved, MoveRequest, Slot};
use crate::crowd::events::{CrowdEvent, FailureCondition, Outcome};
use crate::crowd::interactions::hold::{HoldKeeper, HoldPhase};
use crate::crowd::runtime::Crowd;
use crate::target::{Placement, Verdict, project_target_avoiding};

use crate::crowd::interactions::interaction::{
    CheckName, ChecksRun, InteractionFailure, InteractionOrder, InteractionPhase, InteractionWorld,
    RECHECK_AFTER_M, failing_check,
};

impl Crowd {
    /// The interaction pass, at the start of a step: each order's target placed where its
    /// object is now, walks handed to their holds near the pose, the checks run at the
    /// actual foot of those settling or holding. Every order is judged on its own, in
    /// place and on all cores (the component rows are read in storage order: one agent's
    /// order is several cache lines, and thousands may hold at once); what changes an
    /// agent's other state (a failure, a hand-off, a new path) is applied after, in slot
    /// order.
    pub(in crate::crowd) fn keep_interactions(
        &mut self,
        world: Option<&dyn InteractionWorld>,
        dt: f32,
        events: &mut Vec<CrowdEvent>,
    ) {
        let mut actions: Vec<(usize, Action)> = {
            let mut rows: Vec<Row<'_>> = self
                .world
                .query_mut::<(
                    &Slot,
                    &mut InteractionOrder,
                    Option<&mut HoldOrder>,
                    Option<&mut MoveRequest>,
                )>()
                .into_iter()
                .map(|(slot, order, hold, walk)| Row {
                    slot: slot.0,
                    order,
                    hold,
                    walk,
                })
                .collect();
            if rows.is_empty() {
                return;
            }
            let seen = Seen {
                lanes: &self.lanes,
                snapshot: &self.snapshot,
                filters: &self.filters,
                arrive_tolerance_m: self.config.arrive_tolerance_m,
                dt,
            };
            rows.par_iter_mut()
                .with_min_len(crate::crowd::compute::parallel::LIGHT_AGENTS_PER_TASK)
                .filter_map(|row| {
                    let action = match world {
                        Some(world) => judge(row, &seen, world),
                        None => Action::Fail(InteractionFailure::NoWorld),
                    };
                    (action != Action::None).then_some((row.slot, action))
                })
                .collect()
        };
        actions.sort_unstable_by_key(|&(slot, _)| slot);
        for (slot, action) in actions {
            let agent = self.lanes.id[slot];
            match action {
                Action::None => {}
                Action::Fail(why) => self.fail_interaction(agent, slot, why, events),
                Action::HandToHold => self.hand_interaction_to_hold(agent, slot),
                Action::NewPath => {
                    self.lanes.corridor[slot] = None;
                    self.reissue(agent);
                }
                Action::MoveGoal(foot) => {
                    // A corridor adopted for the old pose still serves while the pose
                    // stays on its last polygon; otherwise a new path.
                    if !walk_goal_moves(self, slot, foot) {
                        self.reissue(agent);
                    }
                }
            }
        }
    }

    /// The walk of an interaction near its pose: the mover passes to the hold reserved at
    /// admission, which settles the body on the pose; the interaction waits for its stand
    /// fact.
    pub(in crate::crowd) fn hand_interaction_to_hold(&mut self, agent: AgentId, slot: usize) {
        let entity = self.ids.entity(agent);
        let Ok(mut order) = self.world.get::<&mut InteractionOrder>(entity) else {
            return;
        };
        if order.phase != InteractionPhase::Walking {
            return;
        }
        order.phase = InteractionPhase::Verifying;
        let (hold, target) = (order.hold, order.foot);
        drop(order);
        let _ = self.world.remove_one::<MoveRequest>(entity);
        let reserved = self
            .world
            .remove_one::<HoldReserved>(entity)
            .expect("an interaction's hold is reserved with its walk");
        let keeper = HoldKeeper::new(reserved.policy).expect("checked at admission");
        self.world
            .insert_one(
                entity,
                HoldOrder {
                    order: hold,
                    target,
                    keeper,
                },
            )
            .expect("a known agent");
        self.count_handoff(slot);
        let lanes = &mut self.lanes;
        lanes.corridor[slot] = None;
        lanes.on_head_start[slot] = false;
        lanes.status[slot] = AgentStatus::Holding;
        lanes.blocked[slot] = None;
        lanes.stalled_s[slot] = 0.0;
    }

    /// The hold of an interaction established its first stand fact: the interaction
    /// succeeds (the hold keeps the pose).
    pub(in crate::crowd) fn interaction_established(
        &mut self,
        agent: AgentId,
        events: &mut Vec<CrowdEvent>,
    ) {
        let Ok(mut order) = self
            .world
            .get::<&mut InteractionOrder>(self.ids.entity(agent))
        else {
            return;
        };
        if order.phase == InteractionPhase::Verifying {
            order.phase = InteractionPhase::Holding;
            events.push(CrowdEvent::OrderEnded {
                agent,
                order: order.order,
                outcome: Outcome::Success,
            });
        }
    }

    /// An interaction fails: while it walks, its walk brakes and ends with the reason; once
    /// its hold owns the mover, the interaction ends here and the hold brakes, ending with
    /// the same reason when the agent stands.
    fn fail_interaction(
        &mut self,
        agent: AgentId,
        slot: usize,
        why: InteractionFailure,
        events: &mut Vec<CrowdEvent>,
    ) {
        let entity = self.ids.entity(agent);
        let Ok(order) = self.world.remove_one::<InteractionOrder>(entity) else {
            return;
        };
        if order.phase == InteractionPhase::Verifying {
            events.push(CrowdEvent::OrderEnded {
                agent,
                order: order.order,
                outcome: Outcome::Failure(FailureCondition::Interaction(why)),
            });
        }
        self.start_braking(agent, slot, Ending::Interaction(why));
    }

    /// Whether the agent walks to an interaction's pose (its walk owns the mover).
    pub(in crate::crowd) fn is_walking_to_interact(&self, agent: AgentId) -> bool {
        self.world
            .get::<&InteractionOrder>(self.ids.entity(agent))
            .is_ok_and(|order| order.phase == InteractionPhase::Walking)
    }

    /// The hold of an interaction not yet verified failed: the interaction ends with it,
    /// in this step's `events`.
    pub(in crate::crowd) fn interaction_hold_failed(
        &mut self,
        agent: AgentId,
        why: crate::crowd::interactions::hold::HoldFailure,
        events: &mut Vec<CrowdEvent>,
    ) {
        let entity = self.ids.entity(agent);
        let verifying = self
            .world
            .get::<&InteractionOrder>(entity)
            .is_ok_and(|order| order.phase == InteractionPhase::Verifying);
        if !verifying {
            return;
        }
        let order = self
            .world
            .remove_one::<InteractionOrder>(entity)
            .expect("looked at");
        events.push(CrowdEvent::OrderEnded {
            agent,
            order: order.order,
            outcome: Outcome::Failure(FailureCondition::Hold(why)),
        });
    }

    /// Takes the agent's interaction order with its mover's order (a cancel, a new order,
    /// a failure of its walk or hold): an interaction whose hold had not yet verified the
    /// pose ends `Cancelled` with the next step's events (one walking ends as its walk
    /// does; one holding has succeeded already).
    pub(in crate::crowd) fn take_interaction(&mut self, agent: AgentId) {
        let Ok(order) = self
            .world
            .remove_one::<InteractionOrder>(self.ids.entity(agent))
        else {
            return;
        };
        if order.phase == InteractionPhase::Verifying {
            self.deferred_events.push(CrowdEvent::OrderEnded {
                agent,
                order: order.order,
                outcome: Outcome::Cancelled,
            });
        }
    }
}

/// Moves the walk's goal to `foot` where it stays on the goal polygon (the corridor still
/// ends there); `false` when it left it (a new path is needed).
fn walk_goal_moves(crowd: &mut Crowd, slot: usize, foot: Vec3) -> bool {
    let polygon = crowd.lanes.goal_polygon[slot];
    let Some(tile) = crowd.snapshot.tile(polygon) else {
        return false;
    };
    let flat = Vec2::new(foot.x, foot.z);
    if !tile.contains_xz(polygon.polygon(), flat) {
        return false;
    }
    let lanes = &mut crowd.lanes;
    lanes.goal_x[slot] = foot.x;
    lanes.goal_y[slot] = tile.height_at(polygon.polygon(), flat);
    lanes.goal_z[slot] = foot.z;
    true
}

/// One agent's interaction order with its hold or walk, as the pass judges it.
struct Row<'a> {
    slot: usize,
    order: &'a mut InteractionOrder,
    hold: Option<&'a mut HoldOrder>,
    walk: Option<&'a mut MoveRequest>,
}

/// What the pass reads besides the rows.
struct Seen<'a> {
    lanes: &'a crate::crowd::lanes::AgentLanes,
    snapshot: &'a crate::mesh::Snapshot,
    filters: &'a [crate::query::QueryFilter],
    arrive_tolerance_m: f32,
    dt: f32,
}

/// What an order's judgement asks of the rest of the crowd (applied in slot order).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Action {
    None,
    /// The order fails for this reason.
    Fail(InteractionFailure),
    /// The walk is near its pose: its hold takes the mover.
    HandToHold,
    /// The walk's pose changed where its path cannot serve: a new path.
    NewPath,
    /// A moving target's pose moved: the walk's goal follows it (a new path if it left the
    /// corridor's last polygon).
    MoveGoal(Vec3),
}

/// Judges one order at the step's start: places a moving target, verifies a walk's pose
/// again where the world changed or its path fell short, and runs the checks at the
/// actual foot of a settling or holding agent. Writes only the row.
fn judge(row: &mut Row<'_>, seen: &Seen<'_>, world: &dyn InteractionWorld) -> Action {
    let (slot, lanes) = (row.slot, seen.lanes);
    let order = &mut *row.order;
    let mut target_moved = false;
    if let Placement::Fixed { transform_version } = order.record.placement {
        if world
            .fixed_transform(order.record.instance)
            .is_some_and(|now| now != transform_version)
        {
            return Action::Fail(InteractionFailure::TargetMoved);
        }
    }
    if let Placement::Moving {
        reference_object, ..
    } = order.record.placement
    {
        let motion = match world.object(reference_object) {
            ObjectState::Moving(motion) => motion,
            ObjectState::Teleported(_) => {
                return Action::Fail(InteractionFailure::TargetTeleported);
            }
            ObjectState::Replaced => return Action::Fail(InteractionFailure::TargetReplaced),
            ObjectState::Missing => return Action::Fail(InteractionFailure::TargetMissing),
        };
        let foot = motion.world_from_object.transform_point3(order.foot_local);
        order.foot_velocity = (foot - order.foot) / seen.dt;
        target_moved = foot != order.foot;
        order.foot = foot;
        order.motion = Some(motion);
    }
    let collision_version = world.collision().version();
    match order.phase {
        InteractionPhase::Walking => {
            // (A head start walked while the path is searched is partial by nature: only a
            // path found says the pose is out of reach.)
            let partial = !lanes.on_head_start[slot]
                && lanes.corridor[slot]
                    .as_ref()
                    .is_some_and(|corridor| !corridor.complete);
            if partial || collision_version != order.collision_version {
                // The path found stops short (this pose is out of reach: the next legal
                // pose off its polygon), or the collision world changed since the pose was
                // verified (it is verified again: spec 000, a new obstacle invalidates the
                // candidate).
                if partial {
                    let unreachable = order.polygon;
                    order.avoided.push(unreachable);
                }
                order.collision_version = collision_version;
                let placed_from = order.motion;
                let verdict = project_target_avoiding(
                    seen.snapshot,
                    &seen.filters[lanes.filter[slot].index()],
                    &order.record,
                    &world.collision(),
                    placed_from.as_ref(),
                    &order.avoided,
                )
                .map(|projection| projection.verdict);
                let pose = match verdict {
                    Ok(Verdict::Success(pose)) => pose,
                    _ if partial => return Action::Fail(InteractionFailure::Unreachable),
                    Ok(Verdict::CandidatesExhausted) => {
                        return Action::Fail(InteractionFailure::CandidatesExhausted);
                    }
                    // (The record was checked at admission: a projection that cannot run
                    // now has no legal region on this mesh.)
                    Ok(Verdict::NoLegalRegion) | Err(_) => {
                        return Action::Fail(InteractionFailure::NoLegalRegion);
                    }
                };
                order.foot_local = match &placed_from {
                    Some(motion) => motion
                        .world_from_object
                        .inverse()
                        .transform_point3(pose.foot),
                    None => pose.foot,
                };
                target_moved |= pose.foot != order.foot;
                order.foot = pose.foot;
                order.fragment = pose.fragment;
                order.polygon = pose.polygon;
                if partial {
                    if let Some(walk) = row.walk.as_deref_mut() {
                        walk.target = order.foot;
                    }
                    return Action::NewPath;
                }
            }
            let foot = order.foot;
            let near = Vec2::new(
                lanes.position_x[slot] - foot.x,
                lanes.position_z[slot] - foot.z,
            )
            .length()
                <= seen.arrive_tolerance_m;
            let walking = matches!(
                lanes.status[slot],
                AgentStatus::Moving | AgentStatus::WaitingForPath
            ) && !lanes.on_head_start[slot];
            if near && walking {
                return Action::HandToHold;
            }
            if target_moved {
                if let Some(walk) = row.walk.as_deref_mut() {
                    walk.target = foot;
                }
                // (A search under way is left to finish: its corridor is judged here
                // next step, so a pose that moves every frame cannot restart it forever.)
                if lanes.corridor[slot].is_some() {
                    return Action::MoveGoal(foot);
                }
            }
            Action::None
        }
        InteractionPhase::Verifying | InteractionPhase::Holding => {
            let actual = lanes.position(slot);
            let polygon = lanes.polygon[slot];
            // The checks are judged again where anything they read changed: the foot
            // (beyond float noise), its polygon, the target, the collision world. A body
            // standing still on its pose costs no checks.
            let last = order.checked.filter(|run| {
                !target_moved
                    && run.foot.distance(actual) <= RECHECK_AFTER_M
                    && run.polygon == polygon
                    && run.version == collision_version
            });
            let failing = match last {
                Some(run) => run.failing.map(|check| check.0),
                None => {
                    let layer = seen
                        .snapshot
                        .tile(polygon)
                        .map(|tile| tile.data.polygons[usize::from(polygon.polygon())].layer);
                    let failing = failing_check(&order.placed(), actual, layer, world.collision());
                    order.checks_pass = failing.is_none();
                    order.checked = Some(ChecksRun {
                        foot: actual,
                        polygon,
                        version: collision_version,
                        failing: failing.map(CheckName),
                    });
                    failing
                }
            };
            let Some(hold) = row.hold.as_deref_mut() else {
                return Action::None; // (its hold is braking: the order ends with it)
            };
            hold.target = order.foot;
            let settling = order.phase == InteractionPhase::Verifying
                && matches!(hold.keeper.phase(), HoldPhase::Settling);
            if let (true, Some(check)) = (settling, failing) {
                // Standing on the pose (as the stand fact would judge it) with a check
                // failing: the pose does not hold here.
                let policy = hold.keeper.policy();
                let error = Vec2::new(actual.x - order.foot.x, actual.z - order.foot.z).length();
                let velocity = Vec3::new(lanes.velocity_x[slot], 0.0, lanes.velocity_z[slot]);
                let relative = (velocity - order.foot_velocity).length();
                if error <= policy.enter_m && relative <= policy.speed_enter_mps {
                    return Action::Fail(InteractionFailure::PoseCheck(check));
                }
            }
            Action::None
        }
    }
}
