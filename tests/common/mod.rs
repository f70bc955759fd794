//! What several integration tests share: the CLI runner, hand-built and shipped levels.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

use glam::Vec3;
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::crowd::{Controller, KinematicController, StepFeedback, StepRequest};
use waymark::mesh::blob::BakeParams;
use waymark::mesh::{LinkDesc, LinkKind, NavMesh, Snapshot, TileData, WalkablePolygon};
use waymark::query::{
    NODE_POOL_DEFAULT, Nearest, NodePool, PathResult, QueryFilter, find_path, nearest_polygon,
};
use waymark::scene::{InstanceDesc, Scene, TriMesh};

/// Two rooms, A (x 0..10) and B (x 14..24), both z 0..6, 4 m apart; a corridor round the back
/// (z 8..11) joins them through two short links; an island far away (x 40..50). Guard
/// settings, 32-cell tiles, so reads are per tile.
pub fn rooms() -> (NavMesh, Vec<TileData>) {
    let mut scene = Scene::new();
    let slab = |scene: &mut Scene, name: &str, x0: f32, x1: f32, z0: f32, z1: f32| {
        let mesh = scene.add_mesh(TriMesh::axis_box(
            name,
            Vec3::new(x0, -0.2, z0),
            Vec3::new(x1, 0.0, z1),
        ));
        scene.add_instance(InstanceDesc::new(name, mesh)).unwrap();
    };
    slab(&mut scene, "room_a", 0.0, 10.0, 0.0, 6.0);
    slab(&mut scene, "room_b", 14.0, 24.0, 0.0, 6.0);
    slab(&mut scene, "corridor", 0.0, 24.0, 8.0, 11.0);
    slab(&mut scene, "left_link", 0.0, 3.0, 5.0, 9.0);
    slab(&mut scene, "right_link", 21.0, 24.0, 5.0, 9.0);
    slab(&mut scene, "far_island", 40.0, 50.0, 0.0, 6.0);
    let world = scene.world_triangles().unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(32),
        ..BakeConfig::preset(Preset::Guard)
    };
    let tiles = bake(&world, &config).unwrap().to_file().tiles;
    let mut mesh = NavMesh::new(config.to_params());
    mesh.add_tiles(tiles.clone()).unwrap();
    (mesh, tiles)
}

/// Where the [`rooms`] path queries start: the middle of room A.
pub const ROOMS_START: Vec3 = Vec3::new(5.0, 0.0, 3.0);
/// Where they end: the middle of room B.
pub const ROOMS_GOAL: Vec3 = Vec3::new(19.0, 0.0, 3.0);

/// Both ends snapped to the mesh (within 1 m horizontally, 2 m vertically).
pub fn ends(
    snapshot: &Snapshot,
    filter: &QueryFilter,
    start: Vec3,
    goal: Vec3,
) -> (Nearest, Nearest) {
    let extents = Vec3::new(1.0, 2.0, 1.0);
    let near = |point| {
        nearest_polygon(snapshot, point, extents, filter)
            .unwrap()
            .unwrap()
    };
    (near(start), near(goal))
}

/// The path from room A to room B on the mesh's current snapshot.
pub fn rooms_query(mesh: &NavMesh, filter: &QueryFilter) -> PathResult {
    let snapshot = mesh.snapshot();
    let (from, to) = ends(&snapshot, filter, ROOMS_START, ROOMS_GOAL);
    find_path(
        &snapshot,
        from.polygon,
        from.point,
        to.polygon,
        to.point,
        filter,
        &mut NodePool::new(NODE_POOL_DEFAULT),
    )
    .unwrap()
}

/// A door across the 4 m gap between the [`rooms`], from (9, 0, 3) to (15, 0, 3).
pub fn rooms_door(open: bool) -> LinkDesc {
    LinkDesc {
        kind: LinkKind::Door,
        start: Vec3::new(9.0, 0.0, 3.0),
        end: Vec3::new(15.0, 0.0, 3.0),
        bidirectional: true,
        radius_m: 1.0,
        open,
    }
}

/// Runs the `waymark` tool with `args`.
pub fn waymark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_waymark"))
        .args(args)
        .output()
        .expect("the waymark binary runs")
}

/// A file of the shipped test levels (`assets/levels/`).
pub fn level_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets/levels")
        .join(name)
}

/// A mesh of hand-built polygons (one tile), named as baked for agents of `radius_m` and
/// `height_m` (the size the crowd checks its agents against) with a climb of 0.3 m.
pub fn mesh_of(polygons: &[WalkablePolygon], radius_m: f32, height_m: f32) -> NavMesh {
    let params = BakeParams {
        agent_radius_m: radius_m,
        agent_height_m: height_m,
        agent_max_climb_m: 0.3,
        ..BakeParams::default()
    };
    let mut mesh = NavMesh::new(params);
    mesh.add_tiles(vec![TileData::from_walkable_polygons(polygons).unwrap()])
        .unwrap();
    mesh
}

/// A controller that moves like the kinematic one but cannot confirm its end velocity
/// (vUnknown) while `unknown` is set.
pub struct Unsure {
    pub unknown: bool,
}

impl Controller for Unsure {
    fn step_agents(
        &mut self,
        snapshot: &Snapshot,
        filters: &[QueryFilter],
        requests: &[StepRequest],
        feedback: &mut Vec<StepFeedback>,
    ) {
        KinematicController.step_agents(snapshot, filters, requests, feedback);
        for step in feedback.iter_mut() {
            step.velocity_valid = !self.unknown;
        }
    }
}

/// A game's side of a crowd run on a baked level: its agents walk their plans' targets in
/// turn (an arrival takes the next), and from frame `scripted_from` on, scripted orders:
/// +0 cancels agent 3, +10 removes agent 5 and adds its replacement, +20 teleports agent 7
/// and sends it on, and puts agent 11 under velocity control. Cloned, it is the game's own
/// saved state.
#[derive(Clone)]
pub struct Game {
    pub agents: Vec<waymark::crowd::AgentId>,
    pub plans: Vec<waymark::harness::AgentPlan>,
    pub next_target: Vec<usize>,
    pub params: waymark::crowd::AgentParams,
    pub scripted_from: u64,
}

impl Game {
    /// Adds the plans' agents with `params` and sends each to its first target.
    pub fn start(
        crowd: &mut waymark::crowd::Crowd,
        plans: Vec<waymark::harness::AgentPlan>,
        params: waymark::crowd::AgentParams,
        scripted_from: u64,
    ) -> Game {
        let agents = plans
            .iter()
            .map(|plan| {
                let agent = crowd.add_agent(plan.start, params).unwrap();
                crowd.request_move(agent, plan.targets[0]).unwrap();
                agent
            })
            .collect();
        let next_target = vec![1; plans.len()];
        Game {
            agents,
            plans,
            next_target,
            params,
            scripted_from,
        }
    }

    /// One frame: the scripted orders of this frame, the step (1/30 s), and the new orders
    /// its arrivals call for (carried out by the next step). Returns the step's events and
    /// the agents as the step left them, by id.
    pub fn frame(
        &mut self,
        crowd: &mut waymark::crowd::Crowd,
    ) -> (
        Vec<waymark::crowd::CrowdEvent>,
        Vec<waymark::crowd::AgentView>,
    ) {
        use waymark::crowd::CrowdEvent;
        match crowd.frame().checked_sub(self.scripted_from) {
            Some(0) => {
                crowd.cancel(self.agents[3]).unwrap();
            }
            Some(10) => {
                crowd.remove_agent(self.agents[5]).unwrap();
                let added = crowd.add_agent(self.plans[5].start, self.params).unwrap();
                crowd.request_move(added, self.plans[5].targets[1]).unwrap();
                self.agents[5] = added;
            }
            Some(20) => {
                let target = self.plans[9].targets[2];
                crowd.teleport(self.agents[7], self.plans[7].start).unwrap();
                crowd.request_move(self.agents[7], target).unwrap();
                crowd
                    .request_velocity(self.agents[11], Vec3::new(1.0, 0.0, 0.5))
                    .unwrap();
            }
            _ => {}
        }
        let events = crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
        let mut stepped: Vec<_> = crowd.agents().collect();
        stepped.sort_by_key(|view| view.id);
        for event in &events {
            if let CrowdEvent::Arrived { agent, .. } | CrowdEvent::PartialArrived { agent, .. } =
                *event
            {
                if let Some(index) = self.agents.iter().position(|&a| a == agent) {
                    let plan = &self.plans[index];
                    let target = plan.targets[self.next_target[index] % plan.targets.len()];
                    self.next_target[index] += 1;
                    crowd.request_move(agent, target).unwrap();
                }
            }
        }
        (events, stepped)
    }
}

/// The proving ground baked with the guard preset in 48-cell tiles.
pub fn proving_ground_mesh() -> NavMesh {
    let world = waymark::scene::proving_ground::proving_ground()
        .scene
        .world_triangles()
        .unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(48),
        ..BakeConfig::preset(Preset::Guard)
    };
    NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap()
}

/// The turntable scenario with `agents` walkers, and a crowd under `config` (the
/// scenario's, or a variation) with the table turning and every walker sent to its place.
pub fn turntable_crowd(
    agents: usize,
    config: impl FnOnce(waymark::crowd::CrowdConfig) -> waymark::crowd::CrowdConfig,
) -> (waymark::harness::Scenario, waymark::crowd::Crowd) {
    let scenario =
        waymark::harness::Scenario::new(waymark::harness::ScenarioKind::Turntable, agents).unwrap();
    let mut crowd = waymark::crowd::Crowd::new(&scenario.mesh, config(scenario.config)).unwrap();
    let (support, motion) = scenario.supports[0];
    crowd
        .set_support_rotation(support, motion.pivot, motion.angular_velocity_rad_s)
        .unwrap();
    for &(start, target) in &scenario.agents {
        let agent = crowd.add_agent(start, scenario.params).unwrap();
        crowd.request_move(agent, target).unwrap();
    }
    (scenario, crowd)
}
