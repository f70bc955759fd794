//! Interaction orders (spec 000 in the runtime, spec 001's hand-off): walk to a verified
//! interaction pose, settle on it, and report success only where every check passes at the
//! pose the body actually stands in.
//!
//! Stage: crowd runtime, above [`target`](crate::target). Inputs: a game's
//! [`Crowd::request_interaction`] (a [`TargetRecord`] and the [`HoldPolicy`] that keeps the
//! pose), and each step the host's [`InteractionWorld`]: its collision world (the pose
//! checks) and the current state of the objects moving targets ride on. Outputs: the
//! order's one terminal outcome ([`CrowdEvent::OrderEnded`]), the hold's stand facts.
//!
//! An order goes through three phases. Admission projects the target (spec 000: the legal
//! region, candidates in a fixed order, the first verified pose); a target with no legal
//! region or whose candidates all fail ends `Failure` with that reason at the next step,
//! never a walk "somewhere near". Walking: a move order to the pose's foot, under the
//! interaction's identity; a moving target's foot is placed again every step from its
//! object's motion before the agent follows (so a velocity chosen on the old prediction
//! is never stepped), and the walk's goal moves with it (a new path when it leaves the
//! goal polygon). A path that stops short of the pose sends the agent to the next legal
//! pose off that polygon (`Unreachable` when none is left); a collision world whose
//! version moved on has the pose verified again. Once the agent is within the crowd's
//! arrival tolerance of the pose, the mover passes to the hold reserved at admission (one
//! owner change), which walks the rest under the correction law. Verifying: the checks
//! run at the actual foot (support layer, approach side, stand area, body, distance,
//! facing, sight, probe, on the target as placed now) whenever the foot, its polygon, the
//! target or the world changed; the interaction succeeds in the step the hold first
//! establishes its stand fact, which needs those checks to pass, and fails naming the
//! first failing check if the body stands on the pose (within the enter thresholds) with
//! a check failing. The hold keeps the pose afterwards (Holding), its checks still
//! judged, until the game's mode exit: `release_hold` (the fact ends), then
//! `cancel_order` by the hold's id.
//!
//! A moving target's object that is teleported, replaced (a new asset or slot) or gone,
//! or a fixed target's object whose transform version moved on (for a host that reports
//! it), ends the order `Failure` with that reason (spec 000: 目标替换、传送及槽修改使原请求失效);
//! an order under way when the crowd is stepped without a world
//! ([`Crowd::step`] instead of [`Crowd::step_with`]) fails `NoWorld` rather than wait.
//!
//! Invariants: the interaction's identity ends exactly once (success, a failure with its
//! reason, or cancelled with its walk or its unverified hold); "arrived near" is never
//! success; orders are judged each on its own, in parallel, and what they change beyond
//! themselves (hand-offs, failures, new paths, events) is applied in slot order, so the
//! same inputs give the same outcomes at any thread count.
//!
//! [`CrowdEvent::OrderEnded`]: crate::crowd::CrowdEvent::OrderEnded
//! [`Crowd::step`]: crate::crowd::Crowd::step
//! [`Crowd::step_with`]: crate::crowd::Crowd::step_with

use glam::{Vec2, Vec3};
use rayon::prelude::*;

use super::agent::AgentId;
use super::commands::Logged;
use super::components::{Ending, HoldOrder, HoldReserved, MoveRequest, Slot};
use super::events::{CrowdError, CrowdEvent, FailureCondition, Outcome};
use super::hold::{HoldKeeper, HoldPhase, HoldPolicy};
use super::lanes::AgentStatus;
use super::log::{Command, LogRecord};
use super::runtime::Crowd;
use super::scheduler::RequestId;
use crate::mesh::PolyRef;
use crate::target::{
    CollisionVersion, CollisionWorld, ObjectMotion, Placement, StandArea, TargetError,
    TargetRecord, Verdict, project_target, project_target_avoiding, validate_pose,
};

/// What the crowd reads of the host's world for its interaction orders, each step
/// ([`Crowd::step_with`]) and at admission.
pub trait InteractionWorld: Sync {
    /// The collision world the pose checks run in.
    fn collision(&self) -> &dyn CollisionWorld;
    /// The state of the object a moving target rides on ([`Placement::Moving`]'s
    /// `reference_object`) at this step.
    fn object(&self, reference_object: u32) -> ObjectState;
    /// The current transform version of a fixed target's object instance, if the host
    /// tracks it: a version other than the record's ([`Placement::Fixed`]) means the
    /// object moved since the pose was found, and orders on it fail (spec 001's h1: moving
    /// the cover rejects what was computed for it). `None` (the default): not tracked.
    fn fixed_transform(&self, instance: u32) -> Option<crate::ids::TransformVersion> {
        let _ = instance;
        None
    }
}

/// The state of a moving target's object at one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ObjectState {
    /// Where the object is now, moved continuously since the last step.
    Moving(ObjectMotion),
    /// The object jumped (a teleport, a respawn): interaction orders on it fail.
    Teleported(ObjectMotion),
    /// The object or the slot was replaced (a new asset, a changed slot geometry):
    /// interaction orders on it fail.
    Replaced,
    /// The host knows no such object: interaction orders on it fail.
    Missing,
}

/// An [`InteractionWorld`] from a collision world and a list of objects' states: what a
/// host without a world type of its own, a test or `waymark sim` passes.
#[derive(Clone, Copy, Debug)]
pub struct HostWorld<'a, W> {
    /// The collision world.
    pub collision: &'a W,
    /// Each moving target's object and its state this step; an object not listed is
    /// [`ObjectState::Missing`].
    pub objects: &'a [(u32, ObjectState)],
    /// Fixed targets' object instances whose transform version the host tracks, with the
    /// current version; an instance not listed is not tracked.
    pub fixed: &'a [(u32, crate::ids::TransformVersion)],
}

impl<W: CollisionWorld + Sync> InteractionWorld for HostWorld<'_, W> {
    fn collision(&self) -> &dyn CollisionWorld {
        self.collision
    }
    fn object(&self, reference_object: u32) -> ObjectState {
        self.objects
            .iter()
            .find(|(object, _)| *object == reference_object)
            .map_or(ObjectState::Missing, |(_, state)| *state)
    }
    fn fixed_transform(&self, instance: u32) -> Option<crate::ids::TransformVersion> {
        self.fixed
            .iter()
            .find(|(known, _)| *known == instance)
            .map(|&(_, version)| version)
    }
}

/// Why an interaction order failed ([`FailureCondition::Interaction`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InteractionFailure {
    /// The target's legal region is provably empty (spec 000).
    NoLegalRegion,
    /// The region is not empty, but every sampled candidate failed a check.
    CandidatesExhausted,
    /// Every legal pose found lies where the agent's paths do not reach (each tried in
    /// turn: a partial path to one sends the agent to the next).
    Unreachable,
    /// A check failed at the pose the body actually stood in: the check, named as in
    /// [`POSE_CHECKS`](crate::target::POSE_CHECKS).
    PoseCheck(&'static str),
    /// The target's object was teleported.
    TargetTeleported,
    /// The target's object or slot was replaced.
    TargetReplaced,
    /// A fixed target's object moved (its transform version changed).
    TargetMoved,
    /// The target's object is gone from the host's world.
    TargetMissing,
    /// The crowd was stepped without the host's world while the order was under way.
    NoWorld,
}

/// Where an interaction order is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InteractionPhase {
    /// Walking to the pose (the interaction's move order owns the mover).
    Walking,
    /// Settling on the pose (its hold owns the mover); the checks run at the actual foot
    /// until the stand fact is established.
    Verifying,
    /// Succeeded; the hold keeps the pose.
    Holding,
}

/// A foot that moved no more than this since its pose's checks last ran keeps their
/// verdict, metres (a tenth of a millimetre: float noise, not motion).
const RECHECK_AFTER_M: f32 = 1e-4;

/// An interaction order as [`Crowd::interaction`] shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InteractionView {
    /// The interaction's identity (its walk's too).
    pub order: RequestId,
    /// The hold reserved at admission.
    pub hold: RequestId,
    /// The phase.
    pub phase: InteractionPhase,
    /// The pose's foot in the world now.
    pub foot: Vec3,
    /// The region fragment it lies in (`None` for a discrete stand point).
    pub fragment: Option<u32>,
    /// Whether the checks passed at the actual foot at the last step's start.
    pub checks_pass: bool,
}

/// An agent's interaction order (a hecs component; few agents have one at a time).
#[derive(Clone, Debug)]
pub(crate) struct InteractionOrder {
    pub order: RequestId,
    pub hold: RequestId,
    /// The target as the game gave it (in its object's frame for a moving target).
    pub record: TargetRecord,
    pub fragment: Option<u32>,
    /// The walkable polygon under the pose, and those whose poses proved unreachable.
    pub polygon: PolyRef,
    pub avoided: Vec<PolyRef>,
    /// The verified foot in the record's own frame.
    pub foot_local: Vec3,
    /// The foot in the world now, and its world velocity.
    pub foot: Vec3,
    pub foot_velocity: Vec3,
    /// A moving target's object motion last placed from.
    pub motion: Option<ObjectMotion>,
    /// The collision world's version the pose was verified in: a walk to a pose verified
    /// in an older world verifies it again.
    pub collision_version: CollisionVersion,
    /// The checks at the actual foot as they last ran.
    pub checked: Option<ChecksRun>,
    pub checks_pass: bool,
    pub phase: InteractionPhase,
}

/// Where an order's checks at the actual foot last ran, and the check that failed there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ChecksRun {
    pub foot: Vec3,
    pub polygon: PolyRef,
    pub version: CollisionVersion,
    pub failing: Option<CheckName>,
}

/// A check's name, one of [`POSE_CHECKS`](crate::target::POSE_CHECKS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CheckName(pub &'static str);

impl InteractionOrder {
    /// The record placed in the world where its object is now.
    fn placed(&self) -> TargetRecord {
        match &self.motion {
            Some(motion) => self.record.placed(motion),
            None => self.record.clone(),
        }
    }
}

/// The first check that fails with feet at `foot` on a polygon of support layer `layer`,
/// or `None`: the support layer, the approach side and the stand area of `record` (placed
/// in the world), then the pose checks.
fn failing_check(
    record: &TargetRecord,
    foot: Vec3,
    layer: Option<u16>,
    world: &dyn CollisionWorld,
) -> Option<&'static str> {
    const SLACK_M: f32 = 1e-4;
    if layer != Some(record.layer) {
        return Some("support layer");
    }
    let flat = Vec2::new(foot.x, foot.z);
    if let Some(side) = record.approach_side {
        if (flat - side.origin).dot(side.outward.normalize_or_zero()) < -SLACK_M {
            return Some("approach side");
        }
    }
    let inside = match &record.stand {
        StandArea::Points { points, .. } => points.iter().any(|point| {
            Vec2::new(point.x - foot.x, point.z - foot.z).length()
                <= record.tolerances.horizontal_m + SLACK_M
        }),
        StandArea::Region { polygons, .. } => polygons
            .iter()
            .any(|polygon| inside_convex(polygon, flat, SLACK_M)),
    };
    if !inside {
        return Some("stand area");
    }
    validate_pose(record, foot, &world).failure()
}

/// Whether `point` lies in the convex `polygon` (either winding), `slack` outside allowed.
fn inside_convex(polygon: &[Vec2], point: Vec2, slack: f32) -> bool {
    let mut sign = 0.0f32;
    for (index, &corner) in polygon.iter().enumerate() {
        let next = polygon[(index + 1) % polygon.len()];
        let edge = next - corner;
        let length = edge.length();
        if length == 0.0 {
            continue;
        }
        let side = edge.perp_dot(point - corner) / length;
        if side.abs() <= slack {
            continue;
        }
        if sign == 0.0 {
            sign = side.signum();
        } else if side.signum() != sign {
            return false;
        }
    }
    true
}

impl Crowd {
    /// Sends the agent to interact with `record`'s target (spec 000) and keep the pose under
    /// `policy` (spec 001's station keeping): the target is projected here, against `world`
    /// (a moving target at its object's current motion), and the agent walks to the first
    /// verified pose; near it the hold reserved here takes the mover and settles the body on
    /// the pose, and the interaction ends `Success` when the hold's stand fact is first
    /// established with every check passing at the actual pose (see the module doc of
    /// `interaction.rs` for the phases and failures). Returns `(interaction, hold)`: the
    /// interaction's identity (also its walk's, as [`Crowd::owner`] shows it while walking)
    /// and the hold's, by which [`Crowd::cancel_order`] later releases the pose. A target
    /// with no legal region, or whose candidates all fail, is admitted and ends
    /// `Failure(Interaction(..))` with the next step's events (its hold `Cancelled`
    /// unstarted). Refused with a typed error naming the value: a record field out of
    /// range, a moving target whose object `world` does not place, a policy out of range,
    /// the holds table full, an agent still cancelling.
    pub fn request_interaction(
        &mut self,
        agent: AgentId,
        record: TargetRecord,
        policy: HoldPolicy,
        world: &dyn InteractionWorld,
    ) -> Result<(RequestId, RequestId), CrowdError> {
        let slot = self.slot(agent)?;
        HoldKeeper::new(policy)
            .map_err(|(field, value)| CrowdError::BadParameter { field, value })?;
        self.check_hold_capacity(agent)?;
        let motion = match record.placement {
            Placement::Fixed { .. } => None,
            Placement::Moving {
                reference_object, ..
            } => match world.object(reference_object) {
                ObjectState::Moving(motion) | ObjectState::Teleported(motion) => Some(motion),
                ObjectState::Replaced | ObjectState::Missing => {
                    return Err(CrowdError::Target(TargetError::MissingMotion {
                        reference_object,
                    }));
                }
            },
        };
        let projection = project_target(
            &self.snapshot,
            self.filter_of(slot),
            &record,
            &world.collision(),
            motion.as_ref(),
        )
        .map_err(CrowdError::Target)?;
        let pose = match projection.verdict {
            Verdict::Success(pose) => pose,
            Verdict::NoLegalRegion => {
                return self.refuse_interaction(
                    agent,
                    record,
                    policy,
                    InteractionFailure::NoLegalRegion,
                );
            }
            Verdict::CandidatesExhausted => {
                return self.refuse_interaction(
                    agent,
                    record,
                    policy,
                    InteractionFailure::CandidatesExhausted,
                );
            }
        };
        let foot = pose.foot;
        let foot_local = match &motion {
            Some(motion) => motion.world_from_object.inverse().transform_point3(foot),
            None => foot,
        };
        let order = self.order_move(agent, foot, None, Logged::InWhole)?;
        let hold = self.reserve_hold(agent, policy, Logged::InWhole);
        self.log(|| {
            LogRecord::Command(Command::Interact {
                agent,
                order,
                hold,
                record: Box::new(record.clone()),
                policy,
                foot: Some(foot),
            })
        });
        self.world
            .insert_one(
                self.ids.entity(agent),
                InteractionOrder {
                    order,
                    hold,
                    record,
                    fragment: pose.fragment,
                    polygon: pose.polygon,
                    avoided: Vec::new(),
                    foot_local,
                    foot,
                    foot_velocity: Vec3::ZERO,
                    motion,
                    collision_version: pose.versions.collision_version,
                    checked: None,
                    checks_pass: true,
                    phase: InteractionPhase::Walking,
                },
            )
            .expect("a known agent");
        Ok((order, hold))
    }

    /// An interaction whose projection found no pose: admitted (the old order ends as for
    /// any new one), and ended with the next step's events, its hold unstarted.
    fn refuse_interaction(
        &mut self,
        agent: AgentId,
        record: TargetRecord,
        policy: HoldPolicy,
        why: InteractionFailure,
    ) -> Result<(RequestId, RequestId), CrowdError> {
        let (slot, order) = self.admit(agent, |_, _| Ok(()))?;
        let hold = RequestId {
            logical: self.next_logical,
            attempt: 0,
            epoch: self.epoch,
        };
        self.next_logical += 1;
        self.log(|| {
            LogRecord::Command(Command::Interact {
                agent,
                order,
                hold,
                record: Box::new(record),
                policy,
                foot: None,
            })
        });
        if self.lanes.status[slot] != AgentStatus::CrossingLink {
            self.lanes.status[slot] = AgentStatus::Failed;
        }
        self.deferred_events.push(CrowdEvent::OrderEnded {
            agent,
            order,
            outcome: Outcome::Failure(FailureCondition::Interaction(why)),
        });
        self.deferred_events.push(CrowdEvent::OrderEnded {
            agent,
            order: hold,
            outcome: Outcome::Cancelled,
        });
        Ok((order, hold))
    }

    /// The agent's interaction order, if it has one under way or holding.
    pub fn interaction(&self, agent: AgentId) -> Result<Option<InteractionView>, CrowdError> {
        self.slot(agent)?;
        Ok(self
            .world
            .get::<&InteractionOrder>(self.ids.entity(agent))
            .ok()
            .map(|order| InteractionView {
                order: order.order,
                hold: order.hold,
                phase: order.phase,
                foot: order.foot,
                fragment: order.fragment,
                checks_pass: order.checks_pass,
            }))
    }

    /// How many agents have an interaction order (under way or holding).
    pub(super) fn interactions_under_way(&self) -> usize {
        self.world.query::<&InteractionOrder>().iter().len()
    }

    /// The interaction pass, at the start of a step: each order's target placed where its
    /// object is now, walks handed to their holds near the pose, the checks run at the
    /// actual foot of those settling or holding. Every order is judged on its own, in
    /// place and on all cores (the component rows are read in storage order: one agent's
    /// order is several cache lines, and thousands may hold at once); what changes an
    /// agent's other state (a failure, a hand-off, a new path) is applied after, in slot
    /// order.
    pub(super) fn keep_interactions(
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
                .with_min_len(super::parallel::LIGHT_AGENTS_PER_TASK)
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
    pub(super) fn hand_interaction_to_hold(&mut self, agent: AgentId, slot: usize) {
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
    pub(super) fn interaction_established(&mut self, agent: AgentId, events: &mut Vec<CrowdEvent>) {
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
    pub(super) fn is_walking_to_interact(&self, agent: AgentId) -> bool {
        self.world
            .get::<&InteractionOrder>(self.ids.entity(agent))
            .is_ok_and(|order| order.phase == InteractionPhase::Walking)
    }

    /// The hold of an interaction not yet verified failed: the interaction ends with it,
    /// in this step's `events`.
    pub(super) fn interaction_hold_failed(
        &mut self,
        agent: AgentId,
        why: super::hold::HoldFailure,
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
    pub(super) fn take_interaction(&mut self, agent: AgentId) {
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
    lanes: &'a super::lanes::AgentLanes,
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
