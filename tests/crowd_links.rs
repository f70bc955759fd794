//! Crowd agents on off-mesh links: a path may cross an open link; the follow pass brakes
//! for its entry; the crowd carries the agent over it on a fixed course (neighbours make
//! room); a link closed before the agent reaches it is never crossed; one closed during the
//! crossing still lands the agent.

use glam::{Vec2, Vec3};
use waymark::crowd::{
    AgentId, AgentParams, AgentStatus, BlockedPolicy, ConnectionWindow, Crowd, CrowdConfig,
    CrowdError, CrowdEvent, KinematicController,
};
use waymark::mesh::blob::BakeParams;
use waymark::mesh::{LinkDesc, LinkId, LinkKind, NavMesh, TileData, WalkablePolygon};
use waymark::query::Validity;

const DT: f32 = 1.0 / 30.0;

/// Where the jump starts (on the upper platform) and lands (on the lower one).
const ENTRY: Vec3 = Vec3::new(9.6, 0.0, 1.0);
const EXIT: Vec3 = Vec3::new(12.4, -1.0, 1.0);

fn quad(x0: f32, x1: f32, height: f32) -> WalkablePolygon {
    WalkablePolygon::ground(vec![
        Vec3::new(x0, height, 0.0),
        Vec3::new(x1, height, 0.0),
        Vec3::new(x1, height, 2.0),
        Vec3::new(x0, height, 2.0),
    ])
}

/// Two 10 m x 2 m platforms of 2 m squares, the upper one at height 0 over x 0..10, the
/// lower one at height -1 over x 12..22, a 2 m gap between them; joined only by a link of
/// `kind` from ENTRY to EXIT.
fn platforms(kind: LinkKind, bidirectional: bool) -> (NavMesh, LinkId) {
    let mut polygons: Vec<WalkablePolygon> = (0..5)
        .map(|i| quad(2.0 * i as f32, 2.0 * (i + 1) as f32, 0.0))
        .collect();
    polygons.extend((0..5).map(|i| quad(12.0 + 2.0 * i as f32, 14.0 + 2.0 * i as f32, -1.0)));
    let params = BakeParams {
        agent_radius_m: 0.3,
        agent_height_m: 1.8,
        agent_max_climb_m: 0.3,
        ..BakeParams::default()
    };
    let mut mesh = NavMesh::new(params);
    mesh.add_tiles(vec![TileData::from_walkable_polygons(&polygons).unwrap()])
        .unwrap();
    let link = mesh
        .add_link(LinkDesc {
            kind,
            start: ENTRY,
            end: EXIT,
            bidirectional,
            radius_m: 0.5,
            open: true,
        })
        .unwrap();
    (mesh, link)
}

/// Where the walker starts (upper platform) and wants to go (lower platform).
const START: Vec3 = Vec3::new(1.0, 0.0, 1.0);
const TARGET: Vec3 = Vec3::new(20.0, -1.0, 1.0);

/// A crowd on `mesh` with one walker at START asked to go to TARGET.
fn walker_heading_down(mesh: &NavMesh, config: CrowdConfig) -> (Crowd, AgentId) {
    let mut crowd = Crowd::new(mesh, config).unwrap();
    let agent = crowd.add_agent(START, walker()).unwrap();
    crowd.request_move(agent, TARGET).unwrap();
    (crowd, agent)
}

fn walker() -> AgentParams {
    AgentParams {
        radius_m: 0.3,
        height_m: 1.8,
        max_speed_mps: 2.0,
        preferred_speed_mps: 1.5,
        max_acceleration_mps2: 4.0,
    }
}

/// Horizontal distance from `point` to the segment from `a` to `b`, and how far along it
/// (0..1) the closest point is, in 3-D.
fn off_segment(point: Vec3, a: Vec3, b: Vec3) -> (f32, f32) {
    let t = ((point - a).dot(b - a) / (b - a).length_squared()).clamp(0.0, 1.0);
    (point.distance(a.lerp(b, t)), t)
}

/// What one agent did in a run: its events in order and, per frame, status and position.
struct Trace {
    events: Vec<CrowdEvent>,
    frames: Vec<(AgentStatus, Vec3, f32)>,
}

fn run(crowd: &mut Crowd, agent: AgentId, frames: usize) -> Trace {
    let mut trace = Trace {
        events: Vec::new(),
        frames: Vec::new(),
    };
    let mut controller = KinematicController;
    for _ in 0..frames {
        let events = crowd.step(DT, &mut controller).unwrap();
        trace.events.extend(events.into_iter().filter(|event| {
            matches!(event,
                CrowdEvent::Arrived { agent: entity, .. }
                | CrowdEvent::PartialArrived { agent: entity, .. }
                | CrowdEvent::LinkStarted { agent: entity, .. }
                | CrowdEvent::LinkFinished { agent: entity, .. }
                | CrowdEvent::NoPath { agent: entity, .. }
                | CrowdEvent::Cancelled { agent: entity, .. }
                | CrowdEvent::CancelFault { agent: entity, .. }
                | CrowdEvent::RouteInvalidated { agent: entity, .. } if *entity == agent)
        }));
        let speed = crowd.velocity(agent).unwrap().length();
        trace.frames.push((
            crowd.status(agent).unwrap(),
            crowd.position(agent).unwrap(),
            speed,
        ));
    }
    trace
}

fn kinds(events: &[CrowdEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(|event| match event {
            CrowdEvent::Arrived { .. } => "arrived",
            CrowdEvent::PartialArrived { .. } => "partial",
            CrowdEvent::LinkStarted { .. } => "link started",
            CrowdEvent::LinkFinished { .. } => "link finished",
            CrowdEvent::NoPath { .. } => "no path",
            CrowdEvent::Blocked { .. } => "blocked",
            CrowdEvent::Cancelled { .. } => "cancelled",
            CrowdEvent::CancelFault { .. } => "cancel fault",
            CrowdEvent::RouteInvalidated { .. } => "route invalidated",
            CrowdEvent::OrderEnded { .. } => "ended",
            CrowdEvent::StandFact { .. } => "stand fact",
            CrowdEvent::Quarantined { .. } => "quarantined",
        })
        .collect()
}

#[test]
fn an_agent_brakes_for_a_jump_link_crosses_it_and_walks_on_to_its_target() {
    let (mesh, link) = platforms(LinkKind::Jump, false);
    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    let target = TARGET;
    let trace = run(&mut crowd, agent, 600);
    assert_eq!(
        kinds(&trace.events),
        ["link started", "link finished", "arrived"]
    );
    assert!(matches!(trace.events[0], CrowdEvent::LinkStarted { link: l, .. } if l == link));

    let crossing: Vec<usize> = (0..trace.frames.len())
        .filter(|&frame| trace.frames[frame].0 == AgentStatus::CrossingLink)
        .collect();
    // It braked for the entry: slow and within the arrival tolerance when it started.
    let (_, before, speed_before) = trace.frames[crossing[0] - 1];
    // About 3 m at the cruising speed of 1.5 m/s: two seconds in the air, the last step
    // of which lands.
    let expected_frames = (before.distance(EXIT) / 1.5 / DT).ceil() as usize - 1;
    assert!(
        crossing.len().abs_diff(expected_frames) <= 1,
        "{} crossing frames, expected {expected_frames}",
        crossing.len()
    );
    assert!(
        before.distance(ENTRY) <= 0.25 + 1e-3,
        "started {before} from the entry"
    );
    // Braking at A = 4 m/s² to stop at the entry: at most sqrt(2 A d) (plus one step's
    // change), well under the cruising 1.5 m/s.
    let braking_bound = (2.0 * 4.0 * before.distance(ENTRY)).sqrt() + 4.0 * DT;
    assert!(
        speed_before <= braking_bound && speed_before < 0.75,
        "reached the entry at {speed_before} m/s (bound {braking_bound})"
    );
    // On its fixed course: every crossing frame on the segment, moving forward.
    let mut along = 0.0;
    for &frame in &crossing {
        let (distance, t) = off_segment(trace.frames[frame].1, before, EXIT);
        assert!(distance < 1e-3, "frame {frame}: {distance} m off the link");
        assert!(t > along, "frame {frame}: went back along the link");
        along = t;
    }
    // Landed at the exit, on the lower platform, walking again.
    let (status, landed, _) = trace.frames[*crossing.last().unwrap() + 1];
    assert!(landed.distance(EXIT) < 0.2, "landed at {landed}");
    assert_ne!(status, AgentStatus::CrossingLink);
    let last = trace.frames.last().unwrap();
    assert_eq!(last.0, AgentStatus::Arrived);
    assert!(last.1.distance(target) < 0.3, "ended at {}", last.1);
}

#[test]
fn a_link_closed_before_the_request_is_never_crossed() {
    let (mut mesh, link) = platforms(LinkKind::Door, false);
    mesh.set_link_open(link, false).unwrap();
    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    let trace = run(&mut crowd, agent, 600);
    assert_eq!(kinds(&trace.events), ["partial"]);
    // It waits at the end of its platform nearest the target, never beyond it.
    let last = trace.frames.last().unwrap();
    assert_eq!(last.0, AgentStatus::PartialArrived);
    assert!((9.0..=10.0).contains(&last.1.x), "ended at {}", last.1);
    assert!(trace.frames.iter().all(|frame| frame.1.x <= 10.0));
}

#[test]
fn a_link_closed_while_the_agent_walks_to_it_is_not_crossed() {
    let (mut mesh, link) = platforms(LinkKind::Door, false);
    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    let approach = run(&mut crowd, agent, 90);
    let (status, halfway, _) = *approach.frames.last().unwrap();
    assert_eq!(status, AgentStatus::Moving);
    assert!((3.0..8.0).contains(&halfway.x), "at {halfway} after 3 s");
    // The door closes in the agent's face.
    mesh.set_link_open(link, false).unwrap();
    crowd.set_mesh(&mesh);
    let trace = run(&mut crowd, agent, 600);
    // The route is reported invalidated by the door, not silently re-planned.
    assert_eq!(kinds(&trace.events), ["route invalidated", "partial"]);
    assert!(matches!(
        trace.events[0],
        CrowdEvent::RouteInvalidated { changed: Validity::LinkChanged(closed), .. } if closed == link
    ));
    assert!(trace.frames.iter().all(|frame| frame.1.x <= 10.0));
}

#[test]
fn a_link_closed_during_the_crossing_still_lands_the_agent() {
    let (mut mesh, link) = platforms(LinkKind::Jump, false);
    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    let target = TARGET;
    let mut controller = KinematicController;
    while crowd.status(agent).unwrap() != AgentStatus::CrossingLink {
        crowd.step(DT, &mut controller).unwrap();
        assert!(crowd.frame() < 600, "never reached the link");
    }
    mesh.set_link_open(link, false).unwrap();
    crowd.set_mesh(&mesh);
    // The crossing finishes; the corridor read the link's old version, so the agent asks
    // for a new path from where it landed, which needs no link.
    let trace = run(&mut crowd, agent, 600);
    assert_eq!(
        kinds(&trace.events),
        ["link finished", "route invalidated", "arrived"]
    );
    assert!(trace.frames.last().unwrap().1.distance(target) < 0.3);
}

#[test]
fn a_bidirectional_link_is_crossed_backwards_from_its_end() {
    let (mesh, link) = platforms(LinkKind::Ladder, true);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let agent = crowd
        .add_agent(Vec3::new(20.0, -1.0, 1.0), walker())
        .unwrap();
    let target = Vec3::new(1.0, 0.0, 1.0);
    crowd.request_move(agent, target).unwrap();
    let trace = run(&mut crowd, agent, 600);
    assert_eq!(
        kinds(&trace.events),
        ["link started", "link finished", "arrived"]
    );
    assert!(matches!(trace.events[1], CrowdEvent::LinkFinished { link: l, .. } if l == link));
    let landed = trace
        .frames
        .windows(2)
        .find(|pair| {
            pair[0].0 == AgentStatus::CrossingLink && pair[1].0 != AgentStatus::CrossingLink
        })
        .map(|pair| pair[1].1)
        .unwrap();
    assert!(landed.distance(ENTRY) < 0.2, "landed at {landed}");
    assert!(trace.frames.last().unwrap().1.distance(target) < 0.3);
}

#[test]
fn without_links_the_crowd_stops_at_the_gap() {
    let (mesh, _) = platforms(LinkKind::Jump, false);
    let config = CrowdConfig {
        use_links: false,
        ..CrowdConfig::default()
    };
    let (mut crowd, agent) = walker_heading_down(&mesh, config);
    let trace = run(&mut crowd, agent, 600);
    assert_eq!(kinds(&trace.events), ["partial"]);
}

#[test]
fn walkers_make_room_for_an_agent_crossing_a_link() {
    let (mesh, _) = platforms(LinkKind::Jump, false);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let jumper = crowd.add_agent(Vec3::new(1.0, 0.0, 1.0), walker()).unwrap();
    crowd
        .request_move(jumper, Vec3::new(20.0, -1.0, 1.0))
        .unwrap();
    // Agents standing on the landing spot and walking through it when the jumper lands.
    let stander = crowd.add_agent(EXIT, walker()).unwrap();
    let crosser = crowd
        .add_agent(Vec3::new(21.0, -1.0, 1.0), walker())
        .unwrap();
    let mut controller = KinematicController;
    let (mut started, mut landed_at) = (None, None);
    let mut sent = false;
    for _ in 0..900 {
        let events = crowd.step(DT, &mut controller).unwrap();
        for event in &events {
            match *event {
                CrowdEvent::LinkStarted { agent: entity, .. } if entity == jumper => {
                    started = Some(crowd.position(jumper).unwrap());
                }
                CrowdEvent::LinkFinished { agent: entity, .. } if entity == jumper => {
                    landed_at = Some(crowd.position(jumper).unwrap());
                }
                _ => {}
            }
        }
        if started.is_some() && !sent {
            crowd
                .request_move(crosser, Vec3::new(12.5, -1.0, 1.0))
                .unwrap();
            sent = true;
        }
        if let (Some(from), None) = (started, landed_at) {
            // Nobody pushes the jumper off its course.
            let (distance, _) = off_segment(crowd.position(jumper).unwrap(), from, EXIT);
            assert!(distance < 1e-3, "pushed {distance} m off the link");
        }
    }
    let landed_at = landed_at.expect("the jumper landed");
    assert!(landed_at.distance(EXIT) < 0.2, "landed at {landed_at}");
    assert_eq!(crowd.status(jumper).unwrap(), AgentStatus::Arrived);
    // The agent standing on the landing spot was pushed aside, not the jumper.
    assert!(crowd.position(stander).unwrap().distance(EXIT) > 0.3);
}

#[test]
fn the_host_can_follow_a_crossing_for_its_animation() {
    let (mesh, link) = platforms(LinkKind::Jump, false);
    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    let mut controller = KinematicController;
    assert_eq!(crowd.crossing(agent).unwrap(), None);
    let mut progress = Vec::new();
    for _ in 0..600 {
        crowd.step(DT, &mut controller).unwrap();
        if let Some(state) = crowd.crossing(agent).unwrap() {
            assert_eq!(state.link, link);
            assert_eq!(state.to, EXIT);
            // The foot is where the progress says, on the segment.
            let expected = state.from.lerp(state.to, state.progress);
            assert!(crowd.position(agent).unwrap().distance(expected) < 1e-4);
            // The controller is asked to stand still: the crowd carries the agent.
            let request = crowd
                .lanes()
                .step_request(crowd.slot_of(agent).unwrap(), DT);
            assert_eq!(
                (request.velocity, request.desired),
                (Vec2::ZERO, Vec2::ZERO)
            );
            progress.push(state.progress);
        }
    }
    assert!(progress.len() > 30, "{} crossing frames", progress.len());
    assert!(progress.windows(2).all(|pair| pair[1] > pair[0]));
    assert!(progress[0] > 0.0 && *progress.last().unwrap() < 1.0);
    assert_eq!(crowd.crossing(agent).unwrap(), None, "landed");
    assert!(
        crowd
            .crossing(AgentId::from_bits(u64::MAX).unwrap())
            .is_err()
    );
}

/// Steps until the agent is in the air over the link.
fn step_until_crossing(crowd: &mut Crowd, agent: AgentId) {
    let mut controller = KinematicController;
    while crowd.status(agent).unwrap() != AgentStatus::CrossingLink {
        crowd.step(DT, &mut controller).unwrap();
        assert!(crowd.frame() < 600, "never reached the link");
    }
}

#[test]
fn a_request_made_in_the_air_is_served_from_the_landing() {
    let (mesh, _) = platforms(LinkKind::Jump, false);
    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    step_until_crossing(&mut crowd, agent);
    // A new target on the lower platform, given mid-jump: the crossing is not cut short.
    let new_target = Vec3::new(14.0, -1.0, 1.5);
    crowd.request_move(agent, new_target).unwrap();
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::CrossingLink);
    let trace = run(&mut crowd, agent, 600);
    assert_eq!(kinds(&trace.events), ["link finished", "arrived"]);
    assert!(trace.frames.last().unwrap().1.distance(new_target) < 0.3);
}

#[test]
fn a_cancel_in_the_air_completes_at_landing_with_its_receipt() {
    let (mesh, _) = platforms(LinkKind::Jump, false);
    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    step_until_crossing(&mut crowd, agent);
    let record = crowd.cancel(agent).unwrap();
    // The crossing is not cut short: the cancel completes at landing, once it has stopped.
    assert_eq!(crowd.status(agent).unwrap(), AgentStatus::CrossingLink);
    assert_eq!(
        crowd.cancel(agent).unwrap(),
        record,
        "the same record again"
    );
    let trace = run(&mut crowd, agent, 120);
    assert_eq!(kinds(&trace.events), ["link finished", "cancelled"]);
    assert!(
        trace
            .events
            .iter()
            .any(|event| matches!(event, CrowdEvent::Cancelled { record: r, .. } if *r == record))
    );
    let (status, position, _) = *trace.frames.last().unwrap();
    assert_eq!(status, AgentStatus::Idle);
    assert!(position.distance(EXIT) < 0.5, "stopped at {position}");
}

#[test]
fn removing_an_agent_in_the_air_leaves_the_others_walking() {
    let (mesh, _) = platforms(LinkKind::Jump, false);
    let (mut crowd, jumper) = walker_heading_down(&mesh, CrowdConfig::default());
    let other = crowd
        .add_agent(Vec3::new(14.0, -1.0, 1.0), walker())
        .unwrap();
    crowd
        .request_move(other, Vec3::new(20.0, -1.0, 1.0))
        .unwrap();
    step_until_crossing(&mut crowd, jumper);
    crowd.remove_agent(jumper).unwrap();
    assert!(crowd.crossing(jumper).is_err());
    // The other agent (moved into the removed one's slot) takes a new walk.
    crowd
        .request_move(other, Vec3::new(13.0, -1.0, 1.0))
        .unwrap();
    let trace = run(&mut crowd, other, 300);
    assert_eq!(kinds(&trace.events), ["arrived"]);
    assert_eq!(crowd.len(), 1);
}

/// Steps the walker `frames` frames; the frame of each crossing's start, and each frame's
/// (status, position).
fn run_windowed(
    crowd: &mut Crowd,
    agent: AgentId,
    frames: u64,
) -> (Vec<u64>, Vec<(AgentStatus, Vec3)>, Vec<&'static str>) {
    let mut controller = KinematicController;
    let (mut starts, mut trace, mut others) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..frames {
        let frame = crowd.frame();
        let events = crowd.step(DT, &mut controller).unwrap();
        for event in &events {
            match event {
                CrowdEvent::LinkStarted { agent: a, .. } if *a == agent => starts.push(frame),
                CrowdEvent::RouteInvalidated { .. }
                | CrowdEvent::NoPath { .. }
                | CrowdEvent::Blocked { .. } => {
                    others.extend(kinds(std::slice::from_ref(event)));
                }
                _ => {}
            }
        }
        trace.push((crowd.status(agent).unwrap(), crowd.position(agent).unwrap()));
    }
    (starts, trace, others)
}

/// A lift door: open 90 frames (3 s) of every 600, first at `first_open_frame`.
fn lift_door(first_open_frame: u64, open_frames: u64) -> ConnectionWindow {
    ConnectionWindow {
        first_open_frame,
        open_frames,
        period_frames: 600,
    }
}

#[test]
fn a_connection_is_crossed_only_when_the_crossing_fits_in_its_window_and_the_agent_waits_at_the_edge()
 {
    let (mesh, link) = platforms(LinkKind::Door, false);
    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    // Open at frames 100..190: the walker reaches the entry at about frame 190 (9 m at
    // 1.5 m/s), with too little of the window left for its 2 s crossing, so it waits for
    // the next opening, frames 700..790.
    crowd
        .set_link_window(link, Some(lift_door(100, 90)))
        .unwrap();
    assert_eq!(crowd.link_window(link), Some(lift_door(100, 90)));
    let (starts, trace, others) = run_windowed(&mut crowd, agent, 1000);
    assert_eq!(starts, [700], "the crossing started at frame {starts:?}");
    assert!(
        others.is_empty(),
        "no new path asked for, no block: {others:?}"
    );
    // Every frame before the start: on the upper platform, on its own side of the gap.
    let waiting: Vec<Vec3> = trace[..700]
        .iter()
        .map(|&(status, position)| {
            assert_ne!(status, AgentStatus::CrossingLink);
            assert!(
                position.x <= ENTRY.x + 0.3 && position.y.abs() < 1e-3,
                "{position} left the platform before the window"
            );
            position
        })
        .collect();
    // It stood at the edge, not somewhere short of it: the last 400 frames within the
    // arrival tolerance of the entry, still.
    for position in &waiting[300..] {
        assert!(
            position.distance(ENTRY) <= 0.25 + 1e-3,
            "waited at {position}"
        );
    }
    // The crossing landed within the window (frames 700..790) and the walk went on.
    let landed = (700..trace.len())
        .find(|&frame| trace[frame].0 != AgentStatus::CrossingLink)
        .unwrap();
    assert!(
        landed < 790,
        "landed at frame {landed}, after the window closed"
    );
    assert_eq!(trace.last().unwrap().0, AgentStatus::Arrived);
}

#[test]
fn a_connection_open_at_arrival_is_crossed_at_once_and_a_window_removed_lets_it_be_crossed_freely()
{
    let (mesh, link) = platforms(LinkKind::Door, false);
    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    // Open from frame 150 for 300 frames: open when the walker gets there.
    crowd
        .set_link_window(link, Some(lift_door(150, 300)))
        .unwrap();
    let (starts, _, _) = run_windowed(&mut crowd, agent, 400);
    assert_eq!(starts.len(), 1);
    assert!((170..230).contains(&starts[0]), "started at {}", starts[0]);

    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    crowd
        .set_link_window(link, Some(lift_door(5000, 90)))
        .unwrap();
    crowd.set_link_window(link, None).unwrap();
    assert_eq!(crowd.link_window(link), None);
    let (starts, _, _) = run_windowed(&mut crowd, agent, 400);
    assert_eq!(starts.len(), 1, "crossed once the window was removed");
}

#[test]
fn a_window_on_an_unknown_link_or_one_that_cannot_open_is_refused_by_value() {
    let (mesh, link) = platforms(LinkKind::Door, false);
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).unwrap();
    let error = crowd
        .set_link_window(LinkId(77), Some(lift_door(0, 90)))
        .unwrap_err();
    assert!(
        matches!(error, CrowdError::UnknownLink(LinkId(77))),
        "{error}"
    );
    let error = crowd
        .set_link_window(link, Some(lift_door(0, 601)))
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("open_frames must be at most period_frames")
            && error.to_string().contains("601"),
        "{error}"
    );
    assert_eq!(crowd.link_window(link), None, "a refused window is not set");
}

#[test]
fn a_connection_window_is_saved_and_a_restored_walker_waits_for_it_the_same_way() {
    let (mesh, link) = platforms(LinkKind::Door, false);
    let (mut crowd, agent) = walker_heading_down(&mesh, CrowdConfig::default());
    crowd
        .set_link_window(link, Some(lift_door(100, 90)))
        .unwrap();
    let mut controller = KinematicController;
    for _ in 0..400 {
        crowd.step(DT, &mut controller).unwrap();
    }
    let bytes = crowd.save();
    let mut restored = Crowd::restore(&mesh, CrowdConfig::default(), &bytes).unwrap();
    assert_eq!(restored.link_window(link), Some(lift_door(100, 90)));
    let (starts, _, _) = run_windowed(&mut restored, agent, 600);
    let (whole, _, _) = run_windowed(&mut crowd, agent, 600);
    assert_eq!(starts, [700]);
    assert_eq!(starts, whole);
}

#[test]
fn waiting_for_a_connection_is_no_block_an_order_that_fails_after_two_seconds_still_crosses() {
    let (mesh, link) = platforms(LinkKind::Door, false);
    let config = CrowdConfig {
        blocked_policy: BlockedPolicy::FailAfter { seconds: 2.0 },
        ..CrowdConfig::default()
    };
    let (mut crowd, agent) = walker_heading_down(&mesh, config);
    // About 17 s at the entry before the door opens at frame 700.
    crowd
        .set_link_window(link, Some(lift_door(100, 90)))
        .unwrap();
    let (starts, trace, others) = run_windowed(&mut crowd, agent, 1000);
    assert_eq!(starts, [700]);
    assert!(others.is_empty(), "{others:?}");
    assert_eq!(trace.last().unwrap().0, AgentStatus::Arrived);
}
