//! What the agents stand on and how a step moves them: moving supports (belts, turntables),
//! platforms whose footprint moves (ferries, lifts) with their docks, the frame windows of
//! links, and the controller that carries out a step.
//!
//! Stage: crowd, below the passes. Inputs: the host's motions and poses; outputs: support
//! velocities and accelerations at a point, platform frames, the kinematic step. Invariant:
//! nothing here reads agents' lanes; the passes bring the per-agent values.

pub(crate) mod connection;
pub(crate) mod controller;
pub(crate) mod platform;
pub(crate) mod support;
