//! The doors scenario: a crowd walking between two halls while doors and barricades open
//! and close under it.
//!
//! Stage: harness, beside the other scenarios. The level is triangles: two halls of
//! [`HALL_X_M`] x [`HALL_Z_M`] either side of a wall with three 2 m doors, baked through a
//! tile cache (RecastDemo's settings for a body of the scenarios' walker, 32-cell tiles).
//! Half the agents start in each hall and walk to the mirror of their place in the other;
//! each arrival walks back, so the doors stay busy. Every [`DOOR_PERIOD_S`] one door closes
//! (a box filling it, cutting the floor) and the one closed before opens, so one door of
//! three is shut at a time; two barricades (boxes turned about Up, across each hall) come
//! and go every [`BARRICADE_PERIOD_S`]. The cache rebuilds the tiles a change reaches, at
//! most [`TILES_PER_FRAME`] a frame, and the crowd takes each new mesh.
//!
//! Output: a [`DoorsReport`]: arrivals, route invalidations, the changes made and tiles
//! rebuilt, and three checks that must read 0: agent-frames with a centre inside a closed
//! door once its cut has committed (nobody walks through a closed door), adopted corridors
//! reading a tile changed since their search, and agents lost.

use std::time::Instant;

use glam::{Vec2, Vec3};

use super::scenario::{ScenarioError, WALKER};
use crate::bake::tile_cache::{ObstacleEffect, ObstacleId, ObstacleShape, TileCache};
use crate::bake::{BakeConfig, Preset};
use crate::crowd::{AgentId, AgentStatus, Crowd, CrowdConfig, CrowdEvent, KinematicController};
use crate::mesh::{NavMesh, SlotState, Snapshot};
use crate::scene::{InstanceDesc, Scene, TriMesh};

/// Each hall, metres (x across the wall, z along it).
pub const HALL_X_M: f32 = 14.0;
/// Each hall's depth along the wall, metres.
pub const HALL_Z_M: f32 = 16.0;
/// The wall's thickness, metres; it stands between the halls.
const WALL_M: f32 = 0.4;
/// The doors' centres along the wall (z), metres; each is 2 m wide.
pub const DOOR_CENTRES_Z_M: [f32; 3] = [3.0, 8.0, 13.0];
const DOOR_HALF_WIDTH_M: f32 = 1.0;
/// A door closes (and the one closed before opens) this often, seconds.
pub const DOOR_PERIOD_S: f32 = 5.0;
/// A barricade comes or goes this often, seconds.
pub const BARRICADE_PERIOD_S: f32 = 7.0;
/// Tiles rebuilt at most per frame.
pub const TILES_PER_FRAME: usize = 2;
/// Step length, seconds.
const DT_S: f32 = 1.0 / 30.0;
/// Length of the run, seconds.
pub const DURATION_S: f32 = 60.0;
/// Agents the halls hold: a grid of places 1.5 m by 1.4 m in each (the error names it).
const AGENTS_MAX: usize = 198;

/// What a doors run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct DoorsReport {
    /// Agents walking.
    pub agents: usize,
    /// Frames stepped.
    pub frames: usize,
    /// Arrivals (each a walk from one hall to the other, or back).
    pub arrivals: usize,
    /// Agents that arrived at least once.
    pub agents_arrived: usize,
    /// Route invalidations: a change reached a tile an agent's corridor had read.
    pub route_invalidations: usize,
    /// Doors closed and opened, barricades placed and removed.
    pub level_changes: usize,
    /// Tiles rebuilt and committed.
    pub tiles_rebuilt: usize,
    /// The longest a frame's rebuild took (the cache's update), milliseconds.
    pub rebuild_frame_max_ms: f64,
    /// Agent-frames with a centre inside a closed door after its cut committed (0 asked).
    pub through_closed_doors: usize,
    /// Agent-frames whose adopted corridor read a tile changed since (0 asked).
    pub stale_corridors: usize,
    /// Agents the crowd no longer held (0 asked).
    pub lost_agents: usize,
}

/// How many of the crowd's adopted corridors read the level as it no longer is: a tile
/// read that is not live or is newer than the corridor's search, or a link crossed at
/// another version than now. A level that changes under a crowd must keep this at 0.
pub fn stale_corridors(crowd: &Crowd, snapshot: &Snapshot) -> usize {
    crowd
        .agents()
        .filter(|view| {
            let Ok(Some(corridor)) = crowd.corridor(view.id) else {
                return false;
            };
            let reads = corridor.reads();
            let tiles_current = reads.slots().iter().all(|slot| {
                snapshot
                    .data()
                    .slots
                    .get(usize::from(slot.0))
                    .is_some_and(|view| {
                        view.generation <= reads.newest_generation()
                            && matches!(view.state, SlotState::Live(_))
                    })
            });
            let links_current = reads.links().iter().all(|&(link, version)| {
                snapshot
                    .link(link)
                    .is_some_and(|now| now.version == version)
            });
            !(tiles_current && links_current)
        })
        .count()
}

/// The two halls and the wall with its three door gaps, as a scene.
fn level() -> Scene {
    let mut scene = Scene::new();
    let wall_x = HALL_X_M;
    let mut boxes = vec![(
        "floor",
        Vec3::new(0.0, -0.2, 0.0),
        Vec3::new(2.0 * HALL_X_M + WALL_M, 0.0, HALL_Z_M),
    )];
    // Wall pieces between the door gaps.
    let mut from = 0.0;
    for centre in DOOR_CENTRES_Z_M.into_iter().chain([f32::INFINITY]) {
        let to = (centre - DOOR_HALF_WIDTH_M).min(HALL_Z_M);
        boxes.push((
            "wall",
            Vec3::new(wall_x, 0.0, from),
            Vec3::new(wall_x + WALL_M, 2.5, to),
        ));
        from = centre + DOOR_HALF_WIDTH_M;
    }
    for (index, (name, min, max)) in boxes.into_iter().enumerate() {
        let mesh = scene.add_mesh(TriMesh::axis_box(format!("{name}_{index}"), min, max));
        scene
            .add_instance(InstanceDesc::new(format!("{name}_{index}"), mesh))
            .expect("a fresh scene takes every instance");
    }
    scene
}

/// The box that shuts door `door`: the gap filled, overlapping the wall on both sides.
fn door_box(door: usize) -> ObstacleShape {
    let centre = DOOR_CENTRES_Z_M[door];
    ObstacleShape::Box {
        min: Vec3::new(HALL_X_M - 0.1, -0.1, centre - DOOR_HALF_WIDTH_M - 0.2),
        max: Vec3::new(
            HALL_X_M + WALL_M + 0.1,
            2.0,
            centre + DOOR_HALF_WIDTH_M + 0.2,
        ),
    }
}

/// Whether `at` stands in door `door`'s gap (centre inside it, seen from above).
fn in_door(door: usize, at: Vec3) -> bool {
    let centre = DOOR_CENTRES_Z_M[door];
    (HALL_X_M..=HALL_X_M + WALL_M).contains(&at.x)
        && (centre - DOOR_HALF_WIDTH_M..=centre + DOOR_HALF_WIDTH_M).contains(&at.z)
}

/// Barricade `which` (0: the left hall, 1: the right), turned across its hall.
fn barricade(which: usize) -> ObstacleShape {
    let x = if which == 0 {
        HALL_X_M * 0.5
    } else {
        HALL_X_M * 1.5 + WALL_M
    };
    ObstacleShape::TurnedBox {
        base: Vec3::new(x, 0.0, HALL_Z_M * 0.5),
        half_extents_m: Vec2::new(0.3, 3.0),
        height_m: 1.5,
        yaw_rad: if which == 0 { 0.4 } else { -0.4 },
    }
}

/// Agent `index`'s place: alternately in the left and right hall, on a grid 1.4 m apart
/// clear of the walls and the barricades' spots; its target is the mirror place in the
/// other hall.
fn place(index: usize) -> (Vec3, Vec3) {
    let slot = index / 2;
    let (column, row) = (slot % 9, slot / 9);
    let x = 0.8 + column as f32 * 1.5;
    let z = 0.9 + row as f32 * 1.4;
    let width = 2.0 * HALL_X_M + WALL_M;
    let left = Vec3::new(x, 0.0, z);
    let right = Vec3::new(width - x, 0.0, z);
    if index % 2 == 0 {
        (left, right)
    } else {
        (right, left)
    }
}

/// Runs the scenario with `agents` walkers (2 to 198) under `config`.
pub fn run_doors(agents: usize, config: CrowdConfig) -> Result<DoorsReport, ScenarioError> {
    if !(2..=AGENTS_MAX).contains(&agents) {
        return Err(ScenarioError::Doors { agents });
    }
    let world = level()
        .world_triangles()
        .expect("the doors level's triangles are valid");
    let bake_config = BakeConfig {
        tile_size_cells: Some(32),
        agent_radius_m: WALKER.radius_m,
        ..BakeConfig::preset(Preset::Recast)
    };
    let (baked, mut cache) = TileCache::bake(&world, &bake_config).expect("the doors level bakes");
    let mut mesh = NavMesh::from_file(baked.to_file()).expect("a baked mesh is valid");
    let mut crowd = Crowd::new(&mesh, config)?;
    let mut walkers: Vec<(AgentId, Vec3, Vec3)> = Vec::with_capacity(agents);
    for index in 0..agents {
        let (start, target) = place(index);
        let agent = crowd.add_agent(start, WALKER)?;
        crowd.request_move(agent, target)?;
        walkers.push((agent, start, target));
    }
    let frames = (DURATION_S / DT_S).round() as usize;
    let door_period = (DOOR_PERIOD_S / DT_S).round() as usize;
    let barricade_period = (BARRICADE_PERIOD_S / DT_S).round() as usize;
    let mut closed: Option<(usize, ObstacleId)> = None;
    let mut barricades: [Option<ObstacleId>; 2] = [None, None];
    let mut controller = KinematicController;
    let mut arrived_once = vec![false; agents];
    let mut report = DoorsReport {
        agents,
        frames,
        arrivals: 0,
        agents_arrived: 0,
        route_invalidations: 0,
        level_changes: 0,
        tiles_rebuilt: 0,
        rebuild_frame_max_ms: 0.0,
        through_closed_doors: 0,
        stale_corridors: 0,
        lost_agents: 0,
    };
    let obstacle = |result: Result<ObstacleId, _>| {
        result.expect("the scenario's obstacles are well formed and few")
    };
    for frame in 0..frames {
        if frame % door_period == 0 {
            // Open the door shut before, shut the next one.
            let next = closed.map_or(0, |(door, _)| (door + 1) % DOOR_CENTRES_Z_M.len());
            if let Some((_, id)) = closed.take() {
                cache
                    .remove_obstacle(&mut mesh, id)
                    .expect("the closed door's obstacle is in place");
                report.level_changes += 1;
            }
            let id = obstacle(cache.add_obstacle(&mut mesh, door_box(next), ObstacleEffect::Cut));
            closed = Some((next, id));
            report.level_changes += 1;
        }
        if frame % barricade_period == barricade_period / 2 {
            let which = (frame / barricade_period) % 2;
            match barricades[which].take() {
                Some(id) => cache
                    .remove_obstacle(&mut mesh, id)
                    .expect("the barricade is in place"),
                None => {
                    barricades[which] = Some(obstacle(cache.add_obstacle(
                        &mut mesh,
                        barricade(which),
                        ObstacleEffect::Cut,
                    )));
                }
            }
            report.level_changes += 1;
        }
        let clock = Instant::now();
        let update = cache
            .update(&mut mesh, TILES_PER_FRAME)
            .expect("the doors level rebuilds");
        report.rebuild_frame_max_ms = report
            .rebuild_frame_max_ms
            .max(clock.elapsed().as_secs_f64() * 1000.0);
        report.tiles_rebuilt += update.committed.len();
        crowd.set_mesh(&mesh);

        for event in crowd.step(DT_S, &mut controller)? {
            match event {
                CrowdEvent::RouteInvalidated { .. } => report.route_invalidations += 1,
                CrowdEvent::Arrived { .. } => report.arrivals += 1,
                _ => {}
            }
        }
        // Arrived: walk back.
        for (index, (agent, start, target)) in walkers.iter_mut().enumerate() {
            if crowd.status(*agent) == Ok(AgentStatus::Arrived) {
                arrived_once[index] = true;
                std::mem::swap(start, target);
                crowd.request_move(*agent, *target)?;
            }
        }

        // Checks against the level as it is now.
        report.lost_agents = agents - crowd.len().min(agents);
        if let Some((door, _)) = closed {
            if cache.pending_tiles() == 0 {
                report.through_closed_doors += crowd
                    .agents()
                    .filter(|view| in_door(door, view.position))
                    .count();
            }
        }
        report.stale_corridors += stale_corridors(&crowd, &mesh.snapshot());
    }
    report.agents_arrived = arrived_once.iter().filter(|&&arrived| arrived).count();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_stay_in_their_halls_clear_of_the_wall() {
        for index in 0..AGENTS_MAX {
            let (start, target) = place(index);
            for at in [start, target] {
                assert!(at.z > 0.5 && at.z < HALL_Z_M - 0.5, "{at}");
                assert!(
                    at.x < HALL_X_M - 0.5 || at.x > HALL_X_M + WALL_M + 0.5,
                    "{at} by the wall"
                );
            }
            assert!(
                (start.x < HALL_X_M) != (target.x < HALL_X_M),
                "across the wall"
            );
        }
    }
}
