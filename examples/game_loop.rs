//! A game loop around waymark: the game keeps its characters in its own `hecs` world, each
//! mapped to the crowd's `AgentId`; the level is baked once and shipped as a `.wmnav` file;
//! the crowd moves the characters, the game plays their jumps across an off-mesh link, and
//! halfway a door closes: the level's door leaf comes down, the tile under it is rebuilt
//! and committed, and the crowd takes the new mesh (its agents that meant to go through
//! the door find another way).
//!
//! `cargo run --release --example game_loop`
//!
//! The level: two rooms 20 m wide, 4 m apart, joined by a corridor 2 m wide with a door in
//! it, and a jump across the gap near the west wall (a one-way off-mesh link).

use std::collections::HashMap;
use std::error::Error;

use glam::{Affine3A, Vec3};
use waymark::bake::edit::{mark_scene_edit, rebuild_pending};
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::crowd::{AgentId, AgentParams, Crowd, CrowdConfig, CrowdEvent, KinematicController};
use waymark::mesh::blob::NavMeshFile;
use waymark::mesh::{LinkDesc, LinkKind, NavMesh};
use waymark::scene::{InstanceDesc, NodeId, Scene, TriMesh};

/// What the game shows of a character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Animation {
    Walking,
    Jumping,
    Idle,
}

/// A character of the game: its name, the crowd's handle for its body, what it plays.
struct Character {
    name: String,
    agent: AgentId,
    animation: Animation,
}

const CHARACTERS: usize = 24;
const DT: f32 = 1.0 / 30.0;
const FRAMES: u32 = 1200;
const DOOR_CLOSES_AT_FRAME: u32 = 75;

/// Where the door leaf stands when open (lifted out of the way) and closed.
fn door_transform(closed: bool) -> Affine3A {
    Affine3A::from_translation(Vec3::new(0.0, if closed { 0.0 } else { 4.0 }, 0.0))
}

/// The level's geometry; returns the scene and the door's node.
fn level() -> Result<(Scene, NodeId), Box<dyn Error>> {
    let mut scene = Scene::new();
    let place = |scene: &mut Scene, name: &str, min: Vec3, max: Vec3, parent| {
        let mesh = scene.add_mesh(TriMesh::axis_box(name, min, max));
        let mut desc = InstanceDesc::new(name, mesh);
        if let Some(parent) = parent {
            desc = desc.under(parent);
        }
        scene.add_instance(desc)
    };
    let floor =
        |x0: f32, z0: f32, x1: f32, z1: f32| (Vec3::new(x0, -0.2, z0), Vec3::new(x1, 0.0, z1));
    let (min, max) = floor(0.0, 0.0, 20.0, 8.0);
    place(&mut scene, "south room", min, max, None)?;
    let (min, max) = floor(0.0, 12.0, 20.0, 20.0);
    place(&mut scene, "north room", min, max, None)?;
    let (min, max) = floor(9.0, 8.0, 11.0, 12.0);
    place(&mut scene, "corridor", min, max, None)?;
    // A tower in a corner keeps the level's height the same whether the door is up or down
    // (the tile grid is planned from the level's bounds).
    place(
        &mut scene,
        "tower",
        Vec3::new(19.0, 0.0, 19.0),
        Vec3::new(20.0, 8.0, 20.0),
        None,
    )?;
    let door = scene.add_node("door", None, door_transform(false))?;
    place(
        &mut scene,
        "door leaf",
        Vec3::new(9.0, 0.0, 9.9),
        Vec3::new(11.0, 2.5, 10.1),
        Some(door),
    )?;
    Ok((scene, door))
}

fn main() -> Result<(), Box<dyn Error>> {
    // Build time: bake the level in tiles of 6.4 m and ship it as a .wmnav file.
    let (mut scene, door) = level()?;
    let mut config = BakeConfig::preset(Preset::Guard); // bodies of radius 0.4, height 1.8
    config.tile_size_cells = Some(32);
    let baked = bake(&scene.world_triangles()?, &config)?;
    let path = std::env::temp_dir().join("waymark_game_loop.wmnav");
    std::fs::write(&path, baked.to_file().to_bytes())?;

    // Run time: load the file, add the jump, make the crowd.
    let mut mesh = NavMesh::from_file(NavMeshFile::from_bytes(&std::fs::read(&path)?)?)?;
    mesh.add_link(LinkDesc {
        kind: LinkKind::Jump,
        start: Vec3::new(2.0, 0.0, 7.4),
        end: Vec3::new(2.0, 0.0, 12.6),
        bidirectional: false,
        radius_m: 1.0,
        open: true,
    })?;
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default())?;
    crowd.reserve(CHARACTERS)?;

    // The game's own world of characters, each with its body in the crowd.
    let mut game = hecs::World::new();
    let mut character_of: HashMap<AgentId, hecs::Entity> = HashMap::new();
    let params = AgentParams {
        radius_m: 0.4,
        height_m: 1.8,
        max_speed_mps: 2.5,
        preferred_speed_mps: 2.0,
        max_acceleration_mps2: 8.0,
    };
    for index in 0..CHARACTERS {
        let (column, row) = ((index % 8) as f32, (index / 8) as f32);
        let start = Vec3::new(1.5 + column * 2.4, 0.0, 2.0 + row * 1.8);
        let agent = crowd.add_agent(start, params)?;
        // Each walks to the spot facing its own across the gap.
        crowd.request_move(agent, Vec3::new(start.x, 0.0, 20.0 - start.z))?;
        let name = format!("villager {index}");
        let entity = game.spawn((Character {
            name,
            agent,
            animation: Animation::Walking,
        },));
        character_of.insert(agent, entity);
    }

    let mut controller = KinematicController;
    let (mut jumps, mut landings, mut arrivals) = (0, 0, 0);
    let mut outcomes: std::collections::BTreeMap<String, usize> = Default::default();
    let mut arrival_times = Vec::new();
    let (mut replanned, mut rebuilt, mut blocked, mut invalidated) = (0, 0, 0, 0);
    for frame in 0..FRAMES {
        if frame == DOOR_CLOSES_AT_FRAME {
            // The door comes down: the tiles built from it go pending, are rebuilt from
            // the level as it is now and committed, and the crowd takes the new mesh.
            scene.set_node_transform(door, door_transform(true))?;
            let world = scene.world_triangles()?;
            let pending = mark_scene_edit(&mut mesh, &world, &config)?;
            rebuilt += rebuild_pending(&mut mesh, &world, &config, &pending.tiles)?
                .committed
                .len();
            let walking_before = crowd.agents().filter(|view| view.velocity != Vec3::ZERO);
            let walking_before = walking_before.count();
            crowd.set_mesh(&mesh);
            replanned = crowd
                .agents()
                .filter(|view| view.status == waymark::crowd::AgentStatus::WaitingForPath)
                .count();
            println!(
                "frame {frame}: the door closed; {rebuilt} tile(s) rebuilt and committed; \
                 {replanned} of {walking_before} walking characters look for another way"
            );
        }
        for event in crowd.step(DT, &mut controller)? {
            let (agent, animation) = match event {
                CrowdEvent::LinkStarted { agent, .. } => {
                    jumps += 1;
                    (agent, Animation::Jumping)
                }
                CrowdEvent::LinkFinished { agent, .. } => {
                    landings += 1;
                    (agent, Animation::Walking)
                }
                CrowdEvent::Arrived { agent, .. } => {
                    arrivals += 1;
                    arrival_times.push(frame as f32 * DT);
                    (agent, Animation::Idle)
                }
                // Nothing is cancelled or held in this loop.
                CrowdEvent::Cancelled { .. }
                | CrowdEvent::CancelFault { .. }
                | CrowdEvent::StandFact { .. } => continue,
                // The door's tile changed under these routes: counted, the crowd re-plans.
                CrowdEvent::RouteInvalidated { .. } => {
                    invalidated += 1;
                    continue;
                }
                CrowdEvent::Blocked { .. } => {
                    // Held up half a second in the queue at the jump: the crowd escalates
                    // by itself; a game might play an impatient idle here.
                    blocked += 1;
                    continue;
                }
                // The controller here is the crowd's own and never answers with nonsense;
                // a game's physics controller that did would see its character frozen here
                // and teleport it back onto the floor.
                CrowdEvent::PartialArrived { agent, .. }
                | CrowdEvent::NoPath { agent, .. }
                | CrowdEvent::Quarantined { agent, .. } => {
                    let entity = character_of[&agent];
                    let character = game.get::<&Character>(entity)?;
                    println!("frame {frame}: {} reports {event:?}", character.name);
                    continue;
                }
                // Each order's one outcome: what a decision layer would act on (here every
                // character has one order, which succeeds with its arrival).
                CrowdEvent::OrderEnded { outcome, .. } => {
                    *outcomes.entry(format!("{outcome:?}")).or_insert(0) += 1;
                    continue;
                }
            };
            let entity = character_of[&agent];
            game.get::<&mut Character>(entity)?.animation = animation;
        }
        // Rendering would read crowd.agents() here; the game's own state is by character.
    }

    let idle = game
        .query::<&Character>()
        .iter()
        .filter(|character| character.animation == Animation::Idle)
        .count();
    let still_walking: Vec<String> = game
        .query::<&Character>()
        .iter()
        .filter(|character| character.animation != Animation::Idle)
        .map(|character| {
            format!(
                "{} at {}",
                character.name,
                crowd.position(character.agent).unwrap()
            )
        })
        .collect();
    let last = arrival_times.iter().copied().fold(0.0f32, f32::max);
    println!(
        "game_loop: {CHARACTERS} characters, level loaded from {} ({} bytes)",
        path.display(),
        std::fs::metadata(&path)?.len()
    );
    println!(
        "arrived: {arrivals} (the last after {last:.1} s); idle characters: {idle}; jumps played: {jumps} started, {landings} landed; re-planned when the door closed: {replanned}; held up (blocked events): {blocked}; routes reported invalidated: {invalidated}"
    );
    println!("orders ended: {outcomes:?}");
    if !still_walking.is_empty() {
        println!("still on their way: {}", still_walking.join(", "));
    }
    Ok(())
}
