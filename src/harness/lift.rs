//! The proving ground's lift set up on a baked mesh and a crowd: the links of its doors,
//! its car's shuttle between the floors and each door's dock.
//!
//! Stage: harness, for the CLI's main job and the tests. Input: the level's
//! [`Lift`] description (its car's support and stops, its doors' link ends). Output: the
//! links added to the mesh (before the crowd is made on it), then the car's motion and
//! the doors' docks set on the crowd, in frames of the run's step.

use crate::crowd::{Crowd, CrowdError, LinkDock, PlatformMotion, PlatformPose, Shuttle};
use crate::mesh::{LinkDesc, LinkId, LinkKind, NavMesh, NavMeshError};
use crate::scene::proving_ground::Lift;

/// How far from a door link's ends a polygon may be to attach, metres: the floors' and
/// the car's edges are eroded by the agent radius the level is baked for.
const DOOR_ATTACH_M: f32 = 1.0;

/// How far from its stop the car may stand for a door to join it, metres.
const DOOR_TOLERANCE_M: f32 = 0.05;

/// Adds `lift`'s doors to `mesh` as links, both ways; returns each with whether it opens
/// on the lower floor.
pub fn add_lift_doors(
    mesh: &mut NavMesh,
    lift: &Lift,
) -> Result<Vec<(LinkId, bool)>, NavMeshError> {
    lift.doors
        .iter()
        .map(|&(start, end, lower)| {
            let link = mesh.add_link(LinkDesc {
                kind: LinkKind::Lift,
                start,
                end,
                bidirectional: true,
                radius_m: DOOR_ATTACH_M,
                open: true,
            })?;
            Ok((link, lower))
        })
        .collect()
}

/// The car's shuttle between the floors in frames of `dt_s`.
pub fn lift_shuttle(lift: &Lift, dt_s: f32) -> Shuttle {
    let frames = |seconds: f32| ((seconds / dt_s).round() as u32).max(1);
    Shuttle {
        from: lift.lower_offset,
        to: lift.upper_offset,
        dwell_frames: frames(lift.dwell_s),
        travel_frames: frames(lift.travel_s),
    }
}

/// Sets `lift`'s car going on `crowd` (a shuttle in frames of `dt_s`) and docks its doors
/// (`doors`, from [`add_lift_doors`] on the crowd's mesh) at their floors.
pub fn run_lift(
    crowd: &mut Crowd,
    lift: &Lift,
    doors: &[(LinkId, bool)],
    dt_s: f32,
) -> Result<(), CrowdError> {
    let shuttle = lift_shuttle(lift, dt_s);
    crowd.set_platform_motion(lift.support, Some(PlatformMotion::Shuttle(shuttle)))?;
    for &(link, lower) in doors {
        let dock = LinkDock {
            support: lift.support,
            pose: PlatformPose::at(if lower { shuttle.from } else { shuttle.to }),
            tolerance_m: DOOR_TOLERANCE_M,
        };
        crowd.set_link_dock(link, Some(dock))?;
    }
    Ok(())
}
