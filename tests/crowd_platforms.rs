//! Platforms: supports whose footprint moves (spec 002's platform geometry, spec
//! 004's carried body). A platform's polygons are baked in its own frame, in a tile of
//! their own; the crowd places them by the platform's offset, agents on it keep their
//! corridors in its frame, and links join it to the ground only while it is docked.

use glam::Vec3;
use waymark::crowd::{
    AgentParams, AgentStatus, Crowd, CrowdConfig, CrowdError, CrowdEvent, KinematicController,
    LinkDock, Outcome, PlatformMotion, PlatformPose, Shuttle,
};
use waymark::harness::{Scenario, ScenarioKind, run_scenario, scenario_crowd, state_hash};
use waymark::ids::SupportId;
use waymark::mesh::blob::BakeParams;
use waymark::mesh::{LinkDesc, LinkId, LinkKind, NavMesh, TileData, WalkablePolygon};

const WALKER: AgentParams = AgentParams {
    radius_m: 0.4,
    height_m: 1.8,
    max_speed_mps: 2.0,
    preferred_speed_mps: 1.4,
    max_acceleration_mps2: 4.0,
};

/// Where the deck is baked: 40 m below the ground, 100 m beside it.
const BAKED: Vec3 = Vec3::new(0.0, -40.0, 100.0);

fn rectangle(x0: f32, z0: f32, x1: f32, z1: f32, y: f32) -> Vec<Vec3> {
    vec![
        Vec3::new(x0, y, z0),
        Vec3::new(x1, y, z0),
        Vec3::new(x1, y, z1),
        Vec3::new(x0, y, z1),
    ]
}

/// The deck's tile: a 6 x 4 m platform (support 0) in its own frame, as tile (5, 0).
fn deck_tile() -> TileData {
    let mut deck = WalkablePolygon::ground(rectangle(
        BAKED.x,
        BAKED.z - 2.0,
        BAKED.x + 6.0,
        BAKED.z + 2.0,
        BAKED.y,
    ));
    deck.layer = 1;
    let mut tile = TileData::from_walkable_polygons(&[deck]).unwrap();
    tile.header.tile_x = 5;
    tile
}

/// A dock (x in [-10, 0], z in [-2, 2]) and the deck in a tile of its own, joined by one
/// ramp from (-0.3, 0, 0) to the deck's (0.3, 0, 0): a dock offset of (0.5, 40, -100)
/// puts the deck 0.5 m off the dock's edge.
fn dock_and_deck() -> (NavMesh, LinkId, Vec3) {
    let mut mesh = NavMesh::new(BakeParams::default());
    let dock = WalkablePolygon::ground(rectangle(-10.0, -2.0, 0.0, 2.0, 0.0));
    mesh.add_tiles(vec![
        TileData::from_walkable_polygons(&[dock]).unwrap(),
        deck_tile(),
    ])
    .unwrap();
    let ramp = mesh
        .add_link(LinkDesc {
            kind: LinkKind::Custom(1),
            start: Vec3::new(-0.3, 0.0, 0.0),
            end: BAKED + Vec3::new(0.3, 0.0, 0.0),
            bidirectional: true,
            radius_m: 0.5,
            open: true,
        })
        .unwrap();
    (mesh, ramp, Vec3::new(0.5, 0.0, 0.0) - BAKED)
}

fn placed(offset: Vec3, velocity: Vec3) -> Option<PlatformMotion> {
    Some(PlatformMotion::placed_at(offset, velocity))
}

#[test]
fn a_corridor_on_a_moving_platform_stays_adopted_while_it_moves_and_is_rejected_when_its_shape_changes()
 {
    let (mut mesh, _, docked) = dock_and_deck();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let deck = SupportId(0);
    crowd
        .set_platform_motion(deck, placed(docked, Vec3::ZERO))
        .unwrap();
    // A walker on the deck, going to its far end, while the host sails the deck along +x
    // at 1 m/s and lifts it at 0.2 m/s (a ferry on a swell).
    let start = BAKED + Vec3::new(0.5, 0.0, 0.0);
    let agent = crowd.add_agent(start, WALKER).unwrap();
    let target = BAKED + Vec3::new(5.5, 0.0, 1.0);
    let order = crowd.request_move(agent, target).unwrap();
    let mut controller = KinematicController;
    let velocity = Vec3::new(1.0, 0.2, 0.0);
    let mut offset = docked;
    let mut adopted = None;
    let mut kept_frames = 0;
    for frame in 0..80 {
        crowd
            .set_platform_motion(deck, placed(offset, velocity))
            .unwrap();
        let events = crowd.step(0.1, &mut controller).unwrap();
        offset += velocity * 0.1;
        assert!(
            !events
                .iter()
                .any(|event| matches!(event, CrowdEvent::RouteInvalidated { .. })),
            "frame {frame}: {events:?}"
        );
        // The same corridor, frame after frame, while the deck moves under it.
        if let Some(corridor) = crowd.corridor(agent).unwrap() {
            let pointer = corridor as *const _;
            match adopted {
                None => adopted = Some(pointer),
                Some(first) => {
                    assert_eq!(first, pointer, "frame {frame}: the corridor was replaced");
                    kept_frames += 1;
                }
            }
        }
        // The foot is in the deck's frame, on the deck; the world sees it carried.
        let local = crowd.position(agent).unwrap();
        let world = crowd.world_position(agent).unwrap();
        assert!((world - (local + offset)).length() < 1e-4, "frame {frame}");
        assert_eq!(crowd.platform_pose(deck).offset, offset);
        assert!((local.y - BAKED.y).abs() < 1e-3);
    }
    assert!(kept_frames > 30, "kept {kept_frames} frames");
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Arrived);
    assert!(crowd.position(agent).unwrap().distance(target) < 0.25);
    // Its world velocity at rest is the deck's.
    let world_velocity = crowd.world_velocity(agent).unwrap();
    assert!((world_velocity - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-3);

    // Sent back, then the deck is rebuilt (its shape version, the tile's generation,
    // changes): the corridor that read it is rejected, named, and a new one found.
    let back = crowd.request_move(agent, start).unwrap();
    for _ in 0..5 {
        crowd.step(0.1, &mut controller).unwrap();
    }
    assert!(crowd.corridor(agent).unwrap().is_some());
    mesh.add_tiles(vec![deck_tile()]).unwrap();
    crowd.set_mesh(&mesh);
    let events = crowd.step(0.1, &mut controller).unwrap();
    assert!(
        events.iter().any(|event| matches!(
            event,
            CrowdEvent::RouteInvalidated { agent: a, request, changed }
                if *a == agent && *request == back
                    && matches!(changed, waymark::query::Validity::TileChanged(_))
        )),
        "{events:?}"
    );
    let mut ended = None;
    for _ in 0..100 {
        for event in crowd.step(0.1, &mut controller).unwrap() {
            if let CrowdEvent::OrderEnded {
                order: o, outcome, ..
            } = event
            {
                if o == back {
                    ended = Some(outcome);
                }
            }
        }
    }
    assert_eq!(ended, Some(Outcome::Success));
    assert_ne!(order, back);
}

#[test]
fn a_ramp_that_loses_its_dock_mid_crossing_puts_the_walker_back_on_the_dock_and_it_boards_later() {
    let (mesh, ramp, docked) = dock_and_deck();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let deck = SupportId(0);
    crowd
        .set_platform_motion(deck, placed(docked, Vec3::ZERO))
        .unwrap();
    crowd
        .set_link_dock(
            ramp,
            Some(LinkDock {
                support: deck,
                pose: PlatformPose::at(docked),
                tolerance_m: 0.05,
            }),
        )
        .unwrap();
    let agent = crowd.add_agent(Vec3::new(-4.0, 0.0, 0.0), WALKER).unwrap();
    let target = BAKED + Vec3::new(4.0, 0.0, 0.0);
    let order = crowd.request_move(agent, target).unwrap();
    let mut controller = KinematicController;
    let mut started = None;
    for frame in 0..100 {
        let events = crowd.step(0.1, &mut controller).unwrap();
        if events
            .iter()
            .any(|event| matches!(event, CrowdEvent::LinkStarted { .. }))
        {
            started = Some(frame);
            break;
        }
    }
    assert!(started.is_some(), "the walker reached the ramp");
    let entry = crowd.position(agent).unwrap();
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::CrossingLink);
    // The deck casts off mid-crossing: the walker is back at the ramp's entry, on the
    // dock, and stays there (never on the deck, never in the water) while it is away.
    let away = docked + Vec3::new(3.0, 0.0, 0.0);
    crowd
        .set_platform_motion(deck, placed(away, Vec3::ZERO))
        .unwrap();
    for frame in 0..60 {
        crowd.step(0.1, &mut controller).unwrap();
        let position = crowd.world_position(agent).unwrap();
        assert!(
            position.x <= 0.0 && position.y.abs() < 1e-3,
            "frame {frame}: {position}"
        );
        assert_eq!(crowd.polygon(agent).unwrap(), crowd.polygon(agent).unwrap());
        assert_eq!(
            mesh.snapshot().support_layer(crowd.polygon(agent).unwrap()),
            Some(0)
        );
        assert_ne!(crowd.status(agent).unwrap(), AgentStatus::CrossingLink);
    }
    let waiting = crowd.position(agent).unwrap();
    assert!(
        waiting.distance(entry) < 0.3,
        "waits at the entry: {waiting} from {entry}"
    );
    assert_eq!(
        crowd.request(agent).unwrap(),
        Some(order),
        "the order holds"
    );
    // Back at the dock: it crosses and walks to its place on the deck.
    crowd
        .set_platform_motion(deck, placed(docked, Vec3::ZERO))
        .unwrap();
    let mut outcome = None;
    for _ in 0..100 {
        for event in crowd.step(0.1, &mut controller).unwrap() {
            if let CrowdEvent::OrderEnded {
                order: o,
                outcome: out,
                ..
            } = event
            {
                if o == order {
                    outcome = Some(out);
                }
            }
        }
    }
    assert_eq!(outcome, Some(Outcome::Success));
    assert_eq!(
        mesh.snapshot().support_layer(crowd.polygon(agent).unwrap()),
        Some(1)
    );
    assert!(crowd.position(agent).unwrap().distance(target) < 0.25);
}

#[test]
fn platform_motions_and_docks_are_refused_by_value() {
    let (mesh, ramp, docked) = dock_and_deck();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let deck = SupportId(0);
    let bad = Shuttle {
        from: docked,
        to: docked + Vec3::X,
        dwell_frames: 10,
        travel_frames: 0,
    };
    assert!(matches!(
        crowd.set_platform_motion(deck, Some(PlatformMotion::Shuttle(bad))),
        Err(CrowdError::BadPlatformMotion { support, problem, .. })
            if support == deck && problem == "travel_frames must be at least 1"
    ));
    assert!(matches!(
        crowd.set_platform_motion(deck, placed(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::ZERO)),
        Err(CrowdError::BadPlatformMotion { .. })
    ));
    assert!(matches!(
        crowd.set_platform_motion(SupportId(u32::MAX), placed(docked, Vec3::ZERO)),
        Err(CrowdError::UnknownSupport(_))
    ));
    // A support is a belt or a platform, not both, whichever is set first.
    crowd
        .set_support_velocity(SupportId(3), Vec3::new(1.0, 0.0, 0.0))
        .unwrap();
    assert!(matches!(
        crowd.set_platform_motion(SupportId(3), placed(docked, Vec3::ZERO)),
        Err(CrowdError::PlatformWithSurfaceMotion { support }) if support == SupportId(3)
    ));
    crowd
        .set_platform_motion(deck, placed(docked, Vec3::ZERO))
        .unwrap();
    assert!(matches!(
        crowd.set_support_rotation(deck, Vec3::ZERO, 0.5),
        Err(CrowdError::PlatformWithSurfaceMotion { .. })
    ));
    let dock = LinkDock {
        support: deck,
        pose: PlatformPose::at(docked),
        tolerance_m: f32::NAN,
    };
    assert!(matches!(
        crowd.set_link_dock(ramp, Some(dock)),
        Err(CrowdError::BadLinkDock { link, problem, .. })
            if link == ramp && problem == "tolerance_m must be finite and at least 0"
    ));
    assert!(matches!(
        crowd.set_link_dock(LinkId(7), None),
        Err(CrowdError::UnknownLink(LinkId(7)))
    ));
    // Refusals changed nothing; a platform removed stands where it was baked.
    assert_eq!(crowd.link_dock(ramp), None);
    assert_eq!(crowd.platform_pose(deck).offset, docked);
    crowd.set_platform_motion(deck, None).unwrap();
    assert_eq!(crowd.platform_pose(deck).offset, Vec3::ZERO);
    assert_eq!(crowd.platform_motion(deck), None);
}

fn check_every_agent_rides_over(kind: ScenarioKind, agents: usize) {
    let scenario = Scenario::new(kind, agents).unwrap();
    let (report, crowd) = run_scenario(&scenario, |_, _| {}).unwrap();
    assert_eq!(report.unarrived_agents, 0, "{kind:?}: {report:?}");
    assert_eq!(report.arrivals, agents);
    assert_eq!(report.off_mesh_agents, 0);
    assert_eq!(report.fell_off_support, 0);
    assert_eq!(report.stuck_agents, 0);
    assert!(report.stop_error_m < 0.25);
    // Everyone ends on the far plaza (its places start two metres in from its edge), off the
    // platform (layer 0), at the plaza's height in the world. (Arrived agents may since
    // have been nudged from their places by later arrivals.)
    let far_edge = scenario
        .agents
        .iter()
        .map(|&(_, place)| place.x)
        .fold(f32::INFINITY, f32::min)
        - 2.0;
    for view in crowd.agents() {
        let agent = view.id;
        let (_, place) = scenario.agents[agent.index() as usize];
        assert!(
            view.position.x >= far_edge - 1e-3 && (view.position.y - place.y).abs() < 1e-3,
            "{agent:?} at {} (its place {place})",
            view.position
        );
        assert_eq!(
            crowd
                .snapshot()
                .support_layer(crowd.polygon(agent).unwrap()),
            Some(0)
        );
    }
}

#[test]
fn ferry_every_passenger_crosses_the_river_and_nobody_falls_off() {
    check_every_agent_rides_over(ScenarioKind::Ferry, 60);
}

#[test]
fn elevator_every_rider_reaches_the_upper_floor_and_nobody_falls_off() {
    check_every_agent_rides_over(ScenarioKind::Elevator, 40);
}

#[test]
fn a_ferry_crowd_saved_mid_voyage_resumes_as_if_never_stopped_at_1_and_2_threads() {
    let scenario = Scenario::new(ScenarioKind::Ferry, 30).unwrap();
    let run = |threads: usize, save_at: Option<usize>| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut crowd = scenario_crowd(&scenario).unwrap();
            for &(start, target) in &scenario.agents {
                let agent = crowd.add_agent(start, scenario.params).unwrap();
                crowd.request_move(agent, target).unwrap();
            }
            let mut controller = KinematicController;
            for frame in 0..400 {
                if Some(frame) == save_at {
                    let bytes = crowd.save();
                    crowd = Crowd::restore(&scenario.mesh, scenario.config, &bytes).unwrap();
                }
                crowd.step(scenario.dt_s, &mut controller).unwrap();
            }
            state_hash(&crowd)
        })
    };
    let whole = run(1, None);
    // Frame 170: the first passengers are aboard and the ferry is under way.
    assert_eq!(run(1, Some(170)), whole);
    assert_eq!(run(2, None), whole);
    assert_eq!(run(2, Some(170)), whole);
}

/// Records what a drawing draws.
#[derive(Default)]
struct Recorder {
    supports: Vec<Vec<Vec3>>,
    markers: Vec<Vec3>,
}

impl waymark::debug::DebugDraw for Recorder {
    fn line(&mut self, _: waymark::debug::DrawKind, _: Vec3, _: Vec3) {}
    fn triangle(&mut self, _: waymark::debug::DrawKind, _: [Vec3; 3]) {}
    fn polygon(&mut self, kind: waymark::debug::DrawKind, corners: &[Vec3]) {
        if kind == waymark::debug::DrawKind::Support {
            self.supports.push(corners.to_vec());
        }
    }
    fn point(&mut self, kind: waymark::debug::DrawKind, at: Vec3) {
        if kind == waymark::debug::DrawKind::Marker {
            self.markers.push(at);
        }
    }
}

#[test]
fn a_drawn_crowd_shows_the_platform_and_its_riders_where_the_platform_stands() {
    let (mesh, _, docked) = dock_and_deck();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let at_sea = docked + Vec3::new(7.0, 0.5, 3.0);
    crowd
        .set_platform_motion(SupportId(0), placed(at_sea, Vec3::ZERO))
        .unwrap();
    let rider = crowd
        .add_agent(BAKED + Vec3::new(3.0, 0.0, 1.0), WALKER)
        .unwrap();
    let mut drawing = Recorder::default();
    waymark::debug::draw_crowd(&crowd, &mut drawing);
    // The deck: x 7.5 to 13.5, z 1 to 5, 0.5 m up, where the offset puts it.
    assert_eq!(drawing.supports.len(), 1);
    for corner in &drawing.supports[0] {
        assert!((7.5..=13.5).contains(&corner.x), "{corner}");
        assert!((1.0..=5.0).contains(&corner.z), "{corner}");
        assert!((corner.y - 0.5).abs() < 1e-4, "{corner}");
    }
    assert_eq!(drawing.markers, [crowd.world_position(rider).unwrap()]);
    assert!((drawing.markers[0] - Vec3::new(10.5, 0.5, 4.0)).length() < 1e-3);
}

#[test]
fn a_rider_on_a_shuttle_is_told_the_shuttles_acceleration_for_its_contact_solve() {
    let (mesh, _, docked) = dock_and_deck();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let shuttle = Shuttle {
        from: docked,
        to: docked + Vec3::new(12.0, 0.0, 0.0),
        dwell_frames: 5,
        travel_frames: 40,
    };
    crowd
        .set_platform_motion(SupportId(0), Some(PlatformMotion::Shuttle(shuttle)))
        .unwrap();
    let rider = crowd
        .add_agent(BAKED + Vec3::new(3.0, 0.0, 0.0), WALKER)
        .unwrap();
    let walker = crowd.add_agent(Vec3::new(-5.0, 0.0, 0.0), WALKER).unwrap();
    let mut controller = KinematicController;
    let mut seen = Vec::new();
    for frame in 0..60u64 {
        let terms = crowd.body_acceleration_terms(rider).unwrap();
        assert_eq!(terms.translation, shuttle.acceleration_at(frame, 0.1));
        seen.push(terms.translation.x);
        // Still ground gives nothing.
        assert_eq!(
            crowd.body_acceleration_terms(walker).unwrap(),
            Default::default()
        );
        crowd.step(0.1, &mut controller).unwrap();
        // It rides: the world sees it where the shuttle is.
        let carried = crowd.world_position(rider).unwrap() - crowd.position(rider).unwrap();
        assert!((carried - shuttle.offset_at(frame + 1)).length() < 1e-4);
    }
    // Speeding up, then slowing down, then standing.
    assert!(
        seen[6] > 0.3 && seen[40] < -0.3 && seen[3] == 0.0,
        "{seen:?}"
    );
}

#[test]
fn the_proving_grounds_lift_carries_walkers_from_its_lower_floor_to_its_upper() {
    use waymark::bake::{BakeConfig, Preset, bake};
    use waymark::harness::{add_lift_doors, run_lift};
    let ground = waymark::scene::proving_ground::proving_ground();
    let config = BakeConfig::preset(Preset::Guard);
    let world = ground.scene.world_triangles().unwrap();
    let mut mesh = NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap();
    let lift = ground.lift.clone();
    let doors = add_lift_doors(&mut mesh, &lift).unwrap();
    // Every door attached to a floor at one end and the car at the other.
    let snapshot = mesh.snapshot();
    for &(link, lower) in &doors {
        let link = snapshot.link(link).unwrap();
        let layers = [link.start_polygon, link.end_polygon]
            .map(|polygon| polygon.and_then(|polygon| snapshot.support_layer(polygon)));
        let car = Some((lift.support.0 + 1) as u16);
        assert!(
            layers == [Some(0), car] || layers == [car, Some(0)],
            "{link:?} (lower {lower}): {layers:?}"
        );
    }
    let dt = 1.0 / 30.0;
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    run_lift(&mut crowd, &lift, &doors, dt).unwrap();
    let params = AgentParams {
        radius_m: config.agent_radius_m,
        ..WALKER
    };
    let (lower, upper) = lift.floors;
    let mut riders = Vec::new();
    for index in 0..6 {
        let start = lower
            + Vec3::new(
                -0.6 + 0.9 * (index % 2) as f32,
                0.0,
                -1.5 + 0.9 * (index / 2) as f32,
            );
        let agent = crowd.add_agent(start, params).unwrap();
        let place = upper + Vec3::new(0.0, 0.0, -2.5 + 1.0 * index as f32);
        riders.push((agent, crowd.request_move(agent, place).unwrap(), place));
    }
    let mut controller = KinematicController;
    let (mut succeeded, mut rode) = (0, vec![false; riders.len()]);
    let car_layer = lift.support.0 + 1;
    for _ in 0..(60.0 / dt) as usize {
        for event in crowd.step(dt, &mut controller).unwrap() {
            if let CrowdEvent::OrderEnded {
                outcome: Outcome::Success,
                ..
            } = event
            {
                succeeded += 1;
            }
        }
        for (rider, &(agent, _, _)) in rode.iter_mut().zip(&riders) {
            let layer = crowd
                .snapshot()
                .support_layer(crowd.polygon(agent).unwrap())
                .map(u32::from);
            *rider |= layer == Some(car_layer);
            // Never anywhere but on a floor, on the car, or crossing a door (the baked
            // surface is within a cell height of the authored one).
            let world = crowd.world_position(agent).unwrap();
            assert!(world.y > -0.2 && world.y < 3.2, "{world}");
        }
        if succeeded == riders.len() {
            break;
        }
    }
    assert_eq!(succeeded, riders.len(), "everyone reached the upper floor");
    assert!(rode.iter().all(|&rode| rode), "everyone rode the car");
    // Each ended on the upper floor (x 8.4 to 12.4 in the bay; its order succeeded within
    // 0.25 m of its place, and later arrivals may have nudged it since).
    for &(agent, _, place) in &riders {
        let world = crowd.world_position(agent).unwrap();
        assert!(
            world.x > 8.4 && (world.y - upper.y).abs() < 0.2,
            "{world} for {place}"
        );
        assert_eq!(
            crowd
                .snapshot()
                .support_layer(crowd.polygon(agent).unwrap()),
            Some(0)
        );
    }
}

/// A swing bridge: a 10 x 2 m deck (support 0) baked in its own frame, centred on its
/// origin 40 m down, as the only tile.
fn swing_bridge() -> NavMesh {
    let mut deck = WalkablePolygon::ground(rectangle(-5.0, -1.0, 5.0, 1.0, -40.0));
    deck.layer = 1;
    let mut mesh = NavMesh::new(BakeParams::default());
    mesh.add_tiles(vec![TileData::from_walkable_polygons(&[deck]).unwrap()])
        .unwrap();
    mesh
}

#[test]
fn walkers_cross_a_turning_non_disc_platform_in_its_frame_and_pass_each_other_on_it() {
    let mesh = swing_bridge();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let bridge = SupportId(0);
    // The host swings the bridge about its centre at 0.3 rad/s, lifted to the ground.
    let rate = 0.3;
    let turning = |yaw_rad: f32| {
        Some(PlatformMotion::Placed {
            pose: PlatformPose {
                offset: Vec3::new(0.0, 40.0, 0.0),
                yaw_rad,
            },
            velocity: Vec3::ZERO,
            yaw_rate_rad_s: rate,
        })
    };
    crowd.set_platform_motion(bridge, turning(0.0)).unwrap();
    let east = crowd
        .add_agent(Vec3::new(-4.0, -40.0, 0.3), WALKER)
        .unwrap();
    let west = crowd
        .add_agent(Vec3::new(4.0, -40.0, -0.3), WALKER)
        .unwrap();
    let (east_target, west_target) = (Vec3::new(4.0, -40.0, 0.3), Vec3::new(-4.0, -40.0, -0.3));
    crowd.request_move(east, east_target).unwrap();
    crowd.request_move(west, west_target).unwrap();
    let mut controller = KinematicController;
    let mut corridors: Vec<Option<*const waymark::crowd::Corridor>> = vec![None, None];
    let mut closest_m = f32::INFINITY;
    for frame in 0..120 {
        // The host places it each step (here as it would go on by itself).
        if frame % 10 == 0 {
            let yaw = rate * 0.1 * frame as f32;
            crowd.set_platform_motion(bridge, turning(yaw)).unwrap();
        }
        let events = crowd.step(0.1, &mut controller).unwrap();
        assert!(
            !events
                .iter()
                .any(|event| matches!(event, CrowdEvent::RouteInvalidated { .. })),
            "frame {frame}"
        );
        let pose = crowd.platform_pose(bridge);
        assert!((pose.yaw_rad - rate * 0.1 * (frame + 1) as f32).abs() < 1e-4);
        for (kept, agent) in corridors.iter_mut().zip([east, west]) {
            let local = crowd.position(agent).unwrap();
            assert!((crowd.world_position(agent).unwrap() - pose.place(local)).length() < 1e-4);
            if let Some(corridor) = crowd.corridor(agent).unwrap() {
                let pointer = corridor as *const _;
                assert_eq!(*kept.get_or_insert(pointer), pointer, "frame {frame}");
            }
        }
        let apart = crowd
            .world_position(east)
            .unwrap()
            .distance(crowd.world_position(west).unwrap());
        closest_m = closest_m.min(apart);
    }
    // Both crossed the bridge in its frame while it swung a fifth of a turn and more.
    for (agent, target) in [(east, east_target), (west, west_target)] {
        assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Arrived);
        assert!(crowd.position(agent).unwrap().distance(target) < 0.25);
    }
    // They passed each other on the 2 m deck with their bodies apart (0.8 m between
    // centres, a millimetre of rounding allowed).
    assert!(closest_m > 0.799, "closest {closest_m} m");
    // Standing at the end, about 4 m from the centre, a rider is carried round it at
    // 0.3 rad/s times that radius, across the radius.
    let velocity = crowd.world_velocity(east).unwrap();
    let world = crowd.world_position(east).unwrap();
    let radius = Vec3::new(world.x, 0.0, world.z);
    assert!(
        (velocity.length() - 0.3 * radius.length()).abs() < 0.01,
        "{velocity}"
    );
    assert!(
        velocity.dot(radius).abs() < 0.01,
        "{velocity} against {radius}"
    );
    // And the host is told the centripetal pull towards the centre, ω² r.
    let terms = crowd.body_acceleration_terms(east).unwrap();
    assert!(
        (terms.centripetal.length() - 0.09 * 4.0).abs() < 0.01,
        "{terms:?}"
    );
    let world = crowd.world_position(east).unwrap();
    assert!(terms.centripetal.dot(Vec3::new(world.x, 0.0, world.z)) < 0.0);
}

#[test]
fn a_platform_the_host_sails_and_its_dock_replay_from_the_log_the_same_way() {
    let (mesh, ramp, docked) = dock_and_deck();
    let config = CrowdConfig {
        ordered_log: true,
        ..CrowdConfig::default()
    };
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let deck = SupportId(0);
    crowd
        .set_platform_motion(deck, placed(docked, Vec3::ZERO))
        .unwrap();
    let dock = LinkDock {
        support: deck,
        pose: PlatformPose::at(docked),
        tolerance_m: 0.05,
    };
    crowd.set_link_dock(ramp, Some(dock)).unwrap();
    let agent = crowd.add_agent(Vec3::new(-6.0, 0.0, 0.5), WALKER).unwrap();
    crowd
        .request_move(agent, BAKED + Vec3::new(5.0, 0.0, -1.0))
        .unwrap();
    let mut log = Vec::new();
    let mut controller = KinematicController;
    for frame in 0..200 {
        // Docked for 10 s, then the host sails off along +x, turning slowly.
        if frame >= 100 {
            let pose = PlatformPose {
                offset: docked + Vec3::new(0.1 * (frame - 100) as f32, 0.0, 0.0),
                yaw_rad: 0.01 * (frame - 100) as f32,
            };
            let motion = PlatformMotion::Placed {
                pose,
                velocity: Vec3::new(1.0, 0.0, 0.0),
                yaw_rate_rad_s: 0.1,
            };
            crowd.set_platform_motion(deck, Some(motion)).unwrap();
        }
        crowd.step(0.1, &mut controller).unwrap();
        crowd.drain_log(&mut log);
    }
    // It boarded while docked and rode off.
    assert_eq!(
        mesh.snapshot().support_layer(crowd.polygon(agent).unwrap()),
        Some(1)
    );
    let mut again = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let mut replay = waymark::crowd::Replay::start(&mut again, log).unwrap();
    for _ in 0..200 {
        replay
            .step(&mut again, 0.1, &mut controller, &mut |_, _| {})
            .unwrap();
    }
    assert_eq!(again.link_dock(ramp), Some(dock));
    assert_eq!(again.platform_pose(deck), crowd.platform_pose(deck));
    assert_eq!(
        again.world_position(agent).unwrap(),
        crowd.world_position(agent).unwrap()
    );
    assert_eq!(
        again.position(agent).unwrap(),
        crowd.position(agent).unwrap()
    );
}
