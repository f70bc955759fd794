//! Stage [`Stage::Compact`](super::Stage::Compact): the compact heightfield, the open space above each walkable solid span, with
//! links to the neighbouring open spans a body can step to.
//!
//! Inputs: the filtered [`Heightfield`]. Output: [`CompactHeightfield`], struct-of-arrays
//! over open spans, column-major like the solid field.
//!
//! Invariants: a link joins two open spans whose floors differ by at most the climb and
//! whose shared headroom is at least the body height; links are symmetric; the region,
//! distance and area columns have one entry per open span.

use glam::Vec3;

use super::config::SPAN_HEIGHT_MAX;
use super::filter::DIRECTIONS;
use super::heightfield::Heightfield;

/// "No neighbour" in [`CompactHeightfield::links`].
pub const NOT_CONNECTED: u8 = u8::MAX;

/// Most open spans one column may hold (a link stores the neighbour's layer as a `u8`).
pub const LAYERS_MAX: usize = NOT_CONNECTED as usize;

/// Open spans of walkable floors, with neighbour links.
#[derive(Clone, Debug)]
pub struct CompactHeightfield {
    /// Columns along X.
    pub width: u32,
    /// Columns along Z.
    pub depth: u32,
    /// Border cells around the tile proper (0 for a solo bake).
    pub border: u32,
    /// World position of the grid's minimum corner, metres.
    pub origin: Vec3,
    /// Horizontal cell size, metres.
    pub cell_size: f32,
    /// Vertical cell size, metres.
    pub cell_height: f32,
    /// Body height, cell heights.
    pub walkable_height: u32,
    /// Climb, cell heights.
    pub walkable_climb: u32,
    /// First open span of each column.
    pub column_first: Vec<u32>,
    /// Open spans in each column.
    pub column_count: Vec<u8>,
    /// Floor height of each open span, cell heights above the origin.
    pub floor: Vec<u16>,
    /// Headroom of each open span, cell heights (capped at 255).
    pub clearance: Vec<u8>,
    /// Per open span and direction ([`DIRECTIONS`]): the neighbour's layer within its
    /// column, or [`NOT_CONNECTED`].
    pub links: Vec<[u8; 4]>,
    /// Area per open span (0: removed).
    pub areas: Vec<u8>,
    /// Region per open span (0: none), filled by the partition stage.
    pub regions: Vec<u16>,
    /// Distance to the region boundary per open span (chamfer units: 2 per cell), filled
    /// for the watershed partition.
    pub distances: Vec<u16>,
    /// Largest value in `distances`.
    pub distance_max: u16,
}

/// Where a grid lies and how fine it is: what a compact heightfield keeps of the
/// heightfield it is built from besides the spans.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridFrame {
    /// Columns along X.
    pub width: u32,
    /// Columns along Z.
    pub depth: u32,
    /// World position of the grid's minimum corner.
    pub origin: Vec3,
    /// Cell size, metres.
    pub cell_size: f32,
    /// Cell height, metres.
    pub cell_height: f32,
}

impl GridFrame {
    /// The frame of `field`.
    pub fn of(field: &Heightfield) -> GridFrame {
        GridFrame {
            width: field.width,
            depth: field.depth,
            origin: field.origin,
            cell_size: field.cell_size,
            cell_height: field.cell_height,
        }
    }
}

impl CompactHeightfield {
    /// Builds the open spans and their links. Columns with more than [`LAYERS_MAX`] open
    /// spans keep the lowest ones (no real level stacks 255 floors in one column).
    pub fn build(
        field: &Heightfield,
        walkable_height: u32,
        walkable_climb: u32,
        border: u32,
    ) -> Self {
        CompactHeightfield::build_from_columns(
            GridFrame::of(field),
            walkable_height,
            walkable_climb,
            border,
            |column| Some((field, column)),
        )
    }

    /// [`CompactHeightfield::build`] for a grid framed by `frame` whose columns are read
    /// where `source_of(column)` says: a heightfield and its column holding the spans of
    /// that column of the grid (`None`: no spans). It is called once per column, in
    /// column order (X fastest), so a source may walk the grid alongside. A tiled bake reads a tile's columns
    /// straight from the rasterized segments around it this way, without copying them
    /// into a grid of its own first.
    pub fn build_from_columns<'a>(
        frame: GridFrame,
        walkable_height: u32,
        walkable_climb: u32,
        border: u32,
        mut source_of: impl FnMut(usize) -> Option<(&'a Heightfield, usize)>,
    ) -> Self {
        let column_total = (frame.width * frame.depth) as usize;
        let mut compact = CompactHeightfield {
            width: frame.width,
            depth: frame.depth,
            border,
            origin: frame.origin,
            cell_size: frame.cell_size,
            cell_height: frame.cell_height,
            walkable_height,
            walkable_climb,
            column_first: vec![0; column_total],
            column_count: vec![0; column_total],
            floor: Vec::new(),
            clearance: Vec::new(),
            links: Vec::new(),
            areas: Vec::new(),
            regions: Vec::new(),
            distances: Vec::new(),
            distance_max: 0,
        };
        for column in 0..column_total {
            compact.column_first[column] = compact.floor.len() as u32;
            let Some((field, source)) = source_of(column) else {
                continue;
            };
            let mut count = 0usize;
            for (_, span) in field.column(source) {
                if span.area == 0 || count == LAYERS_MAX {
                    continue;
                }
                let ceiling = if span.next == super::heightfield::NO_SPAN {
                    SPAN_HEIGHT_MAX
                } else {
                    u32::from(field.span(span.next).min)
                };
                compact.floor.push(span.max);
                compact
                    .clearance
                    .push((ceiling - u32::from(span.max)).min(255) as u8);
                compact.areas.push(span.area);
                count += 1;
            }
            compact.column_count[column] = count as u8;
        }
        let span_total = compact.floor.len();
        compact.links = vec![[NOT_CONNECTED; 4]; span_total];
        compact.regions = vec![0; span_total];
        compact.connect();
        compact
    }

    fn connect(&mut self) {
        let (width, depth) = (self.width as i32, self.depth as i32);
        let height = self.walkable_height as i32;
        let climb = self.walkable_climb as i32;
        for z in 0..depth {
            for x in 0..width {
                let column = (x + z * width) as usize;
                for span in self.column_spans(column) {
                    let floor = i32::from(self.floor[span]);
                    let ceiling = floor + i32::from(self.clearance[span]);
                    for (direction, (dx, dz)) in DIRECTIONS.iter().enumerate() {
                        let (nx, nz) = (x + dx, z + dz);
                        if nx < 0 || nz < 0 || nx >= width || nz >= depth {
                            continue;
                        }
                        let neighbour_column = (nx + nz * width) as usize;
                        let first = self.column_first[neighbour_column] as usize;
                        for layer in 0..self.column_count[neighbour_column] as usize {
                            let neighbour = first + layer;
                            let neighbour_floor = i32::from(self.floor[neighbour]);
                            let neighbour_ceiling =
                                neighbour_floor + i32::from(self.clearance[neighbour]);
                            let headroom =
                                ceiling.min(neighbour_ceiling) - floor.max(neighbour_floor);
                            if headroom >= height && (neighbour_floor - floor).abs() <= climb {
                                self.links[span][direction] = layer as u8;
                                break;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Open span indices of a column.
    #[inline]
    pub fn column_spans(&self, column: usize) -> std::ops::Range<usize> {
        let first = self.column_first[column] as usize;
        first..first + self.column_count[column] as usize
    }

    /// The neighbour of open span `span` (in column `(x, z)`) in `direction`, if linked.
    #[inline]
    pub fn neighbour(&self, x: u32, z: u32, span: usize, direction: usize) -> Option<usize> {
        let layer = self.links[span][direction];
        if layer == NOT_CONNECTED {
            return None;
        }
        let (dx, dz) = DIRECTIONS[direction];
        let column = (x as i32 + dx) as usize + (z as i32 + dz) as usize * self.width as usize;
        Some(self.column_first[column] as usize + layer as usize)
    }

    /// Number of open spans.
    pub fn span_count(&self) -> usize {
        self.floor.len()
    }

    /// Calls `visit(x, z, span)` for every open span, row by row.
    pub fn for_each_span(&self, mut visit: impl FnMut(u32, u32, usize)) {
        for z in 0..self.depth {
            for x in 0..self.width {
                let column = (x + z * self.width) as usize;
                for span in self.column_spans(column) {
                    visit(x, z, span);
                }
            }
        }
    }
}

/// Chamfer distance from a set of seed spans (distance 0), in units of half a cell: 2 per
/// straight step, 3 per diagonal step, over linked spans only. Two sweeps, forward then
/// backward, as in a classic two-pass distance transform.
pub fn chamfer_distance(compact: &CompactHeightfield, distances: &mut [u16]) {
    let step = |distances: &mut [u16], span: usize, via: usize, cost: u16| {
        let candidate = distances[via].saturating_add(cost);
        if candidate < distances[span] {
            distances[span] = candidate;
        }
    };
    // Forward: neighbours at -X (direction 0) and -Z (direction 3), with their diagonals.
    compact.for_each_span(|x, z, span| {
        if let Some(west) = compact.neighbour(x, z, span, 0) {
            step(distances, span, west, 2);
            if let Some(south_west) = compact.neighbour(x - 1, z, west, 3) {
                step(distances, span, south_west, 3);
            }
        }
        if let Some(south) = compact.neighbour(x, z, span, 3) {
            step(distances, span, south, 2);
            if let Some(south_east) = compact.neighbour(x, z - 1, south, 2) {
                step(distances, span, south_east, 3);
            }
        }
    });
    // Backward: neighbours at +X (direction 2) and +Z (direction 1), with their diagonals.
    for z in (0..compact.depth).rev() {
        for x in (0..compact.width).rev() {
            let column = (x + z * compact.width) as usize;
            for span in compact.column_spans(column).rev() {
                if let Some(east) = compact.neighbour(x, z, span, 2) {
                    step(distances, span, east, 2);
                    if let Some(north_east) = compact.neighbour(x + 1, z, east, 1) {
                        step(distances, span, north_east, 3);
                    }
                }
                if let Some(north) = compact.neighbour(x, z, span, 1) {
                    step(distances, span, north, 2);
                    if let Some(north_west) = compact.neighbour(x, z + 1, north, 0) {
                        step(distances, span, north_west, 3);
                    }
                }
            }
        }
    }
}
