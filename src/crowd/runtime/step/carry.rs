//! What moving supports do to their riders in a step: walkers on a turning support lean
//! into its carry, a body stepping onto a support keeps its world velocity, and goals that
//! ride a support move with it.
//!
//! Stage: crowd, around the avoid and move passes (`step.rs` has the order). Inputs: the
//! supports' motions and the lanes. Outputs: lanes.

use glam::{Vec2, Vec3};

use crate::crowd::agents::AgentStatus;
use crate::crowd::runtime::Crowd;
use crate::crowd::supports::controller::StepFeedback;
use crate::crowd::supports::support::{SupportMotion, lean_into_carry, support_end_velocity};

impl Crowd {
    /// Walkers on a turning support going to a goal off it lean into its carry: the follow
    /// pass's wish is where to go in the world, the step's request a velocity relative to
    /// the support, so the wish becomes the relative velocity whose sum with the carry
    /// under the foot keeps heading the same way ([`lean_into_carry`]). On a turntable the
    /// carry grows towards the rim and turns with the table: a walker that only re-aimed
    /// each frame would be swept along the rim past its exit. On a belt the carry is the
    /// same everywhere and the follow pass's re-aim absorbs its drift, while leaning would
    /// refuse the belt's help whenever the way turns off it (measured: conveyor walk times
    /// 5.7% off the closed form instead of 2.9%), so belts are left as they are. A walker
    /// whose goal rides the same support aims at it in the support's frame already.
    /// Nothing to do (no lane read) while no support turns.
    pub(crate) fn lean_into_carries(&mut self) {
        let turning = |motion: &SupportMotion| motion.angular_velocity_rad_s != 0.0;
        if !self.support_motions.iter().any(turning) {
            return;
        }
        let lanes = &mut self.lanes;
        for slot in 0..lanes.len() {
            if lanes.status[slot] != AgentStatus::Moving {
                continue;
            }
            let support = lanes.support[slot];
            let Some(motion) = self.support_motions.get(support as usize) else {
                continue;
            };
            let goal_layer = self.snapshot.support_layer(lanes.goal_polygon[slot]);
            if !turning(motion) || goal_layer.map(u32::from) == Some(support) {
                continue;
            }
            let carry = motion.velocity_at(lanes.position(slot));
            let wish = Vec2::new(lanes.desired_x[slot], lanes.desired_z[slot]);
            let leaned =
                lean_into_carry(wish, Vec2::new(carry.x, carry.z), lanes.speed_limit[slot]);
            lanes.desired_x[slot] = leaned.x;
            lanes.desired_z[slot] = leaned.y;
        }
    }

    /// A foot that ended the step on another support's polygon (off a belt's end onto the
    /// ground, from the ground onto a turntable) switched supports mid-step: it keeps its
    /// world velocity, and the support velocity its relative end velocity is taken from is
    /// the new support's at the foot, not the old one's (spec 004: the inherited world
    /// velocity, no subtraction of the old support's). The controller knows only the
    /// support it was given; the crowd knows them all. Nothing to do while no support
    /// moves.
    pub(crate) fn inherit_world_velocities(
        &self,
        requests: &[crate::crowd::supports::controller::StepRequest],
        feedback: &mut [StepFeedback],
    ) {
        if self.support_motions.iter().all(SupportMotion::is_still) {
            return;
        }
        for (step, request) in feedback.iter_mut().zip(requests) {
            if step.support != request.support {
                step.velocity_support_end =
                    support_end_velocity(&self.support_motions, step.support, step.foot);
            }
        }
    }

    /// Carries each walker's goal that lies on a moving surface (a belt,
    /// [`Crowd::set_support_velocity`]; a turntable, [`Crowd::set_support_rotation`]) along
    /// with it over the step, as the controller carried the bodies on it: a stop on a
    /// support is judged in the support's frame (spec 004), so the goal is a place on the
    /// support, and a walker catches it up and stands on the support there, riding on. A
    /// goal carried off its polygon stays where it was. Nothing to do (no lane read) while
    /// no support moves.
    pub(crate) fn carry_goals_on_supports(&mut self, dt: f32) {
        if self.support_motions.iter().all(SupportMotion::is_still) {
            return;
        }
        let lanes = &mut self.lanes;
        for slot in 0..lanes.len() {
            if lanes.status[slot] != AgentStatus::Moving || lanes.on_head_start[slot] {
                continue;
            }
            let polygon = lanes.goal_polygon[slot];
            let Some(layer) = self.snapshot.support_layer(polygon).filter(|&l| l > 0) else {
                continue;
            };
            let Some(motion) = self.support_motions.get(usize::from(layer)) else {
                continue;
            };
            let goal = Vec3::new(lanes.goal_x[slot], lanes.goal_y[slot], lanes.goal_z[slot]);
            let carried = motion.carry(goal, dt);
            let carried = Vec2::new(carried.x, carried.z);
            let Some(tile) = self.snapshot.tile(polygon) else {
                continue;
            };
            if !motion.is_still() && tile.contains_xz(polygon.polygon(), carried) {
                lanes.goal_x[slot] = carried.x;
                lanes.goal_y[slot] = tile.height_at(polygon.polygon(), carried);
                lanes.goal_z[slot] = carried.y;
            }
        }
    }
}
