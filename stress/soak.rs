//! A dynamic world soak: the generated city with a crowd walking while the level changes
//! under it.
//!
//! `cargo run --release --example soak -- [MINUTES] [AGENTS] [still]` (defaults 10
//! simulated minutes at 1/30 s, 10,000 agents; `still` places no obstacle, the baseline): the city baked through a tile cache (RecastDemo's
//! settings, 96-cell tiles, as the CLI bakes it); every agent walks to a reachable target
//! and on to the next. Each simulated minute 100 barrels (cylinders) are placed on the
//! streets and each is taken away 20 s later; 8 barricades (boxes across streets) toggle
//! every 10 s, doors closing and opening; 1% of the agents are removed and as many added
//! each second. Tiles are rebuilt in the background (`TileCache::start_update`, at most 4
//! tiles a frame) and committed when done, the crowd handed each new mesh.
//!
//! Checked every frame, after the step: every adopted corridor is valid on the crowd's
//! mesh (no corridor reads a tile changed since its search), no agent lost (the crowd holds
//! exactly the agents added and not removed), none off the mesh (a foot more than 1 cm
//! beside its polygon on a live tile; agents on a tile being rebuilt are counted apart). Prints one JSON line: the
//! frames, the checks' failures (all must be 0), the obstacles placed and tiles rebuilt, the
//! step's median and p99 wall time and their ratio, the same for the frame's whole
//! navigation work (the level's changes, the rebuilds' commits, the churn and the step),
//! whether the pool's threads were pinned (`pinned_pool.rs`; `WAYMARK_UNPINNED=1` leaves
//! them as rayon builds them), resident memory after the first simulated minute and at the
//! end, and the wall time of the run.

use std::collections::{HashSet, VecDeque};
use std::time::Instant;

use glam::{Vec2, Vec3};
use waymark::bake::tile_cache::{ObstacleEffect, ObstacleId, ObstacleShape, TileCache};
use waymark::bake::{BakeConfig, Preset};
use waymark::crowd::{AgentId, AgentParams, AgentStatus, Crowd, CrowdConfig, KinematicController};
use waymark::harness::{median, reachable_plans, stale_corridors as stale_corridors_of};
use waymark::mesh::{NavMesh, SlotState};
use waymark::query::{QueryFilter, random_points};

const DT_S: f32 = 1.0 / 30.0;
const FRAMES_PER_MINUTE: usize = 1800;
const BARRELS_PER_MINUTE: usize = 100;
const BARREL_LIFE_FRAMES: usize = 600;
const BARRICADES: usize = 8;
const BARRICADE_PERIOD_FRAMES: usize = 300;
const TILES_PER_FRAME: usize = 4;

fn resident_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
            let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib / 1024.0)
        })
        .unwrap_or(f64::NAN)
}

/// A small deterministic generator (SplitMix64) for the soak's choices.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

#[path = "pinned_pool.rs"]
mod pinned_pool;

fn main() {
    let pinned = pinned_pool::pin_pool_threads();
    let mut args = std::env::args().skip(1);
    let minutes: usize = args
        .next()
        .map_or(10, |value| value.parse().expect("MINUTES"));
    let agent_count: usize = args
        .next()
        .map_or(10_000, |value| value.parse().expect("AGENTS"));
    // `still`: the same crowd and churn with no obstacle ever placed, the baseline the
    // changing level's step times are read against.
    let still = match args.next().as_deref() {
        None => false,
        Some("still") => true,
        Some(other) => panic!("the third argument is `still` or nothing, not {other}"),
    };
    let started = Instant::now();

    let city = waymark::scene::city::city(agent_count, 1);
    let world = city.scene.world_triangles().expect("the city's triangles");
    let config = BakeConfig {
        tile_size_cells: Some(96),
        ..BakeConfig::preset(Preset::Recast)
    };
    let (baked, mut cache) = TileCache::bake(&world, &config).expect("the city bakes");
    let mut mesh = NavMesh::from_file(baked.to_file()).expect("a valid navmesh");
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    // Where barrels and barricades go: random points of the streets.
    let spots: Vec<Vec3> = random_points(&snapshot, &filter, 4096, 7)
        .into_iter()
        .map(|(_, point)| point)
        .collect();
    let plans = reachable_plans(&mesh, agent_count * 2, 8, 3);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).expect("a valid configuration");
    let params = AgentParams::DETOUR_REFERENCE;
    let mut next_plan = 0;
    let mut live: Vec<(AgentId, usize, usize)> = Vec::new(); // (agent, plan, next target)
    // A new agent at the next plan's start; a start on a tile being rebuilt (pending, so
    // refused) passes to the next plan.
    let mut add = |crowd: &mut Crowd, live: &mut Vec<(AgentId, usize, usize)>| {
        for _ in 0..plans.len() {
            let index = next_plan % plans.len();
            next_plan += 1;
            let (Some(start), Some(&target)) = (plans.start(index), plans.targets(index).first())
            else {
                continue;
            };
            if let Ok(agent) = crowd.add_agent(start, params) {
                crowd.request_move(agent, target).expect("a finite target");
                live.push((agent, index, 1));
                return;
            }
        }
        panic!("no plan's start is on the mesh");
    };
    for _ in 0..agent_count {
        add(&mut crowd, &mut live);
    }

    let mut random = Random(11);
    let mut barrels: VecDeque<(usize, ObstacleId)> = VecDeque::new();
    let mut barricades: Vec<Option<ObstacleId>> = vec![None; BARRICADES];
    let mut rebuild = cache.start_update(0);
    let mut controller = KinematicController;
    let (mut stale_corridors, mut lost_agents, mut off_mesh) = (0u64, 0u64, 0u64);
    let mut on_pending_tiles = 0u64;
    let (mut placed, mut tiles_rebuilt, mut refused) = (0u64, 0u64, 0u64);
    let mut step_ms = Vec::new();
    let mut frame_ms = Vec::new();
    let mut resident_after_minute = f64::NAN;
    let frames = minutes * FRAMES_PER_MINUTE;
    for frame in 0..frames {
        // A frame's navigation work, as a game's frame would do it: the level's changes,
        // the rebuilds' commits, the churn and the step (the checks after are not timed).
        let frame_clock = Instant::now();
        // The level changes: barrels come and go, barricades toggle.
        if !still && frame % (FRAMES_PER_MINUTE / BARRELS_PER_MINUTE) == 0 {
            let at = spots[random.below(spots.len())];
            let shape = ObstacleShape::Cylinder {
                base: at,
                radius_m: 0.6,
                height_m: 1.0,
            };
            match cache.add_obstacle(&mut mesh, shape, ObstacleEffect::Cut) {
                Ok(id) => {
                    barrels.push_back((frame, id));
                    placed += 1;
                }
                Err(_) => refused += 1,
            }
        }
        while barrels
            .front()
            .is_some_and(|&(since, _)| frame - since >= BARREL_LIFE_FRAMES)
        {
            let (_, id) = barrels.pop_front().expect("checked");
            cache
                .remove_obstacle(&mut mesh, id)
                .expect("a placed barrel");
        }
        if !still && frame % BARRICADE_PERIOD_FRAMES == 0 {
            let which = (frame / BARRICADE_PERIOD_FRAMES) % BARRICADES;
            match barricades[which].take() {
                Some(id) => cache
                    .remove_obstacle(&mut mesh, id)
                    .expect("a placed barricade"),
                None => {
                    let at = spots[which * 97 % spots.len()];
                    let shape = ObstacleShape::TurnedBox {
                        base: at,
                        half_extents_m: Vec2::new(4.0, 0.3),
                        height_m: 2.0,
                        yaw_rad: which as f32 * 0.4,
                    };
                    barricades[which] = cache
                        .add_obstacle(&mut mesh, shape, ObstacleEffect::Cut)
                        .ok();
                }
            }
        }
        // Background rebuilds: commit what finished, start the next batch.
        let done = cache
            .finish_update(&mut mesh, &mut rebuild, false)
            .expect("a rebuild");
        tiles_rebuilt += done.committed.len() as u64;
        if rebuild.outstanding() == 0 && cache.pending_tiles() > 0 {
            rebuild = cache.start_update(TILES_PER_FRAME);
        }
        // The mesh as it is now (marks or commits this frame; the same snapshot costs
        // nothing): the crowd takes it.
        crowd.set_mesh(&mesh);

        // 1% of the agents each second: about 3 a frame, removed and added.
        let churn = agent_count / 100;
        let this_frame = churn * (frame % 30 + 1) / 30 - churn * (frame % 30) / 30;
        for _ in 0..this_frame {
            let (agent, _, _) = live.swap_remove(random.below(live.len()));
            crowd.remove_agent(agent).expect("a live agent");
            add(&mut crowd, &mut live);
        }

        let clock = Instant::now();
        crowd.step(DT_S, &mut controller).expect("the step");
        step_ms.push(clock.elapsed().as_secs_f64() * 1000.0);
        frame_ms.push(frame_clock.elapsed().as_secs_f64() * 1000.0);

        // Arrived: on to the next target.
        for (agent, plan, target) in live.iter_mut() {
            if crowd.status(*agent) == Ok(AgentStatus::Arrived) {
                let targets = plans.targets(*plan);
                crowd
                    .request_move(*agent, targets[*target % targets.len()])
                    .expect("a target");
                *target += 1;
            }
        }

        // Checks, against the level as it is now.
        let snapshot = &mesh.snapshot();
        stale_corridors += stale_corridors_of(&crowd, snapshot) as u64;
        let expected: HashSet<AgentId> = live.iter().map(|&(agent, _, _)| agent).collect();
        let present: HashSet<AgentId> = crowd.agents().map(|view| view.id).collect();
        lost_agents += expected.symmetric_difference(&present).count() as u64;
        // Off the mesh: a foot not over its polygon on a live tile. An agent on a tile
        // being rebuilt has no live polygon until it commits; those are counted apart.
        for view in crowd.agents() {
            let polygon = crowd.polygon(view.id).expect("a live agent");
            match snapshot.tile(polygon) {
                Some(tile) => {
                    let (closest, _) = tile.closest_point(polygon.polygon(), view.position);
                    let beside =
                        Vec2::new(closest.x - view.position.x, closest.z - view.position.z);
                    off_mesh += u64::from(beside.length() > 0.01);
                }
                None => {
                    let pending = snapshot
                        .data()
                        .slots
                        .get(usize::from(polygon.slot().0))
                        .is_some_and(|slot| matches!(slot.state, SlotState::Pending));
                    if pending {
                        on_pending_tiles += 1;
                    } else {
                        off_mesh += 1;
                    }
                }
            }
        }
        if frame + 1 == FRAMES_PER_MINUTE {
            resident_after_minute = resident_mib();
        }
    }
    let (median_ms, p99_ms) = median_and_p99(&step_ms);
    let (frame_median_ms, frame_p99_ms) = median_and_p99(&frame_ms);
    let resident_end = resident_mib();
    println!(
        "{{\"minutes\":{minutes},\"agents\":{agent_count},\"frames\":{frames},\
         \"stale_corridor_checks\":{stale_corridors},\"lost_agents\":{lost_agents},\
         \"off_mesh_agent_frames\":{off_mesh},\"agent_frames_on_pending_tiles\":{on_pending_tiles},\"obstacles_placed\":{placed},\
         \"obstacles_refused\":{refused},\"tiles_rebuilt\":{tiles_rebuilt},\
         \"step_ms_median\":{median_ms:.3},\"step_ms_p99\":{p99_ms:.3},\
         \"p99_over_median\":{:.3},\"frame_ms_median\":{frame_median_ms:.3},\
         \"frame_ms_p99\":{frame_p99_ms:.3},\"frame_p99_over_median\":{:.3},\
         \"pool_pinned\":{pinned},\"resident_mib_after_1_minute\":{resident_after_minute:.1},\
         \"resident_mib_end\":{resident_end:.1},\"resident_growth\":{:.3},\
         \"wall_s\":{:.1}}}",
        p99_ms / median_ms,
        frame_p99_ms / frame_median_ms,
        resident_end / resident_after_minute,
        started.elapsed().as_secs_f64()
    );
}

/// The median and the 99th percentile of `times_ms`.
fn median_and_p99(times_ms: &[f64]) -> (f64, f64) {
    let mut sorted = times_ms.to_vec();
    sorted.sort_by(f64::total_cmp);
    let p99 = sorted[(sorted.len() * 99 / 100).min(sorted.len() - 1)];
    (median(&mut sorted), p99)
}
