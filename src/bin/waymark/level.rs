//! Resolving the LEVEL argument: a built-in level name or a level file.

use std::path::{Path, PathBuf};

use waymark::scene::obj::{ObjError, ObjOptions, load_obj};
use waymark::scene::{Scene, proving_ground::proving_ground};

/// Name of the built-in validation level of spec 002, the default LEVEL.
pub const PROVING_GROUND: &str = "proving_ground";

/// A level that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LevelError {
    #[error(transparent)]
    Obj(#[from] ObjError),
    #[error("level '{0}' is neither a built-in level ({PROVING_GROUND}) nor a file ending in .obj")]
    Unknown(PathBuf),
}

/// A loaded level and the name to show for it.
pub struct Level {
    pub name: String,
    pub scene: Scene,
}

/// Loads `level`, or the proving ground when `None`.
pub fn load(level: Option<&Path>) -> Result<Level, LevelError> {
    let Some(path) = level else {
        return Ok(builtin());
    };
    if path.as_os_str() == PROVING_GROUND {
        return Ok(builtin());
    }
    let is_obj = path
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("obj"));
    if !is_obj {
        return Err(LevelError::Unknown(path.to_owned()));
    }
    Ok(Level {
        name: path.display().to_string(),
        scene: load_obj(path, &ObjOptions::default())?,
    })
}

fn builtin() -> Level {
    Level {
        name: format!("{PROVING_GROUND} (built-in)"),
        scene: proving_ground().scene,
    }
}
