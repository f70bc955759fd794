//! Every move order ends exactly once, in one of Success, Failure { condition } or
//! Cancelled (spec 001, issue 22 item 5), whatever ends it: arrival, an unreachable or
//! unsnappable target, a cancel, a newer order, a velocity order, the agent's removal, a
//! deadline.

mod common;

use common::rooms;
use glam::Vec3;
use waymark::crowd::{
    AgentId, AgentParams, AgentStatus, Crowd, CrowdConfig, CrowdError, CrowdEvent,
    FailureCondition, KinematicController, Outcome, RequestId,
};

const DT: f32 = 1.0 / 30.0;

/// Bodies of the size the rooms are baked for (the guard preset).
const PARAMS: AgentParams = AgentParams {
    radius_m: 0.4,
    height_m: 1.5,
    ..AgentParams::DETOUR_REFERENCE
};

/// The middle of room A, where the agents start; room A's far side; the far island (not
/// connected to the rooms).
const START: Vec3 = Vec3::new(2.0, 0.0, 3.0);
const ACROSS_ROOM: Vec3 = Vec3::new(8.0, 0.0, 3.0);
const ISLAND: Vec3 = Vec3::new(45.0, 0.0, 3.0);

fn crowd_with_agent() -> (Crowd, AgentId) {
    let (mesh, _) = rooms();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd.add_agent(START, PARAMS).unwrap();
    (crowd, agent)
}

/// Every `OrderEnded` of `frames` steps, with the frame it came in.
fn endings(crowd: &mut Crowd, frames: usize) -> Vec<(u64, RequestId, Outcome)> {
    let mut ended = Vec::new();
    for _ in 0..frames {
        let frame = crowd.frame();
        for event in crowd.step(DT, &mut KinematicController).unwrap() {
            if let CrowdEvent::OrderEnded { order, outcome, .. } = event {
                ended.push((frame, order, outcome));
            }
        }
    }
    ended
}

fn outcomes(ended: &[(u64, RequestId, Outcome)]) -> Vec<(RequestId, Outcome)> {
    ended
        .iter()
        .map(|&(_, order, outcome)| (order, outcome))
        .collect()
}

#[test]
fn an_order_that_arrives_ends_once_in_success_with_its_arrival() {
    let (mut crowd, agent) = crowd_with_agent();
    let order = crowd.request_move(agent, ACROSS_ROOM).unwrap();
    let mut arrived_at = None;
    let mut ended = Vec::new();
    for _ in 0..200 {
        let frame = crowd.frame();
        for event in crowd.step(DT, &mut KinematicController).unwrap() {
            match event {
                CrowdEvent::Arrived { .. } => arrived_at = Some(frame),
                CrowdEvent::OrderEnded { order, outcome, .. } => {
                    ended.push((frame, order, outcome))
                }
                _ => {}
            }
        }
    }
    assert_eq!(ended, [(arrived_at.unwrap(), order, Outcome::Success)]);
}

#[test]
fn an_unreachable_target_and_an_unsnappable_one_end_in_their_failures() {
    let (mut crowd, agent) = crowd_with_agent();
    let order = crowd.request_move(agent, ISLAND).unwrap();
    let ended = endings(&mut crowd, 600);
    assert_eq!(
        outcomes(&ended),
        [(order, Outcome::Failure(FailureCondition::Unreachable))]
    );
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::PartialArrived);

    let order = crowd
        .request_move(agent, Vec3::new(500.0, 0.0, 500.0))
        .unwrap();
    assert_eq!(
        outcomes(&endings(&mut crowd, 10)),
        [(order, Outcome::Failure(FailureCondition::NoPath))]
    );
}

#[test]
fn a_cancelled_order_ends_once_with_the_receipt_and_a_cancel_without_one_ends_nothing() {
    let (mut crowd, agent) = crowd_with_agent();
    let order = crowd.request_move(agent, ACROSS_ROOM).unwrap();
    endings(&mut crowd, 15);
    let record = crowd.cancel(agent).unwrap();
    let mut receipt_frame = None;
    let mut ended = Vec::new();
    for _ in 0..60 {
        let frame = crowd.frame();
        for event in crowd.step(DT, &mut KinematicController).unwrap() {
            match event {
                CrowdEvent::Cancelled { record: r, .. } if r == record => {
                    receipt_frame = Some(frame)
                }
                CrowdEvent::OrderEnded { order, outcome, .. } => {
                    ended.push((frame, order, outcome))
                }
                _ => {}
            }
        }
    }
    assert_eq!(ended, [(receipt_frame.unwrap(), order, Outcome::Cancelled)]);

    // An idle agent's cancel: a receipt, no order to end.
    let record = crowd.cancel(agent).unwrap();
    assert_eq!(record.order, None);
    assert!(endings(&mut crowd, 10).is_empty());
}

#[test]
fn a_replaced_order_ends_cancelled_in_the_next_step_and_the_new_one_runs_to_its_own_end() {
    let (mut crowd, agent) = crowd_with_agent();
    let first = crowd.request_move(agent, ISLAND).unwrap();
    endings(&mut crowd, 5);
    let second = crowd.request_move(agent, ACROSS_ROOM).unwrap();
    let frame = crowd.frame();
    let ended = endings(&mut crowd, 200);
    assert_eq!(ended[0], (frame, first, Outcome::Cancelled));
    assert_eq!(outcomes(&ended[1..]), [(second, Outcome::Success)]);

    let third = crowd.request_move(agent, START).unwrap();
    endings(&mut crowd, 5);
    crowd
        .request_velocity(agent, Vec3::new(0.5, 0.0, 0.0))
        .unwrap();
    assert_eq!(
        outcomes(&endings(&mut crowd, 5)),
        [(third, Outcome::Cancelled)]
    );
}

#[test]
fn removing_an_agent_ends_its_order_whether_it_walks_or_brakes() {
    let (mut crowd, agent) = crowd_with_agent();
    let other = crowd.add_agent(Vec3::new(3.0, 0.0, 1.0), PARAMS).unwrap();
    let walking = crowd.request_move(agent, ACROSS_ROOM).unwrap();
    let braking = crowd.request_move(other, ACROSS_ROOM).unwrap();
    endings(&mut crowd, 10);
    crowd.cancel(other).unwrap();
    crowd.remove_agent(agent).unwrap();
    crowd.remove_agent(other).unwrap();
    let mut ended = outcomes(&endings(&mut crowd, 30));
    ended.sort_by_key(|(order, _)| order.logical);
    assert_eq!(
        ended,
        [(walking, Outcome::Cancelled), (braking, Outcome::Cancelled)]
    );
}

#[test]
fn a_deadline_passed_brakes_the_agent_and_fails_the_order_once_it_stands() {
    let (mut crowd, agent) = crowd_with_agent();
    assert_eq!(
        crowd.request_move_by(agent, ISLAND, 0),
        Err(CrowdError::PastDeadline {
            deadline_frame: 0,
            frame: 0
        })
    );
    let order = crowd.request_move_by(agent, ISLAND, 20).unwrap();
    let mut receipts = 0;
    let mut ended = Vec::new();
    let mut refused_while_braking = false;
    for _ in 0..90 {
        let frame = crowd.frame();
        if crowd.status(agent).unwrap() == AgentStatus::Cancelling {
            refused_while_braking |= matches!(
                crowd.request_move(agent, START),
                Err(CrowdError::Cancelling { .. })
            );
        }
        for event in crowd.step(DT, &mut KinematicController).unwrap() {
            match event {
                CrowdEvent::Cancelled { .. } => receipts += 1,
                CrowdEvent::OrderEnded { order, outcome, .. } => {
                    ended.push((frame, order, outcome))
                }
                _ => {}
            }
        }
    }
    assert_eq!(
        outcomes(&ended),
        [(order, Outcome::Failure(FailureCondition::DeadlinePassed))]
    );
    assert!(ended[0].0 >= 20, "ended at frame {}", ended[0].0);
    assert_eq!(receipts, 0, "a deadline is no cancel: no receipt");
    assert!(refused_while_braking, "the mover stays held while braking");
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Idle);
    assert!(crowd.velocity(agent).unwrap().length() < 0.05);
    // The mover is free again.
    let next = crowd.request_move(agent, START).unwrap();
    assert_eq!(
        outcomes(&endings(&mut crowd, 300)),
        [(next, Outcome::Success)]
    );
}

#[test]
fn an_order_that_ends_before_its_deadline_is_not_failed_by_it() {
    let (mut crowd, agent) = crowd_with_agent();
    let order = crowd.request_move_by(agent, ACROSS_ROOM, 400).unwrap();
    assert_eq!(
        outcomes(&endings(&mut crowd, 600)),
        [(order, Outcome::Success)]
    );
}

#[test]
fn a_deadline_is_kept_across_a_save_and_restore() {
    let (mesh, _) = rooms();
    let config = CrowdConfig::default();
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let agent = crowd.add_agent(START, PARAMS).unwrap();
    crowd.request_move_by(agent, ISLAND, 30).unwrap();
    endings(&mut crowd, 10);
    let mut restored = Crowd::restore(&mesh, config, &crowd.save()).unwrap();
    let expected = endings(&mut crowd, 80);
    let found = endings(&mut restored, 80);
    assert_eq!(found, expected);
    assert_eq!(
        expected
            .iter()
            .map(|&(_, _, outcome)| outcome)
            .collect::<Vec<_>>(),
        [Outcome::Failure(FailureCondition::DeadlinePassed)]
    );
}
