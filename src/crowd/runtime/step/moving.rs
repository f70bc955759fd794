//! The move pass's glue: each agent's step request built from the lanes (with the support
//! it stands on), and the host's controller run over all of them.
//!
//! Stage: crowd, the move pass of the step (`mod.rs` has the order). Inputs: lanes, the
//! supports' motions, the controller. Output: one step feedback per agent, in slot order.

use rayon::prelude::*;

use crate::crowd::runtime::Crowd;
use crate::crowd::supports::controller::{Controller, StepFeedback, StepRequest};
use crate::mesh::Snapshot;

impl Crowd {
    /// Move: every agent's request, then the controller's answers into `feedback`.
    pub(crate) fn move_agents(
        &self,
        dt: f32,
        controller: &mut (impl Controller + Send),
        snapshot: &Snapshot,
        requests: &mut Vec<StepRequest>,
        feedback: &mut Vec<StepFeedback>,
    ) {
        let support_motions = &self.support_motions;
        (0..self.lanes.len())
            .into_par_iter()
            .with_min_len(crate::crowd::compute::parallel::LIGHT_AGENTS_PER_TASK)
            .map(|slot| {
                let mut request = self.lanes.step_request(slot, dt);
                if let Some(motion) = support_motions.get(request.support as usize) {
                    request.support_velocity = motion.velocity_at(request.foot);
                    request.support_angular_velocity_rad_s = motion.angular_velocity_rad_s;
                }
                request
            })
            .collect_into_vec(requests);
        controller.step_agents(snapshot, &self.filters, requests, feedback);
    }
}
