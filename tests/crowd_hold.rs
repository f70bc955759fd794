//! Holds in the crowd (spec 001's station keeping): `request_hold` takes
//! the mover; each step judges the stand fact where the agent stands and walks it back;
//! a 3 cm push recovers in 9 steps of 0.1 s with a new generation, as in h4; a hold that
//! cannot recover fails once, through braking; a newer order or a cancel ends it; it is
//! saved, restored and replayed like any order. `request_move_then_hold` hands the mover
//! from an arriving move to its hold in one commit (h5's hold-handoff point restores
//! there), and a move ending otherwise ends its reserved hold unstarted.

use glam::Vec3;
use waymark::crowd::{
    AgentId, AgentParams, AgentStatus, Crowd, CrowdConfig, CrowdError, CrowdEvent, FactChange,
    FailureCondition, HoldFailure, HoldPhase, HoldPolicy, KinematicController, MoverAction,
    Outcome, Replay, RequestId,
};
use waymark::ids::SupportId;
use waymark::mesh::{NavMesh, TileData, WalkablePolygon, blob::BakeParams};

const DT: f32 = 0.1;
const STAND: Vec3 = Vec3::new(5.0, 0.0, 1.0);

/// Spec 001's policy: Kp 2, cap 0.2, a 0.6, deadband 0.005; enter 0.01, exit 0.02, speed
/// 0.01; Recovering for 30 ticks.
const POLICY: HoldPolicy = HoldPolicy::SPEC_EXAMPLE;

fn strip() -> NavMesh {
    let strip = WalkablePolygon::ground(vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(10.0, 0.0, 0.0),
        Vec3::new(10.0, 0.0, 2.0),
        Vec3::new(0.0, 0.0, 2.0),
    ]);
    let mut mesh = NavMesh::new(BakeParams::default());
    mesh.add_tiles(vec![TileData::from_walkable_polygons(&[strip]).unwrap()])
        .unwrap();
    mesh
}

fn config() -> CrowdConfig {
    CrowdConfig {
        ordered_log: true,
        ..CrowdConfig::default()
    }
}

/// A crowd with one agent holding `STAND` under `policy`.
fn holding(mesh: &NavMesh, params: AgentParams, policy: HoldPolicy) -> (Crowd, AgentId, RequestId) {
    let mut crowd = Crowd::new(mesh, config()).unwrap();
    let agent = crowd.add_agent(STAND, params).unwrap();
    let order = crowd.request_hold(agent, STAND, policy).unwrap();
    (crowd, agent, order)
}

/// Steps once; returns the agent's stand-fact changes and ended orders.
fn step(crowd: &mut Crowd) -> Vec<CrowdEvent> {
    crowd
        .step(DT, &mut KinematicController)
        .unwrap()
        .into_iter()
        .filter(|event| {
            matches!(
                event,
                CrowdEvent::StandFact { .. } | CrowdEvent::OrderEnded { .. }
            )
        })
        .collect()
}

/// Steps `count` times; the stand-fact changes and ended orders of them all.
fn steps(crowd: &mut Crowd, count: usize) -> Vec<CrowdEvent> {
    (0..count).flat_map(|_| step(crowd)).collect()
}

/// Cancels the agent's `hold`: the cancel's record names it, and within ten steps the
/// hold's fact ends (if one held) and the hold ends `Cancelled`, and nothing else happens.
fn cancel_ends(crowd: &mut Crowd, agent: AgentId, hold: RequestId) {
    let had_fact = crowd.hold(agent).unwrap().unwrap().fact.is_some();
    assert_eq!(crowd.cancel(agent).unwrap().order, Some(hold));
    let mut expected = Vec::new();
    if had_fact {
        expected.push(fact(agent, hold, FactChange::Released));
    }
    expected.push(CrowdEvent::OrderEnded {
        agent,
        order: hold,
        outcome: Outcome::Cancelled,
    });
    assert_eq!(steps(crowd, 10), expected);
}

fn fact(agent: AgentId, order: RequestId, change: FactChange) -> CrowdEvent {
    CrowdEvent::StandFact {
        agent,
        order,
        change,
    }
}

#[test]
fn h4_in_the_crowd_a_3_cm_push_is_recovered_in_9_steps_with_a_new_generation() {
    let mesh = strip();
    let (mut crowd, agent, order) = holding(&mesh, AgentParams::DETOUR_REFERENCE, POLICY);
    let owner = crowd.owner(agent).unwrap().unwrap();
    assert_eq!(owner.action, MoverAction::Hold(order));
    assert_eq!(
        step(&mut crowd),
        [fact(agent, order, FactChange::Established(1))]
    );
    for _ in 0..5 {
        assert_eq!(step(&mut crowd), []);
    }
    // The push: past the exit threshold, invalidated in the next step, Recovering for 30.
    crowd
        .teleport(agent, STAND + Vec3::new(0.03, 0.0, 0.0))
        .unwrap();
    let pushed_at = crowd.frame();
    assert_eq!(
        step(&mut crowd),
        [fact(
            agent,
            order,
            FactChange::Invalidated {
                deadline_tick: pushed_at + 30
            }
        )]
    );
    // Nine steps of correction, then the fact again, inside the deadband and at rest. (The
    // kinematic controller moves a step at its end velocity, DetourCrowd's convention, so
    // the body ends at 3.4 mm where spec 001's continuous curve ends at 3.886 mm: that
    // curve is checked in tests/spec_001_hold.rs. The step count is the same.)
    for moved in 1..9 {
        assert_eq!(step(&mut crowd), [], "step {moved}");
    }
    let x = crowd.position(agent).unwrap().x - STAND.x;
    assert!((x - 0.0034).abs() < 1e-4, "{x}");
    assert!(x < POLICY.position_deadband_m);
    assert!(crowd.velocity(agent).unwrap().length() < POLICY.speed_enter_mps);
    assert_eq!(
        step(&mut crowd),
        [fact(agent, order, FactChange::Established(2))]
    );
    // The mover never changed hands.
    assert_eq!(crowd.owner(agent).unwrap(), Some(owner));
}

#[test]
fn a_holding_agent_at_rest_stands_still() {
    // Spec 001 h4: once recovered, the world velocity returns to zero and stays there. A
    // hold with nothing around it has no tie for the avoidance to break: no symmetry nudge
    // creeps it off its pose, step after step.
    let mesh = strip();
    let (mut crowd, agent, order) = holding(&mesh, AgentParams::DETOUR_REFERENCE, POLICY);
    assert_eq!(
        step(&mut crowd),
        [fact(agent, order, FactChange::Established(1))]
    );
    crowd
        .teleport(agent, STAND + Vec3::new(0.03, 0.0, 0.0))
        .unwrap();
    steps(&mut crowd, 30);
    let settled = crowd.position(agent).unwrap();
    assert_eq!(steps(&mut crowd, 300), []);
    let after = crowd.position(agent).unwrap();
    assert_eq!(
        after,
        settled,
        "moved {} m in 10 s",
        after.distance(settled)
    );
    assert_eq!(crowd.velocity(agent).unwrap(), Vec3::ZERO);
}

#[test]
fn a_hold_that_cannot_recover_by_its_deadline_fails_once_after_braking() {
    let mesh = strip();
    let policy = HoldPolicy {
        recovery_ticks: 5,
        ..POLICY
    };
    let (mut crowd, agent, order) = holding(&mesh, AgentParams::DETOUR_REFERENCE, policy);
    step(&mut crowd);
    crowd
        .teleport(agent, STAND + Vec3::new(1.0, 0.0, 0.0))
        .unwrap();
    let pushed_at = crowd.frame();
    let mut seen = Vec::new();
    for _ in 0..40 {
        let frame = crowd.frame();
        seen.extend(step(&mut crowd).into_iter().map(|event| (frame, event)));
    }
    let failed = FactChange::Failed(HoldFailure::DeadlinePassed);
    assert_eq!(
        seen[0],
        (
            pushed_at,
            fact(
                agent,
                order,
                FactChange::Invalidated {
                    deadline_tick: pushed_at + 5
                }
            )
        )
    );
    assert_eq!(seen[1], (pushed_at + 5, fact(agent, order, failed)));
    let ended: Vec<_> = seen
        .iter()
        .filter(|(_, event)| matches!(event, CrowdEvent::OrderEnded { .. }))
        .collect();
    assert_eq!(ended.len(), 1, "{seen:?}");
    assert_eq!(
        ended[0].1,
        CrowdEvent::OrderEnded {
            agent,
            order,
            outcome: Outcome::Failure(FailureCondition::Hold(HoldFailure::DeadlinePassed))
        }
    );
    // Braking from 0.2 m/s at 8 m/s² takes one step: it stands, and the order ends, in
    // the step that failed it.
    assert_eq!(ended[0].0, pushed_at + 5);
    assert_eq!(crowd.owner(agent).unwrap(), None);
}

#[test]
fn a_hold_beyond_the_agent_s_speed_fails_for_capability() {
    let mesh = strip();
    // The correction asks 0.2 m/s; this agent walks at most 0.1.
    let slow = AgentParams {
        max_speed_mps: 0.1,
        preferred_speed_mps: 0.1,
        ..AgentParams::DETOUR_REFERENCE
    };
    let mut crowd = Crowd::new(&mesh, config()).unwrap();
    let agent = crowd
        .add_agent(STAND + Vec3::new(1.0, 0.0, 0.0), slow)
        .unwrap();
    let order = crowd.request_hold(agent, STAND, POLICY).unwrap();
    let events = steps(&mut crowd, 20);
    // Failed at the first step; standing already, it ends in the same step.
    assert_eq!(
        events,
        [
            fact(
                agent,
                order,
                FactChange::Failed(HoldFailure::CapabilityInsufficient)
            ),
            CrowdEvent::OrderEnded {
                agent,
                order,
                outcome: Outcome::Failure(FailureCondition::Hold(
                    HoldFailure::CapabilityInsufficient
                ))
            }
        ]
    );
}

#[test]
fn a_newer_order_or_a_cancel_ends_the_hold_and_its_late_facts_never_touch_the_new_owner() {
    let mesh = strip();
    let (mut crowd, agent, hold) = holding(&mesh, AgentParams::DETOUR_REFERENCE, POLICY);
    step(&mut crowd);
    crowd
        .teleport(agent, STAND + Vec3::new(0.3, 0.0, 0.0))
        .unwrap();
    let walk = crowd.request_move(agent, Vec3::new(8.0, 0.0, 1.0)).unwrap();
    assert_eq!(
        crowd.owner(agent).unwrap().unwrap().action,
        MoverAction::Move(walk)
    );
    let events = steps(&mut crowd, 80);
    // The newer order ends the hold: its fact first, then the hold itself.
    assert_eq!(
        events,
        [
            fact(agent, hold, FactChange::Released),
            CrowdEvent::OrderEnded {
                agent,
                order: hold,
                outcome: Outcome::Cancelled
            },
            CrowdEvent::OrderEnded {
                agent,
                order: walk,
                outcome: Outcome::Success
            }
        ]
    );

    let hold = crowd
        .request_hold(agent, Vec3::new(8.0, 0.0, 1.0), POLICY)
        .unwrap();
    step(&mut crowd);
    cancel_ends(&mut crowd, agent, hold);
}

#[test]
fn a_recovering_hold_is_saved_restored_and_replayed_as_it_ran() {
    let mesh = strip();
    let (mut crowd, agent, _) = holding(&mesh, AgentParams::DETOUR_REFERENCE, POLICY);
    for _ in 0..3 {
        step(&mut crowd);
    }
    crowd
        .teleport(agent, STAND + Vec3::new(0.15, 0.0, 0.05))
        .unwrap();
    for _ in 0..4 {
        step(&mut crowd);
    }
    let bytes = crowd.save();
    let mut restored = Crowd::restore_for_replay(&mesh, config(), &bytes).unwrap();
    for frame in 0..40 {
        assert_eq!(step(&mut restored), step(&mut crowd), "frame {frame}");
        assert_eq!(restored.position(agent), crowd.position(agent));
    }
    // The whole run again from its log: the same place.
    let mut log = Vec::new();
    crowd.drain_log(&mut log);
    let mut again = Crowd::new(&mesh, config()).unwrap();
    let mut replay = Replay::start(&mut again, log).unwrap();
    for _ in 0..47 {
        replay
            .step(&mut again, DT, &mut KinematicController, &mut |_, _| {})
            .unwrap();
    }
    assert_eq!(again.position(agent), crowd.position(agent));
}

#[test]
fn a_bad_hold_is_refused_by_value_and_changes_nothing() {
    let mesh = strip();
    let mut crowd = Crowd::new(&mesh, config()).unwrap();
    let agent = crowd
        .add_agent(STAND, AgentParams::DETOUR_REFERENCE)
        .unwrap();
    assert!(matches!(
        crowd.request_hold(agent, Vec3::NAN, POLICY),
        Err(CrowdError::NotFinite {
            what: "hold target",
            ..
        })
    ));
    let bad = HoldPolicy {
        correction_cap_mps: -1.0,
        ..POLICY
    };
    assert_eq!(
        crowd.request_hold(agent, STAND, bad),
        Err(CrowdError::BadParameter {
            field: "correction_cap_mps",
            value: -1.0
        })
    );
    assert_eq!(crowd.owner(agent).unwrap(), None);
}

/// An agent at x = 1 sent to x = 8 to hold there; the move's and the hold's identities.
fn walker_then_hold(mesh: &NavMesh) -> (Crowd, AgentId, RequestId, RequestId) {
    let mut crowd = Crowd::new(mesh, config()).unwrap();
    let agent = crowd
        .add_agent(Vec3::new(1.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE)
        .unwrap();
    let (walk, hold) = crowd
        .request_move_then_hold(agent, Vec3::new(8.0, 0.0, 1.0), POLICY)
        .unwrap();
    (crowd, agent, walk, hold)
}

/// The owner of the agent's mover, as an action.
fn action(crowd: &Crowd, agent: AgentId) -> Option<MoverAction> {
    crowd.owner(agent).unwrap().map(|owner| owner.action)
}

#[test]
fn a_move_then_hold_hands_the_mover_to_its_hold_in_the_arrival_s_commit() {
    let mesh = strip();
    let (mut crowd, agent, walk, hold) = walker_then_hold(&mesh);
    assert_ne!(walk, hold);
    assert_eq!(action(&crowd, agent), Some(MoverAction::Move(walk)));
    let walking = crowd.owner(agent).unwrap().unwrap().handoff;
    let mut arrived = None;
    for _ in 0..200 {
        let events = step(&mut crowd);
        if events.contains(&CrowdEvent::OrderEnded {
            agent,
            order: walk,
            outcome: Outcome::Success,
        }) {
            arrived = Some(crowd.frame());
            break;
        }
        assert_eq!(action(&crowd, agent), Some(MoverAction::Move(walk)));
    }
    assert!(arrived.is_some(), "the move arrives");
    // In the same commit: the hold owns the mover, one owner change after the move's.
    let owner = crowd.owner(agent).unwrap().unwrap();
    assert_eq!(owner.action, MoverAction::Hold(hold));
    assert_eq!(owner.handoff, walking + 1);
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Holding);
    // It stands: the first fact, then it holds until cancelled.
    let events = steps(&mut crowd, 20);
    assert_eq!(events, [fact(agent, hold, FactChange::Established(1))]);
    // It holds the pose it was sent to, not where it stopped within the arrival tolerance.
    assert_eq!(
        crowd.hold(agent).unwrap().unwrap().target,
        Vec3::new(8.0, 0.0, 1.0)
    );
    let x = crowd.position(agent).unwrap().x;
    assert!((x - 8.0).abs() <= POLICY.enter_m, "{x}");
    cancel_ends(&mut crowd, agent, hold);
}

#[test]
fn a_move_that_ends_otherwise_ends_its_reserved_hold_unstarted() {
    let mesh = strip();
    // Cancelled on the way.
    let (mut crowd, agent, walk, hold) = walker_then_hold(&mesh);
    for _ in 0..10 {
        step(&mut crowd);
    }
    crowd.cancel(agent).unwrap();
    let ended = steps(&mut crowd, 10);
    let cancelled = |order| CrowdEvent::OrderEnded {
        agent,
        order,
        outcome: Outcome::Cancelled,
    };
    assert_eq!(ended, [cancelled(hold), cancelled(walk)]);
    // Replaced by a newer order.
    let (walk, hold) = crowd
        .request_move_then_hold(agent, Vec3::new(8.0, 0.0, 1.0), POLICY)
        .unwrap();
    let newer = crowd.request_move(agent, Vec3::new(2.0, 0.0, 1.0)).unwrap();
    // (The reserved hold ends as its move leaves the mover, the move's end right after.)
    let ended = step(&mut crowd);
    assert_eq!(ended, [cancelled(hold), cancelled(walk)]);
    for _ in 0..60 {
        step(&mut crowd);
    }
    assert_eq!(
        action(&crowd, agent),
        None,
        "{newer:?} arrived; no hold took over"
    );
    // A target off the mesh: the move fails, its hold ends with it.
    let (walk, hold) = crowd
        .request_move_then_hold(agent, Vec3::new(300.0, 0.0, 300.0), POLICY)
        .unwrap();
    let ended = step(&mut crowd);
    assert_eq!(
        ended,
        [
            CrowdEvent::OrderEnded {
                agent,
                order: walk,
                outcome: Outcome::Failure(FailureCondition::NoPath)
            },
            cancelled(hold)
        ]
    );
}

#[test]
fn h5_interrupted_at_the_hold_handoff_the_hold_keeps_its_identity_and_owner() {
    let mesh = strip();
    let (mut crowd, agent, walk, hold) = walker_then_hold(&mesh);
    loop {
        let events = step(&mut crowd);
        if events
            .iter()
            .any(|e| matches!(e, CrowdEvent::OrderEnded { order, .. } if *order == walk))
        {
            break;
        }
    }
    // Saved and restored right after the handoff's commit.
    let owner = crowd.owner(agent).unwrap();
    let mut restored = Crowd::restore(&mesh, config(), &crowd.save()).unwrap();
    assert_eq!(restored.owner(agent).unwrap(), owner);
    assert_eq!(owner.unwrap().action, MoverAction::Hold(hold));
    restored.teleport(agent, Vec3::new(8.03, 0.0, 1.0)).unwrap();
    crowd.teleport(agent, Vec3::new(8.03, 0.0, 1.0)).unwrap();
    for frame in 0..30 {
        assert_eq!(step(&mut restored), step(&mut crowd), "frame {frame}");
        assert_eq!(restored.position(agent), crowd.position(agent));
    }
    assert_eq!(restored.owner(agent).unwrap(), owner);
}

#[test]
fn holds_past_the_crowd_s_capacity_are_refused_at_admission() {
    let mesh = strip();
    let config = CrowdConfig {
        holds_max: 2,
        ..config()
    };
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let agents: Vec<AgentId> = (0..3)
        .map(|i| {
            crowd
                .add_agent(
                    Vec3::new(2.0 + 2.0 * i as f32, 0.0, 1.0),
                    AgentParams::DETOUR_REFERENCE,
                )
                .unwrap()
        })
        .collect();
    // One hold started, one reserved beside a move: the capacity is taken.
    crowd
        .request_hold(agents[0], Vec3::new(2.0, 0.0, 1.0), POLICY)
        .unwrap();
    crowd
        .request_move_then_hold(agents[1], Vec3::new(5.0, 0.0, 1.0), POLICY)
        .unwrap();
    let full = Err(CrowdError::TableFull {
        table: "holds (CrowdConfig::holds_max)",
        entries: 2,
    });
    assert_eq!(
        crowd.request_hold(agents[2], Vec3::new(6.0, 0.0, 1.0), POLICY),
        full
    );
    assert_eq!(
        crowd
            .request_move_then_hold(agents[2], Vec3::new(6.0, 0.0, 1.0), POLICY)
            .map(|_| ()),
        full.map(|_: RequestId| ())
    );
    assert_eq!(
        crowd.owner(agents[2]).unwrap(),
        None,
        "refused: nothing changed"
    );
    // An agent's new hold replaces its own: no more capacity needed.
    let again = crowd
        .request_hold(agents[0], Vec3::new(2.5, 0.0, 1.0), POLICY)
        .unwrap();
    let view = crowd.hold(agents[0]).unwrap().unwrap();
    assert_eq!((view.order, view.target), (again, Vec3::new(2.5, 0.0, 1.0)));
    // A hold ended frees its place.
    crowd.cancel(agents[0]).unwrap();
    steps(&mut crowd, 10);
    crowd
        .request_hold(agents[2], Vec3::new(6.0, 0.0, 1.0), POLICY)
        .unwrap();
}

#[test]
fn a_hold_is_cancelled_by_its_id_and_a_late_cancel_of_an_old_order_touches_nothing() {
    let mesh = strip();
    let (mut crowd, agent, walk, hold) = walker_then_hold(&mesh);
    // The hold does not own the mover yet: cancelling it by id is refused.
    assert!(matches!(
        crowd.cancel_order(agent, hold),
        Err(CrowdError::NotOwner { owner: Some(MoverAction::Move(owning)), .. }) if owning == walk
    ));
    while action(&crowd, agent) != Some(MoverAction::Hold(hold)) {
        step(&mut crowd);
    }
    // The move ended: a late cancel of it leaves the hold alone.
    assert_eq!(
        crowd.cancel_order(agent, walk),
        Err(CrowdError::NotOwner {
            agent,
            order: walk,
            owner: Some(MoverAction::Hold(hold))
        })
    );
    assert_eq!(action(&crowd, agent), Some(MoverAction::Hold(hold)));
    // By the hold's id: cancelled, the same record on every repeat until the receipt.
    let record = crowd.cancel_order(agent, hold).unwrap();
    assert_eq!(record.order, Some(hold));
    assert_eq!(crowd.cancel_order(agent, hold), Ok(record));
    let events = crowd.step(DT, &mut KinematicController).unwrap();
    assert!(events.contains(&CrowdEvent::Cancelled { agent, record }));
    assert!(matches!(
        crowd.cancel_order(agent, hold),
        Err(CrowdError::NotOwner { owner: None, .. })
    ));
}

#[test]
fn a_mode_exit_releases_the_fact_keeps_the_body_while_the_host_cleans_up_then_cancels() {
    let mesh = strip();
    let (mut crowd, agent, hold) = holding(&mesh, AgentParams::DETOUR_REFERENCE, POLICY);
    assert_eq!(
        step(&mut crowd),
        [fact(agent, hold, FactChange::Established(1))]
    );
    // Only the hold's own id releases it; asking again changes nothing.
    let stranger = RequestId {
        logical: hold.logical + 100,
        ..hold
    };
    assert!(matches!(
        crowd.release_hold(agent, stranger),
        Err(CrowdError::NotOwner { .. })
    ));
    crowd.release_hold(agent, hold).unwrap();
    crowd.release_hold(agent, hold).unwrap();
    assert_eq!(step(&mut crowd), [fact(agent, hold, FactChange::Released)]);
    let view = crowd.hold(agent).unwrap().unwrap();
    assert_eq!((view.phase, view.fact), (HoldPhase::Released, None));
    // While the host cleans up, the body is still kept on the pose, but no fact comes
    // back: a push is corrected without a new generation.
    crowd
        .teleport(agent, STAND + Vec3::new(0.03, 0.0, 0.0))
        .unwrap();
    assert_eq!(steps(&mut crowd, 20), []);
    assert!(crowd.position(agent).unwrap().distance(STAND) < 0.01);
    assert_eq!(
        crowd.owner(agent).unwrap().unwrap().action,
        MoverAction::Hold(hold)
    );
    // Then the cancel by the hold's id: a safe stop, the receipt, the mover free.
    crowd.cancel_order(agent, hold).unwrap();
    assert_eq!(
        steps(&mut crowd, 10),
        [CrowdEvent::OrderEnded {
            agent,
            order: hold,
            outcome: Outcome::Cancelled
        }]
    );
    assert_eq!(crowd.owner(agent).unwrap(), None);
    // A late release of the ended hold touches nothing.
    assert!(matches!(
        crowd.release_hold(agent, hold),
        Err(CrowdError::NotOwner { owner: None, .. })
    ));
}

/// The strip as a conveyor belt: one polygon on support layer 1 (support 0), moving +x at
/// 1 m/s once the crowd is told.
fn belt() -> NavMesh {
    let mut belt = WalkablePolygon::ground(vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(10.0, 0.0, 0.0),
        Vec3::new(10.0, 0.0, 2.0),
        Vec3::new(0.0, 0.0, 2.0),
    ]);
    belt.layer = 1;
    let mut mesh = NavMesh::new(BakeParams::default());
    mesh.add_tiles(vec![TileData::from_walkable_polygons(&[belt]).unwrap()])
        .unwrap();
    mesh
}

/// A crowd on the belt (u = +1 m/s) with one agent of relative speed cap `cap` holding
/// `STAND`; stepped until its first fact. Returns the crowd, agent and hold.
fn holding_on_the_belt(cap: f32) -> (Crowd, AgentId, RequestId, Vec<CrowdEvent>) {
    let mesh = belt();
    let params = AgentParams {
        max_speed_mps: cap,
        preferred_speed_mps: cap,
        ..AgentParams::DETOUR_REFERENCE
    };
    let (mut crowd, agent, hold) = holding(&mesh, params, POLICY);
    crowd.set_support_velocity(SupportId(0), Vec3::X).unwrap();
    let events = steps(&mut crowd, 40);
    (crowd, agent, hold, events)
}

#[test]
fn h3_in_the_crowd_a_hold_on_a_belt_walks_against_it_and_corrects_a_push() {
    let (mut crowd, agent, hold, events) = holding_on_the_belt(1.2);
    // Carried off at first (the agent stood still on the belt), it walks back against the
    // belt and stands: world velocity zero, relative -1.
    assert!(
        events.contains(&fact(agent, hold, FactChange::Established(1))),
        "{events:?}"
    );
    let stood = crowd.position(agent).unwrap();
    assert!(stood.distance(STAND) <= POLICY.enter_m, "{stood:?}");
    let world_velocity = crowd.velocity(agent).unwrap() + crowd.support_velocity(SupportId(0));
    assert!(world_velocity.length() < 0.01, "{world_velocity:?}");
    // h3: pushed to X = 0.03 (relative -1 kept). Kp 2, cap 0.2, a 0.6, deadband 0.005:
    // preferred world -0.06, relative -1.06 within the cap of 1.2; the step of 0.1 s moves
    // the body -0.003 m in the world, to X = 0.027.
    crowd
        .push(agent, STAND + Vec3::new(0.03, 0.0, 0.0) - stood)
        .unwrap();
    let before = crowd.position(agent).unwrap().x - STAND.x;
    assert!((before - 0.03).abs() < 1e-5, "{before}");
    step(&mut crowd);
    let x = crowd.position(agent).unwrap().x - STAND.x;
    assert!((x - 0.027).abs() < 2e-4, "X = {x}");
    let relative = crowd.velocity(agent).unwrap().x;
    // (Within the thresholds the fact was judged on, the body stood not exactly still:
    // hence the millimetres per second.)
    assert!((relative - -1.06).abs() < 2e-3, "relative {relative}");
    assert_eq!(
        crowd.owner(agent).unwrap().unwrap().action,
        MoverAction::Hold(hold)
    );
}

#[test]
fn h3_in_the_crowd_with_a_relative_cap_of_1_the_hold_cannot_correct() {
    // Standing still on a 1 m/s belt takes all of a 1 m/s cap: no correction is left.
    let (_, agent, hold, events) = holding_on_the_belt(1.0);
    assert!(
        events.contains(&fact(
            agent,
            hold,
            FactChange::Failed(HoldFailure::CapabilityInsufficient)
        )),
        "{events:?}"
    );
    assert!(events.contains(&CrowdEvent::OrderEnded {
        agent,
        order: hold,
        outcome: Outcome::Failure(FailureCondition::Hold(HoldFailure::CapabilityInsufficient)),
    }));
}
