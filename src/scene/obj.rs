//! Wavefront OBJ import through `tobj`.
//!
//! Each OBJ object or group becomes one mesh and one instance at the world root. Names carry
//! tags, separated from the name and from each other by `|` or white space:
//!
//! | tag | meaning | example |
//! |---|---|---|
//! | `area:<name or 0..63>` | area of every triangle in the group ([`AreaId::parse`]) | `o pond\|area:water` |
//! | `support:<name>` | the group rides on the named moving support | `g deck support:ferry` |
//!
//! Anything else in the name is just the name. An unknown area spelling or an empty support
//! name is an error naming the group. Polygons are fan-triangulated by `tobj`; materials,
//! normals and texture coordinates are ignored. Coordinates are in asset units scaled by
//! [`ObjOptions::unit_scale_m`].

use std::io::{BufRead, Read};
use std::path::Path;

use glam::Vec3;

use super::graph::{InstanceDesc, Scene};
use super::mesh::TriMesh;
use super::world::WorldTriangles;
use crate::ids::AreaId;

/// How to read an OBJ file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjOptions {
    /// Metres per OBJ unit. Limit: finite, > 0 (checked when the scene becomes world
    /// triangles).
    pub unit_scale_m: f32,
}

impl Default for ObjOptions {
    fn default() -> Self {
        ObjOptions { unit_scale_m: 1.0 }
    }
}

/// An OBJ file that cannot become a scene.
#[derive(Debug, thiserror::Error)]
pub enum ObjError {
    /// The file could not be opened or read.
    #[error("cannot read '{path}': {source}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// `tobj` refused the content.
    #[error("malformed OBJ '{path}': {reason}{}", line_suffix(*.line))]
    Malformed {
        /// The file.
        path: String,
        /// What was wrong.
        reason: String,
        /// The first line that shows the problem, 1-based, when it could be found.
        line: Option<usize>,
    },
    /// The file is larger than a level may be: more bytes, vertices or triangles than
    /// the named limit.
    #[error("OBJ '{path}': {count} {what}, over the limit of {limit} ({limit_name})")]
    TooLarge {
        /// The file.
        path: String,
        /// What was counted: `bytes`, `vertices` or `triangles`.
        what: &'static str,
        /// How many the file holds (for bytes: at least this many).
        count: u64,
        /// The limit.
        limit: u64,
        /// The limit's name in [`crate::geom::limits`].
        limit_name: &'static str,
    },
    /// A name tag could not be understood.
    #[error("OBJ '{path}': group '{group}': {reason}")]
    BadTag {
        /// The file.
        path: String,
        /// The group or object name as written.
        group: String,
        /// What was wrong.
        reason: String,
    },
}

fn line_suffix(line: Option<usize>) -> String {
    line.map(|line| format!(" (line {line})"))
        .unwrap_or_default()
}

/// Reads an OBJ file into a scene.
pub fn load_obj(path: &Path, options: &ObjOptions) -> Result<Scene, ObjError> {
    let display = path.display().to_string();
    let text = crate::geom::limits::read_text_file(path).map_err(|source| ObjError::Io {
        path: display.clone(),
        source,
    })?;
    parse_obj(text.as_bytes(), &display, options)
}

/// The vertices (`v` lines) and triangles (`f` lines, fanned) an OBJ text declares.
fn declared_counts(text: &str) -> (usize, usize) {
    let mut vertices = 0usize;
    let mut triangles = 0usize;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => vertices += 1,
            Some("f") => triangles += words.count().saturating_sub(2),
            _ => {}
        }
    }
    (vertices, triangles)
}

/// Reads OBJ text into a scene; `source_name` names it in errors. At most
/// [`INPUT_FILE_BYTES_MAX`](crate::geom::limits::INPUT_FILE_BYTES_MAX) bytes are read from
/// `reader`, and a text declaring more than
/// [`OBJ_VERTICES_MAX`](crate::geom::limits::OBJ_VERTICES_MAX) vertices or
/// [`TRIANGLES_MAX`](crate::geom::limits::TRIANGLES_MAX) triangles is refused before it is
/// parsed.
pub fn parse_obj(
    reader: impl BufRead,
    source_name: &str,
    options: &ObjOptions,
) -> Result<Scene, ObjError> {
    use crate::geom::limits::{INPUT_FILE_BYTES_MAX, OBJ_VERTICES_MAX, TRIANGLES_MAX};
    let too_large = |what, count: u64, limit: u64, limit_name| ObjError::TooLarge {
        path: source_name.to_owned(),
        what,
        count,
        limit,
        limit_name,
    };
    let mut text = String::new();
    // One byte past the limit is read, to tell a file at the limit from a longer one.
    reader
        .take(INPUT_FILE_BYTES_MAX + 1)
        .read_to_string(&mut text)
        .map_err(|source| ObjError::Io {
            path: source_name.to_owned(),
            source,
        })?;
    if text.len() as u64 > INPUT_FILE_BYTES_MAX {
        let count = text.len() as u64;
        return Err(too_large(
            "bytes",
            count,
            INPUT_FILE_BYTES_MAX,
            "INPUT_FILE_BYTES_MAX",
        ));
    }
    // Counted before `tobj` allocates for them: a face of n corners fans into n - 2
    // triangles.
    let (vertices, triangles) = declared_counts(&text);
    if vertices > OBJ_VERTICES_MAX {
        let (count, limit) = (vertices as u64, OBJ_VERTICES_MAX as u64);
        return Err(too_large("vertices", count, limit, "OBJ_VERTICES_MAX"));
    }
    if triangles > TRIANGLES_MAX {
        let (count, limit) = (triangles as u64, TRIANGLES_MAX as u64);
        return Err(too_large("triangles", count, limit, "TRIANGLES_MAX"));
    }
    // A byte-order mark (editors on Windows write one) is no part of the first line: left
    // in, the first `v` is not read as a vertex and every face points past the vertices.
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        text = rest.to_owned();
    }
    let load_options = tobj::LoadOptions {
        triangulate: true,
        ignore_points: true,
        ignore_lines: true,
        ..Default::default()
    };
    // Materials are not navigation input: every material library resolves to nothing.
    let (models, _materials) = tobj::load_obj_buf(&mut text.as_bytes(), &load_options, |_| {
        Err(tobj::LoadError::GenericFailure)
    })
    .map_err(|error| ObjError::Malformed {
        path: source_name.to_owned(),
        line: first_bad_line(&text, &error),
        reason: error.to_string(),
    })?;

    let mut scene = Scene::new();
    for (model_index, model) in models.iter().enumerate() {
        let tags = parse_tags(&model.name).map_err(|reason| ObjError::BadTag {
            path: source_name.to_owned(),
            group: model.name.clone(),
            reason,
        })?;
        let name = if tags.name.is_empty() {
            format!("group{model_index}")
        } else {
            format!("{}#{model_index}", tags.name)
        };
        let positions = model
            .mesh
            .positions
            .chunks_exact(3)
            .map(|xyz| Vec3::new(xyz[0], xyz[1], xyz[2]))
            .collect();
        let triangles = model
            .mesh
            .indices
            .chunks_exact(3)
            .map(|abc| [abc[0], abc[1], abc[2]])
            .collect();
        let mut mesh =
            TriMesh::new(name.clone(), positions, triangles).with_unit_scale(options.unit_scale_m);
        if let Some(area) = tags.area {
            mesh = mesh.with_area(area);
        }
        let mesh_id = scene.add_mesh(mesh);
        let mut desc = InstanceDesc::new(name, mesh_id);
        if let Some(support) = tags.support {
            desc = desc.on_support(scene.support(&support));
        }
        scene
            .add_instance(desc)
            .expect("the mesh was just added to this scene");
    }
    Ok(scene)
}

/// A group name split into its plain name and its tags.
#[derive(Debug, Default, PartialEq)]
pub(super) struct GroupTags {
    pub(super) name: String,
    pub(super) area: Option<AreaId>,
    pub(super) support: Option<String>,
}

pub(super) fn parse_tags(group: &str) -> Result<GroupTags, String> {
    let mut tags = GroupTags::default();
    let mut name_parts = Vec::new();
    for token in group
        .split(|c: char| c == '|' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        if let Some(spelling) = token.strip_prefix("area:") {
            let area = AreaId::parse(spelling).ok_or_else(|| {
                format!(
                    "unknown area '{spelling}' (expected one of {} or a number 0..={})",
                    AreaId::NAMED.map(|(name, _)| name).join(", "),
                    AreaId::MAX
                )
            })?;
            tags.area = Some(area);
        } else if let Some(support) = token.strip_prefix("support:") {
            if support.is_empty() {
                return Err("empty support name in 'support:'".to_owned());
            }
            tags.support = Some(support.to_owned());
        } else {
            name_parts.push(token);
        }
    }
    tags.name = name_parts.join(" ");
    Ok(tags)
}

/// Finds the first line that shows the problem `tobj` reported, since its errors carry no
/// position. Only the errors a level file commonly has are located.
fn first_bad_line(text: &str, error: &tobj::LoadError) -> Option<usize> {
    let vertex_count = text.lines().filter(|line| line.starts_with("v ")).count();
    let bad = |line: &str| -> bool {
        let mut words = line.split_whitespace();
        match (words.next(), error) {
            (Some("v"), tobj::LoadError::PositionParseError) => {
                let floats: Vec<Option<f32>> = words.map(|word| word.parse().ok()).collect();
                floats.len() < 3 || floats.iter().take(3).any(Option::is_none)
            }
            (
                Some("f"),
                tobj::LoadError::FaceParseError | tobj::LoadError::FaceVertexOutOfBounds,
            ) => words.any(|word| {
                let index = word.split('/').next().unwrap_or("");
                match index.parse::<i64>() {
                    Ok(index) => index == 0 || index.unsigned_abs() as usize > vertex_count,
                    Err(_) => true,
                }
            }),
            _ => false,
        }
    };
    text.lines().position(bad).map(|index| index + 1)
}

/// Writes world triangles as OBJ text that [`parse_obj`] reads back to the same triangles
/// and areas: an object per run of triangles from one instance with one area, named by the
/// instance with an `area:` tag where the area is not plain ground, each triangle as its
/// own three vertices (in metres, to the precision of `f32`). What the native reference
/// runs (`stress/detourcrowd/native/`) read a generated level from; they honour the
/// `area:unwalkable` tag too.
pub fn write_obj(world: &WorldTriangles) -> String {
    use std::fmt::Write as _;
    let mut text = String::from("# waymark world triangles, metres\n");
    let mut current: Option<(usize, AreaId)> = None;
    let mut vertex = 0usize;
    for (index, corners) in world.corners.iter().enumerate() {
        let key = (world.sources[index].0 as usize, world.areas[index]);
        if current != Some(key) {
            current = Some(key);
            let name = world
                .instances
                .iter()
                .find(|summary| summary.instance.0 as usize == key.0)
                .map_or("instance", |summary| summary.name.as_str());
            // Names become one token: tags are split off at `|` and white space.
            let name: String = name
                .chars()
                .map(|c| {
                    if c == '|' || c.is_whitespace() {
                        '_'
                    } else {
                        c
                    }
                })
                .collect();
            let area = AreaId::NAMED
                .iter()
                .find(|(_, area)| *area == key.1)
                .map_or_else(
                    || key.1.0.to_string(),
                    |(spelling, _)| (*spelling).to_owned(),
                );
            if key.1 == AreaId::GROUND {
                let _ = writeln!(text, "o {name}");
            } else {
                let _ = writeln!(text, "o {name}|area:{area}");
            }
        }
        for corner in corners {
            let _ = writeln!(text, "v {} {} {}", corner.x, corner.y, corner.z);
        }
        let _ = writeln!(text, "f {} {} {}", vertex + 1, vertex + 2, vertex + 3);
        vertex += 3;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_split_from_names() {
        let tags = parse_tags("pond|area:water support:ferry").unwrap();
        assert_eq!(tags.name, "pond");
        assert_eq!(tags.area, Some(AreaId::WATER));
        assert_eq!(tags.support.as_deref(), Some("ferry"));
        assert!(parse_tags("pit area:lava").unwrap_err().contains("lava"));
    }

    #[test]
    fn groups_become_instances_with_tags() {
        let text = "v 0 0 0\nv 0 0 1\nv 1 0 0\nv 1 0 1\n\
                    g floor\nf 1 2 3\ng pond|area:water|support:raft\nf 2 4 3\n";
        let scene = parse_obj(text.as_bytes(), "inline", &ObjOptions::default()).unwrap();
        assert_eq!(scene.instances().len(), 2);
        let pond = &scene.instances()[1].desc;
        assert_eq!(pond.name, "pond#1");
        assert_eq!(scene.support_name(pond.support.unwrap()), Some("raft"));
        let world = scene.world_triangles().unwrap();
        assert_eq!(world.areas, vec![AreaId::GROUND, AreaId::WATER]);
    }

    #[test]
    fn written_triangles_read_back_the_same() {
        let text = "v 0 0 0\nv 0 0 1.25\nv 1 0 0\nv 1 0.1 1\n\
                    g floor\nf 1 2 3\ng wall|area:unwalkable\nf 2 4 3\ng pond|area:water\nf 1 3 4\n";
        let world = parse_obj(text.as_bytes(), "inline", &ObjOptions::default())
            .unwrap()
            .world_triangles()
            .unwrap();
        let written = write_obj(&world);
        assert!(written.contains("|area:unwalkable") && written.contains("|area:water"));
        let again = parse_obj(written.as_bytes(), "written", &ObjOptions::default())
            .unwrap()
            .world_triangles()
            .unwrap();
        assert_eq!(again.corners, world.corners);
        assert_eq!(
            again.areas,
            vec![AreaId::GROUND, AreaId::UNWALKABLE, AreaId::WATER]
        );
    }

    #[test]
    fn a_byte_order_mark_before_the_first_vertex_is_read_past() {
        let text = "\u{feff}v 0 0 0\nv 0 0 1\nv 1 0 0\nf 1 2 3\n";
        let scene = parse_obj(text.as_bytes(), "inline", &ObjOptions::default()).unwrap();
        let world = scene.world_triangles().unwrap();
        assert_eq!(world.corners.len(), 1);
        assert_eq!(world.corners[0][0], Vec3::ZERO);
    }

    #[test]
    fn bad_vertex_line_is_located() {
        let text = "v 0 0 0\nv 0 zero 1\nv 1 0 0\nf 1 2 3\n";
        let error = parse_obj(text.as_bytes(), "inline", &ObjOptions::default()).unwrap_err();
        assert!(
            matches!(error, ObjError::Malformed { line: Some(2), .. }),
            "{error}"
        );
    }
}
