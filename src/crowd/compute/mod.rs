//! How the passes use the machine: work split into pages over rayon's threads, and the
//! choice of SIMD kernels for the CPU.
//!
//! Stage: a leaf under every pass. Invariant: a split never changes a result, only who
//! computes it.

pub(crate) mod cpu;
pub(crate) mod parallel;
