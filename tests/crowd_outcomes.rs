//! Every move order ends exactly once, in one of Success, Failure { condition } or
//! Cancelled (spec 001), whatever ends it: arrival, an unreachable or
//! unsnappable target, a cancel, a newer order, a velocity order, the agent's removal, a
//! deadline, a block past the crowd's policy. Blocked is a status with what holds the
//! agent and a policy (wait, re-plan, fail after a time).

mod common;

use common::rooms;
use glam::Vec3;
use waymark::crowd::{
    AgentId, AgentParams, AgentStatus, AvoidanceProfile, BlockedBy, BlockedPolicy, Crowd,
    CrowdConfig, CrowdError, CrowdEvent, FailureCondition, KinematicController, Outcome, RequestId,
};
use waymark::mesh::WalkablePolygon;

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

/// A 12 m x 1 m corridor (hand-built, for bodies of 0.4 m), a walker at its west end and a
/// body that does not negotiate standing in its middle: the walker cannot pass. The crowd
/// never lets a held walker through here, so it stays blocked.
fn blocked_corridor(policy: BlockedPolicy) -> (Crowd, AgentId, RequestId) {
    let strip = WalkablePolygon::ground(vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(12.0, 0.0, 0.0),
        Vec3::new(12.0, 0.0, 1.0),
        Vec3::new(0.0, 0.0, 1.0),
    ]);
    let mesh = common::mesh_of(&[strip], 0.4, 1.5);
    let mut config = CrowdConfig {
        blocked_policy: policy,
        ..CrowdConfig::default()
    };
    // A rigid jam: the walker neither passes through the blocker nor squeezes past it.
    config.avoidance.pass_through_after_s = 0.0;
    config.avoidance.squeeze_fraction = 0.0;
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let wall_of_one = crowd
        .add_avoidance_profile(AvoidanceProfile {
            negotiates: false,
            ..AvoidanceProfile::of(&config.avoidance)
        })
        .unwrap();
    let blocker = crowd.add_agent(Vec3::new(6.0, 0.0, 0.5), PARAMS).unwrap();
    crowd.set_avoidance_profile(blocker, wall_of_one).unwrap();
    let walker = crowd.add_agent(Vec3::new(1.0, 0.0, 0.5), PARAMS).unwrap();
    let order = crowd
        .request_move(walker, Vec3::new(11.0, 0.0, 0.5))
        .unwrap();
    (crowd, walker, order)
}

/// The walker's events of `frames` steps, with their frames.
fn walker_events(crowd: &mut Crowd, walker: AgentId, frames: usize) -> Vec<(u64, CrowdEvent)> {
    let mut seen = Vec::new();
    for _ in 0..frames {
        let frame = crowd.frame();
        for event in crowd.step(DT, &mut KinematicController).unwrap() {
            let agent = match event {
                CrowdEvent::Blocked { agent, .. } | CrowdEvent::OrderEnded { agent, .. } => agent,
                _ => continue,
            };
            if agent == walker {
                seen.push((frame, event));
            }
        }
    }
    seen
}

#[test]
fn h2_a_blocked_walker_waits_by_default_reported_with_what_holds_it() {
    let (mut crowd, walker, order) = blocked_corridor(BlockedPolicy::Wait);
    let seen = walker_events(&mut crowd, walker, 300);
    assert!(!seen.is_empty());
    for (_, event) in &seen {
        assert_eq!(
            *event,
            CrowdEvent::Blocked {
                agent: walker,
                request: order,
                by: BlockedBy::Crowd
            }
        );
    }
    assert!(
        crowd.position(walker).unwrap().x < 6.0,
        "never past the body in its way"
    );
    assert_eq!(
        crowd.request(walker).unwrap(),
        Some(order),
        "the order still stands"
    );
}

#[test]
fn a_walker_held_past_the_policy_s_time_fails_its_order_through_braking() {
    let (mut crowd, walker, order) = blocked_corridor(BlockedPolicy::FailAfter { seconds: 2.0 });
    let seen = walker_events(&mut crowd, walker, 300);
    let ended: Vec<_> = seen
        .iter()
        .filter_map(|&(frame, event)| match event {
            CrowdEvent::OrderEnded { order, outcome, .. } => Some((frame, order, outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(ended.len(), 1, "{seen:?}");
    let (frame, ended_order, outcome) = ended[0];
    assert_eq!(ended_order, order);
    assert_eq!(
        outcome,
        Outcome::Failure(FailureCondition::Blocked(BlockedBy::Crowd))
    );
    // Held from about 1.5 s in (5 m at 3.5 m/s), failed 2 s of no progress later.
    let seconds = frame as f32 * DT;
    assert!((3.0..6.0).contains(&seconds), "failed after {seconds} s");
    assert_eq!(crowd.status(walker).unwrap(), AgentStatus::Idle);
    assert_eq!(crowd.request(walker).unwrap(), None);
    assert!(crowd.position(walker).unwrap().x < 6.0);
}

#[test]
fn a_walker_blocked_under_replan_computes_its_route_again_as_a_new_query() {
    let (mut crowd, walker, order) = blocked_corridor(BlockedPolicy::Replan);
    let mut queries = std::collections::BTreeSet::new();
    let mut blocks = 0;
    for _ in 0..300 {
        for event in crowd.step(DT, &mut KinematicController).unwrap() {
            blocks +=
                usize::from(matches!(event, CrowdEvent::Blocked { agent, .. } if agent == walker));
        }
        queries.insert(crowd.query(walker).unwrap().unwrap().logical);
    }
    assert!(blocks > 0);
    assert_eq!(crowd.request(walker).unwrap(), Some(order));
    assert!(
        queries.len() > blocks,
        "{} queries for {blocks} blocks: a new one for each",
        queries.len()
    );
}

#[test]
fn a_fail_after_time_shorter_than_a_stall_is_refused_by_value() {
    let (mesh, _) = rooms();
    for seconds in [0.1, f32::NAN, f32::INFINITY] {
        let config = CrowdConfig {
            blocked_policy: BlockedPolicy::FailAfter { seconds },
            ..CrowdConfig::default()
        };
        match Crowd::new(&mesh, config) {
            Err(CrowdError::BadConfig { field, value }) => {
                assert_eq!(field, "blocked_policy.FailAfter.seconds");
                assert!(value.to_bits() == seconds.to_bits());
            }
            other => panic!("{seconds}: {:?}", other.err()),
        }
    }
}
