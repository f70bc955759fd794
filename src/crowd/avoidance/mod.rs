//! Local avoidance: the neighbour grid, the velocity negotiation between neighbours (ORCA
//! half-planes solved per agent), crowding, and the separation of overlapping bodies after
//! the move.
//!
//! Stage: crowd passes' kernels, after following. Inputs: lanes, profiles, platform frames;
//! outputs: new velocities and separation moves. Invariant: every agent's result depends
//! only on the frame's inputs, so any thread count gives the same one.

pub(crate) mod congestion;
pub(crate) mod neighbours;
pub(crate) mod separation;
pub(crate) mod sorting_network;
pub(crate) mod velocities;
