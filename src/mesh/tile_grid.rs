//! A uniform grid of tile slots over the live tiles' bounds seen from above, so finding the
//! tiles a box touches costs a few cells, not a pass over every slot.
//!
//! Stage: runtime, part of a mesh snapshot. Input: each slot's bounds (empty for a slot
//! with no live tile). Output: the slots whose tiles may overlap a box. Invariant: every
//! live slot is listed in every cell its bounds reach; a slot listed is not necessarily
//! live (callers check), so a grid stays usable while tiles go pending and come back with
//! the same bounds.

use crate::geom::Aabb;

/// Slots by horizontal cell, over the bounds of the live tiles.
#[derive(Clone, Debug, Default)]
pub struct TileGrid {
    /// The slot bounds it was built from.
    built_from: Vec<Aabb>,
    origin: glam::Vec2,
    cell_m: f32,
    width: usize,
    depth: usize,
    cells: Vec<Vec<u16>>,
}

impl TileGrid {
    /// A grid whose cells are about one tile wide.
    pub(super) fn new(bounds: &[Aabb]) -> TileGrid {
        let live: Vec<(usize, &Aabb)> = bounds
            .iter()
            .enumerate()
            .filter(|(_, b)| b.min.x <= b.max.x)
            .collect();
        if live.len() < 8 {
            // A scan is as fast.
            return TileGrid {
                built_from: bounds.to_vec(),
                ..TileGrid::default()
            };
        }
        let mut all = Aabb::EMPTY;
        let mut widths: Vec<f32> = Vec::with_capacity(live.len());
        for (_, b) in &live {
            all.add_box(b);
            widths.push((b.max.x - b.min.x).max(b.max.z - b.min.z));
        }
        widths.sort_by(f32::total_cmp);
        let cell_m = widths[widths.len() / 2].max(1.0);
        let width = (((all.max.x - all.min.x) / cell_m).ceil() as usize).clamp(1, 4096);
        let depth = (((all.max.z - all.min.z) / cell_m).ceil() as usize).clamp(1, 4096);
        let mut grid = TileGrid {
            built_from: bounds.to_vec(),
            origin: glam::Vec2::new(all.min.x, all.min.z),
            cell_m,
            width,
            depth,
            cells: vec![Vec::new(); width * depth],
        };
        for (slot, b) in live {
            let (x0, z0, x1, z1) = grid.range(b);
            for z in z0..=z1 {
                for x in x0..=x1 {
                    grid.cells[x + z * width].push(slot as u16);
                }
            }
        }
        grid
    }

    /// Whether the grid still lists every live slot of `bounds` where it lies: each slot
    /// has the bounds the grid was built from, or none (not live; queries skip such slots).
    pub(super) fn still_fits(&self, bounds: &[Aabb]) -> bool {
        self.built_from.len() == bounds.len()
            && self
                .built_from
                .iter()
                .zip(bounds)
                .all(|(built, now)| built == now || now.min.x > now.max.x)
    }

    fn range(&self, bounds: &Aabb) -> (usize, usize, usize, usize) {
        let cell = |value: f32, origin: f32, count: usize| {
            (((value - origin) / self.cell_m).floor().max(0.0) as usize).min(count - 1)
        };
        (
            cell(bounds.min.x, self.origin.x, self.width),
            cell(bounds.min.z, self.origin.y, self.depth),
            cell(bounds.max.x, self.origin.x, self.width),
            cell(bounds.max.z, self.origin.y, self.depth),
        )
    }

    /// Slots whose tiles may overlap `bounds` horizontally, in increasing order, or `None`
    /// when the grid is not built (few tiles).
    pub(super) fn candidates(&self, bounds: &Aabb) -> Option<Candidates> {
        if self.cells.is_empty() {
            return None;
        }
        let (x0, z0, x1, z1) = self.range(bounds);
        let mut candidates = Candidates::Held {
            slots: [0; HELD_SLOTS],
            count: 0,
        };
        for z in z0..=z1 {
            for x in x0..=x1 {
                for &slot in &self.cells[x + z * self.width] {
                    candidates.push(slot);
                }
            }
        }
        candidates.sort_and_dedup();
        Some(candidates)
    }
}

/// Slots [`TileGrid::candidates`] holds in place before it needs a vector: a query box of a
/// few metres touches one to four cells of about a tile each, and each lists a tile or
/// few, so a snap or a search asks the allocator for nothing.
const HELD_SLOTS: usize = 16;

/// The slots a box may touch, ascending, each once.
#[derive(Clone, Debug)]
pub(super) enum Candidates {
    /// Up to [`HELD_SLOTS`], in place: the first `count` of `slots`.
    Held {
        slots: [u16; HELD_SLOTS],
        count: usize,
    },
    /// More, in a vector.
    Spilled(Vec<u16>),
}

impl Candidates {
    fn push(&mut self, slot: u16) {
        match self {
            Candidates::Held { slots, count } if *count < HELD_SLOTS => {
                slots[*count] = slot;
                *count += 1;
            }
            Candidates::Held { slots, .. } => {
                let mut spilled = slots.to_vec();
                spilled.push(slot);
                *self = Candidates::Spilled(spilled);
            }
            Candidates::Spilled(slots) => slots.push(slot),
        }
    }

    fn sort_and_dedup(&mut self) {
        match self {
            Candidates::Held { slots, count } => {
                let held = &mut slots[..*count];
                held.sort_unstable();
                let mut kept = 0;
                for index in 0..held.len() {
                    if index == 0 || held[index] != held[kept - 1] {
                        held[kept] = held[index];
                        kept += 1;
                    }
                }
                *count = kept;
            }
            Candidates::Spilled(slots) => {
                slots.sort_unstable();
                slots.dedup();
            }
        }
    }

    /// The slots, ascending.
    pub(super) fn as_slice(&self) -> &[u16] {
        match self {
            Candidates::Held { slots, count } => &slots[..*count],
            Candidates::Spilled(slots) => slots,
        }
    }
}

/// [`Candidates`] taken one by one.
#[derive(Clone, Debug)]
pub(super) struct CandidateSlots {
    candidates: Candidates,
    next: usize,
}

impl Iterator for CandidateSlots {
    type Item = u16;

    #[inline]
    fn next(&mut self) -> Option<u16> {
        let slot = self.candidates.as_slice().get(self.next).copied();
        self.next += 1;
        slot
    }
}

impl IntoIterator for Candidates {
    type Item = u16;
    type IntoIter = CandidateSlots;

    fn into_iter(self) -> CandidateSlots {
        CandidateSlots {
            candidates: self,
            next: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held and spilled candidates come out the same: ascending, each once.
    #[test]
    fn candidates_sort_and_drop_repeats_held_or_spilled() {
        for total in [0usize, 1, 5, 16, 17, 40] {
            let mut candidates = Candidates::Held {
                slots: [0; HELD_SLOTS],
                count: 0,
            };
            let mut expected = Vec::new();
            for index in 0..total {
                let slot = ((index * 7) % 11) as u16;
                candidates.push(slot);
                expected.push(slot);
            }
            candidates.sort_and_dedup();
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(candidates.as_slice(), expected.as_slice(), "{total} pushed");
            assert_eq!(
                matches!(candidates, Candidates::Spilled(_)),
                total > HELD_SLOTS,
                "{total} pushed"
            );
            let taken: Vec<u16> = candidates.into_iter().collect();
            assert_eq!(taken, expected);
        }
    }
}
