//! Seeded random points on the mesh, for scenarios, tests and stress runs.
//!
//! Stage: query, read-only over a snapshot. Output: points spread uniformly by area over
//! the polygons a filter passes, each on its polygon's detail surface. Invariant: the same
//! snapshot, filter and seed give the same sequence, whether drawn at once
//! ([`random_points`]) or one by one ([`RandomPoints`]).

use glam::Vec3;

use super::QueryFilter;
use crate::geom::SplitMix64;
use crate::mesh::{PolyRef, Snapshot};

/// `count` points spread uniformly by area over the polygons that pass `filter` (on their
/// detail surface), with their polygons; empty when the mesh has no walkable area.
pub fn random_points(
    snapshot: &Snapshot,
    filter: &QueryFilter,
    count: usize,
    seed: u64,
) -> Vec<(PolyRef, Vec3)> {
    match RandomPoints::new(snapshot, filter, seed) {
        Some(points) => points.take(count).collect(),
        None => Vec::new(),
    }
}

/// An endless seeded sequence of random points, the one [`random_points`] collects: for
/// callers that draw millions and keep few, so the draws never sit in memory together.
#[derive(Clone, Debug)]
pub struct RandomPoints {
    /// Every detail triangle of a passing polygon, with its polygon.
    triangles: Vec<(PolyRef, [Vec3; 3])>,
    /// Running total of the triangles' areas, m², in the same order.
    cumulative_area: Vec<f64>,
    random: SplitMix64,
}

impl RandomPoints {
    /// The sequence for `seed` over the polygons `filter` passes; `None` when they have no
    /// area.
    pub fn new(snapshot: &Snapshot, filter: &QueryFilter, seed: u64) -> Option<RandomPoints> {
        let mut triangles: Vec<(PolyRef, [Vec3; 3])> = Vec::new();
        let mut cumulative_area: Vec<f64> = Vec::new();
        let mut total = 0.0f64;
        for slot in 0..snapshot.data().slots.len() {
            let slot = crate::mesh::TileSlot(slot as u16);
            let Some((tile, generation)) = snapshot.live_slot(slot) else {
                continue;
            };
            for (index, polygon) in tile.data.polygons.iter().enumerate() {
                if !filter.passes(polygon) {
                    continue;
                }
                let Some(reference) = PolyRef::new(generation, slot, index as u16) else {
                    continue;
                };
                for &[a, b, c] in tile.detail_triangles(index as u16) {
                    let area = 0.5 * f64::from((b - a).cross(c - a).length());
                    if area <= 0.0 {
                        continue;
                    }
                    total += area;
                    triangles.push((reference, [a, b, c]));
                    cumulative_area.push(total);
                }
            }
        }
        (!triangles.is_empty()).then(|| RandomPoints {
            triangles,
            cumulative_area,
            random: SplitMix64::new(seed),
        })
    }
}

impl Iterator for RandomPoints {
    type Item = (PolyRef, Vec3);

    fn next(&mut self) -> Option<(PolyRef, Vec3)> {
        let total = *self.cumulative_area.last()?;
        let pick = f64::from(self.random.next_f32()) * total;
        let index = self
            .cumulative_area
            .partition_point(|&area| area <= pick)
            .min(self.triangles.len() - 1);
        let (polygon, [a, b, c]) = self.triangles[index];
        let (mut u, mut v) = (self.random.next_f32(), self.random.next_f32());
        if u + v > 1.0 {
            (u, v) = (1.0 - u, 1.0 - v);
        }
        Some((polygon, a + (b - a) * u + (c - a) * v))
    }
}
