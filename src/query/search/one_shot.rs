//! The one-shot search: a whole path search in one call, with the caller's pool and
//! buffers, for hosts that answer queries as they come (no slicing across frames).

use glam::Vec3;

use super::{HEURISTIC_SCALE, PathBuffers, PathResult, SearchState, check_search};
use crate::mesh::{PolyRef, Snapshot};
use crate::query::{NodePool, QueryError, QueryFilter};

/// Searches start to end in one go, reusing `pool` (left ready for the next search).
pub fn find_path(
    snapshot: &Snapshot,
    start: PolyRef,
    start_position: Vec3,
    end: PolyRef,
    end_position: Vec3,
    filter: &QueryFilter,
    pool: &mut NodePool,
) -> Result<PathResult, QueryError> {
    let mut buffers = PathBuffers::default();
    find_path_with(
        snapshot,
        start,
        start_position,
        end,
        end_position,
        filter,
        pool,
        &mut buffers,
    )
}

/// [`find_path`] filling `buffers` (taken from an earlier result by
/// [`PathBuffers::recycle`]) instead of new ones: a host answering many queries hands each
/// result's buffers back and the searches stop allocating (as Detour's caller-sized
/// arrays do). `buffers` is left empty; the same answer either way.
#[allow(clippy::too_many_arguments)]
pub fn find_path_with(
    snapshot: &Snapshot,
    start: PolyRef,
    start_position: Vec3,
    end: PolyRef,
    end_position: Vec3,
    filter: &QueryFilter,
    pool: &mut NodePool,
    buffers: &mut PathBuffers,
) -> Result<PathResult, QueryError> {
    // Checked first so that a refused query keeps the caller's pool.
    check_search(snapshot, start, start_position, end, end_position)?;
    // `take` leaves an empty placeholder that allocates nothing. The one-shot search borrows
    // the filter and the snapshot instead of copying them as a sliced search must.
    let taken = std::mem::take(pool);
    let mut state = SearchState::start(
        snapshot,
        start,
        start_position,
        end,
        end_position,
        filter,
        taken,
        HEURISTIC_SCALE,
        std::mem::take(buffers),
    )
    .expect("the inputs were checked above");
    while !state.finished {
        state.run(snapshot, u32::MAX);
    }
    let (result, returned) = state.finish();
    *pool = returned;
    Ok(result)
}
