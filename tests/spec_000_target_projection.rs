//! Spec 000 (navigation target projection), worked examples t1 to t11, with the spec's
//! numbers: the seat behind a board (t2 to t11) and the wall with an approach side (t1).

mod common;
use glam::{Affine3A, Vec2, Vec3};
use waymark::crowd::{
    AgentId, AgentParams, Crowd, CrowdConfig, CrowdEvent, FailureCondition, HoldPolicy,
    InteractionFailure, InteractionPhase, KinematicController, MoverAction, Outcome, RequestId,
};
use waymark::harness::HostWorld;
use waymark::ids::TransformVersion;

use waymark::mesh::{NavMesh, Snapshot, WalkablePolygon};
use waymark::query::{ApproachSide, NearestOptions, QueryFilter, polygons_within, raycast};
use waymark::target::{
    BodyProfile, FacingRule, InPlaceRule, InteractionRule, ObjectMotion, Placement, ProbeRule,
    Shape, SightFrom, StandArea, StartProjection, StaticWorld, TargetError, TargetRecord,
    Tolerances, Verdict, legal_fragments, project_start, project_target, slice_candidates,
    slice_positions, validate_pose,
};

const TAN_40: f32 = 0.839_099_6;

fn rectangle(x0: f32, x1: f32, z0: f32, z1: f32, y: f32) -> Vec<Vec3> {
    vec![
        Vec3::new(x0, y, z0),
        Vec3::new(x1, y, z0),
        Vec3::new(x1, y, z1),
        Vec3::new(x0, y, z1),
    ]
}

fn mesh_of(polygons: &[WalkablePolygon]) -> NavMesh {
    common::mesh_of(polygons, 0.4, 1.8)
}

/// The seat of spec 000: walkable N = [0.6, 0.9] x [-0.7, 0.7] (already eroded for a 0.4 m
/// body), a seat (the target) filling x <= 0, a board at x = 0.2, z in +-`board_half`,
/// y in [0, 1.6], floor y = 0, ceiling y = 2.2.
struct Seat {
    mesh: NavMesh,
    world: StaticWorld,
    record: TargetRecord,
}

fn seat(board_half: f32, probe_radius: f32) -> Seat {
    let mesh = mesh_of(&[WalkablePolygon::ground(rectangle(0.6, 0.9, -0.7, 0.7, 0.0))]);
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
        .add(
            "ceiling",
            Shape::HalfSpace {
                normal: -Vec3::Y,
                offset: -2.2,
            },
        )
        .unwrap();
    world
        .add(
            "board",
            Shape::Box {
                min: Vec3::new(0.2, 0.0, -board_half),
                max: Vec3::new(0.2, 1.6, board_half),
            },
        )
        .unwrap();
    let seat = world
        .add(
            "seat",
            Shape::Box {
                min: Vec3::new(-0.6, 0.0, -0.6),
                max: Vec3::new(0.0, 2.0, 0.6),
            },
        )
        .unwrap();
    let record = TargetRecord {
        instance: 7,
        asset_version: 3,
        placement: Placement::Fixed {
            transform_version: TransformVersion(12),
        },
        slot: 1,
        body: BodyProfile {
            radius_m: 0.4,
            height_m: 1.8,
            eye_height_m: 1.6,
            hand_height_m: 1.2,
            hand_forward_m: 0.0,
            clearance_tolerance_m: 1e-4,
        },
        stand: StandArea::Region {
            polygons: vec![vec![
                Vec2::new(0.65, -0.6),
                Vec2::new(1.0, -0.6),
                Vec2::new(1.0, 0.6),
                Vec2::new(0.65, 0.6),
            ]],
            height_m: 0.0,
        },
        facing: FacingRule {
            forward: Vec2::new(-1.0, 0.0),
            max_angle_deg: 40.0,
            in_place: InPlaceRule::Reject,
        },
        layer: 0,
        approach_side: Some(ApproachSide {
            origin: Vec2::ZERO,
            outward: Vec2::X,
        }),
        tolerances: Tolerances {
            horizontal_m: 0.25,
            vertical_m: 0.5,
        },
        interaction: InteractionRule {
            contact: Vec3::new(0.0, 1.2, 0.0),
            distance_min_m: 0.4,
            distance_max_m: 1.0,
            line_of_sight: true,
            sight_from: SightFrom::Hand,
            sight_margin_m: 0.02,
            probe: Some(ProbeRule {
                radius_m: probe_radius,
                surface_normal: Vec3::X,
                lift_from_height_m: 1.0,
                reach_m: 1.0,
                patch_min: Vec3::new(0.0, 1.1, -0.05),
                patch_max: Vec3::new(0.0, 1.3, 0.05),
                contact_error_m: 0.002,
                penetration_m: 0.0005,
            }),
        },
        target_shape: seat,
        sample_spacing_m: 0.05,
        candidates_max: 64,
    };
    Seat {
        mesh,
        world,
        record,
    }
}

fn close(actual: f32, expected: f32, tolerance: f32) -> bool {
    (actual - expected).abs() <= tolerance
}

#[test]
fn t1_wall_approach_side_and_horizontal_tolerance() {
    // Wall along x = 0 (a box x in [-0.2, 0]); walkable space eroded by the 0.4 m radius on
    // both sides; a floor above on support layer 1.
    let mut near = WalkablePolygon::ground(rectangle(0.4, 3.0, -1.0, 1.0, 0.0));
    near.layer = 0;
    let far = WalkablePolygon::ground(rectangle(-3.0, -0.25, -1.0, 1.0, 0.0));
    let mut upstairs = WalkablePolygon::ground(rectangle(0.4, 3.0, -1.0, 1.0, 3.0));
    upstairs.layer = 1;
    let mesh = mesh_of(&[near, far, upstairs]);
    let snapshot = mesh.snapshot();
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
    let wall = world
        .add(
            "wall",
            Shape::Box {
                min: Vec3::new(-0.2, 0.0, -2.0),
                max: Vec3::new(0.0, 2.5, 2.0),
            },
        )
        .unwrap();
    let mut record = seat(0.1, 0.01).record;
    record.target_shape = wall;
    record.stand = StandArea::Points {
        points: vec![Vec3::new(0.2, 0.0, 0.0)],
        continuous_offset: false,
    };
    record.interaction.contact = Vec3::new(0.0, 1.2, 0.0);
    record.interaction.probe = None;
    record.tolerances.horizontal_m = 0.1;
    let filter = QueryFilter::new();

    // δh = 0.1: the body centre needs x >= 0.4, 0.2 away: no legal projection at all.
    let result = project_target(&snapshot, &filter, &record, &world, None).unwrap();
    assert_eq!(result.verdict, Verdict::NoLegalRegion);
    assert!(result.points[0].candidates.is_empty());

    // δh = 0.25: q = (0.4, 0, 0), offset 0.2, and the pose checks pass.
    record.tolerances.horizontal_m = 0.25;
    let result = project_target(&snapshot, &filter, &record, &world, None).unwrap();
    let Verdict::Success(pose) = &result.verdict else {
        panic!("expected a pose, got {:?}", result.verdict);
    };
    assert!(close(pose.foot.x, 0.4, 1e-6) && close(pose.foot.z, 0.0, 1e-6));
    assert!(close(pose.projection_distance_m, 0.2, 1e-6));
    assert_eq!(pose.layer, 0);
    let report = &result.attempts[0].report;
    assert!(report.body_clear, "{:?}", report.body);

    // The other side of the wall: from p = (0.1, 0, 0) it is nearer (0.35) than the
    // allowed side (0.3)... and the approach side rejects it while it would otherwise win.
    let p = Vec3::new(-0.1, 0.0, 0.0);
    let with_side = NearestOptions {
        layer: Some(0),
        approach_side: record.approach_side,
    };
    let without_side = NearestOptions {
        layer: Some(0),
        approach_side: None,
    };
    let unrestricted = polygons_within(&snapshot, p, 0.6, 0.5, &filter, &without_side).unwrap();
    assert!(
        close(unrestricted[0].point.x, -0.25, 1e-6),
        "the far side is nearest"
    );
    let restricted = polygons_within(&snapshot, p, 0.6, 0.5, &filter, &with_side).unwrap();
    assert_eq!(restricted.len(), 1);
    assert!(close(restricted[0].point.x, 0.4, 1e-6));

    // The floor above at the same horizontal place is rejected by the support layer.
    let above = Vec3::new(0.4, 3.0, 0.0);
    let any_layer = NearestOptions {
        layer: None,
        approach_side: None,
    };
    let found = polygons_within(&snapshot, above, 0.25, 3.5, &filter, &any_layer).unwrap();
    assert!(found.iter().any(|n| close(n.point.y, 3.0, 1e-6)));
    let ground_only = polygons_within(&snapshot, above, 0.25, 3.5, &filter, &with_side).unwrap();
    assert!(ground_only.iter().all(|n| close(n.point.y, 0.0, 1e-6)));
}

#[test]
fn t2_allowed_region_intersects_walkable_polygon() {
    let overlap = waymark::geom::planar::intersect_convex(
        &[
            Vec2::new(0.65, -0.6),
            Vec2::new(1.0, -0.6),
            Vec2::new(1.0, 0.6),
            Vec2::new(0.65, 0.6),
        ],
        &[
            Vec2::new(0.6, -0.7),
            Vec2::new(0.9, -0.7),
            Vec2::new(0.9, 0.7),
            Vec2::new(0.6, 0.7),
        ],
    );
    let (min, max) = overlap.iter().fold(
        (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN)),
        |(a, b), p| (a.min(*p), b.max(*p)),
    );
    assert_eq!(overlap.len(), 4);
    assert!(close(min.x, 0.65, 1e-6) && close(max.x, 0.9, 1e-6));
    assert!(close(min.y, -0.6, 1e-6) && close(max.y, 0.6, 1e-6));
}

#[test]
fn t3_distance_annulus_and_facing_wedge() {
    let mut seat = seat(0.1, 0.01);
    seat.record.interaction.line_of_sight = false;
    let snapshot = seat.mesh.snapshot();
    let report =
        legal_fragments(&snapshot, &QueryFilter::new(), &seat.record, &seat.world).unwrap();
    assert_eq!(report.fragments.len(), 1);
    let fragment = &report.fragments[0];
    let mut checked = 0;
    for i in 0..=60 {
        for j in 0..=60 {
            let (x, z) = (0.6 + 0.35 * i as f32 / 60.0, -0.7 + 1.4 * j as f32 / 60.0);
            let r2 = x * x + z * z;
            let expected = (0.65..=0.9).contains(&x)
                && (-0.6..=0.6).contains(&z)
                && (0.16..=1.0).contains(&r2)
                && z.abs() <= x * TAN_40;
            // Skip points within rounding of a boundary.
            let margin = [
                (r2 - 1.0).abs(),
                (z.abs() - x * TAN_40).abs(),
                (x - 0.65).abs(),
                (x - 0.9).abs(),
                (z.abs() - 0.6).abs(),
            ]
            .into_iter()
            .fold(f32::MAX, f32::min);
            if margin < 1e-4 {
                continue;
            }
            assert_eq!(
                fragment.region.contains(Vec2::new(x, z)),
                expected,
                "({x}, {z})"
            );
            checked += 1;
        }
    }
    assert!(checked > 3000);
    let labels = fragment.active_labels();
    assert!(labels.contains(&"interaction distance max"), "{labels:?}");
    assert!(
        labels.iter().any(|l| l.starts_with("facing wedge")),
        "{labels:?}"
    );
}

#[test]
fn t4_board_occludes_the_sight_cone_and_p_cannot_interact() {
    let seat = seat(0.1, 0.01);
    let snapshot = seat.mesh.snapshot();
    let report =
        legal_fragments(&snapshot, &QueryFilter::new(), &seat.record, &seat.world).unwrap();
    for i in 0..=40 {
        for j in 0..=40 {
            let (x, z) = (0.65 + 0.25 * i as f32 / 40.0, -0.6 + 1.2 * j as f32 / 40.0);
            if (z.abs() - 0.6 * x).abs() < 1e-4 {
                continue;
            }
            let in_any = report
                .fragments
                .iter()
                .any(|f| f.region.contains(Vec2::new(x, z)));
            let others = x * x + z * z <= 1.0 && z.abs() <= x * TAN_40;
            assert_eq!(in_any, others && z.abs() > 0.6 * x, "({x}, {z})");
        }
    }
    // p = (0.65, 0) projects (it lies in R ∩ N) but its sight line hits the board.
    let p = validate_pose(&seat.record, Vec3::new(0.65, 0.0, 0.0), &seat.world);
    let sight = p.sight.as_ref().unwrap();
    assert!(!sight.clear);
    assert_eq!(p.failure(), Some("line of sight"));
    let blocked = sight.crossings.iter().find(|c| c.blocked).unwrap();
    assert!(close(blocked.point.x, 0.2, 1e-6) && close(blocked.point.z, 0.0, 1e-6));
}

#[test]
fn t5_fragments_and_their_distance_bound() {
    let seat = seat(0.1, 0.01);
    let snapshot = seat.mesh.snapshot();
    let report =
        legal_fragments(&snapshot, &QueryFilter::new(), &seat.record, &seat.world).unwrap();
    assert_eq!(report.fragments.len(), 2, "C+ and C-");
    let limit = 1.0 / 1.36f32.sqrt(); // 0.8575
    for fragment in &report.fragments {
        let (low, high) = fragment.x_extent;
        assert!(close(low, 0.65, 1e-6), "{low}");
        assert!(close(high, limit, 2e-5), "{high} vs {limit}");
        assert!(fragment.region.slice_is_empty(limit + 1e-4));
        assert!(!fragment.region.slice_is_empty(limit - 1e-3));
    }
    let upper = &report.fragments[0];
    let lower = &report.fragments[1];
    assert!(upper.region.contains(Vec2::new(0.75, 0.525)));
    assert!(lower.region.contains(Vec2::new(0.75, -0.525)));
    assert!(!upper.region.contains(Vec2::new(0.75, -0.525)));
    // 0.6x < z is strict: the shadow edge itself is not visible.
    assert!(!upper.region.contains(Vec2::new(0.75, 0.45)));
    assert!(upper.region.contains(Vec2::new(0.75, 0.4501)));
    let labels = upper.active_labels();
    assert!(
        labels.iter().any(|l| l.starts_with("visible: ray through")),
        "{labels:?}"
    );
    assert!(labels.contains(&"interaction distance max"), "{labels:?}");
    assert_ne!(upper.region_hash(), lower.region_hash());
}

#[test]
fn t6_candidate_q() {
    let seat = seat(0.1, 0.01);
    let snapshot = seat.mesh.snapshot();
    let report =
        legal_fragments(&snapshot, &QueryFilter::new(), &seat.record, &seat.world).unwrap();
    let upper = &report.fragments[0];
    let slice = upper.region.slice(0.75);
    assert_eq!(slice.len(), 1);
    assert!(close(slice[0].low, 0.45, 1e-6) && slice[0].low_open);
    assert!(close(slice[0].high, 0.6, 1e-6) && !slice[0].high_open);
    assert_eq!(slice_positions(upper.x_extent, 0.05).next(), Some(0.75));
    let q = slice_candidates(upper, 0.75)[0];
    assert!(close(q.x, 0.75, 1e-6) && close(q.y, 0.525, 1e-6));

    let pose = validate_pose(&seat.record, Vec3::new(q.x, 0.0, q.y), &seat.world);
    assert!(close(pose.distance_m, 0.838_125f32.sqrt(), 1e-5)); // 0.9155
    assert!(close(pose.distance_m, 0.9155, 1e-4));
    assert!(close(pose.facing_dot.unwrap(), 0.8192, 1e-4));
    assert!(close(pose.facing_limit, 0.7660, 1e-4));
    let sight = pose.sight.as_ref().unwrap();
    let board_face = sight
        .crossings
        .iter()
        .find(|c| c.face_axis == 0 && close(c.point.x, 0.2, 1e-6))
        .unwrap();
    assert!(close(board_face.point.z, 0.14, 1e-5) && !board_face.blocked);
    assert!(sight.clear && pose.passed);

    // The projection picks the same q, in fragment C+ (id 0).
    let result = project_target(
        &snapshot,
        &QueryFilter::new(),
        &seat.record,
        &seat.world,
        None,
    )
    .unwrap();
    let Verdict::Success(verified) = &result.verdict else {
        panic!("{:?}", result.verdict);
    };
    assert_eq!(verified.fragment, Some(0));
    assert_eq!(verified.region_hash, upper.region_hash());
    assert!(close(verified.foot.x, 0.75, 1e-6) && close(verified.foot.z, 0.525, 1e-6));
    assert_eq!(verified.slot, 1);
    assert_eq!(
        verified.versions.transform_version,
        Some(TransformVersion(12))
    );
    assert_eq!(result.attempts.len(), 1);
    // The pose names the navigation tiles it read: valid until one is rebuilt.
    assert_eq!(verified.read_set.tiles.len(), 1);
    assert_eq!(
        verified
            .read_set
            .still_valid(&seat.mesh, &QueryFilter::new(), |_| None),
        waymark::query::Validity::Valid
    );
}

#[test]
fn zero_tolerances_are_applied_exactly() {
    let mesh = mesh_of(&[WalkablePolygon::ground(rectangle(0.0, 2.0, 0.0, 2.0, 0.0))]);
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let options = NearestOptions::default();
    let on = polygons_within(
        &snapshot,
        Vec3::new(1.0, 0.0, 1.0),
        0.0,
        0.0,
        &filter,
        &options,
    )
    .unwrap();
    assert_eq!(on.len(), 1);
    let off = polygons_within(
        &snapshot,
        Vec3::new(2.00005, 0.0, 1.0),
        0.0,
        0.0,
        &filter,
        &options,
    )
    .unwrap();
    assert!(
        off.is_empty(),
        "0.05 mm outside with zero tolerance: {off:?}"
    );
    assert!(polygons_within(&snapshot, Vec3::ONE, -1.0, 0.0, &filter, &options).is_err());
}

#[test]
fn t7_body_capsule_clearances() {
    let seat = seat(0.1, 0.01);
    let pose = validate_pose(&seat.record, Vec3::new(0.75, 0.0, 0.525), &seat.world);
    let by_name = |name: &str| {
        let id = seat.world.find(name).unwrap();
        *pose.body.iter().find(|c| c.shape == id).unwrap()
    };
    let board = by_name("board");
    // 0.55 from the board's plane (the spec's bound); the true distance is to its edge.
    let plane_distance = 0.75 - 0.2;
    assert!(close(plane_distance, 0.55, 1e-6) && board.axis_distance_m >= plane_distance);
    assert!(
        board.clearance_m > 0.0,
        "axis-to-board beyond the 0.4 m radius"
    );
    assert!(close(
        board.axis_distance_m,
        (0.55f32 * 0.55 + 0.425 * 0.425).sqrt(),
        1e-5
    ));
    let ceiling = by_name("ceiling");
    assert!(
        close(ceiling.clearance_m, 0.4, 1e-5),
        "top 1.8 is 0.4 below 2.2"
    );
    let floor = by_name("floor");
    assert!(
        close(floor.clearance_m, 0.0, 1e-6),
        "the foot rests on its support"
    );
    assert!(pose.body_clear);
}

#[test]
fn t8_probe_sweep_clear() {
    let seat = seat(0.1, 0.01);
    let pose = validate_pose(&seat.record, Vec3::new(0.75, 0.0, 0.525), &seat.world);
    let probe = pose.probe.as_ref().unwrap();
    assert!(close(probe.centre_end.x, 0.01, 1e-6) && close(probe.centre_end.y, 1.2, 1e-6));
    assert!(close(probe.lift_start.y, 1.0, 1e-6) && close(probe.hand.y, 1.2, 1e-6));
    assert!(close(probe.extension_m, 0.90732, 1e-5) && probe.extension_m <= 1.0);
    let board = seat.world.find("board").unwrap();
    let distance = probe
        .obstacle_distances
        .iter()
        .find(|(id, _)| *id == board)
        .unwrap()
        .1;
    assert!(close(distance, 0.02838, 1e-5), "{distance}");
    assert!(probe.contact_error_m <= 0.002 && probe.penetration_m <= 0.0005);
    assert!(probe.in_patch && probe.passed);
}

#[test]
fn t9_bigger_probe_fails_the_sweep() {
    let seat = seat(0.1, 0.04);
    let pose = validate_pose(&seat.record, Vec3::new(0.75, 0.0, 0.525), &seat.world);
    let probe = pose.probe.as_ref().unwrap();
    assert!(close(probe.centre_end.x, 0.04, 1e-6));
    let (worst, clearance) = probe.worst_obstacle.unwrap();
    assert_eq!(worst, seat.world.find("board").unwrap());
    assert!(
        close(clearance + 0.04, 0.01472, 1e-5),
        "{}",
        clearance + 0.04
    );
    assert!(!probe.passed);
    // Sight alone is still clear: the failure is the sweep, reported as such.
    assert!(pose.sight.as_ref().unwrap().clear);
    assert_eq!(pose.failure(), Some("probe sweep"));
    // The region search goes on to other candidates.
    let snapshot = seat.mesh.snapshot();
    let result = project_target(
        &snapshot,
        &QueryFilter::new(),
        &seat.record,
        &seat.world,
        None,
    )
    .unwrap();
    assert!(result.attempts.len() > 1);
    assert_eq!(result.attempts[0].report.failure(), Some("probe sweep"));
}

#[test]
fn t10_start_segment() {
    let seat = seat(0.1, 0.01);
    let snapshot = seat.mesh.snapshot();
    let filter = QueryFilter::new();
    // The foot, on ground layer 0, projected at most `correction` horizontally, 0.3 vertically.
    let start_from = |foot: Vec3, correction: f32| {
        project_start(
            &snapshot,
            &filter,
            foot,
            0,
            correction,
            0.3,
            &seat.record.body,
            &seat.world,
        )
        .unwrap()
    };
    let start = Vec3::new(0.8, 0.0, 0.7);
    let projected = start_from(start, 0.3);
    let StartProjection::OnMesh {
        polygon,
        point,
        correction_m,
    } = projected
    else {
        panic!("{projected:?}");
    };
    assert!(correction_m < 1e-6 && point.distance(start) < 1e-6);
    // (0.8 - 0.05 t, 0.7 - 0.175 t) stays inside N: the ray on the mesh reaches q.
    let q = Vec3::new(0.75, 0.0, 0.525);
    let ray = raycast(&snapshot, polygon, start, q, &filter).unwrap();
    assert_eq!(ray.hit_fraction, None);
    for step in 0..=10 {
        let t = step as f32 / 10.0;
        let p = Vec2::new(0.8 - 0.05 * t, 0.7 - 0.175 * t);
        assert!((0.6..=0.9).contains(&p.x) && (-0.7..=0.7 + 1e-6).contains(&p.y));
    }
    // A foot in the air above N re-lands instead; a foot behind the board cannot reach the
    // mesh through it.
    let air = start_from(Vec3::new(0.8, 1.5, 0.0), 0.3);
    assert!(
        matches!(air, StartProjection::InTheAir { height_above_m } if close(height_above_m, 1.5, 1e-5))
    );
    let behind = start_from(Vec3::new(0.1, 0.0, 0.0), 0.6);
    assert!(
        matches!(behind, StartProjection::AccessBlocked { .. }),
        "{behind:?}"
    );
    let far = start_from(Vec3::new(5.0, 0.0, 0.0), 0.3);
    assert_eq!(far, StartProjection::OutOfReach);
}

#[test]
fn t11_wider_board_leaves_no_legal_region() {
    let seat = seat(0.18, 0.01);
    let snapshot = seat.mesh.snapshot();
    let result = project_target(
        &snapshot,
        &QueryFilter::new(),
        &seat.record,
        &seat.world,
        None,
    )
    .unwrap();
    assert!(result.region.fragments.is_empty());
    assert_eq!(result.verdict, Verdict::NoLegalRegion);
    assert!(result.attempts.is_empty());
    assert_eq!(result.region.shadows.len(), 1);

    // Apart from that: a non-empty region whose samples all fail is "candidates exhausted".
    let mut short_reach = seat_with_reach(0.5);
    short_reach.record.candidates_max = 10;
    let snapshot = short_reach.mesh.snapshot();
    let result = project_target(
        &snapshot,
        &QueryFilter::new(),
        &short_reach.record,
        &short_reach.world,
        None,
    )
    .unwrap();
    assert_eq!(result.verdict, Verdict::CandidatesExhausted);
    assert_eq!(result.region.fragments.len(), 2);
    assert_eq!(result.attempts.len(), 10);
    assert!(
        result
            .attempts
            .iter()
            .all(|a| a.report.failure() == Some("probe sweep"))
    );
}

fn seat_with_reach(reach_m: f32) -> Seat {
    let mut seat = seat(0.1, 0.01);
    seat.record.interaction.probe.as_mut().unwrap().reach_m = reach_m;
    seat
}

#[test]
fn a_moving_target_is_placed_from_its_objects_motion() {
    let mut seat = seat(0.1, 0.01);
    seat.record.placement = Placement::Moving {
        reference_object: 4,
        geometry_version: 2,
    };
    let snapshot: Snapshot = seat.mesh.snapshot();
    let filter = QueryFilter::new();
    assert_eq!(
        project_target(&snapshot, &filter, &seat.record, &seat.world, None),
        Err(TargetError::MissingMotion {
            reference_object: 4
        })
    );
    // At the identity the object frame is the world: the same pose, with the step's version.
    let motion = ObjectMotion {
        world_from_object: Affine3A::IDENTITY,
        transform_version: TransformVersion(40),
    };
    let result =
        project_target(&snapshot, &filter, &seat.record, &seat.world, Some(&motion)).unwrap();
    let Verdict::Success(pose) = &result.verdict else {
        panic!("{:?}", result.verdict);
    };
    assert_eq!(pose.versions.transform_version, Some(TransformVersion(40)));
    assert_eq!(pose.versions.geometry_version, Some(2));
    // Moved 5 m along x, the slot's region leaves the walkable polygon: nothing is legal.
    let moved = ObjectMotion {
        world_from_object: Affine3A::from_translation(Vec3::new(5.0, 0.0, 0.0)),
        transform_version: TransformVersion(41),
    };
    let placed = seat.record.placed(&moved);
    assert!(close(placed.interaction.contact.x, 5.0, 1e-6));
    let result =
        project_target(&snapshot, &filter, &seat.record, &seat.world, Some(&moved)).unwrap();
    assert_eq!(result.verdict, Verdict::NoLegalRegion);
}

#[test]
fn bad_records_name_the_field() {
    let seat = seat(0.1, 0.01);
    let snapshot = seat.mesh.snapshot();
    let filter = QueryFilter::new();
    let run = |record: &TargetRecord| project_target(&snapshot, &filter, record, &seat.world, None);

    let mut record = seat.record.clone();
    record.stand = StandArea::Region {
        polygons: vec![vec![
            Vec2::new(0.0, 0.0),
            Vec2::new(2.0, 1.0),
            Vec2::new(0.0, 2.0),
            Vec2::new(0.5, 1.0),
        ]],
        height_m: 0.0,
    };
    assert!(matches!(
        run(&record),
        Err(TargetError::NonConvexRegion { polygon: 0, .. })
    ));

    let field_of = |record: &TargetRecord| match run(record) {
        Err(TargetError::BadField { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    let mut record = seat.record.clone();
    record.interaction.contact.x = f32::NAN;
    assert_eq!(field_of(&record), "interaction.contact");
    let mut record = seat.record.clone();
    record.body.radius_m = -0.4;
    assert_eq!(field_of(&record), "body.radius_m");
    let mut record = seat.record.clone();
    record.facing.forward = Vec2::ZERO;
    assert_eq!(field_of(&record), "facing.forward");
    // Finite but beyond any body or world: an eye 3e38 m up, a contact 1e20 m away.
    let mut record = seat.record.clone();
    record.body.eye_height_m = 3e38;
    assert_eq!(field_of(&record), "body.eye_height_m");
    let mut record = seat.record.clone();
    record.interaction.contact.z = 1e20;
    assert_eq!(field_of(&record), "interaction.contact");
    let mut record = seat.record.clone();
    record.interaction.probe.as_mut().unwrap().radius_m = f32::NAN;
    assert_eq!(field_of(&record), "probe.radius_m");
    let message = run(&record).unwrap_err().to_string();
    assert!(
        message.contains("probe.radius_m") && message.contains("NaN"),
        "{message}"
    );
    // A spacing under a millimetre (1e-10 would ask for some 10^10 slices across a metre)
    // and one of zero or below (no step outward at all) are refused by name and value.
    for spacing in [1e-10, 0.0, -0.05, f32::INFINITY] {
        let mut record = seat.record.clone();
        record.sample_spacing_m = spacing;
        let message = run(&record).unwrap_err().to_string();
        assert!(
            message.contains("sample_spacing_m") && message.contains(&spacing.to_string()),
            "{message}"
        );
    }
}

#[test]
fn slices_go_out_from_the_middle_lazily_and_end_at_the_extent() {
    let positions: Vec<f32> = slice_positions((0.0, 1.0), 0.25).collect();
    assert_eq!(positions, [0.5, 0.75, 0.25, 1.0, 0.0]);
    // A million slices across the extent: the first thousand come without the rest being
    // gathered.
    let fine: Vec<f32> = slice_positions((0.0, 1.0e3), 1.0e-3).take(1_001).collect();
    assert_eq!(fine.len(), 1_001);
    assert!((fine[0] - 500.0).abs() < 1e-3);
    assert!((fine[999] - 500.5).abs() < 1e-3 && (fine[1_000] - 499.5).abs() < 1e-3);
    // No spacing to step by: the middle only, instead of a loop that never ends.
    assert_eq!(slice_positions((0.0, 1.0), 0.0).collect::<Vec<_>>(), [0.5]);
    assert_eq!(
        slice_positions((0.0, 1.0), f32::NAN).collect::<Vec<_>>(),
        [0.5]
    );
}

/// A crowd with one guard (radius 0.4 m, height 1.8 m) standing at `start` on the seat's
/// mesh.
fn guard_at(seat: &Seat, start: Vec3) -> (Crowd, AgentId) {
    let mut crowd = Crowd::new(&seat.mesh, CrowdConfig::default()).unwrap();
    let params = AgentParams {
        radius_m: 0.4,
        height_m: 1.8,
        ..AgentParams::DETOUR_REFERENCE
    };
    let guard = crowd.add_agent(start, params).unwrap();
    (crowd, guard)
}

/// Steps `crowd` in `world` until `order` ends (at most `frames`), recording the guard's
/// position after each step; returns the outcome, every order ended on the way (that one
/// included, with those of its step), and the track.
fn run_interaction(
    crowd: &mut Crowd,
    guard: AgentId,
    world: &StaticWorld,
    order: RequestId,
    frames: usize,
) -> (Option<Outcome>, Vec<(RequestId, Outcome)>, Vec<Vec3>) {
    let host = HostWorld {
        collision: world,
        objects: &[],
        fixed: &[],
    };
    let mut track = vec![crowd.position(guard).unwrap()];
    let mut ended = Vec::new();
    for _ in 0..frames {
        let events = crowd
            .step_with(0.1, &mut KinematicController, &host)
            .unwrap();
        track.push(crowd.position(guard).unwrap());
        for event in events {
            if let CrowdEvent::OrderEnded { order, outcome, .. } = event {
                ended.push((order, outcome));
            }
        }
        if let Some(&(_, outcome)) = ended.iter().find(|(ended, _)| *ended == order) {
            return (Some(outcome), ended, track);
        }
    }
    (None, ended, track)
}

#[test]
fn t10_end_to_end_the_crowd_walks_from_s_to_q_and_succeeds_at_the_pose() {
    let seat = seat(0.1, 0.01);
    let start = Vec3::new(0.8, 0.0, 0.7);
    let q = Vec3::new(0.75, 0.0, 0.525);
    let (mut crowd, guard) = guard_at(&seat, start);
    let host = HostWorld {
        collision: &seat.world,
        objects: &[],
        fixed: &[],
    };
    let (order, hold) = crowd
        .request_interaction(guard, seat.record.clone(), HoldPolicy::SPEC_EXAMPLE, &host)
        .unwrap();
    // The projection chose t6's q in fragment C+ (the first by id).
    let view = crowd.interaction(guard).unwrap().unwrap();
    assert!(view.foot.distance(q) < 1e-5, "{:?}", view.foot);
    assert_eq!(view.phase, InteractionPhase::Walking);
    assert_eq!(
        crowd.owner(guard).unwrap().unwrap().action,
        MoverAction::Move(order)
    );

    let (outcome, _, track) = run_interaction(&mut crowd, guard, &seat.world, order, 200);
    assert_eq!(outcome, Some(Outcome::Success));
    // Success only at the pose: within the hold's enter threshold of q, at rest, with
    // every check passing there; the hold owns the mover and keeps the pose.
    let end = crowd.position(guard).unwrap();
    let error = Vec2::new(end.x - q.x, end.z - q.z).length();
    assert!(error <= HoldPolicy::SPEC_EXAMPLE.enter_m, "{end:?}");
    assert!(crowd.velocity(guard).unwrap().length() <= HoldPolicy::SPEC_EXAMPLE.speed_enter_mps);
    assert!(validate_pose(&seat.record, end, &seat.world).passed);
    let view = crowd.interaction(guard).unwrap().unwrap();
    assert_eq!(view.phase, InteractionPhase::Holding);
    assert!(view.checks_pass);
    assert_eq!(
        crowd.owner(guard).unwrap().unwrap().action,
        MoverAction::Hold(hold)
    );
    assert_eq!(crowd.hold(guard).unwrap().unwrap().fact, Some(1));
    // The way there is t10's straight segment S -> q, inside N all along.
    let along = (q - start).normalize();
    for point in &track {
        let offset = *point - start;
        let off_line = (offset - along * offset.dot(along)).length();
        assert!(off_line < 0.01, "{point:?} is {off_line} m off the segment");
        assert!((0.6..=0.9).contains(&point.x) && (-0.7..=0.7 + 1e-5).contains(&point.z));
    }

    // The mode exit: the fact ends (and with it the interaction's checks), then the hold
    // is cancelled by its id and the agent ends idle.
    crowd.release_hold(guard, hold).unwrap();
    assert_eq!(crowd.interaction(guard).unwrap(), None);
    assert_eq!(crowd.hold(guard).unwrap().unwrap().fact, None);
    crowd.cancel_order(guard, hold).unwrap();
    let (outcome, _, _) = run_interaction(&mut crowd, guard, &seat.world, hold, 60);
    assert_eq!(outcome, Some(Outcome::Cancelled));
    assert_eq!(crowd.owner(guard).unwrap(), None);
    assert_eq!(crowd.interaction(guard).unwrap(), None);
}

#[test]
fn t11_crowd_interaction_with_no_legal_region_fails_without_walking() {
    let seat = seat(0.18, 0.01);
    let start = Vec3::new(0.8, 0.0, 0.7);
    let (mut crowd, guard) = guard_at(&seat, start);
    let host = HostWorld {
        collision: &seat.world,
        objects: &[],
        fixed: &[],
    };
    let (order, hold) = crowd
        .request_interaction(guard, seat.record.clone(), HoldPolicy::SPEC_EXAMPLE, &host)
        .unwrap();
    let events = crowd
        .step_with(0.1, &mut KinematicController, &host)
        .unwrap();
    let ended: Vec<(RequestId, Outcome)> = events
        .iter()
        .filter_map(|event| match *event {
            CrowdEvent::OrderEnded { order, outcome, .. } => Some((order, outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(
        ended,
        vec![
            (
                order,
                Outcome::Failure(FailureCondition::Interaction(
                    InteractionFailure::NoLegalRegion
                ))
            ),
            (hold, Outcome::Cancelled),
        ]
    );
    let moved = crowd.position(guard).unwrap().distance(start);
    assert!(moved < 1e-3, "moved {moved} m");

    // Candidates exhausted is reported apart.
    let mut short_reach = seat_with_reach(0.5);
    short_reach.record.candidates_max = 10;
    let (mut crowd, guard) = guard_at(&short_reach, start);
    let host = HostWorld {
        collision: &short_reach.world,
        objects: &[],
        fixed: &[],
    };
    let (order, _) = crowd
        .request_interaction(
            guard,
            short_reach.record.clone(),
            HoldPolicy::SPEC_EXAMPLE,
            &host,
        )
        .unwrap();
    let (outcome, _, _) = run_interaction(&mut crowd, guard, &short_reach.world, order, 5);
    assert_eq!(
        outcome,
        Some(Outcome::Failure(FailureCondition::Interaction(
            InteractionFailure::CandidatesExhausted
        )))
    );
}

#[test]
fn t_crowd_interaction_fails_naming_the_check_that_breaks_at_the_actual_pose() {
    // The pose is verified at q; a second board put in the line of sight while the guard
    // settles on it fails the interaction once the guard stands there.
    let seat = seat(0.1, 0.01);
    let start = Vec3::new(0.8, 0.0, 0.7);
    let (mut crowd, guard) = guard_at(&seat, start);
    let host = HostWorld {
        collision: &seat.world,
        objects: &[],
        fixed: &[],
    };
    let (order, hold) = crowd
        .request_interaction(guard, seat.record.clone(), HoldPolicy::SPEC_EXAMPLE, &host)
        .unwrap();
    let mut blocked = seat.world.clone();
    blocked
        .add(
            "screen",
            Shape::Box {
                min: Vec3::new(0.3, 1.0, 0.2),
                max: Vec3::new(0.3, 1.5, 0.5),
            },
        )
        .unwrap();
    // (A change while the guard walks sends it to a pose verified in the new world; this
    // one comes once its hold has taken the mover, as it settles on q.)
    let (outcome, _, _) = run_interaction(&mut crowd, guard, &seat.world, order, 1);
    assert_eq!(outcome, None);
    assert_eq!(
        crowd.interaction(guard).unwrap().unwrap().phase,
        InteractionPhase::Verifying
    );
    let (outcome, mut ended, _) = run_interaction(&mut crowd, guard, &blocked, order, 200);
    let failed = Outcome::Failure(FailureCondition::Interaction(
        InteractionFailure::PoseCheck("line of sight"),
    ));
    assert_eq!(outcome, Some(failed));
    // The hold brakes and ends with the same reason (in that step if the guard already
    // stood); nothing holds the mover afterwards, and each order ended once.
    if !ended.iter().any(|(order, _)| *order == hold) {
        let (_, more, _) = run_interaction(&mut crowd, guard, &blocked, hold, 60);
        ended.extend(more);
    }
    assert_eq!(ended, vec![(order, failed), (hold, failed)]);
    assert_eq!(crowd.owner(guard).unwrap(), None);
}

#[test]
fn t10_unreachable_c_plus_sends_the_crowd_to_c_minus() {
    // N split in two with a gap between: the guard stands on the lower half, so C+ (on the
    // upper) is out of its reach; the crowd tries C-, q mirrored, and succeeds there.
    let upper = WalkablePolygon::ground(rectangle(0.6, 0.9, 0.05, 0.7, 0.0));
    let lower = WalkablePolygon::ground(rectangle(0.6, 0.9, -0.7, -0.05, 0.0));
    let mut split = seat(0.1, 0.01);
    split.mesh = mesh_of(&[upper.clone(), lower.clone()]);
    let start = Vec3::new(0.8, 0.0, -0.7);
    let (mut crowd, guard) = guard_at(&split, start);
    let host = HostWorld {
        collision: &split.world,
        objects: &[],
        fixed: &[],
    };
    let (order, _) = crowd
        .request_interaction(guard, split.record.clone(), HoldPolicy::SPEC_EXAMPLE, &host)
        .unwrap();
    let first = crowd.interaction(guard).unwrap().unwrap();
    assert!(
        first.foot.distance(Vec3::new(0.75, 0.0, 0.525)) < 1e-5,
        "{first:?}"
    );
    let (outcome, _, track) = run_interaction(&mut crowd, guard, &split.world, order, 200);
    assert_eq!(outcome, Some(Outcome::Success));
    let chosen = crowd.interaction(guard).unwrap().unwrap();
    assert_ne!(chosen.fragment, first.fragment);
    assert!(
        chosen.foot.distance(Vec3::new(0.75, 0.0, -0.525)) < 1e-5,
        "{chosen:?}"
    );
    // It never set foot on the upper half.
    assert!(track.iter().all(|point| point.z < 0.0), "{track:?}");

    // With the lower half's fragment gone too (the guard stands where neither pose is):
    // unreachable, named.
    let mut apart = seat(0.1, 0.01);
    apart.mesh = mesh_of(&[
        upper,
        lower,
        WalkablePolygon::ground(rectangle(1.5, 2.0, -0.7, 0.7, 0.0)),
    ]);
    let (mut crowd, guard) = guard_at(&apart, Vec3::new(1.8, 0.0, 0.0));
    let host = HostWorld {
        collision: &apart.world,
        objects: &[],
        fixed: &[],
    };
    let (order, _) = crowd
        .request_interaction(guard, apart.record.clone(), HoldPolicy::SPEC_EXAMPLE, &host)
        .unwrap();
    let (outcome, _, _) = run_interaction(&mut crowd, guard, &apart.world, order, 200);
    assert_eq!(
        outcome,
        Some(Outcome::Failure(FailureCondition::Interaction(
            InteractionFailure::Unreachable
        )))
    );
}

#[test]
fn t11_a_board_widened_after_admission_ends_the_walk_with_no_legal_region() {
    // Spec 000: if the board changes after adoption, the occluders' version invalidates
    // the old candidate first, then the projection finds the failure; q and its route are
    // no ground for success.
    let seat = seat(0.1, 0.01);
    let (mut crowd, guard) = guard_at(&seat, Vec3::new(0.8, 0.0, -0.7));
    let host = HostWorld {
        collision: &seat.world,
        objects: &[],
        fixed: &[],
    };
    let (order, hold) = crowd
        .request_interaction(guard, seat.record.clone(), HoldPolicy::SPEC_EXAMPLE, &host)
        .unwrap();
    let (outcome, _, _) = run_interaction(&mut crowd, guard, &seat.world, order, 3);
    assert_eq!(outcome, None);
    assert_eq!(
        crowd.interaction(guard).unwrap().unwrap().phase,
        InteractionPhase::Walking
    );
    let mut widened = seat.world.clone();
    widened
        .add(
            "board, widened",
            Shape::Box {
                min: Vec3::new(0.2, 0.0, -0.18),
                max: Vec3::new(0.2, 1.6, 0.18),
            },
        )
        .unwrap();
    let (outcome, ended, _) = run_interaction(&mut crowd, guard, &widened, order, 60);
    let failed = Outcome::Failure(FailureCondition::Interaction(
        InteractionFailure::NoLegalRegion,
    ));
    assert_eq!(outcome, Some(failed));
    // Its hold never started; the walk braked and nothing owns the mover.
    assert!(ended.contains(&(hold, Outcome::Cancelled)), "{ended:?}");
    assert_eq!(crowd.owner(guard).unwrap(), None);
    // The same world change with nothing relevant in it (a shape far away) re-verifies
    // the same q: the walk goes on to success.
    let (mut crowd, guard) = guard_at(&seat, Vec3::new(0.8, 0.0, -0.7));
    let (order, _) = crowd
        .request_interaction(guard, seat.record.clone(), HoldPolicy::SPEC_EXAMPLE, &host)
        .unwrap();
    let mut unrelated = seat.world.clone();
    unrelated
        .add(
            "crate far away",
            Shape::Box {
                min: Vec3::new(5.0, 0.0, 5.0),
                max: Vec3::new(6.0, 1.0, 6.0),
            },
        )
        .unwrap();
    let (outcome, _, _) = run_interaction(&mut crowd, guard, &unrelated, order, 200);
    assert_eq!(outcome, Some(Outcome::Success));
    let foot = crowd.interaction(guard).unwrap().unwrap().foot;
    assert!(foot.distance(Vec3::new(0.75, 0.0, 0.525)) < 1e-5);
}

#[test]
fn t_crowd_interaction_fails_when_the_fixed_targets_object_moves() {
    // The seat (instance 7) was projected at transform version 12; the host reports it at
    // 13 while the guard walks (spec 001's h1: moving the cover rejects what was computed
    // for it): the walk brakes and the order fails, named.
    let seat = seat(0.1, 0.01);
    let (mut crowd, guard) = guard_at(&seat, Vec3::new(0.8, 0.0, -0.7));
    let still = [(7, TransformVersion(12))];
    let moved = [(7, TransformVersion(13))];
    let host = |fixed| HostWorld {
        collision: &seat.world,
        objects: &[],
        fixed,
    };
    let (order, _) = crowd
        .request_interaction(
            guard,
            seat.record.clone(),
            HoldPolicy::SPEC_EXAMPLE,
            &host(&still),
        )
        .unwrap();
    let mut ended = Vec::new();
    for frame in 0..40 {
        let fixed: &[(u32, TransformVersion)] = if frame < 3 { &still } else { &moved };
        for event in crowd
            .step_with(0.1, &mut KinematicController, &host(fixed))
            .unwrap()
        {
            if let CrowdEvent::OrderEnded { order, outcome, .. } = event {
                ended.push((frame, order, outcome));
            }
        }
    }
    let failed = Outcome::Failure(FailureCondition::Interaction(
        InteractionFailure::TargetMoved,
    ));
    assert!(
        ended
            .iter()
            .any(|&(frame, id, outcome)| frame >= 3 && id == order && outcome == failed),
        "{ended:?}"
    );
    assert_eq!(crowd.owner(guard).unwrap(), None);
}
