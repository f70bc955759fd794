//! What the stress examples share (with `waymark::harness`, whose `median` they use). The crowd they step: N agents of DetourCrowd's parameters at seeded random
//! points of the generated city (sized from N, seed 1), each asked to walk to another random
//! point, the city baked with RecastDemo's settings in tiles of 96 cells as the CLI does.
//! Included by the examples with `#[path]`; not an example itself.

use waymark::bake::{BakeConfig, Preset, bake};
use waymark::crowd::{AgentParams, Crowd, CrowdConfig};
use waymark::harness::AgentPlan;
use waymark::mesh::NavMesh;
use waymark::query::{QueryFilter, random_points};

/// The city's navmesh and the plans of its agents: one random target each.
pub fn city_plans(agents: usize) -> (NavMesh, Vec<AgentPlan>) {
    let city = waymark::scene::city::city(agents, 1);
    let world = city.scene.world_triangles().expect("the city's triangles");
    let bake_config = BakeConfig {
        tile_size_cells: Some(96),
        ..BakeConfig::preset(Preset::Recast)
    };
    let mesh = NavMesh::from_file(
        bake(&world, &bake_config)
            .expect("the city bakes")
            .to_file(),
    )
    .expect("a valid navmesh");
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let starts = random_points(&snapshot, &filter, agents, 1);
    let targets = random_points(&snapshot, &filter, agents, 2);
    let plans = starts
        .iter()
        .zip(&targets)
        .map(|(start, target)| AgentPlan {
            start: start.1,
            targets: vec![target.1],
        })
        .collect();
    (mesh, plans)
}

/// The city's navmesh and a crowd on it made with `config`, every agent placed and ordered
/// (for runs that step the crowd their own way). The mesh is returned so the caller keeps it
/// for as long as the crowd runs on it.
#[allow(dead_code)]
pub fn city_crowd(agents: usize, config: CrowdConfig) -> (NavMesh, Crowd) {
    let (mesh, plans) = city_plans(agents);
    let mut crowd = Crowd::new(&mesh, config).expect("a valid configuration");
    crowd.reserve(agents).expect("room for the agents");
    for plan in &plans {
        let agent = crowd
            .add_agent(plan.start, AgentParams::DETOUR_REFERENCE)
            .expect("a start on the mesh");
        crowd
            .request_move(agent, plan.targets[0])
            .expect("a finite target");
    }
    (mesh, crowd)
}
