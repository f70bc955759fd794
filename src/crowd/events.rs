//! What a crowd reports: the events of a step and the errors of a call.
//!
//! Stage: crowd runtime, the public edge. Each event is reported once, in slot order within
//! a step; each error names the value that caused it.

use glam::Vec3;

use crate::crowd::agents::RequestId;
use crate::crowd::agents::{AGENTS_MAX, AgentId, FilterId, ProfileId};

/// Something that happened to an agent in a step; each is reported once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrowdEvent {
    /// The agent reached its target and stopped.
    Arrived {
        /// The agent.
        agent: AgentId,
        /// The request.
        request: RequestId,
    },
    /// The agent reached the end of a partial path: its target is unreachable.
    PartialArrived {
        /// The agent.
        agent: AgentId,
        /// The request.
        request: RequestId,
    },
    /// 0.5 s of non-zero requests without 0.05 m of progress (spec 001, h2), reported once
    /// per stall; what happens next is the crowd's
    /// [`BlockedPolicy`](crate::crowd::config::BlockedPolicy).
    Blocked {
        /// The agent.
        agent: AgentId,
        /// The request.
        request: RequestId,
        /// What holds it.
        by: BlockedBy,
    },
    /// The agent reached the entry of an off-mesh link on its path and starts crossing it
    /// (the host plays the link's action; the crowd carries the agent to the exit).
    LinkStarted {
        /// The agent.
        agent: AgentId,
        /// The link.
        link: crate::mesh::LinkId,
    },
    /// The agent landed at the link's exit and walks on.
    LinkFinished {
        /// The agent.
        agent: AgentId,
        /// The link.
        link: crate::mesh::LinkId,
    },
    /// The receipt of a cancel: the agent has stopped and its mover is free for a new
    /// order (spec 001: cancel is a state, its end a receipt).
    Cancelled {
        /// The agent.
        agent: AgentId,
        /// The record `Crowd::cancel` returned.
        record: CancelRecord,
    },
    /// A cancel not confirmed in time: the agent has not stopped within
    /// two seconds of the cancel (of its landing, for an agent crossing a link). It stays cancelling (no new order takes its
    /// mover), and the receipt still comes if it stops. Reported once.
    CancelFault {
        /// The agent.
        agent: AgentId,
        /// The record `Crowd::cancel` returned.
        record: CancelRecord,
    },
    /// The agent's adopted route stopped holding (a door closed, a tile it read was rebuilt,
    /// its filter changed): reported with the dependency that changed, then the route is
    /// computed again (spec 001: no silent re-plan).
    RouteInvalidated {
        /// The agent.
        agent: AgentId,
        /// The order the route served.
        request: RequestId,
        /// What changed: the first dependency found stale.
        changed: crate::query::Validity,
    },
    /// The request cannot be served: no walkable polygon near the target.
    NoPath {
        /// The agent.
        agent: AgentId,
        /// The request.
        request: RequestId,
    },
    /// A held agent's stand fact changed (`request_hold`, spec 001's station keeping):
    /// established (a new generation), invalidated (Recovering until a deadline), or the
    /// hold failed (its order then ends once the agent stands).
    StandFact {
        /// The agent.
        agent: AgentId,
        /// The hold order.
        order: RequestId,
        /// What changed.
        change: crate::crowd::interactions::hold::FactChange,
    },
    /// An order's one terminal outcome (spec 001): every order given by `request_move`,
    /// `request_move_by` or `request_velocity` ends exactly once, in the step it ends in (an
    /// order replaced or whose agent was removed: in the next step). The other events say
    /// what the agent did; this one is what a decision layer waits for.
    OrderEnded {
        /// The agent (removed by now, if its removal ended the order).
        agent: AgentId,
        /// The order, as `request_move` returned it.
        order: RequestId,
        /// How it ended.
        outcome: Outcome,
    },
    /// The host's controller answered the agent's step with a value no body can have (a
    /// NaN foot, a velocity past the speed limit, a support moving at 1e30 m/s): the answer
    /// was not taken. The agent is frozen where it last stood, its neighbours neither avoid
    /// nor push it, and every other agent steps on. It stays so, its order kept, until the
    /// game teleports it ([`Crowd::teleport`](crate::crowd::Crowd::teleport)) or removes it.
    Quarantined {
        /// The agent.
        agent: AgentId,
        /// The first field of the answer found wrong, by its name in
        /// [`StepFeedback`](crate::crowd::StepFeedback): `foot` (not finite, or outside
        /// the world's coordinates), `velocity_world_end` or `velocity_support_end` (not
        /// finite, or past the speed limit), `displacement` (one of the three
        /// displacements: not finite, or longer than the world) or `dt` (outside
        /// [`Crowd::STEP_RANGE_S`](crate::crowd::Crowd::STEP_RANGE_S)).
        field: &'static str,
        /// Its value's bits (a vector's largest component; `f32::from_bits` gives it, NaN
        /// included, which an `f32` field would keep from comparing equal).
        value_bits: u32,
    },
}

/// The first value of a controller's answer that put its agent in quarantine
/// ([`CrowdEvent::Quarantined`](crate::crowd::CrowdEvent::Quarantined)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FeedbackFault {
    /// The field.
    pub field: FeedbackField,
    /// The value's bits (a vector's largest component; `f32::from_bits` gives it, NaN
    /// included, which an `f32` field would keep from comparing equal).
    pub value_bits: u32,
}

impl FeedbackFault {
    /// The value.
    pub fn value(&self) -> f32 {
        f32::from_bits(self.value_bits)
    }
}

/// A field of a controller's answer ([`StepFeedback`](crate::crowd::supports::controller::StepFeedback)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum FeedbackField {
    /// `foot`: not finite, or outside the world's coordinates.
    Foot,
    /// `velocity_world_end`: not finite, or past the speed limit.
    Velocity,
    /// `velocity_support_end`: not finite, or past the speed limit.
    SupportVelocity,
    /// A displacement (`displacement`, `displacement_support`, `displacement_correction`):
    /// not finite, or longer than the world.
    Displacement,
    /// `dt`: outside [`Crowd::STEP_RANGE_S`](crate::crowd::Crowd::STEP_RANGE_S).
    StepLength,
}

impl FeedbackField {
    /// Every field, in declaration order (`ALL[f as usize] == f`).
    pub(crate) const ALL: [FeedbackField; 5] = [
        FeedbackField::Foot,
        FeedbackField::Velocity,
        FeedbackField::SupportVelocity,
        FeedbackField::Displacement,
        FeedbackField::StepLength,
    ];

    /// The field's name in [`StepFeedback`](crate::crowd::supports::controller::StepFeedback).
    pub(crate) fn name(self) -> &'static str {
        match self {
            FeedbackField::Foot => "foot",
            FeedbackField::Velocity => "velocity_world_end",
            FeedbackField::SupportVelocity => "velocity_support_end",
            FeedbackField::Displacement => "displacement",
            FeedbackField::StepLength => "dt",
        }
    }
}

impl std::fmt::Display for FeedbackFault {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{} = {}", self.field.name(), self.value())
    }
}

/// How a move order ended ([`CrowdEvent::OrderEnded`](crate::crowd::CrowdEvent::OrderEnded)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The agent reached the target and stopped.
    Success,
    /// The order failed, for this reason; the agent stands.
    Failure(FailureCondition),
    /// The order was cancelled: by `cancel` (once the agent stopped: with the receipt), by a
    /// newer move or velocity order that replaced it, or by removing its agent.
    Cancelled,
}

/// Why a move order failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureCondition {
    /// The target is unreachable: the agent stopped at the end of a partial path, the
    /// reachable point nearest the target.
    Unreachable,
    /// No walkable polygon near the target.
    NoPath,
    /// The order's deadline (`request_move_by`) came before it ended: the agent braked to
    /// a stop, through the same path as a cancel, and is reported once it stands.
    DeadlinePassed,
    /// The agent stayed blocked longer than the crowd's
    /// [`BlockedPolicy::FailAfter`](crate::crowd::BlockedPolicy::FailAfter) allows; it
    /// braked, as for a deadline.
    Blocked(BlockedBy),
    /// The agent's hold failed (`request_hold`): it could not correct (the speed needed
    /// is beyond it) or did not recover by its deadline; it braked, as for a deadline.
    Hold(crate::crowd::interactions::hold::HoldFailure),
    /// The interaction failed (`request_interaction`): no pose, a check failing at the
    /// actual pose, or the target's object teleported, replaced or gone.
    Interaction(crate::crowd::interactions::interaction::InteractionFailure),
}

/// What holds a blocked agent ([`CrowdEvent::Blocked`](crate::crowd::CrowdEvent::Blocked), [`Crowd::blocked`](crate::crowd::Crowd::blocked)).
/// (A closed link never blocks: the route through it is invalidated and computed again,
/// and an order with no other way ends `Failure(Unreachable)` at the nearest point.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockedBy {
    /// Other agents: the way is walkable but taken.
    Crowd,
    /// The edge of walkable space: the controller's step ran into a wall.
    Wall,
}

/// What `Crowd::cancel` returns, the same for every repeated call until the receipt
/// ([`CrowdEvent::Cancelled`](crate::crowd::CrowdEvent::Cancelled)) carries it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CancelRecord {
    /// The order cancelled (a move or a velocity order), if the agent had one.
    pub order: Option<RequestId>,
    /// The frame (`Crowd::frame`) at which the cancel was asked.
    pub frame: u64,
}

/// Seconds a cancelling agent has to stop before the cancel is reported as a fault.
pub const CANCEL_CONFIRM_S: f32 = 2.0;

/// A crowd call with bad input.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CrowdError {
    /// The id names no agent of this crowd (removed, or never issued by it).
    #[error("{0} is not an agent of this crowd (removed, or never issued by it)")]
    UnknownAgent(AgentId),
    /// A position with no walkable polygon within the snap box.
    #[error("position {0} is not on the navigation mesh (no polygon within the snap box)")]
    OffMesh(Vec3),
    /// A non-finite position or target.
    #[error("{what} {value} is not finite")]
    NotFinite {
        /// Which input.
        what: &'static str,
        /// The value.
        value: Vec3,
    },
    /// A value outside its physical range ([`crate::geom::limits`]).
    #[error("{what} {value} is outside its range ({limit})")]
    OutOfRange {
        /// Which input.
        what: &'static str,
        /// The value (a vector's largest component).
        value: f32,
        /// The range it must lie in.
        limit: &'static str,
    },
    /// Agent parameters out of range.
    #[error("agent parameter {field} = {value} is invalid")]
    BadParameter {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f32,
    },
    /// A step length outside [`Crowd::STEP_RANGE_S`](crate::crowd::Crowd::STEP_RANGE_S).
    #[error("step length {0} s is outside 0.0001..=1 s")]
    BadStep(f32),
    /// A crowd configuration field out of range.
    #[error("crowd configuration {field} = {value} is invalid")]
    BadConfig {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f32,
    },
    /// An agent radius wider than the mesh was baked for (its walls keep clear only that
    /// much).
    #[error("agent radius {radius_m} m exceeds the {baked_radius_m} m the mesh was baked for")]
    RadiusOverBaked {
        /// The agent's radius, metres.
        radius_m: f32,
        /// The mesh's baked agent radius, metres.
        baked_radius_m: f32,
    },
    /// An agent height taller than the mesh was baked for (it would not fit under the
    /// ceilings the bake let through).
    #[error("agent height {height_m} m exceeds the {baked_height_m} m the mesh was baked for")]
    HeightOverBaked {
        /// The agent's height, metres.
        height_m: f32,
        /// The mesh's baked agent height, metres.
        baked_height_m: f32,
    },
    /// A filter id not registered with this crowd.
    #[error("query filter {0:?} is not registered with this crowd")]
    UnknownFilter(FilterId),
    /// An avoidance profile id not registered with this crowd.
    #[error("avoidance profile {0:?} is not registered with this crowd")]
    UnknownProfile(ProfileId),
    /// A table of filters or profiles is full.
    #[error("the crowd's {table} table is full ({entries} entries)")]
    TableFull {
        /// Which table.
        table: &'static str,
        /// Its size.
        entries: usize,
    },
    /// A new order for an agent whose cancel has not been confirmed yet: its mover is still
    /// held by the cancel (wait for [`CrowdEvent::Cancelled`](crate::crowd::CrowdEvent::Cancelled)).
    #[error("{agent} is still cancelling (asked at frame {}); its mover takes no new order until the receipt", record.frame)]
    Cancelling {
        /// The agent.
        agent: AgentId,
        /// Its cancel.
        record: CancelRecord,
    },
    /// A new order for an agent whose controller reported its velocity unknown (spec
    /// 004's vUnknown) while an order holds its mover: the owner keeps it, and no new
    /// action takes over until the controller reports a valid velocity again.
    #[error(
        "{agent}'s velocity is unknown; its mover stays with {owner:?} until the controller reports one"
    )]
    VelocityUnknown {
        /// The agent.
        agent: AgentId,
        /// What holds the mover.
        owner: MoverAction,
    },
    /// A cancel by order identity ([`Crowd::cancel_order`](crate::crowd::Crowd::cancel_order))
    /// of an order that does not own the agent's mover (ended, replaced, or never its):
    /// a late cancel from an old owner never touches the new one.
    #[error("{order:?} does not own {agent}'s mover (its owner: {owner:?})")]
    NotOwner {
        /// The agent.
        agent: AgentId,
        /// The order named.
        order: RequestId,
        /// What owns the mover now, if anything.
        owner: Option<MoverAction>,
    },
    /// An interaction target that cannot be projected: a record field out of range, or a
    /// moving target whose object the host's world does not place.
    #[error("interaction target: {0}")]
    Target(crate::target::TargetError),
    /// A support id no polygon layer can carry (`SupportId(n)` is layer `n + 1`, so `n` is
    /// at most 65,534).
    #[error("{0:?} is beyond the support layers (layer n + 1 carries support n, n <= 65534)")]
    UnknownSupport(crate::ids::SupportId),
    /// A support motion that turns while it rises or sinks: its footprint would move,
    /// which needs the support's polygons placed by a pose (not supported yet).
    #[error(
        "{support:?}: a support that turns ({turn_rad_s} rad/s) cannot also move vertically ({vertical_mps} m/s)"
    )]
    UnsupportedSupportMotion {
        /// The support.
        support: crate::ids::SupportId,
        /// Its turn rate, rad/s.
        turn_rad_s: f32,
        /// Its vertical velocity, m/s.
        vertical_mps: f32,
    },
    /// A platform motion that cannot be one.
    #[error("platform motion {motion:?} of {support:?}: {problem}")]
    BadPlatformMotion {
        /// The support.
        support: crate::ids::SupportId,
        /// The motion given.
        motion: crate::crowd::supports::platform::PlatformMotion,
        /// The limit it breaks.
        problem: &'static str,
    },
    /// A support asked to be a platform and a moving surface (a belt, a turntable) at once.
    #[error(
        "{support:?} has a surface motion and a platform motion; a support has one or the other"
    )]
    PlatformWithSurfaceMotion {
        /// The support.
        support: crate::ids::SupportId,
    },
    /// A dock that cannot be one.
    #[error("dock {dock:?} of {link:?}: {problem}")]
    BadLinkDock {
        /// The link.
        link: crate::mesh::LinkId,
        /// The dock given.
        dock: crate::crowd::supports::platform::LinkDock,
        /// The limit it breaks.
        problem: &'static str,
    },
    /// A link the crowd's mesh does not have.
    #[error("{0:?} is not a link of the crowd's mesh")]
    UnknownLink(crate::mesh::LinkId),
    /// A connection window that cannot be one.
    #[error("connection window {window:?} of {link:?}: {problem}")]
    BadConnectionWindow {
        /// The link.
        link: crate::mesh::LinkId,
        /// The window given.
        window: crate::crowd::supports::connection::ConnectionWindow,
        /// The limit it breaks.
        problem: &'static str,
    },
    /// A deadline that is not after the crowd's current frame.
    #[error("deadline frame {deadline_frame} is not after the crowd's frame {frame}")]
    PastDeadline {
        /// The deadline asked for.
        deadline_frame: u64,
        /// The crowd's frame ([`Crowd::frame`](crate::crowd::Crowd::frame)).
        frame: u64,
    },
    /// More agents than a crowd can hold ([`Crowd::AGENTS_MAX`](crate::crowd::Crowd::AGENTS_MAX)).
    #[error("{requested} agents exceed a crowd's limit of {AGENTS_MAX}")]
    TooManyAgents {
        /// Agents the crowd would hold.
        requested: usize,
    },
    /// A percentile of the path waits ([`Crowd::path_wait_frames`](crate::crowd::Crowd::path_wait_frames)) asked with a fraction outside 0 to 1 (or NaN).
    #[error("percentile fraction {0} is not within 0 to 1")]
    BadPercentile(f64),
    /// The system refused the memory for this many agents' state.
    #[error("no memory for the state of {agents} agents")]
    OutOfMemory {
        /// Agents the crowd would hold.
        agents: usize,
    },
    /// The host's controller answered a step with another number of feedback records than
    /// it was given requests. The step stops there: no agent moves, none is lost, and the
    /// step's events so far are not reported.
    #[error("the controller returned {feedback} feedback records for {requests} step requests")]
    ControllerFeedback {
        /// Requests given.
        requests: usize,
        /// Feedback records returned.
        feedback: usize,
    },
}

/// What holds an agent's mover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoverAction {
    /// A move order (`request_move`, `request_move_by`).
    Move(RequestId),
    /// A velocity order (`request_velocity`).
    Velocity(RequestId),
    /// Braking to a stop (a cancel, a deadline passed, a block past the policy, a failed
    /// hold), until the agent stands.
    Braking(CancelRecord),
    /// A hold order (`request_hold`): station keeping at a stand pose.
    Hold(RequestId),
}

/// The owner token of an agent's mover ([`Crowd::owner`](crate::crowd::Crowd::owner)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoverOwner {
    /// What holds the mover.
    pub action: MoverAction,
    /// The handoff step at which it took it: the count of the agent's owner changes so
    /// far (an order, a velocity order, a braking, a release each count one).
    pub handoff: u32,
}
