//! Corridors: the polygons of a found path with their portals, immutable and shared, and
//! the cache that hands one corridor to every agent asking for the same start and goal
//! polygons under the same filter.

use std::collections::HashMap;
use std::sync::Arc;

use glam::Vec3;

use crate::ids::{CostVersion, FilterVersion};
use crate::mesh::{PolyRef, Snapshot};
use crate::query::{PathResult, QueryFilter, ReadSet, Validity, portal};

/// A path's polygons and the portals between them.
#[derive(Debug)]
pub struct Corridor {
    /// Polygons from start to end.
    pub polygons: Vec<PolyRef>,
    /// `portals[i]` is the (left, right) edge from `polygons[i]` into `polygons[i + 1]`.
    pub portals: Vec<(Vec3, Vec3)>,
    /// Whether the last polygon holds the goal (false: partial, the goal is unreachable).
    pub complete: bool,
    /// What the search read.
    pub read_set: ReadSet,
}

impl Corridor {
    /// Builds the corridor of a search result; `None` if a portal no longer exists (a tile
    /// changed between the search and now) or the path crosses an off-mesh link (the crowd
    /// walks polygons; link actions are for the host).
    pub fn from_path(snapshot: &Snapshot, result: &PathResult) -> Option<Corridor> {
        let polygons: Vec<PolyRef> = result.steps.iter().map(|step| step.polygon).collect();
        if result.steps.iter().any(|step| step.via_link.is_some()) {
            return None;
        }
        let portals = polygons
            .windows(2)
            .map(|pair| portal(snapshot, pair[0], pair[1]))
            .collect::<Option<Vec<_>>>()?;
        Some(Corridor {
            polygons,
            portals,
            complete: result.complete,
            read_set: result.read_set.clone(),
        })
    }

    /// Index of `polygon` in the corridor within `back` polygons behind and `ahead`
    /// polygons ahead of `cursor`, preferring the furthest ahead.
    pub fn find_near(
        &self,
        cursor: usize,
        polygon: PolyRef,
        back: usize,
        ahead: usize,
    ) -> Option<usize> {
        let last = (cursor + ahead).min(self.polygons.len().saturating_sub(1));
        (cursor..=last)
            .rev()
            .find(|&i| self.polygons[i] == polygon)
            .or_else(|| {
                (cursor.saturating_sub(back)..cursor)
                    .rev()
                    .find(|&i| self.polygons[i] == polygon)
            })
    }
}

/// Key of a shared corridor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CorridorKey {
    /// Start polygon.
    pub start: PolyRef,
    /// Goal polygon.
    pub goal: PolyRef,
    /// Filter rules version.
    pub filter: FilterVersion,
    /// Filter cost version.
    pub cost: CostVersion,
}

/// Shared corridors by (start, goal, filter, cost), evicted when a tile they read changes.
#[derive(Debug, Default)]
pub struct CorridorCache {
    entries: HashMap<CorridorKey, Arc<Corridor>>,
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that needed a search.
    pub misses: u64,
    /// Entries dropped because a tile they read changed.
    pub evictions: u64,
}

impl CorridorCache {
    /// The cached corridor for `key`, if it is still valid on `snapshot`.
    pub fn get(
        &mut self,
        key: &CorridorKey,
        snapshot: &Snapshot,
        filter: &QueryFilter,
    ) -> Option<Arc<Corridor>> {
        let Some(corridor) = self.entries.get(key) else {
            self.misses += 1;
            return None;
        };
        if corridor.read_set.still_valid_in(snapshot, filter, |_| None) != Validity::Valid {
            self.entries.remove(key);
            self.evictions += 1;
            self.misses += 1;
            return None;
        }
        self.hits += 1;
        Some(corridor.clone())
    }

    /// Stores a corridor.
    pub fn insert(&mut self, key: CorridorKey, corridor: Arc<Corridor>) {
        self.entries.insert(key, corridor);
    }

    /// Drops every entry that read a tile changed on `snapshot`.
    pub fn evict_stale(&mut self, snapshot: &Snapshot, filter: &QueryFilter) {
        let before = self.entries.len();
        self.entries.retain(|_, corridor| {
            corridor.read_set.still_valid_in(snapshot, filter, |_| None) == Validity::Valid
        });
        self.evictions += (before - self.entries.len()) as u64;
    }

    /// Number of cached corridors.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
