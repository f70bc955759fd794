//! The saved forms of interaction orders: the target record as the game gave it, the
//! object motion last placed from, the order's phase and failure reasons.
//!
//! Stage: crowd runtime, save and restore. Enums are a tag byte and their fields; a pose
//! check is saved as its place in [`POSE_CHECKS`], so a restored failure names the same
//! check; a tag or place no variant has is refused by value.

use glam::{Affine3A, Vec3};

use crate::crowd::codec::RestoreError;
use crate::crowd::codec::{Reader, Saved, Writer, saved_newtype, saved_struct};
use crate::crowd::interactions::interaction::{
    CheckName, ChecksRun, InteractionFailure, InteractionOrder, InteractionPhase,
};
use crate::ids::TransformVersion;
use crate::query::ApproachSide;
use crate::target::{
    BodyProfile, CollisionVersion, FacingRule, InPlaceRule, InteractionRule, ObjectMotion,
    POSE_CHECKS, Placement, ProbeRule, ShapeId, SightFrom, StandArea, TargetRecord, Tolerances,
};

saved_newtype!(ShapeId(u32), TransformVersion(u64), CollisionVersion(u64));
saved_struct!(BodyProfile {
    radius_m,
    height_m,
    eye_height_m,
    hand_height_m,
    hand_forward_m,
    clearance_tolerance_m,
});
saved_struct!(FacingRule {
    forward,
    max_angle_deg,
    in_place
});
saved_struct!(ApproachSide { origin, outward });
saved_struct!(Tolerances {
    horizontal_m,
    vertical_m
});
saved_struct!(ProbeRule {
    radius_m,
    surface_normal,
    lift_from_height_m,
    reach_m,
    patch_min,
    patch_max,
    contact_error_m,
    penetration_m,
});
saved_struct!(InteractionRule {
    contact,
    distance_min_m,
    distance_max_m,
    line_of_sight,
    sight_from,
    sight_margin_m,
    probe,
});
saved_struct!(TargetRecord {
    instance,
    asset_version,
    placement,
    slot,
    body,
    stand,
    facing,
    layer,
    approach_side,
    tolerances,
    interaction,
    target_shape,
    sample_spacing_m,
    candidates_max,
});
saved_struct!(ObjectMotion {
    world_from_object,
    transform_version
});
saved_struct!(ChecksRun {
    foot,
    polygon,
    version,
    failing
});
saved_struct!(InteractionOrder {
    order,
    hold,
    record,
    fragment,
    polygon,
    avoided,
    foot_local,
    foot,
    foot_velocity,
    motion,
    collision_version,
    checked,
    checks_pass,
    phase,
});

/// A transform as its four columns.
impl Saved for Affine3A {
    const MIN_BYTES: usize = 48;
    fn write(&self, out: &mut Writer) {
        for column in [self.x_axis, self.y_axis, self.z_axis, self.translation] {
            Vec3::from(column).write(out);
        }
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let mut columns = [Vec3::ZERO; 4];
        for column in &mut columns {
            *column = Vec3::read(input)?;
        }
        Ok(Affine3A::from_cols(
            columns[0].into(),
            columns[1].into(),
            columns[2].into(),
            columns[3].into(),
        ))
    }
}

/// A check's name as its place in [`POSE_CHECKS`].
impl Saved for CheckName {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        let place = POSE_CHECKS
            .iter()
            .position(|&known| known == self.0)
            .expect("checks are named from POSE_CHECKS");
        out.u8(place as u8);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let place = input.u8()?;
        POSE_CHECKS
            .get(usize::from(place))
            .map(|&check| CheckName(check))
            .ok_or_else(|| input.malformed(format!("pose check {place}")))
    }
}

impl Saved for InPlaceRule {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        out.u8(match self {
            InPlaceRule::Accept => 0,
            InPlaceRule::Reject => 1,
        });
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        match input.u8()? {
            0 => Ok(InPlaceRule::Accept),
            1 => Ok(InPlaceRule::Reject),
            other => Err(input.malformed(format!("in-place facing rule tag {other}"))),
        }
    }
}

impl Saved for SightFrom {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        out.u8(match self {
            SightFrom::Hand => 0,
            SightFrom::Eye => 1,
        });
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        match input.u8()? {
            0 => Ok(SightFrom::Hand),
            1 => Ok(SightFrom::Eye),
            other => Err(input.malformed(format!("sight origin tag {other}"))),
        }
    }
}

impl Saved for Placement {
    const MIN_BYTES: usize = 2;
    fn write(&self, out: &mut Writer) {
        match *self {
            Placement::Fixed { transform_version } => {
                out.u8(0);
                transform_version.write(out);
            }
            Placement::Moving {
                reference_object,
                geometry_version,
            } => {
                out.u8(1);
                out.u32(reference_object);
                out.u64(geometry_version);
            }
        }
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        match input.u8()? {
            0 => Ok(Placement::Fixed {
                transform_version: Saved::read(input)?,
            }),
            1 => Ok(Placement::Moving {
                reference_object: input.u32()?,
                geometry_version: input.u64()?,
            }),
            other => Err(input.malformed(format!("target placement tag {other}"))),
        }
    }
}

impl Saved for StandArea {
    const MIN_BYTES: usize = 2;
    fn write(&self, out: &mut Writer) {
        match self {
            StandArea::Points {
                points,
                continuous_offset,
            } => {
                out.u8(0);
                points.write(out);
                continuous_offset.write(out);
            }
            StandArea::Region { polygons, height_m } => {
                out.u8(1);
                polygons.write(out);
                height_m.write(out);
            }
        }
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        match input.u8()? {
            0 => Ok(StandArea::Points {
                points: Saved::read(input)?,
                continuous_offset: Saved::read(input)?,
            }),
            1 => Ok(StandArea::Region {
                polygons: Saved::read(input)?,
                height_m: Saved::read(input)?,
            }),
            other => Err(input.malformed(format!("stand area tag {other}"))),
        }
    }
}

impl Saved for InteractionPhase {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        out.u8(match self {
            InteractionPhase::Walking => 0,
            InteractionPhase::Verifying => 1,
            InteractionPhase::Holding => 2,
        });
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        match input.u8()? {
            0 => Ok(InteractionPhase::Walking),
            1 => Ok(InteractionPhase::Verifying),
            2 => Ok(InteractionPhase::Holding),
            other => Err(input.malformed(format!("interaction phase tag {other}"))),
        }
    }
}

impl Saved for InteractionFailure {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        match *self {
            InteractionFailure::NoLegalRegion => out.u8(0),
            InteractionFailure::CandidatesExhausted => out.u8(1),
            InteractionFailure::PoseCheck(check) => {
                out.u8(2);
                CheckName(check).write(out);
            }
            InteractionFailure::TargetTeleported => out.u8(3),
            InteractionFailure::TargetReplaced => out.u8(4),
            InteractionFailure::TargetMissing => out.u8(5),
            InteractionFailure::NoWorld => out.u8(6),
            InteractionFailure::Unreachable => out.u8(7),
            InteractionFailure::TargetMoved => out.u8(8),
        }
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok(match input.u8()? {
            0 => InteractionFailure::NoLegalRegion,
            1 => InteractionFailure::CandidatesExhausted,
            2 => InteractionFailure::PoseCheck(CheckName::read(input)?.0),
            3 => InteractionFailure::TargetTeleported,
            4 => InteractionFailure::TargetReplaced,
            5 => InteractionFailure::TargetMissing,
            6 => InteractionFailure::NoWorld,
            7 => InteractionFailure::Unreachable,
            8 => InteractionFailure::TargetMoved,
            other => return Err(input.malformed(format!("interaction failure tag {other}"))),
        })
    }
}
