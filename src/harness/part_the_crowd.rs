//! The part-the-crowd scenario: how a crowd at rest behaves when walkers come through it.
//!
//! Stage: harness, beside the other scenarios. A block of idle agents stands in the middle
//! of a room, their bodies covering [`GROUP_COVERAGE`] of the block's floor (the gaps
//! between them are narrower than a body). One walker crosses the room straight through
//! the block; a second walks from beside the block to its centre. The same crossing is
//! run in the empty room for reference. Output: a [`PartTheCrowdReport`]: how long the
//! crossing took against the empty room, whether and when the second walker reached the
//! centre, how far the idle agents ended from where they stood, and how fast an idle agent
//! with no walker near it moved once the crowd had settled (the jiggle a crowd at rest
//! must not have).

use glam::{Vec2, Vec3};

use super::run::median;
use super::scenario::{DepthHistogram, ScenarioError, WALKER, measure_quality, mesh_of, rectangle};
use crate::crowd::internals::NeighbourGrid;
use crate::crowd::{AgentId, Crowd, CrowdConfig, CrowdEvent, KinematicController};

/// The share of the block's floor the idle bodies cover.
pub const GROUP_COVERAGE: f32 = 0.3;
/// The room (agent-centre space), metres.
const ROOM_X_M: f32 = 40.0;
const ROOM_Z_M: f32 = 24.0;
/// Step length, seconds.
const DT_S: f32 = 1.0 / 30.0;
/// The run stops here if a walker has not arrived, seconds.
const TIME_LIMIT_S: f32 = 60.0;
/// An idle agent is quiet when no walker is within this distance, metres.
pub const QUIET_DISTANCE_M: f32 = 3.0;
/// Idle agents' speeds count as jiggle from this time on, seconds (the crowd settles the
/// starts first).
pub const SETTLE_S: f32 = 1.0;

/// What a part-the-crowd run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct PartTheCrowdReport {
    /// Idle agents in the block.
    pub idle_agents: usize,
    /// The crossing walker's time through the block, seconds (None: it did not arrive).
    pub crossing_s: Option<f32>,
    /// Its time for the same walk through the empty room, seconds.
    pub crossing_empty_s: Option<f32>,
    /// The second walker's time to the block's centre, seconds (None: it did not arrive).
    pub centre_s: Option<f32>,
    /// The farthest an idle agent ended from where it stood, metres.
    pub idle_largest_displacement_m: f32,
    /// The median over idle agents of how far each ended from where it stood, metres.
    pub idle_median_displacement_m: f32,
    /// The fastest an idle agent moved after [`SETTLE_S`] while no walker was within
    /// [`QUIET_DISTANCE_M`], m/s.
    pub idle_quiet_speed_mps: f32,
    /// Overlapping pairs per frame.
    pub overlap_pairs_per_frame: f64,
    /// The 99th percentile depth of those pairs, metres.
    pub overlap_depth_p99_m: f32,
}

impl PartTheCrowdReport {
    /// The crossing's time over the empty room's.
    pub fn crossing_ratio(&self) -> Option<f32> {
        Some(self.crossing_s? / self.crossing_empty_s?)
    }
}

/// Where the idle agents stand: a square block of `idle` centred in the room, spaced so
/// their bodies cover [`GROUP_COVERAGE`] of it.
fn block(idle: usize) -> Vec<Vec3> {
    let spacing = (std::f32::consts::PI * WALKER.radius_m.powi(2) / GROUP_COVERAGE).sqrt();
    let side = (idle as f32).sqrt().ceil() as usize;
    let centre = Vec2::new(ROOM_X_M * 0.5, ROOM_Z_M * 0.5);
    (0..idle)
        .map(|index| {
            let (column, row) = ((index / side) as f32, (index % side) as f32);
            let offset = (side as f32 - 1.0) * 0.5;
            Vec3::new(
                centre.x + (column - offset) * spacing,
                0.0,
                centre.y + (row - offset) * spacing,
            )
        })
        .collect()
}

/// Runs the scenario with `idle` agents (1 to 400) under `config`.
pub fn run_part_the_crowd(
    idle: usize,
    config: CrowdConfig,
) -> Result<PartTheCrowdReport, ScenarioError> {
    if !(1..=400).contains(&idle) {
        return Err(ScenarioError::PartTheCrowd { idle });
    }
    let empty = walk(0, config)?;
    let crowded = walk(idle, config)?;
    Ok(PartTheCrowdReport {
        crossing_empty_s: empty.crossing_s,
        ..crowded
    })
}

/// One run: `idle` agents in the block, the two walkers.
fn walk(idle: usize, config: CrowdConfig) -> Result<PartTheCrowdReport, ScenarioError> {
    let mesh = mesh_of(&[rectangle(0.0, 0.0, ROOM_X_M, ROOM_Z_M)]);
    let mut crowd = Crowd::new(&mesh, config)?;
    let stood = block(idle);
    let mut idle_ids = Vec::with_capacity(idle);
    for &place in &stood {
        idle_ids.push(crowd.add_agent(place, WALKER)?);
    }
    let middle = ROOM_Z_M * 0.5;
    let centre = Vec3::new(ROOM_X_M * 0.5, 0.0, middle);
    let crosser = crowd.add_agent(Vec3::new(3.0, 0.0, middle), WALKER)?;
    crowd.request_move(crosser, Vec3::new(ROOM_X_M - 3.0, 0.0, middle))?;
    // The second walker only where there is a block to walk into.
    let seeker = if idle > 0 {
        let seeker = crowd.add_agent(Vec3::new(ROOM_X_M * 0.5, 0.0, ROOM_Z_M - 2.0), WALKER)?;
        crowd.request_move(seeker, centre)?;
        Some(seeker)
    } else {
        None
    };
    let walkers: Vec<AgentId> = std::iter::once(crosser).chain(seeker).collect();
    let mut controller = KinematicController;
    let (mut crossing_s, mut centre_s) = (None, None);
    let (mut grid, mut depths) = (NeighbourGrid::default(), DepthHistogram::default());
    let (mut pairs, mut frames, mut quiet_speed) = (0u64, 0usize, 0.0f32);
    while frames < (TIME_LIMIT_S / DT_S) as usize {
        let events = crowd.step(DT_S, &mut controller)?;
        frames += 1;
        let now = frames as f32 * DT_S;
        for event in &events {
            if let CrowdEvent::Arrived { agent, .. } = *event {
                if agent == crosser {
                    crossing_s.get_or_insert(now);
                } else if Some(agent) == seeker {
                    centre_s.get_or_insert(now);
                }
            }
        }
        pairs += u64::from(measure_quality(&crowd, &mut grid, &mut depths).overlap_pairs);
        if now >= SETTLE_S {
            let walking: Vec<Vec3> = walkers
                .iter()
                .filter_map(|&walker| crowd.position(walker).ok())
                .collect();
            for &agent in &idle_ids {
                let here = crowd.position(agent)?;
                let near = walking
                    .iter()
                    .any(|walker| walker.distance(here) < QUIET_DISTANCE_M);
                if !near {
                    quiet_speed = quiet_speed.max(crowd.velocity(agent)?.length());
                }
            }
        }
        if crossing_s.is_some() && (seeker.is_none() || centre_s.is_some()) {
            break;
        }
    }
    // A second after the last arrival, for the crowd to close up behind the walkers.
    for _ in 0..(1.0 / DT_S) as usize {
        crowd.step(DT_S, &mut controller)?;
    }
    let mut displacements = Vec::with_capacity(idle);
    for (&agent, &place) in idle_ids.iter().zip(&stood) {
        displacements.push(f64::from(crowd.position(agent)?.distance(place)));
    }
    let largest = displacements.iter().copied().fold(0.0, f64::max) as f32;
    Ok(PartTheCrowdReport {
        idle_agents: idle,
        crossing_s,
        crossing_empty_s: None,
        centre_s,
        idle_largest_displacement_m: largest,
        idle_median_displacement_m: median(&mut displacements) as f32,
        idle_quiet_speed_mps: quiet_speed,
        overlap_pairs_per_frame: pairs as f64 / frames.max(1) as f64,
        overlap_depth_p99_m: depths.percentile_m(0.99),
    })
}
