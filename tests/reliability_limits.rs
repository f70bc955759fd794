//! Every value that enters through the library's calls or its file formats is finite and
//! inside its physical range (`waymark::geom::limits`), or refused naming the field and the
//! value: one test per boundary, each feeding the value a hostile input gave.

mod common;

use glam::Vec3;
use waymark::bake::{BakeConfig, BakeConfigError, Preset};
use waymark::crowd::{AgentParams, Crowd, CrowdConfig, CrowdError};
use waymark::geom::limits::{
    ACCELERATION_MAX_MPS2, ANGULAR_SPEED_MAX_RAD_S, BODY_SIZE_MAX_M, COORDINATE_MAX_M,
    SPEED_MAX_MPS,
};
use waymark::ids::SupportId;
use waymark::mesh::blob::{BakeParams, NavMeshFile};
use waymark::mesh::{HandBuiltError, NavMesh, TileData, WalkablePolygon};

const WALKER: AgentParams = AgentParams {
    radius_m: 0.4,
    height_m: 1.8,
    max_speed_mps: 2.0,
    preferred_speed_mps: 2.0,
    max_acceleration_mps2: 8.0,
};

/// A 10 m square floor, nominally baked for radius 0.6 and height 2, whose polygon is
/// support layer 1 (support 0: a belt or turntable).
fn floor_mesh() -> NavMesh {
    let mut square = WalkablePolygon::ground(vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(10.0, 0.0, 0.0),
        Vec3::new(10.0, 0.0, 10.0),
        Vec3::new(0.0, 0.0, 10.0),
    ]);
    square.layer = 1;
    common::mesh_of(&[square], 0.6, 2.0)
}

fn crowd() -> Crowd {
    Crowd::new(&floor_mesh(), CrowdConfig::default()).unwrap()
}

#[test]
fn a_turntable_turning_past_the_turn_limit_is_refused_by_value() {
    // 1e30 rad/s once reached the avoidance's clamp as NaN and panicked.
    let mut crowd = crowd();
    for rate in [1e30, ANGULAR_SPEED_MAX_RAD_S * 1.01, -1e28] {
        let error = crowd
            .set_support_rotation(SupportId(0), Vec3::new(5.0, 0.0, 5.0), rate)
            .unwrap_err();
        assert!(
            matches!(error, CrowdError::OutOfRange { value, .. } if value == rate.abs()),
            "{error}"
        );
        assert!(error.to_string().contains("100 rad/s"), "{error}");
    }
    let error = crowd
        .set_support_rotation(SupportId(0), Vec3::new(3e38, 0.0, 5.0), 1.0)
        .unwrap_err();
    assert!(matches!(error, CrowdError::OutOfRange { value, .. } if value == 3e38));
    crowd
        .set_support_rotation(
            SupportId(0),
            Vec3::new(5.0, 0.0, 5.0),
            ANGULAR_SPEED_MAX_RAD_S,
        )
        .unwrap();
}

#[test]
fn a_belt_faster_than_the_speed_limit_is_refused_by_value() {
    let mut crowd = crowd();
    let error = crowd
        .set_support_velocity(SupportId(0), Vec3::new(3e38, 0.0, 0.0))
        .unwrap_err();
    assert!(matches!(error, CrowdError::OutOfRange { value, .. } if value == 3e38));
    assert!(
        crowd
            .set_support_velocity(SupportId(0), Vec3::new(0.0, 0.0, SPEED_MAX_MPS))
            .is_ok()
    );
}

#[test]
fn agent_parameters_past_their_limits_are_refused_naming_the_field() {
    let mut crowd = crowd();
    let cases = [
        (
            "max_speed_mps",
            AgentParams {
                max_speed_mps: SPEED_MAX_MPS * 2.0,
                ..WALKER
            },
        ),
        (
            "max_acceleration_mps2",
            AgentParams {
                max_acceleration_mps2: ACCELERATION_MAX_MPS2 * 2.0,
                ..WALKER
            },
        ),
        (
            "height_m",
            AgentParams {
                height_m: BODY_SIZE_MAX_M * 2.0,
                ..WALKER
            },
        ),
    ];
    for (field, params) in cases {
        let error = crowd
            .add_agent(Vec3::new(5.0, 0.0, 5.0), params)
            .unwrap_err();
        assert!(
            matches!(error, CrowdError::BadParameter { field: named, .. } if named == field),
            "{field}: {error}"
        );
    }
    assert_eq!(crowd.len(), 0);
}

#[test]
fn points_beyond_the_world_are_refused_before_any_search() {
    let mut crowd = crowd();
    let agent = crowd.add_agent(Vec3::new(5.0, 0.0, 5.0), WALKER).unwrap();
    let far = Vec3::new(1e20, 0.0, 5.0);
    for (what, result) in [
        ("move target", crowd.request_move(agent, far).map(|_| ())),
        ("teleport position", crowd.teleport(agent, far)),
        ("agent position", crowd.add_agent(far, WALKER).map(|_| ())),
        (
            "hold target",
            crowd
                .request_hold(agent, far, waymark::crowd::HoldPolicy::SPEC_EXAMPLE)
                .map(|_| ()),
        ),
    ] {
        let error = result.unwrap_err();
        assert!(
            matches!(error, CrowdError::OutOfRange { what: named, value, .. }
                if named == what && value == 1e20),
            "{what}: {error}"
        );
    }
    let error = crowd.push(agent, Vec3::new(0.0, 0.0, 3e38)).unwrap_err();
    assert!(matches!(
        error,
        CrowdError::OutOfRange {
            what: "push (m)",
            ..
        }
    ));
    assert_eq!(crowd.position(agent).unwrap(), Vec3::new(5.0, 0.0, 5.0));
}

#[test]
fn a_hand_built_corner_beyond_the_world_is_refused_by_value() {
    // A walkable polygon 2e30 wide once sized the neighbour grid from its agents' spread.
    let wide = WalkablePolygon::ground(vec![
        Vec3::new(-1e30, 0.0, 0.0),
        Vec3::new(1e30, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 1.0),
    ]);
    let error = TileData::from_walkable_polygons(&[wide]).unwrap_err();
    assert!(matches!(
        error,
        HandBuiltError::NotFinite {
            polygon: 0,
            corner: 0,
            value,
        } if value.x == -1e30
    ));
    assert!(error.to_string().contains(&format!("{COORDINATE_MAX_M}")));
}

/// A `.wmnav` of the floor with `edit` applied to its content before writing: the
/// checksum is valid, the values are what the test says.
fn written_with(edit: impl FnOnce(&mut NavMeshFile)) -> Vec<u8> {
    let square = WalkablePolygon::ground(vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(10.0, 0.0, 0.0),
        Vec3::new(10.0, 0.0, 10.0),
        Vec3::new(0.0, 0.0, 10.0),
    ]);
    let mut file = NavMeshFile {
        params: BakeParams {
            agent_radius_m: 0.6,
            agent_height_m: 2.0,
            ..BakeParams::default()
        },
        tiles: vec![TileData::from_walkable_polygons(&[square]).unwrap()],
    };
    assert!(NavMeshFile::from_bytes(&file.to_bytes()).is_ok());
    edit(&mut file);
    file.to_bytes()
}

#[test]
fn a_mesh_file_with_insane_settings_is_refused_though_its_checksum_holds() {
    type Edit = fn(&mut BakeParams);
    let cases: [(&str, Edit); 5] = [
        ("agent_radius_m", |params| params.agent_radius_m = f32::NAN),
        ("agent_radius_m", |params| params.agent_radius_m = -1.0),
        ("agent_height_m", |params| {
            params.agent_height_m = f32::INFINITY
        }),
        ("cell_size_m", |params| params.cell_size_m = -0.3),
        ("agent_max_slope_deg", |params| {
            params.agent_max_slope_deg = 90.0
        }),
    ];
    for (field, edit) in cases {
        let bytes = written_with(|file| edit(&mut file.params));
        let error = NavMeshFile::from_bytes(&bytes).unwrap_err().to_string();
        assert!(error.contains(field), "{field}: {error}");
    }
}

#[test]
fn a_mesh_file_with_vertices_or_bounds_beyond_the_world_is_refused() {
    let bytes = written_with(|file| file.tiles[0].vertices[0][0] = 3e38);
    let error = NavMeshFile::from_bytes(&bytes).unwrap_err().to_string();
    assert!(error.contains("3e38") || error.contains("300000000000000000000000000000000000000"));
    let bytes = written_with(|file| file.tiles[0].header.bounds_min[1] = f32::NAN);
    let error = NavMeshFile::from_bytes(&bytes).unwrap_err().to_string();
    assert!(error.contains("NaN"), "{error}");
    let bytes = written_with(|file| {
        let header = &mut file.tiles[0].header;
        header.bounds_min[0] = header.bounds_max[0] + 1.0;
    });
    let error = NavMeshFile::from_bytes(&bytes).unwrap_err().to_string();
    assert!(error.contains("above the maximum"), "{error}");
}

#[test]
fn a_bake_setting_whose_cell_count_would_overflow_is_refused() {
    // 607,400,100 m at 0.2 m cells once wrapped a squared length negative and gave 1,314
    // polygons instead of 34.
    let config = BakeConfig {
        edge_max_length_m: 607_400_100.0,
        ..BakeConfig::preset(Preset::Recast)
    };
    assert!(matches!(
        config.validate(),
        Err(BakeConfigError::OutOfRange {
            field: "edge_max_length_m",
            ..
        })
    ));
    let config = BakeConfig {
        region_min_area_m2: 1e12,
        ..BakeConfig::preset(Preset::Recast)
    };
    assert!(matches!(
        config.validate(),
        Err(BakeConfigError::OutOfRange {
            field: "region_min_area_m2",
            ..
        })
    ));
}

#[test]
fn a_level_at_the_edge_of_the_world_bakes_to_a_mesh_that_loads() {
    // Tiles reach past their level by padding and grid alignment: a level whose floor
    // ends at the coordinate limit once baked to tiles whose bounds (100,027 m) the mesh
    // file's own check refused (found by the fuzzer's `obj` target).
    use waymark::bake::bake;
    use waymark::scene::{InstanceDesc, Scene, TriMesh};
    let mut scene = Scene::new();
    let floor = scene.add_mesh(TriMesh::axis_box(
        "floor",
        Vec3::new(COORDINATE_MAX_M - 20.0, -0.2, 0.0),
        Vec3::new(COORDINATE_MAX_M, 0.0, 20.0),
    ));
    scene
        .add_instance(InstanceDesc::new("floor", floor))
        .unwrap();
    let config = BakeConfig {
        cell_size_m: 0.5,
        cell_height_m: 0.2,
        tile_size_cells: Some(64),
        ..BakeConfig::preset(Preset::Guard)
    };
    let baked = bake(&scene.world_triangles().unwrap(), &config).unwrap();
    let bytes = baked.to_file().to_bytes();
    let file = NavMeshFile::from_bytes(&bytes).unwrap();
    let mesh = NavMesh::from_file(file).unwrap();
    assert!(mesh.snapshot().walkable_area_m2() > 100.0);
}

#[test]
fn an_obj_declaring_more_triangles_than_the_limit_is_refused_before_parsing() {
    use waymark::geom::limits::TRIANGLES_MAX;
    use waymark::scene::obj::{ObjError, ObjOptions, parse_obj};
    // One face of TRIANGLES_MAX + 3 corners fans into one triangle past the limit; the
    // refusal names the count, not a bad index (the file has no vertices: parsed, it fails).
    let mut text = String::with_capacity(2 * TRIANGLES_MAX + 16);
    text.push('f');
    for _ in 0..TRIANGLES_MAX + 3 {
        text.push_str(" 1");
    }
    let error = parse_obj(text.as_bytes(), "fan.obj", &ObjOptions::default()).unwrap_err();
    assert!(
        matches!(error, ObjError::TooLarge { what: "triangles", count, .. }
            if count == TRIANGLES_MAX as u64 + 1),
        "{error}"
    );
    assert!(error.to_string().contains("TRIANGLES_MAX"), "{error}");
}

#[test]
fn an_obj_declaring_more_vertices_than_the_limit_is_refused_before_parsing() {
    use waymark::geom::limits::OBJ_VERTICES_MAX;
    use waymark::scene::obj::{ObjError, ObjOptions, parse_obj};
    let text = "v\n".repeat(OBJ_VERTICES_MAX + 1);
    let error = parse_obj(text.as_bytes(), "cloud.obj", &ObjOptions::default()).unwrap_err();
    assert!(
        matches!(error, ObjError::TooLarge { what: "vertices", count, .. }
            if count == OBJ_VERTICES_MAX as u64 + 1),
        "{error}"
    );
    assert!(error.to_string().contains("OBJ_VERTICES_MAX"), "{error}");
}

#[test]
fn an_obj_stream_longer_than_the_input_limit_is_read_to_it_and_refused() {
    use std::io::Read;
    use waymark::geom::limits::INPUT_FILE_BYTES_MAX;
    use waymark::scene::obj::{ObjError, ObjOptions, parse_obj};
    // An endless stream of spaces: read to one byte past the limit, then refused.
    let endless = std::io::BufReader::new(std::io::repeat(b' ').take(u64::MAX));
    let error = parse_obj(endless, "stream.obj", &ObjOptions::default()).unwrap_err();
    assert!(
        matches!(error, ObjError::TooLarge { what: "bytes", count, limit, .. }
            if count == INPUT_FILE_BYTES_MAX + 1 && limit == INPUT_FILE_BYTES_MAX),
        "{error}"
    );
}

#[test]
fn instances_that_multiply_a_mesh_past_the_triangle_limit_are_refused_at_the_one_that_passes() {
    use waymark::geom::limits::TRIANGLES_MAX;
    use waymark::scene::{GeometryError, InstanceDesc, Scene, TriMesh};
    // A mesh of half the limit in zero-area triangles (dropped, so counting costs no
    // memory): two instances reach the limit exactly, the third passes it.
    let mut scene = Scene::new();
    let positions = vec![Vec3::ZERO; 3];
    let mesh = scene.add_mesh(TriMesh::new(
        "half",
        positions,
        vec![[0, 1, 2]; TRIANGLES_MAX / 2],
    ));
    for name in ["first", "second", "third"] {
        scene.add_instance(InstanceDesc::new(name, mesh)).unwrap();
    }
    let error = scene.world_triangles().unwrap_err();
    assert!(
        matches!(&error, GeometryError::TooManyTriangles { instance, triangles, limit }
            if instance == "third" && *triangles == TRIANGLES_MAX / 2 * 3 && *limit == TRIANGLES_MAX),
        "{error}"
    );
}

#[test]
fn a_mesh_takes_links_up_to_the_limit_and_refuses_the_next_by_count() {
    use waymark::mesh::{LINKS_MAX, LinkDesc, LinkKind, NavMeshError};
    let mut mesh = floor_mesh();
    let jump = LinkDesc {
        kind: LinkKind::Jump,
        start: Vec3::new(1.0, 0.0, 1.0),
        end: Vec3::new(9.0, 0.0, 9.0),
        bidirectional: false,
        radius_m: 0.5,
        open: true,
    };
    let ids = mesh.add_links(&vec![jump; LINKS_MAX]).unwrap();
    assert_eq!(ids.len(), LINKS_MAX);
    let error = mesh.add_link(jump).unwrap_err();
    assert!(
        matches!(error, NavMeshError::TooManyLinks { links, adding: 1 } if links == LINKS_MAX),
        "{error}"
    );
    assert!(error.to_string().contains("LINKS_MAX"), "{error}");
    // A link past the world or wider than a body is refused by value.
    for bad in [
        LinkDesc {
            start: Vec3::new(2e5, 0.0, 1.0),
            ..jump
        },
        LinkDesc {
            radius_m: 1e9,
            ..jump
        },
    ] {
        let error = floor_mesh().add_link(bad).unwrap_err();
        assert!(matches!(error, NavMeshError::BadLink(_)), "{error}");
    }
}

#[test]
fn a_solo_bake_longer_than_its_vertex_coordinates_reach_is_refused_not_emptied() {
    // A 20 m x 40 km strip at half-metre cells is 80,000 cells long: a solo bake once gave
    // an empty mesh (its vertices wrapped their 16-bit cell coordinates); refused now,
    // naming the side and the limit.
    use waymark::bake::{BakeError, bake, config::GRID_SIDE_MAX};
    use waymark::scene::{InstanceDesc, Scene, TriMesh};
    let mut scene = Scene::new();
    let strip = scene.add_mesh(TriMesh::axis_box(
        "strip",
        Vec3::new(0.0, -0.2, 0.0),
        Vec3::new(40_000.0, 0.0, 20.0),
    ));
    scene
        .add_instance(InstanceDesc::new("strip", strip))
        .unwrap();
    let config = BakeConfig {
        cell_size_m: 0.5,
        cell_height_m: 0.2,
        ..BakeConfig::preset(Preset::Guard)
    };
    let error = bake(&scene.world_triangles().unwrap(), &config).unwrap_err();
    assert!(
        matches!(error, BakeError::GridSideTooLong { axis: 'x', cells, limit }
            if cells == 80_000 && limit == GRID_SIDE_MAX),
        "{error}"
    );
    assert!(error.to_string().contains("GRID_SIDE_MAX"), "{error}");
}

#[test]
fn a_tile_with_more_vertices_than_its_indices_hold_is_refused_not_cut_short() {
    // 129 x 129 separate two-metre platforms need 66,564 polygon vertices in one solo
    // tile, past the 16-bit indices' 65,534: the bake once dropped every contour after the
    // limit without a word; refused now, naming the tile, the count and the limit.
    use waymark::bake::polymesh::MESH_VERTICES_MAX;
    use waymark::bake::{BakeError, bake};
    use waymark::scene::{InstanceDesc, Scene, TriMesh};
    const SIDE: usize = 129;
    let mut positions = Vec::with_capacity(SIDE * SIDE * 4);
    let mut triangles = Vec::with_capacity(SIDE * SIDE * 2);
    for row in 0..SIDE {
        for column in 0..SIDE {
            // Two metres wide: the ledge filter drops each platform's rim cells.
            let (x, z) = (column as f32 * 3.0, row as f32 * 3.0);
            let first = positions.len() as u32;
            positions.extend([
                Vec3::new(x, 0.0, z),
                Vec3::new(x + 2.0, 0.0, z),
                Vec3::new(x + 2.0, 0.0, z + 2.0),
                Vec3::new(x, 0.0, z + 2.0),
            ]);
            triangles.push([first, first + 2, first + 1]);
            triangles.push([first, first + 3, first + 2]);
        }
    }
    let mut scene = Scene::new();
    let platforms = scene.add_mesh(TriMesh::new("platforms", positions, triangles));
    scene
        .add_instance(InstanceDesc::new("platforms", platforms))
        .unwrap();
    let config = BakeConfig {
        cell_size_m: 0.5,
        cell_height_m: 0.2,
        agent_radius_m: 0.0,
        region_min_area_m2: 0.0,
        region_merge_area_m2: 0.0,
        ..BakeConfig::preset(Preset::Guard)
    };
    let error = bake(&scene.world_triangles().unwrap(), &config).unwrap_err();
    assert!(
        matches!(error, BakeError::TileTooDetailed { tile_x: 0, tile_z: 0, what: "vertices", count, limit }
            if count > limit && limit == MESH_VERTICES_MAX),
        "{error}"
    );
    // Tiled, each tile holds a few dozen platforms and the bake keeps every one (a
    // platform a tile border crosses is two polygons).
    let tiled = BakeConfig {
        tile_size_cells: Some(64),
        ..config
    };
    let baked = bake(&scene.world_triangles().unwrap(), &tiled).unwrap();
    assert!(baked.stats.polygons >= SIDE * SIDE, "{:?}", baked.stats);
}
