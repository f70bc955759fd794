//! Local avoidance settings: the crowd-wide [`AvoidanceConfig`], the per-agent
//! [`AvoidanceProfile`] and the [`ContactModel`] of the separation pass.
//!
//! Stage: crowd runtime, read by the avoid and separation passes. Every field is checked
//! by `invalid_field`, which names the first bad one, before a crowd takes it.

/// Most neighbours one agent can weigh (a bound on [`AvoidanceConfig::neighbours_max`]).
pub const NEIGHBOURS_CAPACITY: usize = 32;

/// Local avoidance settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AvoidanceConfig {
    /// Whether the avoid pass runs (off: agents walk through each other).
    pub enabled: bool,
    /// Neighbours each agent weighs, nearest first (K), at most 32.
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
    /// What a contact does to the velocity of the agents pushed apart. False (sliding):
    /// positions are corrected, velocities kept, so bodies slide past each other, which
    /// keeps two-way traffic in narrow corridors flowing at the cost of overlap in a
    /// crush. True (inelastic): the end velocity also loses its component into the push,
    /// so a crush stops sinking in, but two streams meeting head-on in a corridor can
    /// deadlock.
    pub inelastic_contact: bool,
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
    /// ([`AvoidanceConfig::squeeze_fraction`]) grows to the full fraction, once it has
    /// begun (a half-second stall grows it too): a walker jostled in a jam is held even
    /// when it moves.
    pub squeeze_ramp_s: f32,
    /// Seconds a walker goes without progress (or stands stalled) before its squeeze
    /// begins: sidestepping a neighbour or turning a corner costs progress for a moment,
    /// and bodies keep their full size through it; only a hold longer than this gives.
    pub squeeze_after_s: f32,
    /// Seconds without progress along its corridor after which a walker passes through
    /// the agents in its way (0: never): it ignores them, walkers it passes ignore it in
    /// turn (agents standing still make room), and nobody pushes it, until it has made
    /// progress again. The last step of the escalation (wait, turn, squeeze, pass): no
    /// agent stays stuck for longer, at the price of one body crossing others.
    pub pass_through_after_s: f32,
    /// How far a walker passing through walks before it weighs the others again, in its
    /// own body widths along its corridor (0: as soon as it has made progress again). It
    /// begins passing with its body pressed into the one in its way, so it must walk a
    /// body's width and more to come out the other side; a walker that stopped passing
    /// halfway would be pushed back by the body it was passing, and the two would meet
    /// again, held, for as long as their order lasts.
    pub pass_through_widths: f32,
}

/// How one agent avoids, set per agent from a small table registered with the crowd
/// ([`Crowd::add_avoidance_profile`](crate::crowd::Crowd::add_avoidance_profile)); the crowd's
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
            // A quarter of a second: paths turn at the mesh's boundary corners, and a
            // longer look ahead holds every walker off the edge it is heading along (the
            // main job with `--wall-time-horizon 1` delivers 581 complete arrivals in 10 s
            // against 696; docs/benchmarks.md, Flow). The mesh keeps agents on it whatever
            // the horizon.
            wall_time_horizon_s: 0.25,
            // Bodies keep their size while held: pressed together to squeeze past, a held
            // pair only adds overlapping pairs while it waits, since passes long enough
            // to come out the other side already get it by (the flow suite,
            // docs/benchmarks.md: without squeezes, fewer overlapping pairs at every point
            // than with 45% ones). A host that wants bodies to give sets a fraction.
            squeeze_fraction: 0.0,
            separation: true,
            inelastic_contact: false,
            slow_turn_rad: 0.0,
            // Plain reciprocity: a larger share flows better in corridors at the cost of
            // deeper overlap in dense crowds.
            yield_share: 0.5,
            overlap_allowance: 0.0,
            contact_relax_per_s: 3.0,
            // Oncoming walkers both keep right a little: streams meeting in a corridor or
            // a pass form lanes instead of negotiating each pair afresh.
            passing_side_rad: 0.3,
            squeeze_ramp_s: 0.5,
            squeeze_after_s: 0.3,
            // The last resort, after a second held: walkers pass through where turning
            // did not get them by (a pass too narrow, a crowd pressed against its own
            // goal). Later passes cost the flow suite complete arrivals; earlier ones
            // walk through bodies a short wait would have parted (docs/benchmarks.md,
            // Flow).
            pass_through_after_s: 1.0,
            // Three widths: from contact, out of the body in its way and past one
            // standing close behind it. A shorter pass can leave the passer inside the
            // next body of a queue, to be held again; longer ones walk it through more
            // of the queue (docs/benchmarks.md, Flow).
            pass_through_widths: 3.0,
        }
    }
}

impl AvoidanceConfig {
    /// Whether an agent in `status` that has gone `unprogressed_s` without progress is
    /// passing through the agents in its way: a walker (only walkers pass) held past
    /// [`AvoidanceConfig::pass_through_after_s`]. What the avoid and separation passes read
    /// from their gathered bodies and the quality measure from the lanes.
    #[inline]
    pub(crate) fn is_passing_through(
        &self,
        status: crate::crowd::agents::AgentStatus,
        unprogressed_s: f32,
    ) -> bool {
        status == crate::crowd::agents::AgentStatus::Moving
            && self.passes_through_after(unprogressed_s)
    }

    /// Whether a walker that has gone `unprogressed_s` without progress along its corridor
    /// passes through the agents in its way ([`AvoidanceConfig::pass_through_after_s`]):
    /// the one rule the avoid and separation passes (who is ignored) and the feedback pass
    /// (how long the pass lasts) share.
    #[inline]
    pub(crate) fn passes_through_after(&self, unprogressed_s: f32) -> bool {
        self.pass_through_after_s > 0.0 && unprogressed_s >= self.pass_through_after_s
    }

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
        if !(self.squeeze_after_s.is_finite() && self.squeeze_after_s >= 0.0) {
            return Some(("avoidance.squeeze_after_s", self.squeeze_after_s));
        }
        if !(self.pass_through_after_s.is_finite() && self.pass_through_after_s >= 0.0) {
            return Some(("avoidance.pass_through_after_s", self.pass_through_after_s));
        }
        if !(self.pass_through_widths.is_finite() && self.pass_through_widths >= 0.0) {
            return Some(("avoidance.pass_through_widths", self.pass_through_widths));
        }
        if !(0.0..=std::f32::consts::FRAC_PI_4).contains(&self.passing_side_rad) {
            return Some(("avoidance.passing_side_rad", self.passing_side_rad));
        }
        None
    }
}

/// The crowd's avoidance profiles as the avoid and separation passes read them: whether an
/// agent keeps its course is one status compare when every profile negotiates (the usual
/// table), and a table lookup only when one does not.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProfileTable<'a> {
    profiles: &'a [AvoidanceProfile],
    all_negotiate: bool,
}

impl<'a> ProfileTable<'a> {
    pub(crate) fn new(profiles: &'a [AvoidanceProfile]) -> ProfileTable<'a> {
        ProfileTable {
            profiles,
            all_negotiate: profiles.iter().all(|profile| profile.negotiates),
        }
    }

    /// The profile at `index`.
    #[inline]
    pub(crate) fn get(&self, index: usize) -> &'a AvoidanceProfile {
        &self.profiles[index]
    }

    /// Whether an agent with `status` and the profile at `index` keeps its course (crossing
    /// a link, or not negotiating): its neighbours take all of the avoidance against it.
    #[inline]
    pub(crate) fn keeps_course(
        &self,
        status: crate::crowd::agents::AgentStatus,
        index: usize,
    ) -> bool {
        status == crate::crowd::agents::AgentStatus::CrossingLink
            || (!self.all_negotiate && !self.profiles[index].negotiates)
    }
}
