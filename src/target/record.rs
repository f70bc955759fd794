//! Target records: what "go to this slot and do this interaction" means, in world metres.

use crate::geom::limits;
use glam::{Affine3A, Vec2, Vec3};

use super::TargetError;
use super::collision::ShapeId;
use crate::geom::planar::is_convex;
use crate::ids::TransformVersion;
use crate::query::ApproachSide;

/// The finest slice spacing a record may ask for, metres: a millimetre is finer than any
/// stand pose needs, and a spacing near zero would ask for as many slices as a float can
/// count across a fragment.
pub const SAMPLE_SPACING_MIN_M: f32 = 1e-3;

/// The character's body as pose validation sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyProfile {
    /// Capsule radius, metres.
    pub radius_m: f32,
    /// Capsule total height from the foot, metres (the axis runs from `radius_m` to
    /// `height_m - radius_m` above the foot).
    pub height_m: f32,
    /// Eye height above the foot, metres.
    pub eye_height_m: f32,
    /// Hand (interaction point) height above the foot, metres.
    pub hand_height_m: f32,
    /// Hand offset along the facing direction, metres.
    pub hand_forward_m: f32,
    /// Overlap the body capsule may have with the world (a foot resting on its floor is at
    /// distance zero), metres.
    pub clearance_tolerance_m: f32,
}

/// What a facing check does when the direction to the contact has no horizontal length
/// (the contact is straight above or below the interaction point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InPlaceRule {
    /// Any facing is fine.
    Accept,
    /// The pose fails.
    Reject,
}

/// The facing a pose must hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FacingRule {
    /// Desired horizontal forward (x, z), need not be unit length (must not be zero).
    pub forward: Vec2,
    /// Largest angle between `forward` and the horizontal direction to the contact, degrees
    /// (0 < angle <= 180).
    pub max_angle_deg: f32,
    /// The rule for a direction of near-zero length.
    pub in_place: InPlaceRule,
}

/// Where line of sight is taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SightFrom {
    /// The hand (interaction) point.
    Hand,
    /// The eyes.
    Eye,
}

/// A solid probe (a hand, a tool) that must reach the contact: a sphere lifted vertically
/// to the hand point, then extended in a straight line until it touches the target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeRule {
    /// Sphere radius, metres.
    pub radius_m: f32,
    /// Unit normal of the target surface at the contact, pointing at the character: the
    /// sphere centre ends at `contact + radius * normal`.
    pub surface_normal: Vec3,
    /// Height above the foot where the lift starts, metres.
    pub lift_from_height_m: f32,
    /// Longest extension of the centre from the hand point, metres.
    pub reach_m: f32,
    /// The allowed contact patch on the target: the touching point must lie in this box.
    pub patch_min: Vec3,
    /// Maximum corner of the allowed patch.
    pub patch_max: Vec3,
    /// Largest distance between the actual touching point and the contact, metres.
    pub contact_error_m: f32,
    /// Deepest penetration into the target allowed, metres.
    pub penetration_m: f32,
}

/// What the interaction needs from the pose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InteractionRule {
    /// The contact point `t` on the target, metres.
    pub contact: Vec3,
    /// Shortest distance from the hand point to the contact, metres.
    pub distance_min_m: f32,
    /// Longest distance, metres.
    pub distance_max_m: f32,
    /// Whether a clear line of sight to the contact is needed.
    pub line_of_sight: bool,
    /// Where the sight line starts.
    pub sight_from: SightFrom,
    /// Margin the sight line keeps from the outline of occluders, metres.
    pub sight_margin_m: f32,
    /// The solid probe, if the interaction reaches with one.
    pub probe: Option<ProbeRule>,
}

/// Where the character may stand.
#[derive(Clone, Debug, PartialEq)]
pub enum StandArea {
    /// Registered stand points (feet). With `continuous_offset`, any point within the
    /// horizontal tolerance of one is acceptable (the tolerance circle becomes a region);
    /// without, only the projection of each point is.
    Points {
        /// The points, metres.
        points: Vec<Vec3>,
        /// Whether positions within the tolerance circle are acceptable.
        continuous_offset: bool,
    },
    /// A region of convex polygons (x, z) at a height.
    Region {
        /// Convex polygons, metres.
        polygons: Vec<Vec<Vec2>>,
        /// Their height (the support surface), metres.
        height_m: f32,
    },
}

/// How far a projection may move a stand point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerances {
    /// Largest horizontal distance, metres (δh).
    pub horizontal_m: f32,
    /// Largest vertical distance, metres (δv).
    pub vertical_m: f32,
}

/// How the target's place in the world is known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Placement {
    /// A fixed target, with the transform version its world geometry was computed at.
    Fixed {
        /// The transform version adopted.
        transform_version: TransformVersion,
    },
    /// A moving target: the record's geometry is in the reference object's frame and is
    /// placed each step from the object's current motion ([`TargetRecord::placed`]).
    Moving {
        /// The reference object.
        reference_object: u32,
        /// The version of the slot's local geometry.
        geometry_version: u64,
    },
}

/// One interaction target (spec 000).
#[derive(Clone, Debug, PartialEq)]
pub struct TargetRecord {
    /// The object instance.
    pub instance: u32,
    /// The asset version of the object.
    pub asset_version: u64,
    /// How the target is placed.
    pub placement: Placement,
    /// The interaction slot.
    pub slot: u32,
    /// The body that must fit.
    pub body: BodyProfile,
    /// Where the feet may be.
    pub stand: StandArea,
    /// The facing the pose holds.
    pub facing: FacingRule,
    /// The support layer the feet must be on (0: static ground).
    pub layer: u16,
    /// The side the target must be approached from, if any.
    pub approach_side: Option<ApproachSide>,
    /// Projection tolerances.
    pub tolerances: Tolerances,
    /// The interaction.
    pub interaction: InteractionRule,
    /// The shape in the collision world that is the target (the first hit of sight lines
    /// and probes must be it).
    pub target_shape: ShapeId,
    /// Spacing of the x-slices candidates are taken on inside a region fragment, metres (at
    /// least [`SAMPLE_SPACING_MIN_M`]).
    pub sample_spacing_m: f32,
    /// Most candidates tried before giving up with "candidates exhausted".
    pub candidates_max: u32,
}

/// The motion of a moving target's reference object at one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjectMotion {
    /// Object-to-world transform.
    pub world_from_object: Affine3A,
    /// Its version.
    pub transform_version: TransformVersion,
}

/// The state of a moving target's object at one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ObjectState {
    /// Where the object is now, moved continuously since the last step.
    Moving(ObjectMotion),
    /// The object jumped (a teleport, a respawn): an interaction order on it fails.
    Teleported(ObjectMotion),
    /// The object or the slot was replaced (a new asset, a changed slot geometry):
    /// an interaction order on it fails.
    Replaced,
    /// The host knows no such object: an interaction order on it fails.
    Missing,
}

/// `Ok` when `value` is finite, within the world's coordinates (every field of a record is
/// a length, a position or an angle) and `ok`.
fn check(field: &'static str, value: f32, ok: bool) -> Result<(), TargetError> {
    if limits::within(value, limits::COORDINATE_MAX_M) && ok {
        Ok(())
    } else {
        Err(TargetError::BadField {
            field,
            value: value.to_string(),
        })
    }
}

fn check_point(field: &'static str, value: Vec3) -> Result<(), TargetError> {
    if limits::within_each(value, limits::COORDINATE_MAX_M) {
        Ok(())
    } else {
        Err(TargetError::BadField {
            field,
            value: value.to_string(),
        })
    }
}

impl TargetRecord {
    /// Checks every field, naming the first bad one with its value.
    pub fn validate(&self) -> Result<(), TargetError> {
        let body = &self.body;
        let size = |value: f32| value <= limits::BODY_SIZE_MAX_M;
        check(
            "body.radius_m",
            body.radius_m,
            body.radius_m > 0.0 && size(body.radius_m),
        )?;
        check(
            "body.height_m",
            body.height_m,
            body.height_m >= 2.0 * body.radius_m && size(body.height_m),
        )?;
        check(
            "body.eye_height_m",
            body.eye_height_m,
            body.eye_height_m >= 0.0 && size(body.eye_height_m),
        )?;
        check(
            "body.hand_height_m",
            body.hand_height_m,
            body.hand_height_m >= 0.0 && size(body.hand_height_m),
        )?;
        check(
            "body.hand_forward_m",
            body.hand_forward_m,
            size(body.hand_forward_m.abs()),
        )?;
        check(
            "body.clearance_tolerance_m",
            body.clearance_tolerance_m,
            body.clearance_tolerance_m >= 0.0,
        )?;
        let forward = self.facing.forward;
        if !(forward.is_finite() && forward.length() > 1e-6) {
            return Err(TargetError::BadField {
                field: "facing.forward",
                value: forward.to_string(),
            });
        }
        let angle = self.facing.max_angle_deg;
        check("facing.max_angle_deg", angle, angle > 0.0 && angle <= 180.0)?;
        let tolerances = &self.tolerances;
        check(
            "tolerances.horizontal_m",
            tolerances.horizontal_m,
            tolerances.horizontal_m >= 0.0,
        )?;
        check(
            "tolerances.vertical_m",
            tolerances.vertical_m,
            tolerances.vertical_m >= 0.0,
        )?;
        let interaction = &self.interaction;
        check_point("interaction.contact", interaction.contact)?;
        check(
            "interaction.distance_min_m",
            interaction.distance_min_m,
            interaction.distance_min_m >= 0.0,
        )?;
        check(
            "interaction.distance_max_m",
            interaction.distance_max_m,
            interaction.distance_max_m >= interaction.distance_min_m,
        )?;
        check(
            "interaction.sight_margin_m",
            interaction.sight_margin_m,
            interaction.sight_margin_m >= 0.0,
        )?;
        if let Some(probe) = &interaction.probe {
            check("probe.radius_m", probe.radius_m, probe.radius_m > 0.0)?;
            if !(probe.surface_normal.is_finite()
                && (probe.surface_normal.length() - 1.0).abs() < 1e-3)
            {
                return Err(TargetError::BadField {
                    field: "probe.surface_normal",
                    value: probe.surface_normal.to_string(),
                });
            }
            check("probe.lift_from_height_m", probe.lift_from_height_m, true)?;
            check("probe.reach_m", probe.reach_m, probe.reach_m > 0.0)?;
            check_point("probe.patch_min", probe.patch_min)?;
            check_point("probe.patch_max", probe.patch_max)?;
            check(
                "probe.contact_error_m",
                probe.contact_error_m,
                probe.contact_error_m >= 0.0,
            )?;
            check(
                "probe.penetration_m",
                probe.penetration_m,
                probe.penetration_m >= 0.0,
            )?;
        }
        match &self.stand {
            StandArea::Points { points, .. } => {
                if points.is_empty() {
                    return Err(TargetError::BadField {
                        field: "stand.points",
                        value: "[]".into(),
                    });
                }
                for point in points {
                    check_point("stand.points", *point)?;
                }
            }
            StandArea::Region { polygons, height_m } => {
                check("stand.height_m", *height_m, true)?;
                if polygons.is_empty() {
                    return Err(TargetError::BadField {
                        field: "stand.polygons",
                        value: "[]".into(),
                    });
                }
                for (index, polygon) in polygons.iter().enumerate() {
                    if polygon
                        .iter()
                        .any(|c| !limits::within_each(c.extend(0.0), limits::COORDINATE_MAX_M))
                        || !is_convex(polygon)
                    {
                        return Err(TargetError::NonConvexRegion {
                            polygon: index,
                            corners: polygon.clone(),
                        });
                    }
                }
            }
        }
        if let Some(side) = &self.approach_side {
            if !(side.origin.is_finite() && side.outward.is_finite() && side.outward.length() > 0.0)
            {
                return Err(TargetError::BadField {
                    field: "approach_side.outward",
                    value: side.outward.to_string(),
                });
            }
        }
        check(
            "sample_spacing_m",
            self.sample_spacing_m,
            self.sample_spacing_m >= SAMPLE_SPACING_MIN_M,
        )?;
        if self.candidates_max == 0 {
            return Err(TargetError::BadField {
                field: "candidates_max",
                value: "0".into(),
            });
        }
        Ok(())
    }

    /// The unit horizontal forward.
    pub fn forward(&self) -> Vec2 {
        self.facing.forward.normalize()
    }

    /// For a moving target: the record placed in the world at the object's current motion
    /// (every point and direction transformed; horizontal directions stay horizontal under
    /// a transform that keeps Up). A fixed record is returned unchanged.
    pub fn placed(&self, motion: &ObjectMotion) -> TargetRecord {
        let Placement::Moving { .. } = self.placement else {
            return self.clone();
        };
        let transform = motion.world_from_object;
        let point = |p: Vec3| transform.transform_point3(p);
        let plan_point = |p: Vec2, height: f32| {
            let world = point(Vec3::new(p.x, height, p.y));
            Vec2::new(world.x, world.z)
        };
        let plan_direction = |d: Vec2| {
            let world = transform.transform_vector3(Vec3::new(d.x, 0.0, d.y));
            Vec2::new(world.x, world.z)
        };
        let mut placed = self.clone();
        placed.stand = match &self.stand {
            StandArea::Points {
                points,
                continuous_offset,
            } => StandArea::Points {
                points: points.iter().map(|&p| point(p)).collect(),
                continuous_offset: *continuous_offset,
            },
            StandArea::Region { polygons, height_m } => StandArea::Region {
                polygons: polygons
                    .iter()
                    .map(|polygon| polygon.iter().map(|&c| plan_point(c, *height_m)).collect())
                    .collect(),
                height_m: point(Vec3::new(0.0, *height_m, 0.0)).y,
            },
        };
        placed.facing.forward = plan_direction(self.facing.forward);
        placed.approach_side = self.approach_side.map(|side| ApproachSide {
            origin: plan_point(side.origin, 0.0),
            outward: plan_direction(side.outward),
        });
        placed.interaction.contact = point(self.interaction.contact);
        if let Some(probe) = &mut placed.interaction.probe {
            probe.surface_normal = transform
                .transform_vector3(probe.surface_normal)
                .normalize();
            let (a, b) = (point(probe.patch_min), point(probe.patch_max));
            probe.patch_min = a.min(b);
            probe.patch_max = a.max(b);
        }
        placed
    }
}
