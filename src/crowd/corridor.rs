//! Corridors: the polygons of a found path with their portals and off-mesh link crossings,
//! immutable and shared, and the cache that hands one corridor to every agent asking for
//! the same start and goal polygons under the same filter.
//!
//! A corridor that crosses a link is walked in pieces: the follow pass treats the link's
//! entry as a stop point, the crowd carries the agent over the link, and walking resumes in
//! the polygon after it. No cursor search looks across a link: the polygons beyond it are
//! reachable only by crossing.

use std::collections::HashMap;
use std::sync::Arc;

use glam::Vec3;

use crate::ids::{CostVersion, FilterVersion};
use crate::mesh::{LinkId, PolyRef, Snapshot};
use crate::query::{PathResult, QueryFilter, ReadSet, Validity, portal};

/// A path's polygons and the portals between them.
#[derive(Debug)]
pub struct Corridor {
    /// Polygons from start to end.
    pub polygons: Vec<PolyRef>,
    /// `portals[i]` is the (left, right) edge from `polygons[i]` into `polygons[i + 1]`; where
    /// a link joins them it is the link's entry point twice (a portal of zero width).
    pub portals: Vec<(Vec3, Vec3)>,
    /// The off-mesh links the path crosses, in path order.
    pub links: Vec<CorridorLink>,
    /// Whether the last polygon holds the goal (false: partial, the goal is unreachable).
    pub complete: bool,
    /// What the search read.
    pub read_set: ReadSet,
}

impl Corridor {
    /// Builds the corridor of a search result; `None` if a portal or a link the path
    /// crosses no longer exists (the mesh changed between the search and now).
    pub fn from_path(snapshot: &Snapshot, result: &PathResult) -> Option<Corridor> {
        let polygons: Vec<PolyRef> = result.steps.iter().map(|step| step.polygon).collect();
        let mut portals = Vec::with_capacity(polygons.len().saturating_sub(1));
        let mut links = Vec::new();
        for (index, pair) in result.steps.windows(2).enumerate() {
            let (from, to) = (pair[0].polygon, pair[1].polygon);
            match pair[1].via_link {
                None => portals.push(portal(snapshot, from, to)?),
                Some(id) => {
                    let link = snapshot.link(id)?;
                    let (entry, exit) = if link.start_polygon == Some(from) {
                        (link.desc.start, link.desc.end)
                    } else if link.desc.bidirectional && link.end_polygon == Some(from) {
                        (link.desc.end, link.desc.start)
                    } else {
                        return None;
                    };
                    portals.push((entry, entry));
                    links.push(CorridorLink {
                        index: index as u32 + 1,
                        link: id,
                        entry,
                        exit,
                    });
                }
            }
        }
        Some(Corridor {
            polygons,
            portals,
            links,
            complete: result.complete,
            read_set: result.read_set.clone(),
        })
    }

    /// The first link crossed after corridor polygon `cursor` (the agent reaches its entry
    /// in polygon `link.index - 1`).
    pub fn next_link(&self, cursor: usize) -> Option<&CorridorLink> {
        self.links.iter().find(|link| link.index as usize > cursor)
    }

    /// The stretch of the corridor walkable from polygon `cursor` without crossing a link:
    /// (first, last) polygon indices.
    pub fn walkable_piece(&self, cursor: usize) -> (usize, usize) {
        let first = self
            .links
            .iter()
            .rev()
            .find(|link| link.index as usize <= cursor)
            .map_or(0, |link| link.index as usize);
        let last = self
            .next_link(cursor)
            .map_or(self.polygons.len().saturating_sub(1), |link| {
                link.index as usize - 1
            });
        (first, last)
    }

    /// Index of `polygon` in the corridor within `back` polygons behind and `ahead`
    /// polygons ahead of `cursor`, preferring the furthest ahead; never across a link.
    pub fn find_near(
        &self,
        cursor: usize,
        polygon: PolyRef,
        back: usize,
        ahead: usize,
    ) -> Option<usize> {
        let (first, last) = self.walkable_piece(cursor);
        let last = (cursor + ahead).min(last);
        (cursor..=last)
            .rev()
            .find(|&i| self.polygons[i] == polygon)
            .or_else(|| {
                (cursor.saturating_sub(back).max(first)..cursor)
                    .rev()
                    .find(|&i| self.polygons[i] == polygon)
            })
    }
}

/// An off-mesh link on a corridor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CorridorLink {
    /// Index of the corridor polygon the link lands in (it starts in the one before).
    pub index: u32,
    /// The link.
    pub link: LinkId,
    /// Where the crossing starts (the link's start, or its end when crossed backwards).
    pub entry: Vec3,
    /// Where it lands.
    pub exit: Vec3,
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
