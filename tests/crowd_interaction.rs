//! Interaction orders in the crowd: a target riding a moving object is
//! followed and its pose held; a teleported, replaced or vanished object ends the order
//! with the reason; an order under way survives save and restore, and replays from the
//! ordered log with the host's world. (The seat of spec 000, t10 and t11 end to end, is
//! in `spec_000_target_projection.rs`.)

use glam::{Affine3A, Vec2, Vec3};
use waymark::crowd::{
    AgentId, AgentParams, Crowd, CrowdConfig, CrowdEvent, FailureCondition, HoldPolicy,
    InteractionFailure, InteractionPhase, KinematicController, Outcome, Replay, RequestId,
};
use waymark::harness::HostWorld;
use waymark::ids::TransformVersion;
use waymark::mesh::{NavMesh, TileData, WalkablePolygon, blob::BakeParams};
use waymark::target::{
    BodyProfile, FacingRule, InPlaceRule, InteractionRule, ObjectMotion, ObjectState, Placement,
    Shape, SightFrom, StandArea, StaticWorld, TargetRecord, Tolerances,
};

const DT: f32 = 0.1;
const CART: u32 = 5;
/// The cart's speed along +x, m/s.
const CART_SPEED: f32 = 0.5;
const START: Vec3 = Vec3::new(1.0, 0.0, 1.0);

/// Open ground, 30 m x 6 m, one polygon.
fn yard() -> NavMesh {
    let ground = WalkablePolygon::ground(vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(30.0, 0.0, 0.0),
        Vec3::new(30.0, 0.0, 6.0),
        Vec3::new(0.0, 0.0, 6.0),
    ]);
    let mut mesh = NavMesh::new(BakeParams::default());
    mesh.add_tiles(vec![TileData::from_walkable_polygons(&[ground]).unwrap()])
        .unwrap();
    mesh
}

/// The floor: all the collision world the cart's pose checks meet.
fn floor() -> StaticWorld {
    let mut world = StaticWorld::new();
    world
        .add(
            "floor",
            Shape::HalfSpace {
                normal: Vec3::Y,
                offset: 0.0,
            },
        )
        .unwrap();
    world
}

/// The cart's slot: stand 1 m behind its handle (local (0, 1.2, 0)) facing it, within
/// 0.4 to 1.5 m of it.
fn cart_slot(world: &StaticWorld) -> TargetRecord {
    TargetRecord {
        instance: 1,
        asset_version: 1,
        placement: Placement::Moving {
            reference_object: CART,
            geometry_version: 1,
        },
        slot: 0,
        body: BodyProfile {
            radius_m: 0.4,
            height_m: 1.8,
            eye_height_m: 1.6,
            hand_height_m: 1.2,
            hand_forward_m: 0.0,
            clearance_tolerance_m: 1e-4,
        },
        stand: StandArea::Points {
            points: vec![Vec3::new(0.0, 0.0, -1.0)],
            continuous_offset: false,
        },
        facing: FacingRule {
            forward: Vec2::new(0.0, 1.0),
            max_angle_deg: 30.0,
            in_place: InPlaceRule::Reject,
        },
        layer: 0,
        approach_side: None,
        tolerances: Tolerances {
            horizontal_m: 0.25,
            vertical_m: 0.5,
        },
        interaction: InteractionRule {
            contact: Vec3::new(0.0, 1.2, 0.0),
            distance_min_m: 0.4,
            distance_max_m: 1.5,
            line_of_sight: false,
            sight_from: SightFrom::Hand,
            sight_margin_m: 0.02,
            probe: None,
        },
        target_shape: world.find("floor").unwrap(),
        sample_spacing_m: 0.05,
        candidates_max: 16,
    }
}

/// The cart at `frame`: from (5, 0, 4), sliding along +x.
fn cart_at(frame: u64) -> ObjectMotion {
    ObjectMotion {
        world_from_object: Affine3A::from_translation(Vec3::new(
            5.0 + CART_SPEED * DT * frame as f32,
            0.0,
            4.0,
        )),
        transform_version: TransformVersion(frame + 1),
    }
}

fn crowd_with_agent(config: CrowdConfig) -> (Crowd, AgentId) {
    let mut crowd = Crowd::new(&yard(), config).unwrap();
    let agent = crowd
        .add_agent(START, AgentParams::DETOUR_REFERENCE)
        .unwrap();
    (crowd, agent)
}

/// One step with the cart in `state`; the orders ended in it.
fn step(crowd: &mut Crowd, world: &StaticWorld, state: ObjectState) -> Vec<(RequestId, Outcome)> {
    let objects = [(CART, state)];
    let host = HostWorld {
        collision: world,
        objects: &objects,
        fixed: &[],
    };
    ended(
        crowd
            .step_with(DT, &mut KinematicController, &host)
            .unwrap(),
    )
}

fn ended(events: Vec<CrowdEvent>) -> Vec<(RequestId, Outcome)> {
    events
        .into_iter()
        .filter_map(|event| match event {
            CrowdEvent::OrderEnded { order, outcome, .. } => Some((order, outcome)),
            _ => None,
        })
        .collect()
}

fn request(crowd: &mut Crowd, agent: AgentId, world: &StaticWorld) -> (RequestId, RequestId) {
    let objects = [(CART, ObjectState::Moving(cart_at(crowd.frame())))];
    let host = HostWorld {
        collision: world,
        objects: &objects,
        fixed: &[],
    };
    crowd
        .request_interaction(agent, cart_slot(world), HoldPolicy::SPEC_EXAMPLE, &host)
        .unwrap()
}

/// The slot's foot where the cart is at `frame`.
fn foot_at(frame: u64) -> Vec3 {
    cart_at(frame)
        .world_from_object
        .transform_point3(Vec3::new(0.0, 0.0, -1.0))
}

#[test]
fn an_agent_follows_a_target_sliding_at_half_a_metre_a_second_and_succeeds_at_its_pose() {
    let world = floor();
    let (mut crowd, agent) = crowd_with_agent(CrowdConfig::default());
    let (order, hold) = request(&mut crowd, agent, &world);
    let mut success_frame = None;
    for _ in 0..300 {
        let frame = crowd.frame();
        let ended = step(&mut crowd, &world, ObjectState::Moving(cart_at(frame)));
        if ended.contains(&(order, Outcome::Success)) {
            success_frame = Some(frame);
            break;
        }
        assert!(ended.is_empty(), "{ended:?}");
    }
    let frame = success_frame.expect("the interaction succeeds");
    // At the pose, moving with the cart: the fact was judged at the step's start, on the
    // cart's place for this frame; the step then carried the agent on with the cart, to
    // where the cart stands at the next frame.
    let foot = foot_at(frame + 1);
    let position = crowd.position(agent).unwrap();
    let error = Vec2::new(position.x - foot.x, position.z - foot.z).length();
    assert!(
        error <= HoldPolicy::SPEC_EXAMPLE.enter_m,
        "{position:?} {foot:?}"
    );
    let velocity = crowd.velocity(agent).unwrap();
    assert!(
        (velocity - Vec3::X * CART_SPEED).length() <= 0.02,
        "{velocity:?}"
    );
    assert!(
        foot.x > 5.0 + 1.0,
        "the cart moved on before the agent stood: {foot:?}"
    );
    let view = crowd.interaction(agent).unwrap().unwrap();
    assert_eq!(view.phase, InteractionPhase::Holding);

    // The hold keeps the pose as the cart slides on: its fact stays, the error within
    // the exit threshold.
    for _ in 0..50 {
        let frame = crowd.frame();
        let ended = step(&mut crowd, &world, ObjectState::Moving(cart_at(frame)));
        assert!(ended.is_empty(), "{ended:?}");
        let position = crowd.position(agent).unwrap();
        let foot = foot_at(frame + 1);
        let error = Vec2::new(position.x - foot.x, position.z - foot.z).length();
        assert!(
            error <= HoldPolicy::SPEC_EXAMPLE.exit_m,
            "{error} at frame {frame}"
        );
    }
    assert_eq!(crowd.hold(agent).unwrap().unwrap().fact, Some(1));
    assert_eq!(crowd.hold(agent).unwrap().unwrap().order, hold);
}

/// Walks toward the cart for `frames`, then gives `state` for the cart: the order ends
/// once the agent has braked; returns what ended.
fn interrupted_by(
    state: ObjectState,
    frames: u64,
) -> (RequestId, RequestId, Vec<(RequestId, Outcome)>) {
    let world = floor();
    let (mut crowd, agent) = crowd_with_agent(CrowdConfig::default());
    let (order, hold) = request(&mut crowd, agent, &world);
    let mut all = Vec::new();
    for _ in 0..frames {
        let frame = crowd.frame();
        all.extend(step(
            &mut crowd,
            &world,
            ObjectState::Moving(cart_at(frame)),
        ));
    }
    assert!(all.iter().all(|(id, _)| *id != order), "{all:?}");
    for _ in 0..60 {
        all.extend(step(&mut crowd, &world, state));
        if all.iter().any(|(id, _)| *id == order) {
            break;
        }
    }
    assert_eq!(crowd.owner(agent).unwrap(), None);
    assert_eq!(crowd.interaction(agent).unwrap(), None);
    (order, hold, all)
}

#[test]
fn a_teleported_target_fails_the_interaction_with_the_reason() {
    let away = ObjectState::Teleported(ObjectMotion {
        world_from_object: Affine3A::from_translation(Vec3::new(25.0, 0.0, 4.0)),
        transform_version: TransformVersion(99),
    });
    let (order, hold, ended) = interrupted_by(away, 10);
    let failed = Outcome::Failure(FailureCondition::Interaction(
        InteractionFailure::TargetTeleported,
    ));
    // The walk brakes and ends with the reason; its hold never started.
    assert_eq!(ended, vec![(hold, Outcome::Cancelled), (order, failed)]);
}

#[test]
fn a_replaced_or_vanished_target_fails_the_interaction_with_the_reason() {
    for (state, why) in [
        (ObjectState::Replaced, InteractionFailure::TargetReplaced),
        (ObjectState::Missing, InteractionFailure::TargetMissing),
    ] {
        let (order, _, ended) = interrupted_by(state, 5);
        let failed = Outcome::Failure(FailureCondition::Interaction(why));
        assert!(ended.contains(&(order, failed)), "{ended:?}");
    }
}

/// Runs `crowd` for `frames` with the cart sliding on: each order ended, with its frame.
fn run(crowd: &mut Crowd, world: &StaticWorld, frames: u64) -> Vec<(u64, RequestId, Outcome)> {
    let mut all = Vec::new();
    for _ in 0..frames {
        let frame = crowd.frame();
        let ended = step(crowd, world, ObjectState::Moving(cart_at(frame)));
        all.extend(
            ended
                .into_iter()
                .map(|(order, outcome)| (frame, order, outcome)),
        );
    }
    all
}

#[test]
fn an_interaction_under_way_is_saved_restored_and_ends_as_the_whole_run_does() {
    const FRAMES: u64 = 160;
    let world = floor();
    let config = CrowdConfig::default();
    let (mut whole, agent) = crowd_with_agent(config);
    let (order, hold) = request(&mut whole, agent, &world);
    // The whole run, noting when the hold took the mover and when the interaction ended.
    let mut phases = Vec::new();
    let mut whole_ended = Vec::new();
    for _ in 0..FRAMES {
        whole_ended.extend(run(&mut whole, &world, 1));
        phases.push(whole.interaction(agent).unwrap().map(|view| view.phase));
    }
    let success = whole_ended
        .iter()
        .find(|&&(_, ended, _)| ended == order)
        .map(|&(frame, _, outcome)| (frame, outcome));
    let Some((success_frame, Outcome::Success)) = success else {
        panic!("{whole_ended:?}");
    };
    let settling = phases
        .iter()
        .position(|phase| *phase == Some(InteractionPhase::Verifying))
        .expect("the hold settles before success") as u64;
    assert!(settling < success_frame);
    // Saved walking, settling on the pose, and holding it: each resumed run ends its
    // orders in the same frames with the same outcomes, the agent where the whole run's is.
    for split in [3, settling + 1, success_frame + 5] {
        let (mut first, agent) = crowd_with_agent(config);
        assert_eq!(request(&mut first, agent, &world), (order, hold));
        let mut ended = run(&mut first, &world, split);
        let bytes = first.save();
        let mut resumed = Crowd::restore(&yard(), config, &bytes).unwrap();
        let view = resumed.interaction(agent).unwrap();
        assert_eq!(view, first.interaction(agent).unwrap(), "split at {split}");
        ended.extend(run(&mut resumed, &world, FRAMES - split));
        assert_eq!(ended, whole_ended, "split at {split}");
        let (here, there) = (
            resumed.position(agent).unwrap(),
            whole.position(agent).unwrap(),
        );
        assert!(
            here.distance(there) < 1e-5,
            "split at {split}: {here:?} {there:?}"
        );
        assert_eq!(
            resumed.owner(agent).unwrap().map(|o| o.action),
            whole.owner(agent).unwrap().map(|o| o.action)
        );
    }
}

#[test]
fn a_logged_interaction_replays_with_the_hosts_world() {
    let world = floor();
    let config = CrowdConfig {
        ordered_log: true,
        ..CrowdConfig::default()
    };
    let (mut crowd, agent) = crowd_with_agent(config);
    // The log from here on replays from this save.
    crowd.drain_log(&mut Vec::new());
    let start = crowd.save();
    let mut log = Vec::new();
    let (order, _) = request(&mut crowd, agent, &world);
    let mut logged_ends = Vec::new();
    for _ in 0..120 {
        let frame = crowd.frame();
        logged_ends.extend(step(
            &mut crowd,
            &world,
            ObjectState::Moving(cart_at(frame)),
        ));
    }
    assert!(logged_ends.contains(&(order, Outcome::Success)));
    crowd.drain_log(&mut log);

    let mut again = Crowd::restore_for_replay(&yard(), config, &start).unwrap();
    let mut replay = Replay::start(&mut again, log.clone()).unwrap();
    // Without the world the interaction cannot be given again: refused by name.
    let mut blind = Crowd::restore_for_replay(&yard(), config, &start).unwrap();
    let mut blind_replay = Replay::start(&mut blind, log).unwrap();
    assert!(matches!(
        blind_replay.step(&mut blind, DT, &mut KinematicController, &mut |_, _| {}),
        Err(waymark::crowd::ReplayError::NeedsWorld { .. })
    ));
    let mut replayed_ends = Vec::new();
    for _ in 0..120 {
        let objects = [(CART, ObjectState::Moving(cart_at(again.frame())))];
        let host = HostWorld {
            collision: &world,
            objects: &objects,
            fixed: &[],
        };
        replayed_ends.extend(ended(
            replay
                .step_with(
                    &mut again,
                    DT,
                    &mut KinematicController,
                    &host,
                    &mut |_, _| {},
                )
                .unwrap(),
        ));
    }
    assert_eq!(replayed_ends, logged_ends);
    assert_eq!(
        again.position(agent).unwrap(),
        crowd.position(agent).unwrap()
    );
}

#[test]
fn interactions_end_the_same_at_one_and_two_threads() {
    // Twelve agents, each sent to its own slot along the sliding cart: the pass judges
    // orders on all cores, and applies what they ask in slot order.
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let world = floor();
            let mut crowd = Crowd::new(&yard(), CrowdConfig::default()).unwrap();
            let mut events = Vec::new();
            let mut agents = Vec::new();
            for index in 0..12 {
                let start = Vec3::new(1.0 + 1.5 * index as f32, 0.0, 0.8);
                let agent = crowd
                    .add_agent(start, AgentParams::DETOUR_REFERENCE)
                    .unwrap();
                // Slot `index`: a stand point and its handle 1 m ahead, along the cart.
                let along = -4.0 + 1.5 * index as f32;
                let mut record = cart_slot(&world);
                record.stand = StandArea::Points {
                    points: vec![Vec3::new(along, 0.0, -1.0)],
                    continuous_offset: false,
                };
                record.interaction.contact = Vec3::new(along, 1.2, 0.0);
                let objects = [(CART, ObjectState::Moving(cart_at(0)))];
                let host = HostWorld {
                    collision: &world,
                    objects: &objects,
                    fixed: &[],
                };
                crowd
                    .request_interaction(agent, record, HoldPolicy::SPEC_EXAMPLE, &host)
                    .unwrap();
                agents.push(agent);
            }
            for _ in 0..200 {
                let frame = crowd.frame();
                let objects = [(CART, ObjectState::Moving(cart_at(frame)))];
                let host = HostWorld {
                    collision: &world,
                    objects: &objects,
                    fixed: &[],
                };
                events.extend(
                    crowd
                        .step_with(DT, &mut KinematicController, &host)
                        .unwrap(),
                );
            }
            let positions: Vec<Vec3> = agents.iter().map(|&a| crowd.position(a).unwrap()).collect();

            (events, positions)
        })
    };
    let (one, two) = (run(1), run(2));
    let successes = ended(one.0.clone())
        .iter()
        .filter(|(_, outcome)| *outcome == Outcome::Success)
        .count();
    assert_eq!(successes, 12, "{successes} of 12 interactions succeeded");
    assert_eq!(one, two);
}
