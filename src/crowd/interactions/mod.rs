//! Interactions and holds: the types of an interaction order (its world, phases, failures,
//! view) with the checks run at a pose, and the station keeping of a hold (its policy,
//! phases, facts and the keeper that decides them).
//!
//! Stage: crowd, below the orders and passes that drive them. Inputs: the host's world and
//! each tick's observation; outputs: verdicts and fact changes. Invariant: a fact is
//! established, invalidated or released only by the keeper's rules (spec 001).

pub(crate) mod hold;
pub(crate) mod interaction;
