//! Bake flags shared by every subcommand that bakes.

use clap::{Args, ValueEnum};
use waymark::bake::{BakeConfig, Partition, Preset};

/// Named starting points.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PresetArg {
    /// RecastDemo's defaults (cell 0.3, height 2.0, radius 0.6, climb 0.9, ...).
    Recast,
    /// The guard of specs 000-004 (radius 0.4, height 1.8, cell 0.2, climb 0.4, ...).
    Guard,
}

/// Region partition.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PartitionArg {
    /// Watershed over the distance field (Recast's default).
    Watershed,
    /// Monotone row sweep (faster, thinner polygons).
    Monotone,
}

/// Agent and voxel settings. A preset sets them all; an explicit flag overrides it.
#[derive(Args, Debug, Default, Clone)]
pub struct BakeArgs {
    /// Starting settings (default: guard).
    #[arg(long, value_enum)]
    pub preset: Option<PresetArg>,
    /// Agent radius, metres.
    #[arg(long, value_name = "M")]
    pub agent_radius: Option<f32>,
    /// Agent height, metres.
    #[arg(long, value_name = "M")]
    pub agent_height: Option<f32>,
    /// Highest step the agent climbs, metres.
    #[arg(long, value_name = "M")]
    pub max_climb: Option<f32>,
    /// Steepest walkable slope, degrees.
    #[arg(long, value_name = "DEG")]
    pub max_slope: Option<f32>,
    /// Horizontal voxel size, metres.
    #[arg(long, value_name = "M")]
    pub cell_size: Option<f32>,
    /// Vertical voxel size, metres.
    #[arg(long, value_name = "M")]
    pub cell_height: Option<f32>,
    /// Tile size in cells (omit for a solo bake; 0 also means solo).
    #[arg(long, value_name = "CELLS")]
    pub tile_size: Option<u32>,
    /// Smallest region kept, m².
    #[arg(long, value_name = "M2")]
    pub region_min_area: Option<f32>,
    /// Regions below this merge into a neighbour, m².
    #[arg(long, value_name = "M2")]
    pub region_merge_area: Option<f32>,
    /// Longest polygon edge along a wall, metres (0: unlimited).
    #[arg(long, value_name = "M")]
    pub edge_max_length: Option<f32>,
    /// Largest contour simplification error, metres.
    #[arg(long, value_name = "M")]
    pub edge_max_error: Option<f32>,
    /// Most vertices per polygon (3..=6).
    #[arg(long, value_name = "N")]
    pub verts_per_poly: Option<usize>,
    /// Detail mesh sample spacing, metres (0: none).
    #[arg(long, value_name = "M")]
    pub detail_sample_distance: Option<f32>,
    /// Detail mesh height error, metres.
    #[arg(long, value_name = "M")]
    pub detail_max_error: Option<f32>,
    /// Region partition.
    #[arg(long, value_enum)]
    pub partition: Option<PartitionArg>,
}

impl BakeArgs {
    /// The flags given, as typed: a command that loads a baked `.wmnav` refuses them
    /// rather than ignore them.
    pub fn given(&self) -> Vec<&'static str> {
        [
            ("--preset", self.preset.is_some()),
            ("--agent-radius", self.agent_radius.is_some()),
            ("--agent-height", self.agent_height.is_some()),
            ("--max-climb", self.max_climb.is_some()),
            ("--max-slope", self.max_slope.is_some()),
            ("--cell-size", self.cell_size.is_some()),
            ("--cell-height", self.cell_height.is_some()),
            ("--tile-size", self.tile_size.is_some()),
            ("--region-min-area", self.region_min_area.is_some()),
            ("--region-merge-area", self.region_merge_area.is_some()),
            ("--edge-max-length", self.edge_max_length.is_some()),
            ("--edge-max-error", self.edge_max_error.is_some()),
            ("--verts-per-poly", self.verts_per_poly.is_some()),
            (
                "--detail-sample-distance",
                self.detail_sample_distance.is_some(),
            ),
            ("--detail-max-error", self.detail_max_error.is_some()),
            ("--partition", self.partition.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect()
    }

    /// The configuration: the preset, then each explicit flag.
    pub fn config(&self) -> BakeConfig {
        let preset = match self.preset.unwrap_or(PresetArg::Guard) {
            PresetArg::Recast => Preset::Recast,
            PresetArg::Guard => Preset::Guard,
        };
        let mut config = BakeConfig::preset(preset);
        let set = |target: &mut f32, value: Option<f32>| {
            if let Some(value) = value {
                *target = value;
            }
        };
        set(&mut config.agent_radius_m, self.agent_radius);
        set(&mut config.agent_height_m, self.agent_height);
        set(&mut config.agent_max_climb_m, self.max_climb);
        set(&mut config.agent_max_slope_deg, self.max_slope);
        set(&mut config.cell_size_m, self.cell_size);
        set(&mut config.cell_height_m, self.cell_height);
        set(&mut config.region_min_area_m2, self.region_min_area);
        set(&mut config.region_merge_area_m2, self.region_merge_area);
        set(&mut config.edge_max_length_m, self.edge_max_length);
        set(&mut config.edge_max_error_m, self.edge_max_error);
        set(
            &mut config.detail_sample_distance_m,
            self.detail_sample_distance,
        );
        set(&mut config.detail_sample_max_error_m, self.detail_max_error);
        if let Some(count) = self.verts_per_poly {
            config.verts_per_poly_max = count;
        }
        if let Some(tile) = self.tile_size {
            config.tile_size_cells = (tile > 0).then_some(tile);
        }
        if let Some(partition) = self.partition {
            config.partition = match partition {
                PartitionArg::Watershed => Partition::Watershed,
                PartitionArg::Monotone => Partition::Monotone,
            };
        }
        config
    }
}
