//! Corridors keep no portals; each agent keeps the portals of its last funnel window and
//! asks the mesh only for the new ones. Kept or fresh, the follow pass must give the same
//! outputs to the bit, frame after frame, on a tiled city (portals across tile borders).

use waymark::bake::{BakeConfig, Preset, bake};
use waymark::crowd::internals::{PortalWindow, follow_pass};
use waymark::crowd::{AgentParams, Crowd, CrowdConfig, KinematicController};
use waymark::mesh::NavMesh;
use waymark::query::{QueryFilter, random_points};

#[test]
fn kept_portal_windows_follow_exactly_as_fresh_ones() {
    let city = waymark::scene::city::city(300, 5);
    let world = city.scene.world_triangles().unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(48),
        ..BakeConfig::preset(Preset::Guard)
    };
    let mesh = NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap();
    let snapshot = mesh.snapshot();
    assert!(snapshot.data().slots.len() > 4, "a tiled level");
    let filter = QueryFilter::new();
    let starts = random_points(&snapshot, &filter, 300, 1);
    let targets = random_points(&snapshot, &filter, 300, 2);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let params = AgentParams {
        radius_m: 0.4,
        height_m: 1.8,
        max_speed_mps: 2.0,
        preferred_speed_mps: 1.4,
        max_acceleration_mps2: 6.0,
    };
    for (&(_, start), &(_, target)) in starts.iter().zip(&targets) {
        let agent = crowd.add_agent(start, params).unwrap();
        crowd.request_move(agent, target).unwrap();
    }
    let mut controller = KinematicController;
    let mut kept = vec![PortalWindow::EMPTY; 300];
    let (mut with_kept, mut with_fresh) = (Vec::new(), Vec::new());
    let mut funnels = 0;
    for _ in 0..240 {
        crowd.step(1.0 / 30.0, &mut controller).unwrap();
        let lanes = crowd.lanes();
        follow_pass(
            crowd.snapshot(),
            lanes,
            &mut kept,
            1.0 / 30.0,
            0.25,
            &mut with_kept,
        );
        let mut fresh = vec![PortalWindow::EMPTY; lanes.len()];
        follow_pass(
            crowd.snapshot(),
            lanes,
            &mut fresh,
            1.0 / 30.0,
            0.25,
            &mut with_fresh,
        );
        assert_eq!(with_kept, with_fresh);
        funnels += with_kept
            .iter()
            .flatten()
            .filter(|output| output.refreshed && !output.off_corridor)
            .count();
    }
    assert!(funnels > 1_000, "only {funnels} funnel runs");
    let moved = (0..300)
        .filter(|&slot| crowd.lanes().position(slot).distance(starts[slot].1) > 5.0)
        .count();
    assert!(moved > 200, "only {moved} agents walked");
}
