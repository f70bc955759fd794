//! The crowd runtime: thousands of agents moved every frame along shared corridors, under
//! one node budget for path finding, with slope-aware limits and step feedback (spec 001,
//! spec 004).
//!
//! Stage: runtime, above [`query`](crate::query). Inputs: a mesh snapshot and a game's
//! orders (moves, velocities, teleports, parameters, per-agent filters and avoidance
//! profiles) for agents named by [`AgentId`]s. Outputs: each step, every agent's position,
//! velocity and status ([`Crowd::agents`]) and the step's [`CrowdEvent`]s.
//!
//! Inside, identity and protocol state (move requests with their logical id, attempt and
//! epoch; velocity requests; link crossings; parameters) live in a `hecs::World`, one
//! entity per agent, found from its [`AgentId`] through the crowd's own table of issued
//! ids (so a restored crowd reissues exactly the ids the game would have got); the hot
//! per-frame state lives in dense struct-of-arrays lanes indexed by slot. Each agent's
//! mover has one owner at a time ([`Crowd::owner`]: its move order, its velocity order or
//! its braking), taken at one admission entry (`owner.rs`), and every order ends exactly
//! once in a [`CrowdEvent::OrderEnded`] with its [`Outcome`]. [`Crowd::step`] runs the passes in the order
//! written once in `step.rs`: interactions -> ingest -> schedule -> adopt -> follow (a walker
//! pushed off its corridor reconnects to it) -> slope -> avoid -> move -> separate -> goals
//! on moving belts carried -> feedback, each timed and counted in [`StepStats`]. The avoid pass
//! (`avoid/`) negotiates velocities between neighbours found by a per-frame grid
//! (`neighbours.rs`). [`Crowd::save`] and [`Crowd::restore`] (`save/`) turn the whole
//! crowd into versioned, checksummed bytes and back. With [`CrowdConfig::ordered_log`] on,
//! every accepted command, every result at the commit point with its decision and every
//! outcome is written in order to an outbox the host drains ([`Crowd::drain_log`]), and a
//! [`Replay`] runs such a log again, its paths read from the log (`log.rs`).
//! `docs/architecture.md` maps the rest of the files.
//!
//! Invariants: an agent is never lost (a failed step leaves it where it was, with a
//! reason); no mover has two owners, and no order ends twice or not at all; a path result is adopted only at the adopt pass, and only if its request id,
//! attempt and epoch still match the agent's request and its read set is still valid;
//! parallel passes write only their own outputs and results are collected in slot order, so
//! the same inputs give the same lanes and events at any thread count.
//!
//! # The API in four groups
//!
//! - **The core**, what every game calls: [`Crowd::new`] with a [`CrowdConfig`];
//!   [`Crowd::add_agent`] with [`AgentParams`] and [`Crowd::remove_agent`];
//!   [`Crowd::request_move`], [`Crowd::request_velocity`], [`Crowd::cancel`];
//!   [`Crowd::set_params`], query filters ([`Crowd::add_filter`]) and avoidance profiles
//!   ([`Crowd::add_avoidance_profile`]); [`Crowd::step`] with a [`Controller`] (the
//!   built-in [`KinematicController`] or the host's), which returns [`CrowdEvent`]s; and
//!   the agents as [`AgentView`]s ([`Crowd::agents`]).
//! - **The protocol**: the ordered log ([`CrowdConfig::ordered_log`], [`Crowd::drain_log`],
//!   [`LogEntry`]), [`Replay`], and [`Crowd::save`] / [`Crowd::restore`].
//! - **Interactions and holds** (spec 000 and 001): [`Crowd::request_interaction`] with the
//!   host's [`InteractionWorld`], [`Crowd::request_hold`] with a [`HoldPolicy`].
//! - **Moving supports** (spec 004): belts and turntables ([`Crowd::set_support_motion`]),
//!   platforms ([`Crowd::set_platform_motion`]) with their docks and link windows.
//!
//! # Example
//! ```
//! use glam::Vec3;
//! use waymark::crowd::{AgentParams, Crowd, CrowdConfig, CrowdEvent, KinematicController};
//! use waymark::mesh::{NavMesh, TileData, WalkablePolygon, blob::BakeParams};
//!
//! // Walkable space: a 10 m x 2 m strip (baked tiles work the same way).
//! let strip = WalkablePolygon::ground(vec![
//!     Vec3::new(0.0, 0.0, 0.0),
//!     Vec3::new(10.0, 0.0, 0.0),
//!     Vec3::new(10.0, 0.0, 2.0),
//!     Vec3::new(0.0, 0.0, 2.0),
//! ]);
//! let mut mesh = NavMesh::new(BakeParams::default());
//! mesh.add_tiles(vec![TileData::from_walkable_polygons(&[strip]).unwrap()]).unwrap();
//!
//! let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
//! let agent = crowd.add_agent(Vec3::new(1.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE).unwrap();
//! crowd.request_move(agent, Vec3::new(9.0, 0.0, 1.0)).unwrap();
//! let mut controller = KinematicController;
//! let mut arrived = false;
//! for _ in 0..300 {
//!     for event in crowd.step(1.0 / 30.0, &mut controller).unwrap() {
//!         arrived |= matches!(event, CrowdEvent::Arrived { agent: arrived_agent, .. } if arrived_agent == agent);
//!     }
//! }
//! assert!(arrived);
//! assert!(crowd.position(agent).unwrap().distance(Vec3::new(9.0, 0.0, 1.0)) < 0.3);
//! ```

// The rooms, each importing only those listed before it (`tests/crowd_rooms.rs` checks it):
// the codec and the compute helpers are leaves; agents, supports, interactions and events
// are the vocabulary; paths, lanes, walking and avoidance the state and kernels of a step;
// the log, configuration, components, statistics, scratch and save below the runtime,
// which assembles the `Crowd` and holds its orders, its step and its save.
mod agents;
mod avoidance;
mod codec;
mod components;
mod compute;
mod config;
mod events;
mod interactions;
mod lanes;
mod log;
mod paths;
mod runtime;
mod save;
mod scratch;
mod stats;
mod supports;
mod walking;

/// The crowd's passes and lanes, for the crate's benchmarks, stress runs and white-box
/// tests: not part of the API, changed without notice, and compiled only with the
/// `harness` feature (a game leaves it off).
#[cfg(feature = "harness")]
#[doc(hidden)]
pub mod internals {
    pub use super::agents::TABLE_ENTRIES_MAX;
    pub use super::avoidance::neighbours::NeighbourGrid;
    pub use super::avoidance::velocities::{
        AvoidBody, ConstraintLanes, HalfPlane, NeighbourBatch, VelocityBounds, avoid_pass,
        gather_bodies, gather_carried, gather_frames, orca_constraints_scalar, solve_velocity,
    };
    pub use super::compute::cpu::use_baseline_only;
    pub use super::events::CANCEL_CONFIRM_S;
    pub use super::interactions::hold::{HoldKeeper, HoldObservation};
    pub use super::lanes::AgentLanes;
    pub use super::log::mesh_fingerprint;
    pub use super::paths::corridor::{
        CORRIDOR_POLYGONS_MAX, CorridorCache, CorridorKey, CorridorMemory, CorridorReads,
    };
    pub use super::runtime::flow::{FlowMeter, FlowReport, PROGRESS_STEP_M, STUCK_AFTER_S};
    pub use super::supports::controller::{integrate_velocity, move_foot};
    pub use super::supports::platform::{FlatFrame, PlatformFrames};
    pub use super::supports::support::{LEAN_LEAST_PROGRESS, lean_into_carry, turn_about_up};
    pub use super::walking::funnel::{LOOKAHEAD_PORTALS, funnel_scalar};
    pub use super::walking::passes::{
        PortalWindow, STALL_S, feedback_velocities, follow_one, follow_pass, patch_gradient,
        profile_speed, rejoin, slope_limits_scalar, slope_limits_simd, slope_pass,
        stopping_distance, track_progress,
    };
}

// The core: what every game calls.
pub use agents::{AgentId, AgentParams, AgentStatus, AgentView, FilterId, ProfileId, RequestId};
pub use avoidance::velocities::{AvoidanceConfig, AvoidanceProfile};
pub use config::{BlockedPolicy, CrowdConfig};
pub use events::{
    BlockedBy, CancelRecord, CrowdError, CrowdEvent, FailureCondition, MoverAction, MoverOwner,
    Outcome,
};
pub use paths::corridor::Corridor;
pub use runtime::Crowd;
pub use runtime::step::crossing::CrossingState;
pub use stats::StepStats;
pub use supports::controller::{Controller, KinematicController, StepFeedback, StepRequest};

// The protocol: the ordered log, replay, save and restore.
pub use codec::RestoreError;
pub use log::{Decision, LogEntry, LogRecord, LoggedAnswer, ReplayError};
pub use runtime::replay::Replay;

// Interactions and holds.
pub use interactions::hold::{FactChange, HoldFailure, HoldPhase, HoldPolicy, HoldView};
pub use interactions::interaction::{
    InteractionFailure, InteractionPhase, InteractionView, InteractionWorld,
};

// Moving supports and platforms.
pub use supports::connection::ConnectionWindow;
pub use supports::platform::{LinkDock, PlatformMotion, PlatformPose, Shuttle};
pub use supports::support::{SupportAcceleration, SupportMotion};

// For the crate's harness.
#[cfg(feature = "harness")]
pub(crate) use log::Fnv;
#[cfg(feature = "harness")]
pub(crate) use paths::scheduler::PathWaits;
