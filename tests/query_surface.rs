//! Rays along the surface and constrained moves, on the two-rooms level.

mod common;

use glam::{Vec2, Vec3};
use waymark::query::{QueryFilter, move_along_surface, nearest_polygon, raycast};

/// The largest X of any polygon vertex in room A (x < 12): its eroded east edge.
fn room_a_east_edge(mesh: &waymark::mesh::NavMesh) -> f32 {
    let snapshot = mesh.snapshot();
    let mut edge = f32::MIN;
    for view in &snapshot.data().slots {
        if let waymark::mesh::SlotState::Live(tile) = &view.state {
            for vertex in &tile.data.vertices {
                if vertex[0] < 12.0 && vertex[2] < 5.0 {
                    edge = edge.max(vertex[0]);
                }
            }
        }
    }
    edge
}

#[test]
fn a_ray_across_the_open_floor_arrives_and_one_towards_the_gap_hits_the_edge() {
    let (mesh, _) = common::rooms();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let start = Vec3::new(2.0, 0.0, 3.0);
    let from = nearest_polygon(&snapshot, start, Vec3::ONE, &filter)
        .unwrap()
        .unwrap();
    let inside = raycast(
        &snapshot,
        from.polygon,
        from.point,
        Vec3::new(8.0, 0.0, 2.0),
        &filter,
    )
    .unwrap();
    assert_eq!(inside.hit_fraction, None);
    assert!(
        inside.polygons.len() >= 2,
        "the ray crosses tile borders: {:?}",
        inside.polygons
    );

    let edge = room_a_east_edge(&mesh);
    assert!(edge > 9.0 && edge < 10.0, "{edge}");
    let towards_b = raycast(
        &snapshot,
        from.polygon,
        from.point,
        Vec3::new(16.0, 0.0, 3.0),
        &filter,
    )
    .unwrap();
    let fraction = towards_b.hit_fraction.expect("the gap is a wall");
    let hit_x = from.point.x + (16.0 - from.point.x) * fraction;
    assert!(
        (hit_x - edge).abs() < 1e-3,
        "hit at x {hit_x}, edge at {edge}"
    );
    assert_eq!(
        towards_b.wall_normal,
        Some(Vec2::X),
        "the east edge faces +X"
    );
}

#[test]
fn a_move_inside_arrives_and_a_move_over_the_edge_stops_on_it() {
    let (mesh, _) = common::rooms();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let start = Vec3::new(8.0, 0.0, 3.0);
    let from = nearest_polygon(&snapshot, start, Vec3::ONE, &filter)
        .unwrap()
        .unwrap();
    let target = Vec3::new(8.5, 0.0, 2.5);
    let inside = move_along_surface(&snapshot, from.polygon, from.point, target, &filter).unwrap();
    // Horizontally exact; the height is the floor's voxel height, up to one cell above it.
    assert!(
        Vec2::new(inside.position.x - target.x, inside.position.z - target.z).length() < 1e-4,
        "{}",
        inside.position
    );
    assert!(
        (inside.position.y - target.y).abs() <= 0.1 + 1e-4,
        "{}",
        inside.position
    );
    // Two metres east from x 8 crosses the edge: the move stops on it, sliding to z 3.5.
    let over = move_along_surface(
        &snapshot,
        from.polygon,
        from.point,
        Vec3::new(10.5, 0.0, 3.5),
        &filter,
    )
    .unwrap();
    let edge = room_a_east_edge(&mesh);
    assert!((over.position.x - edge).abs() < 1e-3, "{}", over.position);
    assert!((over.position.z - 3.5).abs() < 1e-3, "{}", over.position);
    assert!(
        over.position.y.abs() <= 0.1 + 1e-4,
        "height from the detail mesh: {}",
        over.position.y
    );
    // NaN is refused.
    assert!(move_along_surface(&snapshot, from.polygon, from.point, Vec3::NAN, &filter).is_err());
    assert!(raycast(&snapshot, from.polygon, Vec3::NAN, start, &filter).is_err());
}
