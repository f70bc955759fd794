//! Stage 1: rasterize world triangles into the solid heightfield.
//!
//! Each triangle is clipped exactly against the grid, row by row and then cell by cell; the
//! clipped polygon's lowest and highest points give the solid span for that cell. The test
//! is conservative: a triangle that touches a cell at all fills it, so a thin wall is never
//! lost between cell centres (an agent must never walk through one).
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
const CLIPPED_VERTICES_MAX: usize = 12;

/// A small convex polygon on the stack.
#[derive(Clone, Copy)]
struct Clipped {
    points: [Vec3; CLIPPED_VERTICES_MAX],
    count: usize,
}

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

/// Rasterizes one triangle whose surface area is already decided.
pub fn rasterize_triangle(
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

/// Rasterizes every triangle, judging each one's slope first.
pub fn rasterize_triangles<'a>(
    field: &mut Heightfield,
    triangles: impl IntoIterator<Item = (&'a [Vec3; 3], AreaId)>,
    params: &RasterParams,
) {
    for (corners, tag) in triangles {
        let area = surface_area(corners, tag, params.walkable_slope_cos);
        rasterize_triangle(field, corners, area, params.merge_threshold_cells);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        rasterize_triangle(&mut field, &corners, area, 1);
        let filled: Vec<(u32, u32)> = (0..4)
            .flat_map(|z| (0..4).map(move |x| (x, z)))
            .filter(|&(x, z)| {
                field.head(field.column_index(x, z)) != super::super::heightfield::NO_SPAN
            })
            .collect();
        // Cells touched by the hypotenuse x + z <= 4 (touching a corner only does not count).
        let expected: Vec<(u32, u32)> = (0..4)
            .flat_map(|z| (0..4).map(move |x| (x, z)))
            .filter(|&(x, z)| x + z <= 3)
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
