//! Flow measures: whether a crowd delivers its agents, not only how fast it steps.
//!
//! Stage: crowd, for the scenario harness, the CLI and the tests; outside the timed step.
//! Inputs: the move orders a host gives (`ordered`), the ends it sees (`finished`), and the
//! crowd after each step (`observe`). Output: a [`FlowReport`]: how efficiently moving
//! agents progress along their corridors, how many frames pass between an order and the
//! agent's first movement toward it, and which agents have made no progress for a while.
//!
//! Progress is measured along the corridor, not as distance walked: each frame an agent
//! following a corridor contributes the component of its net step velocity (vAverage, the
//! controller's displacement less corrections) along the direction to its next corner.
//! An agent jostled sideways in a jam, or pushed back, makes none.
//!
//! Agents are tracked by their id's index, not their slot: the crowd reorders slots.
//! Invariant: the measures read the crowd and change nothing in it.

use crate::crowd::agents::AgentId;
use crate::crowd::agents::AgentStatus;
use crate::crowd::runtime::Crowd;

pub use super::step::feedback::PROGRESS_STEP_M;

/// An order with no progress for this long at the end of a run is stuck, seconds.
pub const STUCK_AFTER_S: f32 = 3.0;

/// What the meter keeps per agent.
#[derive(Clone, Copy, Debug, Default)]
struct AgentFlow {
    /// Whether the agent has an order it has not finished.
    ordered: bool,
    /// The frame (steps the meter had seen) when the order was given.
    ordered_at_frame: u64,
    /// Whether the agent has moved toward its order's goal since the order.
    answered: bool,
    /// Along-corridor progress since the last [`PROGRESS_STEP_M`], metres.
    progress_m: f32,
    /// Seconds since the agent last made [`PROGRESS_STEP_M`] of progress (or was ordered).
    without_progress_s: f32,
}

/// Flow figures of a run (see the module docs for how each is measured).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowReport {
    /// Mean over agents following a corridor and frames of their speed along the corridor
    /// divided by their preferred speed (1: every moving agent walks its path at cruising
    /// speed; 0: nobody gets anywhere).
    pub progress_efficiency: f64,
    /// The 95th percentile of frames from a move order to the agent's first movement
    /// toward it; an order still unanswered at the end counts with the frames it has
    /// waited so far (a lower bound, so a crowd that never starts cannot look quick).
    pub order_to_motion_frames_p95: u64,
    /// Orders given and not answered by any movement at the end.
    pub orders_unanswered: usize,
    /// Agents with an unfinished order whose last [`PROGRESS_STEP_M`] of progress along
    /// the corridor is more than [`STUCK_AFTER_S`] old (waiting for a path counts as no
    /// progress).
    pub stuck_agents: usize,
}

/// Accumulates flow measures over a run; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct FlowMeter {
    agents: Vec<AgentFlow>,
    frames: u64,
    efficiency_sum: f64,
    efficiency_samples: u64,
    /// Frames from order to motion of every answered order.
    answers: Vec<u32>,
}

impl FlowMeter {
    /// A meter that has seen nothing.
    pub fn new() -> FlowMeter {
        FlowMeter::default()
    }

    /// A meter with room for agents numbered below `agents` (a fresh crowd numbers its
    /// agents from 0), so that it does not grow by doubling to up to twice that.
    pub fn with_capacity(agents: usize) -> FlowMeter {
        FlowMeter {
            agents: Vec::with_capacity(agents),
            ..FlowMeter::default()
        }
    }

    fn agent(&mut self, agent: AgentId) -> &mut AgentFlow {
        let index = agent.index() as usize;
        if index >= self.agents.len() {
            self.agents.resize(index + 1, AgentFlow::default());
        }
        &mut self.agents[index]
    }

    /// The host gave `agent` a move order (call after `Crowd::request_move`).
    pub fn ordered(&mut self, agent: AgentId) {
        let frame = self.frames;
        *self.agent(agent) = AgentFlow {
            ordered: true,
            ordered_at_frame: frame,
            ..AgentFlow::default()
        };
    }

    /// Forgets the efficiency samples and answered orders seen so far, keeping what each
    /// agent's order has waited and progressed: a run's measured frames after a warm-up.
    pub fn restart_measures(&mut self) {
        self.efficiency_sum = 0.0;
        self.efficiency_samples = 0;
        self.answers.clear();
    }

    /// The agent's order ended (arrived, partial end, no path, cancelled).
    pub fn finished(&mut self, agent: AgentId) {
        self.agent(agent).ordered = false;
    }

    /// Reads the crowd after a step of `dt_s` seconds.
    pub fn observe(&mut self, crowd: &Crowd, dt_s: f32) {
        self.frames += 1;
        let lanes = crowd.lanes();
        let stop_speed = crowd.config().stop_speed_mps;
        for slot in 0..lanes.len() {
            let status = lanes.status[slot];
            let along = if status == AgentStatus::Moving {
                let to_corner = glam::Vec2::new(
                    lanes.corner_x[slot] - lanes.position_x[slot],
                    lanes.corner_z[slot] - lanes.position_z[slot],
                );
                let average = glam::Vec2::new(lanes.average_x[slot], lanes.average_z[slot]);
                let along = to_corner.try_normalize().map_or(0.0, |d| d.dot(average));
                let preferred = lanes.preferred_speed[slot];
                if preferred > 0.0 {
                    self.efficiency_sum += f64::from(along / preferred);
                    self.efficiency_samples += 1;
                }
                along
            } else {
                0.0
            };
            // Crossing a link is the crowd carrying the agent along its path.
            let moving_on = status == AgentStatus::CrossingLink || along > stop_speed;
            let frames = self.frames;
            let flow = self.agent(lanes.id[slot]);
            if !flow.ordered {
                continue;
            }
            if moving_on && !flow.answered {
                flow.answered = true;
                let waited = frames - flow.ordered_at_frame;
                self.answers.push(u32::try_from(waited).unwrap_or(u32::MAX));
            }
            let flow = self.agent(lanes.id[slot]);
            let gained = if status == AgentStatus::CrossingLink {
                PROGRESS_STEP_M
            } else {
                // Net: a step back must be made up before progress counts again.
                along * dt_s
            };
            flow.progress_m += gained;
            if flow.progress_m >= PROGRESS_STEP_M {
                flow.progress_m = 0.0;
                flow.without_progress_s = 0.0;
            } else {
                flow.without_progress_s += dt_s;
            }
        }
    }

    /// The figures so far, for the agents still in `crowd`.
    pub fn report(&self, crowd: &Crowd) -> FlowReport {
        let lanes = crowd.lanes();
        let mut waits: Vec<u64> = self.answers.iter().map(|&w| u64::from(w)).collect();
        let (mut unanswered, mut stuck) = (0, 0);
        for &agent in &lanes.id {
            let Some(flow) = self.agents.get(agent.index() as usize) else {
                continue;
            };
            if !flow.ordered {
                continue;
            }
            if !flow.answered {
                unanswered += 1;
                waits.push(self.frames - flow.ordered_at_frame);
            }
            stuck += usize::from(flow.without_progress_s > STUCK_AFTER_S);
        }
        waits.sort_unstable();
        let p95 = if waits.is_empty() {
            0
        } else {
            waits[((waits.len() - 1) as f64 * 0.95).round() as usize]
        };
        FlowReport {
            progress_efficiency: if self.efficiency_samples > 0 {
                self.efficiency_sum / self.efficiency_samples as f64
            } else {
                0.0
            },
            order_to_motion_frames_p95: p95,
            orders_unanswered: unanswered,
            stuck_agents: stuck,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crowd::agents::AgentParams;
    use crate::crowd::config::CrowdConfig;
    use crate::crowd::supports::controller::KinematicController;
    use crate::mesh::blob::BakeParams;
    use crate::mesh::{NavMesh, TileData, WalkablePolygon};
    use glam::Vec3;

    fn strip(length_m: f32, width_m: f32) -> NavMesh {
        let polygon = WalkablePolygon::ground(vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(length_m, 0.0, 0.0),
            Vec3::new(length_m, 0.0, width_m),
            Vec3::new(0.0, 0.0, width_m),
        ]);
        let mut mesh = NavMesh::new(BakeParams::default());
        mesh.add_tiles(vec![TileData::from_walkable_polygons(&[polygon]).unwrap()])
            .unwrap();
        mesh
    }

    #[test]
    fn a_lone_walker_answers_at_once_walks_efficiently_and_is_never_stuck() {
        let mesh = strip(30.0, 4.0);
        let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
        let params = AgentParams {
            radius_m: 0.4,
            height_m: 1.8,
            max_speed_mps: 2.0,
            preferred_speed_mps: 1.5,
            max_acceleration_mps2: 8.0,
        };
        let agent = crowd.add_agent(Vec3::new(1.0, 0.0, 2.0), params).unwrap();
        crowd
            .request_move(agent, Vec3::new(25.0, 0.0, 2.0))
            .unwrap();
        let mut meter = FlowMeter::new();
        meter.ordered(agent);
        let mut controller = KinematicController;
        // 4 s: still walking (24 m at 1.5 m/s takes 16 s).
        for _ in 0..120 {
            crowd.step(1.0 / 30.0, &mut controller).unwrap();
            meter.observe(&crowd, 1.0 / 30.0);
        }
        let report = meter.report(&crowd);
        // Path found in the first step, moving by the second (acceleration from rest).
        assert!(report.order_to_motion_frames_p95 <= 2, "{report:?}");
        assert_eq!(report.orders_unanswered, 0);
        assert_eq!(report.stuck_agents, 0);
        // Accelerating at 8 m/s² to 1.5 m/s takes under 0.2 s of the 4 s.
        assert!(
            report.progress_efficiency > 0.95 && report.progress_efficiency < 1.01,
            "{report:?}"
        );
    }

    #[test]
    fn two_walkers_nose_to_nose_in_a_strip_too_narrow_to_pass_are_stuck() {
        // Centre space 0.2 m wide: bodies of radius 0.4 cannot pass, and hard avoidance
        // (no squeeze, no passing through) keeps them from trying.
        let mesh = strip(20.0, 0.2);
        let mut config = CrowdConfig::default();
        config.avoidance.pass_through_after_s = 0.0;
        let mut crowd = Crowd::new(&mesh, config).unwrap();
        let params = AgentParams {
            radius_m: 0.4,
            height_m: 1.8,
            max_speed_mps: 1.5,
            preferred_speed_mps: 1.5,
            max_acceleration_mps2: 8.0,
        };
        let east = crowd.add_agent(Vec3::new(8.0, 0.0, 0.1), params).unwrap();
        let west = crowd.add_agent(Vec3::new(12.0, 0.0, 0.1), params).unwrap();
        crowd.request_move(east, Vec3::new(19.0, 0.0, 0.1)).unwrap();
        crowd.request_move(west, Vec3::new(1.0, 0.0, 0.1)).unwrap();
        let mut meter = FlowMeter::new();
        meter.ordered(east);
        meter.ordered(west);
        let mut controller = KinematicController;
        // Under 3 s since the orders: nobody can be stuck yet.
        for _ in 0..85 {
            crowd.step(1.0 / 30.0, &mut controller).unwrap();
            meter.observe(&crowd, 1.0 / 30.0);
        }
        let report = meter.report(&crowd);
        assert_eq!(report.stuck_agents, 0, "{report:?}");
        assert_eq!(report.order_to_motion_frames_p95, 1, "{report:?}");
        // 12 s in all: nose to nose for most of it. Hard avoidance lets them creep closer
        // ever more slowly (their last 0.5 m of progress takes until about 7 s).
        for _ in 0..275 {
            crowd.step(1.0 / 30.0, &mut controller).unwrap();

            meter.observe(&crowd, 1.0 / 30.0);
        }
        let gap = crowd.position(west).unwrap().x - crowd.position(east).unwrap().x;
        assert!(gap > 0.0 && gap < 1.5, "they passed or parted: {gap} m");
        let report = meter.report(&crowd);
        assert_eq!(report.stuck_agents, 2, "{report:?}");
        // Their efficiency: about a third of the run walking, the rest standing.
        assert!(report.progress_efficiency < 0.6, "{report:?}");
        // An order that ends no longer counts.
        meter.finished(east);
        assert_eq!(meter.report(&crowd).stuck_agents, 1);
    }
}
