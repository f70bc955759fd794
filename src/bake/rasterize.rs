//! Stage [`Stage::Rasterize`](super::Stage::Rasterize): rasterize world triangles into the solid heightfield.
//!
//! A triangle fills every cell it touches with a solid span from the lowest to the highest
//! point of the triangle inside that cell. The test is conservative: a triangle that touches
//! a cell at all fills it, so a thin wall is never lost between cell centres (an agent must
//! never walk through one).
//!
//! Height is linear over a triangle, so its extremes over the part inside a cell lie at the
//! vertices of that part, which are: triangle corners inside the cell, crossings of triangle
//! edges with the cell's sides, and cell corners inside the triangle. Instead of clipping the
//! triangle once per cell, [`rasterize_triangle`] visits each such point once and widens
//! the range of every cell it belongs to: the same answer as exact clipping (kept as a test
//! reference), at a cost in proportion to cells plus perimeter.
//!
//! A triangle's surface is walkable when its unit normal's Up component exceeds the cosine
//! of the steepest walkable slope; its area tag is kept, otherwise the span is solid but not
//! walkable.

use glam::Vec3;

use super::config::SPAN_HEIGHT_MAX;
use super::heightfield::Heightfield;
use crate::geom::triangle;
use crate::ids::AreaId;

/// Most vertices a triangle can have after clipping against four lines, plus slack.
#[cfg(test)]
const CLIPPED_VERTICES_MAX: usize = 12;

/// A small convex polygon on the stack.
#[cfg(test)]
#[derive(Clone, Copy)]
struct Clipped {
    points: [Vec3; CLIPPED_VERTICES_MAX],
    count: usize,
}

#[cfg(test)]
impl Clipped {
    const EMPTY: Clipped = Clipped {
        points: [Vec3::ZERO; CLIPPED_VERTICES_MAX],
        count: 0,
    };

    fn push(&mut self, point: Vec3) {
        // NOTE: a convex polygon clipped by one line gains at most one vertex, and we clip
        // a triangle by at most four, so the capacity is never reached.
        debug_assert!(self.count < CLIPPED_VERTICES_MAX);
        if self.count < CLIPPED_VERTICES_MAX {
            self.points[self.count] = point;
            self.count += 1;
        }
    }
}

#[cfg(test)]
/// Splits `input` by the line `point[axis] = line` into the part at or below it and the
/// part at or above it (points on the line go to both).
fn split(input: &Clipped, axis: usize, line: f32, below: &mut Clipped, above: &mut Clipped) {
    below.count = 0;
    above.count = 0;
    let count = input.count;
    for index in 0..count {
        let current = input.points[index];
        let next = input.points[(index + 1) % count];
        let current_offset = current[axis] - line;
        let next_offset = next[axis] - line;
        if current_offset <= 0.0 {
            below.push(current);
        }
        if current_offset >= 0.0 {
            above.push(current);
        }
        // Strictly on opposite sides: add the crossing point to both halves.
        if (current_offset < 0.0 && next_offset > 0.0)
            || (current_offset > 0.0 && next_offset < 0.0)
        {
            let t = current_offset / (current_offset - next_offset);
            let crossing = current + (next - current) * t;
            below.push(crossing);
            above.push(crossing);
        }
    }
}

/// Inputs shared by every triangle of one rasterization.
#[derive(Clone, Copy, Debug)]
pub struct RasterParams {
    /// Cosine of the steepest walkable slope.
    pub walkable_slope_cos: f32,
    /// Spans whose tops lie within this many cell heights merge their areas.
    pub merge_threshold_cells: u16,
}

/// The area a triangle's top surface gets: its tag if walkable by slope, else unwalkable.
pub fn surface_area(corners: &[Vec3; 3], tag: AreaId, walkable_slope_cos: f32) -> u8 {
    let [a, b, c] = *corners;
    match triangle::try_normal(a, b, c) {
        Some(normal) if normal.y > walkable_slope_cos => tag.0,
        _ => AreaId::UNWALKABLE.0,
    }
}

/// Reference rasterizer: clips the triangle against every row, then every cell, and takes
/// the clipped polygon's height range. Exact but slow; kept to check [`rasterize_triangle`].
#[cfg(test)]
pub fn rasterize_triangle_clipped(
    field: &mut Heightfield,
    corners: &[Vec3; 3],
    area: u8,
    merge_threshold: u16,
) {
    let cell_size = field.cell_size;
    let inverse_cell_size = 1.0 / cell_size;
    let inverse_cell_height = 1.0 / field.cell_height;
    let origin = field.origin;
    let grid_max_x = origin.x + field.width as f32 * cell_size;
    let grid_max_z = origin.z + field.depth as f32 * cell_size;

    let [a, b, c] = *corners;
    let low = a.min(b).min(c);
    let high = a.max(b).max(c);
    if high.x < origin.x || low.x > grid_max_x || high.z < origin.z || low.z > grid_max_z {
        return;
    }
    let to_cell = |value: f32, start: f32, limit: u32| -> u32 {
        (((value - start) * inverse_cell_size).floor().max(0.0) as u32).min(limit - 1)
    };
    let z_first = to_cell(low.z, origin.z, field.depth);
    let z_last = to_cell(high.z, origin.z, field.depth);
    let x_first_all = to_cell(low.x, origin.x, field.width);
    let x_last_all = to_cell(high.x, origin.x, field.width);

    let mut rest = Clipped::EMPTY;
    rest.points[..3].copy_from_slice(corners);
    rest.count = 3;
    let (mut row, mut scratch) = (Clipped::EMPTY, Clipped::EMPTY);
    let (mut cell, mut row_rest) = (Clipped::EMPTY, Clipped::EMPTY);

    // Drop whatever lies before the grid's first row.
    let first_row_start = origin.z + z_first as f32 * cell_size;
    if low.z < first_row_start {
        split(&rest, 2, first_row_start, &mut scratch, &mut row);
        rest = row;
    }
    for z in z_first..=z_last {
        let row_end = origin.z + (z + 1) as f32 * cell_size;
        split(&rest, 2, row_end, &mut row, &mut scratch);
        std::mem::swap(&mut rest, &mut scratch);
        if row.count < 3 {
            continue;
        }
        let (mut row_low_x, mut row_high_x) = (row.points[0].x, row.points[0].x);
        for point in &row.points[1..row.count] {
            row_low_x = row_low_x.min(point.x);
            row_high_x = row_high_x.max(point.x);
        }
        let x_first = to_cell(row_low_x, origin.x, field.width).max(x_first_all);
        let x_last = to_cell(row_high_x, origin.x, field.width).min(x_last_all);
        let first_column_start = origin.x + x_first as f32 * cell_size;
        if row_low_x < first_column_start {
            split(&row, 0, first_column_start, &mut cell, &mut row_rest);
            row = row_rest;
        }
        for x in x_first..=x_last {
            let column_end = origin.x + (x + 1) as f32 * cell_size;
            split(&row, 0, column_end, &mut cell, &mut row_rest);
            std::mem::swap(&mut row, &mut row_rest);
            if cell.count < 3 {
                continue;
            }
            let (mut bottom, mut top) = (cell.points[0].y, cell.points[0].y);
            for point in &cell.points[1..cell.count] {
                bottom = bottom.min(point.y);
                top = top.max(point.y);
            }
            let (bottom, top) = (bottom - origin.y, top - origin.y);
            let height_limit = SPAN_HEIGHT_MAX as f32 * field.cell_height;
            if top < 0.0 || bottom > height_limit {
                continue;
            }
            let span_min =
                ((bottom.max(0.0) * inverse_cell_height).floor() as u32).min(SPAN_HEIGHT_MAX - 1);
            let span_max = ((top.min(height_limit) * inverse_cell_height).ceil() as u32)
                .clamp(span_min + 1, SPAN_HEIGHT_MAX);
            field.add_span(
                x,
                z,
                span_min as u16,
                span_max as u16,
                area,
                merge_threshold,
            );
        }
    }
}

/// A cell no point has touched: any height widens it.
const EMPTY_RANGE: [f32; 2] = [f32::INFINITY, f32::NEG_INFINITY];

/// Per-thread scratch for [`rasterize_triangle`]: the height range of each cell in the
/// current triangle's bounding box, and which cells were touched.
///
/// Invariant between calls: every entry of `ranges` is `EMPTY_RANGE`, so a triangle pays
/// only for the cells it touches, not for its whole bounding box.
#[derive(Default)]
pub struct RasterScratch {
    /// Per cell of the box: the lowest and highest height touched so far.
    ranges: Vec<[f32; 2]>,
    /// The touched cells' indices in the box.
    touched: Vec<u32>,
}

/// The height range of each cell of one triangle's bounding box, with the list of cells
/// touched. Methods are forced inline so the bounds stay in registers in the hot loops.
struct CellRanges<'a> {
    ranges: &'a mut [[f32; 2]],
    /// The cells touched, in order, in `touched[..touched_count]`; as long as the box.
    touched: &'a mut [u32],
    touched_count: usize,
    x_first: i32,
    x_last: i32,
    z_first: i32,
    z_last: i32,
    box_width: usize,
}

impl CellRanges<'_> {
    /// Widens cell `(x, z)`'s range to hold `y`; cells outside the box are ignored.
    // NOTE: plain comparisons rather than `f32::min`/`max`, whose NaN handling costs extra
    // instructions here; heights are finite (the scene checked every vertex).
    #[inline(always)]
    fn touch(&mut self, x: i32, z: i32, y: f32) {
        // One unsigned comparison an axis: a cell left of or below the box wraps round to
        // a column or row beyond its far side.
        let (column, row) = (
            x.wrapping_sub(self.x_first) as u32,
            z.wrapping_sub(self.z_first) as u32,
        );
        if column > (self.x_last - self.x_first) as u32 || row > (self.z_last - self.z_first) as u32
        {
            return;
        }
        let index = column as usize + row as usize * self.box_width;
        let [low, high] = &mut self.ranges[index];
        // Branch-free: which cell is new and which height widens a range follow the
        // triangle's shape, and mispredicting them cost a quarter of the rasterizer. The
        // index is written past the list either way and kept only for a new cell.
        let new_cell = *low == f32::INFINITY;
        if let Some(slot) = self.touched.get_mut(self.touched_count) {
            *slot = index as u32;
        }
        self.touched_count += usize::from(new_cell);
        *low = if y < *low { y } else { *low };
        *high = if y > *high { y } else { *high };
    }

    /// The four cells around a point, filtered by side: (x low, x high) by (z low, z high).
    #[inline(always)]
    fn touch_sides(
        &mut self,
        cell_x: i32,
        cell_z: i32,
        x_sides: (bool, bool),
        z_sides: (bool, bool),
        y: f32,
    ) {
        if z_sides.1 {
            if x_sides.1 {
                self.touch(cell_x, cell_z, y);
            }
            if x_sides.0 {
                self.touch(cell_x - 1, cell_z, y);
            }
        }
        if z_sides.0 {
            if x_sides.1 {
                self.touch(cell_x, cell_z - 1, y);
            }
            if x_sides.0 {
                self.touch(cell_x - 1, cell_z - 1, y);
            }
        }
    }
}

/// Added to a float of magnitude below 2^22, lands it in [2^23, 2^24), where floats are
/// one apart: the sum is the value rounded to the nearest integer, which the low bits of
/// the sum hold as an offset from this number's bits.
const ROUNDING_OFFSET: f32 = 12_582_912.0; // 1.5 x 2^23

/// `floor` as an integer, for |value| < 2^22 (grid cells and span heights are far below):
/// an addition, a subtraction and a comparison. The baseline x86-64 target has no rounding
/// instruction, so `f32::floor` is a libm call, and `as i32` saturates, which costs a
/// comparison against the range and a select on top of the conversion: with both this
/// was a tenth of the rasterizer's time.
#[inline]
fn floor_to_i32(value: f32) -> i32 {
    debug_assert!(
        value.abs() < 4_194_304.0,
        "{value} is out of floor_to_i32's range"
    );
    let shifted = value + ROUNDING_OFFSET;
    let rounded = shifted.to_bits() as i32 - ROUNDING_OFFSET.to_bits() as i32;
    rounded - i32::from(shifted - ROUNDING_OFFSET > value)
}

/// Rasterizes one triangle whose surface area is already decided.
pub fn rasterize_triangle(
    field: &mut Heightfield,
    corners: &[Vec3; 3],
    area: u8,
    merge_threshold: u16,
    scratch: &mut RasterScratch,
) {
    let inverse_cell_size = 1.0 / field.cell_size;
    let origin = field.frame_origin;
    // The grid's columns in the level-wide frame: all arithmetic below happens in frame cell
    // units, so every grid of a bake computes the same values for the same column.
    let [first_x, first_z] = field.first_column;
    let (end_x, end_z) = (first_x + field.width as i32, first_z + field.depth as i32);
    // Corners in frame cell units (height stays in metres).
    let to_grid = |p: Vec3| {
        Vec3::new(
            (p.x - origin.x) * inverse_cell_size,
            p.y,
            (p.z - origin.z) * inverse_cell_size,
        )
    };
    let grid = corners.map(to_grid);
    let low = grid[0].min(grid[1]).min(grid[2]);
    let high = grid[0].max(grid[1]).max(grid[2]);
    if high.x < first_x as f32
        || high.z < first_z as f32
        || low.x > end_x as f32
        || low.z > end_z as f32
    {
        return;
    }
    // Bounding box in cells, clamped to the grid; a point on a cell line may belong to the
    // cell below it, hence the -1 on the low side.
    let x_first = (floor_to_i32(low.x) - 1).max(first_x);
    let z_first = (floor_to_i32(low.z) - 1).max(first_z);
    let x_last = floor_to_i32(high.x).min(end_x - 1);
    let z_last = floor_to_i32(high.z).min(end_z - 1);
    if x_first > x_last || z_first > z_last {
        return;
    }
    let box_width = (x_last - x_first + 1) as usize;
    let box_cells = box_width * (z_last - z_first + 1) as usize;
    if scratch.ranges.len() < box_cells {
        scratch.ranges.resize(box_cells, EMPTY_RANGE);
        scratch.touched.resize(box_cells, 0);
    }
    let (low_y, high_y) = (low.y, high.y);
    let RasterScratch {
        ranges: cell_ranges,
        touched,
    } = scratch;
    let mut ranges = CellRanges {
        ranges: cell_ranges,
        touched,
        touched_count: 0,
        x_first,
        x_last,
        z_first,
        z_last,
        box_width,
    };
    // Which cells a point on a cell line belongs to: those on whichever sides of the line the
    // triangle extends to; a face lying on the line itself goes to the side opposite its
    // outward normal, where its solid is (a single-sided wall still blocks one cell, and a
    // box ending on a line does not spill into the next cell). The rule is per axis, so a
    // cell the triangle touches only diagonally at one corner is filled: it errs solid.
    let normal = (grid[1] - grid[0]).cross(grid[2] - grid[0]);
    let sides = |value: f32, low: f32, high: f32, normal: f32| -> (bool, bool) {
        let on_line = low >= value && high <= value;
        (
            low < value || (on_line && normal >= 0.0),
            high > value || (on_line && normal <= 0.0),
        )
    };
    let x_sides_at = |x: f32| sides(x, low.x, high.x, normal.x);
    let z_sides_at = |z: f32| sides(z, low.z, high.z, normal.z);
    let mut touch_sides =
        |cell_x: i32, cell_z: i32, x_sides: (bool, bool), z_sides: (bool, bool), y: f32| {
            ranges.touch_sides(cell_x, cell_z, x_sides, z_sides, y);
        };
    const OFF_LINE: (bool, bool) = (false, true);
    let side_of = |value: f32, cell: i32, on: &dyn Fn(f32) -> (bool, bool)| {
        if cell as f32 == value {
            on(value)
        } else {
            OFF_LINE
        }
    };

    // Triangle corners: anywhere, possibly on lines.
    for corner in &grid {
        let (cell_x, cell_z) = (floor_to_i32(corner.x), floor_to_i32(corner.z));
        let (x_sides, z_sides) = (
            side_of(corner.x, cell_x, &x_sides_at),
            side_of(corner.z, cell_z, &z_sides_at),
        );
        touch_sides(cell_x, cell_z, x_sides, z_sides, corner.y);
    }
    // Edge crossings with the cell lines of each axis: one coordinate is the line itself.
    for edge in 0..3 {
        let (p, q) = (grid[edge], grid[(edge + 1) % 3]);
        let delta = q - p;
        if delta.x != 0.0 {
            let first = (floor_to_i32(p.x.min(q.x)) + 1).max(x_first);
            let last = floor_to_i32(p.x.max(q.x)).min(x_last + 1);
            let inverse = 1.0 / delta.x;
            for line in first..last + 1 {
                let t = (line as f32 - p.x) * inverse;
                let (z, y) = (p.z + delta.z * t, p.y + delta.y * t);
                let cell_z = floor_to_i32(z);
                touch_sides(
                    line,
                    cell_z,
                    x_sides_at(line as f32),
                    side_of(z, cell_z, &z_sides_at),
                    y,
                );
            }
        }
        if delta.z != 0.0 {
            let first = (floor_to_i32(p.z.min(q.z)) + 1).max(z_first);
            let last = floor_to_i32(p.z.max(q.z)).min(z_last + 1);
            let inverse = 1.0 / delta.z;
            for line in first..last + 1 {
                let t = (line as f32 - p.z) * inverse;
                let (x, y) = (p.x + delta.x * t, p.y + delta.y * t);
                let cell_x = floor_to_i32(x);
                touch_sides(
                    cell_x,
                    line,
                    side_of(x, cell_x, &x_sides_at),
                    z_sides_at(line as f32),
                    y,
                );
            }
        }
    }
    // Cell corners inside the triangle, row by row over the triangle's own extent on that
    // row; height from the triangle's plane. Walls (no horizontal extent) have none.
    if normal.y.abs() > 1e-9 * normal.length() {
        let (a, inverse_normal_y) = (grid[0], 1.0 / normal.y);
        let z_lines =
            (floor_to_i32(low.z) + 1).max(z_first)..floor_to_i32(high.z).min(z_last + 1) + 1;
        for line_z in z_lines {
            let z = line_z as f32;
            let (mut row_low, mut row_high) = (f32::INFINITY, f32::NEG_INFINITY);
            for edge in 0..3 {
                let (p, q) = (grid[edge], grid[(edge + 1) % 3]);
                if (p.z <= z && z <= q.z) || (q.z <= z && z <= p.z) {
                    let x = if p.z == q.z {
                        p.x.min(q.x)
                    } else {
                        p.x + (z - p.z) / (q.z - p.z) * (q.x - p.x)
                    };
                    let x_other = if p.z == q.z { p.x.max(q.x) } else { x };
                    row_low = row_low.min(x);
                    row_high = row_high.max(x_other);
                }
            }
            let x_lines = (floor_to_i32(row_low) + 1).max(x_first)
                ..floor_to_i32(row_high).min(x_last + 1) + 1;
            for line_x in x_lines {
                let x = line_x as f32;
                // Clamped: extrapolating a near-vertical plane must not leave the triangle.
                let y = (a.y - (normal.x * (x - a.x) + normal.z * (z - a.z)) * inverse_normal_y)
                    .clamp(low_y, high_y);
                touch_sides(line_x, line_z, (true, true), (true, true), y);
            }
        }
    }

    // One span per touched cell (different columns, so their order does not matter), then
    // restore the scratch invariant.
    let touched_count = ranges.touched_count;
    let inverse_cell_height = 1.0 / field.cell_height;
    let height_limit = SPAN_HEIGHT_MAX as f32 * field.cell_height;
    for &index in &scratch.touched[..touched_count] {
        let index = index as usize;
        let (bottom, top) = (
            scratch.ranges[index][0] - origin.y,
            scratch.ranges[index][1] - origin.y,
        );
        scratch.ranges[index] = EMPTY_RANGE;
        if top < 0.0 || bottom > height_limit {
            continue;
        }
        let x = (x_first - first_x) as usize + index % box_width;
        let z = (z_first - first_z) as usize + index / box_width;
        let span_min =
            (floor_to_i32(bottom.max(0.0) * inverse_cell_height) as u32).min(SPAN_HEIGHT_MAX - 1);
        let span_max = ((-floor_to_i32(-(top.min(height_limit) * inverse_cell_height))) as u32)
            .clamp(span_min + 1, SPAN_HEIGHT_MAX);
        field.add_span(
            x as u32,
            z as u32,
            span_min as u16,
            span_max as u16,
            area,
            merge_threshold,
        );
    }
}

/// Rasterizes every triangle, judging each one's slope first.
pub fn rasterize_triangles<'a>(
    field: &mut Heightfield,
    triangles: impl IntoIterator<Item = (&'a [Vec3; 3], AreaId)>,
    params: &RasterParams,
) {
    let mut scratch = RasterScratch::default();
    for (corners, tag) in triangles {
        let area = surface_area(corners, tag, params.walkable_slope_cos);
        rasterize_triangle(
            field,
            corners,
            area,
            params.merge_threshold_cells,
            &mut scratch,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_to_i32_is_floor_across_its_range() {
        let mut values = vec![0.0f32, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 3.5, -3.5];
        values.extend([
            0.999_999_9,
            -0.999_999_9,
            1e-7,
            -1e-7,
            4_194_303.5,
            -4_194_303.5,
        ]);
        let mut random = crate::geom::SplitMix64::new(7);
        for _ in 0..100_000 {
            let value = (random.next_f32() - 0.5) * 2.0 * 5_000.0;
            values.extend([value, value.floor(), value.floor() + 0.5]);
        }
        for value in values {
            assert_eq!(floor_to_i32(value), value.floor() as i32, "{value}");
        }
    }

    #[test]
    fn floor_triangle_fills_the_cells_it_touches() {
        // 4 x 4 grid of 1 m cells; a floor triangle at height 1.05 covering the lower-left half.
        let mut field = Heightfield::new(4, 4, Vec3::ZERO, 1.0, 0.1);
        let corners = [
            Vec3::new(0.0, 1.05, 0.0),
            Vec3::new(0.0, 1.05, 4.0),
            Vec3::new(4.0, 1.05, 0.0),
        ];
        let area = surface_area(&corners, AreaId::GROUND, 0.7);
        assert_eq!(area, 1);
        rasterize_triangle(&mut field, &corners, area, 1, &mut RasterScratch::default());
        let filled: Vec<(u32, u32)> = (0..4)
            .flat_map(|z| (0..4).map(move |x| (x, z)))
            .filter(|&(x, z)| {
                field.head(field.column_index(x, z)) != super::super::heightfield::NO_SPAN
            })
            .collect();
        // Cells the triangle overlaps: x + z <= 3. Those its hypotenuse touches at a corner
        // only (x + z == 4) are filled too: the triangle extends to both sides of each line
        // through that corner, just not into that quadrant, and the rule errs solid.
        let expected: Vec<(u32, u32)> = (0..4)
            .flat_map(|z| (0..4).map(move |x| (x, z)))
            .filter(|&(x, z)| x + z <= 4)
            .collect();
        assert_eq!(filled, expected);
        let (_, span) = field.column(0).next().unwrap();
        assert_eq!((span.min, span.max), (10, 11));
    }

    #[test]
    fn steep_triangles_are_solid_but_not_walkable() {
        let wall = [
            Vec3::new(0.0, 0.0, 0.5),
            Vec3::new(0.0, 2.0, 0.5),
            Vec3::new(2.0, 0.0, 0.5),
        ];
        assert_eq!(surface_area(&wall, AreaId::GROUND, 0.7), 0);
        let slope_30 = [
            Vec3::ZERO,
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(1.0, 30f32.to_radians().tan(), 0.0),
        ];
        assert_eq!(
            surface_area(&slope_30, AreaId::WATER, 45f32.to_radians().cos()),
            AreaId::WATER.0
        );
    }
}

#[cfg(test)]
mod agreement_tests {
    use std::path::Path;

    use super::*;
    use crate::bake::heightfield::Heightfield;
    use crate::scene::obj::{ObjOptions, load_obj};

    /// The point-set rasterizer gives the same spans as exact clipping (to one cell height of
    /// float rounding) almost everywhere; the two differ only where a face lies exactly on a
    /// cell line, which clipping gives to both sides and the point-set rule to its solid's.
    #[test]
    fn point_set_rasterizer_agrees_with_exact_clipping_on_real_levels() {
        for name in ["dungeon.obj", "nav_test.obj"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("assets/levels")
                .join(name);
            let world = load_obj(&path, &ObjOptions::default())
                .unwrap()
                .world_triangles()
                .unwrap();
            let size = world.bounds.size();
            let (cell, cell_height) = (0.3, 0.2);
            let (width, depth) = ((size.x / cell).ceil() as u32, (size.z / cell).ceil() as u32);
            let mut fast = Heightfield::new(width, depth, world.bounds.min, cell, cell_height);
            let mut exact = Heightfield::new(width, depth, world.bounds.min, cell, cell_height);
            let mut scratch = RasterScratch::default();
            for (corners, tag) in world.corners.iter().zip(&world.areas) {
                let area = surface_area(corners, *tag, 0.7);
                rasterize_triangle(&mut fast, corners, area, 4, &mut scratch);
                rasterize_triangle_clipped(&mut exact, corners, area, 4);
            }
            let (mut same, mut extra, mut different) = (0usize, 0usize, 0usize);
            for column in 0..(width * depth) as usize {
                let spans = |field: &Heightfield| {
                    field
                        .column(column)
                        .map(|(_, s)| (s.min, s.max, s.area))
                        .collect::<Vec<_>>()
                };
                let (f, e) = (spans(&fast), spans(&exact));
                if f == e {
                    same += 1;
                } else if e.is_empty() {
                    extra += 1;
                } else {
                    let close = f.len() == e.len()
                        && f.iter()
                            .zip(&e)
                            .all(|(a, b)| a.0.abs_diff(b.0) <= 1 && a.1.abs_diff(b.1) <= 1);
                    if close { same += 1 } else { different += 1 }
                }
            }
            let total = (width * depth) as usize;
            assert!(
                different * 1000 <= total,
                "{name}: {different} of {total} columns differ"
            );
            assert!(extra * 100 <= total, "{name}: {extra} extra columns");
            println!("{name}: {same} same, {extra} extra, {different} different of {total}");
        }
    }
}
