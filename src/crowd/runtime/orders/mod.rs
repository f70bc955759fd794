//! The orders a game gives the crowd: agents added and removed, moves, velocities, cancels,
//! parameters, holds, interactions and changes to the world, each taken at one admission
//! entry (the owner of an agent's mover) and written to the ordered log.
//!
//! Stage: crowd runtime, between steps. Invariant: every order ends exactly once.

pub(crate) mod commands;
pub(crate) mod hold_orders;
pub(crate) mod interaction;
pub(crate) mod owner;
pub(crate) mod world_changes;
