//! The sampled avoidance method: candidate velocities scored by penalties, refined around
//! the best, in the manner of DetourCrowd's adaptive sampling (the `detour` profile,
//! [`AvoidanceConfig::detour`](super::AvoidanceConfig::detour)).
//!
//! Stage: crowd runtime, inside the avoid pass, in place of the ORCA program when
//! [`AvoidanceMethod::Sampled`] is set. Inputs per agent: its velocity, its preferred
//! velocity, its speed limit, its neighbours (offset, velocity in the agent's frame, radius
//! sum, the agent's share) and the walls near it. Output: the candidate with the smallest
//! penalty, inside the speed disk.
//!
//! Where ORCA finds the velocity closest to the preferred one that no neighbour's
//! half-plane forbids, this method weighs everything against everything: distance to the
//! preferred velocity, distance to the current one (turning costs), passing on the wrong
//! side, and how soon the candidate would touch a neighbour or a wall. Nothing is
//! forbidden, so agents in a crush keep pressing on and sink into each other instead of
//! jamming: DetourCrowd's behaviour, kept here so waymark's crowds can be compared with it
//! like for like and so a game that wants that softness can have it. It costs a fixed
//! number of penalty evaluations per agent (`(1 + divisions × rings) × depth` candidates),
//! each over every neighbour and wall.
//!
//! Invariants: the answer depends only on its inputs (no random state), lies in the disk of
//! radius `speed_limit`, and is the same at any thread count.

use glam::Vec2;

use crate::mesh::Wall;

/// Settings of the sampled method.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampledConfig {
    /// Directions sampled on each ring (DetourCrowd's adaptive divisions), 1 to 32.
    pub divisions: u8,
    /// Rings of samples around the search centre, 1 to 4.
    pub rings: u8,
    /// Refinements: each one samples again around the best so far at half the radius, 1
    /// to 5. More is finer steering at a proportional cost.
    pub depth: u8,
    /// Where the first search centres, as a fraction of the preferred velocity (0 to 1);
    /// the first radius is the speed limit times (1 - bias). A high bias searches near the
    /// wish only; a low one considers stopping and turning back as readily.
    pub velocity_bias: f32,
    /// Weight of the distance from the preferred velocity (over the speed limit).
    pub desired_weight: f32,
    /// Weight of the distance from the current velocity (over the speed limit): higher
    /// steers more smoothly and reacts later.
    pub current_weight: f32,
    /// Weight of passing a neighbour on the side it is not expected on.
    pub side_weight: f32,
    /// Weight of an early impact: `impact_weight / (0.1 + impact time / horizon)`.
    pub impact_weight: f32,
    /// Strength of the push away from neighbours added to the preferred velocity before
    /// sampling, m/s per neighbour at contact, fading to 0 at the neighbour range (0: none).
    pub separation_weight: f32,
}

impl Default for SampledConfig {
    /// DetourCrowd's highest preset (7 divisions, 3 rings, 3 refinements, bias 0.5) with its
    /// default weights, and the separation weight of its demo's agents (2).
    fn default() -> Self {
        SampledConfig {
            divisions: 7,
            rings: 3,
            depth: 3,
            velocity_bias: 0.5,
            desired_weight: 2.0,
            current_weight: 0.75,
            side_weight: 0.75,
            impact_weight: 2.5,
            separation_weight: 2.0,
        }
    }
}

impl SampledConfig {
    /// The field that makes these settings unusable, with its value, if any.
    pub fn invalid_field(&self) -> Option<(&'static str, f32)> {
        if !(1..=32).contains(&self.divisions) {
            return Some(("avoidance.sampled.divisions", f32::from(self.divisions)));
        }
        if !(1..=4).contains(&self.rings) {
            return Some(("avoidance.sampled.rings", f32::from(self.rings)));
        }
        if !(1..=5).contains(&self.depth) {
            return Some(("avoidance.sampled.depth", f32::from(self.depth)));
        }
        if !(0.0..=1.0).contains(&self.velocity_bias) {
            return Some(("avoidance.sampled.velocity_bias", self.velocity_bias));
        }
        for (field, value) in [
            ("avoidance.sampled.desired_weight", self.desired_weight),
            ("avoidance.sampled.current_weight", self.current_weight),
            ("avoidance.sampled.side_weight", self.side_weight),
            ("avoidance.sampled.impact_weight", self.impact_weight),
            (
                "avoidance.sampled.separation_weight",
                self.separation_weight,
            ),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Some((field, value));
            }
        }
        None
    }
}

/// How the avoid pass chooses a velocity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AvoidanceMethod {
    /// Reciprocal half-planes (ORCA) and the closest admissible velocity to the preferred
    /// one: no overlap unless the constraints leave nothing, then the least violation.
    Orca,
    /// Sampled candidates scored by penalties (DetourCrowd's way): softer, never jams, lets
    /// bodies sink into each other in a crush.
    Sampled(SampledConfig),
}

/// Most sample offsets in a pattern: the centre and 32 directions on each of 4 rings.
const PATTERN_CAPACITY: usize = 1 + 32 * 4;

/// The unit sample offsets of one refinement, in a frame whose x axis is the preferred
/// direction (x forward, y to the left): the centre, then each ring's directions, every
/// other ring turned half a division so the rings interleave.
#[derive(Clone, Debug)]
pub struct SamplingPattern {
    offsets: [Vec2; PATTERN_CAPACITY],
    count: usize,
}

impl SamplingPattern {
    /// The pattern of `config` (whose fields are assumed valid; out-of-range counts are
    /// capped to the capacity).
    pub fn new(config: &SampledConfig) -> SamplingPattern {
        let divisions = usize::from(config.divisions.clamp(1, 32));
        let rings = usize::from(config.rings.clamp(1, 4));
        let mut offsets = [Vec2::ZERO; PATTERN_CAPACITY];
        let mut count = 1;
        let step = std::f32::consts::TAU / divisions as f32;
        for ring in 1..=rings {
            let radius = ring as f32 / rings as f32;
            let turn = if ring % 2 == 0 { step * 0.5 } else { 0.0 };
            for division in 0..divisions {
                offsets[count] = Vec2::from_angle(turn + step * division as f32) * radius;
                count += 1;
            }
        }
        SamplingPattern { offsets, count }
    }

    /// The offsets, centre first.
    pub fn offsets(&self) -> &[Vec2] {
        &self.offsets[..self.count]
    }
}

/// A neighbour as the sampled method weighs it, relative to the agent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampledNeighbour {
    /// Its position minus the agent's, metres.
    pub offset: Vec2,
    /// Its velocity in the agent's frame, m/s.
    pub velocity: Vec2,
    /// Its preferred velocity minus the agent's, m/s (which side it is expected to pass).
    pub desired_difference: Vec2,
    /// The two radii summed (less any allowance), metres.
    pub radius_sum: f32,
    /// The agent's share of the avoidance (1: the neighbour keeps its course).
    pub share: f32,
}

/// What one agent's sampling reads.
#[derive(Clone, Copy, Debug)]
pub struct SampledProblem<'a> {
    /// Foot position (x, z), metres.
    pub position: Vec2,
    /// Radius, metres.
    pub radius: f32,
    /// Current velocity vEnd, m/s.
    pub velocity: Vec2,
    /// Preferred velocity, m/s.
    pub preferred: Vec2,
    /// Horizontal speed limit, m/s (candidates outside the disk are not scored).
    pub speed_limit: f32,
    /// Collision horizon, seconds.
    pub horizon_s: f32,
    /// Neighbours within range, nearest first.
    pub neighbours: &'a [SampledNeighbour],
    /// Walls near the agent (walkable space to their right-hand normal).
    pub walls: &'a [Wall],
    /// Range of the separation push, metres.
    pub separation_range_m: f32,
}

/// The chosen velocity and the time to its first impact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampled {
    /// The candidate with the smallest penalty, m/s.
    pub velocity: Vec2,
    /// When it would touch a neighbour or a wall, seconds (the horizon when never).
    pub impact_s: f32,
}

/// The preferred velocity pushed away from close neighbours: each within
/// `separation_range_m` adds a push of `weight × (1 - (distance / range)²)` away from it,
/// averaged over them, and the sum is capped at the speed limit.
fn separated_preference(problem: &SampledProblem, weight: f32) -> Vec2 {
    if weight == 0.0 {
        return problem.preferred;
    }
    let range = problem.separation_range_m;
    let mut push = Vec2::ZERO;
    let mut count = 0u32;
    for neighbour in problem.neighbours {
        let distance_squared = neighbour.offset.length_squared();
        if distance_squared >= range * range || distance_squared < 1e-6 {
            continue;
        }
        let distance = distance_squared.sqrt();
        let strength = weight * (1.0 - distance_squared / (range * range));
        push -= neighbour.offset * (strength / distance);
        count += 1;
    }
    if count == 0 {
        return problem.preferred;
    }
    let wanted = problem.preferred + push / count as f32;
    wanted.clamp_length_max(problem.speed_limit)
}

/// A neighbour's terms prepared once per agent: its direction and the side normal a
/// candidate is expected to pass it on.
#[derive(Clone, Copy, Debug, Default)]
struct PreparedNeighbour {
    direction: Vec2,
    side_normal: Vec2,
    /// 1 / the agent's share (a share near zero counts as 5%).
    inverse_share: f32,
}

/// The time at which a point moving at `relative` from the agent first comes within
/// `radius_sum` of a neighbour at `offset`; for a pair already overlapping, half the time
/// since their swept circles met (deep, slow overlaps are weighed little, so an agent in a
/// crush presses on), and `None` for a pair that never touches ahead.
#[inline]
fn impact_time(offset: Vec2, relative: Vec2, radius_sum: f32) -> Option<f32> {
    // |offset - relative t| = radius_sum: a t² - 2 b t + c = 0.
    let a = relative.length_squared();
    if a < 1e-8 {
        return None;
    }
    let b = relative.dot(offset);
    let c = offset.length_squared() - radius_sum * radius_sum;
    let discriminant = b * b - a * c;
    if discriminant < 0.0 {
        return None;
    }
    let root = discriminant.sqrt();
    let (entry, exit) = ((b - root) / a, (b + root) / a);
    if entry >= 0.0 {
        Some(entry)
    } else if exit > 0.0 {
        Some(-entry * 0.5)
    } else {
        None
    }
}

/// A wall as one agent's candidates meet it, prepared once per agent.
#[derive(Clone, Copy, Debug, Default)]
struct PreparedWall {
    /// Its start minus the agent's position, metres.
    to_start: Vec2,
    /// Unit direction.
    direction: Vec2,
    /// Length, metres.
    length_m: f32,
    /// Unit normal into walkable space.
    inward: Vec2,
    /// Whether the body already touches it.
    touching: bool,
}

impl PreparedWall {
    /// `wall` seen from a body at `position` with `radius`, or `None` when it is farther
    /// than `reach_m`.
    fn new(wall: &Wall, position: Vec2, radius: f32, reach_m: f32) -> Option<PreparedWall> {
        let along = wall
            .direction
            .dot(position - wall.start)
            .clamp(0.0, wall.length_m);
        let distance_squared = position.distance_squared(wall.start + wall.direction * along);
        (distance_squared <= reach_m * reach_m).then(|| PreparedWall {
            to_start: wall.start - position,
            direction: wall.direction,
            length_m: wall.length_m,
            inward: Vec2::new(wall.direction.y, -wall.direction.x),
            touching: distance_squared < radius * radius,
        })
    }

    /// When a ray from the body at `velocity` crosses the wall, seconds, if ahead; 0 when
    /// the body already touches it and moves into it.
    #[inline]
    fn time(&self, velocity: Vec2) -> Option<f32> {
        if self.touching {
            // Touching: only closing in on it costs.
            return (velocity.dot(self.inward) < 0.0).then_some(0.0);
        }
        let denominator = velocity.perp_dot(self.direction);
        if denominator.abs() < 1e-8 {
            return None;
        }
        let time = self.to_start.perp_dot(self.direction) / denominator;
        let at = self.to_start.perp_dot(velocity) / denominator;
        (time >= 0.0 && (0.0..=self.length_m).contains(&at)).then_some(time)
    }
}

/// When a ray from `position` at `velocity` crosses `wall`, seconds, if ahead; 0 when the
/// body already touches it (within `radius`) and moves into it.
#[cfg(test)]
fn wall_time(position: Vec2, radius: f32, velocity: Vec2, wall: &Wall) -> Option<f32> {
    PreparedWall::new(wall, position, radius, f32::INFINITY)?.time(velocity)
}

/// Most walls one agent's sampling weighs.
const WALLS_MAX: usize = super::program::WALLS_CAPACITY;

/// Most neighbours the sampled method weighs (the avoid pass's capacity).
const NEIGHBOURS_MAX: usize = super::config::NEIGHBOURS_CAPACITY;

/// The velocity of least penalty for one agent.
pub fn sample_velocity(
    problem: &SampledProblem,
    config: &SampledConfig,
    pattern: &SamplingPattern,
) -> Sampled {
    let speed_limit = problem.speed_limit;
    if speed_limit <= 1e-6 {
        return Sampled {
            velocity: Vec2::ZERO,
            impact_s: problem.horizon_s,
        };
    }
    let preferred = separated_preference(problem, config.separation_weight);
    let inverse_speed = 1.0 / speed_limit;
    let horizon = problem.horizon_s;
    let count = problem.neighbours.len().min(NEIGHBOURS_MAX);
    let neighbours = &problem.neighbours[..count];
    let mut prepared = [PreparedNeighbour::default(); NEIGHBOURS_MAX];
    for (prepared, neighbour) in prepared.iter_mut().zip(neighbours) {
        let direction = neighbour.offset.normalize_or_zero();
        // Expected to pass on the side the neighbour's wish carries it away from; a
        // head-on pair (no crossing to speak of) passes on its right.
        let left = direction.perp();
        let side_normal = if direction.perp_dot(neighbour.desired_difference) < 0.01 {
            left
        } else {
            -left
        };
        *prepared = PreparedNeighbour {
            direction,
            side_normal,
            inverse_share: 1.0 / neighbour.share.max(0.05),
        };
    }
    let prepared = &prepared[..count];
    // A wall's time counts double and matters only within the horizon: walls farther than
    // the speed limit covers in half of it never score.
    let reach_m = speed_limit * horizon * 0.5 + problem.radius;
    let mut walls = [PreparedWall::default(); WALLS_MAX];
    let mut wall_count = 0;
    for wall in problem.walls {
        if wall_count == WALLS_MAX {
            break;
        }
        if let Some(prepared) = PreparedWall::new(wall, problem.position, problem.radius, reach_m) {
            walls[wall_count] = prepared;
            wall_count += 1;
        }
    }
    let walls = &walls[..wall_count];

    // The penalty of one candidate, and its impact time; `None` when its velocity terms
    // alone already exceed `bound` (it cannot win).
    let score = |candidate: Vec2, bound: f32| -> Option<(f32, f32)> {
        let velocity_terms = config.desired_weight * candidate.distance(preferred) * inverse_speed
            + config.current_weight * candidate.distance(problem.velocity) * inverse_speed;
        if velocity_terms >= bound {
            return None;
        }
        let mut first_impact = horizon;
        let mut side = 0.0;
        for (neighbour, prepared) in neighbours.iter().zip(prepared) {
            // The relative velocity if the agent changes by `candidate - velocity` and the
            // neighbour does the rest of the change between them: twice the change for
            // equal shares, none of the neighbour's for one that keeps its course.
            let change = (candidate - problem.velocity) * prepared.inverse_share;
            let relative = problem.velocity + change - neighbour.velocity;
            let relative_direction = relative.normalize_or_zero();
            side += (prepared.direction.dot(relative_direction) * 0.5 + 0.5)
                .min(prepared.side_normal.dot(relative_direction) * 2.0)
                .clamp(0.0, 1.0);
            if let Some(time) = impact_time(neighbour.offset, relative, neighbour.radius_sum) {
                first_impact = first_impact.min(time);
            }
        }
        for wall in walls {
            if let Some(time) = wall.time(candidate) {
                // Walls weigh half as much: a wall ahead is no reason to stop.
                first_impact = first_impact.min(time * 2.0);
            }
        }
        let side_term = if count > 0 {
            config.side_weight * side / count as f32
        } else {
            0.0
        };
        let impact_term = config.impact_weight / (0.1 + first_impact / horizon);
        Some((velocity_terms + side_term + impact_term, first_impact))
    };

    // The pattern is turned to face the preferred direction (a stop faces forward).
    let facing = preferred.try_normalize().unwrap_or(Vec2::X);
    let mut centre = preferred * config.velocity_bias;
    let mut radius = speed_limit * (1.0 - config.velocity_bias);
    let mut best = Sampled {
        velocity: centre,
        impact_s: horizon,
    };
    let mut best_penalty = f32::INFINITY;
    for _ in 0..config.depth {
        let round_centre = centre;
        for offset in pattern.offsets() {
            let candidate = round_centre + facing.rotate(*offset) * radius;
            if candidate.length_squared() > (speed_limit + 1e-3) * (speed_limit + 1e-3) {
                continue;
            }
            if let Some((penalty, impact_s)) = score(candidate, best_penalty)
                && penalty < best_penalty
            {
                best_penalty = penalty;
                best = Sampled {
                    velocity: candidate,
                    impact_s,
                };
            }
        }
        centre = best.velocity;
        radius *= 0.5;
    }
    best.velocity = best.velocity.clamp_length_max(speed_limit);
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem<'a>(neighbours: &'a [SampledNeighbour], walls: &'a [Wall]) -> SampledProblem<'a> {
        SampledProblem {
            position: Vec2::ZERO,
            radius: 0.5,
            velocity: Vec2::new(1.0, 0.0),
            preferred: Vec2::new(1.0, 0.0),
            speed_limit: 1.5,
            horizon_s: 2.5,
            neighbours,
            walls,
            separation_range_m: 3.0,
        }
    }

    #[test]
    fn the_pattern_holds_the_centre_and_every_ring() {
        let pattern = SamplingPattern::new(&SampledConfig::default());
        assert_eq!(pattern.offsets().len(), 1 + 7 * 3);
        assert_eq!(pattern.offsets()[0], Vec2::ZERO);
        let outer = pattern.offsets()[1 + 7 * 2..].iter();
        for offset in outer {
            assert!((offset.length() - 1.0).abs() < 1e-5, "{offset}");
        }
        // The second ring is turned half a division against the first.
        let first = pattern.offsets()[1];
        let second = pattern.offsets()[8];
        let turn = first.angle_to(second);
        assert!((turn - std::f32::consts::TAU / 14.0).abs() < 1e-5, "{turn}");
    }

    #[test]
    fn alone_an_agent_samples_its_preferred_velocity() {
        let config = SampledConfig {
            separation_weight: 0.0,
            ..SampledConfig::default()
        };
        let pattern = SamplingPattern::new(&config);
        let answer = sample_velocity(&problem(&[], &[]), &config, &pattern);
        // The centre of the first round is half the wish, its ring reaches the wish.
        assert!(
            answer.velocity.distance(Vec2::new(1.0, 0.0)) < 0.05,
            "{answer:?}"
        );
        assert_eq!(answer.impact_s, 2.5);
    }

    #[test]
    fn an_agent_turns_away_from_one_standing_in_its_way() {
        let config = SampledConfig {
            separation_weight: 0.0,
            ..SampledConfig::default()
        };
        let pattern = SamplingPattern::new(&config);
        let neighbours = [SampledNeighbour {
            offset: Vec2::new(2.0, 0.0),
            velocity: Vec2::ZERO,
            desired_difference: Vec2::new(-1.0, 0.0),
            radius_sum: 1.0,
            share: 1.0,
        }];
        let answer = sample_velocity(&problem(&neighbours, &[]), &config, &pattern);
        // Straight on it would touch in one second; the answer steers off the line, to the
        // right (head-on, the side penalty weighs passing on the left), and misses it.
        assert!(answer.velocity.y < -0.2, "{answer:?}");
        assert!(answer.velocity.x > 0.5, "{answer:?}");
        assert_eq!(answer.impact_s, 2.5, "{answer:?}");
        assert!(answer.velocity.length() <= 1.5 + 1e-4);
    }

    #[test]
    fn separation_pushes_the_wish_away_from_a_close_neighbour() {
        // A neighbour 2 m ahead within a 3 m range pushes at 2 × (1 - 4/9) = 1.11 m/s: the
        // 1 m/s wish turns into a step back of 0.11 m/s, which the sampling then follows.
        let neighbours = [SampledNeighbour {
            offset: Vec2::new(2.0, 0.0),
            radius_sum: 1.0,
            share: 1.0,
            ..SampledNeighbour::default()
        }];
        let wish = separated_preference(&problem(&neighbours, &[]), 2.0);
        assert!(
            (wish - Vec2::new(-1.0 / 9.0, 0.0)).length() < 1e-5,
            "{wish}"
        );
        // Out of range, no push.
        let far = [SampledNeighbour {
            offset: Vec2::new(3.5, 0.0),
            ..neighbours[0]
        }];
        assert_eq!(
            separated_preference(&problem(&far, &[]), 2.0),
            Vec2::new(1.0, 0.0)
        );
    }

    #[test]
    fn impact_times_for_approach_overlap_and_retreat() {
        // Closing at 1 m/s from 3 m with a 1 m radius sum: contact after 2 s.
        let time = impact_time(Vec2::new(3.0, 0.0), Vec2::new(1.0, 0.0), 1.0).unwrap();
        assert!((time - 2.0).abs() < 1e-5);
        // Overlapping by 0.5 m and closing: the circles met 0.5 s ago, weighed as 0.25 s.
        let time = impact_time(Vec2::new(0.5, 0.0), Vec2::new(1.0, 0.0), 1.0).unwrap();
        assert!((time - 0.25).abs() < 1e-5, "{time}");
        // Moving apart: no impact ahead.
        assert_eq!(
            impact_time(Vec2::new(3.0, 0.0), Vec2::new(-1.0, 0.0), 1.0),
            None
        );
    }

    #[test]
    fn a_wall_ahead_is_timed_and_one_touched_costs_only_when_closing() {
        // A wall along x = 2 from z = -5 to 5, walkable at x < 2: direction -z.
        let wall = Wall::new(Vec2::new(2.0, 5.0), Vec2::new(2.0, -5.0)).unwrap();
        let time = wall_time(Vec2::ZERO, 0.5, Vec2::new(1.0, 0.0), &wall).unwrap();
        assert!((time - 2.0).abs() < 1e-5, "{time}");
        let touching = Vec2::new(1.7, 0.0);
        assert_eq!(
            wall_time(touching, 0.5, Vec2::new(1.0, 0.0), &wall),
            Some(0.0)
        );
        assert_eq!(wall_time(touching, 0.5, Vec2::new(-1.0, 0.0), &wall), None);
    }

    #[test]
    fn bad_settings_are_named() {
        let config = SampledConfig {
            divisions: 0,
            ..SampledConfig::default()
        };
        assert_eq!(
            config.invalid_field(),
            Some(("avoidance.sampled.divisions", 0.0))
        );
        let config = SampledConfig {
            impact_weight: f32::NAN,
            ..SampledConfig::default()
        };
        assert_eq!(
            config.invalid_field().unwrap().0,
            "avoidance.sampled.impact_weight"
        );
        assert_eq!(SampledConfig::default().invalid_field(), None);
    }
}
