//! What the subcommands share: on/off and contact flags, thread pools, memory readings,
//! SVG output of a crowd, and the bounds every size a flag sets is checked against.

use std::path::Path;

use waymark::crowd::{AvoidanceConfig, BlockedPolicy, Crowd, CrowdConfig};
use waymark::debug::{draw_crowd, picture::Picture};

use crate::CliError;

/// The most agents a crowd run or scenario takes from the command line: the generated
/// levels' own limit (past it their height fields and the crowd's memory grow beyond a
/// desktop's).
pub const AGENTS_MAX: usize = waymark::scene::hills::AGENTS_MAX;
/// The most frames a run steps (over nine hours at 30 Hz).
pub const FRAMES_MAX: usize = 1_000_000;
/// The most worker threads.
pub const THREADS_MAX: usize = 1024;
/// The most node expansions or head starts a frame's budget gives.
pub const BUDGET_MAX: u32 = 100_000_000;

/// Parses a count from 1 (or 0 where `allow_zero`) to `max`, refusing past the limit at
/// once with the value and the limit named.
pub fn bounded(text: &str, min: u64, max: u64) -> Result<u64, String> {
    let value: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number"))?;
    if value < min || value > max {
        return Err(format!("{value} is outside {min}..={max}"));
    }
    Ok(value)
}

/// `--agents`: 1 to [`AGENTS_MAX`].
pub fn agents_arg(text: &str) -> Result<usize, String> {
    bounded(text, 1, AGENTS_MAX as u64).map(|value| value as usize)
}

/// `--frames`, `--warm-up-frames`: 0 to [`FRAMES_MAX`].
pub fn frames_arg(text: &str) -> Result<usize, String> {
    bounded(text, 0, FRAMES_MAX as u64).map(|value| value as usize)
}

/// `--threads`: 1 to [`THREADS_MAX`].
pub fn threads_arg(text: &str) -> Result<usize, String> {
    bounded(text, 1, THREADS_MAX as u64).map(|value| value as usize)
}

/// `--node-budget`: 1 to [`BUDGET_MAX`].
pub fn node_budget_arg(text: &str) -> Result<u32, String> {
    bounded(text, 1, u64::from(BUDGET_MAX)).map(|value| value as u32)
}

/// `--head-starts`: 0 to [`BUDGET_MAX`].
pub fn head_starts_arg(text: &str) -> Result<u32, String> {
    bounded(text, 0, u64::from(BUDGET_MAX)).map(|value| value as u32)
}

/// `--node-budget-per-agent`, `--head-starts-per-agent`: a finite rate of at least 0.
pub fn per_agent_arg(text: &str) -> Result<f32, String> {
    let value: f32 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(format!("{text} is not a finite rate of at least 0"))
    }
}

/// Local avoidance between agents (`--avoidance`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AvoidanceArg {
    /// waymark's avoidance (ORCA half-planes and the escalation of held walkers).
    #[default]
    On,
    /// None: agents walk through each other.
    Off,
}

impl AvoidanceArg {
    /// Sets `avoidance` by this choice.
    pub fn apply(self, avoidance: &mut AvoidanceConfig) {
        avoidance.enabled = self == AvoidanceArg::On;
    }
}

/// How bodies in contact behave (`AvoidanceConfig::inelastic_contact`).
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
    /// How far a walker passing through walks before it weighs the others again, in its
    /// body widths (0: until it makes progress again).
    #[arg(long, value_name = "WIDTHS")]
    pub pass_through_widths: Option<f32>,
    /// Seconds without progress over which a held walker's squeeze grows to the full
    /// fraction.
    #[arg(long, value_name = "S")]
    pub squeeze_ramp: Option<f32>,
    /// Seconds a walker is held (without progress, or stalled) before its squeeze begins.
    #[arg(long, value_name = "S")]
    pub squeeze_after: Option<f32>,
    /// Collision time horizon between agents, seconds.
    #[arg(long, value_name = "S")]
    pub time_horizon: Option<f32>,
    /// How far ahead the mesh's boundary is respected, seconds: a walker closes on an edge
    /// no faster than its distance over this.
    #[arg(long, value_name = "S")]
    pub wall_time_horizon: Option<f32>,
}

/// The name the reports give a contact: `slide` or `inelastic`.
pub fn contact_name(inelastic: bool) -> &'static str {
    if inelastic { "inelastic" } else { "slide" }
}

impl ContactArgs {
    /// Applies the flags that were given.
    pub fn apply(&self, avoidance: &mut AvoidanceConfig) {
        if let Some(contact) = self.contact {
            avoidance.inelastic_contact = contact == ContactArg::Inelastic;
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
        if let Some(widths) = self.pass_through_widths {
            avoidance.pass_through_widths = widths;
        }
        if let Some(seconds) = self.squeeze_ramp {
            avoidance.squeeze_ramp_s = seconds;
        }
        if let Some(seconds) = self.squeeze_after {
            avoidance.squeeze_after_s = seconds;
        }
        if let Some(horizon) = self.time_horizon {
            avoidance.time_horizon_s = horizon;
        }
        if let Some(horizon) = self.wall_time_horizon {
            avoidance.wall_time_horizon_s = horizon;
        }
    }
}

/// What a blocked agent's order does (`CrowdConfig::blocked_policy`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockedPolicyArg {
    /// Keep the order; the crowd's escalation works on the jam.
    Wait,
    /// Plan again from where the agent stands, round crowded polygons, walking meanwhile.
    Replan,
}

/// Routing flags shared by `crowd` and `scenario`; unset flags keep the level's or
/// scenario's own setting.
#[derive(clap::Args, Debug, Default, Clone, Copy)]
pub struct RoutingArgs {
    /// What a blocked agent's order does.
    #[arg(long, value_enum)]
    pub blocked_policy: Option<BlockedPolicyArg>,
    /// How far a re-plan goes round crowds: a metre through a polygon costs
    /// 1 + WEIGHT * (the share of its floor bodies cover) (0: the shortest way).
    #[arg(long, value_name = "WEIGHT")]
    pub replan_congestion_weight: Option<f32>,
}

impl RoutingArgs {
    /// Applies the flags that were given.
    pub fn apply(&self, config: &mut CrowdConfig) {
        if let Some(policy) = self.blocked_policy {
            config.blocked_policy = match policy {
                BlockedPolicyArg::Wait => BlockedPolicy::Wait,
                BlockedPolicyArg::Replan => BlockedPolicy::Replan,
            };
        }
        if let Some(weight) = self.replan_congestion_weight {
            config.replan_congestion_weight = weight;
        }
    }
}

/// Draws the crowd (mesh, corridors, agents, velocities) to an SVG file.
pub fn write_crowd_picture(
    crowd: &Crowd,
    svg: Option<&Path>,
    png: Option<&Path>,
    caption: &str,
) -> Result<(), CliError> {
    if svg.is_none() && png.is_none() {
        return Ok(());
    }
    let mut picture = Picture::new();
    draw_crowd(crowd, &mut picture);
    write_picture(&picture, svg, png, 1200, caption)
}

/// Writes `picture` as an SVG `size_px` wide and as a PNG whose longer side is `size_px`,
/// where asked; the PNG carries `caption` (and the scale bar's length) as text chunks.
pub fn write_picture(
    picture: &Picture,
    svg: Option<&Path>,
    png: Option<&Path>,
    size_px: u32,
    caption: &str,
) -> Result<(), CliError> {
    let write_error = |path: &Path, source| CliError::Write {
        path: path.to_owned(),
        source,
    };
    if let Some(path) = svg {
        std::fs::write(path, picture.to_svg(size_px as f32, caption))
            .map_err(|source| write_error(path, source))?;
    }
    if let Some(path) = png {
        let raster = picture.to_raster(size_px);
        let file = std::fs::File::create(path).map_err(|source| write_error(path, source))?;
        let png_error =
            |error: png::EncodingError| write_error(path, std::io::Error::other(error.to_string()));
        let mut encoder =
            png::Encoder::new(std::io::BufWriter::new(file), raster.width, raster.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder
            .add_text_chunk("Title".to_owned(), caption.to_owned())
            .map_err(png_error)?;
        encoder
            .add_text_chunk(
                "Comment".to_owned(),
                format!("scale bar under the picture: {} m", picture.scale_bar_m()),
            )
            .map_err(png_error)?;
        let mut writer = encoder.write_header().map_err(png_error)?;
        writer.write_image_data(&raster.rgb).map_err(png_error)?;
        writer.finish().map_err(png_error)?;
    }
    Ok(())
}

/// Peak resident memory of this process so far, MiB (Linux; `None` elsewhere).
pub fn peak_rss_mib() -> Option<f64> {
    process_status_mib("VmHWM:")
}

/// Resident memory of this process now, MiB (Linux; `None` elsewhere).
pub fn resident_mib() -> Option<f64> {
    process_status_mib("VmRSS:")
}

/// Hands memory the process has freed back to the system (glibc only; nothing elsewhere).
///
/// Baking frees its heightfields when it returns, but glibc keeps freed blocks in each
/// worker thread's arena, so a process that baked 100,000 agents' city holds ~140 MiB it
/// no longer uses (166 MiB resident after the bake, 27 MiB after this). A game that bakes
/// at load time would do the same before play; one that ships baked tiles never has it.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            /// glibc: releases free memory at the top of the heap and, since 2.8, free
            /// whole pages inside every arena. Returns whether any was released.
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim takes no pointers and only touches the allocator's own state,
        // under its own locks; any thread may call it at any time.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// A kB field of `/proc/self/status`, in MiB.
fn process_status_mib(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Runs `work` on a pool of `threads` workers, or the global pool.
pub fn with_threads<T: Send>(
    threads: Option<usize>,
    work: impl FnOnce() -> T + Send,
) -> Result<T, CliError> {
    match threads {
        None => Ok(work()),
        Some(count) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(count)
                .build()
                .map_err(|error| {
                    CliError::Usage(format!("cannot start {count} threads: {error}"))
                })?;
            Ok(pool.install(work))
        }
    }
}
