//! Properties of the action handoff over 1,000 seeded random command sequences (spec 001):
//! moves (some with deadlines, some to unreachable or unsnappable targets),
//! cancels, velocity orders, holds, teleports, removals and additions, a door opened and closed,
//! and saves restored in place. After every step:
//! - every move order ends exactly once (`OrderEnded`), and one that has not ended is
//!   still its agent's order or the order its agent's braking holds;
//! - no mover has two owners: an agent with a move order is not braking nor under velocity
//!   control, and an order not ended is its agent's mover's owner (or the order its braking
//!   holds); a change of owner counts a handoff;
//! - a cancel asked again before its receipt returns the same record, and the receipt
//!   carries it;
//! - removed agents' ids are refused.
//!
//! - every corridor adopted read only what still held on the mesh the step ran on (checked
//!   from the ordered log).
//!
//! And a replay of each run's ordered log ends in the run's state, its paths read from the
//! log; a run restored from a save at a random frame ends in the state of the run that was
//! not (checked on every tenth seed).

mod common;

use std::collections::HashMap;

use common::{rooms, rooms_door};
use glam::Vec3;
use waymark::crowd::{
    AgentId, AgentParams, AgentStatus, CancelRecord, Crowd, CrowdConfig, CrowdError, CrowdEvent,
    Decision, HoldPolicy, KinematicController, LogEntry, LogRecord, LoggedAnswer, MoverAction,
    Replay, RequestId,
};
use waymark::harness::state_hash;
use waymark::mesh::{LinkId, NavMesh};
use waymark::query::{QueryFilter, Validity};

const DT: f32 = 1.0 / 30.0;
const SEEDS: u64 = 1_000;
const STEPS: u64 = 60;

const PARAMS: AgentParams = AgentParams {
    radius_m: 0.4,
    height_m: 1.5,
    ..AgentParams::DETOUR_REFERENCE
};

/// Targets: both rooms, the corridor, the far island (unreachable), and a point off the
/// mesh (no polygon near it).
const TARGETS: [Vec3; 6] = [
    Vec3::new(2.0, 0.0, 3.0),
    Vec3::new(8.0, 0.0, 2.0),
    Vec3::new(19.0, 0.0, 3.0),
    Vec3::new(12.0, 0.0, 9.5),
    Vec3::new(45.0, 0.0, 3.0),
    Vec3::new(300.0, 0.0, 300.0),
];

/// Station keeping with a short recovery, so holds fail as well as recover and end.
const HOLD: HoldPolicy = HoldPolicy {
    kp_per_s: 2.0,
    correction_cap_mps: 0.5,
    brake_budget_mps2: 1.0,
    position_deadband_m: 0.005,
    enter_m: 0.05,
    exit_m: 0.1,
    speed_enter_mps: 0.05,
    recovery_ticks: 20,
};

/// A small deterministic generator (xorshift64*).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

/// What the test knows of the orders it gave.
#[derive(Default)]
struct Ledger {
    /// Orders given and not yet ended, with their agents.
    open: HashMap<RequestId, AgentId>,
    /// Cancels asked and not yet receipted.
    cancels: HashMap<AgentId, CancelRecord>,
    /// Agents removed.
    removed: Vec<AgentId>,
    ended: usize,
    /// Each agent's last seen owner token: (handoff, action).
    owners: HashMap<AgentId, (u32, Option<MoverAction>)>,
}

/// One random command (or none) on a random agent.
fn command(
    crowd: &mut Crowd,
    mesh: &mut NavMesh,
    door: LinkId,
    agents: &mut Vec<AgentId>,
    ledger: &mut Ledger,
    random: &mut Random,
) {
    if agents.is_empty() {
        agents.push(crowd.add_agent(TARGETS[0], PARAMS).unwrap());
        return;
    }
    let index = random.below(agents.len() as u64) as usize;
    let agent = agents[index];
    let target = TARGETS[random.below(TARGETS.len() as u64) as usize];
    let choice = random.below(14);
    match choice {
        0..=3 => match crowd.request_move(agent, target) {
            Ok(order) => {
                ledger.open.insert(order, agent);
            }
            Err(CrowdError::Cancelling { record, .. }) => {
                // Braking for a cancel (noted) or a deadline (not): the same record.
                if let Some(noted) = ledger.cancels.get(&agent) {
                    assert_eq!(*noted, record);
                }
            }
            Err(other) => panic!("{other}"),
        },
        4 => {
            let deadline = crowd.frame() + 1 + random.below(40);
            match crowd.request_move_by(agent, target, deadline) {
                Ok(order) => {
                    ledger.open.insert(order, agent);
                }
                Err(CrowdError::Cancelling { .. }) => {}
                Err(other) => panic!("{other}"),
            }
        }
        5 => {
            let record = crowd.cancel(agent).unwrap();
            assert_eq!(
                crowd.cancel(agent).unwrap(),
                record,
                "asked again: the same record"
            );
            if let Some(&earlier) = ledger.cancels.get(&agent) {
                // A cancel under way (or a deadline's braking, which the test did not ask
                // for and so did not note) keeps its record.
                assert_eq!(record, earlier);
            }
            ledger.cancels.entry(agent).or_insert(record);
        }
        6 => match crowd.request_velocity(agent, Vec3::new(0.5, 0.0, 0.2)) {
            Ok(order) => {
                ledger.open.insert(order, agent);
            }
            Err(CrowdError::Cancelling { .. }) => {}
            Err(other) => panic!("{other}"),
        },
        7 => {
            crowd
                .teleport(agent, TARGETS[random.below(4) as usize])
                .unwrap();
        }
        8 => {
            crowd.remove_agent(agent).unwrap();
            ledger.cancels.remove(&agent);
            ledger.removed.push(agent);
            agents.swap_remove(index);
        }
        9 => {
            let open = mesh.snapshot().link(door).unwrap().open;
            mesh.set_link_open(door, !open).unwrap();
            crowd.set_mesh(mesh);
        }
        11 => match crowd.request_hold(agent, target.min(Vec3::new(24.0, 0.0, 11.0)), HOLD) {
            Ok(order) => {
                ledger.open.insert(order, agent);
            }
            Err(CrowdError::Cancelling { .. }) => {}
            Err(other) => panic!("{other}"),
        },
        12 => match crowd.request_move_then_hold(agent, target, HOLD) {
            Ok((walk, hold)) => {
                ledger.open.insert(walk, agent);
                ledger.open.insert(hold, agent);
            }
            Err(CrowdError::Cancelling { .. }) => {}
            Err(other) => panic!("{other}"),
        },
        10 => {
            agents.push(
                crowd
                    .add_agent(target.min(Vec3::new(24.0, 0.0, 11.0)), PARAMS)
                    .unwrap_or(agent),
            );
        }
        _ => {}
    }
}

/// Checks the step's events and the crowd's state against the ledger.
fn check(crowd: &Crowd, events: &[CrowdEvent], agents: &[AgentId], ledger: &mut Ledger) {
    for event in events {
        match *event {
            CrowdEvent::OrderEnded { agent, order, .. } => {
                assert_eq!(
                    ledger.open.remove(&order),
                    Some(agent),
                    "{order:?} ended twice, or was never given to {agent}"
                );
                ledger.ended += 1;
            }
            CrowdEvent::Cancelled { agent, record } => {
                assert_eq!(
                    ledger.cancels.remove(&agent),
                    Some(record),
                    "{agent}'s receipt"
                );
            }
            _ => {}
        }
    }
    for &agent in agents {
        let status = crowd.status(agent).unwrap();
        let order = crowd.request(agent).unwrap();
        if let Some(order) = order {
            assert!(
                ledger.open.contains_key(&order),
                "{agent}'s {order:?} ended already"
            );
            assert_ne!(
                status,
                AgentStatus::Cancelling,
                "{agent}: an order and a brake"
            );
            assert_ne!(
                status,
                AgentStatus::VelocityControlled,
                "{agent}: two orders"
            );
            assert_ne!(status, AgentStatus::Holding, "{agent}: a move and a hold");
        }
    }
    // An order not ended owns its agent's mover, or is the order its braking holds, or the
    // hold reserved beside the move that owns it.
    for (&order, &agent) in &ledger.open {
        if let Ok(owner) = crowd.owner(agent) {
            let action = owner.map(|owner| owner.action);
            let reserved = crowd.reserved_hold(agent).unwrap();
            if reserved == Some(order) {
                assert!(
                    matches!(action, Some(MoverAction::Move(_))),
                    "{order:?} reserved beside {action:?}"
                );
                continue;
            }
            let holds = match action {
                Some(
                    MoverAction::Move(owning)
                    | MoverAction::Velocity(owning)
                    | MoverAction::Hold(owning),
                ) => owning == order,
                Some(MoverAction::Braking(record)) => record.order == Some(order),
                None => false,
            };
            assert!(
                holds,
                "{order:?} of {agent} neither runs nor ended: {action:?}"
            );
        }
    }
    // The handoff count only grows, and grows with every change of owner.
    for &agent in agents {
        let owner = crowd.owner(agent).unwrap();
        let handoff = owner.map(|owner| owner.handoff);
        if let (Some(now), Some(&(before, then))) = (handoff, ledger.owners.get(&agent)) {
            if owner.map(|owner| owner.action) != then {
                assert!(
                    now > before,
                    "{agent}: owner changed, handoff {before} -> {now}"
                );
            }
        }
        if let Some(owner) = owner {
            ledger
                .owners
                .insert(agent, (owner.handoff, Some(owner.action)));
        }
    }
    for &removed in &ledger.removed {
        assert!(
            matches!(crowd.status(removed), Err(CrowdError::UnknownAgent(id)) if id == removed)
        );
    }
}

/// The crowd's settings: the ordered log kept, and a node budget small enough that
/// searches run over several steps, so doors change under results in flight.
fn config() -> CrowdConfig {
    CrowdConfig {
        ordered_log: true,
        path_nodes_per_step: 24,
        path_nodes_per_agent: 0.0,
        ..CrowdConfig::default()
    }
}

fn setup() -> (NavMesh, LinkId, Crowd) {
    let (mut mesh, _) = rooms();
    let door = mesh.add_link(rooms_door(true)).unwrap();
    let crowd = Crowd::new(&mesh, config()).unwrap();
    (mesh, door, crowd)
}

/// Every corridor the step adopted read only what still held on the mesh it ran on.
fn check_adoptions(log: &[LogEntry], mesh: &NavMesh) {
    let snapshot = mesh.snapshot();
    // The crowd's default filter, made as the crowd makes it.
    let mut filter = QueryFilter::new();
    filter.set_links_allowed(true);
    for entry in log {
        if let LogRecord::Result {
            decision: Decision::Adopted,
            answer: LoggedAnswer::Corridor(corridor),
            ..
        } = &entry.record
        {
            assert_eq!(
                corridor.reads().still_valid_in(&snapshot, &filter),
                Validity::Valid,
                "entry {}",
                entry.sequence
            );
        }
    }
}

/// Runs one seed; with `restore_at`, the crowd is saved and replaced by its restore before
/// that step. Returns the final state hash, the orders ended and the log.
fn run(seed: u64, restore_at: Option<u64>) -> (u64, usize, Vec<LogEntry>) {
    let (mut mesh, door, mut crowd) = setup();
    let mut random = Random(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut agents: Vec<AgentId> = (0..4)
        .map(|i| crowd.add_agent(TARGETS[i % 3], PARAMS).unwrap())
        .collect();
    let mut ledger = Ledger::default();
    let mut log = Vec::new();
    for step in 0..STEPS {
        for _ in 0..random.below(3) {
            command(
                &mut crowd,
                &mut mesh,
                door,
                &mut agents,
                &mut ledger,
                &mut random,
            );
        }
        if restore_at == Some(step) {
            crowd = Crowd::restore(&mesh, config(), &crowd.save()).unwrap();
        }
        let events = crowd.step(DT, &mut KinematicController).unwrap();
        check(&crowd, &events, &agents, &mut ledger);
        let stepped = log.len();
        crowd.drain_log(&mut log);
        check_adoptions(&log[stepped..], &mesh);
    }
    (state_hash(&crowd), ledger.ended, log)
}

/// Replays `log` on a new crowd (the door toggled where the log changed the mesh);
/// returns the final state hash.
fn replay(log: Vec<LogEntry>) -> u64 {
    let (mut mesh, door, mut crowd) = setup();
    let mut replay = Replay::start(&mut crowd, log).unwrap();
    for _ in 0..STEPS {
        replay
            .step(&mut crowd, DT, &mut KinematicController, &mut |crowd, _| {
                let open = mesh.snapshot().link(door).unwrap().open;
                mesh.set_link_open(door, !open).unwrap();
                crowd.set_mesh(&mesh);
            })
            .unwrap();
    }
    state_hash(&crowd)
}

#[test]
fn every_order_ends_once_no_mover_has_two_owners_a_restore_changes_nothing_and_the_log_replays() {
    let mut ended = 0;
    for seed in 0..SEEDS {
        let (hash, ended_here, log) = run(seed, None);
        ended += ended_here;
        assert_eq!(replay(log), hash, "seed {seed}, replayed from its log");
        if seed % 10 == 0 {
            let restore_at = 1 + seed % (STEPS - 1);
            assert_eq!(
                run(seed, Some(restore_at)).0,
                hash,
                "seed {seed}, restored before step {restore_at}"
            );
        }
    }
    // The sequences do end orders in every way (not a run where nothing happens).
    assert!(ended > (SEEDS * 10) as usize, "{ended} orders ended");
}
