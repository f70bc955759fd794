//! The avoid pass: reciprocal velocity obstacles (ORCA) between agents, the mesh boundary as
//! a hard constraint, and the slope-scaled speed and acceleration circles of spec 004.
//!
//! Stage: crowd, between slope and move. Inputs per agent: position, carried end velocity
//! vEnd, preferred velocity (the follow pass's `desired`), radius, horizontal limits V/k and
//! A/k, status; the K nearest neighbours from [`NeighbourGrid`]; the boundary segments near
//! the agent's polygon. Output: a new requested velocity per agent, the admissible velocity
//! closest to the preferred one.
//!
//! Each neighbour B gives one half-plane of velocities (the ORCA construction): the smallest
//! change `u` of the relative velocity that leaves B's velocity obstacle truncated at the
//! time horizon, of which the agent takes its `share` (half between two walking agents; a
//! walking agent takes three quarters against one that holds still, which measures the
//! walker's intent rather than its velocity, so a walker stopped against a standing agent
//! in a doorway still moves it aside). The boundary adds, for every segment whose
//! interior is the closest feature to the agent, the half-plane "do not close on this
//! segment faster than distance / wall horizon". The admissible set is these half-planes
//! intersected with two disks: |v| <= V/k and |v - vEnd| <= A/k * dt, so the controller can
//! actually reach the answer in one step. A 2-D incremental linear program finds the point
//! closest to the preferred velocity; when the neighbours' half-planes leave nothing, a 3-D
//! fallback minimises the largest violation of them while the boundary stays hard.
//!
//! The half-planes over one agent's neighbours come from [`orca_constraints_scalar`], whose
//! per-neighbour body the pass calls as it reads each neighbour (no lanes in between): with
//! about ten neighbours an agent, an eight-wide kernel that computes every case for every
//! lane does not pay (docs/benchmarks.md).
//!
//! The pass works in the grid's cell order over one gathered record per agent
//! ([`AvoidBody`], one cache line: what the agent's neighbours read, plus its own limits
//! and polygon), so an agent's neighbours are read from nearby memory and the pass reads
//! no lane by slot; its answers go back to slot order at the end. Agents crossing an
//! off-mesh link do not negotiate: their neighbours take all of the avoidance against
//! them. Walkers slowed by a neighbour close
//! ahead may turn right ([`AvoidanceConfig::slow_turn_rad`], off by default).
//!
//! Walkers held in a crowd escalate on how long they have gone without progress along
//! their corridors (the `unprogressed_s` lane): the stall turn, then the squeeze
//! (if configured), and after [`AvoidanceConfig::pass_through_after_s`] they pass through
//! the agents in their way, weighing only walls and agents that keep their courses
//! (crossing links, or not negotiating), until they have walked through; walkers they
//! pass ignore them in turn (agents standing still make room). Optionally bodies may
//! press into each other by an allowance
//! ([`AvoidanceConfig::overlap_allowance`]) and pairs met head-on prefer a common passing
//! side ([`AvoidanceConfig::passing_side_rad`]).
//!
//! After the move, the separation pass (`crowd/separation.rs`) pushes overlapping agents
//! apart along the surface,
//! in rounds over feet and polygons copied into cell order, the
//! step's feedback read once and written once; [`AvoidanceConfig::inelastic_contact`] says whether it also
//! removes the velocity into the contact. A pair that
//! has stalled may give up to [`AvoidanceConfig::squeeze_fraction`] of its radius sum, in
//! both passes alike (off by default: it trades overlap for flow).
//!
//! Invariants: each agent's result depends only on the gathered bodies, the grid and the
//! mesh, so the pass runs over chunks of agents in parallel and is the same at any thread
//! count.

//! The avoid wing's files: `config.rs` (the settings and per-agent profiles), `program.rs`
//! (the velocity program: half-planes, the speed and acceleration disks and the solver),
//! `constraints.rs` (the ORCA half-plane of a neighbour and those of the walls), this file
//! (the pass: gathered bodies, shares, the escalation, one agent's solve).

pub(crate) mod config;
pub(crate) mod constraints;
pub(crate) mod program;

pub(crate) use config::ProfileTable;
pub use config::{AvoidanceConfig, AvoidanceProfile, NEIGHBOURS_CAPACITY};
pub(crate) use constraints::orca_half_plane;
pub use constraints::wall_constraints;
// The lanes form of the half-planes, for the benchmarks and the circle model.
#[cfg(feature = "harness")]
pub use constraints::{ConstraintLanes, NeighbourBatch, orca_constraints_scalar};
use program::EPSILON;
pub use program::{HalfPlane, Solved, VelocityBounds, WALLS_CAPACITY, solve_velocity};

use glam::Vec2;
use rayon::prelude::*;

use super::neighbours::NeighbourGrid;
use crate::crowd::agents::AgentStatus;
use crate::crowd::agents::{FilterId, ProfileId};
use crate::crowd::compute::cpu;
use crate::crowd::lanes::AgentLanes;
use crate::crowd::supports::platform::{FlatFrame, PlatformFrames};
use crate::crowd::walking::passes::STALL_S;
use crate::mesh::Snapshot;

/// Agents per parallel work item of the avoid pass: small enough that a jammed corner of
/// a 1,000-agent crowd (whose agents take the slow fallback program) does not land in one
/// thread's share.
const AVOID_CHUNK_AGENTS: usize = 64;

/// The share of avoidance an agent takes against a neighbour: all of it against one
/// crossing a link (an obstacle on a fixed course, not a negotiator); half between equals
/// (two walkers split by [`AvoidanceConfig::yield_share`] instead); a walking agent takes
/// three quarters against one that holds still (waiting, arrived, idle).
fn share(agent: AgentStatus, neighbour: AgentStatus) -> f32 {
    if neighbour == AgentStatus::CrossingLink {
        return 1.0;
    }
    match (walking(agent), walking(neighbour)) {
        (true, false) => 0.75,
        (false, true) => 0.25,
        _ => 0.5,
    }
}

/// The most a stalled walker turns its preferred velocity, radians.
const STALL_TURN_RAD: f32 = 1.0;

/// Seconds of stall before a walker starts to turn: setting off from rest at 8 m/s², a
/// walker takes about a tenth of a second to cover the stall rule's 5 cm, and one turned
/// while it does so sets off askew (into the wall beside its first corner, in the open
/// off its straight line).
const STALL_TURN_AFTER_S: f32 = 0.15;

/// Size of the symmetry-breaking nudge, m/s.
const NUDGE_MPS: f32 = 1e-3;

/// A small velocity in a direction derived from the agent id: one of 256 directions
/// around the circle, from a table (a sine and cosine per agent per frame showed in the
/// avoid pass's profile).
fn symmetry_nudge(identity_bits: u64) -> Vec2 {
    static DIRECTIONS: std::sync::LazyLock<[Vec2; 256]> = std::sync::LazyLock::new(|| {
        std::array::from_fn(|index| {
            Vec2::from_angle(index as f32 * (std::f32::consts::TAU / 256.0)) * NUDGE_MPS
        })
    });
    let mixed = identity_bits.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    DIRECTIONS[(mixed >> 56) as usize]
}

/// A neighbour closer than this many radius sums ahead makes a slowed walker turn (farther
/// ones leave room to slow down instead, and an agent accelerating from rest in the open
/// does not turn).
const SLOW_TURN_CONTACT_RADII: f32 = 1.5;

/// The preferred velocity of a walker going at `velocity`, turned to the right by up to
/// `most_rad` in proportion to how much slower than preferred it goes, when a neighbour is
/// `close_ahead` (closer than [`SLOW_TURN_CONTACT_RADII`] radius sums, ahead of the
/// preferred velocity; [`AvoidanceConfig::slow_turn_rad`]).
fn slow_turn(preferred: Vec2, velocity: Vec2, close_ahead: bool, most_rad: f32) -> Vec2 {
    let wanted = preferred.length();
    if most_rad == 0.0 || wanted <= EPSILON {
        return preferred;
    }
    let slowness = (1.0 - velocity.length() / wanted).clamp(0.0, 1.0);
    if slowness > 0.0 && close_ahead {
        Vec2::from_angle(-most_rad * slowness).rotate(preferred)
    } else {
        preferred
    }
}

/// The factor on a pair's radius sum: 1, less by up to `squeeze_fraction` as the longer
/// stall of the two grows past [`AvoidanceConfig::squeeze_after_s`] (by [`STALL_S`] of
/// standing still, or [`AvoidanceConfig::squeeze_ramp_s`] without progress along the
/// corridor). Avoidance and separation both use it, so a pair
/// allowed to squeeze past each other is not pushed back apart by the separation pass.
#[inline]
pub(crate) fn give(config: &AvoidanceConfig, own: &AvoidBody, other: &AvoidBody) -> f32 {
    if config.squeeze_fraction == 0.0 {
        return 1.0; // no stall to read
    }
    let after = config.squeeze_after_s;
    let stall = ((own.stalled_s.max(other.stalled_s) - after).max(0.0) / STALL_S).max(
        (own.unprogressed_s.max(other.unprogressed_s) - after).max(0.0) / config.squeeze_ramp_s,
    );
    1.0 - config.squeeze_fraction * stall.min(1.0)
}

/// Whether a walker passing through passes `other`: anyone in its way except an agent
/// that keeps its course (crossing a link, or not negotiating: a vehicle, a charging boss),
/// which nobody walks through. Walkers that go its way are passed too: a queue held in a
/// corridor is exactly what passing through must undo.
#[inline]
pub(crate) fn passes(profiles: &ProfileTable, other: &AvoidBody) -> bool {
    !profiles.keeps_course(other.status, other.profile.index())
}

/// Whether a walker held this long passes through the agents in its way
/// ([`AvoidanceConfig::pass_through_after_s`]).
#[inline]
pub(crate) fn passing_through(config: &AvoidanceConfig, body: &AvoidBody) -> bool {
    config.is_passing_through(body.status, body.unprogressed_s)
}

/// Whether the agent in this status walks (negotiates) rather than holds still.
fn walking(status: AgentStatus) -> bool {
    // (A velocity-controlled agent is gathered as `Moving`: it walks, as far as its
    // neighbours are concerned, and this test runs for every neighbour.)
    status == AgentStatus::Moving
}

/// What the avoid pass reads about an agent, as itself and as a neighbour, gathered once
/// per frame in the grid's cell order. Read straight from the lanes, each neighbour costs
/// a cache line per lane (ten lanes, ten neighbours: a hundred lines per agent); gathered,
/// an agent's neighbours lie in a few nearby records. One record is one cache line; the
/// agent's own limits and polygon ride along, so its own reads come in cell order too
/// rather than from the lanes by slot.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(align(64))]
pub struct AvoidBody {
    /// Foot position (x, z), metres.
    pub position: Vec2,
    /// vEnd, m/s.
    pub velocity: Vec2,
    /// Preferred velocity from the follow pass, m/s.
    pub desired: Vec2,
    /// Radius, metres.
    pub radius: f32,
    /// Seconds stalled.
    pub stalled_s: f32,
    /// Seconds without progress along the corridor (the `unprogressed_s` lane).
    pub unprogressed_s: f32,
    /// Status as avoidance sees it: a velocity-controlled agent is `Moving` (it walks).
    pub status: AgentStatus,
    /// Whether its last end velocity is known (false: vUnknown, the agent is paused).
    pub velocity_valid: bool,
    /// Its avoidance profile (in the crowd's table).
    pub profile: ProfileId,
    /// Its query filter (in the crowd's table), for the separation pass's surface moves.
    pub filter: FilterId,
    /// Horizontal speed limit on its patch (V/k), m/s.
    pub speed_limit: f32,
    /// Horizontal acceleration limit on its patch (A/k), m/s².
    pub acceleration_limit: f32,
    /// The polygon it stands on (for the walls near it).
    pub polygon: crate::mesh::PolyRef,
    /// The agent's id as bits: between two walkers the lower takes
    /// [`AvoidanceConfig::yield_share`] of the avoidance. Carried here so a neighbour's
    /// identity is read from the gathered bodies, in cell order, not from the lanes by slot.
    pub identity_bits: u64,
}

// The record is one cache line: a field added past it would double what the avoid and
// separation passes read per neighbour.
const _: () = assert!(size_of::<AvoidBody>() == 64);

/// Gathers every agent's [`AvoidBody`] in the grid's cell order (parallel).
pub fn gather_bodies(lanes: &AgentLanes, grid: &NeighbourGrid, bodies: &mut Vec<AvoidBody>) {
    (0..grid.len())
        .into_par_iter()
        .with_min_len(crate::crowd::compute::parallel::LIGHT_AGENTS_PER_TASK)
        .map(|index| {
            let slot = grid.slot_at(index);
            AvoidBody {
                position: Vec2::new(lanes.position_x[slot], lanes.position_z[slot]),
                velocity: Vec2::new(lanes.velocity_x[slot], lanes.velocity_z[slot]),
                desired: Vec2::new(lanes.desired_x[slot], lanes.desired_z[slot]),
                radius: lanes.radius[slot],
                stalled_s: lanes.stalled_s[slot],
                unprogressed_s: lanes.unprogressed_s[slot],
                status: match lanes.status[slot] {
                    AgentStatus::VelocityControlled | AgentStatus::Holding => AgentStatus::Moving,
                    status => status,
                },
                velocity_valid: lanes.velocity_valid[slot],
                profile: lanes.profile[slot],
                filter: lanes.filter[slot],
                speed_limit: lanes.speed_limit[slot],
                acceleration_limit: lanes.acceleration_limit[slot],
                polygon: lanes.polygon[slot],
                identity_bits: lanes.id[slot].to_bits(),
            }
        })
        .collect_into_vec(bodies);
}

/// Gathers, in the grid's cell order, the horizontal velocity each agent's support gives
/// it: the surface velocity under its foot (`support_motions` by layer, as the crowd keeps
/// them) plus its platform's velocity (`platforms`), or nothing at all while every support
/// stands still and no platform is placed.
pub fn gather_carried(
    lanes: &AgentLanes,
    grid: &NeighbourGrid,
    support_motions: &[crate::crowd::supports::support::SupportMotion],
    platforms: &PlatformFrames,
    carried: &mut Vec<Vec2>,
) {
    carried.clear();
    if support_motions
        .iter()
        .all(crate::crowd::supports::support::SupportMotion::is_still)
        && platforms.is_empty()
    {
        return;
    }
    carried.extend((0..grid.len()).map(|index| {
        let slot = grid.slot_at(index);
        let layer = lanes.support[slot];
        let surface = support_motions
            .get(layer as usize)
            .map_or(Vec2::ZERO, |motion| {
                let u = motion.velocity_at(lanes.position(slot));
                Vec2::new(u.x, u.z)
            });
        let platform = if platforms.is_empty() {
            glam::Vec3::ZERO
        } else {
            platforms.velocity_at(layer, platforms.place(layer, lanes.position(slot)))
        };
        surface + Vec2::new(platform.x, platform.z)
    }));
}

/// Gathers, in the grid's cell order, each agent's frame seen from above (its platform's,
/// `platforms`; the world's on the ground), or nothing at all while no platform is placed:
/// bodies keep their feet and velocities in their own frames (where their walls are), and
/// a neighbour in another frame is seen where it is and as it moves in the world.
pub fn gather_frames(
    lanes: &AgentLanes,
    grid: &NeighbourGrid,
    platforms: &PlatformFrames,
    frames: &mut Vec<FlatFrame>,
) {
    frames.clear();
    if platforms.is_empty() {
        return;
    }
    frames.extend((0..grid.len()).map(|index| platforms.flat(lanes.support[grid.slot_at(index)])));
}

/// The frames the avoid pass sees bodies in: the world's for every body ([`WorldFrames`],
/// no platform placed: the common case, compiled without a frame in sight) or each
/// body's own ([`PlacedFrames`], from [`gather_frames`]).
pub(crate) trait BodyFrames: Copy + Send + Sync {
    /// Whether bodies may be in frames other than the world's.
    const PLACED: bool;
    /// The frame of the body at `index` in cell order.
    fn at(self, index: usize) -> FlatFrame;
}

/// Every body in the world's frame.
#[derive(Clone, Copy)]
pub(crate) struct WorldFrames;

impl BodyFrames for WorldFrames {
    const PLACED: bool = false;
    #[inline(always)]
    fn at(self, _: usize) -> FlatFrame {
        FlatFrame::WORLD
    }
}

/// Each body in its own frame, by cell order.
#[derive(Clone, Copy)]
pub(crate) struct PlacedFrames<'a>(pub &'a [FlatFrame]);

impl BodyFrames for PlacedFrames<'_> {
    const PLACED: bool = true;
    #[inline(always)]
    fn at(self, index: usize) -> FlatFrame {
        self.0.get(index).copied().unwrap_or(FlatFrame::WORLD)
    }
}

/// Where the body `other` (at `other_index` in cell order) is from the agent at
/// `position` in `own_frame`, in that frame.
#[inline(always)]
fn offset_seen<F: BodyFrames>(
    frames: F,
    other: &AvoidBody,
    other_index: u32,
    position: Vec2,
    own_frame: &FlatFrame,
) -> Vec2 {
    if !F::PLACED {
        return other.position - position;
    }
    let world = frames.at(other_index as usize).place(other.position) - own_frame.place(position);
    own_frame.to_local(world)
}

/// The avoid pass: a new requested velocity for every agent, written to `velocities` in
/// the grid's cell order (`grid.slot_at(index)` is the agent of `velocities[index]`).
/// `grid` must have been rebuilt over the agents' world positions this frame, and
/// `bodies` gathered from it ([`gather_bodies`]). Bodies keep velocities relative to their
/// supports; `carried` (from [`gather_carried`], or empty: every support still) gives
/// each body's support velocity, so a neighbour on another support is seen in the
/// agent's own frame; `frames` (from [`gather_frames`], or empty: no platform) each
/// body's frame offset, so a neighbour on another platform is seen where it is.
#[allow(clippy::too_many_arguments)]
pub fn avoid_pass(
    grid: &NeighbourGrid,
    bodies: &[AvoidBody],
    carried: &[Vec2],
    frames: &[FlatFrame],
    snapshot: &Snapshot,
    config: &AvoidanceConfig,
    profiles: &[AvoidanceProfile],
    dt: f32,
    velocities: &mut Vec<Solved>,
) {
    let profiles = ProfileTable::new(profiles);
    velocities.clear();
    velocities.resize(bodies.len(), Solved::default());
    let pass = AvoidPass {
        grid,
        bodies,
        carried,
        snapshot,
        config,
        profiles: &profiles,
        dt,
    };
    if frames.is_empty() {
        pass.solve(WorldFrames, velocities);
    } else {
        pass.solve(PlacedFrames(frames), velocities);
    }
}

/// What the avoid pass reads, for [`AvoidPass::solve`] in either kind of frames.
struct AvoidPass<'a> {
    grid: &'a NeighbourGrid,
    bodies: &'a [AvoidBody],
    carried: &'a [Vec2],
    snapshot: &'a Snapshot,
    config: &'a AvoidanceConfig,
    profiles: &'a ProfileTable<'a>,
    dt: f32,
}

impl AvoidPass<'_> {
    /// Every agent's new velocity into `velocities` (in cell order), on the pool.
    fn solve<F: BodyFrames>(&self, frames: F, velocities: &mut [Solved]) {
        velocities
            .par_chunks_mut(AVOID_CHUNK_AGENTS)
            .with_min_len(crate::crowd::compute::parallel::task_min(1))
            .enumerate()
            .for_each(|(chunk, out)| {
                let first = chunk * AVOID_CHUNK_AGENTS;
                let mut scratch = AvoidScratch::new();
                cpu::dispatch(
                    #[inline(always)]
                    || {
                        for (offset, velocity) in out.iter_mut().enumerate() {
                            *velocity = avoid_one(
                                self.grid,
                                self.bodies,
                                self.carried,
                                frames,
                                self.snapshot,
                                self.config,
                                self.profiles,
                                self.dt,
                                first + offset,
                                &mut scratch,
                            );
                        }
                    },
                );
            });
    }
}

/// Per-agent working memory of the avoid pass, reused across the agents of a chunk: the
/// half-plane list, which would otherwise be zeroed for every agent.
#[derive(Clone, Debug)]
pub(crate) struct AvoidScratch {
    planes: [HalfPlane; NEIGHBOURS_CAPACITY + WALLS_CAPACITY],
}

impl AvoidScratch {
    pub(crate) fn new() -> AvoidScratch {
        AvoidScratch {
            planes: [HalfPlane {
                point: Vec2::ZERO,
                direction: Vec2::X,
            }; NEIGHBOURS_CAPACITY + WALLS_CAPACITY],
        }
    }
}

/// The velocity of neighbour `other` (at `other_index` in cell order) as an agent sees
/// it. A holding agent answers a walker's intent (its preferred velocity), not its current
/// velocity: a walker stopped against it, wanting through, still makes it step aside,
/// where the current velocities (both zero) would leave both standing. And it is in the
/// agent's own frame: a neighbour on another support (off the belt the agent rides, or on
/// one beside the ground it walks) moves with its surface too (`carried`, by cell order, in
/// the world; `own_carried` the agent's), and one on a turned platform (`frames`) keeps
/// its velocity in its own frame, turned into the agent's here (`own_frame`).
#[inline(always)]
fn velocity_seen<F: BodyFrames>(
    agent_walking: bool,
    other: &AvoidBody,
    carried: &[Vec2],
    frames: F,
    other_index: u32,
    own_carried: Vec2,
    own_frame: &FlatFrame,
) -> Vec2 {
    let velocity = if !agent_walking & walking(other.status) {
        other.desired
    } else {
        other.velocity
    };
    if F::PLACED {
        let world = frames.at(other_index as usize).to_world(velocity)
            + carried
                .get(other_index as usize)
                .copied()
                .unwrap_or(Vec2::ZERO);
        return own_frame.to_local(world - own_carried);
    }
    match carried.get(other_index as usize) {
        Some(&other_carried) => velocity + other_carried - own_carried,
        None => velocity,
    }
}

/// The new requested velocity of the agent at `index` in the grid's cell order, and
/// whether it is jammed.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn avoid_one<F: BodyFrames>(
    grid: &NeighbourGrid,
    bodies: &[AvoidBody],
    carried: &[Vec2],
    frames: F,
    snapshot: &Snapshot,
    config: &AvoidanceConfig,
    profiles: &ProfileTable,
    dt: f32,
    index: usize,
    scratch: &mut AvoidScratch,
) -> Solved {
    let own = bodies[index];
    let profile = profiles.get(own.profile.index());
    let preferred = own.desired;
    if !own.velocity_valid || own.status == AgentStatus::CrossingLink {
        // A crossing agent follows its link, whatever is around it.
        // vUnknown: the agent is paused, nothing to negotiate from.
        return Solved {
            velocity: preferred,
            jammed: false,
        };
    }
    // Agents meeting in perfect symmetry (a ring of agents walking to the antipodes) get
    // symmetric half-planes and would all slow down together forever; a nudge of a
    // millimetre per second in a direction fixed by the agent's identity (not its slot,
    // which moves on removal) breaks the tie the same way on every run.
    // (An agent that does not negotiate breaks no ties: it keeps its course. Nor does one
    // that does not walk, idle, arrived or waiting, or one that wants to stand where it
    // is, a hold at its pose: nudged, it would creep a millimetre a second forever.)
    let preferred = if profile.negotiates && walking(own.status) && preferred != Vec2::ZERO {
        preferred + symmetry_nudge(own.identity_bits)
    } else {
        preferred
    };
    // A stalled walker turns its wish sideways, every agent to the same side, by up to
    // STALL_TURN_RAD as the stall grows past STALL_TURN_AFTER_S: a ring of agents stopped around an empty centre
    // starts to circulate, two walkers nose to nose pass each other on the same side.
    let stall = ((own.stalled_s - STALL_TURN_AFTER_S) / STALL_S).clamp(0.0, 1.0);
    let preferred = if stall > 0.0 && profile.negotiates {
        Vec2::from_angle(-STALL_TURN_RAD * stall).rotate(preferred)
    } else {
        preferred
    };
    let (position, velocity) = (own.position, own.velocity);
    let agent_walking = walking(own.status);
    let bounds = VelocityBounds::new(velocity, own.speed_limit, own.acceleration_limit * dt);

    let walls = snapshot
        .tile(own.polygon)
        .map_or(&[][..], |tile| tile.walls_near(own.polygon.polygon()));
    let AvoidScratch { planes, .. } = scratch;
    let reach_m = bounds.speed.radius * profile.wall_time_horizon_s;
    let hard_count = wall_constraints(
        walls,
        position,
        preferred,
        reach_m,
        profile.wall_time_horizon_s,
        &mut planes[..WALLS_CAPACITY],
    );

    // The agent's share against a neighbour, by what the neighbour does: holding still,
    // walking with a higher id than the agent's, walking with a lower one (between walkers
    // the lower id takes the yield share). Looked up, not branched on: the neighbour's
    // status goes either way at random.
    let shares = if agent_walking {
        [
            share(own.status, AgentStatus::Idle),
            config.yield_share,
            1.0 - config.yield_share,
        ]
    } else {
        let against_walker = share(own.status, AgentStatus::Moving);
        [
            share(own.status, AgentStatus::Idle),
            against_walker,
            against_walker,
        ]
    };
    // Each neighbour's half-plane is built as it is read (the kernel of
    // `orca_constraints_scalar`), straight into the program's list: no lanes in between.
    let (inverse_horizon, inverse_dt) = (1.0 / profile.time_horizon_s, 1.0 / dt);
    let pass_right_sin_squared = config.passing_side_rad.sin().powi(2);
    let turning = config.slow_turn_rad != 0.0;
    let mut close_ahead = false;
    // An agent that does not negotiate weighs walls only.
    let neighbours = if profile.negotiates {
        grid.neighbours_at(index)
    } else {
        &[]
    };
    let count = neighbours.len().min(NEIGHBOURS_CAPACITY);
    // A walker held past the pass-through time weighs only agents that keep their courses
    // (which nobody passes through): the others it walks through until its pass is over. A
    // walker it passes ignores it in turn and keeps its own course: were it to avoid the
    // passer, in a passage one body wide the only room is ahead of it, and the two would
    // walk on together, overlapping, at the passer's full speed for seconds, until the
    // pushed walker's own hold made it the passer and drove the pair back the other way.
    // Agents standing still (not walking) still make room: they have no course to keep.
    let ghost = passing_through(config, &own);
    let mut written = 0;
    let own_carried = carried.get(index).copied().unwrap_or(Vec2::ZERO);
    let own_frame = frames.at(index);
    for &other_index in &neighbours[..count] {
        let other = &bodies[other_index as usize];
        // (A quarantined agent's values are its last sane ones, but it is no party to any
        // negotiation: it is left out, as it is of separation.)
        if (ghost && passes(profiles, other))
            || (agent_walking && passing_through(config, other))
            || other.status == AgentStatus::Quarantined
        {
            continue;
        }
        let plane = &mut planes[hard_count + written];
        written += 1;
        let offset = offset_seen(frames, other, other_index, position, &own_frame);
        let other_walking = walking(other.status);
        let neighbour_velocity = velocity_seen(
            agent_walking,
            other,
            carried,
            frames,
            other_index,
            own_carried,
            &own_frame,
        );
        // A pair that has stalled (two walkers head-on in a corridor too narrow to pass,
        // a walker against a crowd in a doorway) may let its bodies give: the radii shrink
        // with the longer stall, by the squeeze fraction after STALL_S, so the pair
        // squeezes past at the cost of a bounded overlap instead of standing forever.
        let radius_sum = (own.radius + other.radius)
            * (1.0 - config.overlap_allowance)
            * give(config, &own, other);
        let against =
            usize::from(other_walking) * (1 + usize::from(own.identity_bits > other.identity_bits));
        // An agent crossing a link, or one that does not negotiate, is an obstacle on a
        // fixed course: all the avoidance is the agent's.
        let keeps_course = profiles.keeps_course(other.status, other.profile.index());
        let share = if keeps_course { 1.0 } else { shares[against] };
        if turning {
            close_ahead |= offset.dot(preferred) > 0.0
                && offset.length_squared() < (radius_sum * SLOW_TURN_CONTACT_RADII).powi(2);
        }
        *plane = orca_half_plane(
            velocity,
            inverse_horizon,
            inverse_dt,
            offset,
            velocity - neighbour_velocity,
            radius_sum,
            share,
            pass_right_sin_squared,
        );
    }
    let preferred = slow_turn(preferred, velocity, close_ahead, config.slow_turn_rad);
    solve_velocity(
        &planes[..hard_count + written],
        hard_count,
        &bounds,
        preferred,
    )
}
