//! Crowd runtime (spec 004 m1, m2, m4; spec 001 h2), corridor following, determinism across
//! thread counts, and the shared dungeon crowd: every agent arrives or reports why, and no
//! agent leaves the navigation mesh.

mod common;

use glam::{Vec2, Vec3};
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::crowd::internals::{
    AvoidBody, NeighbourGrid, STALL_S, avoid_pass, follow_one, gather_carried, patch_gradient,
    profile_speed, slope_limits_scalar, slope_limits_simd, stopping_distance, track_progress,
};
use waymark::crowd::internals::{PlatformFrames, integrate_velocity, turn_about_up};
use waymark::crowd::{
    AgentId, AgentParams, AgentStatus, AvoidanceConfig, AvoidanceProfile, Controller, Corridor,
    Crowd, CrowdConfig, CrowdError, CrowdEvent, FilterId, KinematicController, MoverAction,
    Outcome, ProfileId, StepFeedback, StepRequest, SupportMotion,
};
use waymark::harness::{Plans, RunOptions, read_agents_csv, run_crowd};
use waymark::ids::AreaId;
use waymark::mesh::{NavMesh, PolyRef, Snapshot, TileData, WalkablePolygon};
use waymark::query::{NODE_POOL_DEFAULT, NodePool, QueryFilter, find_path, nearest_polygon};
use waymark::scene::obj::{ObjOptions, load_obj};

fn close(actual: f32, expected: f32, tolerance: f32) -> bool {
    (actual - expected).abs() <= tolerance
}

fn quad(x0: f32, x1: f32, z0: f32, z1: f32, height: impl Fn(f32) -> f32) -> WalkablePolygon {
    WalkablePolygon::ground(vec![
        Vec3::new(x0, height(x0), z0),
        Vec3::new(x1, height(x1), z0),
        Vec3::new(x1, height(x1), z1),
        Vec3::new(x0, height(x0), z1),
    ])
}

fn mesh_of(polygons: &[WalkablePolygon]) -> NavMesh {
    common::mesh_of(polygons, 0.6, 2.0)
}

/// The polygon under the ground point (x, 0, z).
fn polygon_at(snapshot: &Snapshot, x: f32, z: f32) -> PolyRef {
    nearest_polygon(
        snapshot,
        Vec3::new(x, 0.0, z),
        Vec3::ONE,
        &QueryFilter::new(),
    )
    .unwrap()
    .unwrap()
    .polygon
}

/// The corridor from (1, 0, 1) to (7, 0, 1) on `mesh` (a strip of squares along +x, maybe
/// with more polygons beside it), and the goal.
fn corridor_along_strip(mesh: &NavMesh) -> (std::sync::Arc<Corridor>, Vec3) {
    let snapshot = mesh.snapshot();
    let mut pool = NodePool::new(NODE_POOL_DEFAULT);
    let goal = Vec3::new(7.0, 0.0, 1.0);
    let start = Vec3::new(1.0, 0.0, 1.0);
    let (from, to) = (
        polygon_at(&snapshot, 1.0, 1.0),
        polygon_at(&snapshot, 7.0, 1.0),
    );
    let filter = QueryFilter::new();
    let path = find_path(&snapshot, from, start, to, goal, &filter, &mut pool).unwrap();
    (
        std::sync::Arc::new(Corridor::from_path(&snapshot, &path).unwrap()),
        goal,
    )
}

/// A straight corridor of `count` 2 m x 2 m squares along +x.
fn strip(count: usize) -> NavMesh {
    let polygons: Vec<WalkablePolygon> = (0..count)
        .map(|i| quad(2.0 * i as f32, 2.0 * (i + 1) as f32, 0.0, 2.0, |_| 0.0))
        .collect();
    mesh_of(&polygons)
}

#[test]
fn m1_sixty_degree_slope_halves_the_horizontal_limits() {
    // A 60° ramp rising along +x: h = tan(60°) x, so |g| = sqrt(3) and k = 2.
    let rise = 60f32.to_radians().tan();
    let mesh = mesh_of(&[quad(0.0, 2.0, 0.0, 2.0, |x| rise * x)]);
    let snapshot = mesh.snapshot();
    let point = Vec3::new(1.0, rise, 1.0);
    let at = nearest_polygon(&snapshot, point, Vec3::splat(1.0), &QueryFilter::new())
        .unwrap()
        .unwrap();
    let (gradient, _) = patch_gradient(&snapshot, at.polygon, point, u32::MAX);
    assert!(close(gradient.x, 3f32.sqrt(), 1e-4) && close(gradient.y, 0.0, 1e-5));
    let (mut speed, mut acceleration) = ([0.0], [0.0]);
    slope_limits_scalar(
        &[gradient.x],
        &[gradient.y],
        &[2.0],
        &[2.0],
        &mut speed,
        &mut acceleration,
    );
    assert!(close(speed[0], 1.0, 1e-4) && close(acceleration[0], 1.0, 1e-4));
    // Braking from 1 m/s horizontal with 1 m/s²: 0.5 m horizontal, 1 m along the slope.
    let horizontal = stopping_distance(1.0, acceleration[0], 0.0);
    assert!(close(horizontal, 0.5, 1e-4));
    assert!(close(
        horizontal * (1.0 + gradient.length_squared()).sqrt(),
        1.0,
        1e-3
    ));
}

#[test]
fn slope_limits_simd_and_scalar_agree_bit_for_bit() {
    let count = 1003;
    let value = |i: usize, salt: u32| {
        let bits = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(salt);
        (bits % 10_000) as f32 / 2_500.0 - 2.0
    };
    let gx: Vec<f32> = (0..count).map(|i| value(i, 1)).collect();
    let gz: Vec<f32> = (0..count).map(|i| value(i, 7)).collect();
    let speed: Vec<f32> = (0..count).map(|i| 1.0 + value(i, 3).abs()).collect();
    let acceleration: Vec<f32> = (0..count).map(|i| 2.0 + value(i, 5).abs()).collect();
    let (mut s1, mut a1) = (vec![0.0; count], vec![0.0; count]);
    let (mut s2, mut a2) = (vec![0.0; count], vec![0.0; count]);
    slope_limits_scalar(&gx, &gz, &speed, &acceleration, &mut s1, &mut a1);
    slope_limits_simd(&gx, &gz, &speed, &acceleration, &mut s2, &mut a2);
    for i in 0..count {
        assert_eq!(s1[i].to_bits(), s2[i].to_bits(), "speed lane {i}");
        assert_eq!(a1[i].to_bits(), a2[i].to_bits(), "acceleration lane {i}");
    }
}

#[test]
fn m2_belt_carry_and_relative_velocity() {
    // Belt +1 m/s, body relative -1 m/s: the world velocity is zero, and the feedback
    // recovers the relative end velocity from the world and support velocities.
    let feedback = StepFeedback {
        dt: 0.1,
        foot: Vec3::ZERO,
        polygon: PolyRef::new(
            waymark::mesh::TileGeneration(1),
            waymark::mesh::TileSlot(0),
            0,
        )
        .unwrap(),
        displacement: Vec3::ZERO,
        displacement_support: Vec3::new(0.1, 0.0, 0.0),
        displacement_correction: Vec3::ZERO,
        support: 1,
        contact: true,
        velocity_world_end: Vec3::ZERO,
        velocity_support_end: Vec3::new(1.0, 0.0, 0.0),
        velocity_valid: true,
        blocked: false,
    };
    let (end, average) = waymark::crowd::internals::feedback_velocities(&feedback);
    assert_eq!(end, Vec2::new(-1.0, 0.0));
    // Net progress relative to the belt: -0.1 m in 0.1 s.
    assert!(close(average.x, -1.0, 1e-6));
}

#[test]
fn m2_through_the_controller_walking_against_a_belt_stands_still_in_the_world() {
    // Spec 004's m2 through the kinematic controller: on a belt (support layer 1) moving
    // +1 m/s, a body walking -1 m/s relative to it is carried +0.1 m and walks -0.1 m in a
    // 0.1 s step: zero world displacement and world velocity, the carry reported apart,
    // and the feedback's relative end velocity -1.
    let mut belt = quad(0.0, 10.0, 0.0, 2.0, |_| 0.0);
    belt.layer = 1;
    let mesh = mesh_of(&[belt]);
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let foot = Vec3::new(5.0, 0.0, 1.0);
    let request = StepRequest {
        dt: 0.1,
        foot,
        polygon: polygon_at(&snapshot, 5.0, 1.0),
        velocity: Vec2::new(-1.0, 0.0),
        desired: Vec2::new(-1.0, 0.0),
        speed_limit: 3.0,
        acceleration_limit: 8.0,
        gradient: Vec2::ZERO,
        support: 1,
        support_velocity: Vec3::X,
        support_angular_velocity_rad_s: 0.0,
        filter: FilterId::DEFAULT,
    };
    let step = KinematicController::step_one(&snapshot, &filter, &request);
    assert!(step.displacement.length() < 1e-6, "{:?}", step.displacement);
    assert!(step.velocity_world_end.length() < 1e-6);
    assert_eq!(step.velocity_support_end, Vec3::X);
    assert!(close(step.displacement_support.x, 0.1, 1e-6));
    assert_eq!(step.support, 1);
    let (end, average) = waymark::crowd::internals::feedback_velocities(&step);
    assert!(close(end.x, -1.0, 1e-6) && close(average.x, -1.0, 1e-5));
    // Walking with the belt instead: 1 + 1 = 2 m/s in the world, 0.2 m in the step.
    let with = StepRequest {
        velocity: Vec2::new(1.0, 0.0),
        desired: Vec2::new(1.0, 0.0),
        ..request
    };
    let step = KinematicController::step_one(&snapshot, &filter, &with);
    assert!(close(step.displacement.x, 0.2, 1e-6));
    assert!(close(step.velocity_world_end.x, 2.0, 1e-6));
}

/// A 20 m square support (layer 1) turning about its centre (10, 0, 10), and a request
/// for a body on it at `foot` with relative velocity `velocity` wanting `desired`.
fn on_turntable(
    snapshot: &Snapshot,
    turn_rad_s: f32,
    foot: Vec3,
    velocity: Vec2,
    desired: Vec2,
    acceleration_limit: f32,
) -> StepRequest {
    let table = SupportMotion::turntable(Vec3::new(10.0, 0.0, 10.0), turn_rad_s);
    StepRequest {
        dt: 0.1,
        foot,
        polygon: polygon_at(snapshot, foot.x, foot.z),
        velocity,
        desired,
        speed_limit: 3.0,
        acceleration_limit,
        gradient: Vec2::ZERO,
        support: 1,
        support_velocity: table.velocity_at(foot),
        support_angular_velocity_rad_s: turn_rad_s,
        filter: FilterId::DEFAULT,
    }
}

fn turntable_mesh() -> NavMesh {
    let mut table = quad(0.0, 20.0, 0.0, 20.0, |_| 0.0);
    table.layer = 1;
    mesh_of(&[table])
}

#[test]
fn m3_a_quarter_turn_carries_the_relative_velocity_at_no_active_cost() {
    // Spec 004's m3: the platform turns 90° about Up in 0.1 s; the body keeps its local
    // velocity (1, 0, 0), whose world form goes from (1, 0, 0) to (0, 0, -1). Through the
    // controller with an active budget of only 0.5 m/s² (0.05 m/s in the step).
    let mesh = turntable_mesh();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let quarter_turn = std::f32::consts::FRAC_PI_2 / 0.1;
    let request = on_turntable(
        &snapshot,
        quarter_turn,
        Vec3::new(10.0, 0.0, 10.0),
        Vec2::new(1.0, 0.0),
        Vec2::new(0.0, -1.0),
        0.5,
    );
    let step = KinematicController::step_one(&snapshot, &filter, &request);
    let relative_end = step.velocity_world_end - step.velocity_support_end;
    let relative_end = Vec2::new(relative_end.x, relative_end.z);
    // The world forms differ by √2: compared axis by axis, the change is far beyond the
    // budget...
    let naive = relative_end - request.velocity;
    assert!(
        close(naive.length(), std::f32::consts::SQRT_2, 1e-5),
        "{naive}"
    );
    // ...but carried first (wCarry = R1 R0ᵀ w0) it is zero: reached exactly, with no
    // active acceleration spent.
    let carried = turn_about_up(request.velocity, std::f32::consts::FRAC_PI_2);
    assert!(relative_end.distance(carried) < 1e-5, "{relative_end}");
    assert!(relative_end.distance(Vec2::new(0.0, -1.0)) < 1e-5);
    // A controller comparing world axes could only have moved 0.05 m/s towards it.
    let naive_end = integrate_velocity(&request);
    assert!(
        naive_end.distance(Vec2::new(0.0, -1.0)) > 1.3,
        "{naive_end}"
    );
    // At the centre the table carries nothing; the local walk of 0.1 m along x ends,
    // placed by the turned frame, 0.1 m along -z.
    assert!(step.displacement_support.length() < 1e-6);
    assert!(
        step.displacement.distance(Vec3::new(0.0, 0.0, -0.1)) < 1e-5,
        "{:?}",
        step.displacement
    );
}

#[test]
fn m4_on_a_turning_platform_the_local_curve_matches_the_closed_form() {
    // m4 in the frame of a table turning at 0.5 rad/s, 2 m from its centre: the body's
    // local velocity goes 0.1 -> 0.2 m/s along a local axis at 1 m/s² in the 0.1 s step.
    // In the table's frame m4's numbers hold (0.015 m, 0.15 m/s on average, 0.2 at the
    // end); in the world the walk is that turned by the step's 0.05 rad, on top of the
    // carry round the centre.
    let mesh = turntable_mesh();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let (turn, dt) = (0.5f32, 0.1f32);
    let angle = turn * dt;
    let centre = Vec3::new(10.0, 0.0, 10.0);
    let foot = Vec3::new(12.0, 0.0, 10.0);
    // Along the local x axis, asked far beyond what one step reaches (in world axes at the
    // step's end).
    let request = on_turntable(
        &snapshot,
        turn,
        foot,
        Vec2::new(0.1, 0.0),
        turn_about_up(Vec2::new(3.0, 0.0), angle),
        1.0,
    );
    let step = KinematicController::step_one(&snapshot, &filter, &request);
    // The closed form: x1 = c + R(θ) (y0 + (b0 + b1) dt / 2), b0 = (0.1, 0), b1 = (0.2, 0).
    let local_end = Vec2::new(2.0, 0.0) + Vec2::new(0.1 + 0.2, 0.0) * (dt / 2.0);
    let turned = turn_about_up(local_end, angle);
    let expected = centre + Vec3::new(turned.x, 0.0, turned.y);
    assert!(
        step.foot.distance(expected) < 1e-5,
        "{:?} {expected}",
        step.foot
    );
    let walked = step.displacement - step.displacement_support;
    assert!(close(walked.length(), 0.015, 1e-5), "{walked}");
    let (end, average) = waymark::crowd::internals::feedback_velocities(&step);
    assert!(close(end.length(), 0.2, 1e-5) && close(average.length(), 0.15, 1e-4));
    let direction = turn_about_up(Vec2::X, angle);
    assert!(end.distance(direction * 0.2) < 1e-5, "{end}");
    // The carry is the arc: the foot's point of the table turned 0.05 rad round the centre.
    let carried = turn_about_up(Vec2::new(2.0, 0.0), angle);
    let carried = centre + Vec3::new(carried.x, 0.0, carried.y) - foot;
    assert!(step.displacement_support.distance(carried) < 1e-6);
    // The support's velocity at the end point, ω × r, and the world velocity beside it.
    let table = SupportMotion::turntable(centre, turn);
    assert!(
        step.velocity_support_end
            .distance(table.velocity_at(step.foot))
            < 1e-6
    );
    // The same curve integrated independently in the world, in 20,000 substeps:
    // dx/dt = ω × (x - c) + R(ω t) (b0 + (b1 - b0) t / dt).
    let substeps = 20_000;
    let h = dt / substeps as f32;
    let mut x = Vec2::new(foot.x, foot.z) - Vec2::new(centre.x, centre.z);
    for index in 0..substeps {
        let t = (index as f32 + 0.5) * h;
        let local_velocity = Vec2::new(0.1 + 0.1 * t / dt, 0.0);
        let carried_velocity = Vec2::new(turn * x.y, -turn * x.x);
        x += (carried_velocity + turn_about_up(local_velocity, turn * t)) * h;
    }
    let integrated = Vec3::new(centre.x + x.x, 0.0, centre.z + x.y);
    assert!(
        step.foot.distance(integrated) < 1e-4,
        "{:?} {integrated}",
        step.foot
    );
}

#[test]
fn a_body_standing_on_a_turntable_rides_round_its_centre() {
    // Idle 2 m from the centre of a table turning at 0.5 rad/s: after 3 s the body stands
    // where the table's point under it went, turned 1.5 rad round the centre, to the
    // millimetre (each step's carry is the arc, not its chord), and its world velocity is
    // the table's there.
    let mesh = turntable_mesh();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let centre = Vec3::new(10.0, 0.0, 10.0);
    crowd
        .set_support_rotation(waymark::ids::SupportId(0), centre, 0.5)
        .unwrap();
    let agent = crowd
        .add_agent(Vec3::new(12.0, 0.0, 10.0), AgentParams::DETOUR_REFERENCE)
        .unwrap();
    for _ in 0..30 {
        crowd.step(0.1, &mut KinematicController).unwrap();
    }
    let turned = turn_about_up(Vec2::new(2.0, 0.0), 1.5);
    let expected = centre + Vec3::new(turned.x, 0.0, turned.y);
    let position = crowd.position(agent).unwrap();
    assert!(position.distance(expected) < 1e-3, "{position} {expected}");
    let table = SupportMotion::turntable(centre, 0.5);
    let world = crowd.world_velocity(agent).unwrap();
    assert!(
        world.distance(table.velocity_at(position)) < 1e-3,
        "{world}"
    );
    assert!(crowd.velocity(agent).unwrap().length() < 1e-3);
}

#[test]
fn a_support_motion_is_set_as_the_belt_or_turntable_it_describes() {
    let mesh = turntable_mesh();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let support = waymark::ids::SupportId(0);
    // The table turning about (10, 0, 10), described from a point 2 m east of its centre
    // (where it moves at 1 m/s towards -z): set as the turntable about its centre.
    let described = SupportMotion {
        velocity: Vec3::new(0.0, 0.0, -1.0),
        pivot: Vec3::new(12.0, 0.0, 10.0),
        angular_velocity_rad_s: 0.5,
    };
    crowd.set_support_motion(support, described).unwrap();
    let set = crowd.support_motion(support);
    assert!(
        set.pivot.distance(Vec3::new(10.0, 0.0, 10.0)) < 1e-5,
        "{set:?}"
    );
    assert_eq!(set.velocity, Vec3::ZERO);
    assert_eq!(set.angular_velocity_rad_s, 0.5);
    // Without a turn rate: a belt.
    let belt = SupportMotion::belt(Vec3::new(1.0, 0.0, 0.0));
    crowd.set_support_motion(support, belt).unwrap();
    assert_eq!(crowd.support_motion(support), belt);
    // Turning while rising, or not finite: refused by value, the motion unchanged.
    let rising = SupportMotion {
        velocity: Vec3::new(0.0, 0.5, 0.0),
        ..described
    };
    assert!(matches!(
        crowd.set_support_motion(support, rising),
        Err(CrowdError::UnsupportedSupportMotion { vertical_mps, .. }) if vertical_mps == 0.5
    ));
    let broken = SupportMotion {
        angular_velocity_rad_s: f32::NAN,
        ..described
    };
    assert!(matches!(
        crowd.set_support_motion(support, broken),
        Err(CrowdError::NotFinite { what, value })
            if what.contains("turn rate") && value.x.is_nan()
    ));
    assert_eq!(crowd.support_motion(support), belt);
}

#[test]
fn m4_end_velocity_average_velocity_and_braking() {
    let mesh = strip(2);
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let start = Vec3::new(0.5, 0.0, 1.0);
    let polygon = nearest_polygon(&snapshot, start, Vec3::ONE, &filter)
        .unwrap()
        .unwrap()
        .polygon;
    // From rest at 1 m/s²: at t = 0.1 s the speed is 0.1; the step 0.1 -> 0.2 s...
    let request = StepRequest {
        dt: 0.1,
        foot: start,
        polygon,
        velocity: Vec2::new(0.1, 0.0),
        desired: Vec2::new(3.0, 0.0),
        speed_limit: 3.0,
        acceleration_limit: 1.0,
        gradient: Vec2::ZERO,
        support: 0,
        support_velocity: Vec3::ZERO,
        support_angular_velocity_rad_s: 0.0,
        filter: FilterId::DEFAULT,
    };
    let step = KinematicController::step_one(&snapshot, &filter, &request);
    let (end, average) = waymark::crowd::internals::feedback_velocities(&step);
    // ...moves 0.015 m, averages 0.15 m/s and ends at 0.2 m/s.
    assert!(
        close(step.displacement.x, 0.015, 1e-6),
        "{}",
        step.displacement.x
    );
    assert!(close(average.x, 0.15, 1e-5) && close(end.x, 0.2, 1e-6));
    // Braking consumes the end velocity: 0.02 m, not 0.15^2 / 2 = 0.01125.
    assert!(close(stopping_distance(end.length(), 1.0, 0.0), 0.02, 1e-6));
    assert!(!close(
        stopping_distance(end.length(), 1.0, 0.0),
        0.011_25,
        1e-4
    ));
    // The last braking step: 0.1 m/s to 0 in 0.1 s moves 0.005 m and ends stopped.
    let last = StepRequest {
        velocity: Vec2::new(0.1, 0.0),
        desired: Vec2::ZERO,
        ..request
    };
    assert_eq!(integrate_velocity(&last), Vec2::ZERO);
    let step = KinematicController::step_one(&snapshot, &filter, &last);
    assert!(close(step.displacement.x, 0.005, 1e-6));
    assert_eq!(step.velocity_world_end, Vec3::ZERO);
}

#[test]
fn the_speed_profile_stops_at_the_goal() {
    // With the reaction step: at 3 m/s and dt 0.1, the agent needs 0.3 m before braking.
    assert_eq!(profile_speed(0.3, 3.0, 8.0, 0.1, 3.5), 0.0);
    assert!(close(profile_speed(1.3, 3.0, 8.0, 0.1, 3.5), 3.5, 1e-6));
    assert!(close(profile_speed(0.55, 3.0, 8.0, 0.1, 3.5), 2.0, 1e-5));
}

/// A controller that never moves anyone: every request makes no progress.
struct Stuck;

impl Controller for Stuck {
    fn step_agents(
        &mut self,
        _snapshot: &Snapshot,
        _filters: &[QueryFilter],
        requests: &[StepRequest],
        feedback: &mut Vec<StepFeedback>,
    ) {
        feedback.clear();
        feedback.extend(requests.iter().map(|r| StepFeedback {
            dt: r.dt,
            foot: r.foot,
            polygon: r.polygon,
            displacement: Vec3::ZERO,
            displacement_support: Vec3::ZERO,
            displacement_correction: Vec3::ZERO,
            support: r.support,
            contact: true,
            velocity_world_end: Vec3::ZERO,
            velocity_support_end: Vec3::ZERO,
            velocity_valid: true,
            blocked: false,
        }));
    }
}

#[test]
fn h2_blocked_after_half_a_second_without_progress() {
    // The rule itself: 0.01 m per 0.1 s step is below 0.05 m; blocked at 0.5 s, not before.
    let mut anchor = Vec2::ZERO;
    let mut stalled = 0.0;
    for step in 1..=5 {
        let position = Vec2::new(0.01 * step as f32, 0.0);
        let (a, s, blocked) = track_progress(anchor, stalled, position, true, 0.1);
        (anchor, stalled) = (a, s);
        assert_eq!(blocked, step == 5, "step {step}: {s} s");
    }
    assert!(close(stalled, STALL_S, 1e-6));
    // Progress of 0.05 m resets it; no request resets it too.
    assert!(!track_progress(Vec2::ZERO, 0.4, Vec2::new(0.05, 0.0), true, 0.1).2);
    assert_eq!(
        track_progress(Vec2::ZERO, 0.4, Vec2::ZERO, false, 0.1).1,
        0.0
    );

    // In a crowd: the Blocked event comes once, after 0.5 s, and never a success.
    let mesh = strip(4);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd
        .add_agent(Vec3::new(1.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE)
        .unwrap();
    crowd.request_move(agent, Vec3::new(7.0, 0.0, 1.0)).unwrap();
    let mut blocked_frames = Vec::new();
    for frame in 0..30 {
        for event in crowd.step(0.1, &mut Stuck).unwrap() {
            match event {
                CrowdEvent::Blocked { .. } => blocked_frames.push(frame),
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    // The request is adopted in frame 0; five stalled steps later it is blocked, once.
    assert_eq!(blocked_frames, vec![4]);
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Moving);
}

/// A controller that forgets the last agent's feedback.
struct Forgetful;

impl Controller for Forgetful {
    fn step_agents(
        &mut self,
        snapshot: &Snapshot,
        filters: &[QueryFilter],
        requests: &[StepRequest],
        feedback: &mut Vec<StepFeedback>,
    ) {
        Stuck.step_agents(snapshot, filters, requests, feedback);
        feedback.pop();
    }
}

#[test]
fn a_controller_that_answers_too_few_requests_gets_an_error_and_loses_no_agent() {
    let mesh = strip(4);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agents: Vec<_> = [1.0, 3.0]
        .iter()
        .map(|&x| {
            crowd
                .add_agent(Vec3::new(x, 0.0, 1.0), AgentParams::DETOUR_REFERENCE)
                .unwrap()
        })
        .collect();
    for &agent in &agents {
        crowd.request_move(agent, Vec3::new(7.0, 0.0, 1.0)).unwrap();
    }
    match crowd.step(0.1, &mut Forgetful) {
        Err(CrowdError::ControllerFeedback {
            requests: 2,
            feedback: 1,
        }) => {}
        other => panic!("expected the controller's miscount, got {other:?}"),
    }
    // Nobody moved, nobody is lost, and a good controller carries on from there.
    for (&agent, x) in agents.iter().zip([1.0, 3.0]) {
        assert_eq!(crowd.position(agent).unwrap().x, x);
    }
    crowd.step(0.1, &mut KinematicController).unwrap();
    for (&agent, x) in agents.iter().zip([1.0, 3.0]) {
        assert!(crowd.position(agent).unwrap().x > x, "{agent:?} walks on");
    }
}

#[test]
fn the_cursor_follows_the_actual_position_back_and_forth() {
    let mesh = strip(4);
    let snapshot = mesh.snapshot();
    let at = |x: f32| polygon_at(&snapshot, x, 1.0);
    let (corridor, goal) = corridor_along_strip(&mesh);
    assert_eq!(corridor.len(), 4);
    let follow = |cursor: usize, x: f32| {
        follow_one(
            &snapshot,
            &corridor,
            cursor,
            Vec3::new(x, 0.0, 1.0),
            at(x),
            goal,
            Vec2::ZERO,
            3.5,
            8.0,
            0.1,
            0.25,
        )
    };
    // Just before the first portal (x = 2): still polygon 0.
    assert_eq!(follow(0, 1.99).cursor, 0);
    // Across it: the cursor advances.
    assert_eq!(follow(0, 2.01).cursor, 1);
    // Pushed back across the portal: the cursor moves back with the actual position.
    assert_eq!(follow(1, 1.9).cursor, 0);
    // Lookahead along the path: the stop distance is the path length to the goal.
    let output = follow(1, 3.0);
    assert!(close(output.stop_distance, 4.0, 1e-5));
    assert!(output.desired.x > 0.0 && close(output.desired.y, 0.0, 1e-6));
}

/// A 4-square strip along +x (z 0..2) and a side polygon north of its second square,
/// x 2..4 and z 2..`side_end_z`: beside the strip's corridor, sharing one edge with it.
fn strip_with_side_polygon(side_end_z: f32) -> Vec<WalkablePolygon> {
    let mut polygons: Vec<WalkablePolygon> = (0..4)
        .map(|i| quad(2.0 * i as f32, 2.0 * (i + 1) as f32, 0.0, 2.0, |_| 0.0))
        .collect();
    polygons.push(quad(2.0, 4.0, 2.0, side_end_z, |_| 0.0));
    polygons
}

#[test]
fn an_agent_pushed_beside_its_corridor_walks_back_in_without_a_new_path() {
    let mut polygons = strip_with_side_polygon(4.0);
    let mesh = mesh_of(&polygons);
    let snapshot = mesh.snapshot();
    let (corridor, goal) = corridor_along_strip(&mesh);
    assert_eq!(corridor.len(), 4);
    // Shoved into the side square at (3, 3): beside corridor polygon 1.
    let side = polygon_at(&snapshot, 3.0, 3.0);
    assert!(!corridor.contains(side));
    let output = follow_one(
        &snapshot,
        &corridor,
        1,
        Vec3::new(3.0, 0.0, 3.0),
        side,
        goal,
        Vec2::ZERO,
        3.5,
        8.0,
        0.1,
        0.25,
    );
    assert!(!output.off_corridor);
    assert_eq!(output.cursor, 1);
    // Back through the shared edge (z = 2, x in 2..4) first: the corner lies on it.
    assert!(close(output.corner.y, 2.0, 1e-4), "{:?}", output.corner);
    assert!(output.desired.y < 0.0);
    // Two squares away from the corridor there is no edge to walk back through.
    let far = quad(2.0, 4.0, 4.0, 6.0, |_| 0.0);
    polygons.push(far);
    let mesh = mesh_of(&polygons);
    let snapshot = mesh.snapshot();
    let (corridor, _) = corridor_along_strip(&mesh);
    let far = polygon_at(&snapshot, 3.0, 5.0);
    assert!(waymark::crowd::internals::rejoin(&snapshot, &corridor, 1, far).is_none());
}

#[test]
fn an_agent_walking_back_to_its_corridor_keeps_its_corner_until_it_is_back_in() {
    // The side polygon 6 m deep: room to walk back for a second and more.
    let mesh = mesh_of(&strip_with_side_polygon(8.0));
    let snapshot = mesh.snapshot();
    let side = polygon_at(&snapshot, 3.0, 5.0);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd
        .add_agent(Vec3::new(1.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE)
        .unwrap();
    crowd.request_move(agent, Vec3::new(7.0, 0.0, 1.0)).unwrap();
    for _ in 0..3 {
        crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
    }
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Moving);
    assert!(!crowd.corridor(agent).unwrap().unwrap().contains(side));

    // Shoved up the side square to (3, 6), 4 m from the edge back in: the funnel runs once,
    // from that edge, and the corner it finds serves every frame the agent walks in that
    // square, but for the refresh any kept corner gets once it is 30 frames old (on the
    // 31st frame after the funnel ran). The corner is the edge's end at (4, 2), on the
    // square's boundary: the agent heads straight for it and reaches it still in the
    // square, where the next corner is found by a run of its own, so the frames counted
    // are those more than half a metre from the edge.
    let position = crowd.position(agent).unwrap();
    crowd
        .push(agent, Vec3::new(3.0, 0.0, 6.0) - position)
        .unwrap();
    crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
    assert_eq!(crowd.stats().funnel_runs, 1);
    assert_eq!(crowd.stats().reconnected, 0, "walked back, not reconnected");
    let (mut frames_beside, mut funnel_runs_beside) = (1, 1);
    let far_from_the_edge = |crowd: &Crowd| {
        crowd.polygon(agent).unwrap() == side && crowd.position(agent).unwrap().z > 2.5
    };
    while far_from_the_edge(&crowd) {
        crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
        if far_from_the_edge(&crowd) {
            frames_beside += 1;
            funnel_runs_beside += crowd.stats().funnel_runs;
        }
        assert!(frames_beside < 90, "still beside after three seconds");
    }
    assert!(
        frames_beside > 10,
        "only {frames_beside} frames beside the corridor"
    );
    assert_eq!(
        funnel_runs_beside,
        1 + (frames_beside - 1) / 31,
        "{frames_beside} frames beside"
    );
    // Back in, it walks on to the goal on the same corridor.
    while crowd.polygon(agent).unwrap() == side {
        crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
        assert_eq!(crowd.stats().reconnected, 0, "walked back, not reconnected");
    }
    assert!(!crowd.corridor(agent).unwrap().unwrap().contains(side));
    for _ in 0..300 {
        crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
        if crowd.status(agent).unwrap() == AgentStatus::Arrived {
            break;
        }
    }
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Arrived);
}

#[test]
fn an_agent_pushed_two_polygons_off_its_corridor_reconnects_without_a_new_path() {
    // A 5-square strip along +x (z 0..2) and, north of its third square, a 2 x 2 block:
    // (4..6, 2..4) of area 2, which the agent's filter excludes, (4..6, 4..6), and
    // (6..8, 2..4), (6..8, 4..6) of the default area.
    let mut polygons: Vec<WalkablePolygon> = (0..5)
        .map(|i| quad(2.0 * i as f32, 2.0 * (i + 1) as f32, 0.0, 2.0, |_| 0.0))
        .collect();
    let mut closed = quad(4.0, 6.0, 2.0, 4.0, |_| 0.0);
    closed.area = AreaId(2);
    polygons.push(closed);
    polygons.push(quad(4.0, 6.0, 4.0, 6.0, |_| 0.0));
    polygons.push(quad(6.0, 8.0, 2.0, 4.0, |_| 0.0));
    polygons.push(quad(6.0, 8.0, 4.0, 6.0, |_| 0.0));
    let mesh = mesh_of(&polygons);
    let snapshot = mesh.snapshot();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let mut filter = QueryFilter::new();
    filter.set_area_excluded(AreaId(2), true);
    let filter = crowd.add_filter(filter).unwrap();
    let agent = crowd
        .add_agent(Vec3::new(1.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE)
        .unwrap();
    crowd.set_filter(agent, filter).unwrap();
    let order = crowd.request_move(agent, Vec3::new(9.0, 0.0, 1.0)).unwrap();
    for _ in 0..3 {
        crowd.step(0.1, &mut KinematicController).unwrap();
    }
    let query = crowd.query(agent).unwrap().expect("searched");
    assert_eq!(crowd.corridor(agent).unwrap().unwrap().len(), 5);
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Moving);

    // Shoved into (4..6, 4..6): two squares from the strip, the square between closed to
    // it. Back by the fewest open polygons: (6..8, 4..6), (6..8, 2..4), then the strip's
    // fourth square and on along the old corridor.
    let position = crowd.position(agent).unwrap();
    crowd
        .push(agent, Vec3::new(5.0, 0.0, 5.0) - position)
        .unwrap();
    crowd.step(0.1, &mut KinematicController).unwrap();
    assert_eq!(crowd.stats().reconnected, 1);
    assert_eq!(crowd.stats().waiting_for_path, 0);
    assert_eq!(crowd.query(agent).unwrap(), Some(query), "no new request");
    let corridor = crowd.corridor(agent).unwrap().unwrap();
    let expected: Vec<PolyRef> = [(5.0, 5.0), (7.0, 5.0), (7.0, 3.0), (7.0, 1.0), (9.0, 1.0)]
        .iter()
        .map(|&(x, z)| polygon_at(&snapshot, x, z))
        .collect();
    let walked: Vec<PolyRef> = (0..corridor.len())
        .map(|index| corridor.polygon(&snapshot, index).unwrap())
        .collect();
    assert_eq!(walked, expected);
    assert!(!corridor.contains(polygon_at(&snapshot, 5.0, 3.0)));

    // It walks the joined corridor to the goal, never onto the closed square, on the
    // order it was given.
    let closed = polygon_at(&snapshot, 5.0, 3.0);
    let mut ended = None;
    for _ in 0..100 {
        for event in crowd.step(0.1, &mut KinematicController).unwrap() {
            if let CrowdEvent::OrderEnded {
                outcome, order: o, ..
            } = event
            {
                assert_eq!(o, order);
                ended = Some(outcome);
            }
        }
        assert_ne!(crowd.polygon(agent).unwrap(), closed);
        if ended.is_some() {
            break;
        }
    }
    assert_eq!(ended, Some(Outcome::Success));
    assert!(
        crowd
            .position(agent)
            .unwrap()
            .distance(Vec3::new(9.0, 0.0, 1.0))
            <= 0.25
    );
}

/// A crowd on a 2 m wide strip: a belt (layer 1, +1 m/s along x) from x = 0 to
/// `belt_end_m`, then static ground to x = 30.
fn crowd_on_belt_then_ground(belt_end_m: f32, config: CrowdConfig) -> Crowd {
    let mut belt = quad(0.0, belt_end_m, 0.0, 2.0, |_| 0.0);
    belt.layer = 1;
    let ground = quad(belt_end_m, 30.0, 0.0, 2.0, |_| 0.0);
    let mut crowd = Crowd::new(&mesh_of(&[belt, ground]), config).unwrap();
    crowd
        .set_support_velocity(waymark::ids::SupportId(0), Vec3::X)
        .unwrap();
    crowd
}

#[test]
fn a_walker_stepping_off_a_belt_keeps_its_world_velocity_relative_to_the_ground() {
    // Spec 004's support switch mid-step: a walker on a belt moving +1 m/s, walking on at
    // its pace relative to it (2.4 m/s in the world), steps onto the ground beyond: at
    // that step its velocity relative to its new support, the ground, is the world
    // velocity it had, not the old belt's relative one.
    let config = CrowdConfig {
        avoidance: AvoidanceConfig {
            enabled: false,
            ..Default::default()
        },
        ..CrowdConfig::default()
    };
    let mut crowd = crowd_on_belt_then_ground(10.0, config);
    let params = AgentParams {
        preferred_speed_mps: 1.4,
        max_speed_mps: 2.0,
        ..AgentParams::DETOUR_REFERENCE
    };
    let agent = crowd.add_agent(Vec3::new(1.0, 0.0, 1.0), params).unwrap();
    crowd
        .request_move(agent, Vec3::new(28.0, 0.0, 1.0))
        .unwrap();
    let layer = |crowd: &Crowd| {
        crowd
            .snapshot()
            .support_layer(crowd.polygon(agent).unwrap())
            .unwrap()
    };
    let mut on_belt_world = 0.0;
    for _ in 0..200 {
        crowd.step(0.1, &mut KinematicController).unwrap();
        if layer(&crowd) == 1 {
            on_belt_world = crowd.world_velocity(agent).unwrap().x;
            continue;
        }
        // The step that switched: relative to the ground, the world velocity it kept.
        let relative = crowd.velocity(agent).unwrap().x;
        assert!(
            on_belt_world > 2.2,
            "walking on the belt at {on_belt_world} m/s"
        );
        assert!(
            (relative - on_belt_world).abs() < 0.5,
            "{relative} m/s relative to the ground after {on_belt_world} m/s in the world"
        );
        assert!(relative > 1.9, "not the belt-relative {relative} m/s");
        return;
    }
    panic!("the walker never left the belt");
}

#[test]
fn a_stop_on_a_belt_is_judged_relative_to_the_belt() {
    // Spec 004: a stop is judged in the request's stop frame: relative to the support for
    // a goal on one, in the world for a goal on the static ground. A 20 m belt (layer 1,
    // +1 m/s along x) with 10 m of ground after it.
    let mut crowd = crowd_on_belt_then_ground(20.0, CrowdConfig::default());
    let agent = crowd
        .add_agent(Vec3::new(2.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE)
        .unwrap();
    let stop_speed = CrowdConfig::default().stop_speed_mps;
    // Steps to the order's end, and where the agent stood and how fast it went then.
    let walk_to = |crowd: &mut Crowd, target: Vec3| {
        let order = crowd.request_move(agent, target).unwrap();
        for steps in 1..=200 {
            for event in crowd.step(0.1, &mut KinematicController).unwrap() {
                if let CrowdEvent::OrderEnded {
                    order: ended,
                    outcome,
                    ..
                } = event
                {
                    assert_eq!((ended, outcome), (order, Outcome::Success));
                    return (
                        steps,
                        crowd.position(agent).unwrap(),
                        crowd.velocity(agent).unwrap(),
                        crowd.world_velocity(agent).unwrap(),
                    );
                }
            }
        }
        panic!("no arrival at {target:?}");
    };
    // On the belt the goal is a place on the belt, carried 0.1 m a step: the walker
    // catches it up and stops on the belt, riding on at 1 m/s, which a stop judged in the
    // world would never take for one.
    let (steps, at, relative, world) = walk_to(&mut crowd, Vec3::new(10.0, 0.0, 1.0));
    let carried_goal = Vec3::new(10.0 + 0.1 * steps as f32, 0.0, 1.0);
    assert!(
        at.distance(carried_goal) <= 0.25,
        "{at:?} after {steps} steps"
    );
    assert!(relative.length() < stop_speed, "{relative:?}");
    assert!(close(world.x, 1.0, stop_speed), "{world:?}");
    // On the ground past the belt: a fixed goal, stopped in the world.
    let target = Vec3::new(25.0, 0.0, 1.0);
    let (_, at, relative, world) = walk_to(&mut crowd, target);
    assert!(at.distance(target) <= 0.25, "{at:?}");
    assert!(world.length() < stop_speed && relative.length() < stop_speed);
}

#[test]
fn avoidance_sees_a_rider_carried_by_a_belt_in_the_walkers_frame() {
    // A walker on the ground at 1.4 m/s toward a rider standing on a belt 2 m ahead that
    // runs at the walker at 1 m/s. Bodies keep velocities relative to their supports, so
    // the rider's is zero; in the walker's frame it closes at 2.4 m/s, and the walker's
    // negotiated velocity must give way more than for a rider standing on the ground.
    let mut belt = quad(0.0, 20.0, -2.0, 2.0, |_| 0.0);
    belt.layer = 1;
    let ground = quad(-10.0, 0.0, -2.0, 2.0, |_| 0.0);
    let mesh = mesh_of(&[ground, belt]);
    let snapshot = mesh.snapshot();
    let avoidance = CrowdConfig::default().avoidance;
    let walker = TestBody {
        position: Vec2::new(-0.5, 0.0),
        velocity: Vec2::new(1.4, 0.0),
        status: AgentStatus::Moving,
        unprogressed_s: 0.0,
        profile: ProfileId::DEFAULT,
    };
    let rider = TestBody {
        position: Vec2::new(1.5, 0.0),
        velocity: Vec2::ZERO,
        status: AgentStatus::Idle,
        unprogressed_s: 0.0,
        profile: ProfileId::DEFAULT,
    };
    let walker_velocity = |carried: &[Vec2]| {
        first_body_velocity(&snapshot, &avoidance, &[], [walker, rider], carried, 0.1)
    };
    let framed = walker_velocity(&[Vec2::ZERO, Vec2::new(-1.0, 0.0)]);
    let still = walker_velocity(&[]);
    // Against a rider coming at it the walker keeps less of its speed toward it (or turns
    // away more) than against one standing still.
    assert!(framed.x < still.x - 0.05, "{framed:?} against {still:?}");
    // Both sides of the belt still, nothing is gathered.
    let grid = grid_of(&avoidance, [walker.position, rider.position]);
    let mut gathered = vec![Vec2::ONE];
    let crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    gather_carried(
        crowd.lanes(),
        &grid,
        &[SupportMotion::STILL, SupportMotion::STILL],
        &PlatformFrames::default(),
        &mut gathered,
    );
    assert!(gathered.is_empty());
}

#[test]
fn walkers_passed_through_keep_their_course_and_standing_agents_make_room() {
    // A passer (a walker held past `pass_through_after_s`) 1 m ahead of another agent on
    // open ground, the two closing head-on. A walking agent ignores the passer as the
    // passer ignores it: it keeps its preferred velocity (avoiding it, in a passage one
    // body wide, it could only flee ahead of the passer). An agent standing still makes
    // room. The same walker against a neighbour not passing through gives way. Measured:
    // (1.399, -0.001) m/s kept, (1.133, 0) giving way (braking at its 8 m/s²), 0.23 m/s
    // of room made.
    let mesh = mesh_of(&[quad(-10.0, 10.0, -10.0, 10.0, |_| 0.0)]);
    let snapshot = mesh.snapshot();
    let avoidance = CrowdConfig::default().avoidance;
    // The agent's velocity after the avoid pass against a walker closing head-on that has
    // gone `other_held_s` without progress.
    let agent_velocity = |status: AgentStatus, other_held_s: f32| {
        let agent = TestBody {
            position: Vec2::new(-0.5, 0.0),
            velocity: if status == AgentStatus::Moving {
                Vec2::new(1.4, 0.0)
            } else {
                Vec2::ZERO
            },
            status,
            unprogressed_s: 0.0,
            profile: ProfileId::DEFAULT,
        };
        let other = TestBody {
            position: Vec2::new(0.5, 0.0),
            velocity: Vec2::new(-1.4, 0.0),
            status: AgentStatus::Moving,
            unprogressed_s: other_held_s,
            profile: ProfileId::DEFAULT,
        };
        first_body_velocity(&snapshot, &avoidance, &[], [agent, other], &[], 1.0 / 30.0)
    };
    let passer_held_s = avoidance.pass_through_after_s + 0.5;
    let keeps = agent_velocity(AgentStatus::Moving, passer_held_s);
    assert!(keeps.distance(Vec2::new(1.4, 0.0)) < 0.01, "{keeps:?}");
    let gives_way = agent_velocity(AgentStatus::Moving, 0.0);
    assert!(
        gives_way.distance(Vec2::new(1.4, 0.0)) > 0.1,
        "{gives_way:?}"
    );
    let makes_room = agent_velocity(AgentStatus::Idle, passer_held_s);
    assert!(makes_room.length() > 0.05, "{makes_room:?}");
}

#[test]
fn a_walker_passing_through_still_gives_way_to_an_agent_that_keeps_its_course() {
    // A passer 1 m from an agent closing head-on. A walker it walks through; an agent that
    // does not negotiate (a vehicle, a charging boss) keeps its course and nobody walks
    // through it, so the passer gives way to it as any walker would.
    let mesh = mesh_of(&[quad(-10.0, 10.0, -10.0, 10.0, |_| 0.0)]);
    let snapshot = mesh.snapshot();
    let avoidance = CrowdConfig::default().avoidance;
    let vehicle_profile = AvoidanceProfile {
        negotiates: false,
        ..AvoidanceProfile::of(&avoidance)
    };
    // The crowd numbers its profiles; the avoid pass below gets the same table.
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let vehicle = crowd.add_avoidance_profile(vehicle_profile).unwrap();
    let mut profiles = vec![AvoidanceProfile::of(&avoidance); vehicle.index() + 1];
    profiles[vehicle.index()] = vehicle_profile;
    let passer = TestBody {
        position: Vec2::new(-0.5, 0.0),
        velocity: Vec2::new(1.4, 0.0),
        status: AgentStatus::Moving,
        unprogressed_s: avoidance.pass_through_after_s + 0.5,
        profile: ProfileId::DEFAULT,
    };
    let oncoming = |profile: ProfileId| TestBody {
        position: Vec2::new(0.5, 0.0),
        velocity: Vec2::new(-1.4, 0.0),
        status: AgentStatus::Moving,
        unprogressed_s: 0.0,
        profile,
    };
    let dt_s = 1.0 / 30.0;
    let through_walker = first_body_velocity(
        &snapshot,
        &avoidance,
        &profiles,
        [passer, oncoming(ProfileId::DEFAULT)],
        &[],
        dt_s,
    );
    assert!(
        through_walker.distance(Vec2::new(1.4, 0.0)) < 0.01,
        "{through_walker:?}"
    );
    let against_vehicle = first_body_velocity(
        &snapshot,
        &avoidance,
        &profiles,
        [passer, oncoming(vehicle)],
        &[],
        dt_s,
    );
    assert!(
        against_vehicle.distance(Vec2::new(1.4, 0.0)) > 0.1,
        "{against_vehicle:?}"
    );
}

/// One of the two bodies of a hand-built avoid pass: where it stands, its velocity
/// relative to its support, its status and how long it has gone without progress.
#[derive(Clone, Copy)]
struct TestBody {
    position: Vec2,
    velocity: Vec2,
    status: AgentStatus,
    unprogressed_s: f32,
    profile: ProfileId,
}

/// A neighbour grid over agents standing at `positions` (slot order), on flat ground.
fn grid_of(avoidance: &AvoidanceConfig, positions: [Vec2; 2]) -> NeighbourGrid {
    let mut grid = NeighbourGrid::default();
    grid.rebuild(
        [
            &positions.map(|position| position.x),
            &[0.0, 0.0],
            &positions.map(|position| position.y),
        ],
        avoidance.neighbour_range_m,
        avoidance.vertical_range_m,
        avoidance.neighbours_max,
    );
    grid
}

/// Slot 0's negotiated velocity when the avoid pass runs over `bodies` (slots 0 and 1) on
/// `snapshot` with the crowd's avoidance `profiles` (empty: profile 0 alone, from
/// `avoidance`), each slot carried by its support at `carried[slot]` (empty: every support
/// still), for a step of `dt_s`.
fn first_body_velocity(
    snapshot: &Snapshot,
    avoidance: &AvoidanceConfig,
    profiles: &[AvoidanceProfile],
    bodies: [TestBody; 2],
    carried: &[Vec2],
    dt_s: f32,
) -> Vec2 {
    let grid = grid_of(avoidance, bodies.map(|body| body.position));
    // Bodies, and what carries them, in the grid's cell order.
    let gathered: Vec<AvoidBody> = (0..2)
        .map(|index| {
            let slot = grid.slot_at(index);
            let body = bodies[slot];
            AvoidBody {
                position: body.position,
                velocity: body.velocity,
                desired: body.velocity,
                radius: 0.6,
                stalled_s: 0.0,
                unprogressed_s: body.unprogressed_s,
                status: body.status,
                velocity_valid: true,
                profile: body.profile,
                filter: FilterId::DEFAULT,
                speed_limit: 3.5,
                acceleration_limit: 8.0,
                polygon: polygon_at(snapshot, body.position.x, body.position.y),
                identity_bits: slot as u64 + 1,
            }
        })
        .collect();
    let carried: Vec<Vec2> = if carried.is_empty() {
        Vec::new()
    } else {
        (0..2).map(|index| carried[grid.slot_at(index)]).collect()
    };
    let own_profile = [AvoidanceProfile::of(avoidance)];
    let profiles = if profiles.is_empty() {
        &own_profile[..]
    } else {
        profiles
    };
    let mut velocities = Vec::new();
    avoid_pass(
        &grid,
        &gathered,
        &carried,
        &[],
        snapshot,
        avoidance,
        profiles,
        dt_s,
        &mut velocities,
    );
    velocities[grid.index_of_slot(0).unwrap()].velocity
}

fn dungeon() -> NavMesh {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/levels");
    let world = load_obj(&root.join("dungeon.obj"), &ObjOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap();
    NavMesh::from_file(
        bake(&world, &BakeConfig::preset(Preset::Recast))
            .unwrap()
            .to_file(),
    )
    .unwrap()
}

/// Runs `agents` of the shared set for `frames` frames (each takes its next target on
/// arrival), with or without local avoidance; returns the crowd and every event.
fn run_shared(
    mesh: &NavMesh,
    agents: usize,
    frames: usize,
    avoidance: bool,
) -> (Crowd, Vec<CrowdEvent>) {
    let mut config = CrowdConfig::default();
    config.avoidance.enabled = avoidance;
    run_shared_with(mesh, agents, frames, config)
}

fn run_shared_with(
    mesh: &NavMesh,
    agents: usize,
    frames: usize,
    config: CrowdConfig,
) -> (Crowd, Vec<CrowdEvent>) {
    let mut crowd = Crowd::new(mesh, config).unwrap();
    let plans: Plans = read_agents_csv(&common::level_path("dungeon_crowd_agents.csv"), agents)
        .unwrap()
        .into();
    let options = RunOptions {
        dt_s: 1.0 / 30.0,
        warm_up_frames: 0,
        frames,
        measure_quality: false,
        retarget: true,
        comparison_rule: false,
        stop_when_all_arrived: false,
        skip_off_mesh_starts: false,
        save_at_frame: None,
        settings_tag: 0,
    };
    let mut events = Vec::new();
    let mut frame = 0;
    run_crowd(
        &mut crowd,
        &plans,
        AgentParams::DETOUR_REFERENCE,
        &options,
        |crowd, step_events| {
            if frame % 30 == 0 {
                assert_on_mesh(crowd);
            }
            frame += 1;
            events.extend_from_slice(step_events);
        },
    )
    .unwrap();
    (crowd, events)
}

#[test]
fn slots_put_in_cell_order_keep_every_agent_and_handle() {
    // 32 frames: the crowd puts its slots in the neighbour grid's cell order at the end of
    // the 32nd, so the grid built that frame now names the agents in slot order.
    let mesh = dungeon();
    let (crowd, _) = run_shared(&mesh, 600, 32, true);
    let grid = crowd.neighbour_grid();
    assert_eq!(grid.len(), crowd.len());
    assert!((0..grid.len()).all(|index| grid.slot_at(index) == index));
    assert!((0..grid.len()).all(|slot| grid.index_of_slot(slot) == Some(slot)));
    // The agents were added in id order; they are not in it any more.
    let ids: Vec<AgentId> = crowd.agents().map(|view| view.id).collect();
    let bits: Vec<u64> = ids.iter().map(|id| id.to_bits()).collect();
    assert!(
        bits.windows(2).any(|pair| pair[0] > pair[1]),
        "the slots moved"
    );
    // Every id still finds its own slot, and each slot's agent is unique.
    for (slot, &id) in ids.iter().enumerate() {
        assert_eq!(crowd.slot_of(id), Some(slot));
    }
    let mut unique = bits.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 600);
    assert_on_mesh(&crowd);
}

/// Every agent stands on a live polygon, over it seen from above.
fn assert_on_mesh(crowd: &Crowd) {
    let snapshot = crowd.snapshot();
    for (slot, view) in crowd.agents().enumerate() {
        let polygon = crowd.polygon(view.id).unwrap();
        let tile = snapshot.tile(polygon).expect("a live polygon");
        let position = view.position;
        let (closest, over) = tile.closest_point(polygon.polygon(), position);
        let gap = Vec2::new(closest.x - position.x, closest.z - position.z).length();
        // A foot stopped by a wall lies on the wall's edge: allow rounding, nothing more.
        assert!(
            over || gap < 1e-4,
            "agent {slot} at {position} is {gap} m off its polygon"
        );
    }
}

#[test]
fn the_shared_dungeon_crowd_arrives_or_says_why_and_stays_on_the_mesh() {
    let mesh = dungeon();
    // Without avoidance: this is the runtime's promise (with it, see docs/benchmarks.md).
    let (crowd, events) = run_shared(&mesh, 300, 1500, false);
    let snapshot = crowd.snapshot();
    // No agent leaves the mesh: each stands on a live polygon, over it.
    for view in crowd.agents() {
        let polygon = crowd.polygon(view.id).unwrap();
        let tile = snapshot.tile(polygon).expect("a live polygon");
        let (_, over) = tile.closest_point(polygon.polygon(), view.position);
        assert!(over, "{} at {} is off its polygon", view.id, view.position);
    }
    // Every agent's first request ended in an event: arrived, partial, blocked or no path.
    let mut first_outcome = vec![false; crowd.len()];
    for event in &events {
        let entity = match event {
            CrowdEvent::Arrived { agent: entity, .. }
            | CrowdEvent::PartialArrived { agent: entity, .. }
            | CrowdEvent::Blocked { agent: entity, .. }
            | CrowdEvent::NoPath { agent: entity, .. } => *entity,
            // The dungeon has no off-mesh links; nothing is cancelled or held here; an
            // ended order is counted by its arrival or failure event.
            CrowdEvent::OrderEnded { .. }
            | CrowdEvent::StandFact { .. }
            | CrowdEvent::LinkStarted { .. }
            | CrowdEvent::LinkFinished { .. }
            | CrowdEvent::Cancelled { .. }
            | CrowdEvent::CancelFault { .. }
            | CrowdEvent::RouteInvalidated { .. } => continue,
            CrowdEvent::Quarantined { .. } => panic!("the kinematic controller is sane: {event:?}"),
        };
        if let Some(slot) = crowd.slot_of(entity) {
            first_outcome[slot] = true;
        }
    }
    let silent: Vec<usize> = (0..crowd.len()).filter(|&s| !first_outcome[s]).collect();
    assert!(
        silent.is_empty(),
        "agents without an outcome after 50 s: {silent:?}"
    );
    let arrivals = events
        .iter()
        .filter(|e| matches!(e, CrowdEvent::Arrived { .. }))
        .count();
    assert!(arrivals >= 300, "{arrivals} arrivals");
}

#[test]
fn a_pressed_crowd_keeps_every_foot_on_the_detail_surface() {
    // 700 of the shared agents in the dungeon, with avoidance and separation: the
    // separation rounds move feet without reading the height and read it once at the end,
    // and the dungeon has polygons whose detail triangles are not coplanar (stairs and
    // ramps). Every foot must still stand at the detail mesh's height where it is.
    let mesh = dungeon();
    let (crowd, _) = run_shared(&mesh, 700, 150, true);
    assert!(
        crowd.stats().separate_ms > 0.0,
        "the separation pass ran: {:?}",
        crowd.stats()
    );
    let snapshot = crowd.snapshot();
    let mut off_level = Vec::new();
    for (slot, view) in crowd.agents().enumerate() {
        let polygon = crowd.polygon(view.id).unwrap();
        let tile = snapshot.tile(polygon).expect("a live polygon");
        let foot = view.position;
        let height = tile.height_at(polygon.polygon(), Vec2::new(foot.x, foot.z));
        if (foot.y - height).abs() > 1e-5 {
            off_level.push((slot, foot, height));
        }
    }
    assert!(off_level.is_empty(), "feet off the surface: {off_level:?}");
}

#[test]
fn two_thousand_agents_step_the_same_at_1_2_and_8_threads() {
    same_at_any_thread_count(false);
}

#[test]
fn with_avoidance_two_thousand_agents_step_the_same_at_1_2_and_8_threads() {
    same_at_any_thread_count(true);
}

fn same_at_any_thread_count(avoidance: bool) {
    let mesh = dungeon();
    let run = |threads: usize| {
        let pool = pool_of(threads);
        pool.install(|| {
            let (crowd, events) = run_shared(&mesh, 2000, 300, avoidance);
            let lanes = crowd.lanes();
            let state: Vec<u32> = crowd
                .agents()
                .enumerate()
                .flat_map(|(slot, view)| {
                    let cursor = lanes
                        .corridor_and_cursor(slot)
                        .map_or(0, |(_, cursor)| cursor);
                    [
                        view.position.x.to_bits(),
                        view.position.y.to_bits(),
                        view.position.z.to_bits(),
                        view.velocity.x.to_bits(),
                        view.velocity.z.to_bits(),
                        cursor as u32,
                    ]
                })
                .collect();
            (state, events)
        })
    };
    let one = run(1);
    assert!(one.1.len() > 100);
    assert_eq!(one, run(2));
    assert_eq!(one, run(8));
}

/// The agents' feet after `frames` frames of the dungeon's first `agents` shared agents
/// under `config`, and the events, stepped on `pool` (or from outside any pool).
fn feet_after(
    mesh: &NavMesh,
    pool: Option<&rayon::ThreadPool>,
    agents: usize,
    frames: usize,
    config: CrowdConfig,
) -> (Vec<u32>, Vec<CrowdEvent>) {
    let run = || {
        let (crowd, events) = run_shared_with(mesh, agents, frames, config);
        let feet: Vec<u32> = crowd
            .agents()
            .flat_map(|view| [view.position.x.to_bits(), view.position.z.to_bits()])
            .collect();
        (feet, events)
    };
    match pool {
        Some(pool) => pool.install(run),
        None => run(),
    }
}

#[test]
fn keeping_the_workers_awake_changes_nothing_but_time() {
    let mesh = dungeon();
    let pool = pool_of(3);
    let run = |keep_workers_awake: bool| {
        let config = CrowdConfig {
            keep_workers_awake,
            ..CrowdConfig::default()
        };
        feet_after(&mesh, Some(&pool), 500, 120, config)
    };
    let awake = run(true);
    assert!(awake.1.len() > 10);
    assert_eq!(awake, run(false));
    // Stepped from outside any pool too (the step enters the global pool itself).
    assert_eq!(
        awake,
        feet_after(&mesh, None, 500, 120, CrowdConfig::default())
    );
}

#[test]
fn a_small_crowd_steps_on_the_calling_thread_and_moves_as_on_the_pool() {
    let mesh = dungeon();
    let pool = pool_of(3);
    // 200 agents: below the default threshold, so on one thread unless it is 0.
    let run = |serial_below_agents: usize| {
        let config = CrowdConfig {
            serial_below_agents,
            ..CrowdConfig::default()
        };
        feet_after(&mesh, Some(&pool), 200, 120, config)
    };
    let one_thread = run(CrowdConfig::default().serial_below_agents);
    assert!(one_thread.1.len() > 10);
    assert_eq!(one_thread, run(0));
    assert_eq!(
        one_thread,
        feet_after(&mesh, None, 200, 120, CrowdConfig::default())
    );

    // The controller sees the thread the step runs on: the caller's own for the small
    // crowd, a worker of the pool (which the step enters itself) with the threshold at 0.
    struct Witness(Vec<std::thread::ThreadId>);
    impl Controller for Witness {
        fn step_agents(
            &mut self,
            snapshot: &Snapshot,
            filters: &[QueryFilter],
            requests: &[StepRequest],
            feedback: &mut Vec<StepFeedback>,
        ) {
            self.0.push(std::thread::current().id());
            KinematicController.step_agents(snapshot, filters, requests, feedback);
        }
    }
    let threads_of = |serial_below_agents: usize| {
        let config = CrowdConfig {
            serial_below_agents,
            ..CrowdConfig::default()
        };
        let mut crowd = Crowd::new(&mesh, config).unwrap();
        crowd
            .add_agent(Vec3::new(0.0, 0.0, 0.0), AgentParams::DETOUR_REFERENCE)
            .ok();
        let mut witness = Witness(Vec::new());
        for _ in 0..3 {
            crowd.step(1.0 / 30.0, &mut witness).unwrap();
        }
        witness.0
    };
    let here = std::thread::current().id();
    assert_eq!(threads_of(256), [here; 3]);
    assert!(threads_of(0).iter().all(|&thread| thread != here));
}

#[test]
fn unknown_velocity_pauses_new_solves_without_losing_the_request() {
    let mesh = strip(4);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd
        .add_agent(Vec3::new(1.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE)
        .unwrap();
    let mut controller = common::Unsure { unknown: true };
    crowd.step(0.1, &mut controller).unwrap(); // the controller reports vUnknown
    let request = crowd.request_move(agent, Vec3::new(7.0, 0.0, 1.0)).unwrap();
    for _ in 0..5 {
        crowd.step(0.1, &mut controller).unwrap();
        // No solve while the velocity is unknown; the request keeps its identity.
        assert_eq!(crowd.status(agent).unwrap(), AgentStatus::WaitingForPath);
        assert_eq!(crowd.request(agent).unwrap(), Some(request));
    }
    // The order holds the mover: while the velocity is unknown no new order takes over,
    // and the owner stays.
    match crowd.request_move(agent, Vec3::new(3.0, 0.0, 1.0)) {
        Err(CrowdError::VelocityUnknown {
            agent: refused,
            owner,
        }) => {
            assert_eq!(refused, agent);
            assert_eq!(owner, MoverAction::Move(request));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(crowd.request(agent).unwrap(), Some(request));
    controller.unknown = false;
    crowd.step(0.1, &mut controller).unwrap();
    crowd.step(0.1, &mut controller).unwrap();
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Moving);
    assert_eq!(crowd.request(agent).unwrap(), Some(request));
    // With a valid velocity again, a new order takes over.
    let next = crowd.request_move(agent, Vec3::new(3.0, 0.0, 1.0)).unwrap();
    assert_eq!(crowd.request(agent).unwrap(), Some(next));
}

/// A crowd on `mesh` (a strip 80 m long) searching two nodes a frame, without head starts,
/// and one agent ordered from one end to the other: its search runs for many frames.
fn slow_walk_along(mesh: &NavMesh) -> (Crowd, AgentId, waymark::crowd::RequestId) {
    let config = CrowdConfig {
        path_nodes_per_step: 2,
        path_nodes_per_agent: 0.0,
        head_starts_per_step: 0,
        head_starts_per_agent: 0.0,
        ..CrowdConfig::default()
    };
    let mut crowd = Crowd::new(mesh, config).unwrap();
    let agent = crowd
        .add_agent(Vec3::new(1.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE)
        .unwrap();
    let order = crowd
        .request_move(agent, Vec3::new(79.0, 0.0, 1.0))
        .unwrap();
    (crowd, agent, order)
}

#[test]
fn h1_a_search_that_read_a_replaced_tile_expires_and_a_new_query_is_registered() {
    let polygons: Vec<WalkablePolygon> = (0..40)
        .map(|i| quad(2.0 * i as f32, 2.0 * (i + 1) as f32, 0.0, 2.0, |_| 0.0))
        .collect();
    let tile = TileData::from_walkable_polygons(&polygons).unwrap();
    let mut mesh = mesh_of(&polygons);
    let (mut crowd, agent, order) = slow_walk_along(&mesh);
    let mut controller = KinematicController;
    crowd.step(0.1, &mut controller).unwrap(); // the search starts on generation 1
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::WaitingForPath);
    let q7 = crowd.query(agent).unwrap().unwrap();
    assert_eq!(
        q7, order,
        "the order's first query has the order's identity"
    );
    // The tile is rebuilt (same place, new generation) while the search runs: the search
    // read it, so it closes at the change and its query expires (no result of it can be
    // adopted); the route is asked again as a new query.
    mesh.add_tiles(vec![tile]).unwrap();
    crowd.set_mesh(&mesh);
    let q8 = crowd.query(agent).unwrap().unwrap();
    for _ in 0..200 {
        crowd.step(0.1, &mut controller).unwrap();
        if crowd.status(agent).unwrap() == AgentStatus::Moving {
            break;
        }
    }
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Moving);
    // The order keeps its identity; the route computed again is a new query (Q8), not a
    // new attempt of Q7, which has expired for good.
    assert_eq!(crowd.request(agent).unwrap(), Some(order));
    assert_eq!(crowd.query(agent).unwrap(), Some(q8));
    assert_ne!(q8.logical, q7.logical, "a new identity");
    assert_eq!((q8.attempt, q8.epoch), (0, q7.epoch));
    let corridor = crowd.corridor(agent).unwrap().unwrap();
    assert_eq!(
        corridor.reads().newest_generation(),
        waymark::mesh::TileGeneration(2)
    );
}

#[test]
fn h5_a_result_of_an_older_epoch_is_rejected_and_the_query_resumes_under_the_new_one() {
    // A long strip searched two nodes a frame: the search is still running when the epoch
    // changes (as after a restore).
    let polygons: Vec<WalkablePolygon> = (0..40)
        .map(|i| quad(2.0 * i as f32, 2.0 * (i + 1) as f32, 0.0, 2.0, |_| 0.0))
        .collect();
    let mesh = mesh_of(&polygons);
    let (mut crowd, agent, order) = slow_walk_along(&mesh);
    let mut controller = KinematicController;
    for _ in 0..3 {
        crowd.step(0.1, &mut controller).unwrap();
    }
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::WaitingForPath);
    crowd.bump_epoch();
    // The registered query resumes: the same logical id, the next attempt, the new epoch.
    let resumed = crowd.query(agent).unwrap().unwrap();
    assert_eq!(
        (resumed.logical, resumed.attempt, resumed.epoch),
        (order.logical, order.attempt + 1, order.epoch + 1)
    );
    let mut adopted_at = None;
    for frame in 0..300 {
        crowd.step(0.1, &mut controller).unwrap();
        if crowd.status(agent).unwrap() == AgentStatus::Moving {
            adopted_at = Some(frame);
            break;
        }
    }
    // The old attempt's search was dropped as stale (its identity no longer matches), and
    // adoption checks the epoch besides: what the agent follows is the resumed query's.
    assert!(adopted_at.is_some(), "the resumed query is answered");
    assert_eq!(crowd.query(agent).unwrap(), Some(resumed));
    assert_eq!(crowd.request(agent).unwrap(), Some(order));
}

#[test]
fn agents_brake_before_a_steeper_patch_to_its_limit() {
    // 16 m of flat ground, then a 45° ramp (k = sqrt(2)): V = 3.5 becomes 2.47 m/s there.
    let mut polygons: Vec<WalkablePolygon> = (0..8)
        .map(|i| quad(2.0 * i as f32, 2.0 * (i + 1) as f32, 0.0, 2.0, |_| 0.0))
        .collect();
    polygons.push(quad(16.0, 20.0, 0.0, 2.0, |x| x - 16.0));
    let mesh = mesh_of(&polygons);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd
        .add_agent(Vec3::new(0.5, 0.0, 1.0), AgentParams::DETOUR_REFERENCE)
        .unwrap();
    crowd
        .request_move(agent, Vec3::new(19.5, 3.5, 1.0))
        .unwrap();
    let mut controller = KinematicController;
    let limit = 3.5 / 2f32.sqrt();
    let mut fastest_on_flat: f32 = 0.0;
    let mut entry_speed = None;
    for _ in 0..300 {
        crowd.step(1.0 / 30.0, &mut controller).unwrap();
        let speed = crowd.velocity(agent).unwrap().length();
        let x = crowd.position(agent).unwrap().x;
        if x < 14.0 {
            fastest_on_flat = fastest_on_flat.max(speed);
        }
        if entry_speed.is_none() && x >= 16.0 {
            entry_speed = Some(speed);
        }
    }
    assert!(
        fastest_on_flat > 3.4,
        "full speed on the flat: {fastest_on_flat}"
    );
    let entry = entry_speed.expect("the agent reaches the ramp");
    assert!(
        entry <= limit + 0.05,
        "entered the ramp at {entry} m/s, limit {limit}"
    );
}

#[test]
fn parallel_search_rounds_never_spend_more_than_the_frame_budget() {
    // A 30 x 30 grid of 2 m squares: 200 agents crossing it need tens of expansions each,
    // far more than a frame's 100 nodes, so every frame runs several rounds of searches.
    let polygons: Vec<WalkablePolygon> = (0..900)
        .map(|i| {
            let (column, row) = ((i % 30) as f32, (i / 30) as f32);
            quad(
                2.0 * column,
                2.0 * column + 2.0,
                2.0 * row,
                2.0 * row + 2.0,
                |_| 0.0,
            )
        })
        .collect();
    let mesh = mesh_of(&polygons);
    let budget = 100;
    let config = CrowdConfig {
        path_nodes_per_step: budget,
        path_nodes_per_agent: 0.0,
        head_starts_per_step: 0,
        head_starts_per_agent: 0.0,
        ..CrowdConfig::default()
    };
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let mut random = waymark::geom::SplitMix64::new(17);
    let mut point = || {
        Vec3::new(
            random.next_f32() * 59.0 + 0.5,
            0.0,
            random.next_f32() * 59.0 + 0.5,
        )
    };
    for _ in 0..200 {
        let agent = crowd
            .add_agent(point(), AgentParams::DETOUR_REFERENCE)
            .unwrap();
        crowd.request_move(agent, point()).unwrap();
    }
    let mut controller = KinematicController;
    let (mut spent, mut busy_frames) = (0u64, 0);
    for _ in 0..400 {
        crowd.step(1.0 / 30.0, &mut controller).unwrap();
        let expanded = crowd.stats().nodes_expanded;
        assert!(expanded <= budget, "a frame expanded {expanded} nodes");
        spent += u64::from(expanded);
        busy_frames += usize::from(expanded > budget / 2);
    }
    // The budget was used, not just respected, and every request was served.
    assert!(
        busy_frames > 20,
        "{busy_frames} frames used over half the budget"
    );
    assert!(spent > 2_000, "{spent} nodes in all");
    // Every first request was answered; an agent pushed off its corridor in the crowd may
    // be between a re-plan and its answer, for a frame or two.
    let first_requests_waiting = crowd
        .agents()
        .filter(|view| crowd.awaiting_first_path(view.id).unwrap())
        .count();
    assert_eq!(first_requests_waiting, 0);
    assert!(crowd.stats().oldest_wait_frames <= 2, "{:?}", crowd.stats());
}

#[test]
fn crowds_stepped_at_once_on_one_pool_all_finish() {
    use rayon::prelude::*;
    // A game may step several crowds in parallel on rayon's pool. Each step keeps the pool's
    // other threads busy while it runs; those keep-awake jobs must never hold a thread that
    // another crowd's step is waiting on for good. Four crowds, two threads.
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mesh_for_run = dungeon();
        let pool = pool_of(2);
        let new_crowd = |offset: usize| {
            let mut crowd = Crowd::new(&mesh_for_run, CrowdConfig::default()).unwrap();
            let plans = read_agents_csv(
                &common::level_path("dungeon_crowd_agents.csv"),
                offset + 300,
            )
            .unwrap();
            for plan in plans.into_iter().skip(offset) {
                let agent = crowd
                    .add_agent(plan.start, AgentParams::DETOUR_REFERENCE)
                    .unwrap();
                crowd.request_move(agent, plan.targets[0]).unwrap();
            }
            crowd
        };
        let mut crowds: Vec<Crowd> = (0..4).map(|i| new_crowd(300 * i)).collect();
        pool.install(|| {
            for _ in 0..60 {
                crowds.par_iter_mut().for_each(|crowd| {
                    crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
                });
            }
        });
        sender.send(()).unwrap();
    });
    receiver
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("every crowd finished its 60 steps (a minute without: a deadlock)");
}

#[test]
fn an_empty_crowd_and_a_crowd_emptied_mid_run_step_without_trouble() {
    // The grid beside the searches, the keep-awake jobs and the avoid pass all meet zero
    // agents: a crowd that starts empty, and one whose every agent is removed mid-run.
    let mesh = strip(4);
    let pool = pool_of(2);
    pool.install(|| {
        let mut empty = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
        for _ in 0..3 {
            assert!(
                empty
                    .step(0.1, &mut KinematicController)
                    .unwrap()
                    .is_empty()
            );
        }
        let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
        let agents: Vec<_> = (0..3)
            .map(|i| {
                let agent = crowd
                    .add_agent(
                        Vec3::new(1.0 + 2.0 * i as f32, 0.0, 1.0),
                        AgentParams::DETOUR_REFERENCE,
                    )
                    .unwrap();
                crowd.request_move(agent, Vec3::new(7.0, 0.0, 1.0)).unwrap();
                agent
            })
            .collect();
        for _ in 0..3 {
            crowd.step(0.1, &mut KinematicController).unwrap();
        }
        for agent in agents {
            crowd.remove_agent(agent).unwrap();
        }
        for _ in 0..3 {
            crowd.step(0.1, &mut KinematicController).unwrap();
        }
        assert_eq!(crowd.len(), 0);
        assert_eq!(crowd.neighbour_grid().len(), 0);
    });
}

/// A rayon pool of `threads` threads, for running a crowd at a chosen thread count.
fn pool_of(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}

#[test]
fn terrain_gradients_come_from_the_triangle_under_the_agent_whatever_the_hint() {
    // The generated hills: rolling ground whose polygons are not planar, so the gradient
    // is the detail triangle's. The hinted lookup (the slope pass's) must give the answer
    // of a plain search over the polygon's triangles, with a good hint, a stale one from
    // another polygon, or none.
    let level = waymark::scene::hills::hills(300, 3).unwrap();
    let world = level.scene.world_triangles().unwrap();
    let mesh = NavMesh::from_file(
        bake(&world, &BakeConfig::preset(Preset::Recast))
            .unwrap()
            .to_file(),
    )
    .unwrap();
    let snapshot = mesh.snapshot();
    let points = waymark::query::random_points(&snapshot, &QueryFilter::new(), 400, 9);
    let mut uneven = 0;
    let mut stale_hint = u32::MAX;
    for (polygon, point) in points {
        let tile = snapshot.tile(polygon).unwrap();
        let flat = Vec2::new(point.x, point.z);
        let index = polygon.polygon();
        // The plain search: the triangle whose barycentric weights are all non-negative.
        let expected = tile
            .detail_triangles(index)
            .iter()
            .find_map(|&[a, b, c]| {
                let turn = |p: Vec2, q: Vec2, r: Vec2| (q - p).perp_dot(r - p);
                let (a2, b2, c2) = (
                    Vec2::new(a.x, a.z),
                    Vec2::new(b.x, b.z),
                    Vec2::new(c.x, c.z),
                );
                let area = turn(a2, b2, c2);
                let inside = [turn(flat, b2, c2), turn(a2, flat, c2), turn(a2, b2, flat)]
                    .iter()
                    .all(|w| w / area >= -1e-5);
                inside.then(|| waymark::mesh::runtime_tile::triangle_gradient([a, b, c]))?
            })
            .expect("a random point lies on a detail triangle");
        uneven += usize::from(tile.uniform_gradient[usize::from(index)].is_none());
        let (unhinted, found) = tile.gradient_at(index, flat, u32::MAX);
        let (hinted, again) = tile.gradient_at(index, flat, found);
        let (stale, _) = tile.gradient_at(index, flat, stale_hint);
        for gradient in [unhinted, hinted, stale] {
            assert!(
                gradient.distance(expected) < 1e-3,
                "{gradient} against {expected}"
            );
        }
        assert_eq!(found, again);
        stale_hint = found;
    }
    assert!(
        uneven > 200,
        "only {uneven} of 400 points on uneven polygons"
    );
}

/// Ten agents ordered to the far end of a strip of 40 squares (each to its own place) with
/// 12 node expansions per frame between them: a search takes about 40, so the last path
/// comes after some 35 frames.
fn strip_crowd(head_starts: u32) -> (NavMesh, Crowd, Vec<AgentId>) {
    strip_crowd_with(head_starts, 12)
}

/// [`strip_crowd`] with `node_expansions` per frame.
fn strip_crowd_with(head_starts: u32, node_expansions: u32) -> (NavMesh, Crowd, Vec<AgentId>) {
    let polygons: Vec<WalkablePolygon> = (0..40)
        .map(|i| quad(2.0 * i as f32, 2.0 * (i + 1) as f32, 0.0, 4.0, |_| 0.0))
        .collect();
    let mesh = mesh_of(&polygons);
    let config = CrowdConfig {
        path_nodes_per_step: node_expansions,
        path_nodes_per_agent: 0.0,
        head_starts_per_step: head_starts,
        head_starts_per_agent: 0.0,
        ..CrowdConfig::default()
    };
    let mut crowd = Crowd::new(&mesh, config).unwrap();
    let params = AgentParams {
        radius_m: 0.3,
        ..AgentParams::DETOUR_REFERENCE
    };
    let agents = (0..10)
        .map(|i| {
            let agent = crowd
                .add_agent(Vec3::new(1.0 + 0.8 * i as f32, 0.0, 2.0), params)
                .unwrap();
            let target = Vec3::new(79.0 - 0.8 * i as f32, 0.0, 2.0);
            crowd.request_move(agent, target).unwrap();
            agent
        })
        .collect();
    (mesh, crowd, agents)
}

#[test]
fn agents_walk_a_head_start_while_their_paths_are_searched() {
    let (_mesh, mut crowd, agents) = strip_crowd(64);
    let mut controller = KinematicController;
    let mut meter = waymark::harness::FlowMeter::new();
    for &agent in &agents {
        meter.ordered(agent);
    }
    let starts: Vec<f32> = agents
        .iter()
        .map(|&a| crowd.position(a).unwrap().x)
        .collect();
    let mut arrived = Vec::new();
    let mut waiting_at_frame_5 = 0;
    for frame in 0..900 {
        for event in crowd.step(1.0 / 30.0, &mut controller).unwrap() {
            match event {
                CrowdEvent::Arrived { agent: entity, .. } => {
                    // At its own target when it arrives (later arrivals may jostle it).
                    let index = agents.iter().position(|&a| a == entity).unwrap();
                    let target = Vec3::new(79.0 - 0.8 * index as f32, 0.0, 2.0);
                    let at = crowd.position(entity).unwrap();
                    assert!(at.distance(target) <= 0.25 + 1e-4, "{entity:?} at {at}");
                    arrived.push(entity);
                    meter.finished(entity);
                }
                CrowdEvent::PartialArrived { .. } | CrowdEvent::NoPath { .. } => {
                    panic!("a head start's end is no arrival: {event:?}")
                }
                _ => {}
            }
        }
        meter.observe(&crowd, 1.0 / 30.0);
        if frame == 4 {
            // Everyone walks toward the target, though most paths are still searched, and
            // they count as waiting for their paths.
            waiting_at_frame_5 = crowd.stats().waiting_for_path;
            let first_paths = agents
                .iter()
                .filter(|&&agent| crowd.awaiting_first_path(agent).unwrap())
                .count();
            // No agent has been pushed off a corridor yet: everyone waiting waits for its
            // first path.
            assert_eq!(first_paths as u32, waiting_at_frame_5);
            for (&agent, &start) in agents.iter().zip(&starts) {
                assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Moving);
                assert!(crowd.position(agent).unwrap().x > start, "{agent:?}");
            }
        }
    }
    assert!(
        waiting_at_frame_5 >= 5,
        "{waiting_at_frame_5} waiting at frame 5"
    );
    let report = meter.report(&crowd);
    assert!(report.order_to_motion_frames_p95 <= 2, "{report:?}");
    assert_eq!(arrived.len(), 10, "all arrive at their real targets");
    for &agent in &agents {
        assert!(!crowd.awaiting_first_path(agent).unwrap());
    }
}

#[test]
fn without_head_starts_agents_stand_until_their_paths_come() {
    let (_mesh, mut crowd, agents) = strip_crowd(0);
    let mut controller = KinematicController;
    for _ in 0..5 {
        crowd.step(1.0 / 30.0, &mut controller).unwrap();
    }
    let waiting = agents
        .iter()
        .filter(|&&agent| crowd.status(agent).unwrap() == AgentStatus::WaitingForPath)
        .count();
    assert!(waiting >= 5, "{waiting} of 10 still waiting at frame 5");
    assert_eq!(crowd.stats().waiting_for_path as usize, waiting);
}

#[test]
fn a_search_time_budget_still_finds_every_path_and_a_bad_one_is_refused_by_name() {
    // A time budget far below one round: a round still runs each frame, so every agent
    // gets its path and arrives (in more frames than the node budget alone needs).
    let mut config = CrowdConfig {
        path_nodes_per_step: 12,
        path_nodes_per_agent: 0.0,
        head_starts_per_step: 0,
        head_starts_per_agent: 0.0,
        path_search_time_ms: 1e-6,
        ..CrowdConfig::default()
    };
    let polygons: Vec<WalkablePolygon> = (0..40)
        .map(|i| quad(2.0 * i as f32, 2.0 * (i + 1) as f32, 0.0, 4.0, |_| 0.0))
        .collect();
    let mesh = mesh_of(&polygons);
    let mut timed = Crowd::new(&mesh, config).unwrap();
    let mut arrived = 0;
    let mut controller = KinematicController;
    let params = AgentParams {
        radius_m: 0.3,
        ..AgentParams::DETOUR_REFERENCE
    };
    for i in 0..10 {
        let agent = timed
            .add_agent(Vec3::new(1.0 + 0.8 * i as f32, 0.0, 2.0), params)
            .unwrap();
        timed
            .request_move(agent, Vec3::new(79.0 - 0.8 * i as f32, 0.0, 2.0))
            .unwrap();
    }
    for _ in 0..900 {
        for event in timed.step(1.0 / 30.0, &mut controller).unwrap() {
            arrived += usize::from(matches!(event, CrowdEvent::Arrived { .. }));
        }
    }
    assert_eq!(arrived, 10);
    for bad in [-1.0, f32::NAN, f32::INFINITY] {
        config.path_search_time_ms = bad;
        match Crowd::new(&mesh, config) {
            Err(CrowdError::BadConfig { field, .. }) => {
                assert_eq!(field, "path_search_time_ms")
            }
            other => panic!("{bad}: {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn a_head_start_walked_to_its_end_goes_on_while_the_path_is_still_searched() {
    // One node expansion a frame: the ten paths of about 40 expansions each come one
    // every 40 frames or so. A head start is at most four squares (8 m); agents reaching
    // its end walk on greedily, so after 5 s those still without their path have gone
    // well past it toward their targets, with no arrival reported on the way.
    let (_mesh, mut crowd, agents) = strip_crowd_with(64, 1);
    let starts: Vec<f32> = agents
        .iter()
        .map(|&a| crowd.position(a).unwrap().x)
        .collect();
    let mut controller = KinematicController;
    for _ in 0..150 {
        for event in crowd.step(1.0 / 30.0, &mut controller).unwrap() {
            assert!(
                !matches!(event, CrowdEvent::PartialArrived { .. }),
                "{event:?}"
            );
        }
    }
    let mut still_waiting = 0;
    for (&agent, &start) in agents.iter().zip(&starts) {
        if crowd.awaiting_first_path(agent).unwrap() {
            still_waiting += 1;
            let walked = crowd.position(agent).unwrap().x - start;
            assert!(walked > 12.0, "{agent:?} walked {walked} m");
        }
    }
    assert!(
        still_waiting >= 5,
        "{still_waiting} still without their path"
    );
}

#[test]
fn a_rebuilt_tile_under_an_adopted_route_is_reported_with_the_tile_then_planned_again() {
    let polygons: Vec<WalkablePolygon> = (0..10)
        .map(|i| quad(2.0 * i as f32, 2.0 * (i + 1) as f32, 0.0, 2.0, |_| 0.0))
        .collect();
    let tile = TileData::from_walkable_polygons(&polygons).unwrap();
    let mut mesh = mesh_of(&polygons);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd
        .add_agent(Vec3::new(1.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE)
        .unwrap();
    let target = Vec3::new(19.0, 0.0, 1.0);
    let order = crowd.request_move(agent, target).unwrap();
    let mut controller = KinematicController;
    for _ in 0..10 {
        crowd.step(1.0 / 30.0, &mut controller).unwrap();
    }
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::Moving);
    // The tile is rebuilt (same place, a new generation) under the walking agent.
    let slot = mesh.add_tiles(vec![tile]).unwrap()[0];
    crowd.set_mesh(&mesh);
    let events = crowd.step(1.0 / 30.0, &mut controller).unwrap();
    assert_eq!(
        events,
        [CrowdEvent::RouteInvalidated {
            agent,
            request: order,
            changed: waymark::query::Validity::TileChanged(slot),
        }]
    );
    // It plans again on the new tile and arrives, under the same order.
    let mut arrived = None;
    for _ in 0..300 {
        for event in crowd.step(1.0 / 30.0, &mut controller).unwrap() {
            if let CrowdEvent::Arrived { request, .. } = event {
                arrived = Some(request);
            }
        }
    }
    assert_eq!(arrived, Some(order));
    assert!(crowd.position(agent).unwrap().distance(target) <= 0.25);
}
