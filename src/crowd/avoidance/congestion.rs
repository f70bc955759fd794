//! Congestion: how crowded each polygon is, as cost factors for a re-plan that routes
//! round jams.
//!
//! Stage: crowd runtime, inside the schedule pass, only in a step that opens such a
//! re-plan. Inputs: the snapshot, the agents' polygons and radii, the weight
//! ([`CrowdConfig::replan_congestion_weight`](crate::crowd::CrowdConfig::replan_congestion_weight)).
//! Output: one factor per polygon of the snapshot, by dense key
//! ([`Snapshot::polygon_key`]): `1 + weight * crowding`, where crowding is the share of
//! the polygon's floor the bodies on it cover (capped at [`CROWDING_MAX`]; 0 on an empty
//! polygon), for [`PathSearch::set_polygon_costs`](crate::query::PathSearch::set_polygon_costs).
//!
//! Invariants: the factors depend only on where the agents stand (the lanes the step
//! starts from), so they are the same at any thread count and after a restore; every
//! factor is at least 1.

use std::sync::Arc;

use crate::crowd::lanes::AgentLanes;
use crate::mesh::Snapshot;

/// The most crowding a polygon counts with: bodies pressed into each other can cover more
/// than its floor, and a polygon packed twice over is as closed as a jam gets.
pub const CROWDING_MAX: f32 = 2.0;

/// The cost factor of every polygon of `snapshot` for the crowd in `lanes` (see the module
/// docs).
pub fn crowding_factors(snapshot: &Snapshot, lanes: &AgentLanes, weight: f32) -> Arc<[f32]> {
    let total = snapshot.data().polygon_total as usize;
    let mut covered_m2 = vec![0.0f32; total];
    for (&polygon, &radius) in lanes.polygon.iter().zip(&lanes.radius) {
        if let Some(covered) = covered_m2.get_mut(snapshot.polygon_key(polygon) as usize) {
            *covered += std::f32::consts::PI * radius * radius;
        }
    }
    let mut factors = vec![1.0f32; total];
    for (slot, _) in snapshot.data().slots.iter().enumerate() {
        let Some((tile, _)) = snapshot.live_slot(crate::mesh::TileSlot(slot as u16)) else {
            continue;
        };
        let base = snapshot.data().polygon_base[slot] as usize;
        for polygon in 0..tile.data.polygons.len() {
            let key = base + polygon;
            let Some(&covered) = covered_m2.get(key).filter(|&&covered| covered > 0.0) else {
                continue;
            };
            let area = tile.data.polygon_area_m2(polygon);
            let crowding = if area > 0.0 {
                (covered / area).min(CROWDING_MAX)
            } else {
                CROWDING_MAX
            };
            factors[key] = 1.0 + weight * crowding;
        }
    }
    factors.into()
}
