//! The half-planes an agent's velocity must keep to: one per neighbour (the ORCA
//! construction) and one per boundary segment that binds it.
//!
//! Stage: crowd runtime, inside the avoid pass. Input: the neighbour's offset, relative
//! velocity, radius sum and the agent's share, or the walls near the agent. Output:
//! [`HalfPlane`]s for the velocity program.

use glam::Vec2;

use super::config::NEIGHBOURS_CAPACITY;
use super::program::{HalfPlane, WALLS_CAPACITY};
use crate::mesh::Wall;

/// One agent's neighbours, relative to it, as lanes (first `count` used).
#[derive(Clone, Copy, Debug)]
pub struct NeighbourBatch {
    /// Neighbours in the batch.
    pub count: usize,
    /// Neighbour position minus agent position, x, metres.
    pub offset_x: [f32; NEIGHBOURS_CAPACITY],
    /// Offset, z.
    pub offset_z: [f32; NEIGHBOURS_CAPACITY],
    /// Agent velocity minus neighbour velocity, x, m/s.
    pub relative_velocity_x: [f32; NEIGHBOURS_CAPACITY],
    /// Relative velocity, z.
    pub relative_velocity_z: [f32; NEIGHBOURS_CAPACITY],
    /// Sum of the two radii, metres.
    pub radius_sum: [f32; NEIGHBOURS_CAPACITY],
    /// The agent's share of the avoidance (0..1).
    pub share: [f32; NEIGHBOURS_CAPACITY],
}

impl Default for NeighbourBatch {
    fn default() -> Self {
        NeighbourBatch {
            count: 0,
            offset_x: [0.0; NEIGHBOURS_CAPACITY],
            offset_z: [0.0; NEIGHBOURS_CAPACITY],
            relative_velocity_x: [0.0; NEIGHBOURS_CAPACITY],
            relative_velocity_z: [0.0; NEIGHBOURS_CAPACITY],
            radius_sum: [0.0; NEIGHBOURS_CAPACITY],
            share: [0.0; NEIGHBOURS_CAPACITY],
        }
    }
}

/// The half-planes of a batch, as lanes.
#[derive(Clone, Copy, Debug)]
pub struct ConstraintLanes {
    /// Boundary point, x, m/s.
    pub point_x: [f32; NEIGHBOURS_CAPACITY],
    /// Boundary point, z.
    pub point_z: [f32; NEIGHBOURS_CAPACITY],
    /// Unit direction, x.
    pub direction_x: [f32; NEIGHBOURS_CAPACITY],
    /// Unit direction, z.
    pub direction_z: [f32; NEIGHBOURS_CAPACITY],
}

impl Default for ConstraintLanes {
    fn default() -> Self {
        ConstraintLanes {
            point_x: [0.0; NEIGHBOURS_CAPACITY],
            point_z: [0.0; NEIGHBOURS_CAPACITY],
            direction_x: [0.0; NEIGHBOURS_CAPACITY],
            direction_z: [0.0; NEIGHBOURS_CAPACITY],
        }
    }
}

/// Keeps a zero length from dividing (two agents at the same point, moving alike).
const LENGTH_FLOOR: f32 = 1e-6;

/// The ORCA half-plane of each neighbour in `batch`, one at a time. `inverse_horizon` is
/// 1 / time horizon, `inverse_dt` 1 / step (used when two agents already overlap: resolve
/// within this step).
pub fn orca_constraints_scalar(
    velocity: Vec2,
    inverse_horizon: f32,
    inverse_dt: f32,
    batch: &NeighbourBatch,
    out: &mut ConstraintLanes,
) {
    for i in 0..batch.count {
        let plane = orca_half_plane(
            velocity,
            inverse_horizon,
            inverse_dt,
            Vec2::new(batch.offset_x[i], batch.offset_z[i]),
            Vec2::new(batch.relative_velocity_x[i], batch.relative_velocity_z[i]),
            batch.radius_sum[i],
            batch.share[i],
            0.0,
        );
        out.point_x[i] = plane.point.x;
        out.point_z[i] = plane.point.y;
        out.direction_x[i] = plane.direction.x;
        out.direction_z[i] = plane.direction.y;
    }
}

/// The ORCA half-plane of one neighbour at `offset` (its position minus the agent's),
/// with `relative_velocity` (the agent's minus the neighbour's), radius sum `radius` and the
/// agent's `share`: the body of [`orca_constraints_scalar`], which the avoid pass also
/// calls directly as it reads each neighbour. `pass_right_sin_squared` is the squared sine
/// of [`AvoidanceConfig::passing_side_rad`]: the velocity obstacle's left leg is taken
/// only when the relative velocity lies that far to its left, so near head-on both agents
/// of a pair (who see the same sign) pass each other on their right.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn orca_half_plane(
    velocity: Vec2,
    inverse_horizon: f32,
    inverse_dt: f32,
    offset: Vec2,
    relative_velocity: Vec2,
    radius: f32,
    share: f32,
    pass_right_sin_squared: f32,
) -> HalfPlane {
    let (px, pz) = (offset.x, offset.y);
    let (vx, vz) = (relative_velocity.x, relative_velocity.y);
    let distance_squared = px * px + pz * pz;
    let radius_squared = radius * radius;
    let colliding = distance_squared <= radius_squared;
    // w: relative velocity seen from the centre of the truncation circle.
    let inverse = if colliding {
        inverse_dt
    } else {
        inverse_horizon
    };
    let wx = vx - px * inverse;
    let wz = vz - pz * inverse;
    let w_squared = wx * wx + wz * wz;
    let w_dot_p = wx * px + wz * pz;
    let on_cutoff = colliding || (w_dot_p < 0.0 && w_dot_p * w_dot_p > radius_squared * w_squared);
    let (direction_x, direction_z, change_x, change_z);
    if on_cutoff {
        // Closest boundary point is on the truncation circle: push out along w.
        let w_length = w_squared.sqrt().max(LENGTH_FLOOR);
        let (unit_x, unit_z) = (wx / w_length, wz / w_length);
        let scale = radius * inverse - w_length;
        direction_x = unit_z;
        direction_z = -unit_x;
        change_x = unit_x * scale;
        change_z = unit_z * scale;
    } else {
        // Closest boundary point is on a leg of the cone: project onto it.
        let leg = (distance_squared - radius_squared).max(0.0).sqrt();
        let inverse_distance_squared = 1.0 / distance_squared;
        let cross = px * wz - pz * wx;
        let left =
            (cross > 0.0) & (cross * cross > pass_right_sin_squared * distance_squared * w_squared);
        // The two legs differ only in the sign of the leg term: a select, not a branch (which
        // side a neighbour passes on goes either way at random).
        let leg = if left { leg } else { -leg };
        direction_x = (px * leg - pz * radius) * inverse_distance_squared;
        direction_z = (px * radius + pz * leg) * inverse_distance_squared;
        let along = vx * direction_x + vz * direction_z;
        change_x = direction_x * along - vx;
        change_z = direction_z * along - vz;
    }
    HalfPlane {
        point: Vec2::new(velocity.x + change_x * share, velocity.y + change_z * share),
        direction: Vec2::new(direction_x, direction_z),
    }
}

/// The boundary half-planes of an agent at `position` (x, z): one per segment within
/// reach whose interior is the closest point (an agent beyond a segment's end, going round a
/// corner of walkable space, is not held back by it). Writes at most `out.len()` and at
/// most [`WALLS_CAPACITY`], the first segments in `walls` order; returns how many.
#[inline(always)]
pub fn wall_constraints(
    walls: &[Wall],
    position: Vec2,
    reach_m: f32,
    wall_time_horizon_s: f32,
    out: &mut [HalfPlane],
) -> usize {
    // Most segments near an agent do not bind it, which ones do changes from agent to
    // agent, and a branch on it mispredicted about one segment in seven (eighteen
    // segments per agent in the city): every segment's index is written to the next free
    // place, which only advances when the segment binds; the half-planes are built after,
    // for the few that do.
    let capacity = out.len().min(WALLS_CAPACITY);
    let mut binding = [0u32; WALLS_CAPACITY];
    let mut count = 0;
    for (index, wall) in walls.iter().enumerate() {
        if count == capacity {
            break;
        }
        let offset = position - wall.start;
        let along = wall.direction.dot(offset);
        // Walkable space is where perp_dot(direction, point - start) < 0 (the tile winding).
        let distance = wall.direction.y * offset.x - wall.direction.x * offset.y;
        // Not beyond an end, not behind the segment (it faces away), not too far to matter.
        let binds =
            (along > 0.0) & (along < wall.length_m) & (distance >= -0.01) & (distance <= reach_m);
        binding[count] = index as u32;
        count += usize::from(binds);
    }
    let inverse_horizon = 1.0 / wall_time_horizon_s;
    for (plane, &index) in out.iter_mut().zip(&binding[..count]) {
        let wall = &walls[index as usize];
        let inward = Vec2::new(wall.direction.y, -wall.direction.x);
        let distance = inward.dot(position - wall.start);
        // v . inward >= -distance / horizon: close on the segment no faster than that.
        *plane = HalfPlane {
            point: -inward * (distance.max(0.0) * inverse_horizon),
            direction: -wall.direction,
        };
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_on_agents_get_half_planes_that_part_them_symmetrically() {
        // A at the origin walking +x at 1 m/s, B 4 m ahead walking -x: relative velocity
        // 2 m/s straight into B, combined radius 1, horizon 2 s.
        let batch = NeighbourBatch {
            count: 1,
            offset_x: [4.0; NEIGHBOURS_CAPACITY],
            relative_velocity_x: [2.0; NEIGHBOURS_CAPACITY],
            radius_sum: [1.0; NEIGHBOURS_CAPACITY],
            share: [0.5; NEIGHBOURS_CAPACITY],
            ..NeighbourBatch::default()
        };
        let mut out = ConstraintLanes::default();
        orca_constraints_scalar(Vec2::new(1.0, 0.0), 0.5, 30.0, &batch, &mut out);
        let plane = HalfPlane {
            point: Vec2::new(out.point_x[0], out.point_z[0]),
            direction: Vec2::new(out.direction_x[0], out.direction_z[0]),
        };
        // (2, 0) lies inside the truncated cone (in 2 s at 2 m/s A would reach B), so the
        // current velocity is refused.
        assert!(plane.violation(Vec2::new(1.0, 0.0)) > 0.0);
        assert!((plane.direction.length() - 1.0).abs() < 1e-6);
        // The closest way out is a leg of the cone: sin(angle to the axis) = 1/4.
        let angle = plane.direction.y.abs().atan2(plane.direction.x.abs());
        assert!((angle - 0.25f32.asin()).abs() < 1e-5, "{angle}");
        // B's half-plane is A's mirrored through the origin: they turn to opposite sides.
        let mirrored = NeighbourBatch {
            offset_x: [-4.0; NEIGHBOURS_CAPACITY],
            relative_velocity_x: [-2.0; NEIGHBOURS_CAPACITY],
            ..batch
        };
        let mut other = ConstraintLanes::default();
        orca_constraints_scalar(Vec2::new(-1.0, 0.0), 0.5, 30.0, &mirrored, &mut other);
        assert!((other.point_x[0] + out.point_x[0]).abs() < 1e-6);
        assert!((other.point_z[0] + out.point_z[0]).abs() < 1e-6);
        assert!((other.direction_x[0] + out.direction_x[0]).abs() < 1e-6);
        assert!((other.direction_z[0] + out.direction_z[0]).abs() < 1e-6);
    }

    #[test]
    fn a_wall_ahead_limits_the_closing_speed_and_a_wall_behind_a_corner_does_not() {
        // Wall along z = 0 from x = 0 to 10 walked so walkable space (right of the edge) is
        // z > 0: edge from (10, 0) to (0, 0) has right-hand normal (0, 1).
        let walls = [Wall::new(Vec2::new(10.0, 0.0), Vec2::new(0.0, 0.0)).expect("a segment")];
        let mut out = [HalfPlane {
            point: Vec2::ZERO,
            direction: Vec2::X,
        }; 4];
        let count = wall_constraints(&walls, Vec2::new(5.0, 0.5), 3.0, 1.0, &mut out);
        assert_eq!(count, 1);
        // Closing at 0.5 m/s (0.5 m in 1 s) is the limit.
        assert!(out[0].violation(Vec2::new(0.0, -0.5)).abs() < 1e-6);
        assert!(out[0].violation(Vec2::new(3.0, -0.6)) > 0.0);
        assert!(out[0].violation(Vec2::new(3.0, 0.0)) < 0.0);
        // Beyond the wall's end (x = -1): going round the corner is not held back.
        assert_eq!(
            wall_constraints(&walls, Vec2::new(-1.0, 0.5), 3.0, 1.0, &mut out),
            0
        );
    }
}
