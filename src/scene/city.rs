//! The built-in "city": a generated level for crowd scaling runs, sized from the agent count.
//!
//! A square grid of blocks separated by 8 m streets. Each block is, by a seeded draw, a
//! building (an unwalkable box), a pair of buildings with a 2 m alley between them, an
//! open square, or a raised plaza 1 m up with a ramp on each side. The grid grows with
//! the agent count so that walkable area stays near 10 m² per agent (one agent per 10 m²):
//! dungeon.obj is physically full at about 1,270 agents, so large crowds need a large level.

use glam::Vec3;

use super::graph::{InstanceDesc, Scene};
use super::mesh::TriMesh;
use crate::geom::SplitMix64;
use crate::ids::{AreaId, SupportId};

/// Street width, metres.
pub const STREET_M: f32 = 8.0;
/// Block side, metres.
pub const BLOCK_M: f32 = 24.0;
/// Walkable area the grid aims at per agent, m².
pub const AREA_PER_AGENT_M2: f32 = 10.0;

/// What a block holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// One building filling the block.
    Building,
    /// Two buildings with a 2 m alley between them.
    Alley,
    /// An open square.
    Square,
    /// A plaza 1 m up, with a ramp from each street.
    Plaza,
}

/// The surface speed of a square that is a moving floor, m/s.
pub const BELT_SPEED_MPS: f32 = 0.5;

/// A generated city.
#[derive(Clone, Debug)]
pub struct City {
    /// The level geometry.
    pub scene: Scene,
    /// Blocks per side.
    pub blocks_per_side: usize,
    /// Side length, metres.
    pub side_m: f32,
    /// Approximate walkable area before erosion, m².
    pub walkable_area_m2: f32,
    /// The squares that are moving floors ([`city_with_belts`]): each one's support and
    /// surface velocity (for `Crowd::set_support_velocity`).
    pub belts: Vec<(SupportId, Vec3)>,
}

fn block_walkable_m2(block: Block) -> f32 {
    let cell = (BLOCK_M + STREET_M) * (BLOCK_M + STREET_M);
    match block {
        Block::Building => cell - BLOCK_M * BLOCK_M,
        Block::Alley => cell - BLOCK_M * (BLOCK_M - 2.0),
        Block::Square | Block::Plaza => cell,
    }
}

fn draw(random: &mut SplitMix64) -> Block {
    match random.next_u64() % 10 {
        0..=4 => Block::Building,
        5..=6 => Block::Alley,
        7..=8 => Block::Square,
        _ => Block::Plaza,
    }
}

/// A city for `agents` agents from `seed`.
pub fn city(agents: usize, seed: u64) -> City {
    city_with_belts(agents, seed, 0.0)
}

/// A city for `agents` agents from `seed` in which open squares, in the order drawn, are
/// moving floors (belts at [`BELT_SPEED_MPS`], along +x and -x in turn, each its own
/// support) until they cover `belt_share` of the walkable area: the same blocks as
/// [`city`]'s (the draw is the same), so a crowd spread over its floor has about that
/// share of its agents on moving supports: the stress case for supports at scale.
pub fn city_with_belts(agents: usize, seed: u64, belt_share: f32) -> City {
    let wanted = agents.max(1) as f32 * AREA_PER_AGENT_M2;
    // Mean walkable area per block over the draw's odds, for sizing.
    let mean = 0.5 * block_walkable_m2(Block::Building)
        + 0.2 * block_walkable_m2(Block::Alley)
        + 0.3 * block_walkable_m2(Block::Square);
    let blocks_per_side = ((wanted / mean).sqrt().ceil() as usize).max(2);
    let pitch = BLOCK_M + STREET_M;
    let side_m = blocks_per_side as f32 * pitch + STREET_M;
    let mut scene = Scene::new();
    let mut random = SplitMix64::new(seed);
    let add = |scene: &mut Scene, mesh: TriMesh| {
        scene.add_placed(mesh);
    };
    // Ground only where people walk: a hollow building box would otherwise leave the
    // ground inside it walkable (a rasterizer sees surfaces, not solids).
    let slab = |name: String, x0: f32, z0: f32, x1: f32, z1: f32| {
        TriMesh::axis_box(name, Vec3::new(x0, -0.5, z0), Vec3::new(x1, 0.0, z1))
    };
    for line in 0..=blocks_per_side {
        let at = line as f32 * pitch;
        add(
            &mut scene,
            slab(format!("street_x_{line}"), 0.0, at, side_m, at + STREET_M),
        );
        add(
            &mut scene,
            slab(format!("street_z_{line}"), at, 0.0, at + STREET_M, side_m),
        );
    }
    let building = |name: String, x0: f32, z0: f32, x1: f32, z1: f32| {
        TriMesh::axis_box(name, Vec3::new(x0, 0.0, z0), Vec3::new(x1, 12.0, z1))
            .with_area(AreaId::UNWALKABLE)
    };
    let mut walkable_area_m2 = side_m * side_m;
    let (mut belts, mut belt_m2) = (Vec::new(), 0.0f32);
    for row in 0..blocks_per_side {
        for column in 0..blocks_per_side {
            let x0 = STREET_M + column as f32 * pitch;
            let z0 = STREET_M + row as f32 * pitch;
            let (x1, z1) = (x0 + BLOCK_M, z0 + BLOCK_M);
            let block = draw(&mut random);
            match block {
                Block::Building => {
                    add(
                        &mut scene,
                        building(format!("building_{row}_{column}"), x0, z0, x1, z1),
                    );
                    walkable_area_m2 -= BLOCK_M * BLOCK_M;
                }
                Block::Alley => {
                    let middle = x0 + BLOCK_M * 0.5; // a 2 m alley: 0.8 m clear for a 0.6 m radius
                    add(
                        &mut scene,
                        slab(
                            format!("alley_{row}_{column}"),
                            middle - 1.0,
                            z0,
                            middle + 1.0,
                            z1,
                        ),
                    );
                    add(
                        &mut scene,
                        building(format!("west_{row}_{column}"), x0, z0, middle - 1.0, z1),
                    );
                    add(
                        &mut scene,
                        building(format!("east_{row}_{column}"), middle + 1.0, z0, x1, z1),
                    );
                    walkable_area_m2 -= BLOCK_M * (BLOCK_M - 2.0);
                }
                Block::Square => {
                    let square = slab(format!("square_{row}_{column}"), x0, z0, x1, z1);
                    if belt_m2 < belt_share * wanted {
                        let support = scene.support(&format!("belt_{row}_{column}"));
                        let direction = if belts.len() % 2 == 0 { 1.0 } else { -1.0 };
                        belts.push((support, Vec3::new(direction * BELT_SPEED_MPS, 0.0, 0.0)));
                        belt_m2 += BLOCK_M * BLOCK_M;
                        let mesh = scene.add_mesh(square);
                        let name = format!("belt_{row}_{column}");
                        scene
                            .add_instance(InstanceDesc::new(name, mesh).on_support(support))
                            .expect("the mesh was just added");
                    } else {
                        add(&mut scene, square);
                    }
                }
                Block::Plaza => {
                    add(
                        &mut scene,
                        slab(format!("plaza_ground_{row}_{column}"), x0, z0, x1, z1),
                    );
                    // A 1 m platform inset by the ramp length, with a ramp up from each side.
                    let (ramp, height) = (5.0, 1.0);
                    let (px0, pz0, px1, pz1) = (x0 + ramp, z0 + ramp, x1 - ramp, z1 - ramp);
                    add(
                        &mut scene,
                        TriMesh::axis_box(
                            format!("plaza_{row}_{column}"),
                            Vec3::new(px0, 0.0, pz0),
                            Vec3::new(px1, height, pz1),
                        ),
                    );
                    let (cx0, cx1) = (px0 + 4.0, px1 - 4.0);
                    let (cz0, cz1) = (pz0 + 4.0, pz1 - 4.0);
                    let ramps = [
                        [
                            Vec3::new(cx0, height, pz0),
                            Vec3::new(cx1, height, pz0),
                            Vec3::new(cx1, 0.0, z0),
                            Vec3::new(cx0, 0.0, z0),
                        ],
                        [
                            Vec3::new(cx1, height, pz1),
                            Vec3::new(cx0, height, pz1),
                            Vec3::new(cx0, 0.0, z1),
                            Vec3::new(cx1, 0.0, z1),
                        ],
                        [
                            Vec3::new(px0, height, cz1),
                            Vec3::new(px0, height, cz0),
                            Vec3::new(x0, 0.0, cz0),
                            Vec3::new(x0, 0.0, cz1),
                        ],
                        [
                            Vec3::new(px1, height, cz0),
                            Vec3::new(px1, height, cz1),
                            Vec3::new(x1, 0.0, cz1),
                            Vec3::new(x1, 0.0, cz0),
                        ],
                    ];
                    for (index, corners) in ramps.into_iter().enumerate() {
                        add(
                            &mut scene,
                            TriMesh::quad(format!("ramp_{row}_{column}_{index}"), corners),
                        );
                    }
                }
            }
        }
    }
    City {
        scene,
        blocks_per_side,
        side_m,
        walkable_area_m2,
        belts,
    }
}
