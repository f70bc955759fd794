//! Walking a corridor: the funnel that finds the next corners, and the per-agent kernels of
//! following, slope limits and feedback the step runs over the lanes.
//!
//! Stage: crowd passes' kernels. Inputs: lanes and corridors; outputs: desired velocities,
//! speed limits, progress. Invariant: free functions over slices; nothing here owns state.

pub(crate) mod funnel;
pub(crate) mod passes;
