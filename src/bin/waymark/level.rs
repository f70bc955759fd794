//! Resolving the LEVEL argument: a built-in level name or a level file.

use std::path::{Path, PathBuf};

use waymark::crowd::SupportMotion;
use waymark::ids::SupportId;
use waymark::mesh::NavMesh;
use waymark::mesh::blob::{BlobError, NavMeshFile};
use waymark::scene::gltf::{GltfError, GltfOptions, load_gltf};
use waymark::scene::obj::{ObjError, ObjOptions, load_obj};
use waymark::scene::{Scene, proving_ground::proving_ground};

/// Name of the built-in validation level of spec 002, the default LEVEL.
pub const PROVING_GROUND: &str = "proving_ground";

/// A level that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LevelError {
    #[error(transparent)]
    Obj(#[from] ObjError),
    #[error(transparent)]
    Gltf(#[from] GltfError),
    #[error(
        "level '{0}' is neither a built-in level ({PROVING_GROUND}) nor a file ending in .obj, .gltf, .glb or .wmnav"
    )]
    Unknown(PathBuf),
    #[error("'{path}': {source}")]
    Blob { path: String, source: BlobError },
    #[error("cannot read '{path}': {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "'{0}' is a baked .wmnav file; this command needs level geometry (.obj, .gltf or .glb)"
    )]
    NeedsGeometry(PathBuf),
    #[error(transparent)]
    Geometry(#[from] waymark::scene::GeometryError),
    #[error(transparent)]
    Bake(#[from] waymark::bake::BakeError),
    #[error(transparent)]
    NavMesh(#[from] waymark::mesh::NavMeshError),
    #[error("'{path}' is already baked; bake flags ({}) apply only to level geometry (.obj, .gltf or .glb)", flags.join(", "))]
    BakeFlagsWithBaked {
        path: String,
        flags: Vec<&'static str>,
    },
    #[error(
        "level '{0}' has no walkable polygon (nothing is walkable for this agent and these \
         bake settings)"
    )]
    NothingWalkable(String),
}

/// `mesh`, or `NothingWalkable` naming `level` when it has no walkable polygon: a crowd
/// or a query on it could only report zeros.
pub fn require_walkable(mesh: NavMesh, level: &str) -> Result<NavMesh, LevelError> {
    if mesh.snapshot().walkable_area_m2() > 0.0 {
        Ok(mesh)
    } else {
        Err(LevelError::NothingWalkable(level.to_owned()))
    }
}

/// A loaded level, the name to show for it, the motion of its moving supports (the
/// proving ground's turntable) and its lift (the proving ground's car, a platform).
pub struct Level {
    pub name: String,
    pub scene: Scene,
    pub supports: Vec<(SupportId, SupportMotion)>,
    pub lift: Option<waymark::scene::proving_ground::Lift>,
}

/// Loads `level`, or the proving ground when `None`.
pub fn load(level: Option<&Path>) -> Result<Level, LevelError> {
    let Some(path) = level else {
        return Ok(builtin());
    };
    if path.as_os_str() == PROVING_GROUND {
        return Ok(builtin());
    }
    if has_extension(path, "wmnav") {
        return Err(LevelError::NeedsGeometry(path.to_owned()));
    }
    let scene = if has_extension(path, "obj") {
        load_obj(path, &ObjOptions::default())?
    } else if has_extension(path, "gltf") || has_extension(path, "glb") {
        load_gltf(path, &GltfOptions::default())?
    } else {
        return Err(LevelError::Unknown(path.to_owned()));
    };
    Ok(Level {
        name: path.display().to_string(),
        scene,
        supports: Vec::new(),
        lift: None,
    })
}

fn builtin() -> Level {
    let ground = proving_ground();
    let (support, centre, rate) = ground.turntable;
    Level {
        name: format!("{PROVING_GROUND} (built-in)"),
        scene: ground.scene,
        supports: vec![(support, SupportMotion::turntable(centre, rate))],
        lift: Some(ground.lift),
    }
}

fn has_extension(path: &Path, wanted: &str) -> bool {
    path.extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case(wanted))
}

/// A runtime navmesh: a `.wmnav` file loaded as it is, or a level baked with `bake`.
/// A level file's mesh baked through a tile cache, for temporary obstacles: geometry only
/// (`.obj`, `.gltf`, `.glb` or the proving ground), as a baked file keeps no cache.
pub fn load_with_cache(
    level: &Path,
    bake: &crate::bake_args::BakeArgs,
) -> Result<(NavMesh, waymark::bake::tile_cache::TileCache), LevelError> {
    if has_extension(level, "wmnav") {
        return Err(LevelError::NeedsGeometry(level.to_owned()));
    }
    let display = level.display().to_string();
    let loaded = load(Some(level))?;
    let world = loaded.scene.world_triangles()?;
    let (baked, cache) = waymark::bake::tile_cache::TileCache::bake(&world, &bake.config())?;
    Ok((
        require_walkable(NavMesh::from_file(baked.to_file())?, &display)?,
        cache,
    ))
}

pub fn load_navmesh(
    level: &Path,
    bake: &crate::bake_args::BakeArgs,
) -> Result<NavMesh, LevelError> {
    let display = level.display().to_string();
    if has_extension(level, "wmnav") {
        let flags = bake.given();
        if !flags.is_empty() {
            return Err(LevelError::BakeFlagsWithBaked {
                path: display,
                flags,
            });
        }
        let bytes = waymark::geom::limits::read_file(level).map_err(|source| LevelError::Read {
            path: display.clone(),
            source,
        })?;
        let file = NavMeshFile::from_bytes(&bytes).map_err(|source| LevelError::Blob {
            path: display.clone(),
            source,
        })?;
        return require_walkable(NavMesh::from_file(file)?, &display);
    }
    let loaded = load(Some(level))?;
    let world = loaded.scene.world_triangles()?;
    let baked = waymark::bake::bake(&world, &bake.config())?;
    require_walkable(NavMesh::from_file(baked.to_file())?, &display)
}
