//! The `waymark` command-line tool: inspect levels, bake, run path queries, project
//! interaction targets, move crowds, run avoidance scenarios.
//!
//! Every failure prints one line, `error: <what and which value>`, and exits with status 1
//! (2 for a usage error, from clap). Nothing here panics on bad input.

mod bake;
mod bake_args;
mod common;
mod crowd;
mod export;
#[cfg(test)]
mod fuzz;
mod info;
mod level;
mod merge;
mod path;
mod scenario;
mod sim;
mod target;
mod trace;
mod view;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Navigation for large crowds: bake walkable space, find paths, move agents.
#[derive(Parser, Debug)]
#[command(name = "waymark", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print a level's triangles, instances, dropped degenerates, world bounds and source
    /// versions.
    Info(info::InfoArgs),
    /// Bake a level into navigation tiles; report counts, area and per-stage times.
    Bake(bake::BakeCommand),
    /// Run a CSV of start/end pairs: nearest polygon, path, straight path; verdicts, lengths
    /// and times.
    Path(path::PathCommand),
    /// Move a crowd for a number of frames; report agents/ms, arrivals and path waiting.
    Crowd(Box<crowd::CrowdCommand>),
    /// Run a standard avoidance scenario (circle, corridor, bottleneck); report overlaps,
    /// agents off the mesh, completion time and agents that never arrive.
    Scenario(scenario::ScenarioCommand),
    /// Run a scripted crowd (spec 001's handoff): named agents, commands at ticks (move,
    /// cancel, teleport, doors, save, restore); a JSON-lines trace and a summary.
    Sim(sim::SimCommand),
    /// Project an interaction target (spec 000): legal stand fragments, the chosen pose,
    /// every check's measured value, the verdict.
    Target(target::TargetCommand),
    /// Write a level as OBJ and a crowd on it as an agents CSV, for another crowd (the
    /// native DetourCrowd reference) to run on the same triangles and agents.
    Export(Box<export::ExportCommand>),
    /// Merge the parts of a farmed bake (`bake --tiles X0..X1,Z0..Z1 --out PART`) into the
    /// .wmnav file the whole bake writes, byte for byte.
    Merge(merge::MergeCommand),
    /// Write one self-contained HTML page that draws a level's navigation mesh and replays
    /// a crowd's trace (`crowd --trace`, `scenario --trace`): play, pause, step, scrub,
    /// speed, zoom, pan, click an agent for its corridor, velocity and events.
    View(Box<view::ViewCommand>),
}

/// Anything the CLI reports as `error: ...`.
#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error(transparent)]
    Level(#[from] level::LevelError),
    #[error(transparent)]
    Geometry(#[from] waymark::scene::GeometryError),
    #[error(transparent)]
    Bake(#[from] waymark::bake::BakeError),
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
    #[error("cannot write '{}': {source}", path.display())]
    Write {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Crowd(#[from] waymark::crowd::CrowdError),
    #[error(transparent)]
    AgentsCsv(#[from] waymark::harness::AgentsCsvError),
    #[error(transparent)]
    Hills(#[from] waymark::scene::hills::TooManyAgents),
    #[error(transparent)]
    Scenario(#[from] waymark::harness::ScenarioError),
    /// Any other library error, reported as the library words it.
    #[error(transparent)]
    Library(Box<dyn std::error::Error + Send + Sync>),
    #[error("{0}")]
    Usage(String),
}

impl CliError {
    /// A library error, passed through as itself.
    fn library(error: impl std::error::Error + Send + Sync + 'static) -> CliError {
        CliError::Library(Box::new(error))
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if !error.use_stderr() => {
            // --help, --version: printed as they are.
            let _ = error.print();
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            // A usage error: its first line (what, and which value), status 2.
            let text = error.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: bad arguments"));
            return ExitCode::from(2);
        }
    };
    // The main job: with no subcommand, a crowd on the built-in level.
    let command = cli
        .command
        .unwrap_or_else(|| Command::Crowd(Box::new(crowd::CrowdCommand::default_job())));
    let result = match command {
        Command::Info(args) => info::run(&args),
        Command::Bake(command) => bake::run(&command),
        Command::Path(command) => path::run(&command),
        Command::Target(command) => target::run(&command),
        Command::Crowd(command) => crowd::run(&command),
        Command::Scenario(command) => scenario::run(&command),
        Command::Sim(command) => sim::run(&command),
        Command::Export(command) => export::run(&command),
        Command::View(command) => view::run(&command),
        Command::Merge(command) => merge::run(&command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`waymark info | head`) is the reader's choice, not a failure.
        Err(CliError::Output(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
