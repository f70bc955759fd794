//! Interaction orders (spec 000 in the runtime, spec 001's hand-off): walk to a verified
//! interaction pose, settle on it, and report success only where every check passes at the
//! pose the body actually stands in.
//!
//! Stage: crowd runtime, above [`target`](crate::target). Inputs: a game's
//! [`Crowd::request_interaction`](crate::crowd::Crowd::request_interaction) (a [`TargetRecord`] and the [`HoldPolicy`] that keeps the
//! pose), and each step the host's [`InteractionWorld`]: its collision world (the pose
//! checks) and the current state of the objects moving targets ride on. Outputs: the
//! order's one terminal outcome ([`CrowdEvent::OrderEnded`](crate::crowd::CrowdEvent::OrderEnded)), the hold's stand facts.
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
//! ([`Crowd::step`](crate::crowd::Crowd::step) instead of [`Crowd::step_with`](crate::crowd::Crowd::step_with)) fails `NoWorld` rather than wait.
//!
//! Invariants: the interaction's identity ends exactly once (success, a failure with its
//! reason, or cancelled with its walk or its unverified hold); "arrived near" is never
//! success; orders are judged each on its own, in parallel, and what they change beyond
//! themselves (hand-offs, failures, new paths, events) is applied in slot order, so the
//! same inputs give the same outcomes at any thread count.
//!
//! [`CrowdEvent::OrderEnded`](crate::crowd::CrowdEvent::OrderEnded): crate::crowd::CrowdEvent::OrderEnded
//! [`Crowd::step`](crate::crowd::Crowd::step): crate::crowd::Crowd::step
//! [`Crowd::step_with`](crate::crowd::Crowd::step_with): crate::crowd::Crowd::step_with

use glam::{Vec2, Vec3};

use crate::crowd::agents::RequestId;
use crate::mesh::PolyRef;
use crate::target::ObjectState;
use crate::target::{
    CollisionVersion, CollisionWorld, ObjectMotion, StandArea, TargetRecord, validate_pose,
};

/// What the crowd reads of the host's world for its interaction orders, each step
/// ([`Crowd::step_with`](crate::crowd::Crowd::step_with)) and at admission.
pub trait InteractionWorld: Sync {
    /// The collision world the pose checks run in.
    fn collision(&self) -> &dyn CollisionWorld;
    /// The state of the object a moving target rides on ([`Placement::Moving`](crate::target::Placement::Moving)'s
    /// `reference_object`) at this step.
    fn object(&self, reference_object: u32) -> ObjectState;
    /// The current transform version of a fixed target's object instance, if the host
    /// tracks it: a version other than the record's ([`Placement::Fixed`](crate::target::Placement::Fixed)) means the
    /// object moved since the pose was found, and orders on it fail (spec 001's h1: moving
    /// the cover rejects what was computed for it). `None` (the default): not tracked.
    fn fixed_transform(&self, instance: u32) -> Option<crate::ids::TransformVersion> {
        let _ = instance;
        None
    }
}

/// Why an interaction order failed ([`FailureCondition::Interaction`](crate::crowd::FailureCondition::Interaction)).
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
pub(crate) const RECHECK_AFTER_M: f32 = 1e-4;

/// An interaction order as [`Crowd::interaction`](crate::crowd::Crowd::interaction) shows it.
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
    pub(crate) fn placed(&self) -> TargetRecord {
        match &self.motion {
            Some(motion) => self.record.placed(motion),
            None => self.record.clone(),
        }
    }
}

/// The first check that fails with feet at `foot` on a polygon of support layer `layer`,
/// or `None`: the support layer, the approach side and the stand area of `record` (placed
/// in the world), then the pose checks.
pub(crate) fn failing_check(
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
