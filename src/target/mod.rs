//! Navigation target projection (spec 000): from "go to this slot and do this interaction"
//! to the set of legal foot positions, and a verified pose inside it, or the exact reason
//! there is none.
//!
//! Stage: runtime, above [`query`](crate::query). Inputs: a [`TargetRecord`] in world
//! metres (a moving one is placed from its object's motion first), a navigation mesh
//! [`Snapshot`] with a [`QueryFilter`], and a [`CollisionWorld`]. Outputs: a
//! [`TargetResult`] holding the legal region's fragments, every candidate tried with each
//! check's measured value, and the verdict: a [`VerifiedPose`], [`Verdict::NoLegalRegion`]
//! (the set is provably empty) or [`Verdict::CandidatesExhausted`] (finite samples of a
//! non-empty region all failed; the region is not claimed unreachable).
//!
//! Invariants: tolerances are applied as given, never widened; only polygons on the
//! record's support layer and approach side are used; candidates are tried in a fixed
//! order (fragments by id, slices from the middle of each outward on a world grid), so the
//! same inputs give the same pose.

pub mod collision;
mod pose;
mod record;
mod region;

pub use collision::{
    BadShape, CollisionVersion, CollisionWorld, Crossing, Shape, ShapeId, StaticWorld,
};
pub use pose::{POSE_CHECKS, PoseReport, ProbeReport, ShapeClearance, SightReport, validate_pose};
pub use record::{
    BodyProfile, FacingRule, InPlaceRule, InteractionRule, ObjectMotion, ObjectState, Placement,
    ProbeRule, SAMPLE_SPACING_MIN_M, SightFrom, StandArea, TargetRecord, Tolerances,
};
pub use region::{Fragment, RegionReport, Shadow, WalkableFace, legal_fragments};

use glam::{Vec2, Vec3};

use crate::geom::Aabb;
use crate::ids::TransformVersion;
use crate::mesh::{PolyRef, Snapshot};
use crate::query::{NearestOptions, QueryError, QueryFilter, ReadSet, polygons_within};

/// Input a projection cannot run on.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TargetError {
    /// A field with a NaN, negative or otherwise impossible value.
    #[error("target field {field} = {value} is invalid")]
    BadField {
        /// The field.
        field: &'static str,
        /// Its value.
        value: String,
    },
    /// An allowed stand polygon that is not convex (or has no area, or a NaN corner).
    #[error("allowed stand region polygon {polygon} is not convex: {corners:?}")]
    NonConvexRegion {
        /// Polygon index.
        polygon: usize,
        /// Its corners.
        corners: Vec<Vec2>,
    },
    /// A moving target projected without its object's motion.
    #[error("moving target on object {reference_object} needs the object's current motion")]
    MissingMotion {
        /// The reference object.
        reference_object: u32,
    },
    /// A navigation query failed.
    #[error(transparent)]
    Query(#[from] QueryError),
}

/// The versions a verified pose was computed from: a change to any of them invalidates it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoseVersions {
    /// The object's asset version.
    pub asset_version: u64,
    /// The transform version the world geometry came from.
    pub transform_version: Option<TransformVersion>,
    /// A moving target's local geometry version.
    pub geometry_version: Option<u64>,
    /// The collision world's version (occluders, body obstacles).
    pub collision_version: CollisionVersion,
}

/// A pose that passed every check.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifiedPose {
    /// The interaction slot.
    pub slot: u32,
    /// The region fragment it lies in (`None` for a discrete stand point).
    pub fragment: Option<u32>,
    /// Hash of that fragment's bounds (0 for a discrete stand point).
    pub region_hash: u64,
    /// The foot point `q`.
    pub foot: Vec3,
    /// The walkable polygon under it.
    pub polygon: PolyRef,
    /// The unit facing (x, z).
    pub facing: Vec2,
    /// The support layer.
    pub layer: u16,
    /// Horizontal distance from the stand point (or the region's recommended point, the
    /// first stand point / first region corner) to `q`, metres.
    pub projection_distance_m: f32,
    /// What it was computed from.
    pub versions: PoseVersions,
    /// The navigation tiles the projection read (walkable polygons considered), with the
    /// filter and cost versions: a rebuilt tile among them invalidates the pose.
    pub read_set: ReadSet,
}

/// One candidate foot point and how its checks came out.
#[derive(Clone, Debug, PartialEq)]
pub struct CandidateAttempt {
    /// The fragment it was taken from, if any.
    pub fragment: Option<u32>,
    /// The walkable polygon under it.
    pub polygon: PolyRef,
    /// Every check, measured.
    pub report: PoseReport,
}

/// How a projection ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// A pose passed every check.
    Success(VerifiedPose),
    /// The legal set is provably empty: no stand point projects within the tolerances, no
    /// fragment is left, or every registered discrete stand point failed.
    NoLegalRegion,
    /// The region is not empty, but every sampled candidate failed a check.
    CandidatesExhausted,
}

/// One stand point's projection candidates.
#[derive(Clone, Debug, PartialEq)]
pub struct PointProjection {
    /// The stand point.
    pub point: Vec3,
    /// Polygons within the tolerances, nearest first, with their closest points.
    pub candidates: Vec<crate::query::Nearest>,
}

/// Everything a projection found.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetResult {
    /// The verdict.
    pub verdict: Verdict,
    /// Region fragments (region and continuous-offset targets).
    pub region: RegionReport,
    /// Stand point projections (discrete targets).
    pub points: Vec<PointProjection>,
    /// Candidates tried, in order.
    pub attempts: Vec<CandidateAttempt>,
}

/// The x positions a fragment is sampled at: the world-grid line nearest the middle of its
/// extent, then alternately one step further out on each side. Lazy: the projection stops
/// drawing positions at its candidate limit, so a fine spacing costs no memory up front.
/// A spacing that is not a positive finite number gives the first position only (records
/// refuse it before projecting: [`SAMPLE_SPACING_MIN_M`]).
pub fn slice_positions(extent: (f32, f32), spacing_m: f32) -> impl Iterator<Item = f32> {
    let (low, high) = extent;
    let middle = 0.5 * (low + high);
    let usable = spacing_m.is_finite() && spacing_m > 0.0;
    let mut first = if usable {
        (middle / spacing_m).round() * spacing_m
    } else {
        middle
    };
    if !(low..=high).contains(&first) {
        first = middle;
    }
    let outward = (1u32..)
        .map_while(move |step| {
            if !usable {
                return None;
            }
            let (up, down) = (
                first + step as f32 * spacing_m,
                first - step as f32 * spacing_m,
            );
            let (up_in, down_in) = (up <= high, down >= low);
            (up_in || down_in).then_some([up_in.then_some(up), down_in.then_some(down)])
        })
        .flatten()
        .flatten();
    std::iter::once(first).chain(outward)
}

/// The candidate foot point (x, z) on each interval of the fragment's slice at `x`: the
/// interval's midpoint.
pub fn slice_candidates(fragment: &Fragment, x: f32) -> Vec<Vec2> {
    fragment
        .region
        .slice(x)
        .into_iter()
        .filter(|interval| !interval.is_empty())
        .map(|interval| Vec2::new(x, interval.midpoint()))
        .collect()
}

fn versions(
    record: &TargetRecord,
    motion: Option<&ObjectMotion>,
    world: &impl CollisionWorld,
) -> PoseVersions {
    let (transform_version, geometry_version) = match record.placement {
        Placement::Fixed { transform_version } => (Some(transform_version), None),
        Placement::Moving {
            geometry_version, ..
        } => (motion.map(|m| m.transform_version), Some(geometry_version)),
    };
    PoseVersions {
        asset_version: record.asset_version,
        transform_version,
        geometry_version,
        collision_version: world.version(),
    }
}

/// Projects a target: finds its legal stand set on the mesh and a verified pose in it.
/// A moving target needs `motion`, its object's motion at this step.
pub fn project_target(
    snapshot: &Snapshot,
    filter: &QueryFilter,
    record: &TargetRecord,
    world: &impl CollisionWorld,
    motion: Option<&ObjectMotion>,
) -> Result<TargetResult, TargetError> {
    project_target_avoiding(snapshot, filter, record, world, motion, &[])
}

/// [`project_target`] taking no candidate on the `avoided` polygons: the next legal pose
/// when the poses on those proved unreachable (spec 000: a region that cannot be reached
/// sends the search to the other legal fragments). The region and the points are reported
/// whole; only the candidates skip.
pub fn project_target_avoiding(
    snapshot: &Snapshot,
    filter: &QueryFilter,
    record: &TargetRecord,
    world: &impl CollisionWorld,
    motion: Option<&ObjectMotion>,
    avoided: &[PolyRef],
) -> Result<TargetResult, TargetError> {
    record.validate()?;
    let placed = match record.placement {
        Placement::Fixed { .. } => record.clone(),
        Placement::Moving {
            reference_object, ..
        } => record.placed(motion.ok_or(TargetError::MissingMotion { reference_object })?),
    };
    let record = &placed;
    let versions = versions(record, motion, world);
    let mut result = TargetResult {
        verdict: Verdict::NoLegalRegion,
        region: RegionReport::default(),
        points: Vec::new(),
        attempts: Vec::new(),
    };
    let success = |attempt: &CandidateAttempt, origin: Vec3, region_hash: u64, read: &[PolyRef]| {
        let foot = attempt.report.foot;
        let mut read_set = ReadSet::new(filter);
        for polygon in read {
            read_set.read_tile(polygon.slot(), polygon.generation());
        }
        Verdict::Success(VerifiedPose {
            slot: record.slot,
            fragment: attempt.fragment,
            region_hash,
            foot,
            polygon: attempt.polygon,
            facing: attempt.report.facing,
            layer: record.layer,
            projection_distance_m: Vec2::new(foot.x - origin.x, foot.z - origin.z).length(),
            versions,
            read_set,
        })
    };
    if let StandArea::Points {
        points,
        continuous_offset: false,
    } = &record.stand
    {
        let options = NearestOptions {
            layer: Some(record.layer),
            approach_side: record.approach_side,
        };
        for &point in points {
            let candidates = polygons_within(
                snapshot,
                point,
                record.tolerances.horizontal_m,
                record.tolerances.vertical_m,
                filter,
                &options,
            )?;
            result.points.push(PointProjection { point, candidates });
        }
        for projection in &result.points {
            for candidate in &projection.candidates {
                if result.attempts.len() >= record.candidates_max as usize {
                    break;
                }
                if avoided.contains(&candidate.polygon) {
                    continue;
                }
                let attempt = CandidateAttempt {
                    fragment: None,
                    polygon: candidate.polygon,
                    report: validate_pose(record, candidate.point, world),
                };
                let passed = attempt.report.passed;
                result.attempts.push(attempt);
                if passed {
                    let attempt = result.attempts.last().expect("just pushed");
                    let read: Vec<PolyRef> = result
                        .points
                        .iter()
                        .flat_map(|p| p.candidates.iter().map(|c| c.polygon))
                        .collect();
                    result.verdict = success(attempt, projection.point, 0, &read);
                    return Ok(result);
                }
            }
        }
        // Every registered point was tried (or none projects): no legal pose exists.
        return Ok(result);
    }
    result.region = legal_fragments(snapshot, filter, record, world)?;
    if result.region.fragments.is_empty() {
        return Ok(result);
    }
    let origin = match &record.stand {
        StandArea::Points { points, .. } => points[0],
        StandArea::Region { polygons, height_m } => {
            Vec3::new(polygons[0][0].x, *height_m, polygons[0][0].y)
        }
    };
    result.verdict = Verdict::CandidatesExhausted;
    for fragment in &result.region.fragments {
        if avoided.contains(&fragment.polygon) {
            continue;
        }
        let Some(tile) = snapshot.tile(fragment.polygon) else {
            continue;
        };
        for x in slice_positions(fragment.x_extent, record.sample_spacing_m) {
            for plan in slice_candidates(fragment, x) {
                if result.attempts.len() >= record.candidates_max as usize {
                    return Ok(result);
                }
                let height = tile.height_at(fragment.polygon.polygon(), plan);
                let foot = Vec3::new(plan.x, height, plan.y);
                let attempt = CandidateAttempt {
                    fragment: Some(fragment.id),
                    polygon: fragment.polygon,
                    report: validate_pose(record, foot, world),
                };
                let passed = attempt.report.passed;
                result.attempts.push(attempt);
                if passed {
                    let attempt = result.attempts.last().expect("just pushed");
                    let read: Vec<PolyRef> = result
                        .region
                        .walkable
                        .iter()
                        .map(|face| face.polygon)
                        .collect();
                    result.verdict = success(attempt, origin, fragment.region_hash(), &read);
                    return Ok(result);
                }
            }
        }
    }
    Ok(result)
}

/// Where a character's navigation starts (spec 000, last paragraph).
#[derive(Clone, Debug, PartialEq)]
pub enum StartProjection {
    /// On the mesh: the start polygon and point, the correction from the actual foot, and
    /// the access segment checked clear for the body.
    OnMesh {
        /// The polygon.
        polygon: PolyRef,
        /// The navigation start point.
        point: Vec3,
        /// Horizontal correction from the actual foot, metres.
        correction_m: f32,
    },
    /// The foot is above walkable space by more than the vertical tolerance: re-land first.
    InTheAir {
        /// Height of the foot above the surface below it, metres.
        height_above_m: f32,
    },
    /// No walkable polygon of the layer within the correction distance: recover off the
    /// mesh first.
    OutOfReach,
    /// The nearest start point is behind an obstacle: the body swept from the foot to it
    /// would hit this shape (it does not jump through walls).
    AccessBlocked {
        /// The shape in the way.
        shape: ShapeId,
        /// The swept body's clearance to it (negative: overlap), metres.
        clearance_m: f32,
    },
}

/// Projects an actual foot position to a navigation start on `layer`: at most
/// `correction_max_m` horizontally and `vertical_m` vertically; the access segment from the
/// foot to the start is swept with the body capsule against `world`. The projection never
/// moves the character; it only gives navigation coordinates.
#[allow(clippy::too_many_arguments)]
pub fn project_start(
    snapshot: &Snapshot,
    filter: &QueryFilter,
    foot: Vec3,
    layer: u16,
    correction_max_m: f32,
    vertical_m: f32,
    body: &BodyProfile,
    world: &impl CollisionWorld,
) -> Result<StartProjection, TargetError> {
    for (field, value) in [
        ("correction_max_m", correction_max_m),
        ("vertical_m", vertical_m),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(TargetError::BadField {
                field,
                value: value.to_string(),
            });
        }
    }
    let options = NearestOptions {
        layer: Some(layer),
        approach_side: None,
    };
    let candidates = polygons_within(
        snapshot,
        foot,
        correction_max_m,
        vertical_m,
        filter,
        &options,
    )?;
    let Some(start) = candidates.first() else {
        // Is there walkable space straight below, further down?
        let below = polygons_within(
            snapshot,
            foot - Vec3::Y * (vertical_m + 50.0),
            correction_max_m,
            vertical_m + 50.0,
            filter,
            &options,
        )?;
        return Ok(
            match below
                .iter()
                .filter(|n| n.point.y < foot.y && n.over_polygon)
                .map(|n| foot.y - n.point.y)
                .min_by(f32::total_cmp)
            {
                Some(height_above_m) => StartProjection::InTheAir { height_above_m },
                None => StartProjection::OutOfReach,
            },
        );
    };
    let axis_low = foot + Vec3::Y * body.radius_m;
    let axis_high = foot + Vec3::Y * (body.height_m - body.radius_m);
    let travel = start.point - foot;
    let mut bounds = Aabb::EMPTY;
    for p in [axis_low, axis_high, axis_low + travel, axis_high + travel] {
        bounds.add_point(p);
    }
    bounds.min -= Vec3::splat(body.radius_m);
    bounds.max += Vec3::splat(body.radius_m);
    for id in world.shapes_near(&bounds) {
        let Some(shape) = world.shape(id) else {
            continue;
        };
        let clearance_m = shape.swept_segment_distance(axis_low, axis_high, travel) - body.radius_m;
        if clearance_m < -body.clearance_tolerance_m {
            return Ok(StartProjection::AccessBlocked {
                shape: id,
                clearance_m,
            });
        }
    }
    Ok(StartProjection::OnMesh {
        polygon: start.polygon,
        point: start.point,
        correction_m: Vec2::new(travel.x, travel.z).length(),
    })
}
