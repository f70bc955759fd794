//! Pose validation: body clearance, facing, distance band, line of sight and the probe
//! sweep, each measured and reported on its own (spec 000, "姿态检查").
//!
//! A pose is a foot point and the record's facing. Every check runs, even after one fails,
//! so a report says all that is wrong with a candidate; the verdict is that all passed.
//! Body clearance and the probe sweep are separate: a foot that can stand does not mean a
//! hand can pass a board.

use glam::{Vec2, Vec3};

use super::collision::{CollisionWorld, Crossing, ShapeId};
use super::record::{InPlaceRule, SightFrom, TargetRecord};
use crate::geom::Aabb;

/// Clearance between the body capsule and one shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeClearance {
    /// The shape.
    pub shape: ShapeId,
    /// Distance from the capsule axis to the shape, metres.
    pub axis_distance_m: f32,
    /// `axis_distance_m - radius`: negative when the body overlaps the shape.
    pub clearance_m: f32,
}

/// The probe sweep, measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeReport {
    /// Where the lift starts.
    pub lift_start: Vec3,
    /// The hand point (lift end, extension start).
    pub hand: Vec3,
    /// Where the sphere centre ends: `contact + radius * normal`.
    pub centre_end: Vec3,
    /// Length of the extension, metres.
    pub extension_m: f32,
    /// Per non-target shape: the smallest distance from the centre path to it, metres.
    pub obstacle_distances: Vec<(ShapeId, f32)>,
    /// The obstacle closest to the path, and its distance minus the probe radius.
    pub worst_obstacle: Option<(ShapeId, f32)>,
    /// Distance from the actual touching point (the target point nearest the centre end)
    /// to the contact, metres.
    pub contact_error_m: f32,
    /// How deep the sphere sinks into the target anywhere along the path, metres (0 when it
    /// only touches).
    pub penetration_m: f32,
    /// Whether the touching point lies in the allowed patch.
    pub in_patch: bool,
    /// Whether every probe condition holds.
    pub passed: bool,
}

/// The line of sight, measured.
#[derive(Clone, Debug, PartialEq)]
pub struct SightReport {
    /// Start of the sight line (hand or eye), metres.
    pub from: Vec3,
    /// Every face crossing of a non-target shape, in order along the line.
    pub crossings: Vec<Crossing>,
    /// Whether the first hit is the target at the contact.
    pub clear: bool,
}

/// Every check of one pose.
#[derive(Clone, Debug, PartialEq)]
pub struct PoseReport {
    /// The foot point.
    pub foot: Vec3,
    /// The unit facing (x, z).
    pub facing: Vec2,
    /// The hand point `s`.
    pub hand: Vec3,
    /// Body clearance per nearby shape.
    pub body: Vec<ShapeClearance>,
    /// Whether the body fits.
    pub body_clear: bool,
    /// `|t - s|`, metres.
    pub distance_m: f32,
    /// Whether the distance is within the band.
    pub distance_ok: bool,
    /// Dot of the facing with the horizontal direction to the contact (`None` in place).
    pub facing_dot: Option<f32>,
    /// `cos(max angle)`.
    pub facing_limit: f32,
    /// Whether the facing rule holds.
    pub facing_ok: bool,
    /// The line of sight, if the rule asks for one.
    pub sight: Option<SightReport>,
    /// The probe sweep, if the rule has a probe.
    pub probe: Option<ProbeReport>,
    /// All checks passed.
    pub passed: bool,
}

/// The names [`PoseReport::failure`] gives the checks, in the order they are judged; a
/// crowd's interaction order adds three of its own (the stand area, the approach side and
/// the support layer, checked at the actual pose).
pub const POSE_CHECKS: [&str; 8] = [
    "body clearance",
    "interaction distance",
    "facing",
    "line of sight",
    "probe sweep",
    "stand area",
    "approach side",
    "support layer",
];

impl PoseReport {
    /// The first failing condition, named as in [`POSE_CHECKS`], or `None` when the pose
    /// passed.
    pub fn failure(&self) -> Option<&'static str> {
        let failed = [
            !self.body_clear,
            !self.distance_ok,
            !self.facing_ok,
            self.sight.as_ref().is_some_and(|s| !s.clear),
            self.probe.as_ref().is_some_and(|p| !p.passed),
        ];
        failed
            .iter()
            .position(|&failed| failed)
            .map(|check| POSE_CHECKS[check])
    }
}

/// Shapes this far beyond the body or probe are measured and reported too (they cannot
/// fail a check, but a report that shows the nearby board's distance explains a pass).
const REPORT_MARGIN_M: f32 = 1.0;

fn near(world: &impl CollisionWorld, points: &[Vec3], pad: f32) -> Vec<ShapeId> {
    let mut bounds = Aabb::EMPTY;
    for point in points {
        bounds.add_point(*point);
    }
    bounds.min -= Vec3::splat(pad);
    bounds.max += Vec3::splat(pad);
    world.shapes_near(&bounds)
}

/// Validates the pose with feet at `foot` and the record's facing.
pub fn validate_pose(record: &TargetRecord, foot: Vec3, world: &impl CollisionWorld) -> PoseReport {
    let body = &record.body;
    let facing = record.forward();
    let forward3 = Vec3::new(facing.x, 0.0, facing.y);
    let hand = foot + Vec3::Y * body.hand_height_m + forward3 * body.hand_forward_m;
    let eye = foot + Vec3::Y * body.eye_height_m;
    let interaction = &record.interaction;
    let contact = interaction.contact;

    // Body: the capsule axis from radius to height - radius above the foot.
    let axis_low = foot + Vec3::Y * body.radius_m;
    let axis_high = foot + Vec3::Y * (body.height_m - body.radius_m);
    let mut clearances = Vec::new();
    for id in near(
        world,
        &[axis_low, axis_high],
        body.radius_m + REPORT_MARGIN_M,
    ) {
        let Some(shape) = world.shape(id) else {
            continue;
        };
        let axis_distance_m = shape.segment_distance(axis_low, axis_high);
        clearances.push(ShapeClearance {
            shape: id,
            axis_distance_m,
            clearance_m: axis_distance_m - body.radius_m,
        });
    }
    let body_clear = clearances
        .iter()
        .all(|c| c.clearance_m >= -body.clearance_tolerance_m);

    let distance_m = hand.distance(contact);
    let distance_ok =
        distance_m >= interaction.distance_min_m && distance_m <= interaction.distance_max_m;

    let to_contact = Vec2::new(contact.x - hand.x, contact.z - hand.z);
    let facing_limit = record.facing.max_angle_deg.to_radians().cos();
    let (facing_dot, facing_ok) = if to_contact.length() < 1e-4 {
        (None, record.facing.in_place == InPlaceRule::Accept)
    } else {
        let dot = facing.dot(to_contact.normalize());
        (Some(dot), dot >= facing_limit)
    };

    let sight = interaction.line_of_sight.then(|| {
        let from = match interaction.sight_from {
            SightFrom::Hand => hand,
            SightFrom::Eye => eye,
        };
        let mut crossings = Vec::new();
        for id in near(world, &[from, contact], interaction.sight_margin_m) {
            if id == record.target_shape {
                continue;
            }
            if let Some(shape) = world.shape(id) {
                crossings.extend(shape.crossings(id, from, contact, interaction.sight_margin_m));
            }
        }
        crossings.sort_by(|a, b| a.fraction.total_cmp(&b.fraction));
        // The target must be what the line meets at its end: it may not be entered before.
        let target_first = world.shape(record.target_shape).is_some_and(|target| {
            let before_end = from + (contact - from) * 0.999;
            target.segment_distance(from, before_end) > 0.0
                && target.distance(contact).abs() <= 1e-3
        });
        let clear = target_first && crossings.iter().all(|c| !c.blocked);
        SightReport {
            from,
            crossings,
            clear,
        }
    });

    let probe = interaction.probe.map(|rule| {
        let lift_start = Vec3::new(foot.x, foot.y + rule.lift_from_height_m, foot.z);
        let centre_end = contact + rule.surface_normal * rule.radius_m;
        let extension_m = hand.distance(centre_end);
        let mut obstacle_distances = Vec::new();
        for id in near(
            world,
            &[lift_start, hand, centre_end],
            rule.radius_m + REPORT_MARGIN_M,
        ) {
            if id == record.target_shape {
                continue;
            }
            if let Some(shape) = world.shape(id) {
                let distance = shape
                    .segment_distance(lift_start, hand)
                    .min(shape.segment_distance(hand, centre_end));
                obstacle_distances.push((id, distance));
            }
        }
        let worst_obstacle = obstacle_distances
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|&(id, distance)| (id, distance - rule.radius_m));
        let (contact_error_m, penetration_m, in_patch) = match world.shape(record.target_shape) {
            Some(target) => {
                let touching = target.closest_point(centre_end);
                let path_distance = target
                    .segment_distance(lift_start, hand)
                    .min(target.segment_distance(hand, centre_end));
                let in_patch = touching.cmpge(rule.patch_min - Vec3::splat(1e-6)).all()
                    && touching.cmple(rule.patch_max + Vec3::splat(1e-6)).all();
                (
                    touching.distance(contact),
                    (rule.radius_m - path_distance).max(0.0),
                    in_patch,
                )
            }
            None => (f32::INFINITY, f32::INFINITY, false),
        };
        let passed = extension_m <= rule.reach_m
            && worst_obstacle.is_none_or(|(_, clearance)| clearance > 0.0)
            && contact_error_m <= rule.contact_error_m
            && penetration_m <= rule.penetration_m
            && in_patch;
        ProbeReport {
            lift_start,
            hand,
            centre_end,
            extension_m,
            obstacle_distances,
            worst_obstacle,
            contact_error_m,
            penetration_m,
            in_patch,
            passed,
        }
    });

    let passed = body_clear
        && distance_ok
        && facing_ok
        && sight.as_ref().is_none_or(|s| s.clear)
        && probe.as_ref().is_none_or(|p| p.passed);
    PoseReport {
        foot,
        facing,
        hand,
        body: clearances,
        body_clear,
        distance_m,
        distance_ok,
        facing_dot,
        facing_limit,
        facing_ok,
        sight,
        probe,
        passed,
    }
}
