//! Connected components of a snapshot's polygons: which polygons a path could join at
//! all, whatever the filter.
//!
//! Stage: runtime mesh, worked out once per snapshot the first time a search asks
//! ([`Snapshot::components`]). Input: the snapshot's search graph and off-mesh links.
//! Output: [`Components`]: a label per polygon, and per component the tiles it lies in
//! with the tiles across their sides.
//!
//! Why: a search whose end lies in another component can never reach it, and without
//! knowing so it expands every polygon it can reach before it gives up (on the shared
//! nav_test queries, 72% of which cannot be completed, that flood is most of the search
//! time). Two polygons in different components are joined by no chain of crossable
//! edges or links, open or closed, under any filter; so different labels prove an end out
//! of reach, and the search can head straight for the reachable polygon nearest it.
//!
//! Invariants: labels are numbered in the order of the polygons' dense keys, so the same
//! snapshot gives the same labels on every run; a snapshot with a live tile that has no
//! search table has no components (`None`), and searches then work as without them.

use glam::Vec3;

use super::navmesh::{SlotState, SnapshotData};
use super::{PolyRef, Snapshot, TileSlot};
use crate::geom::Aabb;

/// Most tiles (its own and those across their sides) a component may span to keep a list
/// of its polygons, which [`Components::nearest_member`] searches.
pub const SMALL_COMPONENT_TILES_MAX: usize = 64;

/// The dense key of `reference` ([`SnapshotData::polygon_base`]) while a snapshot's tables
/// are built from its data; `None` for a slot without a live tile. What
/// [`Snapshot::polygon_key`] gives once the snapshot exists, for the builders that read
/// the data before it does (components, landmarks).
pub(crate) fn live_polygon_key(data: &SnapshotData, reference: PolyRef) -> Option<u32> {
    let base = *data.polygon_base.get(usize::from(reference.slot().0))?;
    (base != u32::MAX).then(|| base + u32::from(reference.polygon()))
}

/// One polygon of a small component: what finding the nearest one needs.
#[derive(Clone, Copy, Debug)]
struct Member {
    polygon: PolyRef,
    bounds: Aabb,
    flags: u16,
    area: u8,
}

/// The components of a snapshot's polygons (see the module documentation).
#[derive(Debug)]
pub struct Components {
    /// By dense polygon key: its component.
    labels: Vec<u32>,
    /// By component: the live slots its polygons lie in and the live slots across their
    /// sides, ascending (what a change could join it to something else through).
    slots: Vec<Box<[TileSlot]>>,
    /// By component spanning at most [`SMALL_COMPONENT_TILES_MAX`] tiles: its polygons.
    members: Vec<Option<Box<[Member]>>>,
}

impl Components {
    fn build(data: &SnapshotData) -> Option<Components> {
        let total = data.polygon_total as usize;
        let mut parents: Vec<u32> = (0..total as u32).collect();
        fn root(parents: &mut [u32], mut at: u32) -> u32 {
            while parents[at as usize] != at {
                let up = parents[parents[at as usize] as usize];
                parents[at as usize] = up;
                at = up;
            }
            at
        }
        let join = |parents: &mut Vec<u32>, a: u32, b: u32| {
            let (a, b) = (root(parents, a), root(parents, b));
            // The smaller key roots the set: labels then follow key order.
            if a < b {
                parents[b as usize] = a;
            } else if b < a {
                parents[a as usize] = b;
            }
        };
        let key = |reference: PolyRef| live_polygon_key(data, reference);
        for (index, view) in data.slots.iter().enumerate() {
            let SlotState::Live(tile) = &view.state else {
                continue;
            };
            let table = data.search_tables.get(index)?;
            if table.generation() != view.generation {
                return None;
            }
            let base = data.polygon_base[index];
            for polygon in 0..tile.data.polygons.len() {
                let here = base + polygon as u32;
                for edge in table.edges(polygon as u16) {
                    if let Some(across) = edge.neighbour.and_then(key) {
                        join(&mut parents, here, across);
                    }
                }
            }
        }
        for link in &data.links {
            if let (Some(start), Some(end)) = (
                link.start_polygon.and_then(key),
                link.end_polygon.and_then(key),
            ) {
                join(&mut parents, start, end);
            }
        }
        let mut labels = vec![u32::MAX; total];
        let mut count = 0u32;
        for at in 0..total as u32 {
            let top = root(&mut parents, at);
            if labels[top as usize] == u32::MAX {
                labels[top as usize] = count;
                count += 1;
            }
            labels[at as usize] = labels[top as usize];
        }
        let mut slots: Vec<Vec<TileSlot>> = vec![Vec::new(); count as usize];
        for (index, view) in data.slots.iter().enumerate() {
            let SlotState::Live(tile) = &view.state else {
                continue;
            };
            let base = data.polygon_base[index] as usize;
            let mut seen: Vec<u32> = labels[base..base + tile.data.polygons.len()].to_vec();
            seen.sort_unstable();
            seen.dedup();
            let facing = data
                .neighbour_slots
                .get(index)
                .copied()
                .unwrap_or([u16::MAX; 4]);
            for label in seen {
                let list = &mut slots[label as usize];
                list.push(TileSlot(index as u16));
                for side in facing {
                    if side != u16::MAX
                        && matches!(data.slots[usize::from(side)].state, SlotState::Live(_))
                    {
                        list.push(TileSlot(side));
                    }
                }
            }
        }
        let slots: Vec<Box<[TileSlot]>> = slots
            .into_iter()
            .map(|mut list| {
                list.sort_unstable();
                list.dedup();
                list.into_boxed_slice()
            })
            .collect();
        let mut members: Vec<Option<Vec<Member>>> = slots
            .iter()
            .map(|list| (list.len() <= SMALL_COMPONENT_TILES_MAX).then(Vec::new))
            .collect();
        let everywhere = Aabb {
            min: Vec3::splat(f32::MIN),
            max: Vec3::splat(f32::MAX),
        };
        for (index, view) in data.slots.iter().enumerate() {
            let SlotState::Live(tile) = &view.state else {
                continue;
            };
            let base = data.polygon_base[index] as usize;
            tile.for_each_overlapping_bounds(&everywhere, |polygon, bounds| {
                let label = labels[base + usize::from(polygon)] as usize;
                let record = &tile.data.polygons[usize::from(polygon)];
                if let (Some(list), Some(reference)) = (
                    members[label].as_mut(),
                    PolyRef::new(view.generation, TileSlot(index as u16), polygon),
                ) {
                    list.push(Member {
                        polygon: reference,
                        bounds,
                        flags: record.flags,
                        area: record.area,
                    });
                }
            });
        }
        let members = members
            .into_iter()
            .map(|list| list.map(Vec::into_boxed_slice))
            .collect();
        Some(Components {
            labels,
            slots,
            members,
        })
    }

    /// The polygon of component `component` nearest `point` (3-D distance to its closest
    /// point, ties by reference) among those `passes(area, flags)` accepts, and that point;
    /// `None` for a component over [`SMALL_COMPONENT_TILES_MAX`] tiles or with no polygon
    /// accepted. Every polygon's bounds are a lower bound of its distance, so closest
    /// points are worked out only for those whose bounds come nearer than the best so far.
    pub fn nearest_member(
        &self,
        snapshot: &Snapshot,
        component: u32,
        point: Vec3,
        passes: impl Fn(u8, u16) -> bool,
    ) -> Option<(PolyRef, Vec3)> {
        let members = self.members.get(component as usize)?.as_deref()?;
        // Squared distances throughout: they order as the distances do.
        let below = |bounds: &Aabb| point.distance_squared(point.clamp(bounds.min, bounds.max));
        // First the member whose bounds come nearest, then every one that could beat it.
        let mut first: Option<(f32, &Member)> = None;
        for member in members {
            let bound = below(&member.bounds);
            if first.is_none_or(|(least, _)| bound < least) && passes(member.area, member.flags) {
                first = Some((bound, member));
            }
        }
        let exact = |member: &Member| -> Option<(f32, PolyRef, Vec3)> {
            let tile = snapshot.tile(member.polygon)?;
            let (closest, _) = tile.closest_point(member.polygon.polygon(), point);
            Some((closest.distance_squared(point), member.polygon, closest))
        };
        let (_, first) = first?;
        let mut best = exact(first)?;
        for member in members {
            if below(&member.bounds) > best.0
                || member.polygon == first.polygon
                || !passes(member.area, member.flags)
            {
                continue;
            }
            if let Some(candidate) = exact(member)
                && (candidate.0 < best.0 || (candidate.0 == best.0 && candidate.1 < best.1))
            {
                best = candidate;
            }
        }
        Some((best.1, best.2))
    }

    /// The component of `polygon`, a live polygon of `snapshot` (the snapshot these
    /// components are of); `None` for one it does not hold.
    pub fn of(&self, snapshot: &Snapshot, polygon: PolyRef) -> Option<u32> {
        snapshot.tile(polygon)?;
        self.labels
            .get(snapshot.polygon_key(polygon) as usize)
            .copied()
    }

    /// The tiles component `component` lies in and those across their sides.
    pub fn slots(&self, component: u32) -> &[TileSlot] {
        self.slots.get(component as usize).map_or(&[], |list| list)
    }

    /// How many components there are.
    pub fn count(&self) -> usize {
        self.slots.len()
    }
}

impl Snapshot {
    /// The components of this snapshot's polygons, worked out on first use; `None` when
    /// a live tile has no search table.
    pub fn components(&self) -> Option<&Components> {
        self.0
            .components
            .get_or_init(|| Components::build(&self.0))
            .as_ref()
    }
}
