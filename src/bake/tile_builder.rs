//! The bake stage chain for one tile, written once, in order.
//!
//! Inputs: the world triangles binned to the tile, the tile's grid (with its border) and the
//! validated configuration. Output: the tile's [`TileData`] and the time of each stage.
//!
//! Stages chain by value: triangles -> [`Heightfield`] -> filtered heightfield ->
//! [`CompactHeightfield`] -> eroded -> distance field -> regions -> [`ContourSet`] ->
//! [`PolyMesh`] -> detail mesh -> [`TileData`].

use std::time::Instant;

use glam::Vec3;

use super::BakeError;
use super::areas::{self, AreaVolume};
use super::compact::CompactHeightfield;
use super::config::ValidBakeConfig;
use super::contours::{ContourParams, ContourSet, build_contours};
use super::detail::{DetailParams, build_polygon_detail};
use super::heightfield::Heightfield;
use super::polymesh::{NO_VERTEX, PolyMesh, PolyParams, build_poly_mesh};
use super::regions::{RegionParams, build_distance_field, build_regions};
use super::{erode, filter, rasterize};
use crate::bake::config::Partition;
use crate::mesh::{DetailSubMesh, PolyFlags, TileData, TileHeader, TilePoly, TileSource};
use crate::scene::WorldTriangles;

/// A bake stage, in the order a tile goes through them. One list names the stages in
/// reports ([`Stage::name`]), indexes their times ([`StageTimes`]) and heads the module
/// that implements each (`//! Stage [`Stage::Erode`]: ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// World triangles into solid spans per column (`rasterize.rs`, `heightfield.rs`).
    Rasterize,
    /// Walkability filters: low obstacles, ledges, low ceilings (`filter.rs`).
    Filter,
    /// The open space above walkable spans, with links to neighbours (`compact.rs`).
    Compact,
    /// Walkable space eroded by the body radius (`erode.rs`).
    Erode,
    /// Areas marked by convex volumes (`areas.rs`).
    Areas,
    /// Distance to the nearest border, for watershed regions (`regions.rs`).
    DistanceField,
    /// Walkable spans partitioned into regions (`regions.rs`).
    Regions,
    /// Region outlines traced and simplified (`contours.rs`).
    Contours,
    /// Contours into convex polygons with adjacency (`polymesh.rs`).
    PolygonMesh,
    /// The detail mesh and the tile in world metres (`detail.rs`).
    Detail,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; STAGE_COUNT] = [
        Stage::Rasterize,
        Stage::Filter,
        Stage::Compact,
        Stage::Erode,
        Stage::Areas,
        Stage::DistanceField,
        Stage::Regions,
        Stage::Contours,
        Stage::PolygonMesh,
        Stage::Detail,
    ];

    /// The stage's name in reports (`waymark bake --json`'s `stage_ms` keys).
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Rasterize => "rasterize",
            Stage::Filter => "filter",
            Stage::Compact => "compact",
            Stage::Erode => "erode",
            Stage::Areas => "areas",
            Stage::DistanceField => "distance_field",
            Stage::Regions => "regions",
            Stage::Contours => "contours",
            Stage::PolygonMesh => "polygon_mesh",
            Stage::Detail => "detail",
        }
    }
}

/// The stages' names, in order, as named in reports.
pub const STAGE_NAMES: [&str; STAGE_COUNT] = {
    let mut names = [""; STAGE_COUNT];
    let mut index = 0;
    while index < STAGE_COUNT {
        names[index] = Stage::ALL[index].name();
        index += 1;
    }
    names
};

/// Number of stages.
pub const STAGE_COUNT: usize = 10;

/// Time spent in each stage, seconds, indexed by [`Stage`] (`times.0[stage as usize]`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes(pub [f64; STAGE_COUNT]);

impl StageTimes {
    /// Adds another tile's times.
    pub fn add(&mut self, other: &StageTimes) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine += theirs;
        }
    }

    /// Seconds spent in `stage`.
    pub fn of(&self, stage: Stage) -> f64 {
        self.0[stage as usize]
    }
}

/// Where a grid lies in the level's cell frame and which triangles reach it.
#[derive(Clone, Debug)]
pub struct TileJob {
    /// Tile column.
    pub tile_x: i32,
    /// Tile row.
    pub tile_z: i32,
    /// World position of the frame's column (0, 0), metres (the level's minimum corner).
    pub frame_origin: Vec3,
    /// Global column of the grid's first column (border included).
    pub first_column: [i32; 2],
    /// Grid columns along X including the border.
    pub grid_width: u32,
    /// Grid columns along Z including the border.
    pub grid_depth: u32,
    /// Indices of the world triangles that may touch the grid, in index order.
    pub triangles: Vec<u32>,
}

impl TileJob {
    /// World position of the grid's minimum corner.
    pub fn grid_origin(&self, cell_size: f32) -> Vec3 {
        self.frame_origin
            + Vec3::new(
                self.first_column[0] as f32 * cell_size,
                0.0,
                self.first_column[1] as f32 * cell_size,
            )
    }
}

/// [`Stage::Rasterize`], and the per-column filters of [`Stage::Filter`]: rasterizes the job's triangles into a grid
/// of the job's size, then marks low obstacles walkable and low ceilings unwalkable. Returns
/// the grid and the time of each.
pub fn rasterize_job(
    world: &WorldTriangles,
    job: &TileJob,
    config: &ValidBakeConfig,
) -> (Heightfield, StageTimes) {
    let mut times = StageTimes::default();
    let clock = Instant::now();
    let mut field = Heightfield::in_frame(
        job.grid_width,
        job.grid_depth,
        job.frame_origin,
        job.first_column,
        config.cell_size_m(),
        config.cell_height_m(),
    );
    let params = rasterize::RasterParams {
        walkable_slope_cos: config.walkable_slope_cos,
        merge_threshold_cells: config.walkable_climb_cells.min(u32::from(u16::MAX)) as u16,
    };
    let triangles = job.triangles.iter().map(|&index| {
        let index = index as usize;
        (&world.corners[index], world.areas[index])
    });
    rasterize::rasterize_triangles(&mut field, triangles, &params);
    times.0[Stage::Rasterize as usize] = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    filter::filter_low_obstacles(&mut field, config.walkable_climb_cells);
    filter::filter_low_ceilings(&mut field, config.walkable_height_cells);
    times.0[Stage::Filter as usize] = clock.elapsed().as_secs_f64();
    (field, times)
}

/// Intermediate results kept for inspection (tests and the debug renderer).
pub struct TileStages {
    /// The compact heightfield after erosion and regions.
    pub compact: CompactHeightfield,
    /// The contours.
    pub contours: ContourSet,
    /// The polygon mesh in tile cells.
    pub poly_mesh: PolyMesh,
}

/// Runs every stage for one tile.
pub fn build_tile(
    world: &WorldTriangles,
    job: &TileJob,
    config: &ValidBakeConfig,
    volumes: &[AreaVolume],
) -> Result<(TileData, StageTimes), BakeError> {
    let (tile, times, _) = build_tile_stages(world, job, config, volumes)?;
    Ok((tile, times))
}

/// Runs every stage for one tile and keeps the intermediate results.
pub fn build_tile_stages(
    world: &WorldTriangles,
    job: &TileJob,
    config: &ValidBakeConfig,
    volumes: &[AreaVolume],
) -> Result<(TileData, StageTimes, TileStages), BakeError> {
    // Stage::Rasterize (and the per-column filters of Stage::Filter): rasterize into solid spans.
    let (field, rasterize_times) = rasterize_job(world, job, config);
    let (tile, mut times, stages) =
        build_tile_from_compact(world, job, compact_field(field, config), config, volumes)?;
    times.add(&rasterize_times);
    Ok((tile, times, stages))
}

/// The stages from [`Stage::Erode`] on a compacted grid, its compaction's times added.
pub fn build_tile_from_compact(
    world: &WorldTriangles,
    job: &TileJob,
    (compact, compact_times): (CompactHeightfield, StageTimes),
    config: &ValidBakeConfig,
    volumes: &[AreaVolume],
) -> Result<(TileData, StageTimes, TileStages), BakeError> {
    let inputs = TileInputs::of(world, job);
    let (tile, mut times, stages) = finish_tile(compact, job, &inputs, config, volumes)?;
    times.add(&compact_times);
    Ok((tile, times, stages))
}

/// What the stages after [`Stage::Compact`] read of the level besides the compact
/// heightfield: the instances whose triangles reached the tile (its sources) and the
/// triangles of moving supports (for polygons' support layers). A tile cache keeps these
/// so a tile is rebuilt without the level's triangles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TileInputs {
    /// The tile's sources, by instance.
    pub sources: Vec<TileSource>,
    /// Triangles on a moving support: corners and the support's layer (support id + 1).
    pub supported: Vec<([Vec3; 3], u16)>,
}

impl TileInputs {
    /// The inputs of `job`'s tile from the level's triangles.
    pub fn of(world: &WorldTriangles, job: &TileJob) -> TileInputs {
        let mut instances: Vec<u32> = job
            .triangles
            .iter()
            .map(|&t| world.sources[t as usize].0)
            .collect();
        instances.sort_unstable();
        instances.dedup();
        let sources = instances
            .into_iter()
            .map(|instance| TileSource {
                instance,
                padding: 0,
                version: world.instances[instance as usize].source_version.0,
            })
            .collect();
        let supported = job
            .triangles
            .iter()
            .filter_map(|&t| {
                let support = world.instances[world.sources[t as usize].0 as usize].support?;
                let layer = (support.0 + 1).min(u32::from(u16::MAX)) as u16;
                Some((world.corners[t as usize], layer))
            })
            .collect();
        TileInputs { sources, supported }
    }
}

/// [`Stage::Filter`]'s ledge filter (it needs each column's neighbours) and
/// [`Stage::Compact`]: a tile's rasterized grid becomes its compact heightfield, the form
/// a tile cache keeps.
pub fn compact_field(
    mut field: Heightfield,
    config: &ValidBakeConfig,
) -> (CompactHeightfield, StageTimes) {
    let clock = Instant::now();
    filter::filter_ledges(
        &mut field,
        config.walkable_height_cells,
        config.walkable_climb_cells,
    );
    let filter_seconds = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let compact = CompactHeightfield::build(
        &field,
        config.walkable_height_cells,
        config.walkable_climb_cells,
        config.border_cells,
    );
    let mut times = StageTimes::default();
    times.0[Stage::Filter as usize] = filter_seconds;
    times.0[Stage::Compact as usize] = clock.elapsed().as_secs_f64();
    (compact, times)
}

/// Runs the stages from [`Stage::Erode`] on a tile's compact heightfield: erosion, areas,
/// partition, contours, polygons, detail; the tile placed by `job`'s grid (its triangles
/// are not read) with `inputs`' sources and support layers.
pub fn finish_tile(
    mut compact: CompactHeightfield,
    job: &TileJob,
    inputs: &TileInputs,
    config: &ValidBakeConfig,
    volumes: &[AreaVolume],
) -> Result<(TileData, StageTimes, TileStages), BakeError> {
    let mut times = StageTimes::default();
    let mut clock = Instant::now();
    let mut lap = |stage: Stage, clock: &mut Instant| {
        let now = Instant::now();
        times.0[stage as usize] += (now - *clock).as_secs_f64();
        *clock = now;
    };
    let cell_size = config.cell_size_m();
    let border = config.border_cells;

    // Stage::Erode: erode by the body radius.
    erode::erode(&mut compact, config.walkable_radius_cells);
    lap(Stage::Erode, &mut clock);

    // Stage::Areas: areas from convex volumes.
    areas::mark_volumes(&mut compact, volumes);
    lap(Stage::Areas, &mut clock);

    // Stage::DistanceField: distance field (watershed only).
    if config.config.partition == Partition::Watershed {
        build_distance_field(&mut compact);
    }
    lap(Stage::DistanceField, &mut clock);

    // Stage::Regions: regions.
    let region_params = RegionParams {
        partition: config.config.partition,
        min_region_spans: config.region_min_cells,
        merge_region_spans: config.region_merge_cells,
    };
    build_regions(&mut compact, &region_params);
    lap(Stage::Regions, &mut clock);

    // Stage::Contours: contours.
    let contour_params = ContourParams {
        max_error_cells: config.edge_max_error_cells,
        max_edge_length_cells: config.edge_max_length_cells,
    };
    let contours = build_contours(&compact, &contour_params);
    lap(Stage::Contours, &mut clock);

    // Stage::PolygonMesh: convex polygons with adjacency.
    let (tile_width, tile_depth) = if border > 0 {
        (job.grid_width - 2 * border, job.grid_depth - 2 * border)
    } else {
        (0, 0)
    };
    let poly_params = PolyParams {
        verts_per_poly_max: config.config.verts_per_poly_max,
        border,
        tile_width,
        tile_depth,
    };
    let poly_mesh = build_poly_mesh(&contours, &poly_params).map_err(|overflow| {
        BakeError::TileTooDetailed {
            tile_x: job.tile_x,
            tile_z: job.tile_z,
            what: overflow.what,
            count: overflow.count,
            limit: overflow.limit,
        }
    })?;
    lap(Stage::PolygonMesh, &mut clock);

    // Stage::Detail: detail mesh, and the tile in world metres.
    let tile_origin = job.grid_origin(cell_size)
        + Vec3::new(border as f32 * cell_size, 0.0, border as f32 * cell_size);
    let tile = assemble_tile(inputs, job, config, &poly_mesh, &compact, tile_origin);
    lap(Stage::Detail, &mut clock);

    Ok((
        tile,
        times,
        TileStages {
            compact,
            contours,
            poly_mesh,
        },
    ))
}

fn assemble_tile(
    inputs: &TileInputs,
    job: &TileJob,
    config: &ValidBakeConfig,
    poly_mesh: &PolyMesh,
    compact: &CompactHeightfield,
    tile_origin: Vec3,
) -> TileData {
    let cell_size = config.cell_size_m();
    let cell_height = config.cell_height_m();
    let vertices = poly_mesh
        .vertices
        .iter()
        .map(|v| {
            (tile_origin
                + Vec3::new(
                    f32::from(v[0]) * cell_size,
                    f32::from(v[1]) * cell_height,
                    f32::from(v[2]) * cell_size,
                ))
            .to_array()
        })
        .collect();
    let mut tile = TileData {
        vertices,
        ..TileData::default()
    };
    let detail_params = DetailParams {
        sample_distance_m: config.config.detail_sample_distance_m,
        max_error_m: config.config.detail_sample_max_error_m,
    };
    for (index, slots) in poly_mesh.polygons.iter().enumerate() {
        let vertex_count = slots.iter().take_while(|&&v| v != NO_VERTEX).count();
        let mut neighbours = poly_mesh.neighbours[index];
        for neighbour in neighbours.iter_mut().skip(vertex_count) {
            *neighbour = TilePoly::NO_NEIGHBOUR;
        }
        tile.polygons.push(TilePoly {
            vertices: *slots,
            neighbours,
            vertex_count: vertex_count as u8,
            area: poly_mesh.areas[index],
            region: poly_mesh.regions[index],
            flags: PolyFlags::for_area(poly_mesh.areas[index]),
            layer: 0,
        });
        let corners: Vec<Vec3> = slots[..vertex_count]
            .iter()
            .map(|&v| tile.vertex(v))
            .collect();
        let detail = build_polygon_detail(&corners, compact, &detail_params);
        let sub = DetailSubMesh {
            vertex_base: tile.detail_vertices.len() as u32,
            triangle_base: tile.detail_triangles.len() as u32,
            vertex_count: (detail.vertices.len() - vertex_count) as u32,
            triangle_count: detail.triangles.len() as u32,
        };
        tile.detail_vertices
            .extend(detail.vertices[vertex_count..].iter().map(|v| v.to_array()));
        tile.detail_triangles.extend_from_slice(&detail.triangles);
        tile.detail_meshes.push(sub);
    }

    let border = config.border_cells as f32 * cell_size;
    let grid_origin = job.grid_origin(cell_size);
    let mut bounds_min = grid_origin + Vec3::new(border, 0.0, border);
    let mut bounds_max = grid_origin
        + Vec3::new(
            job.grid_width as f32 * cell_size - border,
            0.0,
            job.grid_depth as f32 * cell_size - border,
        );
    let (mut low_y, mut high_y) = (f32::INFINITY, f32::NEG_INFINITY);
    for vertex in tile.vertices.iter().chain(&tile.detail_vertices) {
        low_y = low_y.min(vertex[1]);
        high_y = high_y.max(vertex[1]);
    }
    if low_y > high_y {
        (low_y, high_y) = (grid_origin.y, grid_origin.y);
    }
    bounds_min.y = low_y;
    bounds_max.y = high_y;
    tile.header = TileHeader {
        tile_x: job.tile_x,
        tile_z: job.tile_z,
        bounds_min: bounds_min.to_array(),
        bounds_max: bounds_max.to_array(),
        cell_size_m: cell_size,
        cell_height_m: cell_height,
    };

    assign_support_layers(&inputs.supported, config, &mut tile);
    tile.sources = inputs.sources.clone();
    tile
}

/// Gives each polygon the support layer of the supported triangle under its centre, if any
/// (spec 002: geometry on a moving platform records its support). Scenes without supports
/// cost nothing here.
fn assign_support_layers(
    supported: &[([Vec3; 3], u16)],
    config: &ValidBakeConfig,
    tile: &mut TileData,
) {
    if supported.is_empty() {
        return;
    }
    // A polygon sits on a triangle whose surface is within the climb (plus voxel rounding).
    let tolerance = config.config.agent_max_climb_m + 2.0 * config.cell_height_m();
    for index in 0..tile.polygons.len() {
        let corners: Vec<Vec3> = tile.polygons[index]
            .vertex_indices()
            .iter()
            .map(|&v| tile.vertex(v))
            .collect();
        let centre = corners.iter().copied().sum::<Vec3>() / corners.len() as f32;
        let mut best: Option<(f32, u16)> = None;
        for &([a, b, c], layer) in supported {
            let turn =
                |p: Vec3, q: Vec3, r: Vec3| (q.x - p.x) * (r.z - p.z) - (r.x - p.x) * (q.z - p.z);
            let area = turn(a, b, c);
            if area.abs() < 1e-9 {
                continue;
            }
            let (wa, wb) = (turn(centre, b, c) / area, turn(a, centre, c) / area);
            let wc = 1.0 - wa - wb;
            if wa < 0.0 || wb < 0.0 || wc < 0.0 {
                continue;
            }
            let gap = (wa * a.y + wb * b.y + wc * c.y - centre.y).abs();
            if gap <= tolerance && best.is_none_or(|(g, _)| gap < g) {
                best = Some((gap, layer));
            }
        }
        if let Some((_, layer)) = best {
            tile.polygons[index].layer = layer;
        }
    }
}
