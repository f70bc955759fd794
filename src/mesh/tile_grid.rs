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
    pub(super) fn candidates(&self, bounds: &Aabb) -> Option<Vec<u16>> {
        if self.cells.is_empty() {
            return None;
        }
        let (x0, z0, x1, z1) = self.range(bounds);
        let mut slots = Vec::new();
        for z in z0..=z1 {
            for x in x0..=x1 {
                slots.extend_from_slice(&self.cells[x + z * self.width]);
            }
        }
        slots.sort_unstable();
        slots.dedup();
        Some(slots)
    }
}
