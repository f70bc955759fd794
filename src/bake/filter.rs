//! Stage [`Stage::Filter`](super::Stage::Filter): walkability filters on the solid heightfield.
//!
//! Three passes:
//! 1. low obstacles: an unwalkable top within climb of a walkable top directly below it
//!    becomes walkable (curbs, stair nosings, a plank on the floor);
//! 2. low ceilings: a walkable top with less headroom than the body height is not walkable;
//! 3. ledges: a walkable top next to a drop deeper than the climb, or on a column whose
//!    reachable neighbours differ by more than the climb (a steep heap of boxes), is not
//!    walkable.
//!
//! Pass 1 must come first (it makes spans walkable). Passes 2 and 3 only clear flags, and the
//! ledge test reads its neighbours' geometry, never their flags, so they commute: the two
//! per-column passes run right after rasterization (once per column, even in a tiled bake)
//! and the ledge pass, which needs neighbours, on a grid that has them: a tiled bake's
//! segments, each with a one-column margin (once per column again), or a tile rebuilt alone
//! on its bordered grid.

use super::config::SPAN_HEIGHT_MAX;
use super::heightfield::{Heightfield, NO_SPAN};

/// The four horizontal neighbours as `(dx, dz)`: -X, +Z, +X, -Z.
pub const DIRECTIONS: [(i32, i32); 4] = [(-1, 0), (0, 1), (1, 0), (0, -1)];

/// Pass 1: unwalkable spans just above a walkable one, within climb, become walkable.
pub fn filter_low_obstacles(field: &mut Heightfield, climb_cells: u32) {
    for column in 0..(field.width * field.depth) as usize {
        let mut previous_walkable = false;
        let mut previous_area = 0;
        let mut previous_top = 0u16;
        let mut cursor = field.head(column);
        while cursor != NO_SPAN {
            let span = *field.span(cursor);
            let walkable = span.area != 0;
            if !walkable
                && previous_walkable
                && u32::from(span.max.abs_diff(previous_top)) <= climb_cells
            {
                field.span_mut(cursor).area = previous_area;
            }
            // The flag is the span's own, before this pass: a stack of low obstacles does
            // not climb itself walkable.
            previous_walkable = walkable;
            previous_area = span.area;
            previous_top = span.max;
            cursor = span.next;
        }
    }
}

/// Pass 2: walkable tops next to drops deeper than the climb, or on steep piles, become
/// unwalkable. Columns outside the grid count as a bottomless drop.
pub fn filter_ledges(field: &mut Heightfield, walkable_height_cells: u32, climb_cells: u32) {
    let (width, depth) = (field.width as i32, field.depth as i32);
    let height = walkable_height_cells as i32;
    let climb = climb_cells as i32;
    let top_of = |field: &Heightfield, index: u32| -> i32 {
        let span = field.span(index);
        if span.next == NO_SPAN {
            SPAN_HEIGHT_MAX as i32
        } else {
            field.span(span.next).min as i32
        }
    };
    let mut to_clear: Vec<u32> = Vec::new();
    for z in 0..depth {
        for x in 0..width {
            let column = field.column_index(x as u32, z as u32);
            let mut cursor = field.head(column);
            while cursor != NO_SPAN {
                let span = *field.span(cursor);
                if span.area == 0 {
                    cursor = span.next;
                    continue;
                }
                let floor = span.max as i32;
                let ceiling = top_of(field, cursor);
                let mut lowest_drop = i32::MAX;
                let (mut reachable_low, mut reachable_high) = (floor, floor);
                for (dx, dz) in DIRECTIONS {
                    // One drop deeper than the climb decides it: no need to look further.
                    if lowest_drop < -climb {
                        break;
                    }
                    let (nx, nz) = (x + dx, z + dz);
                    if nx < 0 || nz < 0 || nx >= width || nz >= depth {
                        lowest_drop = lowest_drop.min(-climb - 1);
                        continue;
                    }
                    let neighbour_column = field.column_index(nx as u32, nz as u32);
                    let mut neighbour = field.head(neighbour_column);
                    // The gap below the neighbour's first span reaches down forever.
                    let first_bottom = if neighbour == NO_SPAN {
                        SPAN_HEIGHT_MAX as i32
                    } else {
                        field.span(neighbour).min as i32
                    };
                    if ceiling.min(first_bottom) - floor.max(-climb - 1) > height {
                        lowest_drop = lowest_drop.min(-climb - 1 - floor);
                    }
                    while neighbour != NO_SPAN {
                        let neighbour_floor = field.span(neighbour).max as i32;
                        // Floors rise up the column: none above our ceiling can share headroom.
                        if neighbour_floor >= ceiling {
                            break;
                        }
                        let neighbour_ceiling = top_of(field, neighbour);
                        if ceiling.min(neighbour_ceiling) - floor.max(neighbour_floor) > height {
                            let step = neighbour_floor - floor;
                            lowest_drop = lowest_drop.min(step);
                            if step.abs() <= climb {
                                reachable_low = reachable_low.min(neighbour_floor);
                                reachable_high = reachable_high.max(neighbour_floor);
                            }
                        }
                        neighbour = field.span(neighbour).next;
                    }
                }
                if lowest_drop < -climb || reachable_high - reachable_low > climb {
                    to_clear.push(cursor);
                }
                cursor = span.next;
            }
        }
    }
    // Cleared after the sweep so every span is judged against the unfiltered neighbourhood.
    for index in to_clear {
        field.span_mut(index).area = 0;
    }
}

/// Pass 3: walkable tops with less headroom than the body height become unwalkable.
pub fn filter_low_ceilings(field: &mut Heightfield, walkable_height_cells: u32) {
    for column in 0..(field.width * field.depth) as usize {
        let mut cursor = field.head(column);
        while cursor != NO_SPAN {
            let span = *field.span(cursor);
            let ceiling = if span.next == NO_SPAN {
                SPAN_HEIGHT_MAX
            } else {
                u32::from(field.span(span.next).min)
            };
            if ceiling - u32::from(span.max) < walkable_height_cells {
                field.span_mut(cursor).area = 0;
            }
            cursor = span.next;
        }
    }
}
