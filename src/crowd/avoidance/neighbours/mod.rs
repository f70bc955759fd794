//! The neighbour grid of the avoid pass: every agent's K nearest agents, rebuilt each frame.
//!
//! Stage: crowd, first half of the avoid pass. Input: the agents' foot positions (lanes), a
//! horizontal query range, a vertical range and K. Output: per agent up to K neighbour
//! slots within both ranges (agents on another floor are not neighbours however close they
//! look from above), nearest first.
//!
//! The grid is dense and row-major over the agents' bounding box, rebuilt by counting sort:
//! agents are sorted by cell id (row * columns + column) with one prefix sum, and their
//! positions copied into that order. Cells of one row are then contiguous in memory, so a
//! query reads a block of cells as one slice per row (no per-cell lookup), and queries run
//! in sorted order, so neighbouring queries read the same cache lines. The positions are
//! kept a coordinate to a lane, so a query tests four candidates to an instruction. A
//! query grows its block from 3 x 3 cells outwards and stops as soon as its K nearest are
//! closer than anything outside the block can be: in a dense crowd it reads the cells
//! around the agent, not its whole range. The cell count is capped at a few per agent;
//! agents spread very far apart (two groups kilometres away) get coarser cells rather than
//! a huge empty grid.
//!
//! Crowds move little from one frame to the next, so a query first looks only within a
//! bound a little beyond the agent's K-th distance of the last rebuild: the cells that
//! bound's disc touches, keeping only candidates inside it. If K are inside, they are the K
//! nearest (nothing outside the disc can beat them); if not, the query starts over with the
//! growing block. The first look mostly settles it, with one short sort.
//!
//! Invariants: the result depends only on the positions, the ranges and K, never on thread
//! count, on the order candidates are met or on the last rebuild's hint: candidates are
//! ranked by (squared distance, index in cell order), a total order, and cell order is
//! (cell, slot).

use super::sorting_network::{NETWORK_INPUTS, sort_short};
use rayon::prelude::*;
use wide::{f32x4, i32x4};

/// Most neighbours a query keeps.
pub const NEIGHBOURS_MAX: usize = 64;

/// Agents per parallel work item of the query (halved with the avoid pass's chunks, for
/// the same reason: 1,000 agents make eight items, not four).
const QUERY_CHUNK_AGENTS: usize = 128;

/// Cells per query range before anything is known about the crowd's density (the first
/// rebuild, and a grid without K).
const CELLS_PER_RANGE: f32 = 3.0;

/// Cell size as a fraction of the typical distance to the K-th nearest neighbour: small
/// enough that a query reads few agents beyond its K, large enough that it reads few cells,
/// in a street crowd (1 agent per 10 m²) and a packed dungeon (0.6 per m²) alike
/// (`cargo bench --bench crowd -- neighbour_grid` and the city's neighbours pass).
const CELL_PER_KTH_DISTANCE: f32 = 0.64;

/// The first look's bound: the last K-th distance grown by this factor and margin, which
/// covers a frame's walk at crowd speeds (the K-th neighbour can come closer or move away
/// by two steps). Tight, because a crowd's K-th distances change little from frame to
/// frame: every candidate in the square of cells around the disc is read, and a missed
/// bound costs only a second look (a looser bound read more candidates on the city than
/// the second looks it saved).
const HINT_GROWTH: f32 = 1.02;
const HINT_MARGIN_M: f32 = 0.15;

/// One agent in this many (in cell order, so spread over the whole crowd) gives the typical
/// K-th distance that sizes the cells.
const TYPICAL_SAMPLE_STRIDE: usize = 16;

/// Most cells per agent (and at least this many cells in all) before cells grow.
const CELLS_PER_AGENT_MAX: usize = 4;
const CELLS_MIN: usize = 4096;

/// Places past the last agent in the coordinate lanes: a query reads a run of cells in
/// blocks of four, the last reaching up to three places past the run.
const LANE_PADDING: usize = 4;

/// The per-frame grid and its query results.
#[derive(Clone, Debug, Default)]
pub struct NeighbourGrid {
    range_m: f32,
    vertical_range_m: f32,
    cell_size_m: f32,
    /// Cells per metre (one multiplication per lookup instead of a division).
    cells_per_m: f32,
    origin_x: f32,
    origin_z: f32,
    columns: i32,
    rows: i32,
    /// Start of each cell in the sorted arrays, plus the end.
    cell_start: Vec<u32>,
    /// Cell of each agent by slot (scratch of the counting sort).
    agent_cell: Vec<u32>,
    /// Sorted position of each slot.
    sorted_index_of_slot: Vec<u32>,
    /// Per sorted agent, its slot.
    sorted_slot: Vec<u32>,
    /// Per sorted agent, its foot, one coordinate to a lane, padded by [`LANE_PADDING`]: a
    /// query tests a run of cells four candidates to an instruction.
    sorted_x: Vec<f32>,
    sorted_y: Vec<f32>,
    sorted_z: Vec<f32>,
    /// `neighbours_max` entries per sorted agent, as sorted indices (so a pass working in
    /// cell order reads its neighbours' data from nearby memory); the first
    /// `neighbour_count[index]` used.
    neighbours: Vec<u32>,
    neighbour_count: Vec<u8>,
    neighbours_max: usize,
    /// Squared distance to the K-th neighbour per sorted agent (infinite: fewer than K).
    kth_distance_squared: Vec<f32>,
    /// The median distance to the K-th neighbour at the last rebuild over a sample of the
    /// agents (every [`TYPICAL_SAMPLE_STRIDE`]-th in cell order), if any had K: sizes the
    /// next rebuild's cells (it changes speed only, never results).
    typical_kth_m: Option<f32>,
    /// Scratch of that median.
    typical_sample: Vec<f32>,
    /// Per slot, the distance to the K-th neighbour at the last rebuild (infinite: fewer
    /// than K): where the next query of that slot looks first. A hint only (a slot reused
    /// by another agent, or an agent that moved far, costs a second look, never a wrong
    /// answer).
    kth_hint_m: Vec<f32>,
}

impl NeighbourGrid {
    /// What sizes the next rebuild's cells (the last rebuild's typical K-th neighbour
    /// distance): the only state a rebuild carries into the next that its answers can
    /// depend on (through the cell order, which ranks exact distance ties and orders the
    /// crowd's slots). A saved crowd keeps it.
    pub(crate) fn cell_sizing(&self) -> Option<f32> {
        self.typical_kth_m
    }

    /// Sets what [`NeighbourGrid::cell_sizing`] read (a restored crowd's).
    pub(crate) fn set_cell_sizing(&mut self, typical_kth_m: Option<f32>) {
        self.typical_kth_m = typical_kth_m;
    }

    /// Rebuilds the grid over the agents with feet at (`position[0][i]`, `position[1][i]`,
    /// `position[2][i]`) and finds each agent's `neighbours_max` nearest others closer than
    /// `range_m` horizontally and `vertical_range_m` in height.
    ///
    /// # Panics
    /// If the position slices differ in length, a range is not positive and finite, or
    /// `neighbours_max` exceeds [`NEIGHBOURS_MAX`] (the crowd validates its configuration
    /// first).
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
        assert!(neighbours_max <= NEIGHBOURS_MAX);
        let agents = position_x.len();
        self.range_m = range_m;
        self.vertical_range_m = vertical_range_m;
        self.neighbours_max = neighbours_max;
        self.lay_out(position_x, position_z);

        // Counting sort by cell.
        let cells = (self.columns as usize) * (self.rows as usize);
        self.cell_start.clear();
        self.cell_start.resize(cells + 1, 0);
        self.agent_cell.clear();
        for (&x, &z) in position_x.iter().zip(position_z) {
            let (column, row) = self.cell_of(x, z);
            let cell = (row * self.columns + column) as u32;
            self.agent_cell.push(cell);
            self.cell_start[cell as usize + 1] += 1;
        }
        for cell in 0..cells {
            self.cell_start[cell + 1] += self.cell_start[cell];
        }
        self.sorted_slot.resize(agents, 0);
        self.sorted_index_of_slot.resize(agents, 0);
        for lane in [&mut self.sorted_x, &mut self.sorted_y, &mut self.sorted_z] {
            lane.resize(agents + LANE_PADDING, 0.0);
        }
        // Filling each cell from its end walking slots backwards keeps slots ascending
        // within a cell.
        let mut fill = self.cell_start[1..].to_vec();
        for slot in (0..agents).rev() {
            let cell = self.agent_cell[slot] as usize;
            fill[cell] -= 1;
            let at = fill[cell] as usize;
            self.sorted_slot[at] = slot as u32;
            self.sorted_x[at] = position_x[slot];
            self.sorted_y[at] = position_y[slot];
            self.sorted_z[at] = position_z[slot];
            self.sorted_index_of_slot[slot] = at as u32;
        }

        // Sized, not cleared: every query writes its agent's count and K-th distance, and
        // places past a count are never read (zeroing them would be a megabyte of stores a
        // frame for 10,000 agents).
        self.neighbours.resize(agents * neighbours_max, 0);
        self.neighbour_count.resize(agents, 0);
        self.kth_distance_squared.resize(agents, f32::INFINITY);
        if neighbours_max == 0 {
            self.typical_kth_m = None;
            return;
        }
        let mut neighbours = std::mem::take(&mut self.neighbours);
        let mut counts = std::mem::take(&mut self.neighbour_count);
        let mut kth = std::mem::take(&mut self.kth_distance_squared);
        let grid = &*self;
        neighbours
            .par_chunks_mut(QUERY_CHUNK_AGENTS * neighbours_max)
            .zip(counts.par_chunks_mut(QUERY_CHUNK_AGENTS))
            .zip(kth.par_chunks_mut(QUERY_CHUNK_AGENTS))
            .with_min_len(crate::crowd::compute::parallel::task_min(1))
            .enumerate()
            .for_each(|(chunk, ((neighbours, counts), kth))| {
                let first = chunk * QUERY_CHUNK_AGENTS;
                let mut best = Nearest::new();
                for (offset, (count, kth)) in counts.iter_mut().zip(kth).enumerate() {
                    let out =
                        &mut neighbours[offset * neighbours_max..(offset + 1) * neighbours_max];
                    (*count, *kth) = grid.nearest(first + offset, &mut best, out);
                }
            });
        self.neighbours = neighbours;
        self.neighbour_count = counts;
        // Next rebuild's first looks, by slot.
        self.kth_hint_m.resize(agents, f32::INFINITY);
        self.kth_hint_m
            .par_iter_mut()
            .zip(&self.sorted_index_of_slot)
            .with_min_len(crate::crowd::compute::parallel::LIGHT_AGENTS_PER_TASK)
            .for_each(|(hint, &index)| *hint = kth[index as usize].sqrt());
        // The median over a fixed sample of the agents with K neighbours: it sizes the
        // next rebuild's cells and nothing else, and a selection over every agent would be
        // a serial stretch at the end of each rebuild with the other thread idle.
        let mut sample = std::mem::take(&mut self.typical_sample);
        sample.clear();
        sample.extend(
            kth.iter()
                .step_by(TYPICAL_SAMPLE_STRIDE)
                .copied()
                .filter(|distance| distance.is_finite()),
        );
        let middle = sample.len() / 2;
        self.typical_kth_m = (!sample.is_empty()).then(|| {
            let (_, median, _) = sample.select_nth_unstable_by(middle, f32::total_cmp);
            median.sqrt()
        });
        self.typical_sample = sample;
        self.kth_distance_squared = kth;
    }

    /// Chooses the cell size and the grid's extent for this frame.
    fn lay_out(&mut self, position_x: &[f32], position_z: &[f32]) {
        let mut low = (f32::INFINITY, f32::INFINITY);
        let mut high = (f32::NEG_INFINITY, f32::NEG_INFINITY);
        for (&x, &z) in position_x.iter().zip(position_z) {
            low = (low.0.min(x), low.1.min(z));
            high = (high.0.max(x), high.1.max(z));
        }
        if position_x.is_empty() {
            (low, high) = ((0.0, 0.0), (0.0, 0.0));
        }
        let cells_max = (position_x.len() * CELLS_PER_AGENT_MAX).max(CELLS_MIN) as f64;
        let (width, depth) = (f64::from(high.0 - low.0), f64::from(high.1 - low.1));
        // Cells about two thirds of the typical K-th neighbour distance: a query then ends
        // after a block of 5 x 5 cells or so, dense crowd or sparse.
        let from_density = self
            .typical_kth_m
            .map(|kth| (kth * CELL_PER_KTH_DISTANCE).clamp(self.range_m / 8.0, self.range_m / 2.0));
        let mut cell = f64::from(from_density.unwrap_or(self.range_m / CELLS_PER_RANGE));
        // Coarser cells when the box would need too many (agents spread very far apart).
        // The square root is exact for a square box; a long thin one (agents along a line)
        // needs more, hence the loop.
        let needed = |cell: f64| (width / cell + 1.0) * (depth / cell + 1.0);
        if needed(cell) > cells_max {
            cell *= (needed(cell) / cells_max).sqrt() * 1.01;
            while needed(cell) > cells_max {
                cell *= 1.5;
            }
        }
        self.cell_size_m = cell as f32;
        self.cells_per_m = (1.0 / cell) as f32;
        self.origin_x = low.0;
        self.origin_z = low.1;
        self.columns = (width / cell) as i32 + 1;
        self.rows = (depth / cell) as i32 + 1;
    }

    /// Writes the memory of the per-agent arrays for agents `from..to` ahead of the
    /// rebuilds that will fill them (see `runtime::map_step_buffers`).
    pub(crate) fn map_pages(
        &mut self,
        from: usize,
        to: usize,
        neighbours_max: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        use crate::crowd::compute::parallel::map_pages;
        map_pages(&mut self.agent_cell, from, to)?;
        map_pages(&mut self.sorted_index_of_slot, from, to)?;
        map_pages(&mut self.sorted_slot, from, to)?;
        for lane in [&mut self.sorted_x, &mut self.sorted_y, &mut self.sorted_z] {
            map_pages(lane, from, to.saturating_add(LANE_PADDING))?;
        }
        map_pages(
            &mut self.neighbours,
            from.saturating_mul(neighbours_max),
            to.saturating_mul(neighbours_max),
        )?;
        map_pages(&mut self.neighbour_count, from, to)?;
        map_pages(&mut self.kth_distance_squared, from, to)?;
        map_pages(&mut self.kth_hint_m, from, to)
    }

    /// The foot of the agent at `index` in cell order.
    #[inline]
    fn foot(&self, index: usize) -> [f32; 3] {
        [
            self.sorted_x[index],
            self.sorted_y[index],
            self.sorted_z[index],
        ]
    }

    /// The (column, row) of a horizontal point, clamped to the grid.
    #[inline]
    fn cell_of(&self, x: f32, z: f32) -> (i32, i32) {
        let column = ((x - self.origin_x) * self.cells_per_m) as i32;
        let row = ((z - self.origin_z) * self.cells_per_m) as i32;
        (
            column.clamp(0, self.columns - 1),
            row.clamp(0, self.rows - 1),
        )
    }

    /// Follows a reordering of the agents the last rebuild covered: slot `i` now holds the
    /// agent that was in slot `order[i]`, and `new_slot_of` is the inverse (a permutation
    /// of `len()` slots, which the crowd makes from this grid's own cell order). Its
    /// answers and the next rebuild's hints then name the agents by their new slots.
    pub(crate) fn permute_slots(&mut self, order: &[u32], new_slot_of: &[u32]) {
        assert!(
            order.len() == self.sorted_slot.len() && new_slot_of.len() == order.len(),
            "a permutation of the grid's agents"
        );
        for slot in &mut self.sorted_slot {
            *slot = new_slot_of[*slot as usize];
        }
        let index_of_old = std::mem::take(&mut self.sorted_index_of_slot);
        self.sorted_index_of_slot = order
            .iter()
            .map(|&old| index_of_old[old as usize])
            .collect();
        if self.kth_hint_m.len() == order.len() {
            let hints = std::mem::take(&mut self.kth_hint_m);
            self.kth_hint_m = order.iter().map(|&old| hints[old as usize]).collect();
        }
    }

    #[cfg(feature = "harness")]
    /// The cell size of the last rebuild, metres.
    pub fn cell_size_m(&self) -> f32 {
        self.cell_size_m
    }

    /// Agents covered by the last rebuild.
    pub fn len(&self) -> usize {
        self.sorted_slot.len()
    }

    #[cfg(feature = "harness")]
    /// Whether the last rebuild covered no agent.
    pub fn is_empty(&self) -> bool {
        self.sorted_slot.is_empty()
    }

    /// The slot of the agent at `index` in cell order (`index < len()`).
    #[inline]
    pub fn slot_at(&self, index: usize) -> usize {
        self.sorted_slot[index] as usize
    }

    /// The position in cell order of the agent in `slot`, if the rebuild covered it.
    #[inline]
    pub fn index_of_slot(&self, slot: usize) -> Option<usize> {
        self.sorted_index_of_slot
            .get(slot)
            .map(|&index| index as usize)
    }

    /// The neighbours of the agent at `index` in cell order, nearest first, as indices in
    /// cell order (`index < len()`).
    #[inline]
    pub fn neighbours_at(&self, index: usize) -> &[u32] {
        let count = self
            .neighbour_count
            .get(index)
            .map_or(0, |&count| usize::from(count));
        let first = index * self.neighbours_max;
        &self.neighbours[first..first + count]
    }

    #[cfg(feature = "harness")]
    /// The neighbours of `slot` found by the last rebuild, nearest first, as slots (none for
    /// a slot the rebuild did not cover).
    pub fn neighbours_of(&self, slot: usize) -> impl ExactSizeIterator<Item = u32> + '_ {
        let neighbours = self
            .index_of_slot(slot)
            .map_or(&[][..], |index| self.neighbours_at(index));
        neighbours
            .iter()
            .map(|&index| self.sorted_slot[index as usize])
    }

    #[cfg(feature = "harness")]
    /// Every agent pair closer than `range_m` horizontally (at most the rebuild's range) and
    /// within the vertical range, each once as (lower slot, higher slot, horizontal
    /// distance), in no particular order; for quality measures.
    pub fn for_each_pair_within(&self, range_m: f32, mut visit: impl FnMut(u32, u32, f32)) {
        let range_m = range_m.min(self.range_m);
        let range_squared = range_m * range_m;
        let reach = (range_m / self.cell_size_m).ceil() as i32;
        for (index, &slot) in self.sorted_slot.iter().enumerate() {
            let [x, y, z] = self.foot(index);
            self.for_each_in_block(self.cell_of(x, z), reach, |other| {
                let other_slot = self.sorted_slot[other];
                let [other_x, other_y, other_z] = self.foot(other);
                if other_slot > slot && (other_y - y).abs() < self.vertical_range_m {
                    let distance_squared = (other_x - x).powi(2) + (other_z - z).powi(2);
                    if distance_squared < range_squared {
                        visit(slot, other_slot, distance_squared.sqrt());
                    }
                }
            });
        }
    }

    #[cfg(feature = "harness")]
    /// Calls `visit(sorted index)` for every agent in the cells within `reach` cells of
    /// `centre` (a square block), one contiguous slice per row.
    #[inline]
    fn for_each_in_block(&self, centre: (i32, i32), reach: i32, mut visit: impl FnMut(usize)) {
        let (low_column, high_column) = (
            (centre.0 - reach).max(0),
            (centre.0 + reach).min(self.columns - 1),
        );
        for row in (centre.1 - reach).max(0)..=(centre.1 + reach).min(self.rows - 1) {
            self.run(row, low_column, high_column).for_each(&mut visit);
        }
    }

    /// The sorted indices of the agents in cells `first..=last` of `row` (one slice).
    #[inline]
    fn run(&self, row: i32, first: i32, last: i32) -> std::ops::Range<usize> {
        if first > last {
            return 0..0;
        }
        let base = (row * self.columns) as usize;
        let start = self.cell_start[base + first as usize] as usize;
        let end = self.cell_start[base + last as usize + 1] as usize;
        start..end
    }

    /// How far `position` is from everything outside the block of cells within `reach` of
    /// `centre`: the nearest block side that has cells beyond it (infinite once the block
    /// covers the grid or the query range).
    fn outside_distance(&self, [x, _, z]: [f32; 3], (column, row): (i32, i32), reach: i32) -> f32 {
        let size = self.cell_size_m;
        let mut nearest = f32::INFINITY;
        if column - reach > 0 {
            nearest = nearest.min(x - (self.origin_x + (column - reach) as f32 * size));
        }
        if column + reach < self.columns - 1 {
            nearest = nearest.min(self.origin_x + (column + reach + 1) as f32 * size - x);
        }
        if row - reach > 0 {
            nearest = nearest.min(z - (self.origin_z + (row - reach) as f32 * size));
        }
        if row + reach < self.rows - 1 {
            nearest = nearest.min(self.origin_z + (row + reach + 1) as f32 * size - z);
        }
        if nearest >= self.range_m {
            f32::INFINITY
        } else {
            nearest.max(0.0)
        }
    }

    /// The nearest others of the agent at sorted index `index`, written to `out` as sorted
    /// indices; returns how many, and the squared distance to the K-th (infinite if fewer).
    /// `best` is the query's working list, reused from query to query (reset here).
    fn nearest(&self, index: usize, best: &mut Nearest, out: &mut [u32]) -> (u8, f32) {
        best.range_squared = self.range_m * self.range_m;
        best.vertical_range_m = self.vertical_range_m;
        best.index = index as u32;
        best.position = self.foot(index);
        best.capacity = out.len();
        best.count = 0;
        best.worst = best.range_key();
        let bound_m = self
            .kth_hint_m
            .get(self.sorted_slot[index] as usize)
            .map_or(f32::INFINITY, |&kth| kth * HINT_GROWTH + HINT_MARGIN_M);
        if !self.first_look(best, bound_m.min(self.range_m)) {
            best.count = 0;
            best.worst = best.range_key();
            self.grow_block(best);
        }
        for (neighbour, &key) in out.iter_mut().zip(&best.keys[..best.count]) {
            *neighbour = key as u32;
        }
        let kth = if best.count == best.capacity {
            f32::from_bits((best.keys[best.count - 1] >> 32) as u32)
        } else {
            f32::INFINITY
        };
        (best.count as u8, kth)
    }

    /// The first look: the candidates closer than `bound_m` (at most the range), from the
    /// cells its disc touches. True, with `best` cut to the K nearest, if at least K are
    /// inside or the disc is the whole range (an agent with fewer than K in range, or
    /// without a hint, is answered here too).
    fn first_look(&self, best: &mut Nearest, bound_m: f32) -> bool {
        let [x, _, z] = best.position;
        // Keys below this one are exactly those closer than the bound.
        best.worst = key_of(bound_m * bound_m, 0);
        // Cells are chosen with a little slack against rounding at their edges (a cell too
        // many is only read; the bound test decides). The square around the disc, not the
        // disc row by row: trimming each row's columns to the disc read 20% fewer
        // candidates but cost more than it saved (a square root per row).
        let reach = bound_m + self.cell_size_m * 1e-3;
        let (low_column, low_row) = self.cell_of(x - reach, z - reach);
        let (high_column, high_row) = self.cell_of(x + reach, z + reach);
        for row in low_row..=high_row {
            best.consider_run(self, self.run(row, low_column, high_column));
        }
        if best.count < best.capacity && bound_m < self.range_m {
            return false;
        }
        best.cut();
        true
    }

    /// The search when the first look found fewer than K (the agent's neighbours moved
    /// away, or the hint was another agent's): a block of 3 x 3 cells, grown ring by ring
    /// until nothing outside it can be among the K nearest.
    fn grow_block(&self, best: &mut Nearest) {
        let (column, row) = self.cell_of(best.position[0], best.position[2]);
        for block_row in (row - 1).max(0)..=(row + 1).min(self.rows - 1) {
            let (first, last) = ((column - 1).max(0), (column + 1).min(self.columns - 1));
            best.consider_run(self, self.run(block_row, first, last));
        }
        let mut reach = 1;
        while !best.closer_than(self.outside_distance(best.position, (column, row), reach)) {
            reach += 1;
            // The block's new ring: a full row above and below, one cell each side between.
            let (low_column, high_column) = (column - reach, column + reach);
            let (first, last) = (low_column.max(0), high_column.min(self.columns - 1));
            for edge_row in [row - reach, row + reach] {
                if (0..self.rows).contains(&edge_row) {
                    best.consider_run(self, self.run(edge_row, first, last));
                }
            }
            for middle_row in (row - reach + 1).max(0)..=(row + reach - 1).min(self.rows - 1) {
                for side_column in [low_column, high_column] {
                    if (0..self.columns).contains(&side_column) {
                        best.consider_run(self, self.run(middle_row, side_column, side_column));
                    }
                }
            }
        }
        // The last `closer_than` left the K nearest, sorted.
    }
}

/// One query's candidates, each as one sortable key: the squared distance's bits (a
/// non-negative float orders like its bits) above the index in cell order, so ranking by
/// (distance, index) is one integer comparison, and the key is the answer itself.
///
/// Candidates are appended without a branch on whether they qualify (the slot after the
/// last is always written, the count advances by the test's outcome), and the list is cut
/// to the K nearest only between blocks of cells, by sorting: ranking each candidate as it
/// comes, with a sorted insertion, would mispredict a branch or two per candidate.
struct Nearest {
    range_squared: f32,
    vertical_range_m: f32,
    /// The querying agent's index in cell order.
    index: u32,
    position: [f32; 3],
    /// Room for [`CANDIDATES_MAX`] candidates and the keys a block writes past the last.
    keys: [u64; CANDIDATES_MAX + 4],
    /// K.
    capacity: usize,
    count: usize,
    /// The K-th nearest key at the last cut, or until K are known the key of the query's
    /// bound (the range, or the first look's disc): a candidate that does not beat it
    /// cannot be among the K nearest and is not kept. Always at most the range's key, so
    /// this one comparison also keeps out everything beyond the range.
    worst: u64,
}

/// Candidates a query holds before it is cut to the K nearest: more than any block of
/// cells holds in practice, so the cut runs once per block.
const CANDIDATES_MAX: usize = 128;

pub(crate) fn key_of(distance_squared: f32, slot: u32) -> u64 {
    (u64::from(distance_squared.to_bits()) << 32) | u64::from(slot)
}

impl Nearest {
    fn new() -> Nearest {
        Nearest {
            range_squared: 0.0,
            vertical_range_m: 0.0,
            index: 0,
            position: [0.0; 3],
            keys: [0; CANDIDATES_MAX + 4],
            capacity: 0,
            count: 0,
            worst: u64::MAX,
        }
    }

    /// Offers the agents at sorted indices `run`, four to a block: their distances and the
    /// three tests (closer than the worst kept, not the agent itself, on its floor) in
    /// lanes, then each candidate's key written and the count advanced by its outcome. The
    /// last block may reach past the run (into the next cells' agents or the padding):
    /// those lanes fail a fourth test and their keys land past the count, unread.
    #[inline]
    fn consider_run(&mut self, grid: &NeighbourGrid, run: std::ops::Range<usize>) {
        let [x, y, z] = self.position;
        let (x, y, z) = (f32x4::splat(x), f32x4::splat(y), f32x4::splat(z));
        let vertical_m = f32x4::splat(self.vertical_range_m);
        let own = i32x4::splat(self.index as i32);
        let mut start = run.start;
        while start < run.end {
            // Room is made before a piece of the run, not checked per candidate.
            if self.count == CANDIDATES_MAX {
                self.cut();
            }
            let end = run.end.min(start + (CANDIDATES_MAX - self.count));
            // A key below the worst's: its squared distance's bits below the worst's, or the
            // same bits and an index below (both halves under 2^31, so signed lanes compare
            // them as the 64-bit key does).
            let worst_high = i32x4::splat((self.worst >> 32) as i32);
            let worst_low = i32x4::splat(self.worst as u32 as i32);
            let end_lane = i32x4::splat(end as i32);
            let mut count = self.count;
            for block in (start..end).step_by(4) {
                let lane = |values: &[f32]| {
                    f32x4::from(<[f32; 4]>::try_from(&values[block..block + 4]).expect("padded"))
                };
                let (dx, dz) = (lane(&grid.sorted_x) - x, lane(&grid.sorted_z) - z);
                let distance_squared = dx * dx + dz * dz;
                let index = i32x4::splat(block as i32) + i32x4::from([0, 1, 2, 3]);
                let bits: i32x4 = bytemuck::cast(distance_squared);
                let below = bits.simd_lt(worst_high)
                    | (bits.simd_eq(worst_high) & index.simd_lt(worst_low));
                let same_floor: i32x4 =
                    bytemuck::cast((lane(&grid.sorted_y) - y).abs().simd_lt(vertical_m));
                let in_run = index.simd_lt(end_lane) & !index.simd_eq(own);
                let qualifies: f32x4 = bytemuck::cast(below & same_floor & in_run);
                let mask = qualifies.to_bitmask();
                let bits = bits.to_array();
                for (offset, &bits) in bits.iter().enumerate() {
                    self.keys[count] = (u64::from(bits as u32) << 32) | (block + offset) as u64;
                    count += ((mask >> offset) & 1) as usize;
                }
            }
            self.count = count;
            start = end;
        }
    }

    /// [`Nearest::consider_run`] one candidate at a time, with the plain 64-bit key test:
    /// the reference the lanes are checked against.
    #[cfg(test)]
    fn consider_run_scalar(&mut self, grid: &NeighbourGrid, run: std::ops::Range<usize>) {
        let [x, y, z] = self.position;
        for index in run {
            if self.count == CANDIDATES_MAX {
                self.cut();
            }
            let [other_x, other_y, other_z] = grid.foot(index);
            let distance_squared = (other_x - x).powi(2) + (other_z - z).powi(2);
            let key = key_of(distance_squared, index as u32);
            if key < self.worst
                && index as u32 != self.index
                && (other_y - y).abs() < self.vertical_range_m
            {
                self.keys[self.count] = key;
                self.count += 1;
            }
        }
    }

    /// The key of the query range: every kept candidate's key is below it.
    fn range_key(&self) -> u64 {
        key_of(self.range_squared, 0)
    }

    /// Sorts the candidates and keeps the K nearest.
    fn cut(&mut self) {
        if self.count <= NETWORK_INPUTS {
            let short: &mut [u64; NETWORK_INPUTS] = (&mut self.keys[..NETWORK_INPUTS])
                .try_into()
                .expect("a short list");
            sort_short(short, self.count);
        } else {
            self.keys[..self.count].sort_unstable();
        }
        self.count = self.count.min(self.capacity);
        if self.count == self.capacity {
            self.worst = self.keys[self.capacity - 1];
        }
    }

    /// Whether nothing farther than `distance_m` can change the K nearest: all K are found
    /// and closer, or nothing lies beyond (`distance_m` infinite). Cuts the list first.
    fn closer_than(&mut self, distance_m: f32) -> bool {
        self.cut();
        distance_m == f32::INFINITY
            || (self.count == self.capacity
                && f32::from_bits((self.keys[self.capacity - 1] >> 32) as u32)
                    < distance_m * distance_m)
    }
}

#[cfg(test)]
mod tests;
