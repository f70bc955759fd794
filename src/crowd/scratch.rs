//! The crowd's per-step buffers, kept from step to step in one place.
//!
//! Stage: crowd runtime, owned by the crowd and lent to the passes for a step. Nothing in
//! them outlives a step's meaning: each pass writes what it later reads. They are kept so
//! that a step allocates nothing (megabytes allocated and freed every frame would go to the
//! allocator's mmap path and fault their pages in again), and they grow with the crowd, not
//! in a step.

use std::collections::TryReserveError;

use crate::crowd::avoidance::separation::SeparationScratch;
use crate::crowd::avoidance::velocities::{AvoidBody, Solved};
use crate::crowd::compute::parallel::map_pages;
use crate::crowd::supports::controller::{StepFeedback, StepRequest};
use crate::crowd::walking::passes::FollowOutput;

/// The buffers one step uses, by pass.
#[derive(Debug, Default)]
pub(crate) struct StepScratch {
    /// The move pass's controller requests, in slot order.
    pub requests: Vec<StepRequest>,
    /// The controller's answers, in slot order.
    pub feedback: Vec<StepFeedback>,
    /// The follow pass's outputs, in slot order.
    pub follow_outputs: Vec<Option<FollowOutput>>,
    /// The positions the neighbour grid is rebuilt over, copied at the start of each step
    /// so the rebuild runs alongside passes that write the lanes.
    pub grid_positions: [Vec<f32>; 3],
    /// The avoid pass's answers, in the grid's cell order.
    pub avoid_velocities: Vec<Solved>,
    /// The bodies the avoid pass gathered, in cell order (separation reads them too).
    pub avoid_bodies: Vec<AvoidBody>,
    /// Each body's support surface velocity, in the same order (empty while no support
    /// moves).
    pub avoid_carried: Vec<glam::Vec2>,
    /// Each body's frame offset (its platform's), in the same order (empty while no
    /// platform is placed).
    pub avoid_frames: Vec<crate::crowd::supports::platform::FlatFrame>,
    /// The separation pass's rounds.
    pub separation: SeparationScratch,
    /// Agents the buffers have room for with their memory already written.
    pub mapped: usize,
}

impl StepScratch {
    /// Grows the buffers to room for `agents` (called as agents are added, or by
    /// `Crowd::reserve`) and writes their new memory once so the system maps its pages
    /// now. Left to the first step, that step would grow them itself and take a page fault
    /// on every fresh page, a first frame several times a usual one. Each added agent
    /// writes its own places (capacity grows geometrically, as a vector's does), so adding
    /// N agents costs O(N) here in all, and only memory the crowd uses is mapped. The
    /// avoidance buffers are left alone when avoidance is off.
    pub fn map_pages(&mut self, agents: usize, avoidance: bool) -> Result<(), TryReserveError> {
        let (from, to) = (self.mapped, agents);
        if to <= from {
            return Ok(());
        }
        map_pages(&mut self.requests, from, to)?;
        map_pages(&mut self.feedback, from, to)?;
        map_pages(&mut self.follow_outputs, from, to)?;
        if avoidance {
            for lane in &mut self.grid_positions {
                map_pages(lane, from, to)?;
            }
            map_pages(&mut self.avoid_velocities, from, to)?;
            map_pages(&mut self.avoid_bodies, from, to)?;
            self.separation.map_pages(from, to)?;
        }
        self.mapped = to;
        Ok(())
    }
}
