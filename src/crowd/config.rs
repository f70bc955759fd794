//! The crowd's settings: budgets, tolerances, avoidance, links.
//!
//! Stage: crowd runtime, read when a crowd is made. [`CrowdConfig::invalid_field`] names the
//! first field out of range, which `Crowd::new` refuses.

use glam::Vec3;

use crate::crowd::avoidance::velocities::AvoidanceConfig;
use crate::crowd::paths::corridor::CorridorCache;
use crate::crowd::paths::scheduler::FrameBudget;

/// Crowd settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrowdConfig {
    /// Node expansions per step, all path searches together, whatever the crowd's size
    /// (the step's budget is the larger of this and [`CrowdConfig::path_nodes_per_agent`]
    /// times the agents). Limit: at least 1.
    pub path_nodes_per_step: u32,
    /// Node expansions per step for each agent in the crowd: the budget grows with the
    /// crowd, so a mass order (every agent told to move at once) is answered within about
    /// the same number of frames at any size, and an agent's share of the search work
    /// stays the same. A budget is a ceiling, not a spend: a crowd walking its paths uses
    /// a small part of it. 0: the fixed [`CrowdConfig::path_nodes_per_step`] alone.
    pub path_nodes_per_agent: f32,
    /// Fresh move orders given a head start per step (a few polygons toward the target,
    /// walked while the path is searched; a few adjacency reads each, about a microsecond;
    /// 0: none, agents stand until their path is found), whatever the crowd's size (the
    /// larger of this and [`CrowdConfig::head_starts_per_agent`] times the agents).
    pub head_starts_per_step: u32,
    /// Fresh move orders given a head start per step for each agent in the crowd, as
    /// [`CrowdConfig::path_nodes_per_agent`] grows the search budget; orders are taken in
    /// at the same rate. 0: the fixed [`CrowdConfig::head_starts_per_step`] alone.
    pub head_starts_per_agent: f32,
    /// Wall-clock time the path searches may take per step, milliseconds, on top of the
    /// node budget (0: no time limit). The scheduler stops opening and stepping searches
    /// once it is spent, after at least one round (so paths still come on a slow frame). A
    /// time limit makes which searches finish in a frame depend on the machine's speed, so
    /// runs are no longer repeatable bit for bit; the node budget alone keeps them so.
    pub path_search_time_ms: f32,
    /// Horizontal distance to the goal that counts as there, metres.
    pub arrive_tolerance_m: f32,
    /// Speed below which an agent counts as stopped, m/s.
    pub stop_speed_mps: f32,
    /// Half extents of the box a target or start is snapped to the mesh in.
    pub snap_half_extents: Vec3,
    /// Heuristic weight of path searches (1: optimal A*; above 1: weighted A*, paths at
    /// most that factor longer, far fewer expansions on grid-like levels).
    pub heuristic_weight: f32,
    /// Local avoidance.
    pub avoidance: AvoidanceConfig,
    /// Whether paths may cross off-mesh links (open ones; a closed link is never crossed).
    pub use_links: bool,
    /// Whether the pool's other threads stay awake for the whole step, taking work as soon
    /// as a pass offers it, instead of going to sleep in the serial stretches between
    /// passes and being woken for the next one (which costs tens of microseconds a time on
    /// some machines, several times a step). They look for other pool work meanwhile, so
    /// a host's own parallel jobs still run. Results are the same either way. (A crowd
    /// below [`CrowdConfig::serial_below_agents`] wakes no worker at all.)
    pub keep_workers_awake: bool,
    /// Crowds of fewer agents than this step on the calling thread alone, handing nothing
    /// to the pool (0: always the pool). A small crowd's step takes tens of microseconds:
    /// handing part of it to another thread costs more than the part, and the frame waits
    /// whenever that thread is late to wake or taken by the system. Results are the same
    /// either way.
    pub serial_below_agents: usize,
    /// Corridors the shared corridor cache keeps before it drops those no agent holds.
    pub corridor_cache_capacity: usize,
    /// What a blocked agent's order does (spec 001: Blocked is a status with a policy).
    pub blocked_policy: BlockedPolicy,
    /// How far a re-plan under [`BlockedPolicy::Replan`] goes round crowds: each metre
    /// through a polygon costs its area cost times `1 + weight * crowding`, the crowding
    /// being the share of the polygon's floor the bodies on it cover (up to 2; see
    /// `congestion.rs`). 0: the re-plan takes the shortest way from where the agent
    /// stands, as a first plan does. Higher weights send agents further round a jam where
    /// another way exists (at 4, a corridor half covered costs three times its length);
    /// where none does, the re-plan finds the same way and the agent walks on. The walker
    /// keeps walking its corridor while the re-plan is searched, and the re-plan's
    /// corridor is not cached (it is one agent's view of one moment).
    pub replan_congestion_weight: f32,
    /// Whether the crowd writes the ordered log (`log.rs`): every accepted command, every
    /// result at the commit point with its decision, every outcome, drained by the host
    /// with [`Crowd::drain_log`](crate::crowd::Crowd::drain_log) and replayable with
    /// [`Replay`](crate::crowd::runtime::replay::Replay). Off by default: a logged result holds its corridor
    /// (shared, not copied) until the host drains it.
    pub ordered_log: bool,
    /// Holds (started or reserved beside a move) the crowd admits at once: admission
    /// reserves the capacity, and a hold past it is refused (`CrowdError::TableFull`)
    /// rather than admitted and left unable to keep its pose. Unlimited by default.
    pub holds_max: usize,
}

/// What a blocked agent's order does ([`CrowdEvent::Blocked`](crate::crowd::CrowdEvent::Blocked)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BlockedPolicy {
    /// Keep the order and wait: the crowd's own escalation (a walker held long enough
    /// passes through the agents in its way, [`AvoidanceConfig::pass_through_after_s`](crate::crowd::AvoidanceConfig::pass_through_after_s))
    /// works on it. What games with crowds of peers usually want.
    Wait,
    /// Compute the route again from where the agent stands, once per stall, as a new
    /// query (a local way round a jam or an obstacle the corridor ran into), weighing
    /// crowded polygons by [`CrowdConfig::replan_congestion_weight`]; a walker keeps
    /// walking meanwhile.
    Replan,
    /// Fail the order once the agent has gone this long without progress along its
    /// corridor (however much it is jostled meanwhile; at least the half second that makes
    /// an agent blocked; a walker passing through others counts as held until its pass is
    /// over, [`AvoidanceConfig::pass_through_widths`](crate::crowd::AvoidanceConfig::pass_through_widths)):
    /// the agent brakes as after a cancel and the order ends
    /// `Failure(FailureCondition::Blocked(by))`. For agents that must not queue forever
    /// (a guard sent to an alarm takes another task).
    FailAfter {
        /// Seconds without progress.
        seconds: f32,
    },
}

impl Default for CrowdConfig {
    fn default() -> Self {
        CrowdConfig {
            path_nodes_per_step: FrameBudget::DEFAULT.node_expansions,
            // A path across the 100,000-agent city takes about 140 expansions (weighted
            // A*): 2.5 an agent a step answers a mass order within about 60 steps (2 s at
            // 30 Hz) at any crowd size; below 800 agents the fixed 2,048 rules.
            path_nodes_per_agent: 2.5,
            head_starts_per_step: FrameBudget::DEFAULT.head_starts,
            // Every agent of a mass order walking within 8 steps; below 16,384 agents the
            // fixed 2,048 rules.
            head_starts_per_agent: 0.125,
            path_search_time_ms: FrameBudget::DEFAULT.search_time_ms,
            arrive_tolerance_m: 0.25,
            stop_speed_mps: 0.05,
            snap_half_extents: Vec3::new(2.0, 4.0, 2.0),
            // Weighted A*: on grid-like levels far fewer expansions than optimal A* for
            // paths barely longer.
            heuristic_weight: 1.5,
            avoidance: AvoidanceConfig::default(),
            use_links: true,
            keep_workers_awake: true,
            // About where a second thread starts to pay (2 cores, `stress/serial_threshold.sh`):
            // one thread steps the city's 200 agents 1.4x as fast as the pool and the
            // dungeon's 250 1.1x; the pool steps the city's 400 as fast as one thread and
            // the dungeon's 500 1.2x as fast (docs/benchmarks.md, Flow).
            serial_below_agents: 256,
            corridor_cache_capacity: CorridorCache::DEFAULT_CAPACITY,
            blocked_policy: BlockedPolicy::Wait,
            replan_congestion_weight: 4.0,
            ordered_log: false,
            holds_max: usize::MAX,
        }
    }
}

impl CrowdConfig {
    /// What path finding may spend in one step of a crowd of `agents`.
    pub(crate) fn budget(&self, agents: usize) -> FrameBudget {
        let scaled = |fixed: u32, per_agent: f32| {
            // In f64, rounded up, and saturated: a finite non-negative rate cannot overflow.
            let grown = (f64::from(per_agent) * agents as f64).ceil();
            fixed.max(grown.min(f64::from(u32::MAX)) as u32)
        };
        FrameBudget {
            node_expansions: scaled(self.path_nodes_per_step, self.path_nodes_per_agent),
            head_starts: scaled(self.head_starts_per_step, self.head_starts_per_agent),
            search_time_ms: self.path_search_time_ms,
        }
    }

    /// Node expansions the path searches may spend in one step of a crowd of `agents`
    /// ([`CrowdConfig::path_nodes_per_step`], grown by
    /// [`CrowdConfig::path_nodes_per_agent`]).
    pub fn path_nodes_for(&self, agents: usize) -> u32 {
        self.budget(agents).node_expansions
    }

    /// Fresh orders given a head start (and taken in) in one step of a crowd of `agents`
    /// ([`CrowdConfig::head_starts_per_step`], grown by
    /// [`CrowdConfig::head_starts_per_agent`]).
    pub fn head_starts_for(&self, agents: usize) -> u32 {
        self.budget(agents).head_starts
    }

    /// The field that makes this configuration unusable, with its value, if any.
    pub fn invalid_field(&self) -> Option<(&'static str, f32)> {
        let finite_at_least = |value: f32, low: f32| value.is_finite() && value >= low;
        if self.path_nodes_per_step == 0 {
            return Some(("path_nodes_per_step", 0.0));
        }
        if !finite_at_least(self.path_nodes_per_agent, 0.0) {
            return Some(("path_nodes_per_agent", self.path_nodes_per_agent));
        }
        if !finite_at_least(self.head_starts_per_agent, 0.0) {
            return Some(("head_starts_per_agent", self.head_starts_per_agent));
        }
        if !finite_at_least(self.path_search_time_ms, 0.0) {
            return Some(("path_search_time_ms", self.path_search_time_ms));
        }
        if !finite_at_least(self.arrive_tolerance_m, 0.0) {
            return Some(("arrive_tolerance_m", self.arrive_tolerance_m));
        }
        if !(self.stop_speed_mps.is_finite() && self.stop_speed_mps > 0.0) {
            return Some(("stop_speed_mps", self.stop_speed_mps));
        }
        for (field, value) in [
            ("snap_half_extents.x", self.snap_half_extents.x),
            ("snap_half_extents.y", self.snap_half_extents.y),
            ("snap_half_extents.z", self.snap_half_extents.z),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Some((field, value));
            }
        }
        if !finite_at_least(self.heuristic_weight, 1.0) {
            return Some(("heuristic_weight", self.heuristic_weight));
        }
        if !finite_at_least(self.replan_congestion_weight, 0.0) {
            return Some(("replan_congestion_weight", self.replan_congestion_weight));
        }
        if let BlockedPolicy::FailAfter { seconds } = self.blocked_policy {
            if !finite_at_least(seconds, crate::crowd::walking::passes::STALL_S) {
                return Some(("blocked_policy.FailAfter.seconds", seconds));
            }
        }
        self.avoidance.invalid_field()
    }
}
