//! Output of [`Stage::Rasterize`](super::Stage::Rasterize): the solid heightfield, a column of solid spans per grid cell.
//!
//! Invariants: spans in a column are sorted by height and never overlap (touching spans
//! stay separate only if a gap separates them); `min < max`; heights are cell heights above
//! the grid origin.

use glam::Vec3;

/// End of a column's span list.
pub const NO_SPAN: u32 = u32::MAX;

/// A solid interval of one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Bottom of the solid, cell heights above the origin.
    pub min: u16,
    /// Top of the solid (the floor a body would stand on), cell heights above the origin.
    pub max: u16,
    /// Area of the top surface ([`AreaId`](crate::ids::AreaId) value; 0 = not walkable).
    pub area: u8,
    /// Next span up the column, or [`NO_SPAN`].
    pub next: u32,
}

/// A grid of columns of solid spans, stored as linked lists in one pool.
#[derive(Clone, Debug)]
pub struct Heightfield {
    /// Columns along X.
    pub width: u32,
    /// Columns along Z.
    pub depth: u32,
    /// World position of the grid's minimum corner, metres.
    pub origin: Vec3,
    /// The level-wide cell frame: world position of global column (0, 0), metres. Every grid
    /// of one bake shares it, so a column rasterizes to the same spans whichever grid (solo,
    /// tile, tile border) holds it.
    pub frame_origin: Vec3,
    /// Global column indices (X, Z) of this grid's first column in the frame.
    pub first_column: [i32; 2],
    /// Horizontal cell size, metres.
    pub cell_size: f32,
    /// Vertical cell size, metres.
    pub cell_height: f32,
    heads: Vec<u32>,
    spans: Vec<Span>,
    free: u32,
}

impl Heightfield {
    /// An empty grid that is its own frame. The caller has checked the column count against
    /// [`GRID_COLUMNS_MAX`](super::config::GRID_COLUMNS_MAX).
    pub fn new(width: u32, depth: u32, origin: Vec3, cell_size: f32, cell_height: f32) -> Self {
        Heightfield::in_frame(width, depth, origin, [0, 0], cell_size, cell_height)
    }

    /// An empty grid of `width` x `depth` columns starting at global column `first_column`
    /// of the frame whose column (0, 0) starts at `frame_origin`.
    pub fn in_frame(
        width: u32,
        depth: u32,
        frame_origin: Vec3,
        first_column: [i32; 2],
        cell_size: f32,
        cell_height: f32,
    ) -> Self {
        let origin = frame_origin
            + Vec3::new(
                first_column[0] as f32 * cell_size,
                0.0,
                first_column[1] as f32 * cell_size,
            );
        Heightfield {
            width,
            depth,
            origin,
            frame_origin,
            first_column,
            cell_size,
            cell_height,
            heads: vec![NO_SPAN; width as usize * depth as usize],
            spans: Vec::new(),
            free: NO_SPAN,
        }
    }

    /// Index of column `(x, z)`.
    #[inline]
    pub fn column_index(&self, x: u32, z: u32) -> usize {
        x as usize + z as usize * self.width as usize
    }

    /// First span of a column, or [`NO_SPAN`].
    #[inline]
    pub fn head(&self, column: usize) -> u32 {
        self.heads[column]
    }

    /// A span by pool index.
    #[inline]
    pub fn span(&self, index: u32) -> &Span {
        &self.spans[index as usize]
    }

    /// A span by pool index, mutable (area only is meant to change).
    #[inline]
    pub fn span_mut(&mut self, index: u32) -> &mut Span {
        &mut self.spans[index as usize]
    }

    /// Iterates a column's spans bottom-up as `(pool index, span)`.
    pub fn column(&self, column: usize) -> impl Iterator<Item = (u32, Span)> + '_ {
        let mut cursor = self.heads[column];
        std::iter::from_fn(move || {
            if cursor == NO_SPAN {
                return None;
            }
            let span = self.spans[cursor as usize];
            let index = cursor;
            cursor = span.next;
            Some((index, span))
        })
    }

    /// Number of live spans.
    pub fn span_count(&self) -> usize {
        self.heads
            .iter()
            .map(|&head| {
                let mut count = 0;
                let mut cursor = head;
                while cursor != NO_SPAN {
                    count += 1;
                    cursor = self.spans[cursor as usize].next;
                }
                count
            })
            .sum()
    }

    /// Whether two grids hold the same spans in the same columns.
    pub fn same_spans(&self, other: &Heightfield) -> bool {
        self.width == other.width
            && self.depth == other.depth
            && (0..self.heads.len()).all(|column| {
                self.column(column)
                    .map(|(_, s)| (s.min, s.max, s.area))
                    .eq(other.column(column).map(|(_, s)| (s.min, s.max, s.area)))
            })
    }

    fn allocate(&mut self, span: Span) -> u32 {
        if self.free != NO_SPAN {
            let index = self.free;
            self.free = self.spans[index as usize].next;
            self.spans[index as usize] = span;
            index
        } else {
            self.spans.push(span);
            self.spans.len() as u32 - 1
        }
    }

    fn release(&mut self, index: u32) {
        self.spans[index as usize].next = self.free;
        self.free = index;
    }

    /// Adds a solid interval to column `(x, z)`, merging it with every span it overlaps or
    /// touches.
    ///
    /// Area of a merged span: the area of whichever top is higher, or the larger area id
    /// when the two tops lie within `merge_threshold` cell heights (a walkable floor is not
    /// lost under a coplanar unwalkable sliver). Unlike a first-come rule, this gives the same
    /// result whatever order the triangles arrive in, for pairwise merges.
    pub fn add_span(&mut self, x: u32, z: u32, min: u16, max: u16, area: u8, merge_threshold: u16) {
        let column = self.column_index(x, z);
        let merge_area = |into: &mut Span, other_max: u16, other_area: u8| {
            into.area = if into.max.abs_diff(other_max) <= merge_threshold {
                into.area.max(other_area)
            } else if other_max > into.max {
                other_area
            } else {
                into.area
            };
        };
        // Find the first span that is not entirely below the new one.
        let mut previous = NO_SPAN;
        let mut cursor = self.heads[column];
        while cursor != NO_SPAN && self.spans[cursor as usize].max < min {
            previous = cursor;
            cursor = self.spans[cursor as usize].next;
        }
        if cursor == NO_SPAN || self.spans[cursor as usize].min > max {
            // No overlap: link a new span before `cursor`.
            let index = self.allocate(Span {
                min,
                max,
                area,
                next: cursor,
            });
            if previous == NO_SPAN {
                self.heads[column] = index;
            } else {
                self.spans[previous as usize].next = index;
            }
            return;
        }
        // Merge into the first overlapping span in place (the common case when the triangles
        // of one wall or floor meet in a column), then absorb any later ones it now reaches.
        let mut merged = self.spans[cursor as usize];
        let incoming = Span {
            min,
            max,
            area,
            next: NO_SPAN,
        };
        merge_area(&mut merged, incoming.max, incoming.area);
        merged.min = merged.min.min(min);
        merged.max = merged.max.max(max);
        let mut next = merged.next;
        while next != NO_SPAN && self.spans[next as usize].min <= merged.max {
            let absorbed = self.spans[next as usize];
            merge_area(&mut merged, absorbed.max, absorbed.area);
            merged.max = merged.max.max(absorbed.max);
            let after = absorbed.next;
            self.release(next);
            next = after;
        }
        merged.next = next;
        self.spans[cursor as usize] = merged;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column_spans(field: &Heightfield) -> Vec<(u16, u16, u8)> {
        field
            .column(0)
            .map(|(_, s)| (s.min, s.max, s.area))
            .collect()
    }

    #[test]
    fn spans_sort_and_merge() {
        let mut field = Heightfield::new(1, 1, Vec3::ZERO, 0.3, 0.2);
        field.add_span(0, 0, 10, 12, 1, 1);
        field.add_span(0, 0, 0, 2, 1, 1);
        field.add_span(0, 0, 5, 6, 0, 1);
        assert_eq!(column_spans(&field), [(0, 2, 1), (5, 6, 0), (10, 12, 1)]);
        // Overlapping the top two: the walkable top at 12 is higher by more than 1: it wins.
        field.add_span(0, 0, 6, 9, 0, 1);
        assert_eq!(column_spans(&field), [(0, 2, 1), (5, 9, 0), (10, 12, 1)]);
        field.add_span(0, 0, 8, 11, 0, 1);
        assert_eq!(column_spans(&field), [(0, 2, 1), (5, 12, 1)]);
        // An unwalkable sliver within the threshold of a walkable top keeps it walkable,
        // added in either order.
        field.add_span(0, 0, 1, 3, 0, 1);
        assert_eq!(column_spans(&field), [(0, 3, 1), (5, 12, 1)]);
        // Freed pool slots are reused.
        assert_eq!(field.span_count(), 2);
    }
}
