//! The controller seam (spec 004): the crowd hands each agent's support-relative horizontal
//! request to a [`Controller`], which moves the body and reports what actually happened.
//!
//! The built-in [`KinematicController`] moves on the navigation mesh: the relative velocity
//! changes linearly from the carried end velocity towards the request, at most `A/k * dt`
//! (the local curve of spec 004 on a static support), the displacement is the exact
//! integral of that line, the move is clamped to the surface by `move_along_surface`, the
//! height comes from the detail mesh, and after a wall contact the into-wall component of the
//! end velocity is removed.

use glam::{Vec2, Vec3};
use rayon::prelude::*;

use super::support::{SupportMotion, turn_about_up};
use crate::crowd::agents::FilterId;
use crate::mesh::{PolyRef, Snapshot};
use crate::query::{QueryFilter, move_along_surface};

/// One agent's request for one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepRequest {
    /// Step length, seconds.
    pub dt: f32,
    /// Foot position at the step start.
    pub foot: Vec3,
    /// Polygon under the foot.
    pub polygon: PolyRef,
    /// Carried horizontal end velocity of the last step, relative to the support (vEnd).
    pub velocity: Vec2,
    /// Requested horizontal velocity relative to the support (v).
    pub desired: Vec2,
    /// Horizontal speed limit on this patch (V/k), m/s.
    pub speed_limit: f32,
    /// Horizontal acceleration limit on this patch (A/k), m/s².
    pub acceleration_limit: f32,
    /// Patch gradient (dh/dx, dh/dz).
    pub gradient: Vec2,
    /// Support layer under the foot (0: static ground, `n + 1`: support `n`).
    pub support: u32,
    /// The support's surface velocity at the foot (a belt's `u`; zero on static ground),
    /// m/s: the body is carried at it besides its own velocity relative to the support.
    pub support_velocity: Vec3,
    /// The support's turn rate about Up, rad/s (a turntable's; zero on the ground and on
    /// belts). With `support_velocity` at the foot it gives the support's whole velocity
    /// field over the step ([`SupportMotion`]): the carry is round its still point, and
    /// `velocity`, relative to the support, turns with it (wCarry).
    pub support_angular_velocity_rad_s: f32,
    /// The agent's query filter: the areas its feet may enter (the step's `filters[filter]`).
    pub filter: FilterId,
}

/// What a step actually did (spec 004, "位移与步末速度").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepFeedback {
    /// Step length, seconds.
    pub dt: f32,
    /// Foot position at the step end.
    pub foot: Vec3,
    /// Polygon under the foot at the step end.
    pub polygon: PolyRef,
    /// World displacement Δx.
    pub displacement: Vec3,
    /// Carry by the support during the step, ΔxSupport.
    pub displacement_support: Vec3,
    /// Non-motion correction (snapping, depenetration), ΔxCorrection.
    pub displacement_correction: Vec3,
    /// Support at the step end.
    pub support: u32,
    /// Whether the foot is in contact with its support.
    pub contact: bool,
    /// World velocity at the step end.
    pub velocity_world_end: Vec3,
    /// Velocity of the support's contact point at the step end.
    pub velocity_support_end: Vec3,
    /// Whether the end velocities are known (false: vUnknown).
    pub velocity_valid: bool,
    /// Whether the move was cut short: a wall (the edge of walkable space) stopped it, or
    /// the start polygon was stale (its tile was replaced) and the agent did not move. The
    /// crowd reports an agent held so as [`BlockedBy::Wall`](crate::crowd::BlockedBy::Wall).
    pub blocked: bool,
}

/// Moves agents one step. [`Crowd::step`](crate::crowd::runtime::Crowd::step) runs on rayon's thread pool
/// and takes the controller along, so a controller it drives must be `Send`. An agent
/// crossing an off-mesh link comes with a zero request (velocity and desired velocity);
/// the crowd moves it along the link and replaces its feedback.
pub trait Controller {
    /// Steps every request, writing one feedback per request, in order. `filters` is the
    /// crowd's table of query filters: request `r` moves under `filters[r.filter.index()]`.
    fn step_agents(
        &mut self,
        snapshot: &Snapshot,
        filters: &[QueryFilter],
        requests: &[StepRequest],
        feedback: &mut Vec<StepFeedback>,
    );
}

/// The built-in controller: kinematic motion on the navigation mesh surface.
#[derive(Clone, Copy, Debug, Default)]
pub struct KinematicController;

/// The end velocity of one step: the request, reached at most `acceleration_limit * dt`
/// away from the carried velocity, and at most `speed_limit` long.
pub fn integrate_velocity(request: &StepRequest) -> Vec2 {
    let mut desired = request.desired;
    if desired.length() > request.speed_limit {
        desired = desired.normalize_or_zero() * request.speed_limit;
    }
    let change = desired - request.velocity;
    let budget = request.acceleration_limit * request.dt;
    if change.length() <= budget {
        desired
    } else {
        request.velocity + change.normalize_or_zero() * budget
    }
}

/// The detail height at `point` if it lies inside `polygon` seen from above.
fn inside_same_polygon(snapshot: &Snapshot, polygon: PolyRef, point: Vec3) -> Option<f32> {
    let tile = snapshot.tile(polygon)?;
    let flat = Vec2::new(point.x, point.z);
    tile.contains_xz(polygon.polygon(), flat)
        .then(|| tile.height_at(polygon.polygon(), flat))
}

/// Moves a foot on the navigation mesh from `foot` (over `polygon`) towards `target`: the
/// end point and its polygon, the height from the detail mesh, clamped to walkable space.
/// `None` when the start polygon is stale. Most moves end in the polygon they start in and
/// are answered without the surface walk.
pub fn move_foot(
    snapshot: &Snapshot,
    filter: &QueryFilter,
    polygon: PolyRef,
    foot: Vec3,
    target: Vec3,
) -> Option<(Vec3, PolyRef)> {
    if let Some(height) = inside_same_polygon(snapshot, polygon, target) {
        return Some((Vec3::new(target.x, height, target.z), polygon));
    }
    move_along_surface(snapshot, polygon, foot, target, filter)
        .ok()
        .map(|moved| (moved.position, moved.polygon))
}

impl KinematicController {
    /// Steps one agent.
    pub fn step_one(
        snapshot: &Snapshot,
        filter: &QueryFilter,
        request: &StepRequest,
    ) -> StepFeedback {
        let turning = request.support_angular_velocity_rad_s != 0.0;
        let (end_velocity, planned, carried) = if turning {
            Self::on_turning_support(request)
        } else {
            let end_velocity = integrate_velocity(request);
            // The relative velocity changes linearly over the step: the walk is its mean
            // times dt; the support carries the body at its surface velocity besides
            // (u + v).
            let walked = (request.velocity + end_velocity) * (0.5 * request.dt);
            let support_velocity =
                Vec2::new(request.support_velocity.x, request.support_velocity.z);
            let carried = support_velocity * request.dt;
            (end_velocity, walked + carried, carried)
        };
        let motion = SupportMotion {
            velocity: request.support_velocity,
            pivot: request.foot,
            angular_velocity_rad_s: request.support_angular_velocity_rad_s,
        };
        // The support's velocity where the foot ends (the same everywhere on a belt).
        let support_velocity_at = |foot: Vec3| {
            let velocity = motion.velocity_at(foot);
            Vec2::new(velocity.x, velocity.z)
        };
        let support_velocity = Vec2::new(request.support_velocity.x, request.support_velocity.z);
        let target = request.foot + Vec3::new(planned.x, 0.0, planned.y);
        let stale = StepFeedback {
            dt: request.dt,
            foot: request.foot,
            polygon: request.polygon,
            displacement: Vec3::ZERO,
            displacement_support: Vec3::ZERO,
            displacement_correction: Vec3::ZERO,
            support: request.support,
            contact: true,
            velocity_world_end: Vec3::ZERO,
            velocity_support_end: Vec3::ZERO,
            velocity_valid: true,
            blocked: true,
        };
        if planned == Vec2::ZERO {
            // Standing still in the world: on a support, walking against it (carried as
            // far as it walked back).
            let world_velocity = end_velocity + support_velocity;
            return StepFeedback {
                blocked: false,
                displacement_support: Vec3::new(carried.x, 0.0, carried.y),
                velocity_world_end: Vec3::new(
                    world_velocity.x,
                    request.gradient.dot(world_velocity),
                    world_velocity.y,
                ),
                velocity_support_end: Vec3::new(support_velocity.x, 0.0, support_velocity.y),
                ..stale
            };
        }
        let Some((position, polygon)) =
            move_foot(snapshot, filter, request.polygon, request.foot, target)
        else {
            return stale;
        };
        let reached = Vec2::new(position.x, position.z);
        let wanted = Vec2::new(target.x, target.z);
        let shortfall = wanted - reached;
        let mut velocity = end_velocity;
        let mut blocked = false;
        if shortfall.length() > 1e-4 {
            // The wall pushes back along the shortfall: drop the velocity going into it.
            let out_of_wall = -shortfall.normalize();
            let into = velocity.dot(out_of_wall);
            if into < 0.0 {
                velocity -= out_of_wall * into;
            }
            blocked = true;
        }
        let support_end = if turning {
            support_velocity_at(position)
        } else {
            support_velocity
        };
        let world_velocity = velocity + support_end;
        let vertical = request.gradient.dot(world_velocity);
        // The support at the end: the layer of the polygon the foot ended on (looked up
        // only when the foot changed polygons, as few do in a step).
        let support = if polygon == request.polygon {
            request.support
        } else {
            snapshot
                .support_layer(polygon)
                .map_or(request.support, u32::from)
        };
        StepFeedback {
            dt: request.dt,
            foot: position,
            polygon,
            displacement: position - request.foot,
            displacement_support: Vec3::new(carried.x, 0.0, carried.y),
            displacement_correction: Vec3::ZERO,
            support,
            contact: true,
            velocity_world_end: Vec3::new(world_velocity.x, vertical, world_velocity.y),
            velocity_support_end: Vec3::new(support_end.x, 0.0, support_end.y),
            velocity_valid: true,
            blocked,
        }
    }

    /// One step on a turning support (spec 004, "支撑旋转与速度变化"): the end velocity,
    /// the planned horizontal displacement and the carry ΔxSupport. The support's frame is
    /// the world's at the step start, its origin the still point of its velocity field.
    /// The carried velocity wCarry = R1 R0ᵀ w0 is the centre of the reachable circle (so
    /// keeping a local velocity spends no acceleration); the local velocity goes linearly
    /// from b0 = w0 to b1 = R1ᵀ w1, and the body follows
    /// y(t) = y0 + b0 t + (b1 - b0) t² / (2 dt) placed by the turning frame, which ends at
    /// R1 (y0 + (b0 + b1) dt / 2). The local speed stays within the limit along the
    /// segment (both ends do) and its change is |w1 - wCarry| <= A dt.
    fn on_turning_support(request: &StepRequest) -> (Vec2, Vec2, Vec2) {
        let dt = request.dt;
        let turn = request.support_angular_velocity_rad_s;
        let angle = turn * dt;
        let carried_velocity = turn_about_up(request.velocity, angle);
        let end_velocity = integrate_velocity(&StepRequest {
            velocity: carried_velocity,
            ..*request
        });
        // The still point of the field u(x) = u_foot + ω × (x - foot).
        let u = Vec2::new(request.support_velocity.x, request.support_velocity.z);
        let start = Vec2::new(request.foot.x, request.foot.z);
        let still = start + Vec2::new(u.y / turn, -u.x / turn);
        let local_start = start - still;
        let local_end_velocity = turn_about_up(end_velocity, -angle);
        let local_end = local_start + (request.velocity + local_end_velocity) * (0.5 * dt);
        let end = still + turn_about_up(local_end, angle);
        let carried = still + turn_about_up(local_start, angle) - start;
        (end_velocity, end - start, carried)
    }
}

impl Controller for KinematicController {
    fn step_agents(
        &mut self,
        snapshot: &Snapshot,
        filters: &[QueryFilter],
        requests: &[StepRequest],
        feedback: &mut Vec<StepFeedback>,
    ) {
        // Each agent's step reads the shared snapshot and writes its own feedback: parallel
        // and, collected in order, the same at any thread count.
        // (One filter, the usual table: no lookup per request.)
        let only = (filters.len() == 1).then(|| &filters[0]);
        requests
            .par_iter()
            .with_min_len(crate::crowd::compute::parallel::task_min(1))
            .map(|request| {
                let filter = only.unwrap_or_else(|| &filters[request.filter.index()]);
                KinematicController::step_one(snapshot, filter, request)
            })
            .collect_into_vec(feedback);
    }
}
