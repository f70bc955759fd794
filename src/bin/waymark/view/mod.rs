//! `waymark view [LEVEL] [--trace T.jsonl] --out view.html`: one self-contained HTML page
//! (no network access, no external script) that draws a level's navigation mesh from above
//! and replays a crowd's trace over it.
//!
//! The page is `viewer.html` with two data blocks filled in: the level (its name and the
//! mesh as [`mesh_json`] writes it) and the trace's lines (the header without its mesh,
//! then the frames, as written). The script in the page decodes them; its controls and what
//! it shows are described at the top of `viewer.html`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::CliError;
use crate::bake_args::BakeArgs;
use crate::common::agents_arg;
use crate::crowd::{CrowdCommand, level_mesh};
use crate::trace::{FORMAT, VERSION, mesh_json};

/// The page, with `/*LEVEL*/` and `/*TRACE*/` where the data goes.
const PAGE: &str = include_str!("viewer.html");

#[derive(clap::Args, Debug)]
pub struct ViewCommand {
    /// Level whose mesh is drawn: an .obj, .gltf, .glb or .wmnav file, `city` or `hills`
    /// (generated as `waymark crowd` generates them, from --agents and --seed) or the
    /// proving ground. Without it, the mesh recorded in the trace.
    pub level: Option<PathBuf>,
    /// A replay trace from `waymark crowd --trace` or `waymark scenario --trace`.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The page to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// With `city` or `hills`: the agent count the level was generated for.
    #[arg(long, default_value_t = 200, value_parser = agents_arg)]
    pub agents: usize,
    /// With `city` or `hills`: the seed it was generated from.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub bake: BakeArgs,
}

pub fn run(command: &ViewCommand) -> Result<(), CliError> {
    let trace = command.trace.as_deref().map(read_trace).transpose()?;
    let (level_name, mesh) = match (&command.level, &trace) {
        (None, Some(trace)) => (trace.level.clone(), trace.mesh.clone()),
        _ => {
            let crowd_command = CrowdCommand {
                level: command.level.clone(),
                agents: command.agents,
                seed: command.seed,
                bake: command.bake.clone(),
                ..CrowdCommand::default_job()
            };
            let (mesh, name) = level_mesh(&crowd_command)?;
            (name, mesh_json(&mesh.snapshot()).0)
        }
    };
    if let Some(trace) = &trace {
        if trace.mesh["fingerprint"] != mesh["fingerprint"] {
            return Err(CliError::Usage(format!(
                "the trace '{}' was recorded on mesh {} ({}), but the level '{}' bakes to mesh {}: \
                 pass the level and bake flags of the recorded run, or no level",
                command.trace.as_deref().unwrap_or(Path::new("")).display(),
                trace.mesh["fingerprint"],
                trace.level,
                level_name,
                mesh["fingerprint"]
            )));
        }
    }
    let level = json!({ "name": level_name, "mesh": mesh });
    let trace_text = trace.map(|trace| trace.lines).unwrap_or_default();
    let page = PAGE
        .replacen("/*LEVEL*/", &script_safe(&level.to_string()), 1)
        .replacen("/*TRACE*/", &script_safe(&trace_text), 1);
    std::fs::write(&command.out, &page).map_err(|source| CliError::Write {
        path: command.out.clone(),
        source,
    })?;
    println!(
        "view: {:.1} MB in {}",
        page.len() as f64 / 1e6,
        command.out.display()
    );
    Ok(())
}

/// JSON text made safe inside a `<script>` element: `</` can occur only inside JSON
/// strings, where `<\/` reads the same.
fn script_safe(json_text: &str) -> String {
    json_text.replace("</", "<\\/")
}

/// A trace as the page takes it.
struct Trace {
    level: String,
    mesh: Value,
    /// The header without its mesh, then every frame line, newline-separated.
    lines: String,
}

/// Reads a trace, checking its header's format and version and that every line is JSON.
fn read_trace(path: &Path) -> Result<Trace, CliError> {
    let bad = |line: usize, what: String| {
        CliError::Usage(format!(
            "'{}' line {line} is not a waymark trace line: {what}",
            path.display()
        ))
    };
    let file = std::fs::File::open(path)
        .map_err(|source| CliError::Usage(format!("cannot read '{}': {source}", path.display())))?;
    let mut lines = BufReader::new(file).lines();
    let read_error = |source: std::io::Error| {
        CliError::Usage(format!("cannot read '{}': {source}", path.display()))
    };
    let Some(first) = lines.next().transpose().map_err(read_error)? else {
        return Err(bad(1, "the file is empty".to_owned()));
    };
    let mut header: Value =
        serde_json::from_str(&first).map_err(|error| bad(1, error.to_string()))?;
    if header["format"] != FORMAT || header["version"] != VERSION {
        return Err(bad(
            1,
            format!(
                "format {} version {}, where {FORMAT} version {VERSION} is read",
                header["format"], header["version"]
            ),
        ));
    }
    let mesh = header
        .as_object_mut()
        .and_then(|header| header.remove("mesh"))
        .filter(Value::is_object)
        .ok_or_else(|| bad(1, "the header has no mesh".to_owned()))?;
    let level = header["level"].as_str().unwrap_or("").to_owned();
    let mut text = header.to_string();
    for (index, line) in lines.enumerate() {
        let line = line.map_err(read_error)?;
        let frame: Value =
            serde_json::from_str(&line).map_err(|error| bad(index + 2, error.to_string()))?;
        if !frame["frame"].is_u64() || !frame["agents"].is_string() {
            return Err(bad(
                index + 2,
                "a frame line has a frame number and agents".to_owned(),
            ));
        }
        text.push('\n');
        text.push_str(&line);
    }
    Ok(Trace {
        level,
        mesh,
        lines: text,
    })
}
