//! An agent's handle and its parameters: what a game holds and sets per agent.
//!
//! Stage: crowd runtime, the public edge. [`AgentId`] is the crowd-issued handle (a slot
//! index and a generation, so an id outlives neither its agent nor a reuse of its index);
//! [`AgentParams`] the body and motion limits a game sets per agent, validated in one place
//! ([`AgentParams::invalid_field`]) for `add_agent` and `set_params` alike; [`AgentView`]
//! what a renderer reads each frame.

use std::num::NonZeroU32;

use glam::Vec3;

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

/// The crowd's issue of agent ids: per index, the generation last issued and, while its
/// agent lives, the agent's identity record in the crowd's `hecs` world.
///
/// The crowd issues ids itself rather than passing on `hecs`'s entity handles, so a saved
/// crowd restores into the same ids, and so the ids issued after a restore (which index is
/// reused next, at which generation) are the ones the uninterrupted game would have issued.
/// Freed indices are reused last-freed first. An index whose generation is exhausted is
/// retired for good rather than wrapped, so an old id never names a new agent.
#[derive(Clone, Debug, Default)]
pub(crate) struct AgentIds {
    /// Per index: the generation of its live agent, or of the last one it had.
    generation: Vec<u32>,
    /// Per index: the live agent's identity record (`None`: the index is free or retired).
    entity: Vec<Option<hecs::Entity>>,
    /// Free indices, the last freed last.
    free: Vec<u32>,
}

impl AgentIds {
    /// Issues an id for a new agent whose identity record is `entity`: a freed index at its
    /// next generation, or a new index at generation 1.
    pub fn issue(&mut self, entity: hecs::Entity) -> AgentId {
        let index = match self.free.pop() {
            Some(index) => {
                self.generation[index as usize] += 1;
                index
            }
            None => {
                let index = u32::try_from(self.generation.len())
                    .expect("a crowd holds fewer agents than u32::MAX");
                self.generation.push(1);
                self.entity.push(None);
                index
            }
        };
        self.entity[index as usize] = Some(entity);
        AgentId {
            index,
            generation: NonZeroU32::new(self.generation[index as usize])
                .expect("generations start at 1"),
        }
    }

    /// The live agent's identity record; a dead or never-issued id gets one no world holds,
    /// so the world's lookups refuse it.
    pub fn entity(&self, agent: AgentId) -> hecs::Entity {
        let index = agent.index as usize;
        match self.entity.get(index) {
            Some(&Some(entity)) if self.generation[index] == agent.generation.get() => entity,
            _ => hecs::Entity::DANGLING,
        }
    }

    /// Frees a live agent's id (its index is reused at the next generation).
    pub fn retire(&mut self, agent: AgentId) {
        let index = agent.index as usize;
        debug_assert_eq!(self.generation[index], agent.generation.get());
        self.entity[index] = None;
        if self.generation[index] < u32::MAX {
            self.free.push(agent.index);
        }
    }

    /// Per index, the generation last issued; and the free indices in reuse order (the
    /// last is reused first). What a save writes (which indices live, the lanes say).
    pub fn parts(&self) -> (&[u32], &[u32]) {
        (&self.generation, &self.free)
    }

    /// The table of a save: generations per index and free indices, with no agent alive
    /// yet (the restore makes each live agent's record and calls [`AgentIds::revive`]).
    /// `None` if a generation is 0, a free index is out of range or free twice.
    pub fn from_parts(generation: Vec<u32>, free: Vec<u32>) -> Option<AgentIds> {
        if generation.contains(&0) {
            return None;
        }
        let mut seen = vec![false; generation.len()];
        for &index in &free {
            let seen = seen.get_mut(index as usize)?;
            if std::mem::replace(seen, true) {
                return None;
            }
        }
        Some(AgentIds {
            entity: vec![None; generation.len()],
            generation,
            free,
        })
    }

    /// Gives a saved live agent its new identity record; `false` if the id does not fit the
    /// table (unknown index, another generation, already live). After the last,
    /// [`AgentIds::free_are_dead`] checks that no free index was revived.
    pub fn revive(&mut self, agent: AgentId, entity: hecs::Entity) -> bool {
        let index = agent.index as usize;
        let fits = self.generation.get(index) == Some(&agent.generation.get())
            && self.entity[index].is_none();
        if fits {
            self.entity[index] = Some(entity);
        }
        fits
    }

    /// Whether every free index is without a live agent.
    pub fn free_are_dead(&self) -> bool {
        self.free
            .iter()
            .all(|&index| self.entity[index as usize].is_none())
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
    /// every field must be positive, finite and within its physical limit
    /// ([`crate::geom::limits`]), and the cruising speed at most the speed limit. (The crowd
    /// also checks radius and height against the mesh.)
    pub fn invalid_field(&self) -> Option<(&'static str, f32)> {
        use crate::geom::limits::{ACCELERATION_MAX_MPS2, BODY_SIZE_MAX_M, SPEED_MAX_MPS};
        for (field, value, limit) in [
            ("radius_m", self.radius_m, BODY_SIZE_MAX_M),
            ("height_m", self.height_m, BODY_SIZE_MAX_M),
            ("max_speed_mps", self.max_speed_mps, SPEED_MAX_MPS),
            (
                "preferred_speed_mps",
                self.preferred_speed_mps,
                SPEED_MAX_MPS,
            ),
            (
                "max_acceleration_mps2",
                self.max_acceleration_mps2,
                ACCELERATION_MAX_MPS2,
            ),
        ] {
            if !(value.is_finite() && value > 0.0 && value <= limit) {
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
pub(crate) const AGENTS_MAX: usize = u32::MAX as usize;

/// One agent as a renderer reads it ([`Crowd::agents`](super::runtime::Crowd::agents)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AgentView {
    /// The agent.
    pub id: AgentId,
    /// Foot position in the world (on a platform, where it has carried the agent), metres.
    pub position: Vec3,
    /// Horizontal velocity at the end of the last step (relative to the ground), m/s; `y`
    /// is 0.
    pub velocity: Vec3,
    /// What it is doing.
    pub status: AgentStatus,
}

/// The identity of a move order or of a query serving it (spec 001): the logical request,
/// its attempt and the crowd's epoch. A route computed again after a rejected result is a
/// new query with a new logical id; a query still waiting when the epoch changes (after a
/// restore) resumes with its logical id, the next attempt and the new epoch. A result is
/// adopted only if its identity is the agent's current query's, of the current epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId {
    /// The logical request.
    pub logical: u64,
    /// Attempt, from 0.
    pub attempt: u32,
    /// Crowd epoch.
    pub epoch: u32,
}

/// What an agent is doing, as the passes see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AgentStatus {
    /// No move request.
    Idle,
    /// A request waits for its path (queued or being searched).
    WaitingForPath,
    /// Following a corridor.
    Moving,
    /// Moving at a velocity the host asked for
    /// ([`Crowd::request_velocity`](crate::crowd::Crowd::request_velocity)), with avoidance,
    /// on no corridor. (Next to `Moving`: the avoid pass asks "walking?" of every neighbour,
    /// and two adjacent variants are one range compare.)
    VelocityControlled,
    /// Crossing an off-mesh link (carried by the crowd from its entry to its exit).
    CrossingLink,
    /// Reached the target (within the tolerance, stopped).
    Arrived,
    /// Reached the end of a partial corridor: the target is unreachable.
    PartialArrived,
    /// The request failed (no polygon at the target or the start).
    Failed,
    /// Braking to a stop after a cancel, until the receipt
    /// ([`CrowdEvent::Cancelled`](crate::crowd::CrowdEvent::Cancelled)).
    Cancelling,
    /// Keeping a stand pose ([`Crowd::request_hold`](crate::crowd::Crowd::request_hold)):
    /// corrected back to it after pushes, with avoidance, on no corridor.
    Holding,
    /// Frozen after the host's controller answered its step with a value no body can have
    /// ([`CrowdEvent::Quarantined`](crate::crowd::CrowdEvent::Quarantined)), until the game
    /// teleports it.
    Quarantined,
}

impl AgentStatus {
    /// Every status, in declaration order (`ALL[s as usize] == s`): a saved status byte is
    /// read back through it.
    pub(crate) const ALL: [AgentStatus; 11] = [
        AgentStatus::Idle,
        AgentStatus::WaitingForPath,
        AgentStatus::Moving,
        AgentStatus::VelocityControlled,
        AgentStatus::CrossingLink,
        AgentStatus::Arrived,
        AgentStatus::PartialArrived,
        AgentStatus::Failed,
        AgentStatus::Cancelling,
        AgentStatus::Holding,
        AgentStatus::Quarantined,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_survives_its_bits_and_its_index_reuse() {
        let mut world = hecs::World::new();
        let mut ids = AgentIds::default();
        let first = world.spawn(());
        let old = ids.issue(first);
        ids.retire(old);
        world.despawn(first).unwrap();
        let reused = world.spawn(());
        let new = ids.issue(reused); // same index, next generation
        assert_eq!(old.index(), new.index());
        assert_ne!(old, new);
        assert!(old < new);
        assert_eq!(AgentId::from_bits(new.to_bits()), Some(new));
        assert_eq!(ids.entity(new), reused);
        assert_eq!(ids.entity(old), hecs::Entity::DANGLING);
        assert_eq!(AgentId::from_bits(7), None);
        assert_eq!(
            format!("{new:?}"),
            format!("agent {}v{}", new.index(), new.generation())
        );
    }
}
