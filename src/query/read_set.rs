//! What a query read, so its result can be checked at adoption (spec 001).

use crate::ids::{CostVersion, FilterVersion, TargetVersion};
use crate::mesh::{LinkId, LinkVersion, NavMesh, SlotState, Snapshot, TileGeneration, TileSlot};

use super::QueryFilter;

/// One tile a query read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileRead {
    /// The slot.
    pub slot: TileSlot,
    /// Its generation when read.
    pub generation: TileGeneration,
    /// Whether the result's route crosses it.
    pub on_route: bool,
}

/// Everything a result depends on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadSet {
    /// Tiles read, each once, in the order first read.
    pub tiles: Vec<TileRead>,
    /// Off-mesh links considered, with their versions, each once.
    pub links: Vec<(LinkId, LinkVersion)>,
    /// Filter version the query ran under.
    pub filter: FilterVersion,
    /// Cost version the query ran under.
    pub cost: CostVersion,
    /// The interaction target the query served, with its version, if any.
    pub target: Option<(u64, TargetVersion)>,
}

/// Whether a result can be adopted, and if not, the first reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validity {
    /// Every entry still matches.
    Valid,
    /// A tile read was replaced or is pending.
    TileChanged(TileSlot),
    /// A link considered changed state.
    LinkChanged(LinkId),
    /// The filter's rules changed.
    FilterChanged,
    /// The filter's costs changed.
    CostChanged,
    /// The target moved or changed.
    TargetChanged(u64),
}

impl ReadSet {
    /// Empties the set for a new query under `filter`, keeping its buffers.
    pub(crate) fn reset(&mut self, filter: &QueryFilter) {
        self.tiles.clear();
        self.links.clear();
        self.filter = filter.version();
        self.cost = filter.cost_version();
        self.target = None;
    }

    /// An empty set for a query under `filter`.
    pub(crate) fn new(filter: &QueryFilter) -> Self {
        let mut set = ReadSet::default();
        set.reset(filter);
        set
    }

    pub(crate) fn read_tile(&mut self, slot: TileSlot, generation: TileGeneration) {
        if !self.tiles.iter().any(|read| read.slot == slot) {
            self.tiles.push(TileRead {
                slot,
                generation,
                on_route: false,
            });
        }
    }

    /// Records a tile the caller knows this set has not read yet (a search keeps its own
    /// marks, [`read_tile`](Self::read_tile) would scan every tile read so far).
    pub(crate) fn read_new_tile(&mut self, slot: TileSlot, generation: TileGeneration) {
        debug_assert!(self.tiles.iter().all(|read| read.slot != slot));
        self.tiles.push(TileRead {
            slot,
            generation,
            on_route: false,
        });
    }

    pub(crate) fn read_link(&mut self, id: LinkId, version: LinkVersion) {
        if !self.links.iter().any(|(read, _)| *read == id) {
            self.links.push((id, version));
        }
    }

    /// Records the target the query served.
    pub fn with_target(mut self, target: u64, version: TargetVersion) -> Self {
        self.target = Some((target, version));
        self
    }

    /// Checks every entry against the current mesh, filter and target versions.
    pub fn still_valid(
        &self,
        mesh: &NavMesh,
        filter: &QueryFilter,
        target_version: impl Fn(u64) -> Option<TargetVersion>,
    ) -> Validity {
        self.still_valid_in(&mesh.snapshot(), filter, target_version)
    }

    /// Like [`ReadSet::still_valid`], against a snapshot of the current mesh.
    pub fn still_valid_in(
        &self,
        snapshot: &Snapshot,
        filter: &QueryFilter,
        target_version: impl Fn(u64) -> Option<TargetVersion>,
    ) -> Validity {
        if filter.version() != self.filter {
            return Validity::FilterChanged;
        }
        if filter.cost_version() != self.cost {
            return Validity::CostChanged;
        }
        for read in &self.tiles {
            let current = snapshot.data().slots.get(usize::from(read.slot.0));
            let same = current.is_some_and(|view| {
                view.generation == read.generation && matches!(view.state, SlotState::Live(_))
            });
            if !same {
                return Validity::TileChanged(read.slot);
            }
        }
        for &(id, version) in &self.links {
            if snapshot.link(id).is_none_or(|link| link.version != version) {
                return Validity::LinkChanged(id);
            }
        }
        if let Some((target, version)) = self.target {
            if target_version(target) != Some(version) {
                return Validity::TargetChanged(target);
            }
        }
        Validity::Valid
    }
}
