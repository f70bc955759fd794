//! Interaction orders at scale: N agents on the generated city cycling
//! interact -> hold -> release at seeded targets, against the same agents walking, stepped in
//! alternate frames in one process.
//!
//! `cargo run --release --example interaction_cycle -- [N] [FRAMES]` (defaults 10,000
//! agents, 600 frames at 1/30 s). Both crowds start from the same seeded points with
//! DetourCrowd's parameters, avoidance on, and each agent has the same chain of seeded
//! slots, each within 4 m (in x and z) of the last. The walking crowd walks to its next
//! slot's stand point once its order ends. The interacting crowd is ordered to interact
//! with its next slot (the stand point, facing +x, a contact 0.6 m ahead at hand height; no
//! occluders), holds the pose for one second once the interaction succeeds, releases it by
//! cancelling the hold by its id, and takes the next slot once the hold has ended.
//! Frames alternate between the crowds (this machine's speed drifts from minute to minute;
//! neighbouring frames see the same machine). Prints each crowd's median frame and
//! agents/ms, their ratio (the interacting crowd is asked for at least half the
//! walking crowd's), what the interactions came to, and whether every order issued ended
//! at most once (those still under way at the end are counted apart). Then, untimed, it
//! winds the interacting crowd down (held poses released and their holds cancelled by id,
//! every other order cancelled) and steps until every order has ended. Exits non-zero if
//! an order ended twice or never, or an order never issued ended.

use std::collections::HashMap;
use std::time::Instant;
use waymark::harness::HostWorld;

use glam::{Vec2, Vec3};
use waymark::crowd::{
    AgentId, AgentParams, Crowd, CrowdConfig, CrowdEvent, HoldPolicy, KinematicController, Outcome,
    RequestId, StepStats,
};
use waymark::geom::SplitMix64;
use waymark::harness::median;
use waymark::ids::TransformVersion;
use waymark::query::{QueryFilter, nearest_polygon};
use waymark::target::{
    BodyProfile, FacingRule, InPlaceRule, InteractionRule, Placement, ShapeId, SightFrom,
    StandArea, StaticWorld, TargetRecord, Tolerances,
};

#[path = "common.rs"]
mod common;
use common::city_plans;

const DT_S: f32 = 1.0 / 30.0;
/// Frames an agent keeps the pose before it releases it.
const HOLD_FRAMES: u64 = 30;
/// Slots per agent, taken in turn (round and round).
const SLOTS_PER_AGENT: usize = 16;
/// How far (in x and in z) the next slot lies from the last, at most, metres.
const SLOT_REACH_M: f32 = 4.0;

/// A slot whose stand point is `foot`: face +x, touch a contact 0.6 m ahead at hand height.
fn slot_at(foot: Vec3, params: &AgentParams) -> TargetRecord {
    TargetRecord {
        instance: 0,
        asset_version: 1,
        placement: Placement::Fixed {
            transform_version: TransformVersion(1),
        },
        slot: 0,
        body: BodyProfile {
            radius_m: params.radius_m,
            height_m: params.height_m,
            eye_height_m: params.height_m * 0.9,
            hand_height_m: 1.2,
            hand_forward_m: 0.0,
            clearance_tolerance_m: 1e-4,
        },
        stand: StandArea::Points {
            points: vec![foot],
            continuous_offset: false,
        },
        facing: FacingRule {
            forward: Vec2::X,
            max_angle_deg: 30.0,
            in_place: InPlaceRule::Reject,
        },
        layer: 0,
        approach_side: None,
        tolerances: Tolerances {
            horizontal_m: 0.25,
            vertical_m: 0.5,
        },
        interaction: InteractionRule {
            contact: foot + Vec3::new(0.6, 1.2, 0.0),
            distance_min_m: 0.3,
            distance_max_m: 1.0,
            line_of_sight: false,
            sight_from: SightFrom::Hand,
            sight_margin_m: 0.0,
            probe: None,
        },
        target_shape: ShapeId(0),
        sample_spacing_m: 0.05,
        candidates_max: 8,
    }
}

/// Where one interacting agent is in its cycle.
#[derive(Clone, Copy, Default)]
struct Cycle {
    /// How many slots it has been sent to.
    taken: usize,
    interaction: Option<RequestId>,
    hold: Option<RequestId>,
    /// The frame its interaction succeeded (holding since).
    holding_since: Option<u64>,
    released: bool,
}

/// Every order's identity as issued, and how many times each ended.
#[derive(Default)]
struct Ledger {
    issued: HashMap<RequestId, u32>,
    ended_unissued: usize,
}

impl Ledger {
    fn issue(&mut self, order: RequestId) {
        self.issued.insert(order, 0);
    }
    fn end(&mut self, order: RequestId) {
        match self.issued.get_mut(&order) {
            Some(count) => *count += 1,
            None => self.ended_unissued += 1,
        }
    }
    /// (ended once, ended more than once, not ended yet).
    fn tally(&self) -> (usize, usize, usize) {
        let count = |wanted: fn(u32) -> bool| self.issued.values().filter(|&&c| wanted(c)).count();
        (count(|c| c == 1), count(|c| c > 1), count(|c| c == 0))
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let agents: usize = args.next().map_or(10_000, |a| a.parse().expect("N"));
    let frames: usize = args.next().map_or(600, |a| a.parse().expect("FRAMES"));

    let (mesh, plans) = city_plans(agents);
    let snapshot = mesh.snapshot();
    // Each agent's slots: a chain of seeded points, each within a few metres of the last
    // (snapped to the mesh), the first near its start; both crowds go to the same ones.
    let filter = QueryFilter::new();
    let mut random = SplitMix64::new(7);
    let slots: Vec<Vec<Vec3>> = plans
        .iter()
        .map(|plan| {
            let mut at = plan.start;
            (0..SLOTS_PER_AGENT)
                .map(|_| {
                    let offset = Vec3::new(
                        (random.next_f32() * 2.0 - 1.0) * SLOT_REACH_M,
                        0.0,
                        (random.next_f32() * 2.0 - 1.0) * SLOT_REACH_M,
                    );
                    let snapped =
                        nearest_polygon(&snapshot, at + offset, Vec3::new(1.0, 2.0, 1.0), &filter)
                            .expect("a valid query");
                    if let Some(nearest) = snapped {
                        at = nearest.point;
                    }
                    at
                })
                .collect()
        })
        .collect();
    let next_point = |agent: usize, taken: usize| slots[agent][taken % SLOTS_PER_AGENT];
    let params = AgentParams::DETOUR_REFERENCE;
    let world = StaticWorld::new();
    let host = HostWorld {
        collision: &world,
        objects: &[],
        fixed: &[],
    };

    let mut walking = Crowd::new(&mesh, CrowdConfig::default()).expect("a valid configuration");
    let mut interacting = Crowd::new(&mesh, CrowdConfig::default()).expect("a valid configuration");
    walking.reserve(agents).expect("room");
    interacting.reserve(agents).expect("room");
    let mut walkers = Vec::with_capacity(agents);
    let mut actors = Vec::with_capacity(agents);
    let mut walks_taken = vec![0usize; agents];
    let mut cycles = vec![Cycle::default(); agents];
    let mut ledger = Ledger::default();
    let mut refused = 0usize;
    for (index, plan) in plans.iter().enumerate() {
        let walker = walking
            .add_agent(plan.start, params)
            .expect("a start on the mesh");
        walking
            .request_move(walker, next_point(index, 0))
            .expect("a finite target");
        walks_taken[index] = 1;
        walkers.push(walker);
        actors.push(
            interacting
                .add_agent(plan.start, params)
                .expect("a start on the mesh"),
        );
    }
    let slot_of_walker: HashMap<AgentId, usize> =
        walkers.iter().enumerate().map(|(i, &a)| (a, i)).collect();
    let slot_of_actor: HashMap<AgentId, usize> =
        actors.iter().enumerate().map(|(i, &a)| (a, i)).collect();
    let interact = |crowd: &mut Crowd,
                    cycle: &mut Cycle,
                    ledger: &mut Ledger,
                    refused: &mut usize,
                    index: usize| {
        loop {
            let foot = next_point(index, cycle.taken);
            cycle.taken += 1;
            match crowd.request_interaction(
                actors[index],
                slot_at(foot, &params),
                HoldPolicy::SPEC_EXAMPLE,
                &host,
            ) {
                Ok((order, hold)) => {
                    ledger.issue(order);
                    ledger.issue(hold);
                    *cycle = Cycle {
                        taken: cycle.taken,
                        interaction: Some(order),
                        hold: Some(hold),
                        ..Cycle::default()
                    };
                    return;
                }
                Err(_) => *refused += 1,
            }
        }
    };
    for (index, cycle) in cycles.iter_mut().enumerate() {
        interact(&mut interacting, cycle, &mut ledger, &mut refused, index);
    }

    let mut controller = KinematicController;
    let mut frame_ms = [Vec::new(), Vec::new()];
    let mut pass_ms: [Vec<[f64; StepStats::PASSES]>; 2] = [Vec::new(), Vec::new()];
    let mut successes = 0usize;
    let mut failures: HashMap<String, usize> = HashMap::new();
    let mut releases = 0usize;
    let mut walks_ended = 0usize;
    for _ in 0..frames {
        // The walking crowd's frame.
        let clock = Instant::now();
        let events = walking.step(DT_S, &mut controller).expect("a valid step");
        frame_ms[0].push(clock.elapsed().as_secs_f64() * 1e3);
        pass_ms[0].push(walking.stats().pass_ms());
        for event in events {
            if let CrowdEvent::OrderEnded { agent, .. } = event {
                walks_ended += 1;
                if let Some(&index) = slot_of_walker.get(&agent) {
                    let target = next_point(index, walks_taken[index]);
                    walks_taken[index] += 1;
                    walking
                        .request_move(agent, target)
                        .expect("a finite target");
                }
            }
        }
        // The interacting crowd's frame.
        let clock = Instant::now();
        let events = interacting
            .step_with(DT_S, &mut controller, &host)
            .expect("a valid step");
        frame_ms[1].push(clock.elapsed().as_secs_f64() * 1e3);
        pass_ms[1].push(interacting.stats().pass_ms());
        let frame = interacting.frame();
        for event in events {
            let CrowdEvent::OrderEnded {
                agent,
                order,
                outcome,
            } = event
            else {
                continue;
            };
            ledger.end(order);
            let Some(&index) = slot_of_actor.get(&agent) else {
                continue;
            };
            let cycle = &mut cycles[index];
            if Some(order) == cycle.interaction {
                cycle.interaction = None;
                match outcome {
                    Outcome::Success => {
                        successes += 1;
                        cycle.holding_since = Some(frame);
                    }
                    other => *failures.entry(format!("{other:?}")).or_default() += 1,
                }
            } else if Some(order) == cycle.hold {
                cycle.hold = None;
            }
            if cycle.interaction.is_none() && cycle.hold.is_none() {
                interact(&mut interacting, cycle, &mut ledger, &mut refused, index);
            }
        }
        // Release the poses held long enough: the hold cancelled by its id.
        for (index, cycle) in cycles.iter_mut().enumerate() {
            if let (Some(since), Some(hold), false) =
                (cycle.holding_since, cycle.hold, cycle.released)
            {
                if frame >= since + HOLD_FRAMES {
                    interacting
                        .cancel_order(actors[index], hold)
                        .expect("the hold owns the mover");
                    cycle.released = true;
                    releases += 1;
                }
            }
        }
    }
    let (once, twice, open) = ledger.tally();
    // Wind down (not timed): no new slots; a pose held is released and its hold cancelled
    // by its id (the mode exit), every other order cancelled by its agent; then the crowd
    // steps until every order issued has ended, so each is seen to end exactly once.
    for (index, cycle) in cycles.iter().enumerate() {
        let agent = actors[index];
        match (cycle.interaction, cycle.hold) {
            (None, Some(hold)) if !cycle.released => {
                interacting
                    .release_hold(agent, hold)
                    .expect("the hold owns the mover");
                interacting
                    .cancel_order(agent, hold)
                    .expect("the hold owns the mover");
            }
            _ => {
                interacting.cancel(agent).expect("a known agent");
            }
        }
    }
    let mut wind_down_frames = 0;
    while ledger.tally().2 > 0 && wind_down_frames < 600 {
        for event in interacting
            .step_with(DT_S, &mut controller, &host)
            .expect("a valid step")
        {
            if let CrowdEvent::OrderEnded { order, .. } = event {
                ledger.end(order);
            }
        }
        wind_down_frames += 1;
    }
    let (once_at_end, twice_at_end, open_at_end) = ledger.tally();
    let [walk_ms, interact_ms] = frame_ms.map(|mut times| median(&mut times));
    let (walk_rate, interact_rate) = (agents as f64 / walk_ms, agents as f64 / interact_ms);
    println!("{agents} agents, {frames} frames each, alternating (1/30 s steps, avoidance on)");
    println!(
        "  walking:     median frame {walk_ms:.3} ms, {walk_rate:.0} agents/ms, {walks_ended} walks ended"
    );
    println!("  interacting: median frame {interact_ms:.3} ms, {interact_rate:.0} agents/ms");
    println!(
        "  interacting / walking agents/ms: {:.3}",
        interact_rate / walk_rate
    );
    println!(
        "  interactions: {successes} succeeded, {releases} poses held {HOLD_FRAMES} frames and released, failures {failures:?}, {refused} refused at admission"
    );
    println!(
        "  orders issued {}: ended once {once}, ended more than once {twice}, still under way {open}; ended without being issued {}",
        ledger.issued.len(),
        ledger.ended_unissued
    );
    println!(
        "  wound down in {wind_down_frames} frames: of {} orders issued, ended once {once_at_end}, more than once {twice_at_end}, never {open_at_end}",
        ledger.issued.len()
    );
    println!("  median ms per pass (walking, interacting):");
    for (index, name) in StepStats::PASS_NAMES.iter().enumerate() {
        let [walk, interact] = [0, 1].map(|crowd| {
            let mut times: Vec<f64> = pass_ms[crowd].iter().map(|pass| pass[index]).collect();
            median(&mut times)
        });
        println!("    {name:>12}: {walk:.3} {interact:.3}");
    }
    if twice > 0 || twice_at_end > 0 || open_at_end > 0 || ledger.ended_unissued > 0 {
        eprintln!("an order ended twice or never, or an order never issued ended");
        std::process::exit(1);
    }
}
