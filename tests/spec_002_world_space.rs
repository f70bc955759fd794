//! Spec 002 ("世界空间与缩放"): level geometry reaches the baker in one world space, every
//! transform applied once, in full. Worked examples n2, n4 and n6, plus non-uniform scale,
//! shear, units and the geometry errors.

use glam::{Affine3A, Mat3, Quat, Vec3};
use waymark::geom::{UpBasis, transform, triangle};
use waymark::ids::AreaId;
use waymark::scene::proving_ground::proving_ground;
use waymark::scene::{
    COORDINATE_LIMIT_M, GeometryError, InstanceDesc, Scene, TriMesh, WorldTriangles,
};

/// A 1 m x 1 m floor square at height 0, facing +Y.
fn unit_floor() -> TriMesh {
    TriMesh::quad(
        "unit_floor",
        [
            Vec3::ZERO,
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(1.0, 0.0, 0.0),
        ],
    )
}

fn single_instance_world(mesh: TriMesh, local: Affine3A) -> Result<WorldTriangles, GeometryError> {
    let mut scene = Scene::new();
    let mesh = scene.add_mesh(mesh);
    scene.add_instance(InstanceDesc::new("subject", mesh).with_local(local))?;
    scene.world_triangles()
}

fn instance_bounds(world: &WorldTriangles, name: &str) -> waymark::geom::Aabb {
    world
        .instances
        .iter()
        .find(|summary| summary.name == name)
        .unwrap_or_else(|| panic!("no instance named {name}"))
        .bounds
}

#[test]
fn n2_scaled_doorway_is_half_a_metre_in_world_space() {
    let ground = proving_ground();
    let world = ground.scene.world_triangles().unwrap();
    let left = instance_bounds(&world, "scaled_doorway/wall_left");
    let right = instance_bounds(&world, "scaled_doorway/wall_right");
    let doorway_width_m = right.min.z - left.max.z;
    assert!(
        (doorway_width_m - 0.5).abs() < 1e-5,
        "doorway is {doorway_width_m} m"
    );
    // The authored 5 m wall is 2.5 m tall and 0.2 m thick in the world.
    assert!((left.size().y - 2.5).abs() < 1e-5);
    assert!((left.size().x - 0.2).abs() < 1e-5);
    // A guard of radius 0.4 (0.8 m across) does not fit, so the bake must not connect it.
    let guard_diameter_m = 2.0 * 0.4;
    assert!(doorway_width_m < guard_diameter_m);
    // The same number from the transform: length(A * d) of the local 1 m doorway.
    let id = ground
        .scene
        .instance_by_name("scaled_doorway/wall_left")
        .unwrap();
    let world_transform = ground.scene.world_transform(id).unwrap();
    assert!((transform::world_length(&world_transform, Vec3::Z) - 0.5).abs() < 1e-6);
}

#[test]
fn n4_mirrored_instance_keeps_outward_normals() {
    let (min, max) = (Vec3::new(1.0, 0.0, 1.0), Vec3::new(2.0, 3.0, 4.0));
    let mirror = Affine3A::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    let world = single_instance_world(TriMesh::axis_box("box", min, max), mirror).unwrap();
    assert!(world.instances[0].mirrored);
    assert_eq!(world.len(), 12);
    let centre = Vec3::new(-1.5, 1.5, 2.5);
    for [a, b, c] in &world.corners {
        let normal = triangle::try_normal(*a, *b, *c).unwrap();
        let outward = (*a + *b + *c) / 3.0 - centre;
        assert!(
            normal.dot(outward) > 0.0,
            "inward normal {normal} on a mirrored box"
        );
    }
    // A mirrored floor still faces Up, so the baker still finds it walkable.
    let mirror_z = Affine3A::from_scale(Vec3::new(1.0, 1.0, -1.0));
    let floor = single_instance_world(unit_floor(), mirror_z).unwrap();
    for [a, b, c] in &floor.corners {
        assert_eq!(triangle::try_normal(*a, *b, *c), Some(Vec3::Y));
    }
}

#[test]
fn n4_degenerate_triangles_are_dropped_and_counted() {
    let positions = vec![
        Vec3::ZERO,
        Vec3::new(0.0, 0.0, 1.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(2.0, 0.0, 0.0),       // collinear with 0 and 2
        Vec3::new(0.0, 0.0, 0.001),     // with 0 and 2: 0.0005 m², kept
        Vec3::new(0.0, 0.0, 0.000_001), // with 0 and 2: 5e-7 m², dropped
    ];
    let mesh = TriMesh::new(
        "mixed",
        positions,
        vec![[0, 1, 2], [0, 2, 3], [0, 4, 2], [0, 5, 2]],
    );
    let world = single_instance_world(mesh, Affine3A::IDENTITY).unwrap();
    assert_eq!(world.triangles_read, 4);
    assert_eq!(world.len(), 2);
    assert_eq!(world.degenerate_dropped, 2);
    assert_eq!(world.instances[0].degenerate_dropped, 2);
    // Degeneracy is judged in world metres: the kept 0.0005 m² sliver scaled by 0.01 in Z
    // becomes 5e-6 m², still kept; scaled by 0.001 it is 5e-7 m² and dropped.
    let sliver = TriMesh::new(
        "sliver",
        vec![Vec3::ZERO, Vec3::new(0.0, 0.0, 0.001), Vec3::X],
        vec![[0, 1, 2]],
    );
    let thin = Affine3A::from_scale(Vec3::new(1.0, 1.0, 0.01));
    assert_eq!(
        single_instance_world(sliver.clone(), thin).unwrap().len(),
        1
    );
    let thinner = Affine3A::from_scale(Vec3::new(1.0, 1.0, 0.001));
    let only_degenerate = single_instance_world(sliver, thinner).unwrap_err();
    assert_eq!(
        only_degenerate,
        GeometryError::NoSurface {
            triangles: 1,
            degenerate: 1,
            tolerance_m2: 1e-6
        }
    );
}

#[test]
fn n4_nan_vertex_is_a_geometry_error_naming_it() {
    let mut positions = unit_floor().positions;
    positions[2] = Vec3::new(1.0, f32::NAN, 1.0);
    let mesh = TriMesh::new("crate_lid", positions, vec![[0, 1, 2], [0, 2, 3]]);
    let error = single_instance_world(mesh, Affine3A::IDENTITY).unwrap_err();
    let GeometryError::NonFinitePosition {
        instance,
        mesh,
        vertex,
        value,
    } = &error
    else {
        panic!("expected NonFinitePosition, got {error:?}");
    };
    assert_eq!(
        (instance.as_str(), mesh.as_str(), *vertex),
        ("subject", "crate_lid", 2)
    );
    assert!(value.y.is_nan());
    let message = error.to_string();
    assert!(
        message.contains("'subject'") && message.contains("vertex 2") && message.contains("NaN"),
        "{message}"
    );
}

#[test]
fn n6_parent_scale_changes_the_child_source_version_only() {
    let mut scene = Scene::new();
    let mesh = scene.add_mesh(unit_floor());
    let parent = scene.add_node("parent", None, Affine3A::IDENTITY).unwrap();
    let child = scene
        .add_instance(InstanceDesc::new("child", mesh).under(parent))
        .unwrap();
    let bystander = scene
        .add_instance(InstanceDesc::new("bystander", mesh))
        .unwrap();
    let other_mesh = scene.add_mesh(unit_floor());
    let unrelated = scene
        .add_instance(InstanceDesc::new("unrelated", other_mesh))
        .unwrap();

    let before = [child, bystander, unrelated].map(|id| scene.source_version(id).unwrap());
    scene
        .set_node_transform(parent, Affine3A::from_scale(Vec3::splat(0.5)))
        .unwrap();
    let after_parent = [child, bystander, unrelated].map(|id| scene.source_version(id).unwrap());
    assert!(
        after_parent[0] > before[0],
        "the child's source version must change"
    );
    assert_eq!(
        after_parent[1], before[1],
        "an instance outside the subtree keeps its version"
    );
    assert_eq!(after_parent[2], before[2]);
    // The world triangles follow: the child now covers a quarter of a square metre.
    let world = scene.world_triangles().unwrap();
    assert_eq!(world.instances[0].source_version, after_parent[0]);
    assert!((instance_bounds(&world, "child").size().x - 0.5).abs() < 1e-6);

    // Changing the unrelated instance's transform leaves the child's version alone.
    scene
        .set_instance_transform(unrelated, Affine3A::from_translation(Vec3::X * 5.0))
        .unwrap();
    assert_eq!(scene.source_version(child), Some(after_parent[0]));
    assert!(scene.source_version(unrelated).unwrap() > after_parent[2]);
    // A grandparent above the parent reaches the child too.
    let grandparent = scene
        .add_node("grandparent", None, Affine3A::IDENTITY)
        .unwrap();
    scene.set_node_parent(parent, Some(grandparent)).unwrap();
    let reparented = scene.source_version(child).unwrap();
    assert!(reparented > after_parent[0]);
    scene
        .set_node_transform(grandparent, Affine3A::from_scale(Vec3::splat(2.0)))
        .unwrap();
    assert!(scene.source_version(child).unwrap() > reparented);
    assert_eq!(scene.source_version(bystander), Some(before[1]));
    // Editing the shared mesh changes both of its instances, not the unrelated one.
    let unrelated_version = scene.source_version(unrelated);
    scene
        .set_mesh(mesh, unit_floor().with_area(AreaId::WATER))
        .unwrap();
    assert!(scene.source_version(bystander).unwrap() > before[1]);
    assert_eq!(scene.source_version(unrelated), unrelated_version);
    // Cycles are refused by id.
    assert_eq!(
        scene.set_node_parent(grandparent, Some(parent)),
        Err(GeometryError::Cycle {
            node: grandparent.0,
            parent: parent.0
        })
    );
}

#[test]
fn non_uniform_scale_gives_the_expected_world_area() {
    let scale = Affine3A::from_scale(Vec3::new(2.0, 1.0, 0.5));
    let world = single_instance_world(unit_floor(), scale).unwrap();
    assert!((world.total_area_m2() - 1.0).abs() < 1e-6);
    // The same square standing in the XY plane keeps the Y factor: 2 x 1 = 2 m².
    let standing = TriMesh::quad(
        "wall",
        [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y],
    );
    let world = single_instance_world(standing, scale).unwrap();
    assert!((world.total_area_m2() - 2.0).abs() < 1e-6);
}

#[test]
fn shear_tilts_the_floor_and_its_normal_follows_the_world_triangle() {
    // y' = y + 0.5 x: the floor rises 0.5 m per metre of X.
    let shear = Affine3A::from_mat3(Mat3::from_cols(Vec3::new(1.0, 0.5, 0.0), Vec3::Y, Vec3::Z));
    let world = single_instance_world(unit_floor(), shear).unwrap();
    assert!((world.total_area_m2() - 1.25_f64.sqrt()).abs() < 1e-6);
    let expected_normal = Vec3::new(-0.5, 1.0, 0.0).normalize();
    for [a, b, c] in &world.corners {
        let normal = triangle::try_normal(*a, *b, *c).unwrap();
        assert!((normal - expected_normal).length() < 1e-6, "{normal}");
        // 26.57° from Up: cos = 1/sqrt(1.25).
        let cos = UpBasis::Y_UP.slope_cos(normal);
        assert!((cos - 1.0 / 1.25_f32.sqrt()).abs() < 1e-6);
    }
}

#[test]
fn unit_scale_converts_asset_units_to_metres_before_the_transform() {
    // A 100 x 100 centimetre floor, moved 3 m by its instance: 1 m² at x in [3, 4].
    let centimetres = TriMesh::quad(
        "cm_floor",
        [
            Vec3::ZERO,
            Vec3::new(0.0, 0.0, 100.0),
            Vec3::new(100.0, 0.0, 100.0),
            Vec3::new(100.0, 0.0, 0.0),
        ],
    )
    .with_unit_scale(0.01);
    let moved = Affine3A::from_translation(Vec3::new(3.0, 0.0, 0.0));
    let world = single_instance_world(centimetres, moved).unwrap();
    assert!((world.total_area_m2() - 1.0).abs() < 1e-6);
    assert_eq!(world.bounds.min.x, 3.0);
    assert_eq!(world.bounds.max.x, 4.0);
}

#[test]
fn rotations_and_ancestor_chains_compose_once() {
    let mut scene = Scene::new();
    let mesh = scene.add_mesh(unit_floor());
    let root = scene
        .add_node(
            "root",
            None,
            Affine3A::from_translation(Vec3::new(10.0, 0.0, 0.0)),
        )
        .unwrap();
    let turn = Affine3A::from_quat(Quat::from_rotation_y(std::f32::consts::FRAC_PI_2));
    let middle = scene.add_node("middle", Some(root), turn).unwrap();
    let local = Affine3A::from_translation(Vec3::new(2.0, 0.0, 0.0));
    scene
        .add_instance(
            InstanceDesc::new("leaf", mesh)
                .under(middle)
                .with_local(local),
        )
        .unwrap();
    let world = scene.world_triangles().unwrap();
    // Local origin: 2 m along local X, turned to -Z, then moved to x = 10.
    let moved_origin = world.corners[0][0];
    assert!(
        (moved_origin - Vec3::new(10.0, 0.0, -2.0)).length() < 1e-5,
        "{moved_origin}"
    );
}

#[test]
fn bad_geometry_errors_name_the_value() {
    // Out-of-range index.
    let mesh = TriMesh::new(
        "broken",
        vec![Vec3::ZERO, Vec3::X, Vec3::Z],
        vec![[0, 1, 7]],
    );
    assert_eq!(
        single_instance_world(mesh, Affine3A::IDENTITY).unwrap_err(),
        GeometryError::IndexOutOfRange {
            mesh: "broken".into(),
            triangle: 0,
            index: 7,
            vertex_count: 3
        }
    );
    // Beyond the coordinate limit, after the transform.
    let far = Affine3A::from_translation(Vec3::new(2.0 * COORDINATE_LIMIT_M, 0.0, 0.0));
    let error = single_instance_world(unit_floor(), far).unwrap_err();
    assert!(
        matches!(error, GeometryError::CoordinateOutOfRange { vertex: 0, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("200000"), "{error}");
    // A transform that flattens space.
    let flat = Affine3A::from_scale(Vec3::new(1.0, 0.0, 1.0));
    assert!(matches!(
        single_instance_world(unit_floor(), flat).unwrap_err(),
        GeometryError::SingularTransform { determinant, .. } if determinant == 0.0
    ));
    // A NaN in an ancestor names the node.
    let mut scene = Scene::new();
    let mesh = scene.add_mesh(unit_floor());
    let node = scene
        .add_node("lift_rig", None, Affine3A::from_translation(Vec3::NAN))
        .unwrap();
    scene
        .add_instance(InstanceDesc::new("lift", mesh).under(node))
        .unwrap();
    assert_eq!(
        scene.world_triangles().unwrap_err(),
        GeometryError::NonFiniteTransform {
            owner: "node 'lift_rig'".into()
        }
    );
    // A zero unit scale, area tags that do not match, an empty scene.
    let zero = unit_floor().with_unit_scale(0.0);
    assert_eq!(
        single_instance_world(zero, Affine3A::IDENTITY).unwrap_err(),
        GeometryError::BadUnitScale {
            mesh: "unit_floor".into(),
            value: 0.0
        }
    );
    let mut mismatched = unit_floor();
    mismatched.areas = Some(vec![AreaId::WATER]);
    assert!(matches!(
        single_instance_world(mismatched, Affine3A::IDENTITY).unwrap_err(),
        GeometryError::AreaCountMismatch {
            areas: 1,
            triangles: 2,
            ..
        }
    ));
    assert_eq!(
        Scene::new().world_triangles().unwrap_err(),
        GeometryError::Empty
    );
    // Ids from elsewhere.
    let mut scene = Scene::new();
    let stray = waymark::scene::MeshId(4);
    assert_eq!(
        scene
            .add_instance(InstanceDesc::new("x", stray))
            .unwrap_err(),
        GeometryError::UnknownId {
            kind: "mesh",
            index: 4
        }
    );
}

/// Whether some world triangle's surface passes through `point` (within 1 mm).
fn lies_on_surface(world: &WorldTriangles, point: Vec3) -> bool {
    world.corners.iter().any(|[a, b, c]| {
        let Some(normal) = triangle::try_normal(*a, *b, *c) else {
            return false;
        };
        if normal.y < 0.7 {
            return false;
        }
        let inside = [(*a, *b), (*b, *c), (*c, *a)].iter().all(|(from, to)| {
            let edge = *to - *from;
            let offset = point - *from;
            // Counter-clockwise from above: the point is left of (or on) every edge.
            edge.z * offset.x - edge.x * offset.z >= -1e-6
        });
        let height = a.y - (normal.x * (point.x - a.x) + normal.z * (point.z - a.z)) / normal.y;
        inside && (height - point.y).abs() < 1e-3
    })
}

#[test]
fn proving_ground_has_every_feature_of_the_spec_validation_level() {
    let ground = proving_ground();
    let names: Vec<&str> = ground.features.iter().map(|feature| feature.name).collect();
    assert_eq!(
        names,
        [
            "door_0_7",
            "door_1_2",
            "step_0_3",
            "step_0_6",
            "ramp_30",
            "ramp_60",
            "broken_bridge",
            "balcony",
            "scaled_doorway",
            "turntable",
            "lift"
        ]
    );
    let world = ground.scene.world_triangles().unwrap();
    assert_eq!(world.degenerate_dropped, 0);
    for feature in &ground.features {
        for side in [feature.side_a, feature.side_b] {
            assert!(
                lies_on_surface(&world, side),
                "{}: {side} is not on a floor",
                feature.name
            );
        }
    }
    // The balcony overlaps the ground floor horizontally, 3 m apart (spec n5).
    assert!(lies_on_surface(&world, ground.under_balcony_point));
    let offset = ground.balcony_point - ground.under_balcony_point;
    assert_eq!(offset, Vec3::new(0.0, 3.0, 0.0));
    // The ramps rise at their named angles.
    for (name, degrees) in [("ramp_30/ramp", 30.0_f32), ("ramp_60/ramp", 60.0_f32)] {
        let ramp = instance_bounds(&world, name);
        let angle = (ramp.size().y / ramp.size().x).atan().to_degrees();
        assert!((angle - degrees).abs() < 1e-3, "{name} rises at {angle}°");
    }
    // The doors are the widths they are named for.
    for (bay, width) in [("door_0_7", 0.7), ("door_1_2", 1.2)] {
        let left = instance_bounds(&world, &format!("{bay}/wall_left"));
        let right = instance_bounds(&world, &format!("{bay}/wall_right"));
        assert!(((right.min.z - left.max.z) - width).abs() < 1e-5);
    }
}
