//! The path budget grows with the crowd: a mass order is answered within about the same
//! number of steps at any crowd size, where a fixed budget makes a large crowd wait.

use waymark::bake::{BakeConfig, Preset, bake};
use waymark::crowd::{AgentParams, Crowd, CrowdConfig, CrowdError, KinematicController};
use waymark::mesh::NavMesh;
use waymark::query::{QueryFilter, random_points};

#[test]
fn the_budget_is_the_fixed_one_or_the_per_agent_one_whichever_is_larger() {
    let config = CrowdConfig::default();
    assert_eq!(config.path_nodes_for(0), 2048);
    assert_eq!(config.path_nodes_for(800), 2048);
    assert_eq!(config.path_nodes_for(1000), 2500);
    assert_eq!(config.path_nodes_for(100_000), 250_000);
    assert_eq!(config.head_starts_for(10_000), 2048);
    assert_eq!(config.head_starts_for(100_000), 12_500);
    let fixed = CrowdConfig {
        path_nodes_per_agent: 0.0,
        head_starts_per_agent: 0.0,
        ..CrowdConfig::default()
    };
    assert_eq!(fixed.path_nodes_for(100_000), 2048);
    assert_eq!(fixed.head_starts_for(100_000), 2048);
    // A huge rate saturates instead of wrapping.
    let huge = CrowdConfig {
        path_nodes_per_agent: 1e30,
        ..CrowdConfig::default()
    };
    assert_eq!(huge.path_nodes_for(2), u32::MAX);
}

#[test]
fn a_rate_that_is_not_a_finite_non_negative_number_is_refused_by_name() {
    let mesh = city_mesh(100);
    for (config, field) in [
        (
            CrowdConfig {
                path_nodes_per_agent: f32::NAN,
                ..CrowdConfig::default()
            },
            "path_nodes_per_agent",
        ),
        (
            CrowdConfig {
                head_starts_per_agent: -1.0,
                ..CrowdConfig::default()
            },
            "head_starts_per_agent",
        ),
    ] {
        match Crowd::new(&mesh, config).err() {
            Some(CrowdError::BadConfig { field: named, .. }) => assert_eq!(named, field),
            other => panic!("{field}: {other:?}"),
        }
    }
}

/// Steps until every agent of a crowd of `agents` on the city, all ordered at once to a
/// random point, has its searched path.
fn steps_to_answer_everyone(mesh: &NavMesh, agents: usize, config: CrowdConfig) -> u32 {
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let starts = random_points(&snapshot, &filter, agents, 1);
    let targets = random_points(&snapshot, &filter, agents, 2);
    let mut crowd = Crowd::new(mesh, config).unwrap();
    for (&(_, start), &(_, target)) in starts.iter().zip(&targets) {
        let params = AgentParams {
            radius_m: 0.4,
            height_m: 1.8,
            ..AgentParams::DETOUR_REFERENCE
        };
        let agent = crowd.add_agent(start, params).unwrap();
        crowd.request_move(agent, target).unwrap();
    }
    let mut controller = KinematicController;
    for step in 1..=400 {
        crowd.step(1.0 / 30.0, &mut controller).unwrap();
        if crowd.stats().waiting_for_path == 0 {
            return step;
        }
    }
    panic!("{agents} agents still waiting after 400 steps");
}

fn city_mesh(agents: usize) -> NavMesh {
    let city = waymark::scene::city::city(agents, 3);
    let world = city.scene.world_triangles().unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(96),
        ..BakeConfig::preset(Preset::Guard)
    };
    NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap()
}

#[test]
fn a_mass_order_is_answered_in_about_the_same_steps_at_any_size() {
    let (small, large) = (500, 4000);
    let steps_small = steps_to_answer_everyone(&city_mesh(small), small, CrowdConfig::default());
    let large_mesh = city_mesh(large);
    let steps_large = steps_to_answer_everyone(&large_mesh, large, CrowdConfig::default());
    // The larger city's paths are longer (its side is about three times the smaller's),
    // so its answers take somewhat more steps, not eight times as many.
    assert!(
        steps_large <= 3 * steps_small,
        "{steps_small} then {steps_large} steps"
    );
    assert!(steps_large <= 60, "{steps_large} steps for {large} agents");
    let fixed = CrowdConfig {
        path_nodes_per_agent: 0.0,
        head_starts_per_agent: 0.0,
        ..CrowdConfig::default()
    };
    let steps_fixed = steps_to_answer_everyone(&large_mesh, large, fixed);
    assert!(
        steps_fixed >= 2 * steps_large,
        "a fixed budget: {steps_fixed} steps, grown: {steps_large}"
    );
}
