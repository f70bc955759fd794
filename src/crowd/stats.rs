//! What one step reports of itself: each pass's time and the step's counts.
//!
//! Stage: crowd, written by the step ([`Crowd::step`](super::Crowd::step)) and read by the
//! host. Invariant: the figures describe the step; nothing in the crowd reads them back.

use crate::crowd::paths::scheduler::ScheduleStats;

/// What one step did: each pass's wall time, and the step's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Interaction orders' targets placed and poses checked (`interaction.rs`).
    pub interactions_ms: f64,
    /// Requests turned into path jobs.
    pub ingest_ms: f64,
    /// Path finding under the budget.
    pub schedule_ms: f64,
    /// Results checked at the commit point.
    pub adopt_ms: f64,
    /// Corridor following.
    pub follow_ms: f64,
    /// Slope limits.
    pub slope_ms: f64,
    /// The neighbour grid and every agent's K nearest (rebuilt alongside schedule, adopt,
    /// follow and slope, so its time overlaps theirs).
    pub neighbours_ms: f64,
    /// Local avoidance (after the neighbour grid).
    pub avoid_ms: f64,
    /// Separation of overlapping agents after the move.
    pub separate_ms: f64,
    /// The controller.
    pub movement_ms: f64,
    /// Feedback, statuses and events.
    pub feedback_ms: f64,
    /// Node expansions the path searches spent.
    pub nodes_expanded: u32,
    /// Path jobs finished (searched or answered from the corridor cache).
    pub paths_finished: u32,
    /// Path jobs answered from the corridor cache.
    pub cache_hits: u32,
    /// Path requests still queued or in flight after the step.
    pub queue_depth: u32,
    /// Frames the oldest waiting path request has waited.
    pub oldest_wait_frames: u64,
    /// Agents without their searched path after the step: queued, searched, or walking a
    /// head start meanwhile.
    pub waiting_for_path: u32,
    /// Results rejected at adoption (stale request or read set).
    pub rejected: u32,
    /// Agents whose funnel ran this step (the others kept their corner).
    pub funnel_runs: u32,
    /// Walkers found off their corridor and joined back to it by a few polygons
    /// ([`reconnect`](crate::query::reconnect)) instead of asking for a new path.
    pub reconnected: u32,
    /// Agents for which avoidance found no admissible velocity (it took the least violating
    /// one): how crowded the step was.
    pub jammed_agents: u32,
}

impl StepStats {
    /// Takes the scheduler's counters of the step.
    pub(crate) fn record_schedule(&mut self, schedule: ScheduleStats) {
        self.nodes_expanded = schedule.nodes_expanded;
        self.paths_finished = schedule.finished;
        self.cache_hits = schedule.cache_hits;
        self.queue_depth = schedule.queue_depth;
        self.oldest_wait_frames = schedule.oldest_wait_frames;
    }

    /// The passes' names, in step order, as [`StepStats::pass_ms`] lists them.
    pub const PASS_NAMES: [&'static str; StepStats::PASSES] = [
        "interactions",
        "ingest",
        "schedule",
        "adopt",
        "follow",
        "slope",
        "neighbours",
        "avoid",
        "move",
        "separate",
        "feedback",
    ];

    /// How many passes are counted.
    pub const PASSES: usize = 11;

    /// Every pass's wall time, milliseconds, in the order of [`StepStats::PASS_NAMES`]
    /// (`neighbours` runs alongside `schedule`, so its time lies inside `schedule`'s too).
    pub fn pass_ms(&self) -> [f64; StepStats::PASSES] {
        [
            self.interactions_ms,
            self.ingest_ms,
            self.schedule_ms,
            self.adopt_ms,
            self.follow_ms,
            self.slope_ms,
            self.neighbours_ms,
            self.avoid_ms,
            self.movement_ms,
            self.separate_ms,
            self.feedback_ms,
        ]
    }
}
