//! The built-in "hills": a generated terrain level for crowd runs on uneven ground, sized
//! from the agent count like the city.
//!
//! Rolling ground (a height field on a 2 m grid, the sum of seeded Gaussian hills, slopes
//! mostly under 20°), with flat-topped plateaus 3 m up reached by ramps of about 17°, and
//! ridges of rock crossed only through narrow passes (2.5 m gaps, one body at a time for
//! DetourCrowd's 0.6 m agents). Every draw comes from the seed, so a level is the same on
//! every machine. The ground covers about [`AREA_PER_AGENT_M2`] per agent, as the city
//! does, so a crowd's density is the same at any size.

use glam::Vec3;

use super::graph::Scene;
use super::mesh::TriMesh;
use crate::geom::SplitMix64;
use crate::ids::AreaId;

/// Ground the level aims at per agent, m².
pub const AREA_PER_AGENT_M2: f32 = 10.0;
/// Height-field grid spacing, metres.
pub const GRID_M: f32 = 2.0;
/// Plateau height above the highest ground under it, metres.
pub const PLATEAU_M: f32 = 3.0;
/// Ramp run for the plateau's rise (3 m over 10 m: 16.7°), metres.
pub const RAMP_RUN_M: f32 = 10.0;
/// Width of a pass through a ridge, metres.
pub const PASS_M: f32 = 2.5;

/// The most agents a hills level is sized for: about 3.3 km a side, 2.8 million
/// height-field corners (beyond, the ground alone would take gigabytes before anything
/// could refuse it).
pub const AGENTS_MAX: usize = 1_000_000;

/// A hills level asked for more agents than [`AGENTS_MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("hills are generated for at most {most} agents, not {agents}")]
pub struct TooManyAgents {
    /// Asked for.
    pub agents: usize,
    /// [`AGENTS_MAX`].
    pub most: usize,
}

/// A generated terrain.
#[derive(Clone, Debug)]
pub struct Hills {
    /// The level geometry.
    pub scene: Scene,
    /// Side length, metres.
    pub side_m: f32,
    /// Plateaus placed.
    pub plateaus: usize,
    /// Ridges placed (each with its passes).
    pub ridges: usize,
}

/// One Gaussian hill of the ground.
#[derive(Clone, Copy, Debug)]
struct Hill {
    centre_x: f32,
    centre_z: f32,
    height_m: f32,
    inverse_two_sigma_squared: f32,
}

/// The ground's height at (x, z): the sum of the hills.
fn ground_height(hills: &[Hill], x: f32, z: f32) -> f32 {
    hills
        .iter()
        .map(|hill| {
            let (dx, dz) = (x - hill.centre_x, z - hill.centre_z);
            hill.height_m * (-(dx * dx + dz * dz) * hill.inverse_two_sigma_squared).exp()
        })
        .sum()
}

/// A uniform draw in [low, high).
fn uniform(random: &mut SplitMix64, low: f32, high: f32) -> f32 {
    let unit = (random.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
    low + (high - low) * unit
}

/// The highest ground over the rectangle [x0, x1] x [z0, z1], sampled on the grid.
fn highest_ground(hills: &[Hill], x0: f32, z0: f32, x1: f32, z1: f32) -> f32 {
    let mut highest = f32::NEG_INFINITY;
    let steps = |low: f32, high: f32| ((high - low) / GRID_M).ceil().max(1.0) as usize;
    let (columns, rows) = (steps(x0, x1), steps(z0, z1));
    for row in 0..=rows {
        for column in 0..=columns {
            let x = x0 + (x1 - x0) * column as f32 / columns as f32;
            let z = z0 + (z1 - z0) * row as f32 / rows as f32;
            highest = highest.max(ground_height(hills, x, z));
        }
    }
    highest
}

/// A hills level for `agents` agents from `seed`; refused past [`AGENTS_MAX`].
pub fn hills(agents: usize, seed: u64) -> Result<Hills, TooManyAgents> {
    if agents > AGENTS_MAX {
        return Err(TooManyAgents {
            agents,
            most: AGENTS_MAX,
        });
    }
    let wanted_m2 = agents.max(1) as f32 * AREA_PER_AGENT_M2;
    // Plateau sides and ridges take about a tenth of the ground.
    let side_m = ((wanted_m2 / 0.9).sqrt() / GRID_M).ceil().max(30.0) * GRID_M;
    let mut random = SplitMix64::new(seed);
    let mut scene = Scene::new();
    let add = |scene: &mut Scene, mesh: TriMesh| {
        scene.add_placed(mesh);
    };

    // Rolling ground: one hill per 2,500 m², 1-6 m high, sigma 15-40 m (the steepest
    // flank of the tallest, narrowest one is 6 / 15 * 0.61 = 0.24, 14°; overlapping ones
    // add up to about 20°).
    let hill_count = ((side_m * side_m) / 2500.0).ceil() as usize;
    let hills: Vec<Hill> = (0..hill_count)
        .map(|_| {
            let sigma = uniform(&mut random, 15.0, 40.0);
            Hill {
                centre_x: uniform(&mut random, 0.0, side_m),
                centre_z: uniform(&mut random, 0.0, side_m),
                height_m: uniform(&mut random, 1.0, 6.0),
                inverse_two_sigma_squared: 1.0 / (2.0 * sigma * sigma),
            }
        })
        .collect();
    let cells = (side_m / GRID_M) as usize;
    let mut positions = Vec::with_capacity((cells + 1) * (cells + 1));
    for row in 0..=cells {
        for column in 0..=cells {
            let (x, z) = (column as f32 * GRID_M, row as f32 * GRID_M);
            positions.push(Vec3::new(x, ground_height(&hills, x, z), z));
        }
    }
    let mut triangles = Vec::with_capacity(cells * cells * 2);
    let at = |row: usize, column: usize| (row * (cells + 1) + column) as u32;
    for row in 0..cells {
        for column in 0..cells {
            let (a, b) = (at(row, column), at(row, column + 1));
            let (c, d) = (at(row + 1, column + 1), at(row + 1, column));
            // Counter-clockwise seen from above (+Y up): the ground faces up.
            triangles.push([a, c, b]);
            triangles.push([a, d, c]);
        }
    }
    add(&mut scene, TriMesh::new("ground", positions, triangles));

    // Plateaus: one per 20,000 m² (at least one where there is room), 20-36 m square, 3 m above the highest ground under
    // them, with a ramp on two opposite sides (x or z, drawn).
    let margin = RAMP_RUN_M + 6.0;
    let plateau_count = if side_m >= 2.0 * margin + 40.0 {
        (((side_m * side_m) / 20_000.0).floor() as usize).max(1)
    } else {
        0 // no room for a plateau and its ramps
    };
    for index in 0..plateau_count {
        let size = uniform(&mut random, 20.0, 36.0);
        let x0 = uniform(&mut random, margin, side_m - margin - size);
        let z0 = uniform(&mut random, margin, side_m - margin - size);
        let (x1, z1) = (x0 + size, z0 + size);
        let top = highest_ground(&hills, x0, z0, x1, z1) + PLATEAU_M;
        let bottom = top - PLATEAU_M - 8.0; // below any ground under it
        add(
            &mut scene,
            TriMesh::axis_box(
                format!("plateau_{index}"),
                Vec3::new(x0, bottom, z0),
                Vec3::new(x1, top, z1),
            ),
        );
        // Ramps 4 m wide at the middle of two opposite sides, from the ground (sunk a
        // little so the ramp's foot meets the ground) up to the top.
        let along_x = random.next_u64() % 2 == 0;
        let (middle_x, middle_z) = ((x0 + x1) * 0.5, (z0 + z1) * 0.5);
        let ramps: [[Vec3; 4]; 2] = if along_x {
            let foot_west = ground_height(&hills, x0 - RAMP_RUN_M, middle_z) - 0.1;
            let foot_east = ground_height(&hills, x1 + RAMP_RUN_M, middle_z) - 0.1;
            [
                [
                    Vec3::new(x0, top, middle_z + 2.0),
                    Vec3::new(x0, top, middle_z - 2.0),
                    Vec3::new(x0 - RAMP_RUN_M, foot_west, middle_z - 2.0),
                    Vec3::new(x0 - RAMP_RUN_M, foot_west, middle_z + 2.0),
                ],
                [
                    Vec3::new(x1, top, middle_z - 2.0),
                    Vec3::new(x1, top, middle_z + 2.0),
                    Vec3::new(x1 + RAMP_RUN_M, foot_east, middle_z + 2.0),
                    Vec3::new(x1 + RAMP_RUN_M, foot_east, middle_z - 2.0),
                ],
            ]
        } else {
            let foot_south = ground_height(&hills, middle_x, z0 - RAMP_RUN_M) - 0.1;
            let foot_north = ground_height(&hills, middle_x, z1 + RAMP_RUN_M) - 0.1;
            [
                [
                    Vec3::new(middle_x - 2.0, top, z0),
                    Vec3::new(middle_x + 2.0, top, z0),
                    Vec3::new(middle_x + 2.0, foot_south, z0 - RAMP_RUN_M),
                    Vec3::new(middle_x - 2.0, foot_south, z0 - RAMP_RUN_M),
                ],
                [
                    Vec3::new(middle_x + 2.0, top, z1),
                    Vec3::new(middle_x - 2.0, top, z1),
                    Vec3::new(middle_x - 2.0, foot_north, z1 + RAMP_RUN_M),
                    Vec3::new(middle_x + 2.0, foot_north, z1 + RAMP_RUN_M),
                ],
            ]
        };
        for (side, corners) in ramps.into_iter().enumerate() {
            add(
                &mut scene,
                TriMesh::quad(format!("ramp_{index}_{side}"), corners),
            );
        }
    }

    // Ridges: one per 40,000 m² (at least one), a line of rock 30-60 m long across x or z, 1.5 m thick
    // and 6 m tall, broken by a pass every 12-20 m.
    let ridge_count = (((side_m * side_m) / 40_000.0).floor() as usize).max(1);
    for index in 0..ridge_count {
        let length = uniform(&mut random, 30.0, 60.0).min(side_m - 20.0);
        let start = uniform(&mut random, 10.0, side_m - 10.0 - length);
        let across = uniform(&mut random, 10.0, side_m - 10.0);
        let along_x = random.next_u64() % 2 == 0;
        let mut from = start;
        let mut piece = 0;
        while from < start + length {
            let to = (from + uniform(&mut random, 12.0, 20.0)).min(start + length);
            let (x0, z0, x1, z1) = if along_x {
                (from, across - 0.75, to, across + 0.75)
            } else {
                (across - 0.75, from, across + 0.75, to)
            };
            let base = highest_ground(&hills, x0, z0, x1, z1);
            add(
                &mut scene,
                TriMesh::axis_box(
                    format!("rock_{index}_{piece}"),
                    Vec3::new(x0, base - 8.0, z0),
                    Vec3::new(x1, base + 6.0, z1),
                )
                .with_area(AreaId::UNWALKABLE),
            );
            from = to + PASS_M;
            piece += 1;
        }
    }
    Ok(Hills {
        scene,
        side_m,
        plateaus: plateau_count,
        ridges: ridge_count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_grows_with_the_crowd_and_is_the_same_for_a_seed() {
        let small = hills(1_000, 7).unwrap();
        let large = hills(10_000, 7).unwrap();
        // About 10 m² of ground per agent, a tenth more for plateau sides and rock.
        assert!(
            (small.side_m * small.side_m - 11_111.0).abs() < 800.0,
            "{}",
            small.side_m
        );
        assert!(
            (large.side_m * large.side_m - 111_111.0).abs() < 3_000.0,
            "{}",
            large.side_m
        );
        assert!(large.plateaus >= 5 && large.ridges >= 2, "{large:?}");
        let again = hills(10_000, 7).unwrap();
        let (a, b) = (
            large.scene.world_triangles().unwrap(),
            again.scene.world_triangles().unwrap(),
        );
        assert_eq!(a.corners, b.corners);
        let other = hills(10_000, 8).unwrap().scene.world_triangles().unwrap();
        assert_ne!(a.corners, other.corners);
        assert_eq!(
            hills(AGENTS_MAX + 1, 7).unwrap_err(),
            TooManyAgents {
                agents: AGENTS_MAX + 1,
                most: AGENTS_MAX
            }
        );
    }

    #[test]
    fn the_ground_rolls_but_stays_walkable() {
        let level = hills(10_000, 1).unwrap();
        let world = level.scene.world_triangles().unwrap();
        // The ground's triangles (the first instance's, first in order): heights vary by
        // metres, and no triangle is steeper than 30°.
        let cells = (level.side_m / GRID_M) as usize;
        let ground = &world.corners[..cells * cells * 2];
        let (low, high) = ground
            .iter()
            .flatten()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), p| {
                (l.min(p.y), h.max(p.y))
            });
        assert!(high - low > 3.0, "{low}..{high}");
        let mut steepest = 0.0f32;
        for &[a, b, c] in ground {
            let normal = (b - a).cross(c - a).normalize();
            steepest = steepest.max(normal.y.abs().clamp(0.0, 1.0).acos());
        }
        assert!(steepest.to_degrees() < 30.0, "{}°", steepest.to_degrees());
        assert!(steepest.to_degrees() > 5.0, "{}°", steepest.to_degrees());
    }
}
