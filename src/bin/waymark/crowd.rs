//! `waymark crowd`: move a crowd on a level for a number of frames and report speed, arrivals
//! and waiting; the main job of `cargo run --release`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use glam::Vec3;
use serde_json::json;
use waymark::crowd::internals::NeighbourGrid;
use waymark::crowd::{
    AgentId, AgentParams, AvoidanceConfig, ContactModel, Crowd, CrowdConfig, CrowdEvent, FlowMeter,
    FlowReport, FrameBudget, KinematicController, StepStats,
};
use waymark::debug::{draw_crowd, svg::SvgDrawer};
use waymark::harness::measure_quality;
use waymark::mesh::NavMesh;
use waymark::query::{QueryFilter, random_points};

use crate::bake::{peak_rss_mib, resident_mib, return_freed_memory, with_threads};
use crate::bake_args::{BakeArgs, PresetArg};
use crate::{CliError, level};

/// Targets each random agent cycles through.
const RANDOM_TARGETS: usize = 16;

/// On or off.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Switch {
    #[default]
    On,
    Off,
}

/// How bodies in contact behave (`AvoidanceConfig::contact`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContactArg {
    /// Positions corrected, velocities kept.
    Slide,
    /// The velocity into a contact is removed too.
    Inelastic,
}

/// Contact handling flags shared by `crowd` and `scenario`; unset flags keep the level's or
/// scenario's own setting.
#[derive(clap::Args, Debug, Default, Clone, Copy)]
pub struct ContactArgs {
    /// What a contact does to the velocities of the agents pushed apart.
    #[arg(long, value_enum)]
    pub contact: Option<ContactArg>,
    /// The most a slowed walker with a neighbour close ahead turns right, radians (0-1.57).
    #[arg(long, value_name = "RAD")]
    pub slow_turn: Option<f32>,
    /// The share of the avoidance between two walkers taken by the lower agent id
    /// (0.5-1; 0.5: equal shares).
    #[arg(long, value_name = "SHARE")]
    pub yield_share: Option<f32>,
    /// The largest fraction of their radii two stalled agents give up to squeeze past each
    /// other (0-1; 0: bodies never give).
    #[arg(long, value_name = "FRACTION")]
    pub squeeze: Option<f32>,
    /// How deep bodies may press into each other, as a fraction of their radius sum
    /// (0-0.5; 0: never); deeper overlap is pushed out at once, shallower eased out.
    #[arg(long, value_name = "FRACTION")]
    pub overlap_allowance: Option<f32>,
    /// The share of an overlap within the allowance eased out per second.
    #[arg(long, value_name = "PER_S")]
    pub contact_relax: Option<f32>,
    /// The angle by which every agent prefers to pass oncoming neighbours on its right,
    /// radians (0-0.79; 0: the geometry alone decides).
    #[arg(long, value_name = "RAD")]
    pub passing_side: Option<f32>,
    /// Seconds without progress after which a held walker passes through the agents in its
    /// way (0: never).
    #[arg(long, value_name = "S")]
    pub pass_through_after: Option<f32>,
    /// Seconds without progress over which a held walker's squeeze grows to the full
    /// fraction.
    #[arg(long, value_name = "S")]
    pub squeeze_ramp: Option<f32>,
    /// Collision time horizon between agents, seconds.
    #[arg(long, value_name = "S")]
    pub time_horizon: Option<f32>,
}

impl ContactArgs {
    /// Applies the flags that were given.
    pub fn apply(&self, avoidance: &mut AvoidanceConfig) {
        if let Some(contact) = self.contact {
            avoidance.contact = match contact {
                ContactArg::Slide => ContactModel::Slide,
                ContactArg::Inelastic => ContactModel::Inelastic,
            };
        }
        if let Some(turn) = self.slow_turn {
            avoidance.slow_turn_rad = turn;
        }
        if let Some(share) = self.yield_share {
            avoidance.yield_share = share;
        }
        if let Some(squeeze) = self.squeeze {
            avoidance.squeeze_fraction = squeeze;
        }
        if let Some(allowance) = self.overlap_allowance {
            avoidance.overlap_allowance = allowance;
        }
        if let Some(relax) = self.contact_relax {
            avoidance.contact_relax_per_s = relax;
        }
        if let Some(angle) = self.passing_side {
            avoidance.passing_side_rad = angle;
        }
        if let Some(seconds) = self.pass_through_after {
            avoidance.pass_through_after_s = seconds;
        }
        if let Some(seconds) = self.squeeze_ramp {
            avoidance.squeeze_ramp_s = seconds;
        }
        if let Some(horizon) = self.time_horizon {
            avoidance.time_horizon_s = horizon;
        }
    }
}

#[derive(clap::Args, Debug, Default)]
pub struct CrowdCommand {
    /// Level: an .obj or .wmnav file, `city` or `hills` (generated, sized from --agents)
    /// or the proving ground (default).
    pub level: Option<PathBuf>,
    /// Number of agents.
    #[arg(long, default_value_t = 200)]
    pub agents: usize,
    /// Frames to run.
    #[arg(long, default_value_t = 300)]
    pub frames: usize,
    /// Frames to run before those measured (untimed, their events and path waits not counted; agents
    /// still take their next targets): the first frame's burst of fresh path requests
    /// served before timing, for the cost of a crowd that walks.
    #[arg(long, default_value_t = 0, value_name = "F")]
    pub warm_up_frames: usize,
    /// Step length, seconds.
    #[arg(long, default_value_t = 1.0 / 30.0)]
    pub dt: f32,
    /// Seed of the random starts and targets (and of the city or hills).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Starts and targets from a CSV (`agent,sx,sy,sz,t0x,t0y,t0z,...`), first N rows.
    #[arg(long, value_name = "FILE")]
    pub agents_csv: Option<PathBuf>,
    /// Node expansions per frame for all path searches.
    #[arg(long, default_value_t = FrameBudget::default().node_expansions)]
    pub node_budget: u32,
    /// Fresh move orders given a head start per frame (a few polygons toward the target,
    /// walked while the path is searched; 0: none).
    #[arg(long, default_value_t = FrameBudget::default().head_starts)]
    pub head_starts: u32,
    /// Wall-clock time path searches may take per frame, ms, on top of the node budget
    /// (0: none). Runs are then no longer repeatable bit for bit.
    #[arg(long, default_value_t = 0.0, value_name = "MS")]
    pub search_time_ms: f32,
    /// Heuristic weight of path searches (1: optimal; 1.5-2: weighted A*, far fewer
    /// expansions on grid-like levels, paths at most that factor longer).
    #[arg(long, default_value_t = CrowdConfig::default().heuristic_weight)]
    pub heuristic_weight: f32,
    /// Local avoidance between agents.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub avoidance: Switch,
    #[command(flatten)]
    pub contact: ContactArgs,
    #[command(flatten)]
    pub bake: BakeArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Draw the mesh, corridors, agents and velocities at the last frame.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Skip the per-frame quality measurement (overlapping pairs, agents off the mesh). It
    /// runs serially between the timed steps, so each step starts with other data in the
    /// caches and the pool's threads asleep; for timing the step alone. The JSON's quality
    /// fields are then null.
    #[arg(long)]
    pub skip_quality: bool,
}

impl CrowdCommand {
    /// The main job: 200 agents for 300 frames on the proving ground.
    pub fn default_job() -> CrowdCommand {
        CrowdCommand {
            agents: 200,
            frames: 300,
            dt: 1.0 / 30.0,
            seed: 1,
            node_budget: FrameBudget::default().node_expansions,
            head_starts: FrameBudget::default().head_starts,
            search_time_ms: 0.0,
            heuristic_weight: CrowdConfig::default().heuristic_weight,
            ..CrowdCommand::default()
        }
    }
}

fn load_mesh(command: &CrowdCommand) -> Result<(NavMesh, String), CliError> {
    let mut config = command.bake.config();
    let scene = match command.level.as_deref() {
        Some(path) if path.as_os_str() == "city" => {
            let city = waymark::scene::city::city(command.agents, command.seed);
            if command.bake.tile_size.is_none() {
                // Large levels bake in tiles (in parallel, and rebuildable one at a time).
                config.tile_size_cells = Some(96);
            }
            Some((
                city.scene,
                format!(
                    "city ({} blocks a side, {:.0} m)",
                    city.blocks_per_side, city.side_m
                ),
            ))
        }
        Some(path) if path.as_os_str() == "hills" => {
            let hills = waymark::scene::hills::hills(command.agents, command.seed)
                .map_err(|error| CliError::Usage(error.to_string()))?;
            if command.bake.tile_size.is_none() {
                config.tile_size_cells = Some(96);
            }
            Some((
                hills.scene,
                format!(
                    "hills ({:.0} m, {} plateaus, {} ridges)",
                    hills.side_m, hills.plateaus, hills.ridges
                ),
            ))
        }
        Some(path) if !path.as_os_str().eq(level::PROVING_GROUND) => None,
        _ => {
            let loaded = level::load(None)?;
            Some((loaded.scene, loaded.name))
        }
    };
    match scene {
        Some((scene, name)) => {
            let world = scene.world_triangles()?;
            let baked = waymark::bake::bake(&world, &config)?;
            Ok((
                NavMesh::from_file(baked.to_file()).map_err(level::LevelError::from)?,
                name,
            ))
        }
        None => {
            let path = command.level.as_deref().expect("a level path");
            Ok((
                level::load_navmesh(path, &command.bake)?,
                path.display().to_string(),
            ))
        }
    }
}

fn read_agents(path: &Path, count: usize) -> Result<Vec<(Vec3, Vec<Vec3>)>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| CliError::Usage(format!("cannot read '{}': {source}", path.display())))?;
    let mut agents = Vec::new();
    for (index, line) in text.lines().enumerate().skip(1).take(count) {
        let values: Result<Vec<f32>, _> = line
            .split(',')
            .skip(1)
            .map(|v| v.trim().parse::<f32>())
            .collect();
        let bad = || {
            CliError::Usage(format!(
                "'{}' line {}: expected agent,sx,sy,sz,t0x,t0y,t0z,..., got '{line}'",
                path.display(),
                index + 1
            ))
        };
        let values = values.map_err(|_| bad())?;
        if values.len() < 6 || values.len() % 3 != 0 || values.iter().any(|v| !v.is_finite()) {
            return Err(bad());
        }
        let points: Vec<Vec3> = values
            .chunks(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]))
            .collect();
        agents.push((points[0], points[1..].to_vec()));
    }
    if agents.len() < count {
        return Err(CliError::Usage(format!(
            "'{}' has {} agents; --agents asks for {count}",
            path.display(),
            agents.len()
        )));
    }
    Ok(agents)
}

fn random_agents(mesh: &NavMesh, count: usize, seed: u64) -> Vec<(Vec3, Vec<Vec3>)> {
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let starts = random_points(&snapshot, &filter, count, seed);
    let targets = random_points(&snapshot, &filter, count * RANDOM_TARGETS, seed ^ 0x5eed);
    starts
        .iter()
        .enumerate()
        .map(|(index, &(_, start))| {
            let own = &targets[index * RANDOM_TARGETS..(index + 1) * RANDOM_TARGETS];
            (start, own.iter().map(|&(_, p)| p).collect())
        })
        .collect()
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// What a run measured.
pub struct CrowdRun {
    pub level: String,
    pub agents: usize,
    pub frames: usize,
    pub frame_ms: Vec<f64>,
    /// Per measured frame, how long the process's threads were ready but waiting for a
    /// CPU (another process had the core), ms; empty where that is not known.
    pub cpu_wait_ms: Vec<f64>,
    pub pass_ms: Vec<[f64; 10]>,
    pub arrivals: usize,
    /// Agents that reached the end of a partial path (their target unreachable).
    pub partial_arrivals: usize,
    pub blocked: usize,
    pub no_path: usize,
    pub last: StepStats,
    pub nodes_expanded_max_frame: u32,
    pub path_wait_frames_p95: u64,
    /// Sum over frames of overlapping pairs, the deepest overlap, the most agents off the
    /// mesh in a frame.
    pub overlap_pairs_total: u64,
    pub max_overlap_m: f32,
    pub off_mesh_agents: u32,
    /// Flow over the measured frames (efficiency, order to motion, stuck at the end).
    pub flow: FlowReport,
    /// Agents still without their first searched path after the last step.
    pub waiting_for_first_path: usize,
    pub crowd: Crowd,
}

/// How long this process's threads have been ready but waiting for a CPU (the kernel's
/// run queue), summed over the threads, ms: the second field of each thread's
/// `/proc/self/task/*/schedstat` (Linux; `None` elsewhere or if any is unreadable).
fn cpu_wait_ms() -> Option<f64> {
    let mut total_ns = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let text = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total_ns += text.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    }
    Some(total_ns as f64 * 1e-6)
}

pub fn simulate(command: &CrowdCommand) -> Result<CrowdRun, CliError> {
    if !(command.heuristic_weight.is_finite() && command.heuristic_weight >= 1.0) {
        return Err(CliError::Usage(format!(
            "--heuristic-weight {} must be at least 1",
            command.heuristic_weight
        )));
    }
    if command.node_budget == 0 {
        return Err(CliError::Usage(
            "--node-budget 0 would never find a path; give at least 1 node per frame".into(),
        ));
    }
    if !(command.dt.is_finite() && command.dt > 0.0) {
        return Err(CliError::Usage(format!(
            "--dt {} must be positive",
            command.dt
        )));
    }
    let (mesh, name) = load_mesh(command)?;
    // The bake's scratch is freed by now; give it back so resident memory is the runtime's.
    return_freed_memory();
    let scenario = match &command.agents_csv {
        Some(path) => read_agents(path, command.agents)?,
        None => random_agents(&mesh, command.agents, command.seed),
    };
    let config = command.bake.config();
    let params = if matches!(command.bake.preset, Some(PresetArg::Recast)) {
        AgentParams::DETOUR_REFERENCE
    } else {
        AgentParams {
            radius_m: config.agent_radius_m,
            height_m: config.agent_height_m,
            ..AgentParams::DETOUR_REFERENCE
        }
    };
    let mut avoidance = AvoidanceConfig {
        enabled: command.avoidance == Switch::On,
        ..AvoidanceConfig::default()
    };
    command.contact.apply(&mut avoidance);
    let mut crowd = Crowd::new(
        &mesh,
        CrowdConfig {
            budget: FrameBudget {
                node_expansions: command.node_budget,
                head_starts: command.head_starts,
                search_time_ms: command.search_time_ms,
            },
            heuristic_weight: command.heuristic_weight,
            avoidance,
            ..CrowdConfig::default()
        },
    )?;
    let mut agents = Vec::with_capacity(scenario.len());
    let mut next = vec![0usize; scenario.len()];
    let mut skipped = 0;
    let mut meter = FlowMeter::new();
    crowd
        .reserve(scenario.len())
        .map_err(|e| CliError::Usage(e.to_string()))?;
    for (start, targets) in &scenario {
        match crowd.add_agent(*start, params) {
            Ok(agent) => {
                if let Some(target) = targets.first() {
                    crowd
                        .request_move(agent, *target)
                        .map_err(|e| CliError::Usage(e.to_string()))?;
                    meter.ordered(agent);
                }
                agents.push(Some(agent));
            }
            Err(_) => {
                skipped += 1;
                agents.push(None);
            }
        }
    }
    if skipped > 0 {
        eprintln!("warning: {skipped} agents start off the mesh and were left out");
    }
    let index_of: std::collections::HashMap<AgentId, usize> = agents
        .iter()
        .enumerate()
        .filter_map(|(index, e)| e.map(|e| (e, index)))
        .collect();
    let mut controller = KinematicController;
    let mut run = CrowdRun {
        level: name,
        agents: crowd.len(),
        frames: command.frames,
        frame_ms: Vec::with_capacity(command.frames),
        cpu_wait_ms: Vec::with_capacity(command.frames),
        pass_ms: Vec::with_capacity(command.frames),
        arrivals: 0,
        partial_arrivals: 0,
        blocked: 0,
        no_path: 0,
        last: StepStats::default(),
        nodes_expanded_max_frame: 0,
        path_wait_frames_p95: 0,
        overlap_pairs_total: 0,
        max_overlap_m: 0.0,
        off_mesh_agents: 0,
        flow: FlowReport::default(),
        waiting_for_first_path: 0,
        crowd,
    };
    let mut quality_grid = NeighbourGrid::default();
    // Path waits answered before the measured frames are left out with their events.
    let mut waits_before = waymark::crowd::PathWaits::default();
    for frame in 0..command.warm_up_frames + command.frames {
        let measured = frame >= command.warm_up_frames;
        if frame == command.warm_up_frames {
            waits_before = run.crowd.path_waits().clone();
            // Flow is measured over the measured frames; orders given in the warm-up
            // still count from when they were given.
            meter.restart_measures();
        }
        let waited_before = cpu_wait_ms();
        let clock = Instant::now();
        let events = run
            .crowd
            .step(command.dt, &mut controller)
            .map_err(|e| CliError::Usage(e.to_string()))?;
        if measured {
            run.frame_ms.push(clock.elapsed().as_secs_f64() * 1e3);
            if let Some(waited) = waited_before.zip(cpu_wait_ms()) {
                run.cpu_wait_ms.push(waited.1 - waited.0);
            }
            let stats = *run.crowd.stats();
            run.pass_ms
                .push(stats.pass_stats().map(|pass| pass.time_ms));
            run.nodes_expanded_max_frame = run
                .nodes_expanded_max_frame
                .max(stats.scheduler.nodes_expanded);
            run.last = stats;
            // Quality is measured outside the timed step.
            if !command.skip_quality {
                let quality = measure_quality(&run.crowd, &mut quality_grid);
                run.overlap_pairs_total += u64::from(quality.overlap_pairs);
                run.max_overlap_m = run.max_overlap_m.max(quality.max_overlap_m);
                run.off_mesh_agents = run.off_mesh_agents.max(quality.off_mesh_agents);
            }
        }
        meter.observe(&run.crowd, command.dt);
        if frame + 1 == command.warm_up_frames + command.frames {
            // After the last step, before arrivals take their next targets: the orders
            // still without their first searched path (the others waiting re-plan after a
            // push off their corridors).
            run.waiting_for_first_path = run
                .crowd
                .agents()
                .filter(|view| run.crowd.awaiting_first_path(view.id).unwrap_or(false))
                .count();
        }
        // Counted only in measured frames; agents take their next target in every frame.
        let count = |counter: &mut usize| *counter += usize::from(measured);
        for event in events {
            let agent = match event {
                CrowdEvent::Arrived { agent, .. } => {
                    count(&mut run.arrivals);
                    agent
                }
                CrowdEvent::PartialArrived { agent, .. } => {
                    count(&mut run.partial_arrivals);
                    agent
                }
                CrowdEvent::NoPath { agent, .. } => {
                    count(&mut run.no_path);
                    agent
                }
                CrowdEvent::Blocked { .. } => {
                    count(&mut run.blocked);
                    continue;
                }
                CrowdEvent::LinkStarted { .. } | CrowdEvent::LinkFinished { .. } => continue,
            };
            // On to the next target.
            let index = index_of[&agent];
            let targets = &scenario[index].1;
            next[index] = (next[index] + 1) % targets.len();
            run.crowd
                .request_move(agent, targets[next[index]])
                .map_err(|e| CliError::Usage(e.to_string()))?;
            meter.ordered(agent);
        }
    }
    run.flow = meter.report(&run.crowd);
    if command.frames == 0 {
        waits_before = run.crowd.path_waits().clone();
    }
    run.path_wait_frames_p95 = run
        .crowd
        .path_waits()
        .since(&waits_before)
        .and_then(|waits| waits.percentile(0.95))
        .map_err(|error| CliError::Usage(error.to_string()))?
        .unwrap_or(0);
    Ok(run)
}

/// The step's passes as `pass_ms` names them.
const PASS_NAMES: [&str; 10] = StepStats::PASS_NAMES;

/// Draws the crowd (mesh, corridors, agents, velocities) to an SVG file.
pub fn write_svg(crowd: &Crowd, path: &Path, caption: &str) -> Result<(), CliError> {
    let mut drawer = SvgDrawer::new();
    draw_crowd(crowd, &mut drawer);
    std::fs::write(path, drawer.finish(1200.0, caption)).map_err(|source| CliError::Write {
        path: path.to_owned(),
        source,
    })
}

pub fn run(command: &CrowdCommand) -> Result<(), CliError> {
    let run = with_threads(command.threads, || simulate(command))??;
    let mut frame_ms = run.frame_ms.clone();
    let median_ms = median(&mut frame_ms);
    let max_ms = frame_ms.last().copied().unwrap_or(0.0);
    // Which measured frame was the slowest (the first with the burst of fresh requests, or
    // one the machine took the cores from), and how many took over twice the median.
    let slowest_frame = run
        .frame_ms
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(frame, _)| frame);
    let frames_over_twice_median = run
        .frame_ms
        .iter()
        .filter(|&&ms| ms > 2.0 * median_ms)
        .count();
    // Of those, the frames in which the process's threads waited at least half a median
    // frame for a CPU: another process held a core (a median frame waits a tenth of that
    // or less), not the step's own work. Unknown (null) off Linux.
    let frames_over_waiting_for_cpu = (run.cpu_wait_ms.len() == run.frame_ms.len()).then(|| {
        run.frame_ms
            .iter()
            .zip(&run.cpu_wait_ms)
            .filter(|&(&ms, &waited)| ms > 2.0 * median_ms && waited >= 0.5 * median_ms)
            .count()
    });
    let mut pass_ms = serde_json::Map::new();
    for (index, name) in PASS_NAMES.iter().enumerate() {
        let mut values: Vec<f64> = run.pass_ms.iter().map(|p| p[index]).collect();
        pass_ms.insert((*name).to_owned(), json!(median(&mut values)));
    }
    let agents_per_ms = if median_ms > 0.0 {
        run.agents as f64 / median_ms
    } else {
        0.0
    };
    if let Some(path) = &command.svg {
        write_svg(
            &run.crowd,
            path,
            &format!(
                "{}: {} agents after {} frames",
                run.level, run.agents, run.frames
            ),
        )?;
    }
    let measured_minutes = f64::from(run.frames as f32 * command.dt) / 60.0;
    let arrivals_per_agent_minute = if measured_minutes > 0.0 && run.agents > 0 {
        run.arrivals as f64 / run.agents as f64 / measured_minutes
    } else {
        0.0
    };
    let mut out = std::io::stdout().lock();
    // A quality figure, or null when it was not measured.
    let measured = |value: serde_json::Value| {
        if command.skip_quality {
            serde_json::Value::Null
        } else {
            value
        }
    };
    if command.json {
        let corridors = run.crowd.corridor_memory();
        let mib = |bytes: usize| (bytes as f64 / (1024.0 * 1024.0) * 10.0).round() / 10.0;
        // Its own object: the report is past what one `json!` can expand.
        let corridor_report = json!({
            "count": corridors.corridors,
            "cached": run.crowd.cache().len(),
            "mib": mib(corridors.total_bytes()),
            "polygons_mib": mib(corridors.polygon_bytes),
            "read_sets_mib": mib(corridors.read_set_bytes),
            "bytes": corridors.total_bytes(),
            "polygon_bytes": corridors.polygon_bytes,
            "read_set_bytes": corridors.read_set_bytes,
            "other_bytes": corridors.other_bytes,
        });
        let mut report = json!({
            "level": run.level,
            "agents": run.agents,
            "frames": run.frames,
            "warm_up_frames": command.warm_up_frames,
            "dt": command.dt,
            "threads": rayon::current_num_threads(),
            "ms_per_frame_median": median_ms,
            "ms_per_frame_max": max_ms,
            "slowest_frame": slowest_frame,
            "frames_over_twice_median": frames_over_twice_median,
            "frames_over_twice_median_waiting_for_cpu": frames_over_waiting_for_cpu,
            "agents_per_ms": agents_per_ms,
            "arrivals": run.arrivals,
            "blocked": run.blocked,
            "no_path": run.no_path,
            "partial_arrivals": run.partial_arrivals,
            "waiting_for_path": run.last.waiting_for_path,
            "path_wait_frames_p95": run.path_wait_frames_p95,
            "nodes_expanded_max_frame": run.nodes_expanded_max_frame,
            "node_budget": command.node_budget,
            "corridor_cache_hits": run.crowd.cache().hits,
            "corridor_cache_misses": run.crowd.cache().misses,
            "pass_ms": pass_ms,
            "avoidance": command.avoidance == Switch::On,
            "contact": format!("{:?}", run.crowd.config().avoidance.contact).to_lowercase(),
            "slow_turn_rad": run.crowd.config().avoidance.slow_turn_rad,
            "yield_share": run.crowd.config().avoidance.yield_share,
            "squeeze_fraction": run.crowd.config().avoidance.squeeze_fraction,
            "overlap_pairs_per_frame": measured(json!(run.overlap_pairs_total as f64 / run.frames.max(1) as f64)),
            "max_overlap_m": measured(json!(run.max_overlap_m)),
            "off_mesh_agents": measured(json!(run.off_mesh_agents)),
            // Agents cycle through targets: a run has no completion time.
            "completion_s": serde_json::Value::Null,
            "stuck_agents": run.flow.stuck_agents,
            "arrivals_per_agent_minute": arrivals_per_agent_minute,
            "progress_efficiency": run.flow.progress_efficiency,
            "order_to_motion_frames_p95": run.flow.order_to_motion_frames_p95,
            "orders_unanswered": run.flow.orders_unanswered,
            "lane_bytes_per_agent": waymark::crowd::internals::AgentLanes::bytes_per_agent(),
            "peak_rss_mib": peak_rss_mib(),
            "resident_mib": resident_mib(),
            "corridors": corridor_report,
        });
        // Past what one `json!` can expand: added after.
        report["head_starts"] = json!(command.head_starts);
        // How long the oldest request still queued or searched at the end has waited
        // (agents re-planning after a push off their corridor wait a frame or two).
        report["oldest_path_wait_frames"] = json!(run.last.scheduler.oldest_wait_frames);
        report["waiting_for_first_path"] = json!(run.waiting_for_first_path);
        writeln!(out, "{report}")?;
        return Ok(());
    }
    writeln!(out, "level: {}", run.level)?;
    writeln!(
        out,
        "agents: {}, frames: {} at {:.4} s",
        run.agents, run.frames, command.dt
    )?;
    writeln!(
        out,
        "frame: median {median_ms:.3} ms, max {max_ms:.3} ms; {agents_per_ms:.0} agents/ms"
    )?;
    writeln!(
        out,
        "arrivals: {}, at the end of a partial path: {}, blocked events: {}, no path: {}, waiting for a path at the end: {}",
        run.arrivals, run.partial_arrivals, run.blocked, run.no_path, run.last.waiting_for_path
    )?;
    let avoidance = if command.avoidance == Switch::On {
        "on"
    } else {
        "off"
    };
    if command.skip_quality {
        writeln!(
            out,
            "avoidance {avoidance}; quality not measured (--skip-quality)"
        )?;
    } else {
        writeln!(
            out,
            "avoidance {avoidance}: {:.1} overlapping pairs per frame, deepest {:.3} m; off the mesh: {}",
            run.overlap_pairs_total as f64 / run.frames.max(1) as f64,
            run.max_overlap_m,
            run.off_mesh_agents
        )?;
    }
    writeln!(
        out,
        "flow: {:.2} arrivals per agent-minute, progress efficiency {:.2}, order to motion p95 {} frames, {} stuck (no progress for {} s)",
        arrivals_per_agent_minute,
        run.flow.progress_efficiency,
        run.flow.order_to_motion_frames_p95,
        run.flow.stuck_agents,
        waymark::crowd::STUCK_AFTER_S
    )?;
    writeln!(
        out,
        "path wait p95: {} frames; most nodes in a frame: {} (budget {})",
        run.path_wait_frames_p95, run.nodes_expanded_max_frame, command.node_budget
    )?;
    let passes: Vec<String> = PASS_NAMES
        .iter()
        .map(|name| format!("{name} {:.3}", pass_ms[*name].as_f64().unwrap_or(0.0)))
        .collect();
    writeln!(out, "pass medians (ms): {}", passes.join(", "))?;
    Ok(())
}
