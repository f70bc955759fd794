//! The ordered log and its replay (spec 001): every accepted command,
//! every result at the commit point with its decision, and every outcome is logged in
//! order; a replay reads the results from the log instead of searching, reproduces the
//! run (also one whose searches raced the clock), and stops, naming the entry, where the
//! run it replays differs from the log.

mod common;

use common::{Game, proving_ground_mesh, rooms, rooms_door, turntable_crowd};
use glam::Vec3;
use waymark::crowd::internals::mesh_fingerprint;
use waymark::crowd::{
    AgentParams, AgentView, ConnectionWindow, Crowd, CrowdConfig, CrowdEvent, Decision,
    KinematicController, LogEntry, LogRecord, LoggedAnswer, Replay, ReplayError,
};
use waymark::harness::random_plans;
use waymark::mesh::{LinkId, NavMesh};

const DT: f32 = 1.0 / 30.0;

const PARAMS: AgentParams = AgentParams {
    radius_m: 0.4,
    height_m: 1.5,
    ..AgentParams::DETOUR_REFERENCE
};

/// A logging crowd with a budget small enough that searches queue and finish over frames.
fn logged_config(search_time_ms: f32) -> CrowdConfig {
    CrowdConfig {
        path_nodes_per_step: 96,
        path_nodes_per_agent: 0.0,
        head_starts_per_step: 16,
        head_starts_per_agent: 0.0,
        path_search_time_ms: search_time_ms,
        ordered_log: true,
        ..CrowdConfig::default()
    }
}

fn views(crowd: &Crowd) -> Vec<AgentView> {
    let mut views: Vec<AgentView> = crowd.agents().collect();
    views.sort_by_key(|view| view.id);
    views
}

/// Asserts two crowds' views are equal, naming the first agent that differs.
fn assert_same(found: &[AgentView], expected: &[AgentView], frame: usize) {
    assert_eq!(found.len(), expected.len(), "frame {frame}: agents");
    if let Some((found, expected)) = found.iter().zip(expected).find(|(a, b)| a != b) {
        panic!("frame {frame}: {found:?}, expected {expected:?}");
    }
}

/// Runs the game for `frames` frames; returns the agents as each step left them, each
/// step's events and the log.
fn record(
    mesh: &NavMesh,
    config: CrowdConfig,
    frames: u64,
) -> (Vec<Vec<AgentView>>, Vec<Vec<CrowdEvent>>, Vec<LogEntry>) {
    let mut crowd = Crowd::new(mesh, config).unwrap();
    let mut game = Game::start(&mut crowd, random_plans(mesh, 200, 4, 11), PARAMS, 40);
    let (mut seen, mut events, mut log) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..frames {
        let (stepped_events, stepped) = game.frame(&mut crowd);
        events.push(stepped_events);
        seen.push(stepped);
        crowd.drain_log(&mut log);
    }
    (seen, events, log)
}

#[test]
fn the_log_holds_every_command_result_and_outcome_in_order() {
    let (mut mesh, _) = rooms();
    let door = mesh.add_link(rooms_door(true)).unwrap();
    let config = CrowdConfig {
        ordered_log: true,
        ..CrowdConfig::default()
    };
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let walker = crowd.add_agent(Vec3::new(2.0, 0.0, 3.0), PARAMS).unwrap();
    let other = crowd.add_agent(Vec3::new(8.0, 0.0, 2.0), PARAMS).unwrap();
    let walk = crowd
        .request_move(walker, Vec3::new(19.0, 0.0, 3.0))
        .unwrap();
    let short = crowd.request_move(other, Vec3::new(6.0, 0.0, 2.0)).unwrap();
    // Refused commands change nothing and are not logged.
    assert!(crowd.request_move(other, Vec3::NAN).is_err());
    let mut log = Vec::new();
    crowd.drain_log(&mut log);
    assert_eq!(
        log.iter().map(|entry| &entry.record).collect::<Vec<_>>(),
        [
            &LogRecord::AddAgent {
                agent: walker,
                position: Vec3::new(2.0, 0.0, 3.0),
                params: PARAMS
            },
            &LogRecord::AddAgent {
                agent: other,
                position: Vec3::new(8.0, 0.0, 2.0),
                params: PARAMS
            },
            &LogRecord::Move {
                agent: walker,
                order: walk,
                target: Vec3::new(19.0, 0.0, 3.0),
                deadline_frame: None
            },
            &LogRecord::Move {
                agent: other,
                order: short,
                target: Vec3::new(6.0, 0.0, 2.0),
                deadline_frame: None
            },
        ]
    );

    let mut ended_events = Vec::new();
    let mut cancel = None;
    for frame in 0..240u64 {
        if frame == 3 {
            // The door closes under the walker's adopted route.
            mesh.set_link_open(door, false).unwrap();
            crowd.set_mesh(&mesh);
        }
        if frame == 120 {
            cancel = Some(crowd.cancel(walker).unwrap());
        }
        let events = crowd.step(DT, &mut KinematicController).unwrap();
        for event in events {
            if let CrowdEvent::OrderEnded {
                agent,
                order,
                outcome,
            } = event
            {
                ended_events.push((frame, agent, order, outcome));
            }
        }
        // An adoption logged in this step is the corridor the walker walks after it.
        let first_new = log.len();
        crowd.drain_log(&mut log);
        for entry in &log[first_new..] {
            if let LogRecord::Result {
                agent,
                answer,
                decision,
                ..
            } = &entry.record
            {
                if let (true, Decision::Adopted, LoggedAnswer::Corridor(corridor)) =
                    (*agent == walker, *decision, answer)
                {
                    let walking = crowd.corridor(walker).unwrap().unwrap();
                    assert!(std::ptr::eq(&**corridor, walking), "frame {frame}");
                }
            }
        }
    }

    // Numbered from 0 without a gap, frames never going back.
    for (index, entry) in log.iter().enumerate() {
        assert_eq!(entry.sequence, index as u64);
    }
    assert!(log.windows(2).all(|pair| pair[0].frame <= pair[1].frame));
    assert_eq!(crowd.log_frontier(), log.len() as u64);
    // The door: the mesh change, by the fingerprint of the snapshot taken.
    assert!(log.iter().any(|entry| entry.frame == 3
        && entry.record
            == LogRecord::SetMesh {
                fingerprint: mesh_fingerprint(&mesh.snapshot())
            }));
    // The walker's first route went through the door: its adoption is logged, and after
    // the door closed a result read the old link version is rejected as stale or the
    // route is asked again and adopted round the back.
    let walker_decisions: Vec<Decision> = log
        .iter()
        .filter_map(|entry| match &entry.record {
            LogRecord::Result {
                agent, decision, ..
            } if *agent == walker => Some(*decision),
            _ => None,
        })
        .collect();
    assert!(
        walker_decisions
            .iter()
            .filter(|&&d| d == Decision::Adopted)
            .count()
            >= 2,
        "{walker_decisions:?}"
    );
    // The cancel, with the record it returned, at the frame it was asked.
    assert!(log.iter().any(|entry| entry.frame == 120
        && entry.record
            == LogRecord::Cancel {
                agent: walker,
                record: cancel.unwrap()
            }));
    // Every outcome, in the order and at the frame the steps reported it.
    let logged_ends: Vec<_> = log
        .iter()
        .filter_map(|entry| match entry.record {
            LogRecord::Ended {
                agent,
                order,
                outcome,
            } => Some((entry.frame, agent, order, outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(logged_ends, ended_events);
    assert_eq!(ended_events.len(), 2, "{ended_events:?}");
}

#[test]
fn a_replay_reads_its_paths_from_the_log_and_reproduces_the_run() {
    let mesh = proving_ground_mesh();
    let config = logged_config(0.0);
    let (seen, events, log) = record(&mesh, config, 150);
    let results = log
        .iter()
        .filter(|entry| matches!(entry.record, LogRecord::Result { .. }))
        .count();
    assert!(results > 300, "{results} results logged");

    let mut again = Crowd::new(&mesh, config).unwrap();
    let mut replay = Replay::start(&mut again, log.clone()).unwrap();
    assert!(again.replaying());
    let mut relogged = Vec::new();
    for frame in 0..150 {
        let found = replay
            .step(&mut again, DT, &mut KinematicController, &mut |_, _| {})
            .unwrap();
        assert_eq!(found, events[frame], "frame {frame}");
        assert_same(&views(&again), &seen[frame], frame);
        // No search ran: every path came from the log.
        assert_eq!(again.stats().nodes_expanded, 0);
        again.drain_log(&mut relogged);
    }
    // The replay knows the log's last frame: the orders given after the last step, if
    // any, are for a step not taken (frame 150).
    let last_logged = log.iter().map(|entry| entry.frame).max().unwrap();
    assert!(last_logged >= 149, "log ends at frame {last_logged}");
    assert_eq!(replay.last_frame(), last_logged);
    // Logging while replaying writes the log replayed.
    let replayed: Vec<LogEntry> = log.into_iter().filter(|entry| entry.frame < 150).collect();
    assert_eq!(relogged, replayed);
}

#[test]
fn a_turntable_set_in_the_log_turns_in_the_replay() {
    // The turntable scenario's table set turning by a logged command: the replay sets it
    // from the log and its walkers ride and lean as in the run.
    let logged = |config| CrowdConfig {
        ordered_log: true,
        ..config
    };
    let (scenario, mut crowd) = turntable_crowd(20, logged);
    let config = logged(scenario.config);
    let (support, motion) = scenario.supports[0];
    let mut log = Vec::new();
    for _ in 0..200 {
        crowd.step(0.1, &mut KinematicController).unwrap();
        crowd.drain_log(&mut log);
    }
    assert!(
        log.iter()
            .any(|entry| matches!(entry.record, LogRecord::SetSupportRotation { .. }))
    );
    let mut again = Crowd::new(&scenario.mesh, config).unwrap();
    let mut replay = Replay::start(&mut again, log).unwrap();
    for _ in 0..200 {
        replay
            .step(&mut again, 0.1, &mut KinematicController, &mut |_, _| {})
            .unwrap();
    }
    assert_eq!(again.support_motion(support), motion);
    assert_same(&views(&again), &views(&crowd), 200);
}

#[test]
fn a_run_whose_searches_raced_the_clock_is_reproduced_by_its_replay() {
    // A time budget this small ends each frame's searches wherever the clock says: which
    // paths arrive when depends on the machine, so running again is no reproduction.
    let mesh = proving_ground_mesh();
    let config = logged_config(0.02);
    let (seen, _, log) = record(&mesh, config, 120);
    let mut again = Crowd::new(&mesh, config).unwrap();
    let mut replay = Replay::start(&mut again, log).unwrap();
    for (frame, stepped) in seen.iter().enumerate() {
        replay
            .step(&mut again, DT, &mut KinematicController, &mut |_, _| {})
            .unwrap();
        assert_same(&views(&again), stepped, frame);
    }
}

#[test]
fn a_replay_continues_a_restored_save_from_its_frontier() {
    let mesh = proving_ground_mesh();
    let config = logged_config(0.0);
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let mut game = Game::start(&mut crowd, random_plans(&mesh, 200, 4, 11), PARAMS, 40);
    let mut before = Vec::new();
    for _ in 0..30 {
        game.frame(&mut crowd);
    }
    crowd.drain_log(&mut before);
    let save = crowd.save();
    let frontier = crowd.log_frontier();
    assert_eq!(frontier, before.len() as u64);
    let mut after = Vec::new();
    let mut stepped = Vec::new();
    for _ in 30..100 {
        stepped = game.frame(&mut crowd).1;
    }
    crowd.drain_log(&mut after);
    assert_eq!(after[0].sequence, frontier);

    // A new crowd is not where the log starts.
    let mut fresh = Crowd::new(&mesh, config).unwrap();
    assert_eq!(
        Replay::start(&mut fresh, after.clone()).err(),
        Some(ReplayError::NotAtFrontier {
            log_starts: frontier,
            frontier: 0
        })
    );
    // Restored as saved (a game's restore starts a new epoch; the log went on in the old).
    let mut restored = Crowd::restore_for_replay(&mesh, config, &save).unwrap();
    assert_eq!(restored.log_frontier(), frontier);
    assert_eq!(
        Crowd::restore(&mesh, config, &save).unwrap().log_frontier(),
        frontier
    );
    let mut replay = Replay::start(&mut restored, after).unwrap();
    for _ in 30..100 {
        replay
            .step(&mut restored, DT, &mut KinematicController, &mut |_, _| {})
            .unwrap();
    }
    assert_same(&views(&restored), &stepped, 100);
}

/// The rooms and their door, open.
fn door_mesh() -> (NavMesh, LinkId) {
    let (mut mesh, _) = rooms();
    let door = mesh.add_link(rooms_door(true)).unwrap();
    (mesh, door)
}

/// The rooms with an open door, two walkers, and the door closed at frame 5; the log of
/// 60 frames.
fn door_run() -> Vec<LogEntry> {
    let (mut mesh, door) = door_mesh();
    let config = CrowdConfig {
        ordered_log: true,
        ..CrowdConfig::default()
    };
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    for start in [Vec3::new(2.0, 0.0, 3.0), Vec3::new(3.0, 0.0, 2.0)] {
        let agent = crowd.add_agent(start, PARAMS).unwrap();
        crowd
            .request_move(agent, Vec3::new(19.0, 0.0, 3.0))
            .unwrap();
    }
    let mut log = Vec::new();
    for frame in 0..60 {
        if frame == 5 {
            mesh.set_link_open(door, false).unwrap();
            crowd.set_mesh(&mesh);
        }
        crowd.step(DT, &mut KinematicController).unwrap();
    }
    crowd.drain_log(&mut log);
    log
}

/// Replays `log` from the start of the door run; the host closes the door when the log
/// changes the mesh if `close_door`.
fn replay_door_run(log: Vec<LogEntry>, close_door: bool) -> Result<(), ReplayError> {
    let (mut mesh, door) = door_mesh();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let mut replay = Replay::start(&mut crowd, log)?;
    for _ in 0..60 {
        replay.step(&mut crowd, DT, &mut KinematicController, &mut |crowd, _| {
            if close_door {
                mesh.set_link_open(door, false).unwrap();
            }
            crowd.set_mesh(&mesh);
        })?;
    }
    Ok(())
}

#[test]
fn a_log_the_replay_cannot_follow_is_refused_naming_the_entry() {
    let log = door_run();
    replay_door_run(log.clone(), true).unwrap();

    // The host gives the mesh without the door change.
    let set_mesh = log
        .iter()
        .find(|entry| matches!(entry.record, LogRecord::SetMesh { .. }))
        .unwrap()
        .sequence;
    assert!(matches!(
        replay_door_run(log.clone(), false),
        Err(ReplayError::WrongMesh { sequence, .. }) if sequence == set_mesh
    ));

    // A decision that does not follow from the state: an adoption logged as rejected.
    let mut tampered = log.clone();
    let adoption = tampered
        .iter_mut()
        .find_map(|entry| match &mut entry.record {
            LogRecord::Result { decision, .. } if *decision == Decision::Adopted => {
                *decision = Decision::RejectedOffCorridor;
                Some(entry.sequence)
            }
            _ => None,
        })
        .unwrap();
    assert!(matches!(
        replay_door_run(tampered, true),
        Err(ReplayError::Diverged { sequence, .. }) if sequence == adoption
    ));

    // An order's identity the crowd would not issue.
    let mut tampered = log.clone();
    let order = tampered
        .iter_mut()
        .find_map(|entry| match &mut entry.record {
            LogRecord::Move { order, .. } => {
                order.logical += 7;
                Some(entry.sequence)
            }
            _ => None,
        })
        .unwrap();
    assert!(matches!(
        replay_door_run(tampered, true),
        Err(ReplayError::Diverged { sequence, .. }) if sequence == order
    ));

    // A gap: an entry left out.
    let mut tampered = log.clone();
    let left_out = tampered
        .iter()
        .position(|entry| {
            matches!(
                &entry.record,
                LogRecord::Result {
                    decision: Decision::Adopted,
                    ..
                }
            )
        })
        .unwrap();
    let mut shifted = tampered.split_off(left_out);
    shifted.remove(0);
    assert!(matches!(
        replay_door_run(tampered.into_iter().chain(shifted).collect(), true),
        Err(ReplayError::OutOfOrder { .. })
    ));
}

#[test]
fn a_connection_window_set_in_the_log_holds_the_walkers_the_same_way_in_the_replay() {
    let (mesh, door) = door_mesh();
    let config = CrowdConfig {
        ordered_log: true,
        ..CrowdConfig::default()
    };
    let window = ConnectionWindow {
        first_open_frame: 150,
        open_frames: 200,
        period_frames: 1000,
    };
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    crowd.set_link_window(door, Some(window)).unwrap();
    for start in [Vec3::new(2.0, 0.0, 3.0), Vec3::new(3.0, 0.0, 2.0)] {
        let agent = crowd.add_agent(start, PARAMS).unwrap();
        crowd
            .request_move(agent, Vec3::new(19.0, 0.0, 3.0))
            .unwrap();
    }
    let mut log = Vec::new();
    let mut started = Vec::new();
    for frame in 0..300 {
        for event in crowd.step(DT, &mut KinematicController).unwrap() {
            if let CrowdEvent::LinkStarted { .. } = event {
                started.push(frame);
            }
        }
        crowd.drain_log(&mut log);
    }
    // Both walkers wait for the window (the door is a few metres away) and cross in it.
    assert_eq!(started.len(), 2, "{started:?}");
    assert!(
        started.iter().all(|frame| (150..350).contains(frame)),
        "{started:?}"
    );
    let mut again = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let mut replay = Replay::start(&mut again, log).unwrap();
    for _ in 0..300 {
        replay
            .step(&mut again, DT, &mut KinematicController, &mut |_, _| {})
            .unwrap();
    }
    assert_eq!(again.link_window(door), Some(window));
    assert_same(&views(&again), &views(&crowd), 300);
}
