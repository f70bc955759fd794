//! The corridor cache: corridors kept by (start, goal, filter, versions), so agents sent
//! the same way share one corridor and a repeated order needs no search, bounded in size
//! and swept of entries a mesh change made stale.
//!
//! Stage: crowd runtime, read by the scheduler before a search and written at the commit
//! point. Invariant: the cache never acts in its table's order (lookups by key, sweeps in
//! insertion order), so its hasher changes nothing observable.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use rayon::prelude::*;

use crate::crowd::codec::RestoreError;
use crate::crowd::codec::{Reader, Saved, Writer};
use crate::ids::{CostVersion, FilterVersion};
use crate::mesh::{PolyRef, Snapshot};
use crate::query::{QueryFilter, Validity};

use super::{Corridor, SlotBits};

/// Cached corridors per parallel task of [`CorridorCache::evict_stale`]'s checks.
const ENTRIES_PER_CHECK_TASK: usize = 256;

/// Hashes corridor keys for the cache: a multiply and a rotation a word (the keys are
/// polygon references and version counters the crowd makes, so nothing needs the
/// protection against crafted keys that the standard hasher pays for on every lookup and
/// every insert of a restore). Deterministic, which no behaviour relies on: the cache
/// never acts in its table's order (see [`CorridorCache`]).
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl KeyHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(23) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl std::hash::Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, value: u8) {
        self.add(u64::from(value));
    }

    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.add(value);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The table takes its bucket from the low bits, which a product mixes least.
        self.0 ^ (self.0 >> 32)
    }
}

/// Key of a shared corridor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CorridorKey {
    /// Start polygon.
    pub start: PolyRef,
    /// Goal polygon.
    pub goal: PolyRef,
    /// The filter searched under (its place in the crowd's table).
    pub filter_id: crate::crowd::agents::FilterId,
    /// Filter rules version.
    pub filter: FilterVersion,
    /// Filter cost version.
    pub cost: CostVersion,
}

/// Shared corridors by (start, goal, filter, cost), evicted when a tile they read changes.
///
/// The cache is bounded: once it holds more than its capacity, an insert drops every entry
/// that only the cache still holds (no agent follows it and no result waits to be adopted),
/// so a long game with agents cycling through targets does not keep every path it ever
/// found. Which entries go depends only on who holds them, never on the map's iteration
/// order, so a run stays deterministic. The next sweep waits until the cache has grown by
/// an eighth of what the last one kept (`SWEEP_GROWTH_DIVISOR`), so when agents hold most
/// entries a sweep costs about eight entry checks an insert, and corridors nobody follows
/// any more are let go soon (a cache that waited to double could keep an unheld corridor
/// for every agent, half a kilobyte each on the 100,000-agent city).
#[derive(Debug)]
pub struct CorridorCache {
    pub(crate) entries: HashMap<CorridorKey, Arc<Corridor>, BuildHasherDefault<KeyHasher>>,
    /// Entries beyond which an insert sweeps.
    pub(crate) capacity: usize,
    /// Size at which the next insert sweeps.
    pub(crate) sweep_at: usize,
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that needed a search.
    pub misses: u64,
    /// Entries dropped because a tile they read changed.
    pub evictions: u64,
    /// Entries dropped by sweeps because nobody held them.
    pub released: u64,
}

impl Default for CorridorCache {
    fn default() -> Self {
        CorridorCache::with_capacity(CorridorCache::DEFAULT_CAPACITY)
    }
}

/// Corridors a sweep may find held by finished searches waiting for adoption, beyond the
/// agents' own (a frame finishes a few dozen at most).
const ADOPTION_MARGIN: usize = 256;

/// After a sweep keeps `kept` entries, the next waits for `kept / SWEEP_GROWTH_DIVISOR`
/// more (and at least the capacity).
pub const SWEEP_GROWTH_DIVISOR: usize = 8;

/// The size at which the sweep after one that kept `kept` entries comes.
fn next_sweep(capacity: usize, kept: usize) -> usize {
    capacity.max(
        kept.saturating_add(kept / SWEEP_GROWTH_DIVISOR)
            .saturating_add(1),
    )
}

impl CorridorCache {
    /// Entries kept before the first sweep, by default.
    pub const DEFAULT_CAPACITY: usize = 4096;

    /// An empty cache that sweeps unheld entries once it holds more than `capacity`.
    pub fn with_capacity(capacity: usize) -> CorridorCache {
        CorridorCache {
            entries: HashMap::default(),
            capacity,
            sweep_at: capacity,
            hits: 0,
            misses: 0,
            evictions: 0,
            released: 0,
        }
    }

    /// Makes room, without a step doing it, for as many entries as a crowd of `agents` can
    /// make the cache hold: a sweep leaves at most the corridors that agents hold (one
    /// each) and lets the cache grow by an eighth of that before the next, so it never
    /// holds more than the larger of its capacity and nine eighths of the agents. Growing
    /// the table in a step would rehash every entry at once, a large share of a frame.
    pub fn try_reserve_for_agents(
        &mut self,
        agents: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        // (A few more for corridors found but not yet adopted, which are held too.)
        let most = next_sweep(self.capacity, agents.saturating_add(ADOPTION_MARGIN));
        self.entries
            .try_reserve(most.saturating_sub(self.entries.len()))
    }

    /// Keeps the entries `keep` accepts; returns how many went.
    fn keep_only(&mut self, mut keep: impl FnMut(&Arc<Corridor>) -> bool) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, corridor| keep(corridor));
        before - self.entries.len()
    }

    /// Rebuilds the table at its size if the entries allowed before the next sweep would
    /// not fit in it as it stands. Removal in place can leave tombstones, which the table's
    /// `capacity()` stops counting as room; were they to eat into the room the next sweep
    /// needs, some insert would rehash the whole table inside a step. At the load the cache
    /// keeps (at most half its reserved room) removals almost never leave one, so this is a
    /// guard that costs a comparison per sweep.
    fn make_room_until_sweep(&mut self) {
        if self.entries.capacity() >= self.sweep_at {
            return;
        }
        let room = self.entries.capacity().max(self.sweep_at);
        let old = std::mem::replace(
            &mut self.entries,
            HashMap::with_capacity_and_hasher(room, Default::default()),
        );
        self.entries.extend(old);
    }

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
        if corridor.reads.still_valid_in(snapshot, filter) != Validity::Valid {
            self.entries.remove(key);
            self.evictions += 1;
            self.misses += 1;
            return None;
        }
        self.hits += 1;
        Some(corridor.clone())
    }

    /// Stores a corridor; past the capacity, first drops the entries nobody else holds.
    pub fn insert(&mut self, key: CorridorKey, corridor: Arc<Corridor>) {
        if self.entries.len() >= self.sweep_at {
            let dropped = self.keep_only(|corridor| Arc::strong_count(corridor) > 1);
            self.released += dropped as u64;
            self.sweep_at = next_sweep(self.capacity, self.entries.len());
            self.make_room_until_sweep();
        }
        self.entries.insert(key, corridor);
    }

    /// Drops every entry that read a tile changed on `snapshot` (or whose filter, in the
    /// crowd's table `filters`, changed). With `changed`, the slots changed since the
    /// snapshot every entry last held on, entries that read none of them are kept
    /// unread.
    pub fn evict_stale(
        &mut self,
        snapshot: &Snapshot,
        filters: &[QueryFilter],
        changed: Option<&SlotBits>,
    ) {
        let before = self.entries.len();
        // The checks read only: they run in parallel, then the stale keys go (in any
        // order: removing one key does not depend on another).
        let entries: Vec<(&CorridorKey, &Arc<Corridor>)> = self.entries.iter().collect();
        let stale: Vec<CorridorKey> = entries
            .par_iter()
            .with_min_len(ENTRIES_PER_CHECK_TASK)
            .filter(|(key, corridor)| {
                filters.get(key.filter_id.index()).is_none_or(|filter| {
                    corridor.reads.still_valid_after(snapshot, filter, changed) != Validity::Valid
                })
            })
            .map(|(key, _)| **key)
            .collect();
        for key in &stale {
            self.entries.remove(key);
        }
        let dropped = before - self.entries.len();
        self.evictions += dropped as u64;
        self.make_room_until_sweep();
    }

    #[cfg(feature = "harness")]
    /// The cached corridors, in no particular order.
    pub fn corridors(&self) -> impl Iterator<Item = &Arc<Corridor>> {
        self.entries.values()
    }

    #[cfg(feature = "harness")]
    /// Number of cached corridors.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(feature = "harness")]
    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl CorridorCache {
    /// Writes the cache's entries (by key, so the same cache writes the same bytes; each
    /// corridor by its place in the save's corridor table), its next sweep and counters.
    /// `entries` are [`CorridorCache::sorted_entries`], `places` their corridors' places
    /// in the save's corridor table.
    pub(crate) fn write_state(
        &self,
        out: &mut Writer,
        entries: &[(CorridorKey, &Arc<Corridor>)],
        places: &[u32],
    ) {
        out.len(entries.len());
        for ((key, _), &place) in entries.iter().zip(places) {
            key.write(out);
            out.u32(place);
        }
        out.u64(self.sweep_at as u64);
        for counter in [self.hits, self.misses, self.evictions, self.released] {
            out.u64(counter);
        }
    }

    /// The entries in key order.
    pub(crate) fn sorted_entries(&self) -> Vec<(CorridorKey, &Arc<Corridor>)> {
        // Keys copied out in the table's order (one stream of memory); then their
        // places, small to move, sorted by start and goal as one number (the whole key
        // breaks the rare ties).
        let entries: Vec<(CorridorKey, &Arc<Corridor>)> = self
            .entries
            .iter()
            .map(|(key, corridor)| (*key, corridor))
            .collect();
        let mut order: Vec<(u128, u32)> = entries
            .iter()
            .enumerate()
            .map(|(index, (key, _))| {
                let ends = u128::from(key.start.to_bits()) << 64 | u128::from(key.goal.to_bits());
                (ends, index as u32)
            })
            .collect();
        order.sort_unstable_by(|&(ends_a, index_a), &(ends_b, index_b)| {
            ends_a.cmp(&ends_b).then_with(|| {
                let order_of = |index: u32| entries[index as usize].0.order();
                order_of(index_a).cmp(&order_of(index_b))
            })
        });
        order
            .into_iter()
            .map(|(_, index)| entries[index as usize])
            .collect()
    }

    /// Reads what [`CorridorCache::write_state`] wrote into this (empty) cache.
    pub(crate) fn read_state(&mut self, input: &mut Reader) -> Result<(), RestoreError> {
        let entries: Vec<(CorridorKey, Arc<Corridor>)> = Saved::read(input)?;
        self.entries.extend(entries);
        self.sweep_at = usize::try_from(input.u64()?)
            .map_err(|_| input.malformed("a sweep size beyond memory"))?;
        self.hits = input.u64()?;
        self.misses = input.u64()?;
        self.evictions = input.u64()?;
        self.released = input.u64()?;
        Ok(())
    }
}

impl CorridorKey {
    /// A total order over keys, for writing a cache in the same order every time.
    fn order(&self) -> (u64, u64, u8, u64, u64) {
        (
            self.start.to_bits(),
            self.goal.to_bits(),
            self.filter_id.0,
            self.filter.0,
            self.cost.0,
        )
    }
}
