//! Paths for the crowd: corridors (the polygons an agent walks, with what they read of the
//! mesh) and their cache, and the scheduler that searches them under one node budget.
//!
//! Stage: crowd, above [`query`](crate::query). Inputs: agents' requests and the mesh
//! snapshot; outputs: corridors, head starts and the scheduler's counters. Invariant: a
//! corridor carries the read set it depends on, so its validity can be checked at any time.

pub(crate) mod corridor;
pub(crate) mod scheduler;
