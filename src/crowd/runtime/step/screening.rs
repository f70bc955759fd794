//! Screening the controller's answers: a value no body can have quarantines its agent.
//!
//! Stage: crowd, right after the controller and before any pass reads its answers
//! (`step.rs` has the order). Input: the step feedback. Output: the feedback with every
//! quarantined agent standing where it stood, and an event per newly quarantined agent
//! naming the field and the value.

use glam::Vec3;
use rayon::prelude::*;

use crate::crowd::agents::AgentStatus;
use crate::crowd::events::{CrowdEvent, FeedbackFault, FeedbackField};
use crate::crowd::runtime::Crowd;
use crate::crowd::runtime::step::STEP_RANGE_S;
use crate::crowd::supports::controller::StepFeedback;

impl Crowd {
    /// Screens the controller's answers before any pass reads them: an answer with a value
    /// no body can have (non-finite, a foot outside the world, a velocity past the speed
    /// limit) quarantines its agent with an event naming the field and the value, and every
    /// quarantined agent's answer is replaced by standing where it stood, so one agent's
    /// bad answer never reaches its neighbours through separation or avoidance. A parallel
    /// scan finds the few to fix; the common frame fixes none.
    pub(crate) fn screen_feedback(
        &mut self,
        dt: f32,
        feedback: &mut [StepFeedback],
        events: &mut Vec<CrowdEvent>,
    ) {
        let status = &self.lanes.status;
        let faults: Vec<(usize, Option<FeedbackFault>)> = feedback
            .par_iter()
            .enumerate()
            .with_min_len(crate::crowd::compute::parallel::LIGHT_AGENTS_PER_TASK)
            .filter_map(|(slot, step)| {
                let fault = feedback_fault(step);
                (fault.is_some() || status[slot] == AgentStatus::Quarantined)
                    .then_some((slot, fault))
            })
            .collect();
        for (slot, fault) in faults {
            let lanes = &mut self.lanes;
            feedback[slot] = StepFeedback {
                dt,
                foot: lanes.position(slot),
                polygon: lanes.polygon[slot],
                displacement: Vec3::ZERO,
                displacement_support: Vec3::ZERO,
                displacement_correction: Vec3::ZERO,
                support: lanes.support[slot],
                contact: true,
                velocity_world_end: Vec3::ZERO,
                velocity_support_end: Vec3::ZERO,
                velocity_valid: true,
                blocked: false,
            };
            if let Some(fault) = fault {
                if lanes.status[slot] != AgentStatus::Quarantined {
                    lanes.status[slot] = AgentStatus::Quarantined;
                    for lane in [
                        &mut lanes.velocity_x,
                        &mut lanes.velocity_z,
                        &mut lanes.desired_x,
                        &mut lanes.desired_z,
                    ] {
                        lane[slot] = 0.0;
                    }
                    events.push(CrowdEvent::Quarantined {
                        agent: lanes.id[slot],
                        field: fault.field.name(),
                        value_bits: fault.value_bits,
                    });
                }
            }
        }
    }
}

/// The first value of `step` no body can have, if any.
fn feedback_fault(step: &StepFeedback) -> Option<FeedbackFault> {
    use crate::geom::limits::{COORDINATE_MAX_M, SPEED_MAX_MPS, within_each};
    let fault = |field: FeedbackField, value: Vec3| {
        let largest = if value.is_nan() {
            f32::NAN
        } else {
            value.abs().max_element()
        };
        Some(FeedbackFault {
            field,
            value_bits: largest.to_bits(),
        })
    };
    if !STEP_RANGE_S.contains(&step.dt) {
        return fault(FeedbackField::StepLength, Vec3::splat(step.dt));
    }
    if !within_each(step.foot, COORDINATE_MAX_M) {
        return fault(FeedbackField::Foot, step.foot);
    }
    if step.velocity_valid && !within_each(step.velocity_world_end, SPEED_MAX_MPS) {
        return fault(FeedbackField::Velocity, step.velocity_world_end);
    }
    if !within_each(step.velocity_support_end, SPEED_MAX_MPS) {
        return fault(FeedbackField::SupportVelocity, step.velocity_support_end);
    }
    for displacement in [
        step.displacement,
        step.displacement_support,
        step.displacement_correction,
    ] {
        if !within_each(displacement, 2.0 * COORDINATE_MAX_M) {
            return fault(FeedbackField::Displacement, displacement);
        }
    }
    None
}
