//! RVO2's circle example as a model, to tell what plain ORCA does in it from what the crowd
//! adds: waymark's ORCA half-planes and linear program, but RVO2's motion (the new velocity
//! is taken at once, position += velocity * dt, no acceleration limit, no separation), its
//! preferred velocity (unit towards the goal, the remaining distance within 1 m) with its
//! 0.0001 m/s random perturbation, K 10, neighbour distance 15, horizon 10, radius 1.5, max
//! speed 2, step 0.25 s, ring radius 0.8 m per agent, done when every agent is within one
//! radius of its goal.
//!
//! `cargo run --release --example orca_circle_model -- 1000`

use glam::Vec2;
use waymark::crowd::internals::{
    ConstraintLanes, HalfPlane, NeighbourBatch, NeighbourGrid, VelocityBounds,
    orca_constraints_scalar, solve_velocity,
};
use waymark::geom::SplitMix64;

fn main() {
    let agents: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .filter(|&n| n >= 2)
        .unwrap_or_else(|| {
            eprintln!("usage: orca_circle_model AGENTS (at least 2)");
            std::process::exit(2)
        });
    let ring_m = 0.8 * agents as f32;
    let (radius, max_speed, dt, horizon) = (1.5f32, 2.0f32, 0.25f32, 10.0f32);
    let mut position: Vec<Vec2> = (0..agents)
        .map(|i| Vec2::from_angle(i as f32 * std::f32::consts::TAU / agents as f32) * ring_m)
        .collect();
    let goal: Vec<Vec2> = position.iter().map(|p| -*p).collect();
    let mut velocity = vec![Vec2::ZERO; agents];
    let floor = vec![0.0f32; agents];
    let (mut grid, mut contacts) = (NeighbourGrid::default(), NeighbourGrid::default());
    let mut random = SplitMix64::new(5);
    let (mut deepest, mut overlapping_pairs, mut steps) = (0.0f32, 0u64, 0usize);
    let done = |position: &[Vec2]| {
        position
            .iter()
            .zip(&goal)
            .all(|(p, g)| p.distance_squared(*g) <= radius * radius)
    };
    while !done(&position) && steps < 100_000 {
        let xs: Vec<f32> = position.iter().map(|p| p.x).collect();
        let zs: Vec<f32> = position.iter().map(|p| p.y).collect();
        grid.rebuild([&xs, &floor, &zs], 15.0, 2.0, 10);
        let next: Vec<Vec2> = (0..agents)
            .map(|i| {
                let mut preferred = goal[i] - position[i];
                if preferred.length_squared() > 1.0 {
                    preferred = preferred.normalize();
                }
                let angle = random.next_f32() * std::f32::consts::TAU;
                preferred += Vec2::from_angle(angle) * (random.next_f32() * 1e-4);
                let mut batch = NeighbourBatch::default();
                for other in grid.neighbours_of(i) {
                    let (other, k) = (other as usize, batch.count);
                    let offset = position[other] - position[i];
                    let relative = velocity[i] - velocity[other];
                    (batch.offset_x[k], batch.offset_z[k]) = (offset.x, offset.y);
                    batch.relative_velocity_x[k] = relative.x;
                    batch.relative_velocity_z[k] = relative.y;
                    (batch.radius_sum[k], batch.share[k]) = (2.0 * radius, 0.5);
                    batch.count += 1;
                }
                let mut lines = ConstraintLanes::default();
                orca_constraints_scalar(velocity[i], 1.0 / horizon, 1.0 / dt, &batch, &mut lines);
                let planes: Vec<HalfPlane> = (0..batch.count)
                    .map(|k| HalfPlane {
                        point: Vec2::new(lines.point_x[k], lines.point_z[k]),
                        direction: Vec2::new(lines.direction_x[k], lines.direction_z[k]),
                    })
                    .collect();
                // No acceleration limit: an acceleration disk far larger than the speed disk.
                let bounds = VelocityBounds::new(velocity[i], max_speed, 1e6);
                solve_velocity(&planes, 0, &bounds, preferred).velocity
            })
            .collect();
        velocity = next;
        for (position, velocity) in position.iter_mut().zip(&velocity) {
            *position += *velocity * dt;
        }
        steps += 1;
        let xs: Vec<f32> = position.iter().map(|p| p.x).collect();
        let zs: Vec<f32> = position.iter().map(|p| p.y).collect();
        contacts.rebuild([&xs, &floor, &zs], 2.0 * radius, 2.0, 0);
        contacts.for_each_pair_within(2.0 * radius, |_, _, distance| {
            let overlap = 2.0 * radius - distance;
            if overlap > 1e-3 {
                overlapping_pairs += 1;
                deepest = deepest.max(overlap);
            }
        });
    }
    let seconds = steps as f32 * dt;
    println!(
        "{agents} agents: everyone within one radius after {seconds:.1} s ({:.2}x the straight \
         line), {:.1} overlapping pairs per step, deepest {deepest:.3} m ({:.0}% of the radius)",
        seconds / (2.0 * ring_m),
        overlapping_pairs as f64 / steps.max(1) as f64,
        deepest / radius * 100.0
    );
}
