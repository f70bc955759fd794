//! Seeded random points on the mesh, for scenarios, tests and stress runs.

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
    // Every detail triangle with its polygon, and the running total of areas.
    let mut triangles: Vec<(PolyRef, [Vec3; 3])> = Vec::new();
    let mut cumulative: Vec<f64> = Vec::new();
    let mut total = 0.0f64;
    for slot in 0..snapshot.data().slots.len() {
        let Some((tile, generation)) = snapshot.live_slot(crate::mesh::TileSlot(slot as u16))
        else {
            continue;
        };
        for (index, polygon) in tile.data.polygons.iter().enumerate() {
            if !filter.passes(polygon) {
                continue;
            }
            let Some(reference) =
                PolyRef::new(generation, crate::mesh::TileSlot(slot as u16), index as u16)
            else {
                continue;
            };
            for &[a, b, c] in tile.detail_triangles(index as u16) {
                let area = 0.5 * f64::from((b - a).cross(c - a).length());
                if area <= 0.0 {
                    continue;
                }
                total += area;
                triangles.push((reference, [a, b, c]));
                cumulative.push(total);
            }
        }
    }
    if triangles.is_empty() {
        return Vec::new();
    }
    let mut random = SplitMix64::new(seed);
    (0..count)
        .map(|_| {
            let pick = f64::from(random.next_f32()) * total;
            let index = cumulative
                .partition_point(|&c| c <= pick)
                .min(triangles.len() - 1);
            let (polygon, [a, b, c]) = triangles[index];
            let (mut u, mut v) = (random.next_f32(), random.next_f32());
            if u + v > 1.0 {
                (u, v) = (1.0 - u, 1.0 - v);
            }
            (polygon, a + (b - a) * u + (c - a) * v)
        })
        .collect()
}
