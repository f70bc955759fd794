//! The crowd's `hecs` components: per-agent state that few agents change a frame (an
//! agent's slot, its orders, a link crossing), kept out of the hot lanes.
//!
//! Stage: crowd runtime. Invariant: an agent's entity carries a [`Slot`] and its
//! `AgentParams` for as long as it lives; the other components come and go with orders.

use glam::Vec3;

use crate::crowd::agents::RequestId;

/// An agent's slot in the lanes (a hecs component).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot(pub usize);

/// An agent's move request (a hecs component).
#[derive(Clone, Copy, Debug)]
pub(crate) struct MoveRequest {
    pub target: Vec3,
    /// The order's identity, as `request_move` returned it and events report it.
    pub order: RequestId,
    /// The identity of the query serving the order now (spec 001 h1): the order's own at
    /// first; a query re-computed after a rejection is a new request with a new logical id
    /// (the old one expires for good: its results never match again); after a new epoch a
    /// query not yet answered resumes with its logical id, the next attempt and the epoch.
    pub query: RequestId,
    /// Whether the result must be adopted (false once adopted or finished).
    pub awaiting: bool,
    /// Attempts since a corridor was last adopted: an agent pushed off its corridor many
    /// times over a long walk is not failing, one whose paths keep being rejected is.
    pub attempts_since_adopted: u32,
    /// Whether a searched corridor has been adopted for this request (a head start does
    /// not count): false while the order still waits for its first path.
    pub adopted_once: bool,
    /// The crowd frame by which the order must have ended (`None`: no deadline).
    pub deadline_frame: Option<u64>,
}

/// An agent whose cancel waits for its receipt (a hecs component): it brakes to a stop.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cancelling {
    pub record: super::events::CancelRecord,
    /// What stopped the agent: the outcome its order gets once it stands.
    pub ending: Ending,
    /// Whether the host asked to cancel (with this record): the receipt is owed, also when
    /// a deadline or a block started the braking.
    pub receipt_owed: bool,
    /// Seconds since the cancel.
    pub waited_s: f32,
    /// Whether the fault was reported.
    pub faulted: bool,
}

/// Why a braking agent brakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The host cancelled: the receipt, then the order (if any) ends `Cancelled`.
    Cancel,
    /// The order's deadline passed: it ends `Failure(DeadlinePassed)`, without a receipt.
    Deadline,
    /// The agent stayed blocked too long (`BlockedPolicy::FailAfter`): it ends
    /// `Failure(Blocked(by))`, without a receipt.
    Blocked(super::events::BlockedBy),
    /// The agent's hold failed: it ends `Failure(Hold(why))`, without a receipt.
    Hold(crate::crowd::interactions::hold::HoldFailure),
    /// The agent's interaction failed: its walk or hold ends `Failure(Interaction(why))`,
    /// without a receipt.
    Interaction(crate::crowd::interactions::interaction::InteractionFailure),
}

/// An agent moving at a velocity its host asked for (a hecs component).
#[derive(Clone, Copy, Debug)]
pub(crate) struct VelocityRequest {
    /// Horizontal, m/s.
    pub velocity: glam::Vec2,
    /// The order's identity, as `request_velocity` returned it.
    pub order: RequestId,
}

/// An agent keeping a stand pose (a hecs component): the order, the pose's point, and the
/// keeper judging its stand fact.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HoldOrder {
    /// The order's identity, as `request_hold` returned it.
    pub order: RequestId,
    /// Where the agent stands, in the world.
    pub target: Vec3,
    pub keeper: crate::crowd::interactions::hold::HoldKeeper,
}

/// A hold reserved by `request_move_then_hold` beside its move order (a hecs component):
/// the move's success hands the mover to it, any other ending of the move ends it
/// `Cancelled` unstarted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HoldReserved {
    /// The hold's identity, issued with the move's at admission.
    pub hold: RequestId,
    pub policy: crate::crowd::interactions::hold::HoldPolicy,
}

/// An agent crossing an off-mesh link (a hecs component: few agents cross at once, so the
/// crossing's state stays out of the lanes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LinkCrossing {
    pub link: crate::mesh::LinkId,
    /// Foot position where the crossing started, in the world.
    pub from: Vec3,
    /// The same in the frame of the support it started on (a platform's: where the agent
    /// stands again if the crossing is undone).
    pub entry: Vec3,
    /// The link's exit, in the frame of the landing polygon's support.
    pub to: Vec3,
    pub elapsed_s: f32,
    pub duration_s: f32,
    /// The corridor polygon the link lands in, and its index.
    pub landing: crate::mesh::PolyRef,
    pub landing_index: u32,
}
