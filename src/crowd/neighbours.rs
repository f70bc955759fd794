//! The neighbour grid of the avoid pass: every agent's K nearest agents, rebuilt each frame.
//!
//! Stage: crowd, first half of the avoid pass. Input: the agents' foot positions (lanes), a
//! horizontal query range, a vertical range and K. Output: per agent up to K neighbour
//! slots within both ranges (agents on another floor are not neighbours however close they
//! look from above), nearest first, in a flat array of `K` entries per agent plus a count.
//!
//! The grid is a spatial hash rebuilt by counting sort: each agent's cell (a third of the
//! query range wide) is hashed into a table about twice the agent count, agents are
//! bucketed by one prefix sum, and their cells and positions copied into bucket order so a
//! query reads contiguous memory. A query scans rings of cells outwards and stops as soon as
//! its K nearest are closer than the next ring can be: in a dense crowd it reads the 3 x 3
//! cells around the agent, not the whole range. Hashing keeps the table small however far
//! apart the agents are (a bounding-box grid over two distant groups would be mostly empty
//! cells); a bucket shared by two cells is filtered by the stored cell.
//!
//! Invariants: the result depends only on the positions, the range and K, never on thread
//! count or on the order candidates are met: candidates are ranked by (squared distance,
//! slot), a total order.

use rayon::prelude::*;

/// Agents per parallel work item of the query.
const QUERY_CHUNK_AGENTS: usize = 256;

/// Cells per query range: a query scans rings of cells outwards and stops once the K found
/// are closer than anything in the next ring, so in a dense crowd it reads a few cells
/// around the agent instead of all of its range.
const CELLS_PER_RANGE: f32 = 3.0;

/// The per-frame grid and its query results.
#[derive(Clone, Debug, Default)]
pub struct NeighbourGrid {
    range_m: f32,
    vertical_range_m: f32,
    cell_size_m: f32,
    bucket_mask: usize,
    /// Start of each bucket in the sorted arrays, plus the end.
    bucket_start: Vec<u32>,
    /// Bucket of each agent (scratch of the counting sort).
    agent_bucket: Vec<u32>,
    /// Per sorted agent: slot, cell and foot position.
    sorted_slot: Vec<u32>,
    sorted_cell: Vec<(i32, i32)>,
    sorted_x: Vec<f32>,
    sorted_y: Vec<f32>,
    sorted_z: Vec<f32>,
    /// `neighbours_max` entries per agent; the first `neighbour_count[slot]` are used.
    neighbours: Vec<u32>,
    neighbour_count: Vec<u8>,
    neighbours_max: usize,
}

fn cell_of(coordinate: f32, cell_size_m: f32) -> i32 {
    // Positions are finite (the crowd refuses others); saturating casts keep absurd ones
    // in some cell instead of wrapping.
    (coordinate / cell_size_m).floor() as i32
}

fn bucket_of((cell_x, cell_z): (i32, i32), mask: usize) -> usize {
    // Two large odd multipliers mix the cell coordinates; the high bits are the best mixed.
    let hash = (cell_x as u32 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (cell_z as u32 as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    ((hash >> 32) as usize) & mask
}

impl NeighbourGrid {
    /// Rebuilds the grid over the agents with feet at (`position[0][i]`, `position[1][i]`,
    /// `position[2][i]`) and finds each agent's `neighbours_max` nearest others closer than
    /// `range_m` horizontally and `vertical_range_m` in height.
    ///
    /// # Panics
    /// If the position slices differ in length, a range is not positive and finite, or
    /// `neighbours_max` exceeds 255 (the crowd validates its configuration first).
    pub fn rebuild(
        &mut self,
        [position_x, position_y, position_z]: [&[f32]; 3],
        range_m: f32,
        vertical_range_m: f32,
        neighbours_max: usize,
    ) {
        assert_eq!(position_x.len(), position_z.len());
        assert_eq!(position_x.len(), position_y.len());
        assert!(range_m.is_finite() && range_m > 0.0);
        assert!(vertical_range_m.is_finite() && vertical_range_m > 0.0);
        assert!(neighbours_max <= usize::from(u8::MAX));
        let agents = position_x.len();
        self.range_m = range_m;
        self.vertical_range_m = vertical_range_m;
        self.cell_size_m = range_m / CELLS_PER_RANGE;
        let buckets = (agents * 2).next_power_of_two().max(64);
        self.bucket_mask = buckets - 1;
        self.neighbours_max = neighbours_max;

        // Counting sort by bucket.
        self.bucket_start.clear();
        self.bucket_start.resize(buckets + 1, 0);
        self.agent_bucket.clear();
        for (&x, &z) in position_x.iter().zip(position_z) {
            let cell = (cell_of(x, self.cell_size_m), cell_of(z, self.cell_size_m));
            let bucket = bucket_of(cell, self.bucket_mask);
            self.agent_bucket.push(bucket as u32);
            self.bucket_start[bucket + 1] += 1;
        }
        for bucket in 0..buckets {
            self.bucket_start[bucket + 1] += self.bucket_start[bucket];
        }
        self.sorted_slot.resize(agents, 0);
        self.sorted_cell.resize(agents, (0, 0));
        self.sorted_x.resize(agents, 0.0);
        self.sorted_y.resize(agents, 0.0);
        self.sorted_z.resize(agents, 0.0);
        // Filling each bucket from its end walking slots backwards keeps slots ascending
        // within a bucket.
        let mut fill = self.bucket_start[1..].to_vec();
        for slot in (0..agents).rev() {
            let bucket = self.agent_bucket[slot] as usize;
            fill[bucket] -= 1;
            let at = fill[bucket] as usize;
            let (x, z) = (position_x[slot], position_z[slot]);
            self.sorted_slot[at] = slot as u32;
            self.sorted_cell[at] = (cell_of(x, self.cell_size_m), cell_of(z, self.cell_size_m));
            self.sorted_x[at] = x;
            self.sorted_y[at] = position_y[slot];
            self.sorted_z[at] = z;
        }

        self.neighbours.clear();
        self.neighbours.resize(agents * neighbours_max, 0);
        self.neighbour_count.clear();
        self.neighbour_count.resize(agents, 0);
        if neighbours_max == 0 {
            return;
        }
        let mut neighbours = std::mem::take(&mut self.neighbours);
        let mut counts = std::mem::take(&mut self.neighbour_count);
        let grid = &*self;
        neighbours
            .par_chunks_mut(QUERY_CHUNK_AGENTS * neighbours_max)
            .zip(counts.par_chunks_mut(QUERY_CHUNK_AGENTS))
            .enumerate()
            .for_each(|(chunk, (neighbours, counts))| {
                let first = chunk * QUERY_CHUNK_AGENTS;
                for (offset, count) in counts.iter_mut().enumerate() {
                    let slot = first + offset;
                    let out =
                        &mut neighbours[offset * neighbours_max..(offset + 1) * neighbours_max];
                    let position = [position_x[slot], position_y[slot], position_z[slot]];
                    *count = grid.nearest(slot, position, out);
                }
            });
        self.neighbours = neighbours;
        self.neighbour_count = counts;
    }

    /// The neighbours of `slot` found by the last rebuild, nearest first (none for a slot
    /// the rebuild did not cover).
    pub fn neighbours_of(&self, slot: usize) -> &[u32] {
        let Some(&count) = self.neighbour_count.get(slot) else {
            return &[];
        };
        let first = slot * self.neighbours_max;
        &self.neighbours[first..first + usize::from(count)]
    }

    /// Every agent pair closer than `range_m` horizontally (at most the rebuild's range) and
    /// within the vertical range, each once as (lower slot, higher slot, horizontal
    /// distance), in no particular order; for quality measures.
    pub fn for_each_pair_within(&self, range_m: f32, mut visit: impl FnMut(u32, u32, f32)) {
        let range_m = range_m.min(self.range_m);
        let range_squared = range_m * range_m;
        let rings = (range_m / self.cell_size_m).ceil() as i32;
        for index in 0..self.sorted_slot.len() {
            let (slot, x, y, z) = (
                self.sorted_slot[index],
                self.sorted_x[index],
                self.sorted_y[index],
                self.sorted_z[index],
            );
            let centre = self.sorted_cell[index];
            for ring in 0..=rings {
                self.for_each_in_ring(centre, ring, |other, other_x, other_y, other_z| {
                    if other > slot && (other_y - y).abs() < self.vertical_range_m {
                        let distance_squared = (other_x - x).powi(2) + (other_z - z).powi(2);
                        if distance_squared < range_squared {
                            visit(slot, other, distance_squared.sqrt());
                        }
                    }
                });
            }
        }
    }

    /// Calls `visit(slot, x, y, z)` for every agent in the cells at Chebyshev distance
    /// exactly `ring` from `centre`.
    #[inline]
    fn for_each_in_ring(
        &self,
        (centre_x, centre_z): (i32, i32),
        ring: i32,
        mut visit: impl FnMut(u32, f32, f32, f32),
    ) {
        let mut cell = |cell: (i32, i32)| {
            let bucket = bucket_of(cell, self.bucket_mask);
            let range = self.bucket_start[bucket] as usize..self.bucket_start[bucket + 1] as usize;
            for index in range {
                // A bucket holds every cell that hashes to it: keep this cell's agents.
                if self.sorted_cell[index] == cell {
                    visit(
                        self.sorted_slot[index],
                        self.sorted_x[index],
                        self.sorted_y[index],
                        self.sorted_z[index],
                    );
                }
            }
        };
        if ring == 0 {
            cell((centre_x, centre_z));
            return;
        }
        let (low_x, high_x) = (centre_x.saturating_sub(ring), centre_x.saturating_add(ring));
        let (low_z, high_z) = (centre_z.saturating_sub(ring), centre_z.saturating_add(ring));
        for x in low_x..=high_x {
            cell((x, low_z));
            cell((x, high_z));
        }
        for z in low_z + 1..high_z {
            cell((low_x, z));
            cell((high_x, z));
        }
    }

    /// The nearest others of agent `slot` with feet at `[x, y, z]`, written to `out`; returns
    /// how many.
    fn nearest(&self, slot: usize, [x, y, z]: [f32; 3], out: &mut [u32]) -> u8 {
        let capacity = out.len();
        let range_squared = self.range_m * self.range_m;
        let mut distance = [0.0f32; u8::MAX as usize];
        let distance = &mut distance[..capacity];
        let mut count = 0usize;
        let centre = (cell_of(x, self.cell_size_m), cell_of(z, self.cell_size_m));
        let rings = CELLS_PER_RANGE as i32;
        for ring in 0..=rings {
            self.for_each_in_ring(centre, ring, |other, other_x, other_y, other_z| {
                if other as usize == slot || (other_y - y).abs() >= self.vertical_range_m {
                    return;
                }
                let distance_squared = (other_x - x).powi(2) + (other_z - z).powi(2);
                if distance_squared >= range_squared {
                    return;
                }
                let key = (distance_squared, other);
                if count == capacity && (distance[count - 1], out[count - 1]) <= key {
                    return;
                }
                // Insertion into the sorted list, dropping the farthest when full.
                let mut at = count.min(capacity - 1);
                while at > 0 && (distance[at - 1], out[at - 1]) > key {
                    distance[at] = distance[at - 1];
                    out[at] = out[at - 1];
                    at -= 1;
                }
                distance[at] = distance_squared;
                out[at] = other;
                count = (count + 1).min(capacity);
            });
            // Everything in the next ring is at least `ring` cells away.
            let next_ring_m = ring as f32 * self.cell_size_m;
            if count == capacity && distance[count - 1] < next_ring_m * next_ring_m {
                break;
            }
        }
        count as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::SplitMix64;

    fn brute_force(x: &[f32], z: &[f32], slot: usize, range: f32, k: usize) -> Vec<u32> {
        let floor = |slot: usize| slot % 10 == 0;
        let mut all: Vec<(f32, u32)> = (0..x.len())
            .filter(|&other| other != slot && floor(other) == floor(slot))
            .map(|other| {
                (
                    (x[other] - x[slot]).powi(2) + (z[other] - z[slot]).powi(2),
                    other as u32,
                )
            })
            .filter(|&(d, _)| d < range * range)
            .collect();
        all.sort_by(|a, b| a.partial_cmp(b).unwrap());
        all.into_iter().take(k).map(|(_, slot)| slot).collect()
    }

    #[test]
    fn the_grid_finds_the_same_neighbours_as_brute_force() {
        let mut random = SplitMix64::new(7);
        let agents = 3_000;
        // Two far-apart groups and some agents on exact cell borders and shared spots.
        let mut x: Vec<f32> = (0..agents).map(|_| random.next_f32() * 120.0).collect();
        let mut z: Vec<f32> = (0..agents).map(|_| random.next_f32() * 80.0).collect();
        for far in &mut x[..500] {
            *far += 50_000.0;
        }
        for slot in 500..560 {
            x[slot] = 14.0 * (slot % 5) as f32;
            z[slot] = 7.0 * (slot % 3) as f32;
        }
        let mut grid = NeighbourGrid::default();
        // Every tenth agent stands on a floor 3 m up: it neighbours only its own floor.
        let y: Vec<f32> = (0..agents)
            .map(|slot| if slot % 10 == 0 { 3.0 } else { 0.0 })
            .collect();
        grid.rebuild([&x, &y, &z], 7.0, 2.0, 10);
        for slot in 0..agents {
            assert_eq!(
                grid.neighbours_of(slot),
                brute_force(&x, &z, slot, 7.0, 10).as_slice(),
                "slot {slot}"
            );
        }
        let mut pairs = 0;
        grid.for_each_pair_within(2.0, |a, b, distance| {
            assert!(a < b && distance < 2.0);
            pairs += 1;
        });
        let expected: usize = (0..agents)
            .map(|slot| {
                brute_force(&x, &z, slot, 2.0, agents)
                    .iter()
                    .filter(|&&o| o as usize > slot)
                    .count()
            })
            .sum();
        assert_eq!(pairs, expected);
    }
}
