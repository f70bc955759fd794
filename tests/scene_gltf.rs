//! glTF input: a level written as `.glb` (nested nodes with a parent scale, a mirrored
//! instance) bakes to what its OBJ bakes to; tags come from node names and `extras`; a
//! malformed file is refused naming the element.

use std::path::Path;

use glam::Vec3;
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::ids::AreaId;
use waymark::scene::WorldTriangles;
use waymark::scene::gltf::{GltfError, GltfOptions, parse_gltf};
use waymark::scene::obj::{ObjOptions, load_obj};

/// A GLB file: the JSON chunk, then the binary chunk, each padded to four bytes.
fn glb(json: &str, bin: &[u8]) -> Vec<u8> {
    let mut json = json.as_bytes().to_vec();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let mut bin = bin.to_vec();
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&0x4E4F_534Au32.to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(&0x004E_4942u32.to_le_bytes());
    out.extend_from_slice(&bin);
    out
}

/// Meshes for a GLB: each a list of corner positions (three per triangle), written as a
/// position accessor and an index accessor over one binary buffer.
struct GlbMeshes {
    bin: Vec<u8>,
    views: Vec<String>,
    accessors: Vec<String>,
    meshes: Vec<String>,
}

impl GlbMeshes {
    fn new() -> GlbMeshes {
        GlbMeshes {
            bin: Vec::new(),
            views: Vec::new(),
            accessors: Vec::new(),
            meshes: Vec::new(),
        }
    }

    fn view(&mut self, bytes: &[u8]) -> usize {
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        self.views.push(format!(
            r#"{{"buffer":0,"byteOffset":{offset},"byteLength":{}}}"#,
            bytes.len()
        ));
        self.views.len() - 1
    }

    /// Adds a mesh of `corners` (three per triangle), indexed; its index.
    fn add(&mut self, corners: &[Vec3]) -> usize {
        let (mut low, mut high) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
        let mut positions = Vec::with_capacity(corners.len() * 12);
        for corner in corners {
            low = low.min(*corner);
            high = high.max(*corner);
            for value in corner.to_array() {
                positions.extend_from_slice(&value.to_le_bytes());
            }
        }
        let indices: Vec<u8> = (0..corners.len() as u32)
            .flat_map(u32::to_le_bytes)
            .collect();
        let position_view = self.view(&positions);
        self.accessors.push(format!(
            r#"{{"bufferView":{position_view},"componentType":5126,"count":{},"type":"VEC3","min":[{},{},{}],"max":[{},{},{}]}}"#,
            corners.len(),
            low.x,
            low.y,
            low.z,
            high.x,
            high.y,
            high.z
        ));
        let index_view = self.view(&indices);
        self.accessors.push(format!(
            r#"{{"bufferView":{index_view},"componentType":5125,"count":{},"type":"SCALAR"}}"#,
            corners.len()
        ));
        let (position, index) = (self.accessors.len() - 2, self.accessors.len() - 1);
        self.meshes.push(format!(
            r#"{{"primitives":[{{"attributes":{{"POSITION":{position}}},"indices":{index}}}]}}"#
        ));
        self.meshes.len() - 1
    }

    /// The whole file, with these nodes (JSON objects) and these root nodes.
    fn file(&self, nodes: &[String], roots: &[usize]) -> Vec<u8> {
        let roots: Vec<String> = roots.iter().map(usize::to_string).collect();
        let json = format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[{}]}}],"nodes":[{}],"meshes":[{}],"accessors":[{}],"bufferViews":[{}],"buffers":[{{"byteLength":{}}}]}}"#,
            roots.join(","),
            nodes.join(","),
            self.meshes.join(","),
            self.accessors.join(","),
            self.views.join(","),
            self.bin.len()
        );
        glb(&json, &self.bin)
    }
}

fn dungeon() -> WorldTriangles {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/levels/dungeon.obj");
    load_obj(&path, &ObjOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap()
}

/// The dungeon as a GLB: its first half of triangles authored at half size under a node
/// that scales it back up by two (itself under a node that only moves it, moved back by its
/// child); the second half authored mirrored in x (and wound to face up where it was
/// authored), placed by a mirroring node, so the importer must flip the winding back.
fn dungeon_glb(world: &WorldTriangles) -> Vec<u8> {
    let half = world.corners.len() / 2;
    let mut meshes = GlbMeshes::new();
    let halved: Vec<Vec3> = world.corners[..half]
        .iter()
        .flat_map(|triangle| triangle.map(|corner| corner * 0.5))
        .collect();
    let scaled = meshes.add(&halved);
    let mirrored: Vec<Vec3> = world.corners[half..]
        .iter()
        .flat_map(|&[a, b, c]| [a, c, b].map(|corner| corner * Vec3::new(-1.0, 1.0, 1.0)))
        .collect();
    let mirror = meshes.add(&mirrored);
    let nodes = [
        r#"{"name":"level","translation":[0,0,5],"children":[1,2]}"#.to_string(),
        r#"{"name":"scaled","translation":[0,0,-5],"scale":[2,2,2],"children":[3]}"#.to_string(),
        format!(r#"{{"name":"mirrored","translation":[0,0,-5],"scale":[-1,1,1],"mesh":{mirror}}}"#),
        format!(r#"{{"name":"halves","mesh":{scaled}}}"#),
    ];
    meshes.file(&nodes, &[0])
}

#[test]
fn the_dungeon_as_glb_with_a_scaled_parent_and_a_mirrored_instance_bakes_as_its_obj() {
    let world = dungeon();
    let bytes = dungeon_glb(&world);
    let scene = parse_gltf(&bytes, None, "dungeon.glb", &GltfOptions::default()).unwrap();
    let from_glb = scene.world_triangles().unwrap();
    assert_eq!(from_glb.len(), world.len(), "every triangle kept");
    assert_eq!(from_glb.degenerate_dropped, world.degenerate_dropped);

    let config = BakeConfig::preset(Preset::Recast);
    let obj_bake = bake(&world, &config).unwrap();
    let glb_bake = bake(&from_glb, &config).unwrap();
    assert_eq!(glb_bake.stats.polygons, obj_bake.stats.polygons);
    let area_ratio = glb_bake.stats.walkable_area_m2 / obj_bake.stats.walkable_area_m2;
    assert!(
        (area_ratio - 1.0).abs() < 1e-3,
        "area {} m² against the OBJ's {} m²",
        glb_bake.stats.walkable_area_m2,
        obj_bake.stats.walkable_area_m2
    );
}

/// A one-metre quad (two triangles, facing up) as a GLB with one node of this JSON.
fn quad_file(node: &str) -> Vec<u8> {
    let mut meshes = GlbMeshes::new();
    let (a, b, c, d) = (
        Vec3::ZERO,
        Vec3::new(0.0, 0.0, 1.0),
        Vec3::new(1.0, 0.0, 1.0),
        Vec3::new(1.0, 0.0, 0.0),
    );
    meshes.add(&[a, b, c, a, c, d]);
    meshes.file(&[node.to_string()], &[0])
}

#[test]
fn tags_come_from_node_names_and_extras() {
    let named = quad_file(r#"{"name":"pond|area:water support:ferry","mesh":0}"#);
    let scene = parse_gltf(&named, None, "named.glb", &GltfOptions::default()).unwrap();
    let world = scene.world_triangles().unwrap();
    assert_eq!(world.areas, vec![AreaId::parse("water").unwrap(); 2]);
    let instance = &scene.instances()[0];
    assert_eq!(
        scene.support_name(instance.desc.support.unwrap()),
        Some("ferry")
    );
    assert_eq!(instance.desc.name, "pond#0");

    let extras =
        quad_file(r#"{"name":"deck","mesh":0,"extras":{"area":"water","support":"lift"}}"#);
    let scene = parse_gltf(&extras, None, "extras.glb", &GltfOptions::default()).unwrap();
    let world = scene.world_triangles().unwrap();
    assert_eq!(world.areas, vec![AreaId::parse("water").unwrap(); 2]);
    let instance = &scene.instances()[0];
    assert_eq!(
        scene.support_name(instance.desc.support.unwrap()),
        Some("lift")
    );

    let unknown = quad_file(r#"{"name":"deck","mesh":0,"extras":{"area":"lava"}}"#);
    let error = parse_gltf(&unknown, None, "unknown.glb", &GltfOptions::default()).unwrap_err();
    assert!(
        matches!(&error, GltfError::BadNode { node: 0, reason, .. } if reason.contains("lava")),
        "{error}"
    );
}

/// A GLB of one triangle primitive over `bin`, its accessors, views and primitive given.
fn raw_file(
    accessors: &str,
    views: &str,
    primitive: &str,
    bin: &[u8],
    buffer_length: usize,
) -> Vec<u8> {
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],"meshes":[{{"primitives":[{primitive}]}}],"accessors":[{accessors}],"bufferViews":[{views}],"buffers":[{{"byteLength":{buffer_length}}}]}}"#
    );
    glb(&json, bin)
}

fn triangle_bytes() -> Vec<u8> {
    [0.0f32, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
        .iter()
        .flat_map(|value| value.to_le_bytes())
        .collect()
}

const POSITIONS: &str =
    r#"{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,0,1]}"#;

/// A triangle whose indices are 0, 1 and 7: the third names a vertex it does not have.
fn index_out_of_range_file() -> Vec<u8> {
    let mut bin = triangle_bytes();
    for index in [0u32, 1, 7] {
        bin.extend_from_slice(&index.to_le_bytes());
    }
    let views = r#"{"buffer":0,"byteOffset":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":12}"#;
    let indices = r#"{"bufferView":1,"componentType":5125,"count":3,"type":"SCALAR"}"#;
    raw_file(
        &format!("{POSITIONS},{indices}"),
        views,
        r#"{"attributes":{"POSITION":0},"indices":1}"#,
        &bin,
        48,
    )
}

#[test]
fn malformed_files_are_refused_naming_the_element() {
    let parse = |bytes: &[u8]| parse_gltf(bytes, None, "bad.glb", &GltfOptions::default());
    let out_of_range = index_out_of_range_file();
    let error = parse(&out_of_range).unwrap_err();
    assert!(
        matches!(
            error,
            GltfError::IndexOutOfRange {
                mesh: 0,
                primitive: 0,
                index: 7,
                vertices: 3,
                ..
            }
        ),
        "{error}"
    );

    // Positions that claim four vertices in a view of three.
    let long = r#"{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,0,1]}"#;
    let bad_accessor = raw_file(
        long,
        r#"{"buffer":0,"byteOffset":0,"byteLength":36}"#,
        r#"{"attributes":{"POSITION":0}}"#,
        &triangle_bytes(),
        36,
    );
    let error = parse(&bad_accessor).unwrap_err();
    assert!(
        matches!(&error, GltfError::BadAccessor { accessor: 0, reason, .. } if reason.contains("past its view")),
        "{error}"
    );

    // Lines are not walkable input.
    let lines = raw_file(
        POSITIONS,
        r#"{"buffer":0,"byteOffset":0,"byteLength":36}"#,
        r#"{"attributes":{"POSITION":0},"mode":1}"#,
        &triangle_bytes(),
        36,
    );
    let error = parse(&lines).unwrap_err();
    assert!(
        matches!(&error, GltfError::Unsupported { mesh: 0, primitive: 0, what, .. } if what.contains("Lines")),
        "{error}"
    );

    // A buffer longer than the binary chunk holds.
    let short = raw_file(
        POSITIONS,
        r#"{"buffer":0,"byteOffset":0,"byteLength":36}"#,
        r#"{"attributes":{"POSITION":0}}"#,
        &triangle_bytes(),
        4096,
    );
    let error = parse(&short).unwrap_err();
    assert!(
        matches!(error, GltfError::MissingBuffer { buffer: 0, .. }),
        "{error}"
    );

    // A `.gltf` naming a buffer file, read with no folder to look in, and one that is not there.
    let external = format!(
        r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":36,"uri":"level.bin"}}],"bufferViews":[{{"buffer":0,"byteLength":36}}],"accessors":[{POSITIONS}],"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}}}}]}}],"nodes":[{{"mesh":0}}],"scenes":[{{"nodes":[0]}}]}}"#
    );
    let error = parse(external.as_bytes()).unwrap_err();
    assert!(
        matches!(error, GltfError::MissingBuffer { buffer: 0, .. }),
        "{error}"
    );
    let folder = std::env::temp_dir();
    let error = parse_gltf(
        external.as_bytes(),
        Some(&folder),
        "level.gltf",
        &GltfOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&error, GltfError::MissingBuffer { buffer: 0, reason, .. } if reason.contains("level.bin")),
        "{error}"
    );

    // Not glTF at all, and a reference to a mesh that does not exist.
    assert!(matches!(
        parse(b"solid cube"),
        Err(GltfError::Malformed { .. })
    ));
    let dangling = br#"{"asset":{"version":"2.0"},"nodes":[{"mesh":3}],"scenes":[{"nodes":[0]}]}"#;
    assert!(matches!(parse(dangling), Err(GltfError::Malformed { .. })));
}

#[test]
fn a_gltf_with_its_buffer_inline_as_base64_reads_the_same_triangle() {
    let encoded = {
        // Standard base64 of the triangle's 36 bytes, written here by hand's rule.
        const DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let bytes = triangle_bytes();
        let mut text = String::new();
        for group in bytes.chunks(3) {
            let bits = group
                .iter()
                .fold(0u32, |bits, &byte| bits << 8 | u32::from(byte))
                << (8 * (3 - group.len()));
            for place in 0..=group.len() {
                text.push(DIGITS[(bits >> (18 - 6 * place) & 63) as usize] as char);
            }
        }
        text
    };
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":36,"uri":"data:application/octet-stream;base64,{encoded}"}}],"bufferViews":[{{"buffer":0,"byteLength":36}}],"accessors":[{POSITIONS}],"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}}}}]}}],"nodes":[{{"mesh":0}}],"scenes":[{{"nodes":[0]}}]}}"#
    );
    let scene = parse_gltf(
        json.as_bytes(),
        None,
        "inline.gltf",
        &GltfOptions::default(),
    )
    .unwrap();
    let world = scene.world_triangles().unwrap();
    assert_eq!(world.len(), 1);
    assert_eq!(world.corners[0][2], Vec3::new(1.0, 0.0, 0.0));
}

#[cfg(feature = "cli")]
#[test]
fn every_level_command_takes_a_glb_and_names_a_bad_one_in_one_line() {
    use std::process::Command;
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_waymark"))
            .args(args)
            .output()
            .expect("the waymark binary runs")
    };
    let folder = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let glb_path = folder.join("dungeon_levels.glb");
    std::fs::write(&glb_path, dungeon_glb(&dungeon())).unwrap();
    let obj_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/levels/dungeon.obj");
    // The bake's report: its polygon count and walkable area, as the report writes them.
    let polygons = |level: &Path| {
        let output = run(&["bake", &level.display().to_string(), "--json"]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        let area = report["walkable_area_m2"].as_f64().expect("an area");
        (
            report["polygons"].as_u64().expect("a count"),
            (area * 10.0).round(),
        )
    };
    assert_eq!(polygons(&glb_path), polygons(&obj_path));

    let bad_path = folder.join("bad_index.glb");
    let bytes = index_out_of_range_file();
    std::fs::write(&bad_path, bytes).unwrap();
    let output = run(&["bake", &bad_path.display().to_string()]);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert_eq!(error.trim().lines().count(), 1, "{error}");
    assert!(error.contains("mesh 0 primitive 0: index 7"), "{error}");
}

#[test]
fn written_glb_reads_back_to_the_same_triangles_and_areas() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/levels/nav_test.obj");
    let mut world = load_obj(&path, &ObjOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap();
    // Some triangles tagged water, as an OBJ group or a glTF node's extras would.
    let water = AreaId::parse("water").unwrap();
    for area in world.areas.iter_mut().step_by(7) {
        *area = water;
    }
    let bytes = waymark::scene::gltf::write_glb(&world);
    let back = parse_gltf(&bytes, None, "nav_test.glb", &GltfOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap();
    let key = |world: &WorldTriangles| {
        let mut triangles: Vec<(u8, [[u32; 3]; 3])> = world
            .corners
            .iter()
            .zip(&world.areas)
            .map(|(corners, area)| {
                (
                    area.0,
                    corners.map(|corner| corner.to_array().map(f32::to_bits)),
                )
            })
            .collect();
        triangles.sort_unstable();
        triangles
    };
    assert_eq!(back.len(), world.len());
    assert_eq!(key(&back), key(&world));
}

#[test]
fn a_primitive_naming_a_positions_accessor_that_does_not_exist_is_refused_not_a_panic() {
    // Found by the gltf fuzz target: the crate's own validation read the accessor first.
    let json = br#"{"asset":{"version":"2.0"},"meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],"nodes":[{"mesh":0}],"scenes":[{"nodes":[0]}]}"#;
    let error = parse_gltf(json, None, "dangling.gltf", &GltfOptions::default()).unwrap_err();
    assert!(
        matches!(&error, GltfError::Malformed { reason, .. } if reason.contains("mesh 0 primitive 0: accessor 0 of 0")),
        "{error}"
    );
}
