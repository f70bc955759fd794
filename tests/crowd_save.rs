//! Saving and restoring a crowd (spec 001): a restored crowd continues
//! exactly as the uninterrupted one, under a new epoch; bad or stale saves are refused by
//! value.

mod common;

use common::{Game, proving_ground_mesh, rooms, rooms_door, turntable_crowd};
use glam::Vec3;
use waymark::crowd::{
    AgentId, AgentParams, AgentStatus, AgentView, Crowd, CrowdConfig, CrowdEvent,
    KinematicController, RestoreError,
};
use waymark::harness::{random_plans, state_hash};
use waymark::mesh::{LinkId, LinkVersion, NavMesh, TileGeneration};

const DT: f32 = 1.0 / 30.0;

/// Bodies of the size the guard preset bakes for.
const PARAMS: AgentParams = AgentParams {
    radius_m: 0.4,
    height_m: 1.5,
    ..AgentParams::DETOUR_REFERENCE
};

/// The event with its request's epoch set to 0: orders given after a restore are of the
/// restored crowd's epoch (1 here), the same orders of the uninterrupted run of epoch 0.
fn epoch_zero(event: &CrowdEvent) -> CrowdEvent {
    let mut event = *event;
    match &mut event {
        CrowdEvent::Arrived { request, .. }
        | CrowdEvent::PartialArrived { request, .. }
        | CrowdEvent::Blocked { request, .. }
        | CrowdEvent::RouteInvalidated { request, .. }
        | CrowdEvent::NoPath { request, .. }
        | CrowdEvent::OrderEnded { order: request, .. }
        | CrowdEvent::StandFact { order: request, .. } => request.epoch = 0,
        CrowdEvent::Cancelled { record, .. } | CrowdEvent::CancelFault { record, .. } => {
            if let Some(order) = &mut record.order {
                order.epoch = 0;
            }
        }
        CrowdEvent::LinkStarted { .. }
        | CrowdEvent::LinkFinished { .. }
        | CrowdEvent::Quarantined { .. } => {}
    }
    event
}

fn views(crowd: &Crowd) -> Vec<AgentView> {
    let mut views: Vec<AgentView> = crowd.agents().collect();
    views.sort_by_key(|view| view.id);
    views
}

/// A budget small enough that searches are still open and queued at the save.
fn tight_config() -> CrowdConfig {
    CrowdConfig {
        path_nodes_per_step: 96,
        path_nodes_per_agent: 0.0,
        head_starts_per_step: 16,
        head_starts_per_agent: 0.0,
        ..CrowdConfig::default()
    }
}

/// Where the continuation test saves: early enough that paths are still being searched.
const SAVE_FRAME: u64 = 20;

#[test]
fn a_restored_crowd_continues_exactly_as_the_uninterrupted_one() {
    let mesh = proving_ground_mesh();
    let config = tight_config();
    let plans = random_plans(&mesh, 240, 4, 7);

    let mut whole = Crowd::new(&mesh, config).unwrap();
    let mut whole_game = Game::start(&mut whole, plans, PARAMS, 160);
    for _ in 0..SAVE_FRAME {
        whole_game.frame(&mut whole);
    }
    let queue_at_save = whole.stats().queue_depth;
    let bytes = whole.save();
    assert_eq!(bytes, whole.save(), "the same crowd saves the same bytes");
    let mut restored = Crowd::restore(&mesh, config, &bytes).unwrap();
    let mut restored_game = whole_game.clone();
    assert!(
        queue_at_save > 16,
        "searches open and queued at the save ({queue_at_save})"
    );

    // The same agents, where they were, under the same orders.
    assert_eq!(views(&restored), views(&whole));
    for &agent in &whole_game.agents {
        assert_eq!(restored.request(agent), whole.request(agent));
        assert_eq!(
            restored.corridor(agent).unwrap().map(|c| c.len()),
            whole.corridor(agent).unwrap().map(|c| c.len())
        );
    }
    assert_eq!(restored.frame(), SAVE_FRAME);

    let mut events_compared = 0;
    for _ in SAVE_FRAME..300 {
        let expected = whole_game.frame(&mut whole).0;
        let found = restored_game.frame(&mut restored).0;
        assert_eq!(
            found.iter().map(epoch_zero).collect::<Vec<_>>(),
            expected,
            "frame {}",
            whole.frame()
        );
        events_compared += expected.len();
    }
    assert!(events_compared > 100, "{events_compared} events compared");
    assert_eq!(views(&restored), views(&whole));
    assert_eq!(state_hash(&restored), state_hash(&whole));
    assert_eq!(
        restored_game.agents, whole_game.agents,
        "the added agent's id"
    );
    let arrivals = whole_game
        .next_target
        .iter()
        .filter(|&&next| next > 1)
        .count();
    assert!(arrivals > 60, "{arrivals} agents reached a target");
}

#[test]
fn h5_interrupted_before_query_return_the_query_is_the_next_attempt_in_a_new_epoch_in_its_place() {
    let mesh = proving_ground_mesh();
    let config = tight_config();
    let plans = random_plans(&mesh, 240, 1, 11);
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let game = Game::start(&mut crowd, plans, PARAMS, 160);
    for _ in 0..3 {
        crowd.step(DT, &mut KinematicController).unwrap();
    }
    let waiting: Vec<AgentId> = game
        .agents
        .iter()
        .copied()
        .filter(|&agent| crowd.awaiting_first_path(agent).unwrap())
        .collect();
    assert!(waiting.len() > 100, "{} agents waiting", waiting.len());
    let restored = Crowd::restore(&mesh, config, &crowd.save()).unwrap();
    for &agent in &game.agents {
        let (before, after) = (crowd.query(agent).unwrap(), restored.query(agent).unwrap());
        let order = crowd.request(agent).unwrap();
        assert_eq!(
            restored.request(agent).unwrap(),
            order,
            "orders keep their ids"
        );
        let (before, after) = (before.unwrap(), after.unwrap());
        assert_eq!(after.logical, before.logical);
        if waiting.contains(&agent) {
            assert_eq!(after.attempt, before.attempt + 1);
            assert_eq!((before.epoch, after.epoch), (0, 1));
        } else {
            assert!(
                after == before || after.attempt == before.attempt + 1,
                "{agent}"
            );
        }
    }
    // The waiting agents are answered in the order they would have been: the first to get
    // their paths after the restore are the first the uninterrupted crowd answers.
    let mut restored = restored;
    let answered = |crowd: &Crowd| -> Vec<AgentId> {
        waiting
            .iter()
            .copied()
            .filter(|&agent| !crowd.awaiting_first_path(agent).unwrap())
            .collect()
    };
    for _ in 0..10 {
        crowd.step(DT, &mut KinematicController).unwrap();
        restored.step(DT, &mut KinematicController).unwrap();
        assert_eq!(answered(&restored), answered(&crowd));
    }
    assert!(!answered(&crowd).is_empty());
}

#[test]
fn ids_after_a_restore_are_the_ones_the_game_would_have_got_and_stale_ids_stay_refused() {
    let (mesh, _) = rooms();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let params = PARAMS;
    let agents: Vec<AgentId> = (0..6)
        .map(|i| {
            crowd
                .add_agent(Vec3::new(1.0 + i as f32, 0.0, 3.0), params)
                .unwrap()
        })
        .collect();
    crowd.remove_agent(agents[1]).unwrap();
    crowd.remove_agent(agents[4]).unwrap();
    let mut restored = Crowd::restore(&mesh, CrowdConfig::default(), &crowd.save()).unwrap();
    for stale in [agents[1], agents[4]] {
        assert_eq!(
            restored.position(stale).unwrap_err().to_string(),
            format!("{stale} is not an agent of this crowd (removed, or never issued by it)")
        );
    }
    for _ in 0..3 {
        let expected = crowd.add_agent(Vec3::new(5.0, 0.0, 2.0), params).unwrap();
        let found = restored
            .add_agent(Vec3::new(5.0, 0.0, 2.0), params)
            .unwrap();
        assert_eq!(found, expected);
    }
    assert_ne!(
        restored
            .add_agent(Vec3::new(5.0, 0.0, 2.0), params)
            .unwrap(),
        agents[4]
    );
}

#[test]
fn a_crowd_crossing_a_door_restores_mid_crossing_and_lands_as_it_would_have() {
    let (mut mesh, _) = rooms();
    mesh.add_link(rooms_door(true)).unwrap();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd.add_agent(Vec3::new(7.0, 0.0, 3.0), PARAMS).unwrap();
    crowd
        .request_move(agent, Vec3::new(19.0, 0.0, 3.0))
        .unwrap();
    let mut frames = 0;
    while crowd.status(agent).unwrap() != AgentStatus::CrossingLink {
        crowd.step(DT, &mut KinematicController).unwrap();
        frames += 1;
        assert!(frames < 300, "the agent reaches the door");
    }
    let mut restored = Crowd::restore(&mesh, CrowdConfig::default(), &crowd.save()).unwrap();
    assert_eq!(
        restored.crossing(agent).unwrap(),
        crowd.crossing(agent).unwrap()
    );
    let mut arrived = false;
    for _ in 0..300 {
        let expected = crowd.step(DT, &mut KinematicController).unwrap();
        let found = restored.step(DT, &mut KinematicController).unwrap();
        assert_eq!(found, expected);
        arrived |= expected
            .iter()
            .any(|event| matches!(event, CrowdEvent::Arrived { .. }));
    }
    assert!(arrived);
    assert_eq!(views(&restored), views(&crowd));
}

/// A small crowd on the rooms with a door, walking, as bytes.
fn rooms_save() -> (NavMesh, LinkId, Vec<u8>) {
    let (mut mesh, _) = rooms();
    let door = mesh.add_link(rooms_door(true)).unwrap();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    for i in 0..4 {
        let agent = crowd
            .add_agent(Vec3::new(2.0 + i as f32, 0.0, 3.0), PARAMS)
            .unwrap();
        crowd
            .request_move(agent, Vec3::new(19.0, 0.0, 3.0))
            .unwrap();
    }
    for _ in 0..10 {
        crowd.step(DT, &mut KinematicController).unwrap();
    }
    (mesh, door, crowd.save())
}

#[test]
fn truncated_corrupted_and_foreign_bytes_are_refused_by_value() {
    let (mesh, _, bytes) = rooms_save();
    let config = CrowdConfig::default();
    let restore = |bytes: &[u8]| Crowd::restore(&mesh, config, bytes).err();
    assert!(restore(&bytes).is_none());

    let cut = &bytes[..bytes.len() - 100];
    assert_eq!(
        restore(cut),
        Some(RestoreError::Truncated {
            expected: bytes.len() as u64 - 24,
            found: bytes.len() as u64 - 124,
        })
    );
    assert!(matches!(
        restore(&bytes[..10]),
        Some(RestoreError::Truncated {
            expected: 24,
            found: 10
        })
    ));

    let mut corrupted = bytes.clone();
    let middle = corrupted.len() / 2;
    corrupted[middle] ^= 0x10;
    let error = restore(&corrupted).unwrap();
    assert!(matches!(error, RestoreError::Checksum { stored, computed } if stored != computed));
    assert!(error.to_string().contains("corrupted"), "{error}");

    let mut other_version = bytes.clone();
    other_version[8..12].copy_from_slice(&(Crowd::SAVE_FORMAT_VERSION + 1).to_le_bytes());
    assert_eq!(
        restore(&other_version),
        Some(RestoreError::Version {
            found: Crowd::SAVE_FORMAT_VERSION + 1,
            supported: Crowd::SAVE_FORMAT_VERSION,
        })
    );

    let error = restore(b"PK\x03\x04 a zip file").unwrap();
    assert!(matches!(error, RestoreError::NotASave { .. }));
    assert!(
        error.to_string().starts_with("not a saved crowd"),
        "{error}"
    );
    assert!(restore(&[]).is_some());
}

/// `bytes` with the payload's checksum made right again: what a faulty build would write.
fn checksummed(mut bytes: Vec<u8>) -> Vec<u8> {
    let checksum = crc32fast::hash(&bytes[24..]);
    bytes[20..24].copy_from_slice(&checksum.to_le_bytes());
    bytes
}

#[test]
fn a_checksum_valid_save_with_any_byte_changed_is_refused_by_value_or_restored_never_a_panic() {
    let (mesh, _, bytes) = rooms_save();
    let config = CrowdConfig::default();
    // The agents' block announces a length past the payload's end: refused naming it.
    let at = bytes
        .windows(4)
        .position(|window| window == b"AGTS")
        .expect("the agents' block")
        + 4;
    let mut long = bytes.clone();
    long[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let error = Crowd::restore(&mesh, config, &checksummed(long))
        .err()
        .expect("refused");
    assert!(
        matches!(
            &error,
            RestoreError::Malformed {
                section: "agents",
                ..
            }
        ),
        "{error}"
    );
    // Every byte of the payload, each of three bit flips, checksum made right: a typed
    // error or a crowd that steps (a flipped float is still a float), never a panic.
    let (mut refused, mut restored) = (0, 0);
    for position in 24..bytes.len() {
        for bit in [0x01u8, 0x10, 0x80] {
            let mut changed = bytes.clone();
            changed[position] ^= bit;
            match Crowd::restore(&mesh, config, &checksummed(changed)) {
                Ok(mut crowd) => {
                    // And it steps (whatever the flip made of it) without a panic.
                    let _ = crowd.step(DT, &mut KinematicController);
                    restored += 1;
                }
                Err(RestoreError::Malformed { .. })
                | Err(RestoreError::TileChanged { .. })
                | Err(RestoreError::LinkChanged { .. }) => refused += 1,
                Err(other) => panic!("byte {position} ^ {bit:#x}: {other}"),
            }
        }
    }
    assert!(
        refused > 0 && restored > 0,
        "{refused} refused, {restored} restored"
    );
}

/// Whether every agent of `crowd` stands at a finite point inside the world and moves at a
/// finite speed within the speed limit.
fn agents_sane(crowd: &Crowd) -> bool {
    use waymark::geom::limits::{COORDINATE_MAX_M, SPEED_MAX_MPS, within_each};
    crowd.agents().all(|agent| {
        within_each(agent.position, COORDINATE_MAX_M) && within_each(agent.velocity, SPEED_MAX_MPS)
    })
}

#[test]
fn a_checksum_valid_save_with_insane_numbers_is_refused_never_restored() {
    // Checksums say the bytes are the ones written, not that the values are sane: every
    // 4-byte window of the payload overwritten with NaN, infinity, 1e20 and 3.4e38, the
    // checksum made right, is refused with a typed error or restores a crowd whose agents
    // are all finite and inside the world, before and after a step. (Once 75 of 76 NaN or
    // infinite values written into a save were restored without a word.)
    let (mesh, _, bytes) = rooms_save();
    let config = CrowdConfig::default();
    let (mut refused, mut restored) = (0, 0);
    for position in 24..bytes.len() - 3 {
        for value in [f32::NAN, f32::INFINITY, 1e20, 3.4e38] {
            let mut changed = bytes.clone();
            changed[position..position + 4].copy_from_slice(&value.to_le_bytes());
            match Crowd::restore(&mesh, config, &checksummed(changed)) {
                Ok(mut crowd) => {
                    assert!(agents_sane(&crowd), "byte {position} = {value}: restored");
                    crowd.step(DT, &mut KinematicController).unwrap();
                    assert!(agents_sane(&crowd), "byte {position} = {value}: stepped");
                    restored += 1;
                }
                Err(RestoreError::Malformed { .. })
                | Err(RestoreError::TileChanged { .. })
                | Err(RestoreError::LinkChanged { .. }) => refused += 1,
                Err(other) => panic!("byte {position} = {value}: {other}"),
            }
        }
    }
    assert!(refused > 0, "{refused} refused, {restored} restored");
}

#[test]
fn a_save_against_a_changed_mesh_is_refused_naming_the_tile_or_link_and_both_versions() {
    let (mut mesh, door, bytes) = rooms_save();
    let config = CrowdConfig::default();
    let version_at_save = mesh.snapshot().link(door).unwrap().version;
    let closed = mesh.set_link_open(door, false).unwrap();
    let error = Crowd::restore(&mesh, config, &bytes).err().unwrap();
    assert_eq!(
        error,
        RestoreError::LinkChanged {
            link: door,
            saved: version_at_save,
            mesh: closed,
        }
    );
    assert_eq!(
        error.to_string(),
        format!(
            "link {} changed since the save: version {} then, {} in the mesh now",
            door.0, version_at_save.0, closed.0
        )
    );
    assert_ne!(closed, LinkVersion(0));

    // A tile rebuilt (committed again, a new generation) since the save.
    let (mut mesh, tiles) = rooms();
    let door = mesh.add_link(rooms_door(true)).unwrap();
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    crowd.add_agent(Vec3::new(2.0, 0.0, 3.0), PARAMS).unwrap();
    let bytes = crowd.save();
    let slot = mesh.commit_rebuilt_tile(tiles[0].clone()).unwrap();
    let now = mesh.snapshot().data().slots[usize::from(slot.0)].generation;
    match Crowd::restore(&mesh, config, &bytes).err().unwrap() {
        RestoreError::TileChanged {
            slot: named,
            saved,
            mesh,
        } => {
            assert_eq!(named, slot);
            assert_eq!(mesh, now);
            assert!(
                saved < now && saved != TileGeneration(0),
                "{saved:?} {now:?}"
            );
        }
        other => panic!("{other}"),
    }
    let _ = door;
}

/// Steps both crowds `frames` frames, asserting the same events (epochs aside) each frame
/// and the same agents at the end; returns the events.
fn step_alike(whole: &mut Crowd, restored: &mut Crowd, frames: usize) -> Vec<CrowdEvent> {
    let mut all = Vec::new();
    for _ in 0..frames {
        let expected = whole.step(DT, &mut KinematicController).unwrap();
        let found = restored.step(DT, &mut KinematicController).unwrap();
        assert_eq!(
            found.iter().map(epoch_zero).collect::<Vec<_>>(),
            expected.iter().map(epoch_zero).collect::<Vec<_>>(),
            "frame {}",
            whole.frame()
        );
        all.extend(expected);
    }
    assert_eq!(views(restored), views(whole));
    all
}

#[test]
fn a_crowd_on_a_turntable_restores_its_motion_and_rides_on_as_it_would_have() {
    // The turntable scenario's table and twenty walkers, saved while some cross it: the
    // table's motion (centre, turn rate) is part of the save, so the restored crowd
    // carries and leans exactly as the uninterrupted one.
    let (scenario, mut crowd) = turntable_crowd(20, |config| config);
    let config = scenario.config;
    let (support, motion) = scenario.supports[0];
    for _ in 0..90 {
        crowd.step(0.1, &mut KinematicController).unwrap();
    }
    let on_table = crowd
        .agents()
        .filter(|view| {
            let polygon = crowd.polygon(view.id).unwrap();
            crowd.snapshot().support_layer(polygon) == Some(1)
        })
        .count();
    assert!(on_table > 0, "someone is on the table when saved");
    let mut restored = Crowd::restore(&scenario.mesh, config, &crowd.save()).unwrap();
    assert_eq!(restored.support_motion(support), motion);
    for _ in 0..150 {
        let expected = crowd.step(0.1, &mut KinematicController).unwrap();
        let found = restored.step(0.1, &mut KinematicController).unwrap();
        assert_eq!(
            found.iter().map(epoch_zero).collect::<Vec<_>>(),
            expected.iter().map(epoch_zero).collect::<Vec<_>>()
        );
    }
    assert_eq!(views(&restored), views(&crowd));
    assert_eq!(state_hash(&restored), state_hash(&crowd));
}

#[test]
fn h5_interrupted_at_move_admission_the_order_keeps_its_identity_and_runs_as_it_would_have() {
    let (mesh, _) = rooms();
    let config = CrowdConfig::default();
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let agent = crowd.add_agent(Vec3::new(2.0, 0.0, 3.0), PARAMS).unwrap();
    crowd.step(DT, &mut KinematicController).unwrap();
    // Admitted, not yet ingested: the save holds the order and its pending request.
    let order = crowd.request_move(agent, Vec3::new(8.0, 0.0, 3.0)).unwrap();
    let mut restored = Crowd::restore(&mesh, config, &crowd.save()).unwrap();
    assert_eq!(restored.request(agent).unwrap(), Some(order));
    let query = restored.query(agent).unwrap().unwrap();
    assert_eq!(
        (query.logical, query.attempt, query.epoch),
        (order.logical, 1, 1)
    );
    let events = step_alike(&mut crowd, &mut restored, 120);
    assert!(events.contains(&CrowdEvent::Arrived {
        agent,
        request: order
    }));
}

#[test]
fn h5_interrupted_before_a_cancel_receipt_the_receipt_carries_the_same_record() {
    let (mesh, _) = rooms();
    let config = CrowdConfig::default();
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let agent = crowd.add_agent(Vec3::new(2.0, 0.0, 3.0), PARAMS).unwrap();
    let order = crowd.request_move(agent, Vec3::new(8.0, 0.0, 3.0)).unwrap();
    for _ in 0..20 {
        crowd.step(DT, &mut KinematicController).unwrap();
    }
    let record = crowd.cancel(agent).unwrap();
    assert_eq!(record.order, Some(order));
    crowd.step(DT, &mut KinematicController).unwrap();
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Cancelling);
    let mut restored = Crowd::restore(&mesh, config, &crowd.save()).unwrap();
    assert_eq!(restored.status(agent).unwrap(), AgentStatus::Cancelling);
    assert_eq!(
        restored.cancel(agent).unwrap(),
        record,
        "the same record after the restore"
    );
    assert_eq!(
        restored.request_move(agent, Vec3::new(1.0, 0.0, 1.0)),
        crowd.request_move(agent, Vec3::new(1.0, 0.0, 1.0)),
        "the mover stays held until the receipt"
    );
    let events = step_alike(&mut crowd, &mut restored, 30);
    let receipts: Vec<&CrowdEvent> = events
        .iter()
        .filter(|event| matches!(event, CrowdEvent::Cancelled { .. }))
        .collect();
    assert_eq!(receipts, [&CrowdEvent::Cancelled { agent, record }]);
}
