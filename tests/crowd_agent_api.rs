//! The agent calls a game makes between steps: ids that go stale, parameters changed at run
//! time and checked against the mesh, teleports, direct velocity control, per-agent query
//! filters and avoidance profiles.

mod common;

use glam::Vec3;
use waymark::crowd::internals::{CANCEL_CONFIRM_S, TABLE_ENTRIES_MAX};
use waymark::crowd::{
    AgentId, AgentParams, AgentStatus, AvoidanceProfile, Crowd, CrowdConfig, CrowdError,
    CrowdEvent, FilterId, KinematicController, MoverAction, Outcome, ProfileId,
};
use waymark::ids::AreaId;
use waymark::mesh::{NavMesh, WalkablePolygon};
use waymark::query::QueryFilter;

const DT: f32 = 1.0 / 30.0;

/// An agent of radius 0.4 and height 1.8 walking at up to 2 m/s.
const WALKER: AgentParams = AgentParams {
    radius_m: 0.4,
    height_m: 1.8,
    max_speed_mps: 2.0,
    preferred_speed_mps: 2.0,
    max_acceleration_mps2: 8.0,
};

/// A `columns` x `rows` grid of 2 m squares on the ground, baked (nominally) for agents of
/// radius 0.6 and height 2; the square at `mud` (column, row), if any, is area 5.
fn grid(columns: usize, rows: usize, mud: Option<(usize, usize)>) -> NavMesh {
    let mut polygons = Vec::new();
    for column in 0..columns {
        for row in 0..rows {
            let (x, z) = (2.0 * column as f32, 2.0 * row as f32);
            let mut square = WalkablePolygon::ground(vec![
                Vec3::new(x, 0.0, z),
                Vec3::new(x + 2.0, 0.0, z),
                Vec3::new(x + 2.0, 0.0, z + 2.0),
                Vec3::new(x, 0.0, z + 2.0),
            ]);
            if mud == Some((column, row)) {
                square.area = AreaId(5);
            }
            polygons.push(square);
        }
    }
    common::mesh_of(&polygons, 0.6, 2.0)
}

fn no_avoidance() -> CrowdConfig {
    let mut config = CrowdConfig::default();
    config.avoidance.enabled = false;
    config
}

/// Steps `frames` times and returns the events.
fn run(crowd: &mut Crowd, frames: usize) -> Vec<CrowdEvent> {
    let mut controller = KinematicController;
    let mut events = Vec::new();
    for _ in 0..frames {
        events.extend(crowd.step(DT, &mut controller).unwrap());
    }
    events
}

fn arrived(events: &[CrowdEvent], agent: AgentId) -> bool {
    events
        .iter()
        .any(|event| matches!(event, CrowdEvent::Arrived { agent: a, .. } if *a == agent))
}

#[test]
fn a_step_outside_the_step_range_is_refused_naming_its_length_and_leaves_the_crowd_as_it_was() {
    let mesh = grid(3, 3, None);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd.add_agent(Vec3::new(1.0, 0.0, 1.0), WALKER).unwrap();
    crowd.request_move(agent, Vec3::new(5.0, 0.0, 5.0)).unwrap();
    crowd.step(DT, &mut KinematicController).unwrap();
    let before = crowd.position(agent).unwrap();
    for dt in [1e9, 1.5, 1e-30, 0.0, -DT, f32::NAN, f32::INFINITY] {
        match crowd.step(dt, &mut KinematicController) {
            Err(CrowdError::BadStep(refused)) => {
                assert!(refused.to_bits() == dt.to_bits(), "{refused} for {dt}");
            }
            other => panic!("{dt}: {other:?}"),
        }
        let message = CrowdError::BadStep(dt).to_string();
        assert!(message.contains("0.0001..=1 s"), "{message}");
    }
    assert_eq!(crowd.position(agent).unwrap(), before);
    // The range's ends are steps.
    for dt in [*Crowd::STEP_RANGE_S.start(), *Crowd::STEP_RANGE_S.end()] {
        crowd.step(dt, &mut KinematicController).unwrap();
    }
    assert_ne!(crowd.position(agent).unwrap(), before);
}

#[test]
fn a_removed_or_never_issued_id_is_refused_by_name() {
    let mesh = grid(3, 3, None);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let gone = crowd.add_agent(Vec3::new(1.0, 0.0, 1.0), WALKER).unwrap();
    crowd.remove_agent(gone).unwrap();
    // The next agent takes the freed index with a new generation.
    let next = crowd.add_agent(Vec3::new(1.0, 0.0, 1.0), WALKER).unwrap();
    assert_eq!(next.index(), gone.index());
    assert_ne!(next, gone);
    assert!(crowd.position(next).is_ok());
    let never = AgentId::from_bits(u64::MAX).unwrap();
    for stale in [gone, never] {
        let refused = |result: Result<(), CrowdError>| {
            assert_eq!(result, Err(CrowdError::UnknownAgent(stale)));
        };
        refused(crowd.position(stale).map(drop));
        refused(crowd.velocity(stale).map(drop));
        refused(crowd.params(stale).map(drop));
        refused(
            crowd
                .request_move(stale, Vec3::new(5.0, 0.0, 5.0))
                .map(drop),
        );
        refused(crowd.request_velocity(stale, Vec3::X).map(|_| ()));
        refused(crowd.teleport(stale, Vec3::new(3.0, 0.0, 3.0)));
        refused(crowd.set_params(stale, WALKER));
        refused(crowd.set_filter(stale, FilterId::DEFAULT));
        refused(crowd.set_avoidance_profile(stale, ProfileId::DEFAULT));
        refused(crowd.cancel(stale).map(drop));
        refused(crowd.remove_agent(stale));
    }
    let message = CrowdError::UnknownAgent(gone).to_string();
    assert!(
        message.contains(&format!("agent {}v{}", gone.index(), gone.generation())),
        "{message}"
    );
    assert_eq!(crowd.len(), 1);
}

#[test]
fn a_body_wider_or_taller_than_the_mesh_was_baked_for_is_refused_naming_both_values() {
    let mesh = grid(3, 3, None);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let wide = AgentParams {
        radius_m: 0.7,
        ..WALKER
    };
    let error = crowd.add_agent(Vec3::new(3.0, 0.0, 3.0), wide).unwrap_err();
    assert_eq!(
        error,
        CrowdError::RadiusOverBaked {
            radius_m: 0.7,
            baked_radius_m: 0.6
        }
    );
    assert_eq!(
        error.to_string(),
        "agent radius 0.7 m exceeds the 0.6 m the mesh was baked for"
    );
    let tall = AgentParams {
        height_m: 2.5,
        ..WALKER
    };
    assert_eq!(
        crowd.add_agent(Vec3::new(3.0, 0.0, 3.0), tall),
        Err(CrowdError::HeightOverBaked {
            height_m: 2.5,
            baked_height_m: 2.0
        })
    );
    assert!(crowd.is_empty());
    // set_params refuses the same, leaving the agent as it was.
    let agent = crowd.add_agent(Vec3::new(3.0, 0.0, 3.0), WALKER).unwrap();
    assert!(matches!(
        crowd.set_params(agent, wide),
        Err(CrowdError::RadiusOverBaked { .. })
    ));
    let slow = AgentParams {
        preferred_speed_mps: 3.0,
        ..WALKER
    };
    assert_eq!(
        crowd.set_params(agent, slow),
        Err(CrowdError::BadParameter {
            field: "preferred_speed_mps (above max_speed_mps)",
            value: 3.0
        })
    );
    assert_eq!(crowd.params(agent), Ok(WALKER));
}

#[test]
fn a_larger_radius_set_at_run_time_widens_the_spacing_in_the_next_step() {
    let mesh = grid(4, 4, None);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    // Two bodies of radius 0.4 standing 0.9 m apart: 0.1 m clear of each other.
    let left = crowd.add_agent(Vec3::new(3.5, 0.0, 4.0), WALKER).unwrap();
    let right = crowd.add_agent(Vec3::new(4.4, 0.0, 4.0), WALKER).unwrap();
    let gap = |crowd: &Crowd| {
        crowd
            .position(left)
            .unwrap()
            .distance(crowd.position(right).unwrap())
    };
    run(&mut crowd, 3);
    // (Standing agents drift by a fraction of a millimetre: avoidance's tie-breaking nudge.)
    assert!((gap(&crowd) - 0.9).abs() < 1e-3, "{}", gap(&crowd));
    // One grows to 0.6: the pair now overlaps by 0.1 m, and the next step parts them.
    let wider = AgentParams {
        radius_m: 0.6,
        ..WALKER
    };
    crowd.set_params(left, wider).unwrap();
    assert_eq!(crowd.params(left), Ok(wider));
    run(&mut crowd, 1);
    assert!(
        (gap(&crowd) - 1.0).abs() < 0.003,
        "radius sum 1.0: {}",
        gap(&crowd)
    );
    crowd.set_params(right, wider).unwrap();
    run(&mut crowd, 1);
    assert!(
        (gap(&crowd) - 1.2).abs() < 0.003,
        "radius sum 1.2 once both have grown: {}",
        gap(&crowd)
    );
}

#[test]
fn a_teleported_agent_stands_where_it_was_put_and_plans_again_from_there() {
    let mesh = grid(5, 3, None);
    let mut crowd = Crowd::new(&mesh, no_avoidance()).unwrap();
    let agent = crowd.add_agent(Vec3::new(1.0, 0.0, 1.0), WALKER).unwrap();
    let target = Vec3::new(9.0, 0.0, 1.0);
    crowd.request_move(agent, target).unwrap();
    run(&mut crowd, 30);
    assert_eq!(crowd.status(agent), Ok(AgentStatus::Moving));
    assert!(crowd.velocity(agent).unwrap().length() > 1.5);
    // Put it on the far side of its target, a little above the ground: snapped down.
    crowd.teleport(agent, Vec3::new(9.5, 0.3, 5.0)).unwrap();
    assert_eq!(crowd.position(agent), Ok(Vec3::new(9.5, 0.0, 5.0)));
    assert_eq!(crowd.velocity(agent), Ok(Vec3::ZERO));
    assert_eq!(crowd.status(agent), Ok(AgentStatus::WaitingForPath));
    assert_eq!(crowd.corridor(agent).unwrap().map(|c| c.len()), None);
    let events = run(&mut crowd, 90);
    assert!(arrived(&events, agent), "{events:?}");
    assert!(crowd.position(agent).unwrap().distance(target) <= 0.25);
    // Refused where there is no mesh, or no number: the agent stays.
    let here = crowd.position(agent).unwrap();
    assert_eq!(
        crowd.teleport(agent, Vec3::new(40.0, 0.0, 40.0)),
        Err(CrowdError::OffMesh(Vec3::new(40.0, 0.0, 40.0)))
    );
    assert!(matches!(
        crowd.teleport(agent, Vec3::new(f32::NAN, 0.0, 1.0)),
        Err(CrowdError::NotFinite { .. })
    ));
    assert_eq!(crowd.position(agent), Ok(here));
    // An idle agent teleported stays idle.
    crowd.teleport(agent, Vec3::new(1.0, 0.0, 5.0)).unwrap();
    assert_eq!(crowd.status(agent), Ok(AgentStatus::Arrived));
    run(&mut crowd, 10);
    assert_eq!(crowd.position(agent), Ok(Vec3::new(1.0, 0.0, 5.0)));
}

#[test]
fn a_requested_velocity_moves_the_agent_until_cancelled() {
    let mesh = grid(6, 3, None);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd.add_agent(Vec3::new(1.0, 0.0, 3.0), WALKER).unwrap();
    let walk = crowd.request_move(agent, Vec3::new(1.0, 0.0, 5.0)).unwrap();
    // Direct control replaces the move order (which ends, cancelled) and owns the mover.
    let steer = crowd
        .request_velocity(agent, Vec3::new(1.5, 0.0, 0.0))
        .unwrap();
    assert_ne!(steer, walk);
    assert_eq!(crowd.request(agent), Ok(None));
    let owner = crowd.owner(agent).unwrap().unwrap();
    assert_eq!(owner.action, MoverAction::Velocity(steer));
    assert_eq!(owner.handoff, 2, "the move order, then the velocity order");
    assert_eq!(crowd.status(agent), Ok(AgentStatus::VelocityControlled));
    run(&mut crowd, 60);
    // 2 s at 1.5 m/s, less the 0.14 s spent reaching it at 8 m/s²: 2.86 m.
    let position = crowd.position(agent).unwrap();
    assert!((position.x - 1.0 - 2.859).abs() < 0.01, "{position}");
    assert!((position.z - 3.0).abs() < 1e-4, "{position}");
    // (Within avoidance's tie-breaking nudge of a few millimetres per second.)
    let velocity = crowd.velocity(agent).unwrap();
    assert!(
        (velocity - Vec3::new(1.5, 0.0, 0.0)).length() < 0.005,
        "{velocity}"
    );
    // Faster than the agent can go, or no number: refused by value.
    assert_eq!(
        crowd.request_velocity(agent, Vec3::new(3.0, 0.0, 0.0)),
        Err(CrowdError::BadParameter {
            field: "requested speed (above max_speed_mps)",
            value: 3.0
        })
    );
    assert!(matches!(
        crowd.request_velocity(agent, Vec3::new(0.0, 0.0, f32::INFINITY)),
        Err(CrowdError::NotFinite { .. })
    ));
    // Cancelled: it brakes and stands, and the receipt says so.
    let record = crowd.cancel(agent).unwrap();
    assert_eq!(record.order, Some(steer), "the velocity order is cancelled");
    assert_eq!(
        crowd.owner(agent).unwrap().map(|owner| owner.action),
        Some(MoverAction::Braking(record))
    );
    let events = run(&mut crowd, 15);
    assert!(
        events
            .iter()
            .any(|event| matches!(event, CrowdEvent::Cancelled { agent: a, .. } if *a == agent)),
        "{events:?}"
    );
    assert_eq!(crowd.status(agent), Ok(AgentStatus::Idle));
    assert!(crowd.velocity(agent).unwrap().length() < 0.005);
    assert_eq!(crowd.owner(agent), Ok(None), "released with the receipt");
    let ended: Vec<_> = events
        .iter()
        .filter_map(|event| match *event {
            CrowdEvent::OrderEnded { order, outcome, .. } => Some((order, outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(ended, [(steer, Outcome::Cancelled)]);
}

#[test]
fn a_cancel_is_a_state_with_one_record_and_a_receipt_once_the_mover_stops() {
    let mesh = grid(8, 3, None);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd.add_agent(Vec3::new(1.0, 0.0, 3.0), WALKER).unwrap();
    let order = crowd
        .request_move(agent, Vec3::new(15.0, 0.0, 3.0))
        .unwrap();
    run(&mut crowd, 30);
    assert!(crowd.velocity(agent).unwrap().length() > 1.5, "walking");
    let record = crowd.cancel(agent).unwrap();
    assert_eq!(record.order, Some(order));
    assert_eq!(record.frame, crowd.frame());
    assert_eq!(crowd.status(agent), Ok(AgentStatus::Cancelling));
    assert_eq!(crowd.request(agent), Ok(None));
    // Asking again returns the same record; no new order takes the mover meanwhile.
    assert_eq!(crowd.cancel(agent), Ok(record));
    assert_eq!(
        crowd.request_move(agent, Vec3::new(1.0, 0.0, 3.0)),
        Err(CrowdError::Cancelling { agent, record })
    );
    assert!(matches!(
        crowd.request_velocity(agent, Vec3::X),
        Err(CrowdError::Cancelling { .. })
    ));
    // It brakes (2 m/s at 8 m/s²: a quarter of a second), then the receipt comes, once.
    let mut receipts = Vec::new();
    let mut controller = KinematicController;
    for frame in 0..30 {
        for event in crowd.step(DT, &mut controller).unwrap() {
            if let CrowdEvent::Cancelled {
                agent: a,
                record: r,
            } = event
            {
                receipts.push((frame, a, r));
            }
        }
    }
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    let (frame, a, r) = receipts[0];
    assert_eq!((a, r), (agent, record));
    assert!((6..=10).contains(&frame), "receipt after {frame} frames");
    assert_eq!(crowd.status(agent), Ok(AgentStatus::Idle));
    // The mover is free: a new order is taken.
    assert!(crowd.request_move(agent, Vec3::new(1.0, 0.0, 3.0)).is_ok());
}

#[test]
fn an_agent_excluded_from_an_area_routes_around_it_while_its_neighbour_crosses_it() {
    // A 3 x 3 grid with mud in the middle square; both walk from the middle of the left
    // column to the middle of the right one.
    let mesh = grid(3, 3, Some((1, 1)));
    let mut crowd = Crowd::new(&mesh, no_avoidance()).unwrap();
    let mut dry = QueryFilter::new();
    dry.set_area_excluded(AreaId(5), true);
    let dry = crowd.add_filter(dry).unwrap();
    assert_ne!(dry, FilterId::DEFAULT);
    let (start, target) = (Vec3::new(1.0, 0.0, 3.0), Vec3::new(5.0, 0.0, 3.0));
    let crosser = crowd.add_agent(start, WALKER).unwrap();
    let walker = crowd.add_agent(start, WALKER).unwrap();
    crowd.set_filter(walker, dry).unwrap();
    assert_eq!(crowd.filter(walker), Ok(dry));
    assert_eq!(crowd.filter(crosser), Ok(FilterId::DEFAULT));
    for agent in [crosser, walker] {
        crowd.request_move(agent, target).unwrap();
    }
    let snapshot = mesh.snapshot();
    let area_under = |crowd: &Crowd, agent| {
        let polygon = crowd.polygon(agent).unwrap();
        snapshot.tile(polygon).unwrap().data.polygons[polygon.polygon() as usize].area
    };
    let (mut crosser_in_mud, mut walker_in_mud) = (0, 0);
    let mut controller = KinematicController;
    let mut done = Vec::new();
    for _ in 0..150 {
        done.extend(crowd.step(DT, &mut controller).unwrap());
        crosser_in_mud += usize::from(area_under(&crowd, crosser) == 5);
        walker_in_mud += usize::from(area_under(&crowd, walker) == 5);
    }
    assert!(
        arrived(&done, crosser) && arrived(&done, walker),
        "{done:?}"
    );
    assert!(crosser_in_mud > 10, "{crosser_in_mud} frames in the mud");
    assert_eq!(walker_in_mud, 0, "the excluded agent stepped in the mud");
    // An unknown filter is refused; the table is bounded.
    assert_eq!(
        crowd.set_filter(walker, FilterId::default()),
        Ok(()),
        "the default filter"
    );
    for _ in 2..TABLE_ENTRIES_MAX {
        crowd.add_filter(QueryFilter::new()).unwrap();
    }
    assert_eq!(
        crowd.add_filter(QueryFilter::new()),
        Err(CrowdError::TableFull {
            table: "query filters",
            entries: TABLE_ENTRIES_MAX
        })
    );
}

#[test]
fn an_agent_that_does_not_negotiate_keeps_its_course_and_the_other_gives_way() {
    let mesh = grid(8, 4, None);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let bulldozer = crowd
        .add_avoidance_profile(AvoidanceProfile {
            negotiates: false,
            ..AvoidanceProfile::of(&CrowdConfig::default().avoidance)
        })
        .unwrap();
    let (left, right) = (Vec3::new(1.0, 0.0, 4.0), Vec3::new(15.0, 0.0, 4.0));
    let pusher = crowd.add_agent(left, WALKER).unwrap();
    let walker = crowd.add_agent(right, WALKER).unwrap();
    crowd.set_avoidance_profile(pusher, bulldozer).unwrap();
    crowd.request_move(pusher, right).unwrap();
    crowd.request_move(walker, left).unwrap();
    let mut controller = KinematicController;
    let (mut pusher_swerve, mut walker_swerve) = (0.0f32, 0.0f32);
    for _ in 0..240 {
        crowd.step(DT, &mut controller).unwrap();
        pusher_swerve = pusher_swerve.max((crowd.position(pusher).unwrap().z - 4.0).abs());
        walker_swerve = walker_swerve.max((crowd.position(walker).unwrap().z - 4.0).abs());
    }
    assert!(pusher_swerve < 0.01, "the pusher swerved {pusher_swerve} m");
    assert!(
        walker_swerve > 0.5,
        "the walker swerved only {walker_swerve} m"
    );
    assert_eq!(
        crowd.set_avoidance_profile(walker, ProfileId::default()),
        Ok(())
    );
    assert!(matches!(
        crowd.add_avoidance_profile(AvoidanceProfile {
            time_horizon_s: 0.0,
            ..AvoidanceProfile::of(&CrowdConfig::default().avoidance)
        }),
        Err(CrowdError::BadParameter {
            field: "time_horizon_s",
            ..
        })
    ));
}

#[test]
fn the_agents_view_lists_every_agent_once() {
    let mesh = grid(4, 4, None);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let ids: Vec<AgentId> = (0..6)
        .map(|index| {
            crowd
                .add_agent(Vec3::new(1.0 + index as f32, 0.0, 1.0), WALKER)
                .unwrap()
        })
        .collect();
    crowd
        .request_move(ids[2], Vec3::new(7.0, 0.0, 7.0))
        .unwrap();
    run(&mut crowd, 20);
    let mut seen: Vec<AgentId> = crowd.agents().map(|view| view.id).collect();
    seen.sort();
    assert_eq!(seen, ids);
    for view in crowd.agents() {
        assert_eq!(Ok(view.position), crowd.position(view.id));
        assert_eq!(Ok(view.velocity), crowd.velocity(view.id));
        assert_eq!(Ok(view.status), crowd.status(view.id));
    }
}

#[test]
fn a_cancel_not_confirmed_in_time_is_a_fault_and_keeps_the_mover() {
    let mesh = grid(8, 3, None);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd.add_agent(Vec3::new(1.0, 0.0, 3.0), WALKER).unwrap();
    crowd
        .request_move(agent, Vec3::new(15.0, 0.0, 3.0))
        .unwrap();
    let record = crowd.cancel(agent).unwrap();
    let mut controller = common::Unsure { unknown: true };
    let mut faults = Vec::new();
    for frame in 0..120usize {
        for event in crowd.step(DT, &mut controller).unwrap() {
            match event {
                CrowdEvent::CancelFault {
                    agent: a,
                    record: r,
                } => faults.push((frame, a, r)),
                CrowdEvent::Cancelled { .. } => panic!("an unconfirmed stop has no receipt"),
                _ => {}
            }
        }
    }
    // Reported once, after CANCEL_CONFIRM_S (60 frames at 30 Hz); the agent stays
    // cancelling and takes no new order.
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!((faults[0].1, faults[0].2), (agent, record));
    let expected = (CANCEL_CONFIRM_S / DT).ceil() as usize;
    assert!(faults[0].0.abs_diff(expected) <= 1, "{faults:?}");
    assert_eq!(crowd.status(agent), Ok(AgentStatus::Cancelling));
    assert!(matches!(
        crowd.request_move(agent, Vec3::new(5.0, 0.0, 3.0)),
        Err(CrowdError::Cancelling { .. })
    ));
}
