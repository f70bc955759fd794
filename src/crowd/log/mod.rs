//! The ordered log and its replay (spec 001: every command, every adoption or rejection
//! and every terminal outcome is written, in order, before it takes effect).
//!
//! Stage: crowd runtime, beside the commands and the step. With
//! [`CrowdConfig::ordered_log`](crate::crowd::CrowdConfig::ordered_log) on, the crowd
//! appends a [`LogEntry`] to its outbox for
//! - each command it accepts, at the call, before the step that carries it out (a refused
//!   command changes nothing and is not logged);
//! - each path result at the commit point: the result (its corridor, with the read set it
//!   depends on) and the decision taken (adopted, walked as a head start, rejected and why,
//!   failed), before the decision is applied; and each search under way that a mesh
//!   change closes because it had read what changed (its query expires);
//! - each order's terminal outcome, before the step returns it to the host.
//!
//! Entries are numbered from the crowd's frontier ([`Crowd::log_frontier`](crate::crowd::Crowd::log_frontier), saved with the
//! crowd), so a host that keeps what it drains ([`Crowd::drain_log`](crate::crowd::Crowd::drain_log)) has a gapless record
//! from any save on. The outbox holds only what the host has not drained.
//!
//! Replay: a [`Replay`](crate::crowd::Replay) runs a log against a crowd in the state the log starts from (a new
//! crowd, or one restored from the save whose frontier is the log's first number). It
//! gives the logged commands again at their frames and steps the crowd in replay mode: no
//! path search runs; each step's results are read from the log and put through the same
//! commit point, which must come to the decision the log holds, and each outcome must be
//! the logged one. So a run whose searches raced the clock (a time budget,
//! [`CrowdConfig::path_search_time_ms`](crate::crowd::CrowdConfig::path_search_time_ms)) is
//! reproduced exactly, which running it again would not do; any difference stops the
//! replay with a [`ReplayError`] naming the entry.
//!
//! Invariants: sequence numbers are consecutive from the frontier; the entries of a frame
//! are in the order things happened; a replay with logging on writes the log it replays.

use std::collections::VecDeque;
use std::sync::Arc;

use glam::Vec3;

use super::events::{CancelRecord, CrowdError, Outcome};
use crate::crowd::agents::RequestId;
use crate::crowd::agents::{AgentId, AgentParams, FilterId, ProfileId};
use crate::crowd::avoidance::velocities::AvoidanceProfile;
use crate::crowd::paths::corridor::Corridor;
use crate::mesh::{PolyRef, Snapshot};
use crate::query::{QueryFilter, Validity};

/// One entry of the ordered log.
#[derive(Clone, Debug, PartialEq)]
pub struct LogEntry {
    /// Its place in the log: consecutive from the crowd's frontier.
    pub sequence: u64,
    /// The crowd's frame ([`Crowd::frame`](crate::crowd::Crowd::frame)) when it was written: a command at frame `f` is
    /// carried out by the step that starts at `f`, and a result or outcome was decided in it.
    pub frame: u64,
    /// What happened.
    pub record: LogRecord,
}

/// What a log entry records: a command the crowd accepted (with the identities it issued),
/// a path result at the commit point, an expired search, or an order's outcome.
#[derive(Clone, Debug, PartialEq)]
pub enum LogRecord {
    /// [`Crowd::add_agent`](crate::crowd::Crowd::add_agent).
    AddAgent {
        /// The id issued.
        agent: AgentId,
        /// The position asked for (before snapping).
        position: Vec3,
        /// Its parameters.
        params: AgentParams,
    },
    /// [`Crowd::remove_agent`](crate::crowd::Crowd::remove_agent).
    RemoveAgent {
        /// The agent.
        agent: AgentId,
    },
    /// [`Crowd::request_move`](crate::crowd::Crowd::request_move) or [`Crowd::request_move_by`](crate::crowd::Crowd::request_move_by).
    Move {
        /// The agent.
        agent: AgentId,
        /// The order's identity.
        order: RequestId,
        /// The target asked for.
        target: Vec3,
        /// The deadline, if any.
        deadline_frame: Option<u64>,
    },
    /// [`Crowd::request_velocity`](crate::crowd::Crowd::request_velocity).
    Velocity {
        /// The agent.
        agent: AgentId,
        /// The order's identity.
        order: RequestId,
        /// The velocity asked for.
        velocity: Vec3,
    },
    /// [`Crowd::request_hold`](crate::crowd::Crowd::request_hold).
    Hold {
        /// The agent.
        agent: AgentId,
        /// The order's identity.
        order: RequestId,
        /// The stand point.
        target: Vec3,
        /// The hold's policy.
        policy: crate::crowd::interactions::hold::HoldPolicy,
    },
    /// The hold [`Crowd::request_move_then_hold`](crate::crowd::Crowd::request_move_then_hold) reserves beside its move (logged after
    /// the move).
    ReserveHold {
        /// The agent.
        agent: AgentId,
        /// The hold's identity.
        hold: RequestId,
        /// Its policy.
        policy: crate::crowd::interactions::hold::HoldPolicy,
    },
    /// [`Crowd::request_interaction`](crate::crowd::Crowd::request_interaction), with the foot of the pose its projection chose
    /// (`None`: it found none, and the order ended at once).
    Interact {
        /// The agent.
        agent: AgentId,
        /// The interaction's identity.
        order: RequestId,
        /// Its hold's.
        hold: RequestId,
        /// The target.
        record: Box<crate::target::TargetRecord>,
        /// The hold's policy.
        policy: crate::crowd::interactions::hold::HoldPolicy,
        /// The chosen pose's foot.
        foot: Option<Vec3>,
    },
    /// [`Crowd::push`](crate::crowd::Crowd::push).
    Push {
        /// The agent.
        agent: AgentId,
        /// The displacement asked for.
        by: Vec3,
    },
    /// [`Crowd::set_support_velocity`](crate::crowd::Crowd::set_support_velocity).
    SetSupportVelocity {
        /// The support.
        support: crate::ids::SupportId,
        /// Its surface velocity.
        velocity: Vec3,
    },
    /// [`Crowd::set_support_rotation`](crate::crowd::Crowd::set_support_rotation).
    SetSupportRotation {
        /// The support.
        support: crate::ids::SupportId,
        /// The point it turns about.
        centre: Vec3,
        /// Its turn rate about Up, rad/s.
        angular_velocity_rad_s: f32,
    },
    /// [`Crowd::set_link_window`](crate::crowd::Crowd::set_link_window).
    SetLinkWindow {
        /// The link.
        link: crate::mesh::LinkId,
        /// Its window (`None`: none).
        window: Option<crate::crowd::supports::connection::ConnectionWindow>,
    },
    /// [`Crowd::set_platform_motion`](crate::crowd::Crowd::set_platform_motion).
    SetPlatformMotion {
        /// The support.
        support: crate::ids::SupportId,
        /// Its motion (`None`: no longer a platform).
        motion: Option<crate::crowd::supports::platform::PlatformMotion>,
    },
    /// [`Crowd::set_link_dock`](crate::crowd::Crowd::set_link_dock).
    SetLinkDock {
        /// The link.
        link: crate::mesh::LinkId,
        /// Its dock (`None`: none).
        dock: Option<crate::crowd::supports::platform::LinkDock>,
    },
    /// [`Crowd::release_hold`](crate::crowd::Crowd::release_hold).
    ReleaseHold {
        /// The agent.
        agent: AgentId,
        /// The hold released.
        hold: RequestId,
    },
    /// [`Crowd::cancel`](crate::crowd::Crowd::cancel).
    Cancel {
        /// The agent.
        agent: AgentId,
        /// The record returned.
        record: CancelRecord,
    },
    /// [`Crowd::teleport`](crate::crowd::Crowd::teleport).
    Teleport {
        /// The agent.
        agent: AgentId,
        /// The position asked for (before snapping).
        position: Vec3,
    },
    /// [`Crowd::set_params`](crate::crowd::Crowd::set_params).
    SetParams {
        /// The agent.
        agent: AgentId,
        /// The new parameters.
        params: AgentParams,
    },
    /// [`Crowd::add_filter`](crate::crowd::Crowd::add_filter).
    AddFilter {
        /// The id issued.
        filter: FilterId,
        /// The filter as given (boxed: it is most of a log entry's size otherwise).
        query_filter: Box<QueryFilter>,
    },
    /// [`Crowd::set_filter`](crate::crowd::Crowd::set_filter).
    SetFilter {
        /// The agent.
        agent: AgentId,
        /// Its new filter.
        filter: FilterId,
    },
    /// [`Crowd::add_avoidance_profile`](crate::crowd::Crowd::add_avoidance_profile).
    AddAvoidanceProfile {
        /// The id issued.
        profile: ProfileId,
        /// The profile.
        avoidance: AvoidanceProfile,
    },
    /// [`Crowd::set_avoidance_profile`](crate::crowd::Crowd::set_avoidance_profile).
    SetAvoidanceProfile {
        /// The agent.
        agent: AgentId,
        /// Its new profile.
        profile: ProfileId,
    },
    /// [`Crowd::bump_epoch`](crate::crowd::Crowd::bump_epoch).
    BumpEpoch {
        /// The epoch begun.
        epoch: u32,
    },
    /// [`Crowd::set_mesh`](crate::crowd::Crowd::set_mesh): the crowd took a new snapshot. The mesh itself is the game's;
    /// the log keeps its fingerprint, which a replay checks against the mesh it is given.
    SetMesh {
        /// A fingerprint of the snapshot taken: every tile slot's state and generation and
        /// every link's version.
        fingerprint: u64,
    },
    /// A path result at the commit point and the decision taken.
    Result {
        /// The agent.
        agent: AgentId,
        /// The query it answers.
        query: RequestId,
        /// The goal the search snapped the target to, if it got that far.
        goal: Option<(PolyRef, Vec3)>,
        /// What the search produced.
        answer: LoggedAnswer,
        /// What the commit point made of it.
        decision: Decision,
    },
    /// A search under way that had read what a mesh change touched, closed at the change
    /// ([`Crowd::set_mesh`](crate::crowd::Crowd::set_mesh)): its query expires, and the route is asked again as a new one.
    Expired {
        /// The agent.
        agent: AgentId,
        /// The expired query.
        query: RequestId,
        /// What changed: the first dependency found stale.
        changed: Validity,
    },
    /// An order's terminal outcome (as its [`CrowdEvent::OrderEnded`](crate::crowd::CrowdEvent::OrderEnded)).
    Ended {
        /// The agent.
        agent: AgentId,
        /// The order.
        order: RequestId,
        /// How it ended.
        outcome: Outcome,
    },
}

/// A path result at the commit point, as a replay feeds it back ([`LogRecord::Result`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LoggedResult {
    pub agent: AgentId,
    pub query: RequestId,
    pub goal: Option<(PolyRef, Vec3)>,
    pub answer: LoggedAnswer,
    pub decision: Decision,
}

/// What a search produced (its corridor carries the read set it depends on).
#[derive(Clone, Debug, PartialEq)]
pub enum LoggedAnswer {
    /// A corridor to the goal, or toward it (partial).
    Corridor(Arc<Corridor>),
    /// A head start to walk while the search waits its turn.
    HeadStart(Arc<Corridor>),
    /// The search could not run, or its path no longer made a corridor.
    Retry,
    /// No walkable polygon near the target.
    NoGoal,
}

/// The commit point's decision on a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The corridor became the agent's.
    Adopted,
    /// The agent walks the head start.
    HeadStartWalked,
    /// The head start no longer fits (the agent moved, or the mesh it read changed).
    HeadStartSkipped,
    /// Rejected: its query is not the agent's current one, or is of an older epoch. The
    /// other rejections ask the route again under a new query.
    RejectedNotCurrent,
    /// Rejected: the search gave no corridor.
    RejectedNoCorridor,
    /// Rejected: a dependency it read changed (the first one found).
    RejectedStale(Validity),
    /// Rejected: the agent has left the corridor's reach while it waited.
    RejectedOffCorridor,
    /// The order failed (no walkable polygon near the target).
    Failed,
}

impl LogRecord {
    /// Whether it records a command (not a result, an expiry or an outcome).
    pub fn is_command(&self) -> bool {
        !matches!(
            self,
            LogRecord::Result { .. } | LogRecord::Expired { .. } | LogRecord::Ended { .. }
        )
    }
}

impl Decision {
    /// The decision of a rejection.
    pub(crate) fn rejected(why: Rejection) -> Decision {
        match why {
            Rejection::NotCurrent => Decision::RejectedNotCurrent,
            Rejection::NoCorridor => Decision::RejectedNoCorridor,
            Rejection::Stale(changed) => Decision::RejectedStale(changed),
            Rejection::OffCorridor => Decision::RejectedOffCorridor,
        }
    }
}

/// Why a result was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// Its query is not the agent's current one, or is of an older epoch.
    NotCurrent,
    /// The search gave no corridor.
    NoCorridor,
    /// A dependency it read changed: the first one found.
    Stale(Validity),
    /// The agent has left the corridor's reach while it waited.
    OffCorridor,
}

/// A refused replay.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReplayError {
    /// The log does not start at the crowd's frontier.
    #[error("the log starts at entry {log_starts}, the crowd's frontier is {frontier}")]
    NotAtFrontier {
        /// The first entry's sequence number.
        log_starts: u64,
        /// [`Crowd::log_frontier`](crate::crowd::Crowd::log_frontier).
        frontier: u64,
    },
    /// Entries out of order: a gap in the numbers or a frame going back.
    #[error("log entry {sequence} (frame {frame}) is out of order")]
    OutOfOrder {
        /// The entry.
        sequence: u64,
        /// Its frame.
        frame: u64,
    },
    /// A logged command was refused by the crowd.
    #[error("log entry {sequence}: the crowd refused the command: {error}")]
    Refused {
        /// The entry.
        sequence: u64,
        /// The crowd's error.
        error: CrowdError,
    },
    /// The mesh the host gave for a logged mesh change is not the logged one.
    #[error("log entry {sequence}: the mesh given has fingerprint {given:#x}, the log {logged:#x}")]
    WrongMesh {
        /// The entry.
        sequence: u64,
        /// The logged fingerprint.
        logged: u64,
        /// The given mesh's.
        given: u64,
    },
    /// The replayed run came to something other than the log holds.
    #[error("log entry {sequence} (frame {frame}): logged {logged}, replayed {replayed}")]
    Diverged {
        /// The entry.
        sequence: u64,
        /// Its frame.
        frame: u64,
        /// What the log holds.
        logged: String,
        /// What the replay did.
        replayed: String,
    },
    /// The crowd's step failed.
    #[error("the step failed: {0}")]
    Step(CrowdError),
    /// A logged interaction order, replayed without the host's world
    /// ([`Replay::step_with`](crate::crowd::Replay::step_with) gives it).
    #[error("log entry {sequence}: an interaction order needs the host's world to replay")]
    NeedsWorld {
        /// The entry.
        sequence: u64,
    },
}

/// A fingerprint of a snapshot's tiles and links (every slot's state and generation,
/// every link's version): two snapshots with the same one hold the same polygons and
/// links, as far as a crowd can tell.
pub fn mesh_fingerprint(snapshot: &Snapshot) -> u64 {
    let data = snapshot.data();
    let mut hash = Fnv::default();
    hash.mix(data.slots.len() as u64);
    for view in &data.slots {
        let state = match view.state {
            crate::mesh::SlotState::Empty => 0,
            crate::mesh::SlotState::Live(_) => 1,
            crate::mesh::SlotState::Pending => 2,
        };
        hash.mix(state);
        hash.mix(u64::from(view.generation.0));
    }
    hash.mix(data.links.len() as u64);
    for link in &data.links {
        hash.mix(link.version.0);
    }
    hash.0
}

/// FNV-1a, 64 bits, over 64-bit words: the crate's fingerprints (of meshes here, of runs in
/// the harness), stable across builds and platforms.
pub(crate) struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Mixes in one word, byte by byte.
    pub fn mix(&mut self, value: u64) {
        for byte in value.to_le_bytes() {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The crowd's side of the log: the outbox, the next sequence number, and in replay mode
/// the results and outcomes still to come.
#[derive(Default)]
pub(crate) struct OrderedLog {
    /// Entries written and not yet drained.
    pub outbox: Vec<LogEntry>,
    /// The next entry's sequence number (saved with the crowd).
    pub frontier: u64,
    /// Replay mode: results and outcomes read from the log instead of searched.
    pub replay: Option<ReplayFeed>,
}

/// In replay mode, what the log says the steps will decide.
#[derive(Default)]
pub(crate) struct ReplayFeed {
    /// Logged results, in order: (sequence, frame, result).
    pub results: VecDeque<(u64, u64, LoggedResult)>,
    /// The searches the mesh change being given closes, as logged right after it:
    /// (agent, query, changed).
    pub expiries: Vec<(AgentId, RequestId, Validity)>,
    /// Logged outcomes, in order: (sequence, frame, agent, order, outcome).
    pub outcomes: VecDeque<(u64, u64, AgentId, RequestId, Outcome)>,
    /// The first difference found.
    pub divergence: Option<ReplayError>,
}

impl ReplayFeed {
    pub(crate) fn diverge(&mut self, sequence: u64, frame: u64, logged: String, replayed: String) {
        if self.divergence.is_none() {
            self.divergence = Some(ReplayError::Diverged {
                sequence,
                frame,
                logged,
                replayed,
            });
        }
    }
}
