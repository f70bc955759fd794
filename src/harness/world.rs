//! A ready-made host world for interaction orders: a collision world and lists of objects'
//! states, for the tests, the simulator and the stress runs (a game passes its own world
//! type).
//!
//! Stage: harness. Input: the host's collision world and objects; output: an
//! [`InteractionWorld`].

use crate::crowd::InteractionWorld;
use crate::target::{CollisionWorld, ObjectState};

/// An [`InteractionWorld`](crate::crowd::InteractionWorld) from a collision world and a list of objects' states: what a
/// host without a world type of its own, a test or `waymark sim` passes.
#[derive(Clone, Copy, Debug)]
pub struct HostWorld<'a, W> {
    /// The collision world.
    pub collision: &'a W,
    /// Each moving target's object and its state this step; an object not listed is
    /// [`ObjectState::Missing`](crate::target::ObjectState::Missing).
    pub objects: &'a [(u32, ObjectState)],
    /// Fixed targets' object instances whose transform version the host tracks, with the
    /// current version; an instance not listed is not tracked.
    pub fixed: &'a [(u32, crate::ids::TransformVersion)],
}

impl<W: CollisionWorld + Sync> InteractionWorld for HostWorld<'_, W> {
    fn collision(&self) -> &dyn CollisionWorld {
        self.collision
    }
    fn object(&self, reference_object: u32) -> ObjectState {
        self.objects
            .iter()
            .find(|(object, _)| *object == reference_object)
            .map_or(ObjectState::Missing, |(_, state)| *state)
    }
    fn fixed_transform(&self, instance: u32) -> Option<crate::ids::TransformVersion> {
        self.fixed
            .iter()
            .find(|(known, _)| *known == instance)
            .map(|&(_, version)| version)
    }
}
