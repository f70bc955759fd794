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
//! their corridors ([`AgentLanes::unprogressed_s`]): the stall turn, then the squeeze
//! (if configured), and after [`AvoidanceConfig::pass_through_after_s`] they pass through
//! the agents in their way, weighing only walls and agents crossing links, until they make
//! progress again. Optionally bodies may press into each other by an allowance
//! ([`AvoidanceConfig::overlap_allowance`]) and pairs met head-on prefer a common passing
//! side ([`AvoidanceConfig::passing_side_rad`]).
//!
//! After the move, [`separation_pass`] pushes overlapping agents apart along the surface,
//! in rounds over feet and polygons copied into cell order ([`SeparationScratch`]), the
//! step's feedback read once and written once; [`ContactModel`] says whether it also
//! removes the velocity into the contact. A pair that
//! has stalled may give up to [`AvoidanceConfig::squeeze_fraction`] of its radius sum, in
//! both passes alike (off by default: it trades overlap for flow).
//!
//! Invariants: each agent's result depends only on the gathered bodies, the grid and the
//! mesh, so the pass runs over chunks of agents in parallel and is the same at any thread
//! count.

use glam::Vec2;
use rayon::prelude::*;

use super::lanes::{AgentLanes, AgentStatus};
use super::neighbours::NeighbourGrid;
use super::passes::STALL_S;
use super::{FilterId, ProfileId};
use crate::mesh::{Snapshot, Wall};

/// Most neighbours one agent can weigh (a bound on [`AvoidanceConfig::neighbours_max`]).
pub const NEIGHBOURS_CAPACITY: usize = 32;

/// Agents per parallel work item of the avoid pass: small enough that a jammed corner of
/// a 1,000-agent crowd (whose agents take the slow fallback program) does not land in one
/// thread's share (64 against 128: dungeon median 826 -> 885 agents/ms over five
/// interleaved runs; the 10,000 city no different).
const AVOID_CHUNK_AGENTS: usize = 64;

/// Tolerance of the linear program (parallel lines, points on circles).
const EPSILON: f32 = 1e-5;

/// Local avoidance settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AvoidanceConfig {
    /// Whether the avoid pass runs (off: agents walk through each other).
    pub enabled: bool,
    /// Neighbours each agent weighs, nearest first (K), at most [`NEIGHBOURS_CAPACITY`].
    pub neighbours_max: usize,
    /// Neighbours farther than this (centre to centre, horizontally) are ignored, metres.
    pub neighbour_range_m: f32,
    /// Agents whose feet differ in height by this much or more are on different floors and
    /// ignore each other, metres.
    pub vertical_range_m: f32,
    /// How far ahead collisions with other agents are avoided, seconds.
    pub time_horizon_s: f32,
    /// How far ahead the boundary is respected, seconds.
    pub wall_time_horizon_s: f32,
    /// The largest fraction of their radii two stalled agents give up to squeeze past each
    /// other, in avoidance and in separation alike (0: bodies never give; a pair in a
    /// corridor too narrow to pass then waits).
    pub squeeze_fraction: f32,
    /// Whether overlapping agents are pushed apart after the move (a correction, reported
    /// as such in the step feedback). Turn off when the host's controller resolves body
    /// contacts itself.
    pub separation: bool,
    /// What a contact does to the velocity of the agents pushed apart.
    pub contact: ContactModel,
    /// The most a slowed walker turns its preferred velocity, radians (0: never). A walker
    /// moving slower than it wants with a neighbour close ahead turns its wish to the right
    /// by this angle times how much slower it goes; every agent turns the same way, so a
    /// crush starts to circulate.
    pub slow_turn_rad: f32,
    /// The share of the avoidance between two walkers taken by the one with the lower
    /// agent id (0.5: equal shares, plain reciprocity). Above one half, walkers meeting
    /// head-on do not both hesitate: one gives way, by a rule fixed by identity, the same
    /// on every run.
    pub yield_share: f32,
    /// How deep two bodies may press into each other, as a fraction of their radius sum
    /// (0: never). Avoidance keeps the centres (1 - allowance) radius sums apart and the
    /// separation pass removes only deeper overlap at once; overlap within the allowance
    /// is eased out over the following steps ([`AvoidanceConfig::contact_relax_per_s`]).
    /// A crowd at walking density then moves like a crowd of people, shoulders brushing,
    /// where a hard no-overlap rule jams it; the price is shallow overlaps.
    pub overlap_allowance: f32,
    /// The share of an overlap within the allowance removed per second (the softness of
    /// the contact: 0 leaves it, 30 removes all of it in a step at 30 Hz).
    pub contact_relax_per_s: f32,
    /// The angle by which every agent prefers to pass an oncoming neighbour on the same
    /// side (to the right, as seen by each), radians (0: the geometry alone decides).
    /// With a common side two streams meeting head-on form lanes instead of each pair
    /// negotiating its own, and the side chosen never depends on rounding.
    pub passing_side_rad: f32,
    /// Seconds without progress along its corridor over which a held walker's squeeze
    /// ([`AvoidanceConfig::squeeze_fraction`]) grows to the full fraction (the stall of
    /// [`STALL_S`] grows it too): a walker jostled in a jam is held even when it moves.
    pub squeeze_ramp_s: f32,
    /// Seconds without progress along its corridor after which a walker passes through
    /// the agents in its way (0: never): it ignores their velocities and they do not push
    /// it, until it has made progress again. The last step of the escalation (wait, turn,
    /// squeeze, pass): no agent stays stuck for longer, at the price of one body crossing
    /// others.
    pub pass_through_after_s: f32,
}

/// How one agent avoids, set per agent from a small table registered with the crowd
/// ([`Crowd::add_avoidance_profile`](super::Crowd::add_avoidance_profile)); the crowd's
/// [`AvoidanceConfig`] gives profile 0 and everything not per agent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AvoidanceProfile {
    /// Whether the agent negotiates with its neighbours. An agent that does not keeps to
    /// its preferred velocity (walls and its speed and acceleration limits still hold) and
    /// its neighbours take all of the avoidance against it, as against an agent crossing a
    /// link: a vehicle, a charging boss, a scripted walker.
    pub negotiates: bool,
    /// How far ahead collisions with other agents are avoided, seconds: longer is
    /// smoother and more timid, shorter lets the agent cut close.
    pub time_horizon_s: f32,
    /// How far ahead the boundary is respected, seconds.
    pub wall_time_horizon_s: f32,
}

impl AvoidanceProfile {
    /// The profile of an agent under `config` (profile 0).
    pub fn of(config: &AvoidanceConfig) -> AvoidanceProfile {
        AvoidanceProfile {
            negotiates: true,
            time_horizon_s: config.time_horizon_s,
            wall_time_horizon_s: config.wall_time_horizon_s,
        }
    }

    /// The field that makes this profile unusable, with its value, if any.
    pub fn invalid_field(&self) -> Option<(&'static str, f32)> {
        for (field, value) in [
            ("time_horizon_s", self.time_horizon_s),
            ("wall_time_horizon_s", self.wall_time_horizon_s),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Some((field, value));
            }
        }
        None
    }
}

/// What the separation pass does to the velocity of agents it pushes apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContactModel {
    /// Positions are corrected, velocities kept: bodies slide past each other, which keeps
    /// two-way traffic in narrow corridors flowing at the cost of overlap in a crush.
    Slide,
    /// The end velocity also loses its component into the push (an inelastic contact): a
    /// crush stops sinking in, but two streams meeting head-on in a corridor can deadlock
    /// (measured in docs/benchmarks.md).
    Inelastic,
}

impl Default for AvoidanceConfig {
    fn default() -> Self {
        // DetourCrowd's reference settings for human-sized agents: a query range of about
        // twelve radii and a 2.5 s horizon; RVO2's K of 10.
        AvoidanceConfig {
            enabled: true,
            neighbours_max: 10,
            neighbour_range_m: 7.2,
            vertical_range_m: 2.0,
            time_horizon_s: 2.5,
            wall_time_horizon_s: 1.0,
            squeeze_fraction: 0.0,
            separation: true,
            contact: ContactModel::Slide,
            slow_turn_rad: 0.0,
            // Plain reciprocity. 0.8 measured better flow on scenario series (corridors and
            // the bottleneck about a fifth faster, half the agents stuck on the shared
            // crowds) at the cost of more overlap in dense crowds (docs/benchmarks.md).
            yield_share: 0.5,
            overlap_allowance: 0.0,
            contact_relax_per_s: 3.0,
            passing_side_rad: 0.0,
            squeeze_ramp_s: 1.5,
            // Measured on the shared dungeon and nav_test crowds and the scenarios
            // (docs/benchmarks.md, Flow): 1.1 s keeps stuck agents under 1% in both packed
            // crowds with under a quarter of DetourCrowd's overlapping pairs; 1.5 s left
            // 1.2-1.4% stuck, 1 s made 2-3% more overlapping pairs.
            pass_through_after_s: 1.1,
        }
    }
}

impl AvoidanceConfig {
    /// The field that makes this configuration unusable, with its value, if any.
    pub fn invalid_field(&self) -> Option<(&'static str, f32)> {
        let positive = |value: f32| value.is_finite() && value > 0.0;
        if self.neighbours_max > NEIGHBOURS_CAPACITY {
            return Some(("avoidance.neighbours_max", self.neighbours_max as f32));
        }
        if !positive(self.neighbour_range_m) {
            return Some(("avoidance.neighbour_range_m", self.neighbour_range_m));
        }
        if !positive(self.vertical_range_m) {
            return Some(("avoidance.vertical_range_m", self.vertical_range_m));
        }
        if !positive(self.time_horizon_s) {
            return Some(("avoidance.time_horizon_s", self.time_horizon_s));
        }
        if !(0.0..1.0).contains(&self.squeeze_fraction) {
            return Some(("avoidance.squeeze_fraction", self.squeeze_fraction));
        }
        if !positive(self.wall_time_horizon_s) {
            return Some(("avoidance.wall_time_horizon_s", self.wall_time_horizon_s));
        }
        if !(0.0..=std::f32::consts::FRAC_PI_2).contains(&self.slow_turn_rad) {
            return Some(("avoidance.slow_turn_rad", self.slow_turn_rad));
        }
        if !(0.5..=1.0).contains(&self.yield_share) {
            return Some(("avoidance.yield_share", self.yield_share));
        }
        if !(0.0..0.5).contains(&self.overlap_allowance) {
            return Some(("avoidance.overlap_allowance", self.overlap_allowance));
        }
        if !(self.contact_relax_per_s.is_finite() && self.contact_relax_per_s >= 0.0) {
            return Some(("avoidance.contact_relax_per_s", self.contact_relax_per_s));
        }
        if !(self.squeeze_ramp_s.is_finite() && self.squeeze_ramp_s > 0.0) {
            return Some(("avoidance.squeeze_ramp_s", self.squeeze_ramp_s));
        }
        if !(self.pass_through_after_s.is_finite() && self.pass_through_after_s >= 0.0) {
            return Some(("avoidance.pass_through_after_s", self.pass_through_after_s));
        }
        if !(0.0..=std::f32::consts::FRAC_PI_4).contains(&self.passing_side_rad) {
            return Some(("avoidance.passing_side_rad", self.passing_side_rad));
        }
        None
    }
}

/// A half-plane of velocities: admissible points lie on the left of `direction` (a unit
/// vector) through `point`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfPlane {
    /// A point on the boundary line, m/s.
    pub point: Vec2,
    /// Unit direction of the boundary line.
    pub direction: Vec2,
}

impl HalfPlane {
    /// How far `velocity` lies outside (positive) or inside (negative), m/s.
    #[inline]
    pub fn violation(&self, velocity: Vec2) -> f32 {
        self.direction.perp_dot(self.point - velocity)
    }
}

/// A disk of velocities.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VelocityDisk {
    /// Centre, m/s.
    pub centre: Vec2,
    /// Radius, m/s.
    pub radius: f32,
}

impl VelocityDisk {
    fn contains(&self, velocity: Vec2) -> bool {
        velocity.distance_squared(self.centre)
            <= self.radius * self.radius * (1.0 + EPSILON) + EPSILON
    }

    fn closest(&self, velocity: Vec2) -> Vec2 {
        let offset = velocity - self.centre;
        let length = offset.length();
        if length <= self.radius {
            velocity
        } else {
            self.centre + offset * (self.radius / length)
        }
    }

    /// The parameter interval of `point + t * direction` inside the disk.
    fn interval(&self, point: Vec2, direction: Vec2) -> Option<(f32, f32)> {
        let offset = point - self.centre;
        let along = direction.dot(offset);
        let discriminant = along * along - offset.length_squared() + self.radius * self.radius;
        if discriminant < 0.0 {
            return None;
        }
        let half = discriminant.sqrt();
        Some((-along - half, -along + half))
    }
}

/// The velocities an agent can reach this step: the speed disk (centre zero, V/k) meets the
/// acceleration disk (centre vEnd, A/k * dt).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VelocityBounds {
    /// |v| <= V/k.
    pub speed: VelocityDisk,
    /// |v - vEnd| <= A/k * dt.
    pub acceleration: VelocityDisk,
}

impl VelocityBounds {
    /// The bounds of an agent moving at `velocity` with limits `speed_limit` and
    /// `acceleration_limit * dt`. An agent faster than it may go (it just stepped onto a
    /// steeper patch) cannot reach the speed disk in one step; its speed disk then grows to
    /// its current speed, so avoidance may steer it while the controller slows it down.
    pub fn new(velocity: Vec2, speed_limit: f32, acceleration_budget: f32) -> VelocityBounds {
        let speed = velocity.length();
        let speed_radius = if speed > speed_limit + acceleration_budget {
            speed
        } else {
            speed_limit
        };
        VelocityBounds {
            speed: VelocityDisk {
                centre: Vec2::ZERO,
                radius: speed_radius,
            },
            acceleration: VelocityDisk {
                centre: velocity,
                radius: acceleration_budget,
            },
        }
    }

    /// The two points where the disks' circles cross, if they do.
    fn crossings(&self) -> Option<[Vec2; 2]> {
        let (a, b) = (self.speed, self.acceleration);
        let between = b.centre - a.centre;
        let distance = between.length();
        if distance <= EPSILON || distance > a.radius + b.radius {
            return None;
        }
        let along =
            (distance * distance + a.radius * a.radius - b.radius * b.radius) / (2.0 * distance);
        let across_squared = a.radius * a.radius - along * along;
        if across_squared < 0.0 {
            return None;
        }
        let unit = between / distance;
        let foot = a.centre + unit * along;
        let across = unit.perp() * across_squared.sqrt();
        Some([foot + across, foot - across])
    }

    /// The admissible velocity closest to `velocity`.
    pub fn closest(&self, velocity: Vec2) -> Vec2 {
        let on_speed = self.speed.closest(velocity);
        if self.acceleration.contains(on_speed) {
            return on_speed;
        }
        let on_acceleration = self.acceleration.closest(velocity);
        if self.speed.contains(on_acceleration) {
            return on_acceleration;
        }
        match self.crossings() {
            Some([first, second]) => {
                if first.distance_squared(velocity) <= second.distance_squared(velocity) {
                    first
                } else {
                    second
                }
            }
            None => on_acceleration,
        }
    }

    /// The admissible velocity farthest along the unit vector `direction`.
    fn farthest(&self, direction: Vec2) -> Vec2 {
        let on_speed = self.speed.centre + direction * self.speed.radius;
        if self.acceleration.contains(on_speed) {
            return on_speed;
        }
        let on_acceleration = self.acceleration.centre + direction * self.acceleration.radius;
        if self.speed.contains(on_acceleration) {
            return on_acceleration;
        }
        match self.crossings() {
            Some([first, second]) => {
                if first.dot(direction) >= second.dot(direction) {
                    first
                } else {
                    second
                }
            }
            None => on_acceleration,
        }
    }
}

/// What the linear program optimises.
#[derive(Clone, Copy, Debug)]
enum Goal {
    /// The point closest to this velocity.
    Closest(Vec2),
    /// The point farthest along this unit direction.
    Farthest(Vec2),
}

/// Moves `result` onto the boundary of half-plane `index`, at the best point that satisfies
/// the bounds and every earlier half-plane; false (result untouched) if there is none.
fn solve_on_line(
    planes: &[HalfPlane],
    index: usize,
    bounds: &VelocityBounds,
    goal: Goal,
    result: &mut Vec2,
) -> bool {
    let plane = planes[index];
    let Some((speed_low, speed_high)) = bounds.speed.interval(plane.point, plane.direction) else {
        return false;
    };
    let Some((reach_low, reach_high)) = bounds.acceleration.interval(plane.point, plane.direction)
    else {
        return false;
    };
    let (mut low, mut high) = (speed_low.max(reach_low), speed_high.min(reach_high));
    if low > high {
        return false;
    }
    for earlier in &planes[..index] {
        let denominator = plane.direction.perp_dot(earlier.direction);
        let numerator = earlier.direction.perp_dot(plane.point - earlier.point);
        if denominator.abs() <= EPSILON {
            // Parallel: the earlier half-plane holds all of this line or none of it.
            if numerator < 0.0 {
                return false;
            }
            continue;
        }
        let t = numerator / denominator;
        if denominator >= 0.0 {
            high = high.min(t);
        } else {
            low = low.max(t);
        }
        if low > high {
            return false;
        }
    }
    let t = match goal {
        Goal::Farthest(direction) => {
            if direction.dot(plane.direction) > 0.0 {
                high
            } else {
                low
            }
        }
        Goal::Closest(velocity) => plane.direction.dot(velocity - plane.point).clamp(low, high),
    };
    *result = plane.point + plane.direction * t;
    true
}

/// The 2-D linear program: the best point of the bounds inside every half-plane, added one
/// at a time. Returns the number of half-planes satisfied in order: `planes.len()` on
/// success; otherwise `result` satisfies the first that many.
fn solve_planes(
    planes: &[HalfPlane],
    bounds: &VelocityBounds,
    goal: Goal,
    result: &mut Vec2,
) -> usize {
    *result = match goal {
        Goal::Closest(velocity) => bounds.closest(velocity),
        Goal::Farthest(direction) => bounds.farthest(direction),
    };
    for index in 0..planes.len() {
        if planes[index].violation(*result) > 0.0 {
            let before = *result;
            if !solve_on_line(planes, index, bounds, goal, result) {
                *result = before;
                return index;
            }
        }
    }
    planes.len()
}

/// The 3-D fallback when the half-planes from `first_failed` on leave no admissible point:
/// the velocity minimising the largest violation of the soft half-planes (index
/// `hard_count` and above), keeping the hard ones (the boundary) satisfied.
fn solve_least_violation(
    planes: &[HalfPlane],
    hard_count: usize,
    first_failed: usize,
    bounds: &VelocityBounds,
    result: &mut Vec2,
) {
    let mut distance = 0.0f32;
    let mut projected = [HalfPlane {
        point: Vec2::ZERO,
        direction: Vec2::X,
    }; NEIGHBOURS_CAPACITY + WALLS_CAPACITY];
    for index in first_failed..planes.len() {
        let plane = planes[index];
        if plane.violation(*result) <= distance {
            continue;
        }
        // The half-planes, seen on the plane where violating `plane` by the same amount:
        // each earlier soft one becomes the bisector of the two.
        projected[..hard_count].copy_from_slice(&planes[..hard_count]);
        let mut count = hard_count;
        for earlier in &planes[hard_count..index] {
            let determinant = plane.direction.perp_dot(earlier.direction);
            let point = if determinant.abs() <= EPSILON {
                if plane.direction.dot(earlier.direction) > 0.0 {
                    continue; // same direction: nothing new
                }
                (plane.point + earlier.point) * 0.5
            } else {
                plane.point
                    + plane.direction
                        * (earlier.direction.perp_dot(plane.point - earlier.point) / determinant)
            };
            let direction = (earlier.direction - plane.direction).normalize_or_zero();
            projected[count] = HalfPlane { point, direction };
            count += 1;
        }
        let before = *result;
        let towards = Vec2::new(-plane.direction.y, plane.direction.x);
        if solve_planes(&projected[..count], bounds, Goal::Farthest(towards), result) < count {
            // Only rounding can get here (the result so far is a solution): keep it.
            *result = before;
        }
        distance = plane.violation(*result);
    }
}

/// Most boundary segments one agent weighs.
pub const WALLS_CAPACITY: usize = 16;

/// The admissible velocity closest to `preferred` under `planes` (the first `hard_count`
/// are the boundary) and `bounds`.
pub fn solve_velocity(
    planes: &[HalfPlane],
    hard_count: usize,
    bounds: &VelocityBounds,
    preferred: Vec2,
) -> Solved {
    let mut result = Vec2::ZERO;
    let satisfied = solve_planes(planes, bounds, Goal::Closest(preferred), &mut result);
    if satisfied == planes.len() {
        return Solved {
            velocity: result,
            jammed: false,
        };
    }
    if satisfied < hard_count {
        // The boundary cannot be kept within one step's reach (an agent carried into a
        // corner): drop it, the controller clamps the move to the mesh anyway.
        return solve_velocity(&planes[hard_count..], 0, bounds, preferred);
    }
    solve_least_violation(planes, hard_count, satisfied, bounds, &mut result);
    Solved {
        velocity: result,
        jammed: true,
    }
}

/// The answer of [`solve_velocity`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Solved {
    /// The admissible velocity.
    pub velocity: Vec2,
    /// Whether the neighbours' half-planes left nothing admissible (the least violating
    /// velocity was taken): the agent cannot do its share of avoidance this step.
    pub jammed: bool,
}

/// One agent's neighbours, relative to it, as lanes (first `count` used).
#[derive(Clone, Copy, Debug)]
pub struct NeighbourBatch {
    /// Neighbours in the batch.
    pub count: usize,
    /// Neighbour position minus agent position, x, metres.
    pub offset_x: [f32; NEIGHBOURS_CAPACITY],
    /// Offset, z.
    pub offset_z: [f32; NEIGHBOURS_CAPACITY],
    /// Agent velocity minus neighbour velocity, x, m/s.
    pub relative_velocity_x: [f32; NEIGHBOURS_CAPACITY],
    /// Relative velocity, z.
    pub relative_velocity_z: [f32; NEIGHBOURS_CAPACITY],
    /// Sum of the two radii, metres.
    pub radius_sum: [f32; NEIGHBOURS_CAPACITY],
    /// The agent's share of the avoidance (0..1).
    pub share: [f32; NEIGHBOURS_CAPACITY],
}

impl Default for NeighbourBatch {
    fn default() -> Self {
        NeighbourBatch {
            count: 0,
            offset_x: [0.0; NEIGHBOURS_CAPACITY],
            offset_z: [0.0; NEIGHBOURS_CAPACITY],
            relative_velocity_x: [0.0; NEIGHBOURS_CAPACITY],
            relative_velocity_z: [0.0; NEIGHBOURS_CAPACITY],
            radius_sum: [0.0; NEIGHBOURS_CAPACITY],
            share: [0.0; NEIGHBOURS_CAPACITY],
        }
    }
}

/// The half-planes of a batch, as lanes.
#[derive(Clone, Copy, Debug)]
pub struct ConstraintLanes {
    /// Boundary point, x, m/s.
    pub point_x: [f32; NEIGHBOURS_CAPACITY],
    /// Boundary point, z.
    pub point_z: [f32; NEIGHBOURS_CAPACITY],
    /// Unit direction, x.
    pub direction_x: [f32; NEIGHBOURS_CAPACITY],
    /// Unit direction, z.
    pub direction_z: [f32; NEIGHBOURS_CAPACITY],
}

impl Default for ConstraintLanes {
    fn default() -> Self {
        ConstraintLanes {
            point_x: [0.0; NEIGHBOURS_CAPACITY],
            point_z: [0.0; NEIGHBOURS_CAPACITY],
            direction_x: [0.0; NEIGHBOURS_CAPACITY],
            direction_z: [0.0; NEIGHBOURS_CAPACITY],
        }
    }
}

/// Keeps a zero length from dividing (two agents at the same point, moving alike).
const LENGTH_FLOOR: f32 = 1e-6;

/// The ORCA half-plane of each neighbour in `batch`, one at a time. `inverse_horizon` is
/// 1 / time horizon, `inverse_dt` 1 / step (used when two agents already overlap: resolve
/// within this step).
pub fn orca_constraints_scalar(
    velocity: Vec2,
    inverse_horizon: f32,
    inverse_dt: f32,
    batch: &NeighbourBatch,
    out: &mut ConstraintLanes,
) {
    for i in 0..batch.count {
        let plane = orca_half_plane(
            velocity,
            inverse_horizon,
            inverse_dt,
            Vec2::new(batch.offset_x[i], batch.offset_z[i]),
            Vec2::new(batch.relative_velocity_x[i], batch.relative_velocity_z[i]),
            batch.radius_sum[i],
            batch.share[i],
            0.0,
        );
        out.point_x[i] = plane.point.x;
        out.point_z[i] = plane.point.y;
        out.direction_x[i] = plane.direction.x;
        out.direction_z[i] = plane.direction.y;
    }
}

/// The ORCA half-plane of one neighbour at `offset` (its position minus the agent's),
/// with `relative_velocity` (the agent's minus the neighbour's), radius sum `radius` and the
/// agent's `share`: the body of [`orca_constraints_scalar`], which the avoid pass also
/// calls directly as it reads each neighbour. `pass_right_sin_squared` is the squared sine
/// of [`AvoidanceConfig::passing_side_rad`]: the velocity obstacle's left leg is taken
/// only when the relative velocity lies that far to its left, so near head-on both agents
/// of a pair (who see the same sign) pass each other on their right.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn orca_half_plane(
    velocity: Vec2,
    inverse_horizon: f32,
    inverse_dt: f32,
    offset: Vec2,
    relative_velocity: Vec2,
    radius: f32,
    share: f32,
    pass_right_sin_squared: f32,
) -> HalfPlane {
    let (px, pz) = (offset.x, offset.y);
    let (vx, vz) = (relative_velocity.x, relative_velocity.y);
    let distance_squared = px * px + pz * pz;
    let radius_squared = radius * radius;
    let colliding = distance_squared <= radius_squared;
    // w: relative velocity seen from the centre of the truncation circle.
    let inverse = if colliding {
        inverse_dt
    } else {
        inverse_horizon
    };
    let wx = vx - px * inverse;
    let wz = vz - pz * inverse;
    let w_squared = wx * wx + wz * wz;
    let w_dot_p = wx * px + wz * pz;
    let on_cutoff = colliding || (w_dot_p < 0.0 && w_dot_p * w_dot_p > radius_squared * w_squared);
    let (direction_x, direction_z, change_x, change_z);
    if on_cutoff {
        // Closest boundary point is on the truncation circle: push out along w.
        let w_length = w_squared.sqrt().max(LENGTH_FLOOR);
        let (unit_x, unit_z) = (wx / w_length, wz / w_length);
        let scale = radius * inverse - w_length;
        direction_x = unit_z;
        direction_z = -unit_x;
        change_x = unit_x * scale;
        change_z = unit_z * scale;
    } else {
        // Closest boundary point is on a leg of the cone: project onto it.
        let leg = (distance_squared - radius_squared).max(0.0).sqrt();
        let inverse_distance_squared = 1.0 / distance_squared;
        let cross = px * wz - pz * wx;
        let left =
            cross > 0.0 && cross * cross > pass_right_sin_squared * distance_squared * w_squared;
        if left {
            direction_x = (px * leg - pz * radius) * inverse_distance_squared;
            direction_z = (px * radius + pz * leg) * inverse_distance_squared;
        } else {
            direction_x = (-(px * leg) - pz * radius) * inverse_distance_squared;
            direction_z = (px * radius - pz * leg) * inverse_distance_squared;
        }
        let along = vx * direction_x + vz * direction_z;
        change_x = direction_x * along - vx;
        change_z = direction_z * along - vz;
    }
    HalfPlane {
        point: Vec2::new(velocity.x + change_x * share, velocity.y + change_z * share),
        direction: Vec2::new(direction_x, direction_z),
    }
}

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

/// The boundary half-planes of an agent at `position` (x, z): one per segment within
/// reach whose interior is the closest point (an agent beyond a segment's end, going round a
/// corner of walkable space, is not held back by it). Writes at most `out.len()` and at
/// most [`WALLS_CAPACITY`], the first segments in `walls` order; returns how many.
pub fn wall_constraints(
    walls: &[Wall],
    position: Vec2,
    reach_m: f32,
    wall_time_horizon_s: f32,
    out: &mut [HalfPlane],
) -> usize {
    // Most segments near an agent do not bind it, which ones do changes from agent to
    // agent, and a branch on it mispredicted about one segment in seven (eighteen
    // segments per agent in the city): every segment's index is written to the next free
    // place, which only advances when the segment binds; the half-planes are built after,
    // for the few that do.
    let capacity = out.len().min(WALLS_CAPACITY);
    let mut binding = [0u32; WALLS_CAPACITY];
    let mut count = 0;
    for (index, wall) in walls.iter().enumerate() {
        if count == capacity {
            break;
        }
        let offset = position - wall.start;
        let along = wall.direction.dot(offset);
        // Walkable space is where perp_dot(direction, point - start) < 0 (the tile winding).
        let distance = wall.direction.y * offset.x - wall.direction.x * offset.y;
        // Not beyond an end, not behind the segment (it faces away), not too far to matter.
        let binds =
            (along > 0.0) & (along < wall.length_m) & (distance >= -0.01) & (distance <= reach_m);
        binding[count] = index as u32;
        count += usize::from(binds);
    }
    let inverse_horizon = 1.0 / wall_time_horizon_s;
    for (plane, &index) in out.iter_mut().zip(&binding[..count]) {
        let wall = &walls[index as usize];
        let inward = Vec2::new(wall.direction.y, -wall.direction.x);
        let distance = inward.dot(position - wall.start);
        // v . inward >= -distance / horizon: close on the segment no faster than that.
        *plane = HalfPlane {
            point: -inward * (distance.max(0.0) * inverse_horizon),
            direction: -wall.direction,
        };
    }
    count
}

/// The most a stalled walker turns its preferred velocity, radians.
const STALL_TURN_RAD: f32 = 1.0;

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
/// stall of the two grows to [`STALL_S`]. Avoidance and separation both use it, so a pair
/// allowed to squeeze past each other is not pushed back apart by the separation pass.
#[inline]
fn give(config: &AvoidanceConfig, own: &AvoidBody, other: &AvoidBody) -> f32 {
    if config.squeeze_fraction == 0.0 {
        return 1.0; // no stall to read
    }
    let stall = (own.stalled_s.max(other.stalled_s) / STALL_S)
        .max(own.unprogressed_s.max(other.unprogressed_s) / config.squeeze_ramp_s);
    1.0 - config.squeeze_fraction * stall.min(1.0)
}

/// Whether a walker passing through passes `other`: anyone in its way except an agent
/// crossing a link (a fixed course nobody walks through). Sparing walkers that go its way
/// (a queue) measured worse: held queues in the dungeon's corridors then stayed held (84
/// of 1,000 agents stuck against 1-4).
#[inline]
fn passes(other: &AvoidBody) -> bool {
    other.status != AgentStatus::CrossingLink
}

/// Whether a walker held this long passes through the agents in its way
/// ([`AvoidanceConfig::pass_through_after_s`]).
#[inline]
fn passing_through(config: &AvoidanceConfig, body: &AvoidBody) -> bool {
    config.pass_through_after_s > 0.0
        && body.status == AgentStatus::Moving
        && body.unprogressed_s >= config.pass_through_after_s
}

/// Whether the agent in this status walks (negotiates) rather than holds still.
fn walking(status: AgentStatus) -> bool {
    matches!(
        status,
        AgentStatus::Moving | AgentStatus::VelocityControlled
    )
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
    /// Seconds without progress along the corridor ([`AgentLanes::unprogressed_s`]).
    pub unprogressed_s: f32,
    /// Status.
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
        .with_min_len(super::parallel::LIGHT_AGENTS_PER_TASK)
        .map(|index| {
            let slot = grid.slot_at(index);
            AvoidBody {
                position: Vec2::new(lanes.position_x[slot], lanes.position_z[slot]),
                velocity: Vec2::new(lanes.velocity_x[slot], lanes.velocity_z[slot]),
                desired: Vec2::new(lanes.desired_x[slot], lanes.desired_z[slot]),
                radius: lanes.radius[slot],
                stalled_s: lanes.stalled_s[slot],
                unprogressed_s: lanes.unprogressed_s[slot],
                status: lanes.status[slot],
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

/// The avoid pass: a new requested velocity for every agent, written to `velocities` in
/// the grid's cell order (`grid.slot_at(index)` is the agent of `velocities[index]`).
/// `grid` must have been rebuilt over the lanes' positions this frame, and `bodies`
/// gathered from it ([`gather_bodies`]).
pub fn avoid_pass(
    grid: &NeighbourGrid,
    bodies: &[AvoidBody],
    snapshot: &Snapshot,
    config: &AvoidanceConfig,
    profiles: &[AvoidanceProfile],
    dt: f32,
    velocities: &mut Vec<Solved>,
) {
    velocities.clear();
    velocities.resize(bodies.len(), Solved::default());
    velocities
        .par_chunks_mut(AVOID_CHUNK_AGENTS)
        .enumerate()
        .for_each(|(chunk, out)| {
            let first = chunk * AVOID_CHUNK_AGENTS;
            let mut scratch = AvoidScratch::default();
            for (offset, velocity) in out.iter_mut().enumerate() {
                *velocity = avoid_one(
                    grid,
                    bodies,
                    snapshot,
                    config,
                    profiles,
                    dt,
                    first + offset,
                    &mut scratch,
                );
            }
        });
}

/// Per-agent working memory of the avoid pass, reused across the agents of a chunk (the
/// half-plane list, which would otherwise be zeroed for every agent).
#[derive(Clone, Debug)]
pub struct AvoidScratch {
    planes: [HalfPlane; NEIGHBOURS_CAPACITY + WALLS_CAPACITY],
}

impl Default for AvoidScratch {
    fn default() -> Self {
        AvoidScratch {
            planes: [HalfPlane {
                point: Vec2::ZERO,
                direction: Vec2::X,
            }; NEIGHBOURS_CAPACITY + WALLS_CAPACITY],
        }
    }
}

/// The new requested velocity of the agent at `index` in the grid's cell order, and
/// whether it is jammed.
#[allow(clippy::too_many_arguments)]
pub fn avoid_one(
    grid: &NeighbourGrid,
    bodies: &[AvoidBody],
    snapshot: &Snapshot,
    config: &AvoidanceConfig,
    profiles: &[AvoidanceProfile],
    dt: f32,
    index: usize,
    scratch: &mut AvoidScratch,
) -> Solved {
    let own = bodies[index];
    let profile = &profiles[own.profile.index()];
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
    // (An agent that does not negotiate breaks no ties: it keeps its course.)
    let preferred = if profile.negotiates {
        preferred + symmetry_nudge(own.identity_bits)
    } else {
        preferred
    };
    // A stalled walker turns its wish sideways, every agent to the same side, by up to
    // STALL_TURN_RAD as the stall grows: a ring of agents stopped around an empty centre
    // starts to circulate, two walkers nose to nose pass each other on the same side.
    let stall = (own.stalled_s / STALL_S).min(1.0);
    let preferred = if stall > 0.0 && profile.negotiates {
        Vec2::from_angle(-STALL_TURN_RAD * stall).rotate(preferred)
    } else {
        preferred
    };
    let (position, velocity) = (own.position, own.velocity);
    let agent_walking = walking(own.status);
    let bounds = VelocityBounds::new(velocity, own.speed_limit, own.acceleration_limit * dt);

    let AvoidScratch { planes } = scratch;
    let walls = snapshot
        .tile(own.polygon)
        .map_or(&[][..], |tile| tile.walls_near(own.polygon.polygon()));
    let reach_m = bounds.speed.radius * profile.wall_time_horizon_s;
    let hard_count = wall_constraints(
        walls,
        position,
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
    // `orca_constraints_scalar`, whose `wide` twin computes every case for all eight lanes
    // and measured 1.5x slower on the default target and no faster on x86-64-v3 for K = 10;
    // docs/benchmarks.md), straight into the program's list: no lanes in between.
    let (inverse_horizon, inverse_dt) = (1.0 / profile.time_horizon_s, 1.0 / dt);
    let pass_right_sin_squared = config.passing_side_rad.sin().powi(2);
    let turning = config.slow_turn_rad != 0.0;
    let mut close_ahead = false;
    let neighbours = grid.neighbours_at(index);
    // An agent that does not negotiate weighs walls only.
    let count = if profile.negotiates {
        neighbours.len().min(NEIGHBOURS_CAPACITY)
    } else {
        0
    };
    // Whether some profile does not negotiate (then a neighbour's is looked up).
    let some_keep_course = profiles.iter().any(|profile| !profile.negotiates);
    // A walker held past the pass-through time weighs only agents crossing links (which
    // nobody passes through): the others it walks through until it makes progress.
    let ghost = passing_through(config, &own);
    let mut written = 0;
    for &other in &neighbours[..count] {
        let other = &bodies[other as usize];
        if ghost && passes(other) {
            continue;
        }
        let plane = &mut planes[hard_count + written];
        written += 1;
        let offset = other.position - position;
        // A holding agent answers a walker's intent (its preferred velocity), not its
        // current velocity: a walker stopped against it, wanting through, still makes it
        // step aside, where the current velocities (both zero) would leave both standing.
        let other_walking = walking(other.status);
        let neighbour_velocity = if !agent_walking & other_walking {
            other.desired
        } else {
            other.velocity
        };
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
        let keeps_course = other.status == AgentStatus::CrossingLink
            || (some_keep_course && !profiles[other.profile.index()].negotiates);
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

/// Overlap left alone by the separation pass, metres (rounding, not contact).
const SEPARATION_SLACK_M: f32 = 1e-3;

/// Relaxation rounds of the separation pass per step, at most: a round looks only at the
/// agents the last one moved, so rounds past the first cost only where a crowd is packed
/// (8 against 4: overlapping pairs of the shared nav_test crowd 343 -> 307 per frame).
const SEPARATION_ROUNDS: usize = 8;

/// A separation round looking at fewer agents than this runs on the calling thread.
const SEPARATION_SERIAL_BELOW: usize = 256;

/// Agents (in cell order) per parallel work item of the separation pass, as in the avoid
/// pass: a crush in one corner spreads over several items.
const SEPARATION_CHUNK_AGENTS: usize = 64;

/// The share of an agent's mean overlap removed per round (averaging over contacts already
/// keeps pushes from several sides from overshooting; 0.7 and 8 rounds measured no better
/// on the circle).
const SEPARATION_FACTOR: f32 = 1.0;

/// The separation pass (depenetration): after the move, overlapping agents are pushed
/// apart along the surface (so they stay on the mesh), in up to eight relaxation rounds: each
/// agent moves by half its mean overlap with its neighbours, away from them (a lone pair is
/// apart after one round). ORCA keeps agents apart when it can; in a crush (its fallback
/// minimises violations, it cannot remove them) and when the acceleration limit keeps an
/// agent from dodging in time, this keeps bodies from sinking into each other. The move is
/// written to the feedback as `displacement_correction`, so it does not count as walking
/// (vAverage).
///
/// `grid` holds the neighbours found at the start of the step (agents move a fraction of
/// the neighbour range in one step). The rounds work on the agents' feet, polygons and end
/// velocities copied into the grid's cell order (`scratch`), where an agent's neighbours
/// lie close by, and the feedback records (a hundred bytes each, in slot order) are read
/// once and written once, at the end. Each round reads the feet the last round left and
/// writes the next ones into a second buffer, so the pass is the same at any thread count;
/// a round is one parallel region with nothing serial after it (a serial apply of each
/// round's moves measured a sixth of the pass on two cores).
#[allow(clippy::too_many_arguments)]
pub fn separation_pass(
    grid: &NeighbourGrid,
    bodies: &[AvoidBody],
    config: &AvoidanceConfig,
    snapshot: &Snapshot,
    filters: &[crate::query::QueryFilter],
    profiles: &[AvoidanceProfile],
    dt: f32,
    feedback: &mut [super::StepFeedback],
    scratch: &mut SeparationScratch,
) {
    let SeparationScratch {
        agents,
        feet,
        feet_next,
        moved,
        active,
    } = scratch;
    let agent_count = grid.len();
    if agent_count == 0 {
        return;
    }
    let chunks = agent_count.div_ceil(SEPARATION_CHUNK_AGENTS);
    // Every place is written below; the first agent only fills new ones.
    agents.resize(
        agent_count,
        SeparationAgent::after(&feedback[grid.slot_at(0)]),
    );
    feet.resize(agent_count, Vec2::ZERO);
    feet_next.resize(agent_count, Vec2::ZERO);
    moved.resize(agent_count, false);
    active.truncate(chunks);
    active.resize_with(chunks, Vec::new);
    // The copy into cell order, in one parallel region: each chunk of cell order gathers
    // its agents' records, sets both feet buffers and puts every agent in its active list
    // (the first round looks at everyone). The widest body rides along: a neighbour
    // farther than the agent's radius plus this cannot touch it, which is known from the
    // feet alone, without reading the neighbour's record.
    let feedback_read = &*feedback;
    let widest_m = agents
        .par_chunks_mut(SEPARATION_CHUNK_AGENTS)
        .zip(feet.par_chunks_mut(SEPARATION_CHUNK_AGENTS))
        .zip(feet_next.par_chunks_mut(SEPARATION_CHUNK_AGENTS))
        .zip(moved.par_chunks_mut(SEPARATION_CHUNK_AGENTS))
        .zip(active.par_iter_mut())
        .enumerate()
        .with_min_len(super::parallel::LIGHT_AGENTS_PER_TASK / SEPARATION_CHUNK_AGENTS)
        .map(|(chunk, ((((agents, feet), feet_next), moved), active))| {
            let first = chunk * SEPARATION_CHUNK_AGENTS;
            active.clear();
            let mut widest_m = 0.0f32;
            for (offset, agent) in agents.iter_mut().enumerate() {
                let index = first + offset;
                let step = &feedback_read[grid.slot_at(index)];
                *agent = SeparationAgent::after(step);
                let flat = Vec2::new(step.foot.x, step.foot.z);
                (feet[offset], feet_next[offset], moved[offset]) = (flat, flat, false);
                active.push(index as u32);
                widest_m = widest_m.max(bodies[index].radius);
            }
            widest_m
        })
        .reduce(|| 0.0, f32::max);
    // Each round reads the feet the last round left (`feet`) and writes the next
    // (`feet_next`); an agent's own record is its chunk's, updated in place. Later rounds
    // look only at the agents the last round moved (most of a crowd touches nobody, and
    // rounds are for settling crushes), and those are exactly the places where
    // `feet_next`, two rounds old, differs from `feet`: each is brought up to date before
    // it is looked at, so after the round `feet_next` is whole again. No serial stretch
    // between rounds: the chunks keep their own active lists.
    let relax = (config.contact_relax_per_s * dt).min(1.0);
    // A round with few agents left to look at runs on the calling thread: sharing a few
    // dozen agents' pushes costs more in waking the other thread than it saves.
    let mut looking_at = agent_count;
    for round in 0..SEPARATION_ROUNDS {
        let read = &*feet;
        let soft_share = if round == 0 { relax } else { 0.0 };
        let serial = looking_at < SEPARATION_SERIAL_BELOW;
        let still: usize = agents
            .par_chunks_mut(SEPARATION_CHUNK_AGENTS)
            .zip(feet_next.par_chunks_mut(SEPARATION_CHUNK_AGENTS))
            .zip(moved.par_chunks_mut(SEPARATION_CHUNK_AGENTS))
            .zip(active.par_iter_mut())
            .enumerate()
            .with_min_len(if serial { chunks } else { 1 })
            .map(|(chunk, (((agents, next), moved), active))| {
                let first = chunk * SEPARATION_CHUNK_AGENTS;
                let mut kept = 0;
                for position in 0..active.len() {
                    let index = active[position] as usize;
                    let offset = index - first;
                    next[offset] = read[index];
                    let agent = &mut agents[offset];
                    let Some(correction) = separation_move(
                        grid, bodies, config, snapshot, filters, profiles, agent, read, widest_m,
                        index, soft_share,
                    ) else {
                        continue;
                    };
                    agent.foot = correction.foot;
                    agent.height_stale = correction.height_stale;
                    agent.polygon = correction.polygon;
                    agent.end += correction.velocity_change;
                    next[offset] = Vec2::new(correction.foot.x, correction.foot.z);
                    moved[offset] = true;
                    active[kept] = index as u32;
                    kept += 1;
                }
                active.truncate(kept);
                kept
            })
            .sum();
        std::mem::swap(feet, feet_next);
        if still == 0 {
            break;
        }
        looking_at = still;
    }
    let (agents, moved) = (&*agents, &*moved);
    feedback
        .par_iter_mut()
        .enumerate()
        .for_each(|(slot, step)| {
            let Some(index) = grid.index_of_slot(slot).filter(|&index| moved[index]) else {
                return;
            };
            let agent = &agents[index];
            let mut foot = agent.foot;
            if agent.height_stale {
                if let Some(tile) = snapshot.tile(agent.polygon) {
                    foot.y = tile.height_at(agent.polygon.polygon(), Vec2::new(foot.x, foot.z));
                }
            }
            let shift = foot - step.foot;
            step.foot = foot;
            step.polygon = agent.polygon;
            step.displacement += shift;
            step.displacement_correction += shift;
            step.velocity_world_end.x = agent.end.x;
            step.velocity_world_end.z = agent.end.y;
        });
}

/// The separation pass's working state, kept by the crowd between steps so its buffers
/// are reused: per agent in cell order, what the rounds read and move.
#[derive(Clone, Debug, Default)]
pub struct SeparationScratch {
    /// Foot, polygon and end velocity, as the last round left them.
    agents: Vec<SeparationAgent>,
    /// The feet seen from above, as the last round left them: what a neighbour reads,
    /// packed (8 bytes an agent).
    feet: Vec<Vec2>,
    /// The feet the current round writes (see [`separation_pass`]).
    feet_next: Vec<Vec2>,
    /// Whether a round has moved the agent (its feedback is rewritten at the end).
    moved: Vec<bool>,
    /// Per chunk of cell order, the agents the next round looks at (those the last round
    /// moved), ascending.
    active: Vec<Vec<u32>>,
}

impl SeparationScratch {
    /// Writes the memory of the per-agent buffers for agents `from..to`, and makes each
    /// chunk's active list, ahead of the steps that fill them (see
    /// `Crowd::map_step_buffers`).
    pub(crate) fn map_pages(
        &mut self,
        from: usize,
        to: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        use super::parallel::map_pages;
        map_pages(&mut self.agents, from, to)?;
        map_pages(&mut self.feet, from, to)?;
        map_pages(&mut self.feet_next, from, to)?;
        map_pages(&mut self.moved, from, to)?;
        let chunks = to.div_ceil(SEPARATION_CHUNK_AGENTS);
        if self.active.len() < chunks {
            self.active.try_reserve(chunks - self.active.len())?;
            self.active
                .resize_with(chunks, || Vec::with_capacity(SEPARATION_CHUNK_AGENTS));
        }
        Ok(())
    }
}

/// One agent's state in the separation rounds.
#[derive(Clone, Copy, Debug)]
struct SeparationAgent {
    /// The foot; its height is stale while `height_stale`.
    foot: glam::Vec3,
    height_stale: bool,
    polygon: crate::mesh::PolyRef,
    /// Horizontal end velocity, m/s.
    end: Vec2,
}

impl SeparationAgent {
    /// The agent as its step left it.
    fn after(step: &super::StepFeedback) -> SeparationAgent {
        SeparationAgent {
            foot: step.foot,
            height_stale: false,
            polygon: step.polygon,
            end: Vec2::new(step.velocity_world_end.x, step.velocity_world_end.z),
        }
    }
}

/// One agent's correction in a separation round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeparationMove {
    /// New foot position.
    pub foot: glam::Vec3,
    /// Its polygon.
    pub polygon: crate::mesh::PolyRef,
    /// Change of the horizontal end velocity, m/s (zero for [`ContactModel::Slide`]).
    pub velocity_change: Vec2,
    /// Whether `foot.y` is still the height before the move (a move within the polygon;
    /// the pass reads the height once, after its last round).
    pub height_stale: bool,
}

/// One move out of its overlaps, in one separation round, for the agent at `index` in
/// cell order, if it has any.
#[allow(clippy::too_many_arguments)]
fn separation_move(
    grid: &NeighbourGrid,
    bodies: &[AvoidBody],
    config: &AvoidanceConfig,
    snapshot: &Snapshot,
    filters: &[crate::query::QueryFilter],
    profiles: &[AvoidanceProfile],
    agent: &SeparationAgent,
    feet: &[Vec2],
    widest_m: f32,
    index: usize,
    soft_share: f32,
) -> Option<SeparationMove> {
    let own = &bodies[index];
    let keeps_course = |body: &AvoidBody| {
        body.status == AgentStatus::CrossingLink || !profiles[body.profile.index()].negotiates
    };
    if keeps_course(own) {
        return None; // carried along its link, or not negotiating; the others make room
    }
    let here = feet[index];
    let (mut push, mut contacts) = (Vec2::ZERO, 0u32);
    let ghost = passing_through(config, own);
    let could_touch = own.radius + widest_m;
    for &other in grid.neighbours_at(index) {
        let other = other as usize;
        let offset = here - feet[other];
        if offset.length_squared() >= could_touch * could_touch {
            continue;
        }
        // A walker passing through and the agents it passes do not push each other.
        if (ghost && passes(&bodies[other]))
            || (passing_through(config, &bodies[other]) && passes(own))
        {
            continue;
        }
        let distance = offset.length();
        let reach = (own.radius + bodies[other].radius) * give(config, own, &bodies[other]);
        let overlap = reach - distance;
        if overlap <= SEPARATION_SLACK_M {
            continue;
        }
        // Deeper than the allowance: out at once; within it: eased out by the round's
        // soft share (the first round's only), so a brushing contact fades over steps.
        let allowed = reach * config.overlap_allowance;
        let overlap = (overlap - allowed).max(0.0) + soft_share * overlap.min(allowed);
        if overlap <= SEPARATION_SLACK_M {
            continue;
        }
        // Two feet on the same spot part along a direction fixed by their order.
        let away = if distance > 1e-6 {
            offset / distance
        } else if index < other {
            Vec2::X
        } else {
            -Vec2::X
        };
        // Half each, all of it against an agent crossing a link or keeping its course.
        let part = if keeps_course(&bodies[other]) {
            1.0
        } else {
            0.5
        };
        push += away * (overlap * part);
        contacts += 1;
    }
    if contacts == 0 {
        return None;
    }
    let push = push * (SEPARATION_FACTOR / contacts as f32);
    // An inelastic contact: the end velocity keeps nothing that drives back into the
    // agents it was pushed away from.
    let velocity_change = match config.contact {
        ContactModel::Slide => Vec2::ZERO,
        ContactModel::Inelastic => {
            let normal = push.normalize_or_zero();
            -normal * agent.end.dot(normal).min(0.0)
        }
    };
    let target = agent.foot + glam::Vec3::new(push.x, 0.0, push.y);
    // Most pushes stay in the agent's polygon: the foot moves there with its height left
    // as it was, to be read from the detail mesh once after the last round (the rounds
    // read only the feet seen from above). The rest walk the surface, which gives the
    // height with the clamped point.
    let tile = snapshot.tile(agent.polygon)?;
    if tile.contains_xz(agent.polygon.polygon(), Vec2::new(target.x, target.z)) {
        return Some(SeparationMove {
            foot: glam::Vec3::new(target.x, agent.foot.y, target.z),
            polygon: agent.polygon,
            velocity_change,
            height_stale: true,
        });
    }
    let filter = &filters[own.filter.index()];
    crate::query::move_along_surface(snapshot, agent.polygon, agent.foot, target, filter)
        .ok()
        .map(|moved| SeparationMove {
            foot: moved.position,
            polygon: moved.polygon,
            velocity_change,
            height_stale: false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_on_agents_get_half_planes_that_part_them_symmetrically() {
        // A at the origin walking +x at 1 m/s, B 4 m ahead walking -x: relative velocity
        // 2 m/s straight into B, combined radius 1, horizon 2 s.
        let batch = NeighbourBatch {
            count: 1,
            offset_x: [4.0; NEIGHBOURS_CAPACITY],
            relative_velocity_x: [2.0; NEIGHBOURS_CAPACITY],
            radius_sum: [1.0; NEIGHBOURS_CAPACITY],
            share: [0.5; NEIGHBOURS_CAPACITY],
            ..NeighbourBatch::default()
        };
        let mut out = ConstraintLanes::default();
        orca_constraints_scalar(Vec2::new(1.0, 0.0), 0.5, 30.0, &batch, &mut out);
        let plane = HalfPlane {
            point: Vec2::new(out.point_x[0], out.point_z[0]),
            direction: Vec2::new(out.direction_x[0], out.direction_z[0]),
        };
        // (2, 0) lies inside the truncated cone (in 2 s at 2 m/s A would reach B), so the
        // current velocity is refused.
        assert!(plane.violation(Vec2::new(1.0, 0.0)) > 0.0);
        assert!((plane.direction.length() - 1.0).abs() < 1e-6);
        // The closest way out is a leg of the cone: sin(angle to the axis) = 1/4.
        let angle = plane.direction.y.abs().atan2(plane.direction.x.abs());
        assert!((angle - 0.25f32.asin()).abs() < 1e-5, "{angle}");
        // B's half-plane is A's mirrored through the origin: they turn to opposite sides.
        let mirrored = NeighbourBatch {
            offset_x: [-4.0; NEIGHBOURS_CAPACITY],
            relative_velocity_x: [-2.0; NEIGHBOURS_CAPACITY],
            ..batch
        };
        let mut other = ConstraintLanes::default();
        orca_constraints_scalar(Vec2::new(-1.0, 0.0), 0.5, 30.0, &mirrored, &mut other);
        assert!((other.point_x[0] + out.point_x[0]).abs() < 1e-6);
        assert!((other.point_z[0] + out.point_z[0]).abs() < 1e-6);
        assert!((other.direction_x[0] + out.direction_x[0]).abs() < 1e-6);
        assert!((other.direction_z[0] + out.direction_z[0]).abs() < 1e-6);
    }

    #[test]
    fn the_program_finds_the_closest_admissible_velocity() {
        let bounds = VelocityBounds::new(Vec2::new(1.0, 0.0), 2.0, 10.0);
        // Direction (0, 1) through (0.5, 0): admissible is x <= 0.5.
        let plane = HalfPlane {
            point: Vec2::new(0.5, 0.0),
            direction: Vec2::new(0.0, 1.0),
        };
        let result = solve_velocity(&[plane], 0, &bounds, Vec2::new(1.5, 0.3)).velocity;
        assert!(result.distance(Vec2::new(0.5, 0.3)) < 1e-6, "{result}");
        // Acceleration disk of 0.2 around (1, 0) cannot reach x <= 0.5: the soft plane is
        // violated as little as possible, at x = 0.8.
        let tight = VelocityBounds::new(Vec2::new(1.0, 0.0), 2.0, 0.2);
        let result = solve_velocity(&[plane], 0, &tight, Vec2::new(1.5, 0.0));
        assert!(result.jammed);
        let result = result.velocity;
        assert!(result.distance(Vec2::new(0.8, 0.0)) < 1e-5, "{result}");
        // Two contradicting soft planes (x <= -1 and x >= 1): the middle, x = 0.
        let other = HalfPlane {
            point: Vec2::new(1.0, 0.0),
            direction: Vec2::new(0.0, -1.0),
        };
        let left = HalfPlane {
            point: Vec2::new(-1.0, 0.0),
            direction: Vec2::new(0.0, 1.0),
        };
        let result = solve_velocity(&[left, other], 0, &bounds, Vec2::new(0.0, 1.0)).velocity;
        assert!(result.x.abs() < 1e-5, "{result}");
    }

    #[test]
    fn a_wall_ahead_limits_the_closing_speed_and_a_wall_behind_a_corner_does_not() {
        // Wall along z = 0 from x = 0 to 10 walked so walkable space (right of the edge) is
        // z > 0: edge from (10, 0) to (0, 0) has right-hand normal (0, 1).
        let walls = [Wall::new(Vec2::new(10.0, 0.0), Vec2::new(0.0, 0.0)).expect("a segment")];
        let mut out = [HalfPlane {
            point: Vec2::ZERO,
            direction: Vec2::X,
        }; 4];
        let count = wall_constraints(&walls, Vec2::new(5.0, 0.5), 3.0, 1.0, &mut out);
        assert_eq!(count, 1);
        // Closing at 0.5 m/s (0.5 m in 1 s) is the limit.
        assert!(out[0].violation(Vec2::new(0.0, -0.5)).abs() < 1e-6);
        assert!(out[0].violation(Vec2::new(3.0, -0.6)) > 0.0);
        assert!(out[0].violation(Vec2::new(3.0, 0.0)) < 0.0);
        // Beyond the wall's end (x = -1): going round the corner is not held back.
        assert_eq!(
            wall_constraints(&walls, Vec2::new(-1.0, 0.5), 3.0, 1.0, &mut out),
            0
        );
    }
}
