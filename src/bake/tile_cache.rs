//! Temporary obstacles: cylinders, axis-aligned boxes and boxes turned about Up, added and
//! removed while the game runs, each cutting walkable space out or marking an area; the
//! tiles they touch rebuilt from data kept after the bake, not from the level's triangles.
//!
//! Inputs: the level's triangles once ([`TileCache::bake`]), then obstacles by handle.
//! Kept per tile: its compact heightfield (the open spans and their links, after the
//! filters, before erosion) compressed with LZ4, its grid, its sources and its moving
//! supports' triangles. A rebuild decompresses the field, cuts every obstacle that cuts
//! (before erosion, so a cut grows by the body radius as walls do), runs the remaining
//! stages with every marking obstacle as an area volume, and commits the tile through the
//! mesh's generation protocol.
//!
//! Invariants: adding or removing an obstacle marks the tiles whose grids (border included)
//! its footprint reaches pending in the mesh, in the same step; [`TileCache::update`]
//! rebuilds pending tiles; with no obstacle a rebuilt tile equals the bake's, bit for bit.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use glam::{Vec2, Vec3};
use rayon::prelude::*;

use super::areas::{AreaVolume, mark_volumes};
use super::compact::CompactHeightfield;
use super::config::ValidBakeConfig;
use super::tile_builder::{
    StageTimes, TileInputs, TileJob, compact_field, finish_tile, rasterize_job,
};
use super::{BakeConfig, BakeError, BakeOutput, plan_tiles, tile_jobs};
use crate::ids::AreaId;
use crate::mesh::{NavMesh, NavMeshError, TileData, TileSlot};
use crate::scene::WorldTriangles;

/// Sides of the polygon a cylinder's footprint is cut as (circumscribed: it holds the
/// circle).
const CYLINDER_SIDES: usize = 16;

/// Most obstacles a cache holds at once.
pub const OBSTACLES_MAX: usize = 1 << 16;

/// An obstacle's shape, world metres; each stands on its foot height and reaches up by its
/// height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ObstacleShape {
    /// An upright cylinder: the centre of its base, radius, height.
    Cylinder {
        /// Centre of the base.
        base: Vec3,
        /// Radius, metres.
        radius_m: f32,
        /// Height, metres.
        height_m: f32,
    },
    /// An axis-aligned box.
    Box {
        /// Minimum corner.
        min: Vec3,
        /// Maximum corner.
        max: Vec3,
    },
    /// A box turned about Up: the centre of its base, half its size along its own x and z,
    /// its height, and its turn (radians, counter-clockwise seen from above).
    TurnedBox {
        /// Centre of the base.
        base: Vec3,
        /// Half the size along the box's own x and z, metres.
        half_extents_m: Vec2,
        /// Height, metres.
        height_m: f32,
        /// Turn about Up, radians.
        yaw_rad: f32,
    },
}

/// What an obstacle does to the floor under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObstacleEffect {
    /// The floor under it is not walkable; the cut grows by the body radius.
    Cut,
    /// The floor under it takes this area (its cost or exclusion set by query filters).
    Area(AreaId),
}

/// An obstacle's handle: stale once it is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObstacleId {
    index: u32,
    generation: u32,
}

/// An obstacle that cannot be added or removed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ObstacleError {
    /// A size or position that is not finite, or a size not above zero.
    #[error("obstacle {what} is {value}: positions must be finite and sizes finite and above zero")]
    BadShape {
        /// Which value.
        what: &'static str,
        /// The value.
        value: f32,
    },
    /// The handle's obstacle was removed (or never was).
    #[error("no obstacle {0:?} (removed, or from another cache)")]
    Unknown(ObstacleId),
    /// [`OBSTACLES_MAX`] obstacles are in place.
    #[error("the cache holds {OBSTACLES_MAX} obstacles already (OBSTACLES_MAX)")]
    TooMany,
    /// The area given is not a walkable area id.
    #[error("obstacle area {0} is not a walkable area id (1 to 63)")]
    BadArea(u8),
}

/// What one [`TileCache::update`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheUpdate {
    /// Tiles rebuilt and committed.
    pub committed: Vec<TileSlot>,
    /// Tiles still pending after it (the budget ran out).
    pub remaining: usize,
    /// Tiles the mesh holds newer sources for than the cache was baked from (a scene edit
    /// since, carried by [`super::edit`]): the cache's data for them is out of date, so they
    /// are dropped from its work, left pending in the mesh for `edit::rebuild_pending`.
    pub stale: Vec<(i32, i32)>,
}

/// What the cache keeps of one tile.
#[derive(Clone, Debug)]
struct CachedTile {
    job: TileJob,
    inputs: TileInputs,
    /// The compact heightfield before erosion, serialised and LZ4-compressed.
    compressed: Vec<u8>,
    /// Its serialised length before compression.
    raw_bytes: usize,
    /// The grid's footprint (border included), world x and z.
    footprint: (Vec2, Vec2),
}

impl CachedTile {
    /// Whether `shape`'s footprint reaches the tile's grid (border included).
    fn reached_by(&self, shape: &ObstacleShape) -> bool {
        let (low, high) = shape_footprint(shape);
        let (grid_low, grid_high) = self.footprint;
        low.x <= grid_high.x && high.x >= grid_low.x && low.y <= grid_high.y && high.y >= grid_low.y
    }
}

/// Per-tile data kept after a bake, and the obstacles placed on it.
pub struct TileCache {
    config: ValidBakeConfig,
    /// Shared with background rebuilds; never changed after the bake.
    tiles: Arc<BTreeMap<(i32, i32), CachedTile>>,
    obstacles: Vec<(u32, Option<(ObstacleShape, ObstacleEffect)>)>,
    pending: BTreeSet<(i32, i32)>,
    /// Per tile, how many times an obstacle touched it: a background rebuild started
    /// before the latest touch is out of date and is not committed.
    touches: BTreeMap<(i32, i32), u64>,
}

/// A background rebuild's result: the tile's coordinates, the touch count it was started
/// at, and the tile.
type RebuiltTile = ((i32, i32), u64, Result<TileData, BakeError>);

/// Tiles being rebuilt on rayon's pool while the game goes on
/// ([`TileCache::start_update`]); [`TileCache::finish_update`] commits those done.
pub struct BackgroundRebuild {
    results: mpsc::Receiver<RebuiltTile>,
    outstanding: usize,
}

impl BackgroundRebuild {
    /// Tiles started and not yet committed or dropped.
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }
}

impl TileCache {
    /// Bakes `world` as [`super::bake`] does, keeping each tile's compact heightfield.
    /// Returns the bake's output (the same tiles) and the cache.
    pub fn bake(
        world: &WorldTriangles,
        config: &BakeConfig,
    ) -> Result<(BakeOutput, TileCache), BakeError> {
        let started = Instant::now();
        let valid = config.validate()?;
        let layout = plan_tiles(world, &valid)?;
        let built: Vec<((TileData, StageTimes), CachedTile)> = tile_jobs(world, &valid, &layout)
            .into_par_iter()
            .map(|mut job| {
                let (field, mut times) = rasterize_job(world, &job, &valid);
                let (compact, compact_times) = compact_field(field, &valid);
                times.add(&compact_times);
                let inputs = TileInputs::of(world, &job);
                job.triangles = Vec::new();
                let raw = encode(&compact);
                let cached = CachedTile {
                    compressed: lz4_flex::compress_prepend_size(&raw),
                    raw_bytes: raw.len(),
                    footprint: footprint(&compact),
                    job,
                    inputs,
                };
                let (tile, finish_times, _) =
                    finish_tile(compact, &cached.job, &cached.inputs, &valid, &[])?;
                times.add(&finish_times);
                Ok(((tile, times), cached))
            })
            .collect::<Result<_, BakeError>>()?;
        let (results, cached): (Vec<_>, Vec<_>) = built.into_iter().unzip();
        let tiles = cached
            .into_iter()
            .map(|tile| ((tile.job.tile_x, tile.job.tile_z), tile))
            .collect();
        let output = BakeOutput::gathered(valid, world, results, started);
        Ok((
            output,
            TileCache {
                config: valid,
                tiles: Arc::new(tiles),
                obstacles: Vec::new(),
                pending: BTreeSet::new(),
                touches: BTreeMap::new(),
            },
        ))
    }

    /// Bytes the cache keeps for its tiles (compressed fields and inputs).
    pub fn memory_bytes(&self) -> usize {
        self.tiles
            .values()
            .map(|tile| {
                tile.compressed.len()
                    + tile.inputs.sources.len() * size_of::<crate::mesh::TileSource>()
                    + tile.inputs.supported.len() * size_of::<([Vec3; 3], u16)>()
            })
            .sum()
    }

    /// The kept fields' bytes: compressed, and serialised before compression.
    pub fn field_bytes(&self) -> (usize, usize) {
        self.tiles.values().fold((0, 0), |(compressed, raw), tile| {
            (compressed + tile.compressed.len(), raw + tile.raw_bytes)
        })
    }

    /// Places an obstacle; the tiles it touches go pending in `mesh` at once.
    pub fn add_obstacle(
        &mut self,
        mesh: &mut NavMesh,
        shape: ObstacleShape,
        effect: ObstacleEffect,
    ) -> Result<ObstacleId, ObstacleError> {
        check_shape(&shape)?;
        if let ObstacleEffect::Area(area) = effect {
            if area.0 == 0 || area.0 > 63 {
                return Err(ObstacleError::BadArea(area.0));
            }
        }
        let free = self.obstacles.iter().position(|(_, slot)| slot.is_none());
        let index = match free {
            Some(index) => index,
            None if self.obstacles.len() < OBSTACLES_MAX => {
                self.obstacles.push((0, None));
                self.obstacles.len() - 1
            }
            None => return Err(ObstacleError::TooMany),
        };
        let entry = &mut self.obstacles[index];
        entry.0 = entry.0.wrapping_add(1);
        entry.1 = Some((shape, effect));
        let id = ObstacleId {
            index: index as u32,
            generation: entry.0,
        };
        self.touch(mesh, &shape);
        Ok(id)
    }

    /// Removes an obstacle; the tiles it touched go pending in `mesh` at once.
    pub fn remove_obstacle(
        &mut self,
        mesh: &mut NavMesh,
        id: ObstacleId,
    ) -> Result<(), ObstacleError> {
        let entry = self
            .obstacles
            .get_mut(id.index as usize)
            .filter(|(generation, slot)| *generation == id.generation && slot.is_some())
            .ok_or(ObstacleError::Unknown(id))?;
        let (shape, _) = entry.1.take().expect("checked above");
        self.touch(mesh, &shape);
        Ok(())
    }

    /// Obstacles in place.
    pub fn obstacle_count(&self) -> usize {
        self.obstacles
            .iter()
            .filter(|(_, slot)| slot.is_some())
            .count()
    }

    /// Tiles waiting for [`TileCache::update`].
    pub fn pending_tiles(&self) -> usize {
        self.pending.len()
    }

    /// Rebuilds up to `tiles_max` pending tiles (in parallel, in tile order) and commits
    /// them to `mesh`.
    pub fn update(
        &mut self,
        mesh: &mut NavMesh,
        tiles_max: usize,
    ) -> Result<CacheUpdate, BakeError> {
        let chosen: Vec<(i32, i32)> = self.pending.iter().copied().take(tiles_max).collect();
        let obstacles: Vec<(ObstacleShape, ObstacleEffect)> = self
            .obstacles
            .iter()
            .filter_map(|(_, slot)| *slot)
            .collect();
        let rebuilt: Vec<TileData> = chosen
            .par_iter()
            .map(|at| rebuild(&self.config, &self.tiles[at], &obstacles))
            .collect::<Result<_, BakeError>>()?;
        let mut update = CacheUpdate::default();
        for (at, tile) in chosen.iter().zip(rebuilt) {
            match mesh.commit_rebuilt_tile(tile) {
                Ok(slot) => update.committed.push(slot),
                Err(NavMeshError::StaleSource { .. }) => update.stale.push(*at),
                Err(other) => return Err(BakeError::Commit(other)),
            }
            self.pending.remove(at);
        }
        update.remaining = self.pending.len();
        Ok(update)
    }

    /// Starts rebuilding up to `tiles_max` pending tiles on rayon's pool and returns at
    /// once; the tiles stay pending in the mesh until [`TileCache::finish_update`] commits
    /// them. A tile an obstacle touches again meanwhile is rebuilt anew later, its
    /// out-of-date result dropped.
    pub fn start_update(&mut self, tiles_max: usize) -> BackgroundRebuild {
        let chosen: Vec<(i32, i32)> = self.pending.iter().copied().take(tiles_max).collect();
        let obstacles: Arc<Vec<(ObstacleShape, ObstacleEffect)>> = Arc::new(
            self.obstacles
                .iter()
                .filter_map(|(_, slot)| *slot)
                .collect(),
        );
        let (sender, results) = mpsc::channel();
        for &at in &chosen {
            self.pending.remove(&at);
            let touch = self.touches.get(&at).copied().unwrap_or(0);
            let (tiles, obstacles, sender) =
                (self.tiles.clone(), obstacles.clone(), sender.clone());
            let config = self.config;
            rayon::spawn(move || {
                let built = rebuild(&config, &tiles[&at], &obstacles);
                // The receiver may be gone (the game dropped the rebuild): nothing to do.
                let _ = sender.send((at, touch, built));
            });
        }
        BackgroundRebuild {
            results,
            outstanding: chosen.len(),
        }
    }

    /// Commits the tiles of `rebuild` finished so far, without waiting; with `wait`, waits
    /// for all of them. A result out of date (an obstacle touched its tile after it
    /// started) is dropped: the tile is pending again for a later update.
    pub fn finish_update(
        &mut self,
        mesh: &mut NavMesh,
        rebuild: &mut BackgroundRebuild,
        wait: bool,
    ) -> Result<CacheUpdate, BakeError> {
        let mut update = CacheUpdate::default();
        while rebuild.outstanding > 0 {
            let received = if wait {
                rebuild.results.recv().ok()
            } else {
                rebuild.results.try_recv().ok()
            };
            let Some((at, touch, built)) = received else {
                break;
            };
            rebuild.outstanding -= 1;
            if self.touches.get(&at).copied().unwrap_or(0) != touch {
                continue;
            }
            match mesh.commit_rebuilt_tile(built?) {
                Ok(slot) => update.committed.push(slot),
                Err(NavMeshError::StaleSource { .. }) => update.stale.push(at),
                Err(other) => return Err(BakeError::Commit(other)),
            }
        }
        update.remaining = self.pending.len() + rebuild.outstanding;
        Ok(update)
    }

    /// Marks the tiles whose grids `shape`'s footprint reaches.
    fn touch(&mut self, mesh: &mut NavMesh, shape: &ObstacleShape) {
        let touched: Vec<(i32, i32)> = self
            .tiles
            .iter()
            .filter(|(_, tile)| tile.reached_by(shape))
            .map(|(&at, _)| at)
            .collect();
        mesh.apply_source_changes_reaching(&[], &touched);
        for &at in &touched {
            *self.touches.entry(at).or_insert(0) += 1;
        }
        self.pending.extend(touched);
    }
}

/// One tile from its cached field with `obstacles` applied.
fn rebuild(
    config: &ValidBakeConfig,
    tile: &CachedTile,
    obstacles: &[(ObstacleShape, ObstacleEffect)],
) -> Result<TileData, BakeError> {
    let bytes = lz4_flex::decompress_size_prepended(&tile.compressed)
        .expect("the cache decompresses what it compressed");
    let mut compact = decode(&bytes);
    let climb_m = config.config.agent_max_climb_m;
    let (cuts, marks): (Vec<_>, Vec<_>) = obstacles
        .iter()
        .filter(|(shape, _)| tile.reached_by(shape))
        .partition(|(_, effect)| *effect == ObstacleEffect::Cut);
    let volume = |(shape, effect): &(ObstacleShape, ObstacleEffect)| {
        let area = match effect {
            ObstacleEffect::Cut => AreaId::UNWALKABLE,
            ObstacleEffect::Area(area) => *area,
        };
        shape_volume(shape, area, climb_m)
    };
    let cuts: Vec<AreaVolume> = cuts.iter().map(volume).collect();
    let marks: Vec<AreaVolume> = marks.iter().map(volume).collect();
    // Cut before erosion, so the cut grows by the body radius like any wall.
    mark_volumes(&mut compact, &cuts);
    let (built, _, _) = finish_tile(compact, &tile.job, &tile.inputs, config, &marks)?;
    Ok(built)
}

fn check_shape(shape: &ObstacleShape) -> Result<(), ObstacleError> {
    let bad = |what, value: f32| ObstacleError::BadShape { what, value };
    let finite = |what, point: Vec3| {
        point
            .to_array()
            .into_iter()
            .find(|value| !value.is_finite())
            .map_or(Ok(()), |value| Err(bad(what, value)))
    };
    let size = |what, value: f32| {
        if value.is_finite() && value > 0.0 {
            Ok(())
        } else {
            Err(bad(what, value))
        }
    };
    match *shape {
        ObstacleShape::Cylinder {
            base,
            radius_m,
            height_m,
        } => {
            finite("base", base)?;
            size("radius", radius_m)?;
            size("height", height_m)
        }
        ObstacleShape::Box { min, max } => {
            finite("min", min)?;
            finite("max", max)?;
            for (what, extent) in [
                ("x extent", max.x - min.x),
                ("y extent", max.y - min.y),
                ("z extent", max.z - min.z),
            ] {
                size(what, extent)?;
            }
            Ok(())
        }
        ObstacleShape::TurnedBox {
            base,
            half_extents_m,
            height_m,
            yaw_rad,
        } => {
            finite("base", base)?;
            size("half extent x", half_extents_m.x)?;
            size("half extent z", half_extents_m.y)?;
            size("height", height_m)?;
            if yaw_rad.is_finite() {
                Ok(())
            } else {
                Err(bad("yaw", yaw_rad))
            }
        }
    }
}

/// The shape's outline from above (x, z), convex, holding the shape.
fn outline(shape: &ObstacleShape) -> Vec<Vec2> {
    match *shape {
        ObstacleShape::Cylinder { base, radius_m, .. } => {
            let reach = radius_m / (std::f32::consts::PI / CYLINDER_SIDES as f32).cos();
            (0..CYLINDER_SIDES)
                .map(|side| {
                    let angle = side as f32 / CYLINDER_SIDES as f32 * std::f32::consts::TAU;
                    Vec2::new(base.x, base.z) + Vec2::from_angle(angle) * reach
                })
                .collect()
        }
        ObstacleShape::Box { min, max } => vec![
            Vec2::new(min.x, min.z),
            Vec2::new(max.x, min.z),
            Vec2::new(max.x, max.z),
            Vec2::new(min.x, max.z),
        ],
        ObstacleShape::TurnedBox {
            base,
            half_extents_m,
            yaw_rad,
            ..
        } => {
            let turn = Vec2::from_angle(yaw_rad);
            [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
                .into_iter()
                .map(|(sx, sz)| {
                    let local = Vec2::new(sx * half_extents_m.x, sz * half_extents_m.y);
                    Vec2::new(base.x, base.z) + turn.rotate(local)
                })
                .collect()
        }
    }
}

/// The shape's footprint bounds (x, z).
fn shape_footprint(shape: &ObstacleShape) -> (Vec2, Vec2) {
    outline(shape).iter().fold(
        (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY)),
        |(low, high), &corner| (low.min(corner), high.max(corner)),
    )
}

/// The shape as an area volume: floors from a climb below its foot to its top.
fn shape_volume(shape: &ObstacleShape, area: AreaId, climb_m: f32) -> AreaVolume {
    let (foot, top) = match *shape {
        ObstacleShape::Cylinder { base, height_m, .. }
        | ObstacleShape::TurnedBox { base, height_m, .. } => (base.y, base.y + height_m),
        ObstacleShape::Box { min, max } => (min.y, max.y),
    };
    AreaVolume {
        corners: outline(shape),
        min_y: foot - climb_m,
        max_y: top,
        area,
    }
}

/// The grid's footprint (border included), world x and z.
fn footprint(compact: &CompactHeightfield) -> (Vec2, Vec2) {
    let low = Vec2::new(compact.origin.x, compact.origin.z);
    let size = Vec2::new(compact.width as f32, compact.depth as f32) * compact.cell_size;
    (low, low + size)
}

/// The fields a compact heightfield has before erosion, as bytes: the grid's numbers, then
/// per column its span count, then per span its floor, clearance, links and area.
fn encode(compact: &CompactHeightfield) -> Vec<u8> {
    let spans = compact.floor.len();
    let mut out = Vec::with_capacity(48 + compact.column_count.len() + spans * 8);
    for value in [
        compact.width,
        compact.depth,
        compact.border,
        compact.walkable_height,
        compact.walkable_climb,
        spans as u32,
    ] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    for value in [
        compact.origin.x,
        compact.origin.y,
        compact.origin.z,
        compact.cell_size,
        compact.cell_height,
    ] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(&compact.column_count);
    out.extend(compact.floor.iter().flat_map(|floor| floor.to_le_bytes()));
    out.extend_from_slice(&compact.clearance);
    out.extend(compact.links.iter().flatten());
    out.extend_from_slice(&compact.areas);
    out
}

/// [`encode`]'s inverse.
fn decode(bytes: &[u8]) -> CompactHeightfield {
    let word = |index: usize| {
        u32::from_le_bytes(
            bytes[4 * index..4 * index + 4]
                .try_into()
                .expect("four bytes"),
        )
    };
    let float = |index: usize| f32::from_bits(word(index));
    let (width, depth, spans) = (word(0), word(1), word(5) as usize);
    let columns = (width * depth) as usize;
    let mut at = 44;
    let mut take = |length: usize| {
        let slice = &bytes[at..at + length];
        at += length;
        slice
    };
    let column_count = take(columns).to_vec();
    let floor = take(2 * spans)
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .collect();
    let clearance = take(spans).to_vec();
    let links = take(4 * spans)
        .chunks_exact(4)
        .map(|link| [link[0], link[1], link[2], link[3]])
        .collect();
    let areas = take(spans).to_vec();
    let mut column_first = Vec::with_capacity(columns);
    let mut first = 0u32;
    for &count in &column_count {
        column_first.push(first);
        first += u32::from(count);
    }
    CompactHeightfield {
        width,
        depth,
        border: word(2),
        origin: Vec3::new(float(6), float(7), float(8)),
        cell_size: float(9),
        cell_height: float(10),
        walkable_height: word(3),
        walkable_climb: word(4),
        column_first,
        column_count,
        floor,
        clearance,
        links,
        areas,
        regions: vec![0; spans],
        distances: Vec::new(),
        distance_max: 0,
    }
}
