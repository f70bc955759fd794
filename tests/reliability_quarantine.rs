//! One agent's fault never stops a frame: a controller that answers some agents' steps
//! with values no body can have gets those agents quarantined (an event naming the field
//! and the value, the agent frozen where it stood and left out of its neighbours'
//! avoidance), while every other agent steps on with finite lanes and `step` returns `Ok`.

mod common;

use glam::Vec3;
use waymark::crowd::{
    AgentId, AgentParams, AgentStatus, Controller, Crowd, CrowdConfig, CrowdEvent,
    KinematicController, StepFeedback, StepRequest,
};
use waymark::geom::limits::{COORDINATE_MAX_M, SPEED_MAX_MPS, within_each};
use waymark::mesh::{Snapshot, WalkablePolygon};
use waymark::query::QueryFilter;

const DT: f32 = 1.0 / 30.0;

const WALKER: AgentParams = AgentParams {
    radius_m: 0.4,
    height_m: 1.8,
    max_speed_mps: 2.0,
    preferred_speed_mps: 1.5,
    max_acceleration_mps2: 8.0,
};

/// The kinematic controller, except that the agents in `faulty` slots (set before each
/// step) get one broken field each: a NaN foot, an infinite velocity, a support moving at
/// 1e30 m/s.
struct Faulty {
    faulty: Vec<(usize, Broken)>,
}

/// The fields `Faulty` breaks.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Broken {
    Foot,
    Velocity,
    SupportVelocity,
}

impl Broken {
    /// The field's name in `StepFeedback`, as the quarantine event reports it.
    fn name(self) -> &'static str {
        match self {
            Broken::Foot => "foot",
            Broken::Velocity => "velocity_world_end",
            Broken::SupportVelocity => "velocity_support_end",
        }
    }
}

impl Controller for Faulty {
    fn step_agents(
        &mut self,
        snapshot: &Snapshot,
        filters: &[QueryFilter],
        requests: &[StepRequest],
        feedback: &mut Vec<StepFeedback>,
    ) {
        KinematicController.step_agents(snapshot, filters, requests, feedback);
        for &(slot, field) in &self.faulty {
            let step = &mut feedback[slot];
            match field {
                Broken::Foot => step.foot = Vec3::new(f32::NAN, 0.0, 1.0),
                Broken::Velocity => step.velocity_world_end = Vec3::new(f32::INFINITY, 0.0, 0.0),
                Broken::SupportVelocity => step.velocity_support_end = Vec3::new(0.0, 0.0, 1e30),
            }
        }
    }
}

fn floor() -> waymark::mesh::NavMesh {
    common::mesh_of(
        &[WalkablePolygon::ground(vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(20.0, 0.0, 0.0),
            Vec3::new(20.0, 0.0, 20.0),
            Vec3::new(0.0, 0.0, 20.0),
        ])],
        0.6,
        2.0,
    )
}

#[test]
fn agents_answered_with_nan_infinite_or_absurd_feedback_are_quarantined_and_the_rest_walk_on() {
    let mut crowd = Crowd::new(&floor(), CrowdConfig::default()).unwrap();
    // Two rows of ten crossing each other: every agent has neighbours.
    let mut agents = Vec::new();
    for index in 0..10 {
        let x = 1.0 + 2.0 * index as f32;
        for (from_z, to_z) in [(2.0, 18.0), (18.0, 2.0)] {
            let agent = crowd.add_agent(Vec3::new(x, 0.0, from_z), WALKER).unwrap();
            crowd.request_move(agent, Vec3::new(x, 0.0, to_z)).unwrap();
            agents.push(agent);
        }
    }
    let broken: [(AgentId, Broken); 3] = [
        (agents[4], Broken::Foot),
        (agents[9], Broken::Velocity),
        (agents[14], Broken::SupportVelocity),
    ];
    let mut controller = Faulty { faulty: Vec::new() };
    let mut quarantined = Vec::new();
    let mut frozen_at = Vec::new();
    for frame in 0..600 {
        // From frame 10 on, every step of the three is broken.
        controller.faulty = if frame >= 10 {
            broken
                .iter()
                .map(|&(agent, field)| (crowd.slot_of(agent).unwrap(), field))
                .collect()
        } else {
            Vec::new()
        };
        let events = crowd
            .step(DT, &mut controller)
            .expect("the frame completes");
        for event in events {
            if let CrowdEvent::Quarantined {
                agent,
                field,
                value_bits,
            } = event
            {
                quarantined.push((agent, field, f32::from_bits(value_bits)));
            }
        }
        if frame == 10 {
            frozen_at = broken
                .iter()
                .map(|&(agent, _)| crowd.position(agent).unwrap())
                .collect();
        }
        for view in crowd.agents() {
            assert!(
                within_each(view.position, COORDINATE_MAX_M)
                    && within_each(view.velocity, SPEED_MAX_MPS),
                "frame {frame}: {view:?}"
            );
        }
    }
    // Each reported once, in the frame of its first bad answer, naming field and value.
    assert_eq!(quarantined.len(), 3, "{quarantined:?}");
    for &(agent, field) in &broken {
        let &(_, reported, value) = quarantined
            .iter()
            .find(|(named, ..)| *named == agent)
            .expect("reported");
        assert_eq!(reported, field.name());
        match field {
            Broken::Foot => assert!(value.is_nan()),
            Broken::Velocity => assert_eq!(value, f32::INFINITY),
            Broken::SupportVelocity => assert_eq!(value, 1e30),
        }
        assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Quarantined);
    }
    // Frozen where they stood, through 590 more frames of broken answers.
    for (&(agent, _), &position) in broken.iter().zip(&frozen_at) {
        assert_eq!(crowd.position(agent).unwrap(), position);
        assert_eq!(crowd.velocity(agent).unwrap(), Vec3::ZERO);
    }
    // Everyone else crossed: at least 12 of the 17 arrived within 0.5 m of their targets.
    let arrived = agents
        .iter()
        .enumerate()
        .filter(|(_, agent)| !broken.iter().any(|(bad, _)| bad == *agent))
        .filter(|&(index, &agent)| {
            let to_z = if index % 2 == 0 { 18.0 } else { 2.0 };
            (crowd.position(agent).unwrap().z - to_z).abs() < 0.5
        })
        .count();
    assert!(arrived >= 12, "{arrived} of 17 arrived");
    // A teleport releases one: it is no longer quarantined and walks its order again.
    controller.faulty.clear();
    let (released, _) = broken[0];
    crowd
        .teleport(released, Vec3::new(10.0, 0.0, 10.0))
        .unwrap();
    assert_ne!(crowd.status(released).unwrap(), AgentStatus::Quarantined);
    for _ in 0..5 {
        crowd.step(DT, &mut controller).unwrap();
    }
    assert_ne!(
        crowd.position(released).unwrap(),
        Vec3::new(10.0, 0.0, 10.0)
    );
}
