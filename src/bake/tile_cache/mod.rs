//! Temporary obstacles: cylinders, axis-aligned boxes and boxes turned about Up, added and
//! removed while the game runs, each cutting walkable space out or marking an area; the
//! tiles they touch rebuilt from data kept after the bake, not from the level's triangles.
//!
//! Inputs: the level's triangles once ([`TileCache::bake`]), then obstacles by handle.
//! Kept per tile: the tile as baked, and its compact heightfield (the open spans and their
//! links, after the filters, before erosion) compressed with LZ4 with its grid, its sources
//! and its moving supports' triangles. A rebuild goes one of two ways
//! ([`ObstacleRebuild`]):
//! - **carve** (the default): the baked tile's ground polygons cut along each cutting
//!   obstacle's outline grown by the body radius, and marked by each marking one's outline
//!   ([`crate::mesh::carve`]). Microseconds a tile; the cut follows the outline exactly.
//! - **voxel**: the field decompressed, every cutting obstacle cut out of it before
//!   erosion (so a cut grows by the body radius as walls do), the remaining stages run
//!   with every marking obstacle as an area volume: what Recast's `dtTileCache` does,
//!   the cut's edge on the voxel grid, a bake's back half per tile.
//!
//! Either way the tile is committed through the mesh's generation protocol.
//!
//! Invariants: adding or removing an obstacle marks the tiles it can change pending in
//! the mesh, in the same step (those whose polygons its grown outline reaches when
//! carving; whose grids, border included, when rebuilding from voxels);
//! [`TileCache::update`] rebuilds pending tiles; with no obstacle a rebuilt tile equals the
//! bake's, bit for bit.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use glam::{Vec2, Vec3};
use rayon::prelude::*;

use super::areas::{AreaVolume, mark_volumes};
use super::config::ValidBakeConfig;
use super::tile_builder::{
    StageTimes, TileInputs, TileJob, compact_field, finish_tile, rasterize_job,
};
use super::{BakeConfig, BakeError, BakeOutput, plan_tiles, tile_jobs};
use crate::ids::AreaId;
use crate::mesh::carve::{CarveFootprint, carve_tile};
use crate::mesh::{NavMesh, NavMeshError, RuntimeTile, TileData, TileSlot};
use crate::scene::WorldTriangles;

mod field;
mod shapes;

use field::{decode, encode, footprint};
use shapes::{carved_outline, outline, reach, shape_floors, shape_volume};

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

/// How a tile an obstacle changed is rebuilt (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ObstacleRebuild {
    /// The baked tile's polygons cut along the obstacles' outlines.
    #[default]
    Carve,
    /// The tile's kept voxel field re-run through the bake's back half.
    Voxel,
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
    /// The tile as baked (obstacles are carved from it), in its runtime form: committed as
    /// it is when no obstacle is left on the tile.
    baked: Arc<RuntimeTile>,
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
    /// Whether an obstacle whose reach (see [`reach`]) spans `low..high` can
    /// change the tile: it reaches the tile's bounds (carving) or its grid, border
    /// included (voxels).
    fn reached_by(&self, (low, high): (Vec2, Vec2), rebuild: ObstacleRebuild) -> bool {
        let (grid_low, grid_high) = match rebuild {
            ObstacleRebuild::Voxel => self.footprint,
            ObstacleRebuild::Carve => {
                let header = &self.baked.data.header;
                (
                    Vec2::new(header.bounds_min[0], header.bounds_min[2]),
                    Vec2::new(header.bounds_max[0], header.bounds_max[2]),
                )
            }
        };
        low.x <= grid_high.x && high.x >= grid_low.x && low.y <= grid_high.y && high.y >= grid_low.y
    }
}

/// Per-tile data kept after a bake, and the obstacles placed on it.
pub struct TileCache {
    config: ValidBakeConfig,
    rebuild: ObstacleRebuild,
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
type RebuiltTile = ((i32, i32), u64, Result<Arc<RuntimeTile>, BakeError>);

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
                let (compressed, raw_bytes) = (lz4_flex::compress_prepend_size(&raw), raw.len());
                let grid = footprint(&compact);
                let (tile, finish_times, _) = finish_tile(compact, &job, &inputs, &valid, &[])?;
                times.add(&finish_times);
                let cached = CachedTile {
                    baked: Arc::new(RuntimeTile::new(tile.clone())),
                    compressed,
                    raw_bytes,
                    footprint: grid,
                    job,
                    inputs,
                };
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
                rebuild: ObstacleRebuild::default(),
                tiles: Arc::new(tiles),
                obstacles: Vec::new(),
                pending: BTreeSet::new(),
                touches: BTreeMap::new(),
            },
        ))
    }

    /// How tiles are rebuilt from now on.
    pub fn set_rebuild(&mut self, rebuild: ObstacleRebuild) {
        self.rebuild = rebuild;
    }

    /// How tiles are rebuilt.
    pub fn rebuild(&self) -> ObstacleRebuild {
        self.rebuild
    }

    /// Bytes the cache keeps for its tiles (baked tiles, compressed fields and inputs).
    pub fn memory_bytes(&self) -> usize {
        self.tiles
            .values()
            .map(|tile| {
                tile_bytes(&tile.baked.data)
                    + tile.compressed.len()
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
        let one =
            |at: &(i32, i32)| rebuild(&self.config, self.rebuild, &self.tiles[at], &obstacles);
        // A carve takes microseconds: one tile is not worth handing to the pool.
        let rebuilt: Vec<Arc<RuntimeTile>> = if chosen.len() == 1 {
            vec![one(&chosen[0])?]
        } else {
            chosen
                .par_iter()
                .map(one)
                .collect::<Result<_, BakeError>>()?
        };
        let mut update = CacheUpdate::default();
        let commits = mesh.commit_prepared_tiles(rebuilt);
        record_commits(&mut update, &mut self.pending, &chosen, commits)?;
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
            let (config, mode) = (self.config, self.rebuild);
            rayon::spawn(move || {
                let built = rebuild(&config, mode, &tiles[&at], &obstacles);
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
        let (mut places, mut built_tiles) = (Vec::new(), Vec::new());
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
            places.push(at);
            built_tiles.push(built?);
        }
        let mut update = CacheUpdate::default();
        if !built_tiles.is_empty() {
            let commits = mesh.commit_prepared_tiles(built_tiles);
            record_commits(&mut update, &mut self.pending, &places, commits)?;
        }
        update.remaining = self.pending.len() + rebuild.outstanding;
        Ok(update)
    }

    /// Marks the tiles whose grids `shape`'s footprint reaches.
    fn touch(&mut self, mesh: &mut NavMesh, shape: &ObstacleShape) {
        let footprint = reach(shape, self.rebuild, &self.config);
        let touched: Vec<(i32, i32)> = self
            .tiles
            .iter()
            .filter(|(_, tile)| tile.reached_by(footprint, self.rebuild))
            .map(|(&at, _)| at)
            .collect();
        mesh.apply_source_changes_reaching(&[], &touched);
        for &at in &touched {
            *self.touches.entry(at).or_insert(0) += 1;
        }
        self.pending.extend(touched);
    }
}

/// Each commit's outcome in `update` (its slot, or its place among the stale), the
/// tile no longer pending in the cache either way. A tile refused for any other reason
/// stays (or is again) pending, for a later update to retry, and the first such refusal
/// is the update's error once every outcome is recorded.
fn record_commits(
    update: &mut CacheUpdate,
    pending: &mut BTreeSet<(i32, i32)>,
    places: &[(i32, i32)],
    commits: Vec<Result<TileSlot, NavMeshError>>,
) -> Result<(), BakeError> {
    let mut refused = None;
    for (&at, commit) in places.iter().zip(commits) {
        match commit {
            Ok(slot) => update.committed.push(slot),
            Err(NavMeshError::StaleSource { .. }) => update.stale.push(at),
            Err(other) => {
                pending.insert(at);
                refused.get_or_insert(other);
                continue;
            }
        }
        pending.remove(&at);
    }
    refused.map_or(Ok(()), |error| Err(BakeError::Commit(error)))
}

/// One tile with `obstacles` applied, rebuilt as `mode` says.
fn rebuild(
    config: &ValidBakeConfig,
    mode: ObstacleRebuild,
    tile: &CachedTile,
    obstacles: &[(ObstacleShape, ObstacleEffect)],
) -> Result<Arc<RuntimeTile>, BakeError> {
    let climb_m = config.config.agent_max_climb_m;
    if mode == ObstacleRebuild::Carve {
        let footprints: Vec<CarveFootprint> = obstacles
            .iter()
            .filter(|(shape, _)| tile.reached_by(reach(shape, mode, config), mode))
            .map(|(shape, effect)| {
                let (floor_min_m, floor_max_m) = shape_floors(shape, climb_m);
                let (corners, marks) = match effect {
                    ObstacleEffect::Cut => (carved_outline(shape, config), None),
                    ObstacleEffect::Area(area) => (outline(shape), Some(*area)),
                };
                CarveFootprint {
                    corners,
                    floor_min_m,
                    floor_max_m,
                    marks,
                }
            })
            .collect();
        if footprints.is_empty() {
            return Ok(tile.baked.clone());
        }
        return Ok(Arc::new(RuntimeTile::new(carve_tile(
            &tile.baked.data,
            &footprints,
        )?)));
    }
    let bytes = lz4_flex::decompress_size_prepended(&tile.compressed)
        .expect("the cache decompresses what it compressed");
    let mut compact = decode(&bytes);
    let (cuts, marks): (Vec<_>, Vec<_>) = obstacles
        .iter()
        .filter(|(shape, _)| tile.reached_by(reach(shape, mode, config), mode))
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
    Ok(Arc::new(RuntimeTile::new(built)))
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

/// Bytes a tile's arrays hold.
fn tile_bytes(tile: &TileData) -> usize {
    size_of_val(tile.vertices.as_slice())
        + size_of_val(tile.polygons.as_slice())
        + size_of_val(tile.detail_meshes.as_slice())
        + size_of_val(tile.detail_vertices.as_slice())
        + size_of_val(tile.detail_triangles.as_slice())
        + size_of_val(tile.sources.as_slice())
}

#[cfg(test)]
mod tests;
