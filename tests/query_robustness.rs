//! Seeded random queries, on and off the mesh: no panic, and every answer keeps its
//! invariants (a route starts at its snapped start, a complete one ends at its snapped end,
//! consecutive path polygons are distinct, rays report fractions in [0, 1], moves stay on a
//! polygon that exists).

mod common;

use glam::Vec3;
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::mesh::NavMesh;
use waymark::query::{
    NodePool, QueryError, QueryFilter, RouteBuffers, StraightPathScratch, move_along_surface,
    raycast, route, route_with, straight_path_with,
};
use waymark::scene::proving_ground::proving_ground;

/// xorshift64*: small, seeded, good enough to scatter test points.
struct Random(u64);

impl Random {
    fn next_unit(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
    }

    fn point(&mut self, low: Vec3, high: Vec3) -> Vec3 {
        low + (high - low) * Vec3::new(self.next_unit(), self.next_unit(), self.next_unit())
    }
}

fn exercise(mesh: &NavMesh, low: Vec3, high: Vec3, seed: u64) -> (usize, usize) {
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let mut pool = NodePool::new(512);
    let mut random = Random(seed);
    let extents = Vec3::new(2.0, 4.0, 2.0);
    let (mut routed, mut complete) = (0, 0);
    let (mut buffers, mut scratch, mut corners) = (
        RouteBuffers::default(),
        StraightPathScratch::default(),
        Vec::new(),
    );
    // A margin around the level puts some points off the mesh entirely.
    let margin = Vec3::new(2.0, 1.0, 2.0);
    for _ in 0..2000 {
        let start = random.point(low - margin, high + margin);
        let end = random.point(low - margin, high + margin);
        let found = route(&snapshot, start, end, extents, &filter, &mut pool).unwrap();
        // The same route built in buffers handed back from the last one.
        let recycled = route_with(
            &snapshot,
            start,
            end,
            extents,
            &filter,
            &mut pool,
            &mut buffers,
        )
        .unwrap();
        assert_eq!(recycled, found);
        if let Some(recycled) = recycled {
            buffers.recycle(recycled);
        }
        let Some(found) = found else {
            continue;
        };
        routed += 1;
        // A bad end is refused by name and leaves no corners behind from the last answer.
        straight_path_with(
            &snapshot,
            &found.path.steps,
            found.start.point,
            found.end.point,
            &mut scratch,
            &mut corners,
        )
        .unwrap();
        assert!(!corners.is_empty());
        let refused = straight_path_with(
            &snapshot,
            &found.path.steps,
            found.start.point,
            Vec3::new(f32::NAN, 0.0, 0.0),
            &mut scratch,
            &mut corners,
        );
        assert!(
            matches!(refused, Err(QueryError::NotFinite { .. })),
            "{refused:?}"
        );
        assert!(corners.is_empty());
        assert_eq!(found.corners.first().unwrap().position, found.start.point);
        if found.path.complete {
            complete += 1;
            assert_eq!(found.corners.last().unwrap().position, found.end.point);
            assert_eq!(found.path.steps.last().unwrap().polygon, found.end.polygon);
        }
        assert!(
            found
                .path
                .steps
                .windows(2)
                .all(|pair| pair[0].polygon != pair[1].polygon)
        );
        assert!(found.length_m().is_finite());
        let ray = raycast(
            &snapshot,
            found.start.polygon,
            found.start.point,
            end,
            &filter,
        )
        .unwrap();
        assert!(ray.hit_fraction.is_none_or(|t| (0.0..=1.0).contains(&t)));
        let moved = move_along_surface(
            &snapshot,
            found.start.polygon,
            found.start.point,
            end,
            &filter,
        )
        .unwrap();
        assert!(snapshot.tile(moved.polygon).is_some());
        assert!(moved.position.is_finite());
    }
    (routed, complete)
}

#[test]
fn random_queries_on_the_tiled_rooms_never_panic() {
    let (mesh, _) = common::rooms();
    let (routed, complete) = exercise(
        &mesh,
        Vec3::new(0.0, -1.0, 0.0),
        Vec3::new(50.0, 1.0, 11.0),
        0x5eed,
    );
    assert!(
        routed > 100 && complete > 50,
        "routed {routed}, complete {complete}"
    );
}

#[test]
fn random_queries_on_the_proving_ground_never_panic() {
    let ground = proving_ground();
    let world = ground.scene.world_triangles().unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(48),
        ..BakeConfig::preset(Preset::Guard)
    };
    let mesh = NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap();
    let (routed, complete) = exercise(&mesh, world.bounds.min, world.bounds.max, 0xfeed);
    assert!(
        routed > 100 && complete > 20,
        "routed {routed}, complete {complete}"
    );
}
