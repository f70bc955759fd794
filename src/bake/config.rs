//! Bake configuration: world metres and degrees in, validated cell units out.
//!
//! [`BakeConfig`] is what a level designer writes; [`BakeConfig::validate`] checks every
//! field against its documented limit and converts it with the spec's rounding (spec 002,
//! "导航烘焙的数据交接"): radius `ceil(r / cs)` and clear height `ceil(h / ch)` round up to
//! protect the body, climb `floor(c / ch)` rounds down to protect the climbing ability.

/// Ratios within this of an integer count as that integer before rounding, so that
/// `0.4 / 0.1` (3.9999998 in `f32`) is 4 cells, not 3.
pub const ROUNDING_SLACK: f32 = 1.0e-4;

/// Largest number of columns in one voxel grid (a solo bake, or one tile with its border).
/// Each column costs at least 4 bytes before any span exists; 2^24 columns is a 4 km square
/// at 1 m cells or a 410 m square at 0.1 m cells. A larger level must be tiled.
pub const GRID_COLUMNS_MAX: u64 = 1 << 24;

/// Most cells along either side of one voxel grid: a tile's vertices are stored as 16-bit
/// cell coordinates, so a solo bake 100 km long at half-metre cells (200,000 cells) must
/// be tiled.
pub const GRID_SIDE_MAX: u64 = u16::MAX as u64;

/// The longest length a setting may give, metres: the world's width (twice
/// [`COORDINATE_MAX_M`](crate::geom::limits::COORDINATE_MAX_M)).
pub const LENGTH_MAX_M: f32 = 2.0 * crate::geom::limits::COORDINATE_MAX_M;

/// Largest number of tiles in one tiled bake.
pub const TILE_COUNT_MAX: u64 = 1 << 16;

/// Largest span height in cells (heights are stored as `u16`).
pub const SPAN_HEIGHT_MAX: u32 = u16::MAX as u32;

/// How walkable cells are grouped into regions before contours are traced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Partition {
    /// Watershed over the distance field: the best-shaped regions (few, round polygons);
    /// Recast's default.
    #[default]
    Watershed,
    /// Monotone sweep: faster and never leaves holes, but gives long thin regions.
    Monotone,
}

/// Everything the baker needs, in world metres and degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BakeConfig {
    /// Horizontal voxel size. Units: m. Limit: 0.01..=10.
    pub cell_size_m: f32,
    /// Vertical voxel size. Units: m. Limit: 0.005..=10.
    pub cell_height_m: f32,
    /// Body radius: walkable space is eroded by it. Units: m. Limit: 0..=50.
    pub agent_radius_m: f32,
    /// Body height: spaces with less headroom are not walkable. Units: m. Limit: > 0, <= 100.
    pub agent_height_m: f32,
    /// Highest step the agent climbs. Units: m. Limit: 0..=100.
    pub agent_max_climb_m: f32,
    /// Steepest walkable slope. Units: degrees. Limit: 0..90.
    pub agent_max_slope_deg: f32,
    /// Regions smaller than this are removed (unless they touch a tile border). Units: m².
    /// Limit: >= 0.
    pub region_min_area_m2: f32,
    /// Regions smaller than this are merged into a neighbour when possible. Units: m².
    /// Limit: >= 0.
    pub region_merge_area_m2: f32,
    /// Longest polygon edge along a wall (0: no limit). Units: m. Limit: >= 0.
    pub edge_max_length_m: f32,
    /// Largest distance a simplified contour strays from the voxel outline. Units: m.
    /// Limit: >= 0, <= 100.
    pub edge_max_error_m: f32,
    /// Largest number of vertices per polygon. Limit: 3..=6.
    pub verts_per_poly_max: usize,
    /// Spacing of the height samples of the detail mesh (0: polygon vertices and edges
    /// only). Units: m. Limit: 0, or >= 0.9 cells.
    pub detail_sample_distance_m: f32,
    /// Largest height error the detail mesh may leave against the voxel surface. Units: m.
    /// Limit: >= 0.
    pub detail_sample_max_error_m: f32,
    /// Tile edge length (`None`: one tile covering the level, a "solo" bake). Units: cells.
    /// Limit: 16..=4096.
    pub tile_size_cells: Option<u32>,
    /// Region partition.
    pub partition: Partition,
}

/// A named starting point for [`BakeConfig`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// RecastDemo's defaults: cell 0.3, cell height 0.2, height 2.0, radius 0.6, climb 0.9,
    /// slope 45°, region min 8, merge 20 (cells, squared), edge length 12, edge error 1.3
    /// cells, 6 verts per polygon, detail sample 6 cells, detail error 1 cell height.
    Recast,
    /// The guard of specs 000-004: radius 0.4, height 1.8, cell 0.2, cell height 0.1,
    /// climb 0.4, slope 45°, the rest as [`Preset::Recast`] (in cells).
    Guard,
}

impl BakeConfig {
    /// RecastDemo's defaults with a given cell size and cell height: the region sizes, edge
    /// error and detail figures are RecastDemo's cell counts converted to metres.
    fn recast_counts(cell_size_m: f32, cell_height_m: f32) -> BakeConfig {
        BakeConfig {
            cell_size_m,
            cell_height_m,
            agent_radius_m: 0.6,
            agent_height_m: 2.0,
            agent_max_climb_m: 0.9,
            agent_max_slope_deg: 45.0,
            region_min_area_m2: (8.0 * cell_size_m).powi(2),
            region_merge_area_m2: (20.0 * cell_size_m).powi(2),
            edge_max_length_m: 12.0,
            edge_max_error_m: 1.3 * cell_size_m,
            verts_per_poly_max: 6,
            detail_sample_distance_m: 6.0 * cell_size_m,
            detail_sample_max_error_m: 1.0 * cell_height_m,
            tile_size_cells: None,
            partition: Partition::Watershed,
        }
    }

    /// The configuration of a preset (solo; set `tile_size_cells` to tile it).
    pub fn preset(preset: Preset) -> BakeConfig {
        match preset {
            Preset::Recast => BakeConfig::recast_counts(0.3, 0.2),
            Preset::Guard => BakeConfig {
                agent_radius_m: 0.4,
                agent_height_m: 1.8,
                agent_max_climb_m: 0.4,
                ..BakeConfig::recast_counts(0.2, 0.1)
            },
        }
    }

    /// A starting point for an agent: cell size `r / 2`, cell height half of that (the
    /// spec's suggested start), climb a quarter of the height, slope 45°, the rest as
    /// RecastDemo in cells.
    pub fn for_agent(radius_m: f32, height_m: f32) -> BakeConfig {
        let cell_size_m = radius_m * 0.5;
        BakeConfig {
            agent_radius_m: radius_m,
            agent_height_m: height_m,
            agent_max_climb_m: height_m * 0.25,
            ..BakeConfig::recast_counts(cell_size_m, cell_size_m * 0.5)
        }
    }

    /// Checks every field and converts to cells.
    pub fn validate(&self) -> Result<ValidBakeConfig, BakeConfigError> {
        let check = |field: &'static str, value: f32, ok: bool, limit: &'static str| {
            if ok && value.is_finite() {
                Ok(())
            } else {
                Err(BakeConfigError::OutOfRange {
                    field,
                    value,
                    limit,
                })
            }
        };
        let c = self;
        check(
            "cell_size_m",
            c.cell_size_m,
            (0.01..=10.0).contains(&c.cell_size_m),
            "0.01..=10",
        )?;
        check(
            "cell_height_m",
            c.cell_height_m,
            (0.005..=10.0).contains(&c.cell_height_m),
            "0.005..=10",
        )?;
        check(
            "agent_radius_m",
            c.agent_radius_m,
            (0.0..=50.0).contains(&c.agent_radius_m),
            "0..=50",
        )?;
        check(
            "agent_height_m",
            c.agent_height_m,
            c.agent_height_m > 0.0 && c.agent_height_m <= 100.0,
            "> 0 and <= 100",
        )?;
        check(
            "agent_max_climb_m",
            c.agent_max_climb_m,
            (0.0..=100.0).contains(&c.agent_max_climb_m),
            "0..=100",
        )?;
        check(
            "agent_max_slope_deg",
            c.agent_max_slope_deg,
            (0.0..90.0).contains(&c.agent_max_slope_deg),
            "0..90",
        )?;
        // Areas and lengths become cell counts: bounded so every count fits its integer
        // (a region's cells in u32, an edge's squared length in i64) instead of wrapping.
        let area_cells_max = u32::MAX as f32 * c.cell_size_m * c.cell_size_m;
        check(
            "region_min_area_m2",
            c.region_min_area_m2,
            (0.0..=area_cells_max).contains(&c.region_min_area_m2),
            ">= 0, at most 4e9 cells",
        )?;
        check(
            "region_merge_area_m2",
            c.region_merge_area_m2,
            (0.0..=area_cells_max).contains(&c.region_merge_area_m2),
            ">= 0, at most 4e9 cells",
        )?;
        check(
            "edge_max_length_m",
            c.edge_max_length_m,
            (0.0..=LENGTH_MAX_M).contains(&c.edge_max_length_m),
            "0..=2e5 (the world's width)",
        )?;
        check(
            "edge_max_error_m",
            c.edge_max_error_m,
            (0.0..=100.0).contains(&c.edge_max_error_m),
            "0..=100",
        )?;
        if !(3..=6).contains(&c.verts_per_poly_max) {
            return Err(BakeConfigError::OutOfRange {
                field: "verts_per_poly_max",
                value: c.verts_per_poly_max as f32,
                limit: "3..=6",
            });
        }
        let sample_ok = c.detail_sample_distance_m == 0.0
            || (0.9 * c.cell_size_m..=LENGTH_MAX_M).contains(&c.detail_sample_distance_m);
        check(
            "detail_sample_distance_m",
            c.detail_sample_distance_m,
            sample_ok,
            "0, or 0.9 x cell_size_m..=2e5",
        )?;
        check(
            "detail_sample_max_error_m",
            c.detail_sample_max_error_m,
            (0.0..=LENGTH_MAX_M).contains(&c.detail_sample_max_error_m),
            "0..=2e5 (the world's width)",
        )?;
        if let Some(tile) = c.tile_size_cells {
            if !(16..=4096).contains(&tile) {
                return Err(BakeConfigError::OutOfRange {
                    field: "tile_size_cells",
                    value: tile as f32,
                    limit: "16..=4096",
                });
            }
        }

        let walkable_radius_cells = ceil_cells(c.agent_radius_m / c.cell_size_m);
        let walkable_height_cells = ceil_cells(c.agent_height_m / c.cell_height_m);
        let walkable_climb_cells = floor_cells(c.agent_max_climb_m / c.cell_height_m);
        if walkable_height_cells > 255 {
            return Err(BakeConfigError::OutOfRange {
                field: "agent_height_m",
                value: c.agent_height_m,
                limit: "at most 255 cell heights (raise cell_height_m)",
            });
        }
        let cell_area_m2 = c.cell_size_m * c.cell_size_m;
        Ok(ValidBakeConfig {
            config: *c,
            walkable_radius_cells,
            walkable_height_cells,
            walkable_climb_cells,
            walkable_slope_cos: c.agent_max_slope_deg.to_radians().cos(),
            region_min_cells: (c.region_min_area_m2 / cell_area_m2).round() as u32,
            region_merge_cells: (c.region_merge_area_m2 / cell_area_m2).round() as u32,
            edge_max_length_cells: (c.edge_max_length_m / c.cell_size_m).round() as u32,
            edge_max_error_cells: c.edge_max_error_m / c.cell_size_m,
            border_cells: c.tile_size_cells.map_or(0, |_| walkable_radius_cells + 3),
        })
    }
}

/// `ceil(ratio)` with [`ROUNDING_SLACK`]: rounds up, protecting the body's volume.
pub fn ceil_cells(ratio: f32) -> u32 {
    (ratio - ROUNDING_SLACK).ceil().max(0.0) as u32
}

/// `floor(ratio)` with [`ROUNDING_SLACK`]: rounds down, protecting the climbing ability.
pub fn floor_cells(ratio: f32) -> u32 {
    (ratio + ROUNDING_SLACK).floor().max(0.0) as u32
}

/// A configuration that passed [`BakeConfig::validate`], with its values in cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidBakeConfig {
    /// The configuration as given.
    pub config: BakeConfig,
    /// Erosion radius: `ceil(agent_radius_m / cell_size_m)`. Units: cells.
    pub walkable_radius_cells: u32,
    /// Clear height: `ceil(agent_height_m / cell_height_m)`. Units: cell heights.
    pub walkable_height_cells: u32,
    /// Climb: `floor(agent_max_climb_m / cell_height_m)`. Units: cell heights.
    pub walkable_climb_cells: u32,
    /// Cosine of the steepest walkable slope: a triangle is walkable when its unit normal's
    /// Up component exceeds it.
    pub walkable_slope_cos: f32,
    /// Smallest region kept. Units: cells.
    pub region_min_cells: u32,
    /// Regions below this merge into a neighbour. Units: cells.
    pub region_merge_cells: u32,
    /// Longest contour edge along a wall (0: no limit). Units: cells.
    pub edge_max_length_cells: u32,
    /// Largest contour simplification error. Units: cells.
    pub edge_max_error_cells: f32,
    /// Border around each tile's grid, wide enough that erosion and the region and contour
    /// stages see the same neighbourhood as a solo bake: radius + 3. Zero for a solo bake.
    pub border_cells: u32,
}

impl ValidBakeConfig {
    /// Horizontal cell size, metres.
    pub fn cell_size_m(&self) -> f32 {
        self.config.cell_size_m
    }

    /// Vertical cell size, metres.
    pub fn cell_height_m(&self) -> f32 {
        self.config.cell_height_m
    }
}

/// A configuration field outside its documented limit.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BakeConfigError {
    /// The field, its value and the limit it broke.
    #[error("bake config: {field} = {value} is outside its limit ({limit})")]
    OutOfRange {
        /// Field name as in [`BakeConfig`].
        field: &'static str,
        /// The value given.
        value: f32,
        /// The documented limit.
        limit: &'static str,
    },
}
