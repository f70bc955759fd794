//! `waymark scenario`: run one of the standard avoidance scenarios (circle swap, two-way
//! corridor, bottleneck) and report its quality and cost.

use std::io::Write;
use std::path::PathBuf;

use crate::CliError;
use crate::common::{
    AvoidanceArg, ContactArgs, RoutingArgs, agents_arg, contact_name, threads_arg, with_threads,
    write_crowd_picture,
};
use crate::trace::{TraceRecorder, trace_line};
use serde_json::json;
use waymark::harness::{Scenario, ScenarioKind, run_scenario};

/// Which scenario.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScenarioArg {
    /// RVO2's circle: agents on a ring walk to the antipode (radius 1.5, step 0.25 s).
    Circle,
    /// Two groups swap the ends of a 6 m corridor.
    Corridor,
    /// A crowd walks from one room to another through a 2 m door.
    Bottleneck,
    /// Two groups swap rooms through a 20 m corridor four bodies wide.
    CorridorSwap,
    /// Two groups swap rooms through one 2 m door, in both directions at once.
    Doorway,
    /// Four groups cross a square to the opposite sides.
    Crossing,
    /// Two lanes over 30 m belts, one with the walkers at 1 m/s, one against them.
    Conveyor,
    /// Two groups swap plazas over a turntable turning at 0.5 rad/s.
    Turntable,
    /// A crowd crosses a river on a ferry shuttling between two docks.
    Ferry,
    /// A crowd rides a lift car between two floors.
    Elevator,
    /// A walker crosses a block of --agents idle agents (their bodies on 30% of its floor)
    /// and another walks to the block's centre; the crossing against the empty room, how
    /// far the idle agents end from where they stood, and their jiggle once settled.
    PartTheCrowd,
    /// --agents walk between two halls through three doors that close one at a time, past
    /// barricades that come and go, the level rebuilt under them: arrivals, re-plans, and
    /// checks that nobody walks through a closed door or keeps a stale corridor.
    Doors,
}

#[derive(clap::Args, Debug)]
pub struct ScenarioCommand {
    /// The scenario.
    #[arg(value_enum)]
    pub scenario: ScenarioArg,
    /// Number of agents.
    #[arg(long, default_value_t = 200, value_parser = agents_arg)]
    pub agents: usize,
    /// Local avoidance between agents.
    #[arg(long, value_enum, default_value_t = AvoidanceArg::On)]
    pub avoidance: AvoidanceArg,
    #[command(flatten)]
    pub contact: ContactArgs,
    #[command(flatten)]
    pub routing: RoutingArgs,
    /// Corridor swap and doorway: run only the first group (half of --agents), the one-way
    /// reference for the two-way completion time.
    #[arg(long)]
    pub one_way: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Draw the mesh and the agents at the end.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Draw the same picture to this PNG file (the caption in its text chunks).
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Write every frame as a replay trace for `waymark view` (JSON lines).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = threads_arg)]
    pub threads: Option<usize>,
}

pub fn run(command: &ScenarioCommand) -> Result<(), CliError> {
    if command.scenario == ScenarioArg::PartTheCrowd {
        return part_the_crowd(command);
    }
    if command.scenario == ScenarioArg::Doors {
        return doors(command);
    }
    let kind = match command.scenario {
        ScenarioArg::Circle => ScenarioKind::Circle,
        ScenarioArg::Corridor => ScenarioKind::Corridor,
        ScenarioArg::Bottleneck => ScenarioKind::Bottleneck,
        ScenarioArg::CorridorSwap => ScenarioKind::CorridorSwap,
        ScenarioArg::Doorway => ScenarioKind::Doorway,
        ScenarioArg::Crossing => ScenarioKind::Crossing,
        ScenarioArg::Conveyor => ScenarioKind::Conveyor,
        ScenarioArg::Turntable => ScenarioKind::Turntable,
        ScenarioArg::Ferry => ScenarioKind::Ferry,
        ScenarioArg::Elevator => ScenarioKind::Elevator,
        ScenarioArg::PartTheCrowd | ScenarioArg::Doors => unreachable!("run apart above"),
    };
    if command.one_way && !matches!(kind, ScenarioKind::CorridorSwap | ScenarioKind::Doorway) {
        return Err(CliError::Usage(format!(
            "--one-way is for corridor-swap and doorway, not {:?}",
            command.scenario
        )));
    }
    let mut scenario = if command.one_way {
        Scenario::one_way(kind, command.agents)
    } else {
        Scenario::new(kind, command.agents)
    }?;
    command.avoidance.apply(&mut scenario.config.avoidance);
    command.contact.apply(&mut scenario.config.avoidance);
    command.routing.apply(&mut scenario.config);
    let name = match command.scenario {
        ScenarioArg::CorridorSwap => "corridor-swap".to_owned(),
        other => format!("{other:?}").to_lowercase(),
    };
    let mut trace = TraceRecorder::new(command.trace.as_deref(), &name, scenario.dt_s);
    let (report, crowd) = with_threads(command.threads, || {
        run_scenario(&scenario, |crowd, events| trace.record(crowd, events))
    })??;
    let trace = trace.finish()?;
    let caption = format!(
        "{name}: {} agents after {} frames",
        report.agents, report.frames
    );
    write_crowd_picture(
        &crowd,
        command.svg.as_deref(),
        command.png.as_deref(),
        &caption,
    )?;
    let mut out = std::io::stdout().lock();
    if command.json {
        let value = json!({
            "scenario": name,
            "agents": report.agents,
            "avoidance": scenario.config.avoidance.enabled,
            "contact": contact_name(scenario.config.avoidance.inelastic_contact),
            "slow_turn_rad": scenario.config.avoidance.slow_turn_rad,
            "yield_share": scenario.config.avoidance.yield_share,
            "squeeze_fraction": scenario.config.avoidance.squeeze_fraction,
            "radius_m": report.radius_m,
            "dt": report.dt_s,
            "frames": report.frames,
            "simulated_s": report.frames as f32 * report.dt_s,
            "straight_line_s": scenario.straight_line_s,
            "completion_s": report.completion_s,
            "completion_ratio": report.completion_ratio,
            "unarrived_agents": report.unarrived_agents,
            "stuck_agents": report.stuck_agents,
            "arrivals": report.arrivals,
            "partial_arrivals": report.partial_arrivals,
            "arrivals_per_agent_minute": report.arrivals as f64
                / report.agents.max(1) as f64
                / (f64::from(report.frames as f32 * report.dt_s) / 60.0).max(f64::MIN_POSITIVE),
            "progress_efficiency": report.flow.progress_efficiency,
            "steady_arrivals_per_s": report.steady_arrivals_per_s,
            "order_to_motion_frames_p95": report.flow.order_to_motion_frames_p95,
            "overlap_pairs_per_frame": report.overlap_pairs_per_frame,
            "overlap_pairs_passing_per_frame": report.overlap_pairs_passing_per_frame,
            "max_overlap_m": report.max_overlap_m,
            "off_mesh_agents": report.off_mesh_agents,
            "ms_per_frame_median": report.ms_per_frame_median,
            "agents_per_ms": report.agents_per_ms,
            "avoid_ms_median": report.avoid_ms_median,
            "threads": command.threads.unwrap_or_else(rayon::current_num_threads),
        });
        // Past what one `json!` can expand: added after.
        let mut value = value;
        value["fell_off_support"] = json!(report.fell_off_support);
        value["stop_error_m"] = json!(report.stop_error_m);
        value["walk_time_error"] = json!(report.walk_time_error);
        if let Some((bytes, frames)) = trace {
            value["trace"] = json!({ "bytes": bytes, "frames": frames });
        }
        writeln!(out, "{value}")?;
        return Ok(());
    }
    writeln!(
        out,
        "{name}: {} agents (radius {} m), {} frames of {} s",
        report.agents, report.radius_m, report.frames, report.dt_s
    )?;
    match report.completion_s {
        Some(seconds) => writeln!(
            out,
            "everyone arrived after {seconds:.1} s ({:.2}x the straight line, {:.1} s)",
            report.completion_ratio.unwrap_or(0.0),
            scenario.straight_line_s
        )?,
        None => writeln!(
            out,
            "{} agents never arrived (limit {:.0} s), {} of them stuck",
            report.unarrived_agents, scenario.time_limit_s, report.stuck_agents
        )?,
    }
    writeln!(
        out,
        "progress efficiency {:.2}, order to motion p95 {} frames",
        report.flow.progress_efficiency, report.flow.order_to_motion_frames_p95
    )?;
    writeln!(
        out,
        "{:.2} overlapping pairs per frame, deepest {:.3} m; off the mesh: {}",
        report.overlap_pairs_per_frame, report.max_overlap_m, report.off_mesh_agents
    )?;
    writeln!(
        out,
        "step: median {:.3} ms ({:.0} agents/ms), avoid {:.3} ms",
        report.ms_per_frame_median, report.agents_per_ms, report.avoid_ms_median
    )?;
    if let (Some((bytes, frames)), Some(path)) = (trace, &command.trace) {
        writeln!(out, "{}", trace_line(path, bytes, frames))?;
    }
    Ok(())
}

/// `waymark scenario part-the-crowd`: its own report (`waymark::harness::run_part_the_crowd`).
fn doors(command: &ScenarioCommand) -> Result<(), CliError> {
    if command.one_way || command.svg.is_some() || command.png.is_some() || command.trace.is_some()
    {
        return Err(CliError::Usage(
            "doors takes none of --one-way, --svg, --png and --trace".to_owned(),
        ));
    }
    let mut config = waymark::crowd::CrowdConfig::default();
    command.avoidance.apply(&mut config.avoidance);
    command.contact.apply(&mut config.avoidance);
    command.routing.apply(&mut config);
    let report = with_threads(command.threads, || {
        waymark::harness::run_doors(command.agents, config)
    })??;
    let mut out = std::io::stdout().lock();
    if command.json {
        let value = json!({
            "scenario": "doors",
            "agents": report.agents,
            "frames": report.frames,
            "duration_s": waymark::harness::DURATION_S,
            "arrivals": report.arrivals,
            "agents_arrived": report.agents_arrived,
            "route_invalidations": report.route_invalidations,
            "level_changes": report.level_changes,
            "tiles_rebuilt": report.tiles_rebuilt,
            "rebuild_frame_max_ms": report.rebuild_frame_max_ms,
            "through_closed_doors": report.through_closed_doors,
            "stale_corridors": report.stale_corridors,
            "lost_agents": report.lost_agents,
            "threads": command.threads.unwrap_or_else(rayon::current_num_threads),
        });
        writeln!(out, "{value}")?;
        return Ok(());
    }
    writeln!(
        out,
        "doors: {} agents for {} s, a door closing every {} s, a barricade every {} s",
        report.agents,
        waymark::harness::DURATION_S,
        waymark::harness::DOOR_PERIOD_S,
        waymark::harness::BARRICADE_PERIOD_S
    )?;
    writeln!(
        out,
        "{} arrivals ({} agents arrived at least once), {} route invalidations",
        report.arrivals, report.agents_arrived, report.route_invalidations
    )?;
    writeln!(
        out,
        "{} level changes, {} tiles rebuilt, slowest frame's rebuild {:.3} ms",
        report.level_changes, report.tiles_rebuilt, report.rebuild_frame_max_ms
    )?;
    writeln!(
        out,
        "checks (0 asked): {} agent-frames in a closed door, {} stale corridors, {} agents lost",
        report.through_closed_doors, report.stale_corridors, report.lost_agents
    )?;
    Ok(())
}

fn part_the_crowd(command: &ScenarioCommand) -> Result<(), CliError> {
    if command.one_way || command.svg.is_some() || command.png.is_some() || command.trace.is_some()
    {
        return Err(CliError::Usage(
            "part-the-crowd takes none of --one-way, --svg, --png and --trace".to_owned(),
        ));
    }
    let mut config = waymark::crowd::CrowdConfig::default();
    command.avoidance.apply(&mut config.avoidance);
    command.contact.apply(&mut config.avoidance);
    command.routing.apply(&mut config);
    let report = with_threads(command.threads, || {
        waymark::harness::run_part_the_crowd(command.agents, config)
    })??;
    let mut out = std::io::stdout().lock();
    if command.json {
        let value = json!({
            "scenario": "part-the-crowd",
            "idle_agents": report.idle_agents,
            "group_coverage": waymark::harness::GROUP_COVERAGE,
            "crossing_s": report.crossing_s,
            "crossing_empty_s": report.crossing_empty_s,
            "crossing_ratio": report.crossing_ratio(),
            "centre_s": report.centre_s,
            "idle_largest_displacement_m": report.idle_largest_displacement_m,
            "idle_median_displacement_m": report.idle_median_displacement_m,
            "idle_quiet_speed_mps": report.idle_quiet_speed_mps,
            "overlap_pairs_per_frame": report.overlap_pairs_per_frame,
            "overlap_depth_p99_m": report.overlap_depth_p99_m,
            "threads": command.threads.unwrap_or_else(rayon::current_num_threads),
        });
        writeln!(out, "{value}")?;
        return Ok(());
    }
    let seconds = |value: Option<f32>| value.map_or("never".to_owned(), |s| format!("{s:.1} s"));
    writeln!(
        out,
        "part-the-crowd: {} idle agents on {:.0}% of their block's floor",
        report.idle_agents,
        waymark::harness::GROUP_COVERAGE * 100.0
    )?;
    writeln!(
        out,
        "crossing: {} (empty room {}); to the centre: {}",
        seconds(report.crossing_s),
        seconds(report.crossing_empty_s),
        seconds(report.centre_s)
    )?;
    writeln!(
        out,
        "idle agents ended {:.3} m (median) and at most {:.3} m from where they stood; \
         fastest with no walker within {} m after {} s: {:.4} m/s",
        report.idle_median_displacement_m,
        report.idle_largest_displacement_m,
        waymark::harness::QUIET_DISTANCE_M,
        waymark::harness::SETTLE_S,
        report.idle_quiet_speed_mps
    )?;
    writeln!(
        out,
        "{:.2} overlapping pairs per frame, p99 depth {:.3} m",
        report.overlap_pairs_per_frame, report.overlap_depth_p99_m
    )?;
    Ok(())
}
