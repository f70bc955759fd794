//! The velocity program: the admissible velocity closest to the preferred one.
//!
//! Stage: crowd runtime, inside the avoid pass. Input: half-planes of velocities (the
//! boundary's first, hard; then the neighbours'), the speed disk |v| <= V/k and the
//! acceleration disk |v - vEnd| <= A/k * dt. Output: the closest admissible velocity, or,
//! when the neighbours' half-planes leave nothing, the one that violates them least while
//! the boundary holds (a 3-D program), marked jammed. An incremental 2-D linear program in
//! the manner of RVO2's, with both disks as constraints.

use glam::Vec2;

use super::config::NEIGHBOURS_CAPACITY;

/// Tolerance of the linear program (parallel lines, points on circles).
pub(crate) const EPSILON: f32 = 1e-5;

/// A half-plane of velocities: admissible points lie on the left of `direction` (a unit
/// vector) through `point`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfPlane {
    /// A point on the boundary line, m/s.
    pub point: Vec2,
    /// Unit direction of the boundary line.
    pub direction: Vec2,
}

impl HalfPlane {
    /// How far `velocity` lies outside (positive) or inside (negative), m/s.
    #[inline]
    pub fn violation(&self, velocity: Vec2) -> f32 {
        self.direction.perp_dot(self.point - velocity)
    }
}

/// A disk of velocities.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VelocityDisk {
    /// Centre, m/s.
    pub centre: Vec2,
    /// Radius, m/s.
    pub radius: f32,
}

impl VelocityDisk {
    #[inline(always)]
    fn contains(&self, velocity: Vec2) -> bool {
        velocity.distance_squared(self.centre)
            <= self.radius * self.radius * (1.0 + EPSILON) + EPSILON
    }

    #[inline(always)]
    fn closest(&self, velocity: Vec2) -> Vec2 {
        let offset = velocity - self.centre;
        let length = offset.length();
        if length <= self.radius {
            velocity
        } else {
            self.centre + offset * (self.radius / length)
        }
    }

    /// The parameter interval of `point + t * direction` inside the disk.
    #[inline(always)]
    fn interval(&self, point: Vec2, direction: Vec2) -> Option<(f32, f32)> {
        let offset = point - self.centre;
        let along = direction.dot(offset);
        let discriminant = along * along - offset.length_squared() + self.radius * self.radius;
        if discriminant < 0.0 {
            return None;
        }
        let half = discriminant.sqrt();
        Some((-along - half, -along + half))
    }
}

/// The velocities an agent can reach this step: the speed disk (centre zero, V/k) meets the
/// acceleration disk (centre vEnd, A/k * dt).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VelocityBounds {
    /// |v| <= V/k.
    pub speed: VelocityDisk,
    /// |v - vEnd| <= A/k * dt.
    pub acceleration: VelocityDisk,
}

impl VelocityBounds {
    /// The bounds of an agent moving at `velocity` with limits `speed_limit` and
    /// `acceleration_limit * dt`. An agent faster than it may go (it just stepped onto a
    /// steeper patch) cannot reach the speed disk in one step; its speed disk then grows to
    /// its current speed, so avoidance may steer it while the controller slows it down.
    pub fn new(velocity: Vec2, speed_limit: f32, acceleration_budget: f32) -> VelocityBounds {
        let speed = velocity.length();
        let speed_radius = if speed > speed_limit + acceleration_budget {
            speed
        } else {
            speed_limit
        };
        VelocityBounds {
            speed: VelocityDisk {
                centre: Vec2::ZERO,
                radius: speed_radius,
            },
            acceleration: VelocityDisk {
                centre: velocity,
                radius: acceleration_budget,
            },
        }
    }

    /// The two points where the disks' circles cross, if they do.
    #[inline(always)]
    fn crossings(&self) -> Option<[Vec2; 2]> {
        let (a, b) = (self.speed, self.acceleration);
        let between = b.centre - a.centre;
        let distance = between.length();
        if distance <= EPSILON || distance > a.radius + b.radius {
            return None;
        }
        let along =
            (distance * distance + a.radius * a.radius - b.radius * b.radius) / (2.0 * distance);
        let across_squared = a.radius * a.radius - along * along;
        if across_squared < 0.0 {
            return None;
        }
        let unit = between / distance;
        let foot = a.centre + unit * along;
        let across = unit.perp() * across_squared.sqrt();
        Some([foot + across, foot - across])
    }

    /// The admissible velocity closest to `velocity`.
    #[inline(always)]
    pub fn closest(&self, velocity: Vec2) -> Vec2 {
        let on_speed = self.speed.closest(velocity);
        if self.acceleration.contains(on_speed) {
            return on_speed;
        }
        let on_acceleration = self.acceleration.closest(velocity);
        if self.speed.contains(on_acceleration) {
            return on_acceleration;
        }
        match self.crossings() {
            Some([first, second]) => {
                if first.distance_squared(velocity) <= second.distance_squared(velocity) {
                    first
                } else {
                    second
                }
            }
            None => on_acceleration,
        }
    }

    /// The admissible velocity farthest along the unit vector `direction`.
    #[inline(always)]
    fn farthest(&self, direction: Vec2) -> Vec2 {
        let on_speed = self.speed.centre + direction * self.speed.radius;
        if self.acceleration.contains(on_speed) {
            return on_speed;
        }
        let on_acceleration = self.acceleration.centre + direction * self.acceleration.radius;
        if self.speed.contains(on_acceleration) {
            return on_acceleration;
        }
        match self.crossings() {
            Some([first, second]) => {
                if first.dot(direction) >= second.dot(direction) {
                    first
                } else {
                    second
                }
            }
            None => on_acceleration,
        }
    }
}

/// What the linear program optimises.
#[derive(Clone, Copy, Debug)]
enum Goal {
    /// The point closest to this velocity.
    Closest(Vec2),
    /// The point farthest along this unit direction.
    Farthest(Vec2),
}

/// Moves `result` onto the boundary of half-plane `index`, at the best point that satisfies
/// the bounds and every earlier half-plane; false (result untouched) if there is none.
#[inline(always)]
fn solve_on_line(
    planes: &[HalfPlane],
    index: usize,
    bounds: &VelocityBounds,
    goal: Goal,
    result: &mut Vec2,
) -> bool {
    let plane = planes[index];
    let Some((speed_low, speed_high)) = bounds.speed.interval(plane.point, plane.direction) else {
        return false;
    };
    let Some((reach_low, reach_high)) = bounds.acceleration.interval(plane.point, plane.direction)
    else {
        return false;
    };
    let (mut low, mut high) = (speed_low.max(reach_low), speed_high.min(reach_high));
    // (Written so a NaN bound, from values no validated input gives, reads as no room
    // rather than reaching the clamp below.)
    if !(low <= high) {
        return false;
    }
    for earlier in &planes[..index] {
        let denominator = plane.direction.perp_dot(earlier.direction);
        let numerator = earlier.direction.perp_dot(plane.point - earlier.point);
        if denominator.abs() <= EPSILON {
            // Parallel: the earlier half-plane holds all of this line or none of it.
            if numerator < 0.0 {
                return false;
            }
            continue;
        }
        let t = numerator / denominator;
        if denominator >= 0.0 {
            high = high.min(t);
        } else {
            low = low.max(t);
        }
        if !(low <= high) {
            return false;
        }
    }
    let t = match goal {
        Goal::Farthest(direction) => {
            if direction.dot(plane.direction) > 0.0 {
                high
            } else {
                low
            }
        }
        Goal::Closest(velocity) => plane.direction.dot(velocity - plane.point).clamp(low, high),
    };
    *result = plane.point + plane.direction * t;
    true
}

/// The 2-D linear program: the best point of the bounds inside every half-plane, added one
/// at a time. Returns the number of half-planes satisfied in order: `planes.len()` on
/// success; otherwise `result` satisfies the first that many.
#[inline(always)]
fn solve_planes(
    planes: &[HalfPlane],
    bounds: &VelocityBounds,
    goal: Goal,
    result: &mut Vec2,
) -> usize {
    *result = match goal {
        Goal::Closest(velocity) => bounds.closest(velocity),
        Goal::Farthest(direction) => bounds.farthest(direction),
    };
    for index in 0..planes.len() {
        if planes[index].violation(*result) > 0.0 {
            let before = *result;
            if !solve_on_line(planes, index, bounds, goal, result) {
                *result = before;
                return index;
            }
        }
    }
    planes.len()
}

/// The 3-D fallback when the half-planes from `first_failed` on leave no admissible point:
/// the velocity minimising the largest violation of the soft half-planes (index
/// `hard_count` and above), keeping the hard ones (the boundary) satisfied.
#[inline(always)]
fn solve_least_violation(
    planes: &[HalfPlane],
    hard_count: usize,
    first_failed: usize,
    bounds: &VelocityBounds,
    result: &mut Vec2,
) {
    let mut distance = 0.0f32;
    let mut projected = [HalfPlane {
        point: Vec2::ZERO,
        direction: Vec2::X,
    }; NEIGHBOURS_CAPACITY + WALLS_CAPACITY];
    for index in first_failed..planes.len() {
        let plane = planes[index];
        if plane.violation(*result) <= distance {
            continue;
        }
        // The half-planes, seen on the plane where violating `plane` by the same amount:
        // each earlier soft one becomes the bisector of the two.
        projected[..hard_count].copy_from_slice(&planes[..hard_count]);
        let mut count = hard_count;
        for earlier in &planes[hard_count..index] {
            let determinant = plane.direction.perp_dot(earlier.direction);
            let point = if determinant.abs() <= EPSILON {
                if plane.direction.dot(earlier.direction) > 0.0 {
                    continue; // same direction: nothing new
                }
                (plane.point + earlier.point) * 0.5
            } else {
                plane.point
                    + plane.direction
                        * (earlier.direction.perp_dot(plane.point - earlier.point) / determinant)
            };
            let direction = (earlier.direction - plane.direction).normalize_or_zero();
            projected[count] = HalfPlane { point, direction };
            count += 1;
        }
        let before = *result;
        let towards = Vec2::new(-plane.direction.y, plane.direction.x);
        if solve_planes(&projected[..count], bounds, Goal::Farthest(towards), result) < count {
            // Only rounding can get here (the result so far is a solution): keep it.
            *result = before;
        }
        distance = plane.violation(*result);
    }
}

/// Most boundary segments one agent weighs.
pub const WALLS_CAPACITY: usize = 16;

/// The admissible velocity closest to `preferred` under `planes` (the first `hard_count`
/// are the boundary) and `bounds`.
#[inline(always)]
pub fn solve_velocity(
    planes: &[HalfPlane],
    hard_count: usize,
    bounds: &VelocityBounds,
    preferred: Vec2,
) -> Solved {
    let mut result = Vec2::ZERO;
    let mut satisfied = solve_planes(planes, bounds, Goal::Closest(preferred), &mut result);
    let (planes, hard_count) = if satisfied < hard_count {
        // The boundary cannot be kept within one step's reach (an agent carried into a
        // corner): drop it, the controller clamps the move to the mesh anyway. (Solved
        // here, not by calling this function again: a recursive function cannot be inlined
        // into the avoid pass's x86-64-v3 copy, see `crowd::cpu`.)
        let soft = &planes[hard_count..];
        satisfied = solve_planes(soft, bounds, Goal::Closest(preferred), &mut result);
        (soft, 0)
    } else {
        (planes, hard_count)
    };
    if satisfied == planes.len() {
        return Solved {
            velocity: result,
            jammed: false,
        };
    }
    solve_least_violation(planes, hard_count, satisfied, bounds, &mut result);
    Solved {
        velocity: result,
        jammed: true,
    }
}

/// The answer of [`solve_velocity`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Solved {
    /// The admissible velocity.
    pub velocity: Vec2,
    /// Whether the neighbours' half-planes left nothing admissible (the least violating
    /// velocity was taken): the agent cannot do its share of avoidance this step.
    pub jammed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_finds_the_closest_admissible_velocity() {
        let bounds = VelocityBounds::new(Vec2::new(1.0, 0.0), 2.0, 10.0);
        // Direction (0, 1) through (0.5, 0): admissible is x <= 0.5.
        let plane = HalfPlane {
            point: Vec2::new(0.5, 0.0),
            direction: Vec2::new(0.0, 1.0),
        };
        let result = solve_velocity(&[plane], 0, &bounds, Vec2::new(1.5, 0.3)).velocity;
        assert!(result.distance(Vec2::new(0.5, 0.3)) < 1e-6, "{result}");
        // Acceleration disk of 0.2 around (1, 0) cannot reach x <= 0.5: the soft plane is
        // violated as little as possible, at x = 0.8.
        let tight = VelocityBounds::new(Vec2::new(1.0, 0.0), 2.0, 0.2);
        let result = solve_velocity(&[plane], 0, &tight, Vec2::new(1.5, 0.0));
        assert!(result.jammed);
        let result = result.velocity;
        assert!(result.distance(Vec2::new(0.8, 0.0)) < 1e-5, "{result}");
        // Two contradicting soft planes (x <= -1 and x >= 1): the middle, x = 0.
        let other = HalfPlane {
            point: Vec2::new(1.0, 0.0),
            direction: Vec2::new(0.0, -1.0),
        };
        let left = HalfPlane {
            point: Vec2::new(-1.0, 0.0),
            direction: Vec2::new(0.0, 1.0),
        };
        let result = solve_velocity(&[left, other], 0, &bounds, Vec2::new(0.0, 1.0)).velocity;
        assert!(result.x.abs() < 1e-5, "{result}");
    }

    #[test]
    fn the_boundary_is_kept_against_the_neighbours_and_dropped_when_out_of_reach() {
        let bounds = VelocityBounds::new(Vec2::ZERO, 2.0, 10.0);
        // A hard plane x >= 0 (a wall) against a soft one x <= -1 (a neighbour): the wall
        // holds and the neighbour's plane is violated as little as it allows, at x = 0.
        let wall = HalfPlane {
            point: Vec2::ZERO,
            direction: Vec2::new(0.0, -1.0),
        };
        let neighbour = HalfPlane {
            point: Vec2::new(-1.0, 0.0),
            direction: Vec2::new(0.0, 1.0),
        };
        let solved = solve_velocity(&[wall, neighbour], 1, &bounds, Vec2::new(0.5, 0.3));
        assert!(solved.jammed);
        assert!(solved.velocity.x.abs() < 1e-5, "{}", solved.velocity);
        assert!(
            solved.velocity.length() <= 2.0 + 1e-5,
            "{}",
            solved.velocity
        );
        // A hard plane x >= 5 no velocity within 2 m/s reaches: it is dropped, and the soft
        // plane x <= 0.5 alone gives the closest admissible velocity, not jammed.
        let far_wall = HalfPlane {
            point: Vec2::new(5.0, 0.0),
            direction: Vec2::new(0.0, -1.0),
        };
        let soft = HalfPlane {
            point: Vec2::new(0.5, 0.0),
            direction: Vec2::new(0.0, 1.0),
        };
        let solved = solve_velocity(&[far_wall, soft], 1, &bounds, Vec2::new(1.5, 0.3));
        assert!(!solved.jammed);
        assert!(
            solved.velocity.distance(Vec2::new(0.5, 0.3)) < 1e-6,
            "{}",
            solved.velocity
        );
    }
}
