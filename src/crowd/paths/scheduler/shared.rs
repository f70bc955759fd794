//! Shared destinations in the scheduler: requests that many agents make to one target are
//! answered from one [`DestinationTree`] instead of a search each.
//!
//! Stage: crowd, inside the schedule pass. Input: the queued jobs (counted by target once
//! a step), the snapshot, the filters. Output: for a job whose target at least
//! [`SHARED_REQUESTS_MIN`] queued jobs share, its path read off the tree of that target.
//!
//! Invariants: whether a job is answered from a tree depends only on the queue (saved with
//! the crowd) and the snapshot; a tree depends only on the snapshot, the snapped goal and
//! the filter, so one built again after a restore is the same tree; and an answer is
//! charged the same budget whether its tree was built for it or kept from an earlier job.
//! So a restored crowd answers as the saved one would have, at any thread count. Trees
//! are kept while the snapshot and the filter's versions last and they are used: one no
//! job has read for [`TREE_IDLE_STEPS_MAX`] steps is dropped (a game that sends its crowd
//! to a new rally point every minute keeps one tree, not one a minute).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use super::Job;
use crate::crowd::agents::FilterId;
use crate::crowd::paths::corridor::cache::KeyHasher;
use crate::mesh::{PolyRef, Snapshot};
use crate::query::{DestinationTree, PathResult, QueryFilter};

/// Queued requests to one target (under one filter) from which they share a tree: a tree
/// costs about as many expansions as the mesh has portals, a search a few hundred.
pub(crate) const SHARED_REQUESTS_MIN: u32 = 32;

/// Node budget charged for a path read off a tree (about a snap and a walk), whether the
/// tree was built for it or kept.
pub(crate) const SHARED_PATH_COST_NODES: u32 = 16;

/// Steps a kept tree may go unread before it is dropped (a second at 30 steps a second:
/// the orders of one burst are answered well within it).
pub(crate) const TREE_IDLE_STEPS_MAX: u64 = 30;

/// A target as queued: its exact coordinates and the filter.
type TargetKey = ([u32; 3], FilterId);

fn target_key(job: &Job) -> TargetKey {
    (job.target.to_array().map(f32::to_bits), job.filter)
}

/// A kept tree's key: its goal polygon and point as snapped, and the filter.
type TreeKey = (PolyRef, [u32; 3], FilterId);

/// The versions of a filter's rules and costs a tree was built under.
type FilterVersions = (crate::ids::FilterVersion, crate::ids::CostVersion);

/// The scheduler's shared destinations.
#[derive(Default)]
pub(crate) struct SharedDestinations {
    /// Queued jobs per target, counted at the start of the step (every queued job, every
    /// step: a fast hash, and the table's room kept from step to step).
    counts: HashMap<TargetKey, u32, BuildHasherDefault<KeyHasher>>,
    /// Trees by snapped goal and filter, for `snapshot`.
    trees: HashMap<TreeKey, KeptTree>,
    snapshot: Option<Snapshot>,
    /// Steps counted so far (the clock trees are last read by).
    step: u64,
}

/// A kept tree: the filter versions it was built under, and the step it was last read.
struct KeptTree {
    versions: FilterVersions,
    tree: Arc<DestinationTree>,
    last_read: u64,
}

impl SharedDestinations {
    /// Counts the queued jobs by target, and drops the trees of an earlier snapshot and
    /// those left unread too long.
    pub(crate) fn count<'a>(&mut self, jobs: impl Iterator<Item = &'a Job>, snapshot: &Snapshot) {
        self.step += 1;
        let step = self.step;
        self.trees
            .retain(|_, kept| step - kept.last_read <= TREE_IDLE_STEPS_MAX);
        self.counts.clear();
        for job in jobs {
            *self.counts.entry(target_key(job)).or_default() += 1;
        }
        if !self
            .snapshot
            .as_ref()
            .is_some_and(|kept| kept.is_same(snapshot))
        {
            self.trees.clear();
            self.snapshot = Some(snapshot.clone());
        }
    }

    /// Whether `job`'s target was shared by enough queued jobs at the start of the step.
    pub(crate) fn is_shared(&self, job: &Job) -> bool {
        self.counts
            .get(&target_key(job))
            .is_some_and(|&count| count >= SHARED_REQUESTS_MIN)
    }

    /// The path of `job` (its goal snapped) read off the tree of its goal, built now if
    /// none is kept; `None` if the tree does not reach the job's start.
    pub(crate) fn path(
        &mut self,
        snapshot: &Snapshot,
        job: &Job,
        filter: &QueryFilter,
    ) -> Option<PathResult> {
        let (goal, goal_position) = job.goal?;
        let key = (goal, goal_position.to_array().map(f32::to_bits), job.filter);
        let versions = (filter.version(), filter.cost_version());
        let tree = match self.trees.get_mut(&key) {
            Some(kept) if kept.versions == versions => {
                kept.last_read = self.step;
                kept.tree.clone()
            }
            _ => {
                let tree =
                    Arc::new(DestinationTree::build(snapshot, goal, goal_position, filter).ok()?);
                let kept = KeptTree {
                    versions,
                    tree: tree.clone(),
                    last_read: self.step,
                };
                self.trees.insert(key, kept);
                tree
            }
        };
        tree.path_from(snapshot, job.start, job.start_position)
    }

    /// Trees kept.
    #[cfg(test)]
    pub(crate) fn trees_kept(&self) -> usize {
        self.trees.len()
    }
}
