//! The scenario harness: standard crowd scenarios and the measures of a crowd run.
//!
//! Stage: top, beside [`debug`](crate::debug); it uses the crowd's public API (and its
//! neighbour grid for the overlap measure) and is used by the tests, the benchmarks, the
//! stress runs and the `waymark scenario` command. Nothing in the runtime imports it.
//! Inputs: a scenario kind and an agent count. Outputs: the scenario (mesh, agents,
//! targets) and, run, its [`ScenarioReport`]: overlaps, completion, flow.

mod doors;
mod lift;
mod part_the_crowd;
mod plans;
mod resume;
mod run;
mod scenario;
mod world;

/// The flow of a run (arrivals, partial ends, progress, stuck agents, overlaps), metered
/// from the crowd's events and lanes outside the timed step.
pub use crate::crowd::internals::{FlowMeter, FlowReport, PROGRESS_STEP_M, STUCK_AFTER_S};
pub use doors::{
    BARRICADE_PERIOD_S, DOOR_CENTRES_Z_M, DOOR_PERIOD_S, DURATION_S, DoorsReport, TILES_PER_FRAME,
    run_doors, stale_corridors,
};
pub use lift::{add_lift_doors, lift_shuttle, run_lift};
pub use part_the_crowd::{
    GROUP_COVERAGE, PartTheCrowdReport, QUIET_DISTANCE_M, SETTLE_S, run_part_the_crowd,
};
pub use plans::{AgentsCsvError, parse_agents_csv, random_plans, reachable_plans, read_agents_csv};
pub use resume::{ResumeError, settings_tag};
pub use run::{
    AgentPlan, OutcomeCounts, Plans, RunOptions, RunReport, median, resume_crowd, run_crowd,
    state_hash,
};

pub use scenario::{
    CIRCLE_SLOW_TURN_RAD, DepthHistogram, FrameQuality, Scenario, ScenarioError, ScenarioKind,
    ScenarioReport, measure_quality, run_scenario, scenario_crowd,
};
pub use world::HostWorld;
