//! glTF 2.0 import (`.gltf` with its buffers, or `.glb`) through the `gltf` crate.
//!
//! Stage: build time, scene input, beside [`obj`](super::obj). Input: the file's bytes (and,
//! for `.gltf`, the buffers it names beside it or inline as base64 `data:` URIs). Output: a
//! [`Scene`] whose nodes are the glTF nodes with their local transforms (so the world-space
//! rules of spec 002 apply as for any scene: parent scales, non-uniform scale, mirroring
//! flips the winding, degenerate triangles dropped and counted), one mesh per glTF mesh
//! (its triangle primitives, indexed or not, together) and one instance per node that has
//! a mesh.
//!
//! Tags work as in OBJ files: a node's name may carry `area:<name or 0..63>` and
//! `support:<name>` ([`obj`](super::obj)), and its `extras` may give them as fields,
//! `{"area": "water", "support": "ferry"}`. The default scene is read (the first if none is
//! marked). Materials, normals, cameras, skins and animations are not navigation input and
//! are ignored.
//!
//! Invariants: every accessor read is checked against its buffer before it is read, every
//! index against its vertex count, and every count against the input limits of
//! [`geom::limits`](crate::geom::limits); a file that fails one is refused with a
//! [`GltfError`] naming the element (mesh, primitive, accessor, buffer or node), never by a
//! panic.

use std::path::Path;

use glam::{Affine3A, Mat4, Vec3};

use super::graph::{InstanceDesc, NodeId, Scene};
use super::mesh::TriMesh;
use super::obj::parse_tags;
use super::world::WorldTriangles;
use crate::ids::AreaId;

/// How to read a glTF file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GltfOptions {
    /// Metres per glTF unit (glTF's own unit is the metre). Limit: finite, > 0 (checked
    /// when the scene becomes world triangles).
    pub unit_scale_m: f32,
}

impl Default for GltfOptions {
    fn default() -> Self {
        GltfOptions { unit_scale_m: 1.0 }
    }
}

/// A glTF file that cannot become a scene.
#[derive(Debug, thiserror::Error)]
pub enum GltfError {
    /// The file, or a buffer file it names, could not be read.
    #[error("cannot read '{path}': {source}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The `gltf` crate refused the document (JSON, GLB framing, or a reference to an
    /// element that does not exist).
    #[error("malformed glTF '{path}': {reason}")]
    Malformed {
        /// The file.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// A buffer's data is not there: no GLB binary chunk, a missing file, a bad `data:`
    /// URI, or fewer bytes than the buffer declares.
    #[error("glTF '{path}': buffer {buffer}: {reason}")]
    MissingBuffer {
        /// The file.
        path: String,
        /// The buffer's index.
        buffer: usize,
        /// What was wrong.
        reason: String,
    },
    /// An accessor that cannot be read as what it is used for (positions must be three
    /// `f32`s, indices unsigned integers), or that reaches past its buffer view or buffer.
    #[error("glTF '{path}': mesh {mesh} primitive {primitive}: accessor {accessor}: {reason}")]
    BadAccessor {
        /// The file.
        path: String,
        /// The mesh's index.
        mesh: usize,
        /// The primitive's index in the mesh.
        primitive: usize,
        /// The accessor's index.
        accessor: usize,
        /// What was wrong.
        reason: String,
    },
    /// A primitive's index names a vertex it does not have.
    #[error(
        "glTF '{path}': mesh {mesh} primitive {primitive}: index {index} out of range of its {vertices} vertices"
    )]
    IndexOutOfRange {
        /// The file.
        path: String,
        /// The mesh's index.
        mesh: usize,
        /// The primitive's index in the mesh.
        primitive: usize,
        /// The index.
        index: u32,
        /// The vertices the primitive has.
        vertices: usize,
    },
    /// A primitive that is not a list of triangles (points, lines, strips, fans), or one
    /// without positions.
    #[error("glTF '{path}': mesh {mesh} primitive {primitive}: unsupported: {what}")]
    Unsupported {
        /// The file.
        path: String,
        /// The mesh's index.
        mesh: usize,
        /// The primitive's index in the mesh.
        primitive: usize,
        /// What it is.
        what: String,
    },
    /// A node's tags (in its name or its `extras`) could not be understood, or its nodes
    /// nest deeper than the scene allows or in a cycle.
    #[error("glTF '{path}': node {node} ('{name}'): {reason}")]
    BadNode {
        /// The file.
        path: String,
        /// The node's index.
        node: usize,
        /// Its name as written.
        name: String,
        /// What was wrong.
        reason: String,
    },
    /// More vertices or triangles than a level may have.
    #[error("glTF '{path}': {count} {what}, over the limit of {limit} ({limit_name})")]
    TooLarge {
        /// The file.
        path: String,
        /// What was counted: `vertices` or `triangles`.
        what: &'static str,
        /// How many the file holds.
        count: u64,
        /// The limit.
        limit: u64,
        /// The limit's name in [`crate::geom::limits`].
        limit_name: &'static str,
    },
}

/// Reads a `.gltf` or `.glb` file into a scene; a `.gltf`'s buffer files are read from
/// beside it.
pub fn load_gltf(path: &Path, options: &GltfOptions) -> Result<Scene, GltfError> {
    let display = path.display().to_string();
    let bytes = crate::geom::limits::read_file(path).map_err(|source| GltfError::Io {
        path: display.clone(),
        source,
    })?;
    parse_gltf(&bytes, path.parent(), &display, options)
}

/// Reads glTF or GLB bytes into a scene; `source_name` names them in errors, and buffer
/// files a `.gltf` names are looked for in `folder` (`None`: only GLB and `data:` buffers).
pub fn parse_gltf(
    bytes: &[u8],
    folder: Option<&Path>,
    source_name: &str,
    options: &GltfOptions,
) -> Result<Scene, GltfError> {
    let malformed = |reason: String| GltfError::Malformed {
        path: source_name.to_owned(),
        reason,
    };
    let gltf::Gltf { document, blob } = gltf::Gltf::from_slice_without_validation(bytes)
        .map_err(|error| malformed(error.to_string()))?;
    // The crate's own validation reads a primitive's positions accessor before it checks
    // that the accessor exists (and panics when it does not): those references first.
    let json = document.into_json();
    let accessors = json.accessors.len();
    for (mesh, entry) in json.meshes.iter().enumerate() {
        for (primitive, entry) in entry.primitives.iter().enumerate() {
            if let Some(index) = entry
                .attributes
                .values()
                .find(|index| index.value() >= accessors)
            {
                return Err(malformed(format!(
                    "mesh {mesh} primitive {primitive}: accessor {} of {accessors}",
                    index.value()
                )));
            }
        }
    }
    let document = gltf::Document::from_json(json).map_err(|error| malformed(error.to_string()))?;
    let buffers = buffer_data(&document, blob, folder, source_name)?;
    let mut scene = Scene::new();
    let mut meshes = Vec::with_capacity(document.meshes().len());
    let (mut vertices_total, mut triangles_total) = (0u64, 0u64);
    for mesh in document.meshes() {
        let (positions, triangles) = read_mesh(&mesh, &buffers, source_name)?;
        vertices_total += positions.len() as u64;
        triangles_total += triangles.len() as u64;
        check_totals(vertices_total, triangles_total, source_name)?;
        let name = mesh
            .name()
            .map_or_else(|| format!("mesh{}", mesh.index()), str::to_owned);
        let tri_mesh =
            TriMesh::new(name, positions, triangles).with_unit_scale(options.unit_scale_m);
        meshes.push(tri_mesh);
    }
    // Meshes are added where a node uses them, each once, with the first user's area tag
    // (a mesh placed under two different area tags is added once per tag).
    let mut added: Vec<Vec<(Option<AreaId>, super::graph::MeshId)>> =
        vec![Vec::new(); meshes.len()];
    let Some(root) = document
        .default_scene()
        .or_else(|| document.scenes().next())
    else {
        return Ok(scene);
    };
    // Depth-first over the node tree, with each node's scene node as parent of its children.
    let mut stack: Vec<(gltf::Node, Option<NodeId>, usize)> =
        root.nodes().map(|node| (node, None, 1)).collect();
    stack.reverse();
    let mut visited = vec![false; document.nodes().len()];
    while let Some((node, parent, depth)) = stack.pop() {
        let written_name = node.name().unwrap_or("");
        let bad_node = |reason: String| GltfError::BadNode {
            path: source_name.to_owned(),
            node: node.index(),
            name: written_name.to_owned(),
            reason,
        };
        if std::mem::replace(&mut visited[node.index()], true) {
            return Err(bad_node(
                "placed twice in the scene's tree (a cycle or a shared child)".into(),
            ));
        }
        if depth > super::graph::NODE_DEPTH_MAX {
            return Err(bad_node(format!(
                "nested deeper than {} nodes",
                super::graph::NODE_DEPTH_MAX
            )));
        }
        let (area, support, plain_name) = node_tags(&node).map_err(bad_node)?;
        let name = if plain_name.is_empty() {
            format!("node{}", node.index())
        } else {
            format!("{plain_name}#{}", node.index())
        };
        let local = Affine3A::from_mat4(Mat4::from_cols_array_2d(&node.transform().matrix()));
        let scene_node = scene
            .add_node(name.clone(), parent, local)
            .map_err(|error| bad_node(error.to_string()))?;
        if let Some(mesh) = node.mesh() {
            let uses = &mut added[mesh.index()];
            let mesh_id = match uses.iter().find(|(tagged, _)| *tagged == area) {
                Some(&(_, id)) => id,
                None => {
                    let mut tri_mesh = meshes[mesh.index()].clone();
                    if let Some(area) = area {
                        tri_mesh = tri_mesh.with_area(area);
                    }
                    let id = scene.add_mesh(tri_mesh);
                    uses.push((area, id));
                    id
                }
            };
            let mut desc = InstanceDesc::new(name, mesh_id).under(scene_node);
            if let Some(support) = support {
                desc = desc.on_support(scene.support(&support));
            }
            scene
                .add_instance(desc)
                .map_err(|error| bad_node(error.to_string()))?;
        }
        for child in node.children().collect::<Vec<_>>().into_iter().rev() {
            stack.push((child, Some(scene_node), depth + 1));
        }
    }
    Ok(scene)
}

/// The bytes of every buffer, by index: the GLB binary chunk, a file beside the `.gltf`,
/// or a base64 `data:` URI; each at least as long as the buffer declares.
fn buffer_data(
    document: &gltf::Document,
    mut blob: Option<Vec<u8>>,
    folder: Option<&Path>,
    source_name: &str,
) -> Result<Vec<Vec<u8>>, GltfError> {
    let mut data = Vec::with_capacity(document.buffers().len());
    for buffer in document.buffers() {
        let missing = |reason: String| GltfError::MissingBuffer {
            path: source_name.to_owned(),
            buffer: buffer.index(),
            reason,
        };
        let bytes = match buffer.source() {
            gltf::buffer::Source::Bin => blob
                .take()
                .ok_or_else(|| missing("the GLB binary chunk is missing".into()))?,
            gltf::buffer::Source::Uri(uri) => {
                if let Some(encoded) = uri.strip_prefix("data:") {
                    let (_, payload) = encoded
                        .split_once(";base64,")
                        .ok_or_else(|| missing("a data: URI that is not base64".into()))?;
                    decode_base64(payload).ok_or_else(|| missing("bad base64 data".into()))?
                } else {
                    let folder = folder.ok_or_else(|| {
                        missing(format!("'{uri}' names a file, and no folder was given"))
                    })?;
                    let file = folder.join(uri);
                    crate::geom::limits::read_file(&file)
                        .map_err(|error| missing(format!("'{}': {error}", file.display())))?
                }
            }
        };
        if bytes.len() < buffer.length() {
            return Err(missing(format!(
                "{} bytes, the buffer declares {}",
                bytes.len(),
                buffer.length()
            )));
        }
        data.push(bytes);
    }
    Ok(data)
}

/// A mesh's triangle primitives as one vertex list and one triangle list.
fn read_mesh(
    mesh: &gltf::Mesh,
    buffers: &[Vec<u8>],
    source_name: &str,
) -> Result<(Vec<Vec3>, Vec<[u32; 3]>), GltfError> {
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    for primitive in mesh.primitives() {
        let unsupported = |what: String| GltfError::Unsupported {
            path: source_name.to_owned(),
            mesh: mesh.index(),
            primitive: primitive.index(),
            what,
        };
        if primitive.mode() != gltf::mesh::Mode::Triangles {
            return Err(unsupported(format!("{:?} primitives", primitive.mode())));
        }
        let Some(position_accessor) = primitive.get(&gltf::Semantic::Positions) else {
            return Err(unsupported("a primitive without positions".into()));
        };
        let bad_accessor = |accessor: &gltf::Accessor, reason: String| GltfError::BadAccessor {
            path: source_name.to_owned(),
            mesh: mesh.index(),
            primitive: primitive.index(),
            accessor: accessor.index(),
            reason,
        };
        check_accessor(
            &position_accessor,
            buffers,
            gltf::accessor::Dimensions::Vec3,
            &[gltf::accessor::DataType::F32],
        )
        .map_err(|reason| bad_accessor(&position_accessor, reason))?;
        let reader = primitive.reader(|buffer| buffers.get(buffer.index()).map(Vec::as_slice));
        let first = positions.len() as u32;
        let read = reader.read_positions().ok_or_else(|| {
            bad_accessor(&position_accessor, "positions could not be read".into())
        })?;
        positions.extend(read.map(Vec3::from_array));
        let vertices = positions.len() - first as usize;
        let indices: Vec<u32> = match primitive.indices() {
            Some(index_accessor) => {
                use gltf::accessor::DataType::{U8, U16, U32};
                check_accessor(
                    &index_accessor,
                    buffers,
                    gltf::accessor::Dimensions::Scalar,
                    &[U8, U16, U32],
                )
                .map_err(|reason| bad_accessor(&index_accessor, reason))?;
                reader
                    .read_indices()
                    .ok_or_else(|| {
                        bad_accessor(&index_accessor, "indices could not be read".into())
                    })?
                    .into_u32()
                    .collect()
            }
            None => (0..vertices as u32).collect(),
        };
        if indices.len() % 3 != 0 {
            return Err(unsupported(format!(
                "{} corners, not a whole number of triangles",
                indices.len()
            )));
        }
        if let Some(&index) = indices.iter().find(|&&index| index as usize >= vertices) {
            return Err(GltfError::IndexOutOfRange {
                path: source_name.to_owned(),
                mesh: mesh.index(),
                primitive: primitive.index(),
                index,
                vertices,
            });
        }
        triangles.extend(
            indices
                .chunks_exact(3)
                .map(|corners| [first + corners[0], first + corners[1], first + corners[2]]),
        );
    }
    Ok((positions, triangles))
}

/// Why `accessor` cannot be read as `dimensions` of one of `types` from `buffers`, if it
/// cannot: a sparse or view-less accessor, another shape, or bytes past its view or buffer.
fn check_accessor(
    accessor: &gltf::Accessor,
    buffers: &[Vec<u8>],
    dimensions: gltf::accessor::Dimensions,
    types: &[gltf::accessor::DataType],
) -> Result<(), String> {
    if accessor.sparse().is_some() {
        return Err("sparse accessors are not read".into());
    }
    if accessor.dimensions() != dimensions || !types.contains(&accessor.data_type()) {
        return Err(format!(
            "{:?} of {:?}, expected {dimensions:?} of one of {types:?}",
            accessor.dimensions(),
            accessor.data_type()
        ));
    }
    let Some(view) = accessor.view() else {
        return Err("no buffer view".into());
    };
    let element = accessor.size();
    let stride = view.stride().unwrap_or(element);
    if stride < element {
        return Err(format!(
            "stride {stride} below the element's {element} bytes"
        ));
    }
    let count = accessor.count();
    let reach = match count {
        0 => Some(0),
        _ => (count - 1)
            .checked_mul(stride)
            .and_then(|spread| spread.checked_add(element))
            .and_then(|span| span.checked_add(accessor.offset())),
    };
    match reach {
        Some(reach) if reach <= view.length() => {}
        _ => {
            return Err(format!(
                "{count} elements from offset {} reach past its view of {} bytes",
                accessor.offset(),
                view.length()
            ));
        }
    }
    let buffer = view.buffer().index();
    let available = buffers.get(buffer).map_or(0, Vec::len);
    match view.offset().checked_add(view.length()) {
        Some(end) if end <= available => Ok(()),
        _ => Err(format!(
            "its view ({} bytes from {}) reaches past buffer {buffer}'s {available} bytes",
            view.length(),
            view.offset()
        )),
    }
}

/// A node's area, support and plain name, from its name's tags and its `extras`.
fn node_tags(node: &gltf::Node) -> Result<(Option<AreaId>, Option<String>, String), String> {
    let tags = parse_tags(node.name().unwrap_or(""))?;
    let (mut area, mut support) = (tags.area, tags.support);
    if let Some(extras) = node.extras() {
        let value: gltf::json::Value = gltf::json::deserialize::from_str(extras.get())
            .map_err(|error| format!("extras: {error}"))?;
        if let Some(spelling) = value.get("area") {
            let spelling = match spelling {
                gltf::json::Value::String(text) => text.clone(),
                gltf::json::Value::Number(number) => number.to_string(),
                other => return Err(format!("extras: area {other} is not a name or a number")),
            };
            area = Some(
                AreaId::parse(&spelling)
                    .ok_or_else(|| format!("extras: unknown area '{spelling}'"))?,
            );
        }
        if let Some(name) = value.get("support") {
            match name.as_str() {
                Some(name) if !name.is_empty() => support = Some(name.to_owned()),
                _ => return Err(format!("extras: support {name} is not a name")),
            }
        }
    }
    Ok((area, support, tags.name))
}

/// The vertices and triangles read so far, within the input limits.
fn check_totals(vertices: u64, triangles: u64, source_name: &str) -> Result<(), GltfError> {
    use crate::geom::limits::{OBJ_VERTICES_MAX, TRIANGLES_MAX};
    let too_large = |what, count, limit: usize, limit_name| GltfError::TooLarge {
        path: source_name.to_owned(),
        what,
        count,
        limit: limit as u64,
        limit_name,
    };
    if vertices > OBJ_VERTICES_MAX as u64 {
        return Err(too_large(
            "vertices",
            vertices,
            OBJ_VERTICES_MAX,
            "OBJ_VERTICES_MAX",
        ));
    }
    if triangles > TRIANGLES_MAX as u64 {
        return Err(too_large(
            "triangles",
            triangles,
            TRIANGLES_MAX,
            "TRIANGLES_MAX",
        ));
    }
    Ok(())
}

/// Writes world triangles as a GLB file that [`parse_gltf`] reads back to the same
/// triangles and areas: one node and one mesh per area, the area in the node's `extras`
/// where it is not plain ground, each triangle as its own three vertices (metres).
pub fn write_glb(world: &WorldTriangles) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut areas: Vec<AreaId> = world.areas.clone();
    areas.sort_by_key(|area| area.0);
    areas.dedup();
    let (mut bin, mut views, mut accessors, mut meshes, mut nodes) = (
        Vec::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    );
    for (index, &area) in areas.iter().enumerate() {
        let corners: Vec<Vec3> = world
            .corners
            .iter()
            .zip(&world.areas)
            .filter(|&(_, &tagged)| tagged == area)
            .flat_map(|(triangle, _)| *triangle)
            .collect();
        let (low, high) = corners.iter().fold(
            (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
            |(low, high), &corner| (low.min(corner), high.max(corner)),
        );
        let offset = bin.len();
        for value in corners.iter().flat_map(|corner| corner.to_array()) {
            bin.extend_from_slice(&value.to_le_bytes());
        }
        let separator = if index == 0 { "" } else { "," };
        let _ = write!(
            views,
            r#"{separator}{{"buffer":0,"byteOffset":{offset},"byteLength":{}}}"#,
            corners.len() * 12
        );
        let _ = write!(
            accessors,
            r#"{separator}{{"bufferView":{index},"componentType":5126,"count":{},"type":"VEC3","min":[{},{},{}],"max":[{},{},{}]}}"#,
            corners.len(),
            low.x,
            low.y,
            low.z,
            high.x,
            high.y,
            high.z
        );
        let _ = write!(
            meshes,
            r#"{separator}{{"primitives":[{{"attributes":{{"POSITION":{index}}}}}]}}"#
        );
        let extras = if area == AreaId::GROUND {
            String::new()
        } else {
            format!(r#","extras":{{"area":{}}}"#, area.0)
        };
        let _ = write!(
            nodes,
            r#"{separator}{{"name":"area{}","mesh":{index}{extras}}}"#,
            area.0
        );
    }
    let roots: Vec<String> = (0..areas.len()).map(|index| index.to_string()).collect();
    let json = format!(
        r#"{{"asset":{{"version":"2.0","generator":"waymark"}},"scene":0,"scenes":[{{"nodes":[{}]}}],"nodes":[{nodes}],"meshes":[{meshes}],"accessors":[{accessors}],"bufferViews":[{views}],"buffers":[{{"byteLength":{}}}]}}"#,
        roots.join(","),
        bin.len()
    );
    glb_container(json.into_bytes(), bin)
}

/// A GLB container: the header, the JSON chunk (padded with spaces) and the binary chunk
/// (padded with zeros), each to four bytes.
fn glb_container(mut json: Vec<u8>, mut bin: Vec<u8>) -> Vec<u8> {
    json.resize(json.len().next_multiple_of(4), b' ');
    bin.resize(bin.len().next_multiple_of(4), 0);
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

/// Standard base64 (with or without padding) to bytes; `None` on any other character.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |byte: u8| -> Option<u32> {
        Some(match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let digits = text.trim_end_matches('=').as_bytes();
    let mut bytes = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.chunks(4) {
        if group.len() == 1 {
            return None;
        }
        let mut bits = 0u32;
        for (place, &digit) in group.iter().enumerate() {
            bits |= value(digit)? << (18 - 6 * place);
        }
        let whole = [(bits >> 16) as u8, (bits >> 8) as u8, bits as u8];
        bytes.extend_from_slice(&whole[..group.len() - 1]);
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding_and_refuses_other_characters() {
        assert_eq!(decode_base64("aGVsbG8="), Some(b"hello".to_vec()));
        assert_eq!(decode_base64("aGVsbG8"), Some(b"hello".to_vec()));
        assert_eq!(decode_base64("AAECAw=="), Some(vec![0, 1, 2, 3]));
        assert_eq!(decode_base64("aGV*bG8="), None);
        assert_eq!(decode_base64("a"), None);
    }
}
