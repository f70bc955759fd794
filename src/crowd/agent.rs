//! An agent's handle and its parameters: what a game holds and sets per agent.
//!
//! Stage: crowd runtime, the public edge. [`AgentId`] is the crowd-issued handle (a slot
//! index and a generation, so an id outlives neither its agent nor a reuse of its index);
//! [`AgentParams`] the body and motion limits a game sets per agent, validated in one place
//! ([`AgentParams::invalid_field`]) for `add_agent` and `set_params` alike; [`AgentView`]
//! what a renderer reads each frame.

use std::num::NonZeroU32;

use glam::Vec3;

use super::lanes::AgentStatus;

/// A crowd-issued agent handle: an index and a generation. `Copy`, ordered and hashable,
/// so a game can key its own maps by it; [`AgentId::to_bits`] and [`AgentId::from_bits`]
/// turn it into a `u64` and back for saving. An id whose agent was removed is refused by
/// every crowd call with [`CrowdError::UnknownAgent`](super::events::CrowdError::UnknownAgent),
/// even after its index is reused by a new agent (the generation differs).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId {
    index: u32,
    generation: NonZeroU32,
}

impl AgentId {
    /// The index part (reused after the agent is removed, with a new generation).
    pub fn index(self) -> u32 {
        self.index
    }

    /// The generation part.
    pub fn generation(self) -> u32 {
        self.generation.get()
    }

    /// The id as one number (generation in the high half, index in the low half).
    pub fn to_bits(self) -> u64 {
        (u64::from(self.generation.get()) << 32) | u64::from(self.index)
    }

    /// The id [`AgentId::to_bits`] gave, or `None` for a number no id has (generation 0).
    pub fn from_bits(bits: u64) -> Option<AgentId> {
        Some(AgentId {
            index: bits as u32,
            generation: NonZeroU32::new((bits >> 32) as u32)?,
        })
    }

    /// The id of the crowd's identity record (its `hecs` entity has the same bits).
    pub(crate) fn of(entity: hecs::Entity) -> AgentId {
        AgentId::from_bits(entity.to_bits().get()).expect("an entity's generation is non-zero")
    }

    /// The crowd's identity record for this id (which may be dead or never issued: the
    /// world's lookups refuse those).
    pub(crate) fn entity(self) -> hecs::Entity {
        hecs::Entity::from_bits(self.to_bits()).expect("an id's generation is non-zero")
    }
}

impl std::fmt::Debug for AgentId {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "agent {}v{}", self.index, self.generation)
    }
}

impl std::fmt::Display for AgentId {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, formatter)
    }
}

/// Per-agent parameters, set at `add_agent` and changed at run time with `set_params`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AgentParams {
    /// Body radius, metres: at most the radius the mesh was baked for (walls keep the
    /// mesh's clearance, so a wider body would scrape them).
    pub radius_m: f32,
    /// Body height, metres: at most the clear height the mesh was baked for (a taller body
    /// would not fit under the ceilings the bake let through).
    pub height_m: f32,
    /// Surface speed limit, m/s: the most avoidance may ask for.
    pub max_speed_mps: f32,
    /// Cruising speed on the surface, m/s (at most `max_speed_mps`): what path following
    /// asks for; avoidance may go faster, up to the limit, to get out of the way.
    pub preferred_speed_mps: f32,
    /// Surface acceleration budget, m/s².
    pub max_acceleration_mps2: f32,
}

impl AgentParams {
    /// DetourCrowd's reference parameters (levels README): radius 0.6, height 2, speed 3.5,
    /// acceleration 8.
    pub const DETOUR_REFERENCE: AgentParams = AgentParams {
        radius_m: 0.6,
        height_m: 2.0,
        max_speed_mps: 3.5,
        preferred_speed_mps: 3.5,
        max_acceleration_mps2: 8.0,
    };

    /// The first field that makes these parameters unusable on their own, with its value:
    /// every field must be positive and finite, and the cruising speed at most the limit.
    /// (The crowd also checks radius and height against the mesh.)
    pub fn invalid_field(&self) -> Option<(&'static str, f32)> {
        for (field, value) in [
            ("radius_m", self.radius_m),
            ("height_m", self.height_m),
            ("max_speed_mps", self.max_speed_mps),
            ("preferred_speed_mps", self.preferred_speed_mps),
            ("max_acceleration_mps2", self.max_acceleration_mps2),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Some((field, value));
            }
        }
        if self.preferred_speed_mps > self.max_speed_mps {
            return Some((
                "preferred_speed_mps (above max_speed_mps)",
                self.preferred_speed_mps,
            ));
        }
        None
    }
}

/// A query filter registered with the crowd ([`Crowd::add_filter`](super::runtime::Crowd::add_filter)):
/// which areas an agent may walk and at what cost. [`FilterId::DEFAULT`] is the crowd's own
/// (every walkable area at cost 1, links as [`CrowdConfig::use_links`](super::config::CrowdConfig::use_links) says).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FilterId(pub(crate) u8);

impl FilterId {
    /// The filter every agent starts with.
    pub const DEFAULT: FilterId = FilterId(0);

    /// Its place in the crowd's table.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// An avoidance profile registered with the crowd
/// ([`Crowd::add_avoidance_profile`](super::runtime::Crowd::add_avoidance_profile)).
/// [`ProfileId::DEFAULT`] is the one the crowd's configuration describes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProfileId(pub(crate) u8);

impl ProfileId {
    /// The profile every agent starts with.
    pub const DEFAULT: ProfileId = ProfileId(0);

    /// Its place in the crowd's table.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// Most query filters, and most avoidance profiles, a crowd holds: each agent names its own
/// by one byte, and a table this small stays in the first level of cache.
pub const TABLE_ENTRIES_MAX: usize = 16;

/// Most agents one crowd holds: the neighbour grid names agents by 32-bit indices.
pub const AGENTS_MAX: usize = u32::MAX as usize;

/// One agent as a renderer reads it ([`Crowd::agents`](super::runtime::Crowd::agents)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AgentView {
    /// The agent.
    pub id: AgentId,
    /// Foot position, metres.
    pub position: Vec3,
    /// Horizontal velocity at the end of the last step (relative to the ground), m/s; `y`
    /// is 0.
    pub velocity: Vec3,
    /// What it is doing.
    pub status: AgentStatus,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_survives_its_bits_and_matches_its_entity() {
        let mut world = hecs::World::new();
        let first = world.spawn(());
        world.despawn(first).unwrap();
        let reused = world.spawn(()); // same index, next generation
        let (old, new) = (AgentId::of(first), AgentId::of(reused));
        assert_eq!(old.index(), new.index());
        assert_ne!(old, new);
        assert!(old < new);
        assert_eq!(AgentId::from_bits(new.to_bits()), Some(new));
        assert_eq!(new.entity(), reused);
        assert_eq!(AgentId::from_bits(7), None);
        assert_eq!(
            format!("{new:?}"),
            format!("agent {}v{}", new.index(), new.generation())
        );
    }
}
