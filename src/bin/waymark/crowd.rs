//! `waymark crowd`: move a crowd on a level for a number of frames and report speed, arrivals
//! and waiting; the main job of `cargo run --release`.

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;
use waymark::crowd::{AgentParams, AvoidanceConfig, Crowd, CrowdConfig, StepStats, SupportMotion};
use waymark::harness::{
    AgentPlan, Plans, RunOptions, RunReport, add_lift_doors, median, reachable_plans,
    read_agents_csv, resume_crowd, run_crowd, run_lift, state_hash,
};
use waymark::ids::SupportId;
use waymark::mesh::{LinkId, NavMesh};

use crate::bake_args::{BakeArgs, PresetArg};
use crate::common::{
    AvoidanceArg, ContactArgs, RoutingArgs, agents_arg, contact_name, frames_arg, head_starts_arg,
    node_budget_arg, peak_rss_mib, per_agent_arg, resident_mib, return_freed_memory, threads_arg,
    with_threads, write_crowd_picture,
};
use crate::trace::{TraceRecorder, trace_line};
use crate::{CliError, level};

/// Targets each random agent cycles through.
const RANDOM_TARGETS: usize = 16;

#[derive(clap::Args, Debug, Default)]
pub struct CrowdCommand {
    /// Level: an .obj, .gltf, .glb or .wmnav file, `city` or `hills` (generated, sized from --agents)
    /// or the proving ground (default).
    pub level: Option<PathBuf>,
    /// Number of agents.
    #[arg(long, default_value_t = 200, value_parser = agents_arg)]
    pub agents: usize,
    /// Frames to run.
    #[arg(long, default_value_t = 300, value_parser = frames_arg)]
    pub frames: usize,
    /// Frames to run before those measured (untimed, their events and path waits not counted; agents
    /// still take their next targets): the first frame's burst of fresh path requests
    /// served before timing, for the cost of a crowd that walks.
    #[arg(long, default_value_t = 0, value_name = "F", value_parser = frames_arg)]
    pub warm_up_frames: usize,
    /// Step length, seconds (0.0001 to 1).
    #[arg(long, default_value_t = 1.0 / 30.0)]
    pub dt: f32,
    /// Seed of the random starts and targets (and of the city or hills).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// With `city`: the share of its walkable area (0 to 0.5) whose open squares are moving
    /// floors, belts at 0.5 m/s along +x and -x in turn, so about that share of a crowd
    /// spread over the city stands on moving supports.
    #[arg(long, default_value_t = 0.0, value_name = "SHARE")]
    pub belt_share: f32,
    /// Send every agent to one of N shared targets (exits, rally points) drawn at random
    /// on the floor, agent i to target i mod N, instead of each agent to its own random
    /// targets (0). Not with --agents-csv.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub exits: usize,
    /// Starts and targets from a CSV (`agent,sx,sy,sz,t0x,t0y,t0z,...`), first N rows.
    #[arg(long, value_name = "FILE")]
    pub agents_csv: Option<PathBuf>,
    /// Node expansions per frame for all path searches, at least (grown with the crowd by
    /// --node-budget-per-agent).
    #[arg(long, default_value_t = CrowdConfig::default().path_nodes_per_step, value_parser = node_budget_arg)]
    pub node_budget: u32,
    /// Node expansions per frame for each agent: the budget is the larger of this times
    /// the agents and --node-budget (0: --node-budget alone).
    #[arg(long, default_value_t = CrowdConfig::default().path_nodes_per_agent, value_name = "NODES", value_parser = per_agent_arg)]
    pub node_budget_per_agent: f32,
    /// Fresh move orders given a head start per frame (a few polygons toward the target,
    /// walked while the path is searched; 0: none), at least (grown with the crowd by
    /// --head-starts-per-agent).
    #[arg(long, default_value_t = CrowdConfig::default().head_starts_per_step, value_parser = head_starts_arg)]
    pub head_starts: u32,
    /// Head starts per frame for each agent: the larger of this times the agents and
    /// --head-starts (0: --head-starts alone).
    #[arg(long, default_value_t = CrowdConfig::default().head_starts_per_agent, value_name = "STARTS", value_parser = per_agent_arg)]
    pub head_starts_per_agent: f32,
    /// Wall-clock time path searches may take per frame, ms, on top of the node budget
    /// (0: none). Runs are then no longer repeatable bit for bit.
    #[arg(long, default_value_t = 0.0, value_name = "MS")]
    pub search_time_ms: f32,
    /// Heuristic weight of path searches (1: optimal; 1.5-2: weighted A*, far fewer
    /// expansions on grid-like levels, paths at most that factor longer).
    #[arg(long, default_value_t = CrowdConfig::default().heuristic_weight)]
    pub heuristic_weight: f32,
    /// Local avoidance between agents.
    #[arg(long, value_enum, default_value_t = AvoidanceArg::On)]
    pub avoidance: AvoidanceArg,
    #[command(flatten)]
    pub contact: ContactArgs,
    #[command(flatten)]
    pub routing: RoutingArgs,
    #[command(flatten)]
    pub bake: BakeArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Draw the mesh, corridors, agents and velocities at the last frame.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Draw the same picture to this PNG file (the caption in its text chunks).
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Write every frame (each agent's position, velocity and status, the step's events,
    /// changed corridors) as a replay trace for `waymark view` (JSON lines).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = threads_arg)]
    pub threads: Option<usize>,
    /// Crowds of fewer agents step on the calling thread alone, the pool left alone (0:
    /// always the pool; default: the library's, 256).
    #[arg(long, value_name = "N")]
    pub serial_below_agents: Option<usize>,
    /// Skip the per-frame quality measurement (overlapping pairs, agents off the mesh). It
    /// runs serially between the timed steps, so each step starts with other data in the
    /// caches and the pool's threads asleep; for timing the step alone. The JSON's quality
    /// fields are then null.
    #[arg(long)]
    pub skip_quality: bool,
    /// Run every pass with the code compiled for the build's own target, even where the CPU
    /// allows the x86-64-v3 copy (AVX2, FMA) the step otherwise picks at run time. Same
    /// results either way; for measuring what the wider copy buys.
    #[arg(long)]
    pub baseline_cpu: bool,
    /// Save the run after this many frames (warm-up included) to `--state-out`, then go
    /// on; `--resume` continues it.
    #[arg(long, value_name = "FRAME", value_parser = frames_arg, requires = "state_out")]
    pub save_at: Option<usize>,
    /// Where `--save-at` writes the saved run.
    #[arg(long, value_name = "FILE", requires = "save_at")]
    pub state_out: Option<PathBuf>,
    /// Continue a run saved with `--save-at` for `--frames` more frames: the same level
    /// and flags as when it was saved (other ones are refused).
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
}

impl CrowdCommand {
    /// The main job: 200 agents for 300 frames on the proving ground.
    pub fn default_job() -> CrowdCommand {
        CrowdCommand {
            agents: 200,
            frames: 300,
            dt: 1.0 / 30.0,
            seed: 1,
            node_budget: CrowdConfig::default().path_nodes_per_step,
            node_budget_per_agent: CrowdConfig::default().path_nodes_per_agent,
            head_starts: CrowdConfig::default().head_starts_per_step,
            head_starts_per_agent: CrowdConfig::default().head_starts_per_agent,
            search_time_ms: 0.0,
            heuristic_weight: CrowdConfig::default().heuristic_weight,
            ..CrowdCommand::default()
        }
    }
}

/// The level's navigation mesh, its name, its moving supports' motion (a city's belts,
/// the proving ground's turntable) and its lift with the links of its doors (the proving
/// ground's).
type LoadedLevel = (
    NavMesh,
    String,
    Vec<(SupportId, SupportMotion)>,
    Option<LiftDoors>,
);

/// A lift and its doors' links in the baked mesh, each with whether it opens on the lower
/// floor.
type LiftDoors = (waymark::scene::proving_ground::Lift, Vec<(LinkId, bool)>);

/// The navigation mesh and name of `command`'s level, as a crowd run on it would bake them.
pub fn level_mesh(command: &CrowdCommand) -> Result<(NavMesh, String), CliError> {
    let (mesh, name, _, _) = load_mesh(command)?;
    Ok((mesh, name))
}

fn load_mesh(command: &CrowdCommand) -> Result<LoadedLevel, CliError> {
    let mut config = command.bake.config();
    let is_city = command
        .level
        .as_deref()
        .is_some_and(|path| path.as_os_str() == "city");
    if !(0.0..=0.5).contains(&command.belt_share) || (command.belt_share > 0.0 && !is_city) {
        return Err(CliError::Usage(format!(
            "--belt-share {} takes 0 to 0.5, with the city only",
            command.belt_share
        )));
    }
    let mut belts = Vec::new();
    let mut lift = None;
    let scene = match command.level.as_deref() {
        Some(path) if path.as_os_str() == "city" => {
            let city = waymark::scene::city::city_with_belts(
                command.agents,
                command.seed,
                command.belt_share,
            );
            belts = city
                .belts
                .iter()
                .map(|&(support, velocity)| (support, SupportMotion::belt(velocity)))
                .collect();
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
            let hills = waymark::scene::hills::hills(command.agents, command.seed)?;
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
            belts = loaded.supports;
            lift = loaded.lift;
            Some((loaded.scene, loaded.name))
        }
    };
    match scene {
        Some((scene, name)) => {
            let world = scene.world_triangles()?;
            let baked = waymark::bake::bake(&world, &config)?;
            let mesh = NavMesh::from_file(baked.to_file()).map_err(level::LevelError::from)?;
            let mut mesh = level::require_walkable(mesh, &name)?;
            // The lift's doors: links between each floor and the car's baked frame.
            let lift = match lift {
                Some(lift) => {
                    let doors =
                        add_lift_doors(&mut mesh, &lift).map_err(level::LevelError::from)?;
                    Some((lift, doors))
                }
                None => None,
            };
            Ok((mesh, name, belts, lift))
        }
        None => {
            let path = command.level.as_deref().expect("a level path");
            Ok((
                level::load_navmesh(path, &command.bake)?,
                path.display().to_string(),
                belts,
                None,
            ))
        }
    }
}

/// What a run measured, on which level, and the crowd as the run left it.
pub struct CrowdRun {
    pub level: String,
    pub report: RunReport,
    pub crowd: Crowd,
    /// Agents that stood on a platform (the proving ground's lift car) in some frame.
    pub platform_riders: usize,
    /// The trace's size, bytes, and frames, when one was written.
    pub trace: Option<(u64, u64)>,
}

/// Plans sending `agents` agents from random starts to `exits` shared targets, drawn at
/// random on the floor (agent i to target i mod `exits`); an agent whose start cannot reach
/// its target ends at a partial path.
fn exit_plans(mesh: &NavMesh, agents: usize, exits: usize, seed: u64) -> Vec<AgentPlan> {
    let snapshot = mesh.snapshot();
    let filter = waymark::query::QueryFilter::new();
    let targets = waymark::query::random_points(&snapshot, &filter, exits, seed ^ 0xe817);
    waymark::query::random_points(&snapshot, &filter, agents, seed)
        .into_iter()
        .enumerate()
        .map(|(index, (_, start))| AgentPlan {
            start,
            targets: targets
                .get(index % exits.max(1))
                .map(|&(_, target)| target)
                .into_iter()
                .collect(),
        })
        .collect()
}

pub fn simulate(command: &CrowdCommand) -> Result<CrowdRun, CliError> {
    if !(command.heuristic_weight.is_finite() && command.heuristic_weight >= 1.0) {
        return Err(CliError::Usage(format!(
            "--heuristic-weight {} must be at least 1",
            command.heuristic_weight
        )));
    }
    if !Crowd::STEP_RANGE_S.contains(&command.dt) {
        return Err(CliError::Usage(format!(
            "--dt {} s is outside 0.0001..=1 s",
            command.dt
        )));
    }
    if command.exits > 0 && command.agents_csv.is_some() {
        return Err(CliError::Usage(
            "--exits draws the agents' targets; --agents-csv gives them: use one".into(),
        ));
    }
    let (mesh, level, belts, lift) = load_mesh(command)?;
    // The bake's scratch is freed by now; give it back so resident memory is the runtime's.
    return_freed_memory();
    let plans: Plans = match &command.agents_csv {
        Some(path) => read_agents_csv(path, command.agents)?.into(),
        // Targets where each agent can walk: a random target on a piece of floor the agent
        // cannot reach ends at a partial path, which is no delivery.
        None if command.exits > 0 => {
            exit_plans(&mesh, command.agents, command.exits, command.seed).into()
        }
        None => reachable_plans(&mesh, command.agents, RANDOM_TARGETS, command.seed),
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
    let mut avoidance = AvoidanceConfig::default();
    command.avoidance.apply(&mut avoidance);
    command.contact.apply(&mut avoidance);
    waymark::crowd::internals::use_baseline_only(command.baseline_cpu);
    let mut crowd_config = CrowdConfig {
        path_nodes_per_step: command.node_budget,
        path_nodes_per_agent: command.node_budget_per_agent,
        head_starts_per_step: command.head_starts,
        head_starts_per_agent: command.head_starts_per_agent,
        path_search_time_ms: command.search_time_ms,
        heuristic_weight: command.heuristic_weight,
        avoidance,
        ..CrowdConfig::default()
    };
    command.routing.apply(&mut crowd_config);
    if let Some(agents) = command.serial_below_agents {
        crowd_config.serial_below_agents = agents;
    }
    let options = RunOptions {
        dt_s: command.dt,
        warm_up_frames: command.warm_up_frames,
        frames: command.frames,
        measure_quality: !command.skip_quality,
        retarget: true,
        comparison_rule: true,
        stop_when_all_arrived: false,
        skip_off_mesh_starts: true,
        save_at_frame: command.save_at,
        // What the run depends on beyond the crowd's own settings: a resume on a level
        // baked otherwise (another file, bake flag, seed or agent count of a generated
        // level) or under another belt share would continue a different run.
        settings_tag: waymark::harness::settings_tag(&format!(
            "mesh {:016x}, belt share {:08x}",
            mesh.snapshot().content_fingerprint(),
            command.belt_share.to_bits()
        )),
    };
    if let Some(frame) = command.save_at {
        let total = command.warm_up_frames + command.frames;
        if frame == 0 || frame > total {
            return Err(CliError::Usage(format!(
                "--save-at {frame} is not a frame of this run (1 to {total})"
            )));
        }
    }
    // Agents seen on a platform in any frame (none looked for on a level without one).
    let mut riders = std::collections::HashSet::new();
    let mut trace = TraceRecorder::new(command.trace.as_deref(), &level, command.dt);
    let mut watch_platforms = |crowd: &Crowd, events: &[waymark::crowd::CrowdEvent]| {
        trace.record(crowd, events);
        if crowd.platform_frames().is_empty() {
            return;
        }
        let snapshot = crowd.snapshot();
        for view in crowd.agents() {
            let on_platform = crowd
                .polygon(view.id)
                .ok()
                .and_then(|polygon| snapshot.support_layer(polygon))
                .is_some_and(|layer| {
                    layer > 0
                        && crowd
                            .platform_motion(SupportId(u32::from(layer) - 1))
                            .is_some()
                });
            if on_platform {
                riders.insert(view.id);
            }
        }
    };
    let (crowd, report) = match &command.resume {
        Some(path) => {
            let saved = waymark::geom::limits::read_file(path).map_err(|source| {
                CliError::Usage(format!("cannot read '{}': {source}", path.display()))
            })?;
            resume_crowd(
                &mesh,
                crowd_config,
                &saved,
                &plans,
                &options,
                &mut watch_platforms,
            )
            .map_err(CliError::library)?
        }
        None => {
            let mut crowd = Crowd::new(&mesh, crowd_config)?;
            for &(support, motion) in &belts {
                crowd.set_support_motion(support, motion)?;
            }
            if let Some((lift, doors)) = &lift {
                run_lift(&mut crowd, lift, doors, command.dt)?;
            }
            let report = run_crowd(&mut crowd, &plans, params, &options, &mut watch_platforms)?;
            (crowd, report)
        }
    };
    if let (Some(path), Some(saved)) = (&command.state_out, &report.saved_state) {
        std::fs::write(path, saved).map_err(|source| CliError::Write {
            path: path.clone(),
            source,
        })?;
    }
    if report.skipped_off_mesh > 0 {
        eprintln!(
            "warning: {} agents start off the mesh and were left out",
            report.skipped_off_mesh
        );
    }
    let platform_riders = riders.len();
    let trace = trace.finish()?;
    Ok(CrowdRun {
        level,
        report,
        crowd,
        platform_riders,
        trace,
    })
}

/// Agents standing on a support that moves, at the end of the run.
fn agents_on_moving_supports(crowd: &Crowd) -> usize {
    let snapshot = crowd.snapshot();
    crowd
        .agents()
        .filter(|view| {
            let layer = crowd
                .polygon(view.id)
                .ok()
                .and_then(|polygon| snapshot.support_layer(polygon));
            // Layer 0 is the ground; support n is layer n + 1.
            layer.filter(|&layer| layer > 0).is_some_and(|layer| {
                let support = SupportId(u32::from(layer) - 1);
                !crowd.support_motion(support).is_still()
                    || crowd.platform_motion(support).is_some()
            })
        })
        .count()
}

/// The share of `walkable_m2` the agents' bodies (discs of their radii) cover.
fn coverage(crowd: &Crowd, walkable_m2: f64) -> f64 {
    let covered: f64 = crowd
        .agents()
        .filter_map(|view| crowd.params(view.id).ok())
        .map(|params| std::f64::consts::PI * f64::from(params.radius_m).powi(2))
        .sum();
    if walkable_m2 > 0.0 {
        covered / walkable_m2
    } else {
        0.0
    }
}

/// The step's passes as `pass_ms` names them.
const PASS_NAMES: [&str; StepStats::PASSES] = StepStats::PASS_NAMES;

pub fn run(command: &CrowdCommand) -> Result<(), CliError> {
    let run = with_threads(command.threads, || simulate(command))??;
    let mut frame_ms = run.report.frame_ms.clone();
    let median_ms = median(&mut frame_ms);
    let max_ms = frame_ms.last().copied().unwrap_or(0.0);
    // Which measured frame was the slowest (the first with the burst of fresh requests, or
    // one the machine took the cores from), and how many took over twice the median.
    let slowest_frame = run
        .report
        .frame_ms
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(frame, _)| frame);
    let frames_over_twice_median = run
        .report
        .frame_ms
        .iter()
        .filter(|&&ms| ms > 2.0 * median_ms)
        .count();
    // Of those, the frames in which the process's threads waited at least half a median
    // frame for a CPU: another process held a core (a median frame waits a tenth of that
    // or less), not the step's own work. Unknown (null) off Linux.
    let frames_over_waiting_for_cpu = (run.report.cpu_wait_ms.len() == run.report.frame_ms.len())
        .then(|| {
            run.report
                .frame_ms
                .iter()
                .zip(&run.report.cpu_wait_ms)
                .filter(|&(&ms, &waited)| ms > 2.0 * median_ms && waited >= 0.5 * median_ms)
                .count()
        });
    let mut pass_ms = serde_json::Map::new();
    for (index, name) in PASS_NAMES.iter().enumerate() {
        let mut values: Vec<f64> = run.report.pass_ms.iter().map(|p| p[index]).collect();
        pass_ms.insert((*name).to_owned(), json!(median(&mut values)));
    }
    let agents_per_ms = if median_ms > 0.0 {
        run.report.agents as f64 / median_ms
    } else {
        0.0
    };
    write_crowd_picture(
        &run.crowd,
        command.svg.as_deref(),
        command.png.as_deref(),
        &format!(
            "{}: {} agents after {} frames",
            run.level, run.report.agents, run.report.frames
        ),
    )?;
    let measured_minutes = f64::from(run.report.frames as f32 * command.dt) / 60.0;
    let arrivals_per_agent_minute = if measured_minutes > 0.0 && run.report.agents > 0 {
        run.report.arrivals as f64 / run.report.agents as f64 / measured_minutes
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
            "agents": run.report.agents,
            "frames": run.report.frames,
            "warm_up_frames": command.warm_up_frames,
            "dt": command.dt,
            "threads": command.threads.unwrap_or_else(rayon::current_num_threads),
            "ms_per_frame_median": median_ms,
            "ms_per_frame_max": max_ms,
            "slowest_frame": slowest_frame,
            "frames_over_twice_median": frames_over_twice_median,
            "frames_over_twice_median_waiting_for_cpu": frames_over_waiting_for_cpu,
            "agents_per_ms": agents_per_ms,
            "arrivals": run.report.arrivals,
            "blocked": run.report.blocked,
            "no_path": run.report.no_path,
            "partial_arrivals": run.report.partial_arrivals,
            "waiting_for_path": run.report.last.waiting_for_path,
            "path_wait_frames_p95": run.report.path_wait_frames_p95,
            "nodes_expanded_max_frame": run.report.nodes_expanded_max_frame,
            "node_budget": run.crowd.config().path_nodes_for(run.crowd.len()),
            "corridor_cache_hits": run.crowd.cache().hits,
            "corridor_cache_misses": run.crowd.cache().misses,
            "pass_ms": pass_ms,
            "avoidance": run.crowd.config().avoidance.enabled,
            "contact": contact_name(run.crowd.config().avoidance.inelastic_contact),
            "slow_turn_rad": run.crowd.config().avoidance.slow_turn_rad,
            "yield_share": run.crowd.config().avoidance.yield_share,
            "squeeze_fraction": run.crowd.config().avoidance.squeeze_fraction,
            "overlap_pairs_per_frame": measured(json!(run.report.overlap_pairs_per_frame())),
            "max_overlap_m": measured(json!(run.report.max_overlap_m)),
            "off_mesh_agents": measured(json!(run.report.off_mesh_agents)),
            // Agents cycle through targets: a run has no completion time.
            "completion_s": serde_json::Value::Null,
            "stuck_agents": run.report.flow.stuck_agents,
            "arrivals_per_agent_minute": arrivals_per_agent_minute,
            "progress_efficiency": run.report.flow.progress_efficiency,
            "order_to_motion_frames_p95": run.report.flow.order_to_motion_frames_p95,
            "orders_unanswered": run.report.flow.orders_unanswered,
            "lane_bytes_per_agent": waymark::crowd::internals::AgentLanes::bytes_per_agent(),
            "peak_rss_mib": peak_rss_mib(),
            "resident_mib": resident_mib(),
            "corridors": corridor_report,
        });
        // Past what one `json!` can expand: added after.
        report["head_starts"] = json!(run.crowd.config().head_starts_for(run.crowd.len()));
        // The share of the floor the bodies cover, and how deep the overlapping pairs
        // press (over every overlapping pair in every measured frame).
        let walkable_m2 = run.crowd.snapshot().walkable_area_m2();
        report["walkable_area_m2"] = json!(walkable_m2);
        report["coverage"] = json!(coverage(&run.crowd, walkable_m2));
        let depths = &run.report.overlap_depths;
        report["overlap_depth_p50_m"] = measured(json!(depths.percentile_m(0.50)));
        report["overlap_depth_p99_m"] = measured(json!(depths.percentile_m(0.99)));
        // Of the overlapping pairs, those with a walker passing through in them.
        report["overlap_pairs_passing_per_frame"] =
            measured(json!(run.report.overlap_pairs_passing_per_frame()));
        // How long the oldest request still queued or searched at the end has waited
        // (agents re-planning after a push off their corridor wait a frame or two).
        report["oldest_path_wait_frames"] = json!(run.report.last.oldest_wait_frames);
        report["waiting_for_first_path"] = json!(run.report.waiting_for_first_path);
        report["reconnected"] = json!(run.report.reconnected);
        // How many agents found their corner again, per measured frame: the follow pass's
        // costly branch (the rest walk on to the corner they keep).
        report["funnel_runs_per_frame"] =
            json!(run.report.funnel_runs as f64 / run.report.frames.max(1) as f64);
        report["agents_on_moving_supports"] = json!(agents_on_moving_supports(&run.crowd));
        report["platform_riders"] = json!(run.platform_riders);
        // Each order's one outcome over the measured frames (success matches arrivals).
        let outcomes = run.report.outcomes;
        report["order_outcomes"] = json!({
            "success": outcomes.success,
            "unreachable": outcomes.unreachable,
            "no_path": outcomes.no_path,
            "deadline_passed": outcomes.deadline_passed,
            "blocked": outcomes.blocked,
            "cancelled": outcomes.cancelled,
            "hold_failed": outcomes.hold_failed,
            "interaction_failed": outcomes.interaction_failed,
        });
        // Every agent's position, velocity, status and identities after the last frame, as
        // one number (hexadecimal): two runs compare by it.
        report["state_hash"] = json!(format!("{:016x}", state_hash(&run.crowd)));
        if let Some((bytes, frames)) = run.trace {
            report["trace"] = json!({ "bytes": bytes, "frames": frames });
        }
        writeln!(out, "{report}")?;
        return Ok(());
    }
    writeln!(out, "level: {}", run.level)?;
    if let (Some((bytes, frames)), Some(path)) = (run.trace, &command.trace) {
        writeln!(out, "{}", trace_line(path, bytes, frames))?;
    }
    writeln!(
        out,
        "agents: {}, frames: {} at {:.4} s",
        run.report.agents, run.report.frames, command.dt
    )?;
    writeln!(
        out,
        "frame: median {median_ms:.3} ms, max {max_ms:.3} ms; {agents_per_ms:.0} agents/ms"
    )?;
    writeln!(
        out,
        "complete arrivals: {}; apart from them, partial ends (at the end of a partial path): {}; blocked events: {}, no path: {}, waiting for a path at the end: {}",
        run.report.arrivals,
        run.report.partial_arrivals,
        run.report.blocked,
        run.report.no_path,
        run.report.last.waiting_for_path
    )?;
    let avoidance = match command.avoidance {
        AvoidanceArg::On => "on",
        AvoidanceArg::Off => "off",
    };
    if command.skip_quality {
        writeln!(
            out,
            "avoidance {avoidance}; quality not measured (--skip-quality)"
        )?;
    } else {
        writeln!(
            out,
            "avoidance {avoidance}: {:.1} overlapping pairs per frame ({:.1} with a walker passing through), depth p50 {:.3} m, p99 {:.3} m, deepest {:.3} m; off the mesh: {}",
            run.report.overlap_pairs_per_frame(),
            run.report.overlap_pairs_passing_per_frame(),
            run.report.overlap_depths.percentile_m(0.5),
            run.report.overlap_depths.percentile_m(0.99),
            run.report.max_overlap_m,
            run.report.off_mesh_agents
        )?;
    }
    writeln!(
        out,
        "flow: {:.2} arrivals per agent-minute, progress efficiency {:.2}, order to motion p95 {} frames, {} stuck (no progress for {} s)",
        arrivals_per_agent_minute,
        run.report.flow.progress_efficiency,
        run.report.flow.order_to_motion_frames_p95,
        run.report.flow.stuck_agents,
        waymark::harness::STUCK_AFTER_S
    )?;
    writeln!(
        out,
        "path wait p95: {} frames; most nodes in a frame: {} (budget {})",
        run.report.path_wait_frames_p95,
        run.report.nodes_expanded_max_frame,
        run.crowd.config().path_nodes_for(run.crowd.len())
    )?;
    let riding = agents_on_moving_supports(&run.crowd);
    if riding > 0 || run.platform_riders > 0 {
        writeln!(
            out,
            "moving supports: {riding} agents riding them at the end (the proving ground's turntable and lift car, a city's belts); {} rode a platform (the lift car) during the run",
            run.platform_riders
        )?;
    }
    let passes: Vec<String> = PASS_NAMES
        .iter()
        .map(|name| format!("{name} {:.3}", pass_ms[*name].as_f64().unwrap_or(0.0)))
        .collect();
    writeln!(out, "pass medians (ms): {}", passes.join(", "))?;
    Ok(())
}
