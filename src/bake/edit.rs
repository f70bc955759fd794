//! Scene edits carried to a baked mesh (spec 002 n6, spec 001's rebuild protocol): an
//! instance moved or rescaled, a parent's transform changed, a mesh replaced.
//!
//! Two steps, so a game can run the second in the background:
//! 1. [`mark_scene_edit`]: the instances whose source version in the scene differs from
//!    the mesh's, and in one step every tile built from their old versions or reached by
//!    their triangles now goes pending (queries, adoptions and followers refuse pending
//!    tiles until they are committed).
//! 2. [`rebuild_pending`]: each of those tiles rebuilt from the scene's triangles and
//!    committed if every source it was built from is still current; a tile no triangle
//!    reaches any more is committed empty. A tile whose sources changed again meanwhile
//!    stays pending for the next edit's rebuild.
//!
//! Invariant: the edit keeps the level's tile grid (an edit inside the level's bounds); an
//! edit that moves the bounds so the grid would shift is refused
//! ([`BakeError::GridMoved`]), as its tiles could not line up with the mesh's.

use std::collections::HashSet;

use rayon::prelude::*;

use super::{BakeConfig, BakeError, TileLayout, plan_tiles, tile_builder, tile_job, tile_jobs};
use crate::ids::SourceVersion;
use crate::mesh::{NavMesh, NavMeshError, TileData, TileSlot};
use crate::scene::WorldTriangles;

/// What [`mark_scene_edit`] marked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingEdit {
    /// The instances whose source version changed, with their new versions.
    pub changes: Vec<(u32, SourceVersion)>,
    /// The tiles to rebuild (column, row): those now pending and those the changed
    /// instances reach where the mesh has no tile yet.
    pub tiles: Vec<(i32, i32)>,
}

/// What [`rebuild_pending`] committed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EditRebuild {
    /// Tiles rebuilt and committed.
    pub committed: Vec<TileSlot>,
    /// Of those, tiles committed empty (no triangle reaches them any more).
    pub emptied: usize,
    /// Tiles left pending because a source changed again after the mark.
    pub stale: Vec<(i32, i32)>,
}

/// Marks the tiles an edit of the scene (now `world`) touches pending in `mesh`, in one
/// step with the new source versions. Nothing is marked when nothing changed.
pub fn mark_scene_edit(
    mesh: &mut NavMesh,
    world: &WorldTriangles,
    config: &BakeConfig,
) -> Result<PendingEdit, BakeError> {
    let valid = config.validate()?;
    let layout = plan_tiles(world, &valid)?;
    check_grid(mesh, &layout, config)?;
    let changes: Vec<(u32, SourceVersion)> = world
        .instances
        .iter()
        .filter(|summary| mesh.source_version(summary.instance.0) != Some(summary.source_version))
        .map(|summary| (summary.instance.0, summary.source_version))
        .collect();
    if changes.is_empty() {
        return Ok(PendingEdit::default());
    }
    let changed: HashSet<u32> = changes.iter().map(|&(instance, _)| instance).collect();
    let reached: Vec<(i32, i32)> = tile_jobs(world, &valid, &layout)
        .iter()
        .filter(|job| {
            job.triangles
                .iter()
                .any(|&triangle| changed.contains(&world.sources[triangle as usize].0))
        })
        .map(|job| (job.tile_x, job.tile_z))
        .collect();
    let tiles = mesh.apply_source_changes_reaching(&changes, &reached);
    Ok(PendingEdit { changes, tiles })
}

/// Rebuilds `tiles` (from [`mark_scene_edit`]) from `world` and commits each whose sources
/// are still current.
pub fn rebuild_pending(
    mesh: &mut NavMesh,
    world: &WorldTriangles,
    config: &BakeConfig,
    tiles: &[(i32, i32)],
) -> Result<EditRebuild, BakeError> {
    let valid = config.validate()?;
    let layout = plan_tiles(world, &valid)?;
    check_grid(mesh, &layout, config)?;
    let wanted: HashSet<(i32, i32)> = tiles.iter().copied().collect();
    let mut jobs: Vec<_> = tile_jobs(world, &valid, &layout)
        .into_iter()
        .filter(|job| wanted.contains(&(job.tile_x, job.tile_z)))
        .collect();
    // A wanted tile no triangle reaches now: built from nothing, an empty tile.
    let built: HashSet<(i32, i32)> = jobs.iter().map(|job| (job.tile_x, job.tile_z)).collect();
    let in_grid = |&(x, z): &(i32, i32)| {
        u32::try_from(x).is_ok_and(|x| x < layout.tiles_x)
            && u32::try_from(z).is_ok_and(|z| z < layout.tiles_z)
    };
    let empty: Vec<(i32, i32)> = tiles
        .iter()
        .copied()
        .filter(|tile| !built.contains(tile) && in_grid(tile))
        .collect();
    jobs.extend(empty.iter().map(|&(x, z)| {
        tile_job(
            &layout,
            layout.border_cells,
            [x as u32, z as u32],
            Vec::new(),
        )
    }));
    let rebuilt: Vec<TileData> = jobs
        .par_iter()
        .map(|job| Ok(tile_builder::build_tile(world, job, &valid, &[])?.0))
        .collect::<Result<_, BakeError>>()?;
    let mut outcome = EditRebuild::default();
    for tile in rebuilt {
        let at = (tile.header.tile_x, tile.header.tile_z);
        match mesh.commit_rebuilt_tile(tile) {
            Ok(slot) => {
                outcome.committed.push(slot);
                outcome.emptied += usize::from(empty.contains(&at));
            }
            Err(NavMeshError::StaleSource { .. }) => outcome.stale.push(at),
            Err(other) => return Err(BakeError::Commit(other)),
        }
    }
    Ok(outcome)
}

/// Refuses an edit after which the tile grid would no longer line up with the mesh's
/// tiles: a live tile's bounds must start where the new layout puts its tile.
fn check_grid(mesh: &NavMesh, layout: &TileLayout, config: &BakeConfig) -> Result<(), BakeError> {
    if config.tile_size_cells.is_none() {
        // A solo bake's one tile is rebuilt whole, wherever the bounds go.
        return Ok(());
    }
    let snapshot = mesh.snapshot();
    let cell = config.cell_size_m;
    let first_live =
        (0..snapshot.data().slots.len()).find_map(|slot| snapshot.live_slot(TileSlot(slot as u16)));
    let Some((tile, _)) = first_live else {
        return Ok(());
    };
    let header = &tile.data.header;
    let expected = [
        layout.origin.x + (header.tile_x as f32) * (layout.tile_cells_x as f32) * cell,
        layout.origin.z + (header.tile_z as f32) * (layout.tile_cells_z as f32) * cell,
    ];
    let found = [header.bounds_min[0], header.bounds_min[2]];
    let tolerance_m = cell * 0.01;
    if (expected[0] - found[0]).abs() > tolerance_m || (expected[1] - found[1]).abs() > tolerance_m
    {
        return Err(BakeError::GridMoved {
            tile: (header.tile_x, header.tile_z),
            mesh_corner: found,
            edit_corner: expected,
        });
    }
    Ok(())
}
