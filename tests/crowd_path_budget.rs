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

/// Agents sent to a few shared targets (exits) from the whole city: every one of them on
/// its full path within a few steps, each corridor ending in its exit's polygon, and the
/// same crowd at one thread as at two (the trees are built in the scheduler's serial part,
/// and charged the same whether built or kept).
#[test]
fn agents_sent_to_a_few_exits_are_answered_from_shared_trees() {
    let mesh = city_mesh(2000);
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let exits = random_points(&snapshot, &filter, 4, 9);
    let starts = random_points(&snapshot, &filter, 2000, 10);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
            let params = AgentParams {
                radius_m: 0.4,
                height_m: 1.8,
                ..AgentParams::DETOUR_REFERENCE
            };
            let mut agents = Vec::new();
            for (index, &(_, start)) in starts.iter().enumerate() {
                let agent = crowd.add_agent(start, params).unwrap();
                crowd.request_move(agent, exits[index % 4].1).unwrap();
                agents.push(agent);
            }
            let mut controller = KinematicController;
            let mut answered_at = None;
            for step in 1..=40 {
                crowd.step(1.0 / 30.0, &mut controller).unwrap();
                if answered_at.is_none() && crowd.stats().waiting_for_path == 0 {
                    answered_at = Some(step);
                }
            }
            (crowd, agents, answered_at)
        })
    };
    let (crowd, agents, answered_at) = run(2);
    let answered_at = answered_at.expect("every agent answered within 40 steps");
    assert!(answered_at <= 10, "answered at step {answered_at}");
    let mut ending_at_exits = 0;
    for (index, &agent) in agents.iter().enumerate() {
        let Some(corridor) = crowd.corridor(agent).unwrap() else {
            continue;
        };
        if corridor.complete && corridor.last_polygon(crowd.snapshot()) == Some(exits[index % 4].0)
        {
            ending_at_exits += 1;
        }
    }
    assert!(
        ending_at_exits >= 1900,
        "{ending_at_exits} of 2000 corridors end at their exit"
    );
    let (single, _, single_answered) = run(1);
    assert_eq!(single_answered, Some(answered_at));
    assert_eq!(
        waymark::harness::state_hash(&single),
        waymark::harness::state_hash(&crowd)
    );
}
