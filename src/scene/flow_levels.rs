//! The flow suite's purpose-built levels: an open plaza that four groups cross, and a long
//! corridor between two rooms that two groups walk in counter-flow.
//!
//! Stage: build time, beside the other generated levels. Output: a [`FlowLevel`]: the scene
//! (flat slabs at y = 0, no walls: the bake's erosion keeps bodies a radius from every
//! edge) and its groups, each a home zone and an away zone. [`FlowLevel::plans`] places an
//! agent of each group in turn at a seeded random point of its home zone and gives it
//! targets alternating between random points of the away zone and of home, so the groups
//! cross (or meet head-on) again and again for as long as a run lasts. The random levels
//! (dungeon, nav_test, city, hills) test crowds whose paths cross at random; these test
//! the two shapes of traffic that a random crowd rarely makes: streams crossing in the
//! open, and streams meeting in a passage.

use glam::{Vec2, Vec3};

use super::graph::Scene;
use super::mesh::TriMesh;
use crate::geom::SplitMix64;

/// Plaza side, metres.
pub const PLAZA_M: f32 = 40.0;
/// Depth of each plaza group's zone along its side, metres.
pub const PLAZA_ZONE_M: f32 = 6.0;
/// Corridor length between the rooms, metres.
pub const CORRIDOR_M: f32 = 40.0;
/// Corridor width, wall to wall, metres: two bodies of 0.6 m radius pass each other with
/// 0.4 m to spare once the bake has kept them a radius from each side.
pub const CORRIDOR_WIDTH_M: f32 = 4.0;
/// Side of each room at the corridor's ends, metres.
pub const ROOM_M: f32 = 16.0;

/// A rectangle of the ground, (x, z) corners, metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zone {
    /// Smallest x and z.
    pub min: Vec2,
    /// Largest x and z.
    pub max: Vec2,
}

impl Zone {
    fn new(x0: f32, z0: f32, x1: f32, z1: f32) -> Zone {
        Zone {
            min: Vec2::new(x0, z0),
            max: Vec2::new(x1, z1),
        }
    }

    /// A seeded uniform point of the zone on the ground (y = 0).
    fn sample(&self, random: &mut SplitMix64) -> Vec3 {
        let x = self.min.x + random.next_f32() * (self.max.x - self.min.x);
        let z = self.min.y + random.next_f32() * (self.max.y - self.min.y);
        Vec3::new(x, 0.0, z)
    }
}

/// A group of agents: where they start and return to, and where they go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Group {
    /// Where the group starts, and every second target.
    pub home: Zone,
    /// Every other target.
    pub away: Zone,
}

/// A flow level: its geometry and its groups.
#[derive(Clone, Debug)]
pub struct FlowLevel {
    /// The level geometry, in metres.
    pub scene: Scene,
    /// The groups, in the order agents are dealt to them.
    pub groups: Vec<Group>,
}

impl FlowLevel {
    /// `agents` plans of `targets` targets each (at least one), seeded: agent `i` belongs
    /// to group `i mod groups`, starts in its home zone and walks to its away zone, home,
    /// away, and so on. Each plan is its start and its targets.
    pub fn plans(&self, agents: usize, targets: usize, seed: u64) -> Vec<(Vec3, Vec<Vec3>)> {
        let mut random = SplitMix64::new(seed);
        (0..agents)
            .map(|index| {
                let group = &self.groups[index % self.groups.len()];
                let start = group.home.sample(&mut random);
                let targets = (0..targets.max(1))
                    .map(|k| {
                        let zone = if k % 2 == 0 { &group.away } else { &group.home };
                        zone.sample(&mut random)
                    })
                    .collect();
                (start, targets)
            })
            .collect()
    }
}

/// A ground slab 0.5 m thick whose top is the rectangle at y = 0.
fn slab(name: &str, x0: f32, z0: f32, x1: f32, z1: f32) -> TriMesh {
    TriMesh::axis_box(name, Vec3::new(x0, -0.5, z0), Vec3::new(x1, 0.0, z1))
}

/// An open square plaza [`PLAZA_M`] a side. Four groups start in zones along the four
/// sides (the middle 60% of each side, [`PLAZA_ZONE_M`] deep) and cross to the zone on
/// the opposite side and back, so the four streams meet in the middle.
pub fn plaza() -> FlowLevel {
    let mut scene = Scene::new();
    scene.add_placed(slab("plaza", 0.0, 0.0, PLAZA_M, PLAZA_M));
    let (low, high) = (0.2 * PLAZA_M, 0.8 * PLAZA_M);
    let (near, far) = (1.0, 1.0 + PLAZA_ZONE_M);
    let west = Zone::new(near, low, far, high);
    let east = Zone::new(PLAZA_M - far, low, PLAZA_M - near, high);
    let south = Zone::new(low, near, high, far);
    let north = Zone::new(low, PLAZA_M - far, high, PLAZA_M - near);
    FlowLevel {
        scene,
        groups: vec![
            Group {
                home: west,
                away: east,
            },
            Group {
                home: east,
                away: west,
            },
            Group {
                home: south,
                away: north,
            },
            Group {
                home: north,
                away: south,
            },
        ],
    }
}

/// Two square rooms [`ROOM_M`] a side joined by a corridor [`CORRIDOR_M`] long and
/// [`CORRIDOR_WIDTH_M`] wide, along x. One group starts in each room and walks to the
/// other and back, so the two streams meet head-on in the corridor.
pub fn counterflow_corridor() -> FlowLevel {
    let mut scene = Scene::new();
    let (side_z0, side_z1) = (
        0.5 * (ROOM_M - CORRIDOR_WIDTH_M),
        0.5 * (ROOM_M + CORRIDOR_WIDTH_M),
    );
    let right = ROOM_M + CORRIDOR_M;
    scene.add_placed(slab("room_west", 0.0, 0.0, ROOM_M, ROOM_M));
    scene.add_placed(slab("corridor", ROOM_M, side_z0, right, side_z1));
    scene.add_placed(slab("room_east", right, 0.0, right + ROOM_M, ROOM_M));
    let inset = 1.5;
    let west = Zone::new(inset, inset, ROOM_M - inset, ROOM_M - inset);
    let east = Zone::new(right + inset, inset, right + ROOM_M - inset, ROOM_M - inset);
    FlowLevel {
        scene,
        groups: vec![
            Group {
                home: west,
                away: east,
            },
            Group {
                home: east,
                away: west,
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_alternate_between_each_groups_zones() {
        let level = plaza();
        let plans = level.plans(8, 4, 7);
        assert_eq!(plans.len(), 8);
        let inside = |zone: &Zone, point: Vec3| {
            (zone.min.x..=zone.max.x).contains(&point.x)
                && (zone.min.y..=zone.max.y).contains(&point.z)
        };
        for (index, (start, targets)) in plans.iter().enumerate() {
            let group = &level.groups[index % 4];
            assert!(inside(&group.home, *start));
            assert_eq!(targets.len(), 4);
            for (k, &target) in targets.iter().enumerate() {
                let zone = if k % 2 == 0 { &group.away } else { &group.home };
                assert!(inside(zone, target), "agent {index} target {k}: {target}");
            }
        }
        assert_eq!(plans, level.plans(8, 4, 7), "seeded");
        assert_ne!(plans, level.plans(8, 4, 8));
    }

    #[test]
    fn the_corridor_joins_the_two_rooms() {
        let level = counterflow_corridor();
        let world = level.scene.world_triangles().unwrap();
        let size = world.bounds.max - world.bounds.min;
        assert!(
            (size.x - (2.0 * ROOM_M + CORRIDOR_M)).abs() < 1e-3,
            "{size}"
        );
        assert!((size.z - ROOM_M).abs() < 1e-3, "{size}");
        assert_eq!(level.groups.len(), 2);
        assert_eq!(level.groups[0].home, level.groups[1].away);
    }
}
