//! The search's memory: nodes, the index from polygon to node, and the open list, kept
//! between searches so a search allocates nothing once they have grown.
//!
//! Stage: query runtime, under [`PathSearch`](super::PathSearch). Invariants: index
//! entries carry the stamp of the search that wrote them (a new search takes a new stamp
//! instead of clearing); open-list entries order by total cost, then by node index, so
//! equal costs resolve the same way whatever the timing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::Vec3;

use crate::mesh::{PolyRef, Snapshot};

/// Node pool size used when none is given; matches the Detour reference runs.
pub const NODE_POOL_DEFAULT: usize = 2048;
pub(super) const NO_NODE: u32 = u32::MAX;
pub(super) const HEURISTIC_SCALE: f32 = 0.999;

#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    pub(super) polygon: PolyRef,
    pub(super) parent: u32,
    pub(super) position: Vec3,
    pub(super) cost: f32,
    pub(super) total: f32,
    pub(super) closed: bool,
    /// Area id of the node's polygon (what each metre through it costs): kept here so an
    /// expansion reads no polygon record.
    pub(super) area: u8,
    /// The link crossed to reach this node, or [`NO_LINK`] (a plain `u32` keeps the node
    /// at 40 bytes; `Option<LinkId>` would pad it to 48).
    pub(super) via_link: u32,
}

pub(super) const NO_LINK: u32 = u32::MAX;

/// Largest mesh (in polygons) for which a pool indexes nodes directly by polygon rather than
/// hashing: 2^18 polygons make an 2 MiB table per pool. Larger meshes hash.
pub const DENSE_POLYGONS_MAX: u32 = 1 << 18;

/// Search nodes, an index from polygon to node, and the open list; reused across searches
/// without reallocating or clearing (index entries carry the stamp of the search that wrote
/// them, so a new search just takes a new stamp). The index is a direct table over the
/// snapshot's dense polygon numbering when the mesh is small enough, else an
/// open-addressing hash table.
#[derive(Clone, Debug, Default)]
pub struct NodePool {
    pub(super) nodes: Vec<Node>,
    pub(super) table: Vec<(u32, u32)>,
    pub(super) dense: Vec<(u32, u32)>,
    pub(super) dense_active: bool,
    pub(super) always_hash: bool,
    pub(super) stamp: u32,
    /// Per tile slot, the stamp of the last search that recorded reading it: a search
    /// records each tile once without scanning what it has read (a long search across a
    /// tiled mesh crosses hundreds of borders and reads hundreds of tiles).
    pub(super) slot_reads: Vec<u32>,
    /// Per tile slot, the stamp of the last search whose route crosses it.
    pub(super) slot_routes: Vec<u32>,
    pub(super) capacity: usize,
    pub(super) open: OpenList,
}

/// Open entries before the open list moves from its sorted array to a binary heap.
pub(super) const OPEN_LINEAR_MAX: usize = 64;

/// The open list: while small (the common case on game levels), an array kept sorted from
/// the greatest entry to the least, so the least is popped off its end; a binary heap past
/// [`OPEN_LINEAR_MAX`] entries. Both order by (total, node index), so a search gives the same
/// result whichever it uses.
///
/// Why sorted: an A* search pushes entries whose totals are at least the total just popped
/// (the heuristic is consistent, up to portal midpoints moving), so a new entry sorts in a
/// step or two from the least end, and a pop is one read instead of a scan of every entry.
/// A weighted search (a crowd's) may push below the last total; its entries then sort in
/// further, at most the array's 64 places, and the order is the same either way.
#[derive(Clone, Debug, Default)]
pub(super) struct OpenList {
    pub(super) small: Vec<OpenEntry>,
    pub(super) heap: BinaryHeap<Reverse<OpenEntry>>,
    pub(super) use_heap: bool,
}

impl OpenList {
    pub(super) fn with_capacity(capacity: usize) -> OpenList {
        OpenList {
            small: Vec::with_capacity(OPEN_LINEAR_MAX + 1),
            heap: BinaryHeap::with_capacity(capacity),
            use_heap: false,
        }
    }

    pub(super) fn clear(&mut self) {
        self.small.clear();
        self.heap.clear();
        self.use_heap = false;
    }

    #[inline]
    pub(super) fn push(&mut self, entry: OpenEntry) {
        if self.use_heap {
            self.heap.push(Reverse(entry));
            return;
        }
        if self.small.len() == OPEN_LINEAR_MAX {
            self.use_heap = true;
            self.heap.extend(self.small.drain(..).map(Reverse));
            self.heap.push(Reverse(entry));
            return;
        }
        // One insertion step: entries less than the new one move up a place.
        let mut position = self.small.len();
        self.small.push(entry);
        while position > 0 && self.small[position - 1] < entry {
            self.small[position] = self.small[position - 1];
            position -= 1;
        }
        self.small[position] = entry;
    }

    #[inline]
    pub(super) fn pop(&mut self) -> Option<OpenEntry> {
        if self.use_heap {
            return self.heap.pop().map(|Reverse(entry)| entry);
        }
        self.small.pop()
    }
}

impl NodePool {
    /// A pool that holds at most `capacity` nodes per search.
    pub fn new(capacity: usize) -> NodePool {
        let capacity = capacity.max(1);
        NodePool {
            nodes: Vec::with_capacity(capacity),
            table: vec![(0, NO_NODE); (capacity * 2).next_power_of_two()],
            dense: Vec::new(),
            dense_active: false,
            always_hash: false,
            stamp: 0,
            slot_reads: Vec::new(),
            slot_routes: Vec::new(),
            capacity,
            open: OpenList::with_capacity(capacity),
        }
    }

    /// A pool ready for searches on `snapshot`'s mesh: its per-polygon table (on meshes of
    /// up to 2^18 polygons) is allocated and written now, so the first
    /// search does not pay for it. A crowd makes its pools this way when it is created: made
    /// on demand, sixteen fresh tables for the 10,000-agent city faulted their pages in
    /// during the first step and made it the slowest frame.
    pub fn for_snapshot(capacity: usize, snapshot: &Snapshot) -> NodePool {
        let mut pool = NodePool::new(capacity);
        pool.clear(snapshot.data().polygon_total);
        pool
    }

    /// A pool that always hashes, whatever the mesh size: the index large meshes use, for
    /// tests and for hosts that keep many pools alive and want no per-polygon table.
    pub fn hashed(capacity: usize) -> NodePool {
        NodePool {
            always_hash: true,
            ..NodePool::new(capacity)
        }
    }

    /// Most nodes one search may use.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub(super) fn clear(&mut self, polygon_total: u32) {
        self.nodes.clear();
        self.open.clear();
        self.dense_active = !self.always_hash && polygon_total <= DENSE_POLYGONS_MAX;
        if self.dense_active && self.dense.len() < polygon_total as usize {
            self.dense.resize(polygon_total as usize, (0, NO_NODE));
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // After 2^32 searches the stamps wrap: clear once so no old entry looks current.
            self.table.fill((0, NO_NODE));
            self.dense.fill((0, NO_NODE));
            self.slot_reads.fill(0);
            self.slot_routes.fill(0);
            self.stamp = 1;
        }
    }

    /// Marks tile slot `slot` read by this search; true if it was not yet.
    #[inline]
    pub(super) fn first_read(&mut self, slot: crate::mesh::TileSlot) -> bool {
        let index = usize::from(slot.0);
        if index >= self.slot_reads.len() {
            self.slot_reads.resize(index + 1, 0);
        }
        let first = self.slot_reads[index] != self.stamp;
        self.slot_reads[index] = self.stamp;
        first
    }

    /// Marks tile slot `slot` as crossed by this search's route.
    #[inline]
    pub(super) fn mark_on_route(&mut self, slot: crate::mesh::TileSlot) {
        let index = usize::from(slot.0);
        if index >= self.slot_routes.len() {
            self.slot_routes.resize(index + 1, 0);
        }
        self.slot_routes[index] = self.stamp;
    }

    /// Whether this search's route crosses tile slot `slot` (see [`Self::mark_on_route`]).
    #[inline]
    pub(super) fn is_on_route(&self, slot: crate::mesh::TileSlot) -> bool {
        self.slot_routes.get(usize::from(slot.0)) == Some(&self.stamp)
    }

    pub(super) fn slot_of(&self, polygon: PolyRef) -> usize {
        debug_assert!(!self.table.is_empty(), "a pool made by new()");
        // Fibonacci hashing of the reference bits.
        let hash = polygon.to_bits().wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (hash >> 32) as usize & (self.table.len() - 1)
    }

    /// The node of `polygon` (dense number `key`) in this search, if any.
    #[inline]
    pub(super) fn find(&self, polygon: PolyRef, key: u32) -> Option<u32> {
        if self.dense_active {
            let (stamp, index) = *self.dense.get(key as usize)?;
            return (stamp == self.stamp).then_some(index);
        }
        let mut slot = self.slot_of(polygon);
        loop {
            let (stamp, index) = self.table[slot];
            if stamp != self.stamp {
                return None;
            }
            if self.nodes[index as usize].polygon == polygon {
                return Some(index);
            }
            slot = (slot + 1) & (self.table.len() - 1);
        }
    }

    /// Adds a node for `node.polygon` (dense number `key`); `None` when the pool is full.
    #[inline(always)]
    pub(super) fn insert(&mut self, node: Node, key: u32) -> Option<u32> {
        if self.nodes.len() >= self.capacity {
            return None;
        }
        let index = self.nodes.len() as u32;
        if self.dense_active {
            *self.dense.get_mut(key as usize)? = (self.stamp, index);
        } else {
            let mut slot = self.slot_of(node.polygon);
            while self.table[slot].0 == self.stamp {
                slot = (slot + 1) & (self.table.len() - 1);
            }
            self.table[slot] = (self.stamp, index);
        }
        self.nodes.push(node);
        Some(index)
    }
}

/// An open-list entry: the node's total cost in the high 32 bits and its index in the low
/// 32, so that one integer comparison orders by total and breaks ties on the node index
/// (the order nodes were first reached: deterministic whatever the timing). Totals are
/// finite and never negative (area costs are at least 1, points are checked finite), and the
/// bits of such floats order as the floats do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct OpenEntry(pub(super) u64);

impl OpenEntry {
    #[inline]
    pub(super) fn new(total: f32, node: u32) -> OpenEntry {
        debug_assert!(total >= 0.0 && total.is_finite(), "total {total}");
        OpenEntry((u64::from(total.to_bits()) << 32) | u64::from(node))
    }

    #[inline]
    pub(super) fn total(self) -> f32 {
        f32::from_bits((self.0 >> 32) as u32)
    }

    #[inline]
    pub(super) fn node(self) -> u32 {
        self.0 as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The open list pops what a binary heap pops, pushes and pops interleaved, while the
    /// array is small and after it moves to the heap, with entries that sort anywhere in it
    /// (not only past the least, as a consistent A* pushes them).
    #[test]
    fn open_list_pops_in_key_order() {
        let mut open = OpenList::with_capacity(256);
        let mut reference = BinaryHeap::new();
        let mut state = 0x2545_f491_u32;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let mut popped = 0;
        for node in 0..400u32 {
            let total = (next() % 1000) as f32 * 0.25;
            open.push(OpenEntry::new(total, node));
            reference.push(Reverse(OpenEntry::new(total, node)));
            // Fewer pops than pushes, so the list grows past the array's room.
            if next() % 3 == 0 {
                let expected = reference.pop().map(|Reverse(entry)| entry);
                assert_eq!(open.pop(), expected, "pop {popped}");
                popped += 1;
            }
        }
        assert!(open.use_heap, "the list never outgrew the array");
        while let Some(Reverse(expected)) = reference.pop() {
            assert_eq!(open.pop(), Some(expected), "pop {popped}");
            popped += 1;
        }
        assert_eq!(open.pop(), None);

        // Below the array's room: the array alone, in key order, ties broken by node.
        open.clear();
        for (node, total) in [(0, 3.0), (1, 1.0), (2, 2.0), (3, 1.0), (4, 5.0)] {
            open.push(OpenEntry::new(total, node));
        }
        assert!(!open.use_heap);
        let order: Vec<u32> = std::iter::from_fn(|| open.pop().map(OpenEntry::node)).collect();
        assert_eq!(order, [1, 3, 2, 0, 4]);
    }
}
