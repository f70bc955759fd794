//! The half-planes an agent's velocity must keep to: one per neighbour (the ORCA
//! construction) and one per boundary segment that binds it.
//!
//! Stage: crowd runtime, inside the avoid pass. Input: the neighbour's offset, relative
//! velocity, radius sum and the agent's share, or the walls near the agent. Output:
//! [`HalfPlane`]s for the velocity program.

use glam::Vec2;

#[cfg(feature = "harness")]
use super::config::NEIGHBOURS_CAPACITY;
use super::program::{HalfPlane, WALLS_CAPACITY};
use crate::mesh::Wall;

/// One agent's neighbours, relative to it, as lanes (first `count` used).
#[cfg(feature = "harness")]
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

#[cfg(feature = "harness")]
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
#[cfg(feature = "harness")]
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

#[cfg(feature = "harness")]
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
#[cfg(feature = "harness")]
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

/// How far inside a segment's ends its legs are drawn, metres (at most a quarter of its
/// length): a path corner lies on the boundary, at a segment's very end, and a walker
/// aimed at it must not be read as aimed into the segment by rounding.
const WALL_END_MARGIN_M: f32 = 0.01;

/// The boundary half-planes of an agent at `position` (x, z) wanting `preferred`: one per
/// segment within reach whose interior is the closest point (an agent beyond a segment's
/// end, going round a corner of walkable space, is not held back by it). Writes at most
/// `out.len()` and at most [`WALLS_CAPACITY`], the first segments in `walls` order; returns
/// how many.
///
/// The velocities that reach a segment within the horizon form a truncated cone: between
/// the two legs (from the agent through each end) and beyond the front edge (the segment
/// scaled by 1 / horizon). Its complement is three half-planes, of which the program takes
/// one: the leg an agent aims past when its preferred velocity leaves the segment by an
/// end (a walker heading for the corner at a segment's end keeps its speed), else the
/// front edge: close on the segment no faster than its distance over the horizon. A
/// single front edge for every segment, as a line without ends, would slow every walker
/// to a crawl as it closes on the corner its path turns round.
#[inline(always)]
pub fn wall_constraints(
    walls: &[Wall],
    position: Vec2,
    preferred: Vec2,
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
        let offset = position - wall.start;
        let distance = inward.dot(offset).max(0.0);
        // The front edge: v . inward >= -distance / horizon.
        let front = HalfPlane {
            point: -inward * (distance * inverse_horizon),
            direction: -wall.direction,
        };
        let closing = -preferred.dot(inward);
        *plane = if closing * wall_time_horizon_s <= distance {
            front // the preferred velocity does not reach the segment's line in time
        } else {
            // Where the preferred velocity meets the line, along the segment.
            let hit_along =
                wall.direction.dot(offset) + wall.direction.dot(preferred) * distance / closing;
            let margin = WALL_END_MARGIN_M.min(0.25 * wall.length_m);
            let end_along = wall.length_m - margin;
            // The end the agent aims past, seen from the agent, and the segment's other
            // end (which must stay on the refused side of the leg).
            let (past, other) = if hit_along >= end_along {
                (
                    wall.direction * end_along - offset,
                    wall.direction * margin - offset,
                )
            } else if hit_along <= margin {
                (
                    wall.direction * margin - offset,
                    wall.direction * end_along - offset,
                )
            } else {
                (Vec2::ZERO, Vec2::ZERO)
            };
            let leg = past.normalize_or_zero();
            if leg == Vec2::ZERO {
                front
            } else {
                // Admissible is left of the direction: the other end lies on its right.
                let direction = if leg.perp_dot(other) < 0.0 { leg } else { -leg };
                HalfPlane {
                    point: Vec2::ZERO,
                    direction,
                }
            }
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
    fn a_walker_aimed_past_a_walls_end_keeps_its_speed_and_one_aimed_into_it_is_held() {
        // The wall along z = 0 from x = 0 to 10, walkable z > 0; the agent 0.2 m from it.
        let walls = [Wall::new(Vec2::new(10.0, 0.0), Vec2::new(0.0, 0.0)).expect("a segment")];
        let mut out = [HalfPlane {
            point: Vec2::ZERO,
            direction: Vec2::X,
        }; 4];
        let position = Vec2::new(5.0, 0.2);
        // Aimed at the corner (10, 0), the wall's end, at 3.5 m/s: the ray meets the wall's
        // line at its very end. A line without ends would allow 0.2 m/s of closing speed.
        let to_corner = (Vec2::new(10.0, 0.0) - position).normalize() * 3.5;
        assert_eq!(
            wall_constraints(&walls, position, to_corner, 3.5, 1.0, &mut out),
            1
        );
        assert!(out[0].violation(to_corner) <= 1e-6, "{:?}", out[0]);
        // The leg still refuses turning into the wall short of its end.
        let into = Vec2::from_angle(-0.2).rotate(to_corner);
        assert!(out[0].violation(into) > 0.0, "{:?}", out[0]);
        // Aimed at the wall's middle: closing at 0.2 m/s is the limit.
        let at_middle = Vec2::new(0.0, -3.5);
        assert_eq!(
            wall_constraints(&walls, position, at_middle, 3.5, 1.0, &mut out),
            1
        );
        assert!(out[0].violation(Vec2::new(0.0, -0.2)).abs() < 1e-6);
        assert!(out[0].violation(Vec2::new(3.0, -1.0)) > 0.0);
        // Past the other end, (0, 0), the same way round.
        let to_start = (Vec2::new(0.0, 0.0) - position).normalize() * 3.5;
        wall_constraints(&walls, position, to_start, 3.5, 1.0, &mut out);
        assert!(out[0].violation(to_start) <= 1e-6, "{:?}", out[0]);
        assert!(out[0].violation(Vec2::from_angle(0.2).rotate(to_start)) > 0.0);
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
        let count = wall_constraints(
            &walls,
            Vec2::new(5.0, 0.5),
            Vec2::new(0.0, -3.0),
            3.0,
            1.0,
            &mut out,
        );
        assert_eq!(count, 1);
        // Closing at 0.5 m/s (0.5 m in 1 s) is the limit.
        assert!(out[0].violation(Vec2::new(0.0, -0.5)).abs() < 1e-6);
        assert!(out[0].violation(Vec2::new(3.0, -0.6)) > 0.0);
        assert!(out[0].violation(Vec2::new(3.0, 0.0)) < 0.0);
        // Beyond the wall's end (x = -1): going round the corner is not held back.
        assert_eq!(
            wall_constraints(&walls, Vec2::new(-1.0, 0.5), Vec2::ZERO, 3.0, 1.0, &mut out),
            0
        );
    }
}
