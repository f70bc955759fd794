//! The avoid pass's glue: gathers the bodies, runs [`avoid_pass`] over the neighbour grid
//! and writes each agent's negotiated velocity as its request to the controller.
//!
//! Stage: crowd, the avoid pass of the step (`step.rs` has the order; the pass itself is in
//! `avoid/`). Inputs: lanes, the neighbour grid, the platforms' frames. Output: requested
//! velocities; the count of jammed agents.

use rayon::prelude::*;

use crate::crowd::avoidance::separation::separation_pass;
use crate::crowd::avoidance::velocities::{
    avoid_pass, gather_bodies, gather_carried, gather_frames,
};
use crate::crowd::runtime::Crowd;
use crate::crowd::supports::controller::StepFeedback;
use crate::crowd::supports::platform::PlatformFrames;
use crate::mesh::Snapshot;

impl Crowd {
    /// Avoid: the neighbour grid, then a negotiated velocity for every agent, which becomes
    /// its request to the controller. Returns how many agents were jammed.
    pub(crate) fn avoid(&mut self, dt: f32, platforms: &PlatformFrames) -> u32 {
        let avoidance = self.config.avoidance;
        // The grid was rebuilt alongside the path searches, on these same positions.
        let mut velocities = std::mem::take(&mut self.scratch.avoid_velocities);
        let mut bodies = std::mem::take(&mut self.scratch.avoid_bodies);
        let mut carried = std::mem::take(&mut self.scratch.avoid_carried);
        let mut frames = std::mem::take(&mut self.scratch.avoid_frames);
        gather_bodies(&self.lanes, &self.neighbour_grid, &mut bodies);
        gather_carried(
            &self.lanes,
            &self.neighbour_grid,
            &self.support_motions,
            platforms,
            &mut carried,
        );
        gather_frames(&self.lanes, &self.neighbour_grid, platforms, &mut frames);
        avoid_pass(
            &self.neighbour_grid,
            &bodies,
            &carried,
            &frames,
            &self.snapshot,
            &avoidance,
            &self.profiles,
            dt,
            &mut velocities,
        );
        // Back to slot order: each slot reads its answer (a gather, on the pool) rather
        // than the answers being scattered to the slots one by one.
        let grid = &self.neighbour_grid;
        let jammed = self
            .lanes
            .desired_x
            .par_iter_mut()
            .zip(self.lanes.desired_z.par_iter_mut())
            .enumerate()
            .with_min_len(crate::crowd::compute::parallel::LIGHT_AGENTS_PER_TASK)
            .map(|(slot, (desired_x, desired_z))| {
                let solved = grid
                    .index_of_slot(slot)
                    .and_then(|index| velocities.get(index))
                    .copied()
                    .unwrap_or_default();
                *desired_x = solved.velocity.x;
                *desired_z = solved.velocity.y;
                u32::from(solved.jammed)
            })
            .sum();
        self.scratch.avoid_velocities = velocities;
        self.scratch.avoid_bodies = bodies;
        self.scratch.avoid_carried = carried;
        self.scratch.avoid_frames = frames;
        jammed
    }

    /// The positions the neighbour grid is built on: the lanes' feet, placed in the world
    /// on platforms (`platforms_now`), in the scratch's buffers (left as they were with
    /// avoidance off).
    pub(crate) fn neighbour_positions(&mut self, platforms_now: &PlatformFrames) -> [Vec<f32>; 3] {
        let mut positions = std::mem::take(&mut self.scratch.grid_positions);
        if self.config.avoidance.enabled {
            for (copy, lane) in positions.iter_mut().zip([
                &self.lanes.position_x,
                &self.lanes.position_y,
                &self.lanes.position_z,
            ]) {
                copy.clear();
                copy.extend_from_slice(lane);
            }
            if !platforms_now.is_empty() {
                for (slot, &layer) in self.lanes.support.iter().enumerate() {
                    let placed = platforms_now.place(layer, self.lanes.position(slot));
                    positions[0][slot] = placed.x;
                    positions[1][slot] = placed.y;
                    positions[2][slot] = placed.z;
                }
            }
        }
        positions
    }

    /// Separate: bodies still overlapping after the move pushed apart, their feedback
    /// corrected (`separation.rs`), with the platforms where they stand at the step's end.
    pub(crate) fn separate(
        &mut self,
        dt: f32,
        snapshot: &Snapshot,
        platforms_end: &PlatformFrames,
        feedback: &mut [StepFeedback],
    ) {
        let mut scratch = std::mem::take(&mut self.scratch.separation);
        separation_pass(
            &self.neighbour_grid,
            &self.scratch.avoid_bodies,
            &self.config.avoidance,
            snapshot,
            &self.filters,
            &self.profiles,
            dt,
            &self.support_motions,
            platforms_end,
            feedback,
            &mut scratch,
        );
        self.scratch.separation = scratch;
    }
}
