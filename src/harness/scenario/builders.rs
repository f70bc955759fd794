//! The scenarios' levels and agents, built by hand: two rooms with a door, a crossing, a
//! circle, a corridor, a bottleneck, and the moving supports (a conveyor belt, a turntable,
//! a shuttling platform).
//!
//! Stage: harness. Input: a scenario kind and an agent count; output: the [`Scenario`]'s
//! mesh, agents and limits. Invariant: every start and target lies on the mesh.

use glam::Vec3;

use crate::crowd::{
    AgentParams, AvoidanceConfig, CrowdConfig, LinkDock, PlatformMotion, PlatformPose, Shuttle,
    SupportMotion,
};
use crate::ids::SupportId;
use crate::mesh::{LinkDesc, LinkKind, WalkablePolygon};

use super::{Scenario, ScenarioKind, WALKER, mesh_of, rectangle};

/// The longest start-to-target straight line at the walkers' preferred speed, seconds.
pub(super) fn straight_line_s(agents: &[(Vec3, Vec3)]) -> f32 {
    agents
        .iter()
        .map(|(start, target)| start.distance(*target))
        .fold(0.0, f32::max)
        / WALKER.preferred_speed_mps
}

/// Two square rooms `room` metres a side joined through their facing walls by a passage
/// `passage_m` long and `passage_width` wide, centred on the rooms' middle, as agent-centre
/// space for bodies of `radius` (walls shrunk by the radius, the passage 2r narrower).
/// Returns the polygons and the x of the left room's far side (where the passage starts),
/// of the right room's near side and of its far side.
pub(super) fn two_rooms_polygons(
    room: f32,
    passage_m: f32,
    passage_width: f32,
    radius: f32,
) -> ([WalkablePolygon; 7], f32, f32, f32) {
    let (low, high) = (radius, room - radius);
    let (left_end, right_start) = (room - radius, room + passage_m + radius);
    let right_end = 2.0 * room + passage_m - radius;
    let (pass_low, pass_high) = (
        room * 0.5 - passage_width * 0.5 + radius,
        room * 0.5 + passage_width * 0.5 - radius,
    );
    let polygons = [
        rectangle(low, low, left_end, pass_low),
        rectangle(low, pass_low, left_end, pass_high),
        rectangle(low, pass_high, left_end, high),
        rectangle(left_end, pass_low, right_start, pass_high),
        rectangle(right_start, low, right_end, pass_low),
        rectangle(right_start, pass_low, right_end, pass_high),
        rectangle(right_start, pass_high, right_end, high),
    ];
    (polygons, left_end, right_start, right_end)
}

/// Two square rooms joined through their facing walls: by a corridor four bodies wide and
/// 20 m long (`CorridorSwap`) or by a 2 m door in a 0.5 m wall (`Doorway`). Half the
/// agents start in the left room in a grid a metre apart and walk to the same place in the
/// right room; the other half (with `both_ways`) do the opposite, so the groups meet
/// head-on in the passage. Without `both_ways` only the first half runs.
pub(super) fn two_rooms(kind: ScenarioKind, agents: usize, both_ways: bool) -> Scenario {
    let radius = WALKER.radius_m;
    let per_group = agents.div_ceil(2);
    let spacing = 1.0;
    let rows = (per_group as f32).sqrt().ceil() as usize;
    let room = rows as f32 * spacing + 2.0;
    let (passage_m, passage_width) = match kind {
        ScenarioKind::CorridorSwap => (20.0, 4.0 * 2.0 * radius),
        _ => (0.5, 2.0),
    };
    let (polygons, left_end, right_start, _) =
        two_rooms_polygons(room, passage_m, passage_width, radius);
    // Each group fills its room from the wall it leaves through, backwards; its places
    // are the other group's starts.
    let left = block(per_group, rows, spacing, left_end - 0.6, -1.0, room * 0.5);
    let right = block(per_group, rows, spacing, right_start + 0.6, 1.0, room * 0.5);
    let mut pairs: Vec<(Vec3, Vec3)> = left.iter().copied().zip(right.iter().copied()).collect();
    if both_ways {
        pairs.extend(right.into_iter().zip(left).take(agents - per_group));
    }
    let straight_line_s = straight_line_s(&pairs);
    Scenario {
        kind,
        supports: Vec::new(),
        walk_times_s: Vec::new(),
        platforms: Vec::new(),
        link_docks: Vec::new(),
        mesh: mesh_of(&polygons),
        params: WALKER,
        config: CrowdConfig::default(),
        dt_s: 0.1,
        straight_line_s,
        time_limit_s: 120.0 + 3.0 * agents as f32,
        agents: pairs,
    }
}

/// A square plaza, sized from the crowd (a body per 16 m²); a quarter of the agents start
/// in a block along each side and walk to the same place on the opposite side, so the four
/// groups meet in the middle.
pub(super) fn crossing(agents: usize) -> Scenario {
    let radius = WALKER.radius_m;
    let per_group = agents.div_ceil(4);
    let side = (16.0 * agents as f32).sqrt().max(20.0);
    let spacing = 1.0;
    let rows = ((side * 0.5) / spacing).floor().max(1.0) as usize;
    let centre = side * 0.5;
    let (near, far) = (radius + 0.6, side - radius - 0.6);
    // West and east groups: blocks of `rows` across z, filling outward from their edge.
    let west = block(per_group, rows, spacing, near, 1.0, centre);
    let mut pairs: Vec<(Vec3, Vec3)> = Vec::with_capacity(agents);
    let mirror_x = |p: Vec3| Vec3::new(side - p.x, 0.0, p.z);
    // North and south groups: the west block turned a quarter.
    let turn = |p: Vec3| Vec3::new(p.z, 0.0, p.x);
    let mirror_z = |p: Vec3| Vec3::new(p.x, 0.0, side - p.z);
    for (index, &start) in west.iter().enumerate() {
        let groups = [
            (start, mirror_x(start)),
            (mirror_x(start), start),
            (turn(start), mirror_z(turn(start))),
            (mirror_z(turn(start)), turn(start)),
        ];
        for (group, pair) in groups.into_iter().enumerate() {
            if index * 4 + group < agents {
                pairs.push(pair);
            }
        }
    }
    debug_assert!(
        pairs
            .iter()
            .all(|(s, _)| s.x >= near - 1e-3 && s.x <= far + 1e-3)
    );
    let straight_line_s = straight_line_s(&pairs);
    Scenario {
        kind: ScenarioKind::Crossing,
        supports: Vec::new(),
        walk_times_s: Vec::new(),
        platforms: Vec::new(),
        link_docks: Vec::new(),
        mesh: mesh_of(&[rectangle(radius, radius, side - radius, side - radius)]),
        params: WALKER,
        config: CrowdConfig::default(),
        dt_s: 0.1,
        straight_line_s,
        time_limit_s: 120.0 + 2.0 * agents as f32,
        agents: pairs,
    }
}

/// The slow turn of the circle scenario, radians: enough that the crush at the centre
/// circulates instead of standing.
pub const CIRCLE_SLOW_TURN_RAD: f32 = 0.7;

/// RVO2's example scaled: ring radius 0.8 m per agent (800 m for 1,000), radius 1.5,
/// preferred speed 1, max speed 2, neighbour distance 15, K 10, horizon 10, step 0.25 s.
/// Open ground, so the crowd runs with inelastic contacts and the slow turn (0.7 rad): the
/// crush at the centre neither sinks in nor stalls.
pub(super) fn circle(agents: usize) -> Scenario {
    let ring_m = 0.8 * agents as f32;
    let half = ring_m + 20.0;
    let params = AgentParams {
        radius_m: 1.5,
        height_m: 2.0,
        max_speed_mps: 2.0,
        preferred_speed_mps: 1.0,
        // RVO2 changes velocity at will; 8 m/s² reaches any admissible velocity in a step.
        max_acceleration_mps2: 8.0,
    };
    let starts: Vec<(Vec3, Vec3)> = (0..agents)
        .map(|i| {
            let angle = i as f32 * std::f32::consts::TAU / agents as f32;
            let start = Vec3::new(angle.cos() * ring_m, 0.0, angle.sin() * ring_m);
            (start, Vec3::new(-start.x, 0.0, -start.z))
        })
        .collect();
    Scenario {
        kind: ScenarioKind::Circle,
        supports: Vec::new(),
        walk_times_s: Vec::new(),
        platforms: Vec::new(),
        link_docks: Vec::new(),
        mesh: mesh_of(&[rectangle(-half, -half, half, half)]),
        params,
        config: CrowdConfig {
            arrive_tolerance_m: params.radius_m,
            avoidance: AvoidanceConfig {
                neighbours_max: 10,
                neighbour_range_m: 15.0,
                time_horizon_s: 10.0,
                wall_time_horizon_s: 10.0,
                inelastic_contact: true,
                slow_turn_rad: CIRCLE_SLOW_TURN_RAD,
                // Open ground: the slow turn circulates the crush, nobody need pass
                // through or squeeze past anybody (with both the ring finishes in 1.13x
                // the straight line instead of 1.22x, but bodies cross: deepest overlap
                // 1.8 m).
                pass_through_after_s: 0.0,
                squeeze_fraction: 0.0,
                ..AvoidanceConfig::default()
            },
            ..CrowdConfig::default()
        },
        dt_s: 0.25,
        agents: starts,
        time_limit_s: 4.0 * 2.0 * ring_m / params.preferred_speed_mps,
        straight_line_s: 2.0 * ring_m / params.preferred_speed_mps,
    }
}

/// Agents in blocks `rows` deep across, `spacing_m` apart, the first column at `x0` going
/// in direction `step` (+1 or -1) along x, centred on `z_centre`.
pub(super) fn block(
    count: usize,
    rows: usize,
    spacing_m: f32,
    x0: f32,
    step: f32,
    z_centre: f32,
) -> Vec<Vec3> {
    (0..count)
        .map(|i| {
            let (column, row) = (i / rows, i % rows);
            let z = z_centre + (row as f32 - (rows - 1) as f32 * 0.5) * spacing_m;
            Vec3::new(x0 + step * column as f32 * spacing_m, 0.0, z)
        })
        .collect()
}

/// A 6 m wide (for centres: 6 - 2r) corridor, 30 m plus room for the two groups; half the
/// agents start at each end and walk to the same place at the other end.
pub(super) fn corridor(agents: usize) -> Scenario {
    let radius = WALKER.radius_m;
    let spacing = 1.2;
    let rows = 4;
    let half_count = agents.div_ceil(2);
    let block_m = half_count.div_ceil(rows) as f32 * spacing;
    let length = 30.0 + 2.0 * block_m;
    let (z0, z1) = (radius, 6.0 - radius);
    let z_centre = 3.0;
    let left = block(half_count, rows, spacing, 1.0, 1.0, z_centre);
    let right = block(
        agents - half_count,
        rows,
        spacing,
        length - 1.0,
        -1.0,
        z_centre,
    );
    let mut pairs: Vec<(Vec3, Vec3)> = Vec::with_capacity(agents);
    for (index, &start) in left.iter().enumerate() {
        // Keep formation: the front of the group aims at the far end.
        let target = Vec3::new(length - start.x, 0.0, start.z);
        pairs.push((start, target));
        if let Some(&other) = right.get(index) {
            pairs.push((other, Vec3::new(length - other.x, 0.0, other.z)));
        }
    }
    Scenario {
        kind: ScenarioKind::Corridor,
        supports: Vec::new(),
        walk_times_s: Vec::new(),
        platforms: Vec::new(),
        link_docks: Vec::new(),
        mesh: mesh_of(&[rectangle(0.0, z0, length, z1)]),
        params: WALKER,
        config: CrowdConfig::default(),
        dt_s: 0.1,
        straight_line_s: (length - 2.0) / WALKER.preferred_speed_mps,
        time_limit_s: 10.0 * (length - 2.0) / WALKER.preferred_speed_mps,
        agents: pairs,
    }
}

/// Two 20 m rooms joined by a 2 m door in a 0.5 m wall; everyone starts in the left room in
/// a grid and has a place in the right room.
pub(super) fn bottleneck(agents: usize) -> Scenario {
    let radius = WALKER.radius_m;
    let room = 20.0;
    let wall = 0.5;
    let door = 2.0;
    let (polygons, left_end, _, right_end) = two_rooms_polygons(room, wall, door, radius);
    let spacing = 1.0;
    let rows = 18;
    // The crowd fills the left room from the wall backwards; places fill the right room
    // from its far wall.
    let starts = block(agents, rows, spacing, left_end - 1.0, -1.0, room * 0.5);
    let places = block(agents, rows, spacing, right_end - 1.0, -1.0, room * 0.5);
    Scenario {
        kind: ScenarioKind::Bottleneck,
        supports: Vec::new(),
        walk_times_s: Vec::new(),
        platforms: Vec::new(),
        link_docks: Vec::new(),
        mesh: mesh_of(&polygons),
        params: WALKER,
        config: CrowdConfig::default(),
        dt_s: 0.1,
        straight_line_s: (room + wall) / WALKER.preferred_speed_mps,
        time_limit_s: 60.0 + 4.0 * agents as f32,
        agents: starts.into_iter().zip(places).collect(),
    }
}

/// The conveyor's belts: 30 m long, from x = 0, at the walkers' 1 m/s.
pub(super) const BELT_M: f32 = 30.0;
pub(super) const BELT_SPEED_MPS: f32 = 1.0;

/// Two lanes 2 m wide (for centres), 18 m apart (beyond the neighbour range): in each,
/// ground from behind the start file to x = 0, a 30 m belt, then ground with a place for
/// every walker of the lane (two files 1 m apart, a metre between places, the first
/// walker's farthest, so nobody passes one who stands). The first lane's belt (support 0)
/// moves +1 m/s, with the walkers; the second's (support 1) -1 m/s, against them. Half
/// the agents start in a file in each lane, spaced so that nobody queues: 3 m apart with
/// the belt (2 m apart, walkers stepping off at 2.4 m/s bunch up at the places and lose
/// up to 12% of their time), 3.5 m against it (on that belt they close up to 1 m). So the
/// closed form holds for every walker: the ground at the preferred speed, the belt at the
/// preferred speed plus or minus the belt's, and the preferred speed over the
/// acceleration for speeding up and braking (the files' 0.5 m to either side of the start
/// line are left out: under 0.01% of the walk).
pub(super) fn conveyor(agents: usize) -> Scenario {
    let speed = WALKER.preferred_speed_mps;
    let with = agents.div_ceil(2);
    let against = agents - with;
    let lanes = [
        (0.0f32, with, 3.0f32, 1u16, BELT_SPEED_MPS),
        (20.0, against, 3.5, 2, -BELT_SPEED_MPS),
    ];
    let mut polygons = Vec::new();
    let mut pairs = Vec::with_capacity(agents);
    let mut walk_times_s = Vec::with_capacity(agents);
    let mut supports = Vec::new();
    for (z0, count, spacing, layer, belt_speed) in lanes {
        let behind = -(count as f32 * spacing + 2.0);
        let places_m = count.div_ceil(2) as f32 + 2.0;
        polygons.push(rectangle(behind, z0, 0.0, z0 + 2.0));
        let mut belt = rectangle(0.0, z0, BELT_M, z0 + 2.0);
        belt.layer = layer;
        polygons.push(belt);
        polygons.push(rectangle(BELT_M, z0, BELT_M + places_m, z0 + 2.0));
        supports.push((
            SupportId(u32::from(layer) - 1),
            SupportMotion::belt(Vec3::new(belt_speed, 0.0, 0.0)),
        ));
        for index in 0..count {
            let start = Vec3::new(-1.0 - index as f32 * spacing, 0.0, z0 + 1.0);
            let place = Vec3::new(
                BELT_M + places_m - 1.0 - (index / 2) as f32,
                0.0,
                z0 + 0.5 + (index % 2) as f32,
            );
            let ground_m = -start.x + (place.x - BELT_M);
            walk_times_s.push(
                ground_m / speed
                    + BELT_M / (speed + belt_speed)
                    + speed / WALKER.max_acceleration_mps2,
            );
            pairs.push((start, place));
        }
    }
    let straight_line_s = straight_line_s(&pairs);
    let slowest = walk_times_s.iter().copied().fold(0.0, f32::max);
    Scenario {
        kind: ScenarioKind::Conveyor,
        supports,
        walk_times_s,
        platforms: Vec::new(),
        link_docks: Vec::new(),
        mesh: mesh_of(&polygons),
        params: WALKER,
        config: CrowdConfig::default(),
        dt_s: 0.1,
        straight_line_s,
        time_limit_s: 2.0 * slowest + 30.0,
        agents: pairs,
    }
}

/// The turntable's circumradius (an octagon 6 m across) and turn rate: its rim moves at
/// 1.5 m/s, faster than the walkers' 1.4 m/s pace and within their 2 m/s limit.
pub(super) const TURNTABLE_RADIUS_M: f32 = 3.0;
pub(super) const TURNTABLE_RATE_RAD_S: f32 = 0.5;

/// A turntable between two plazas (support 0, layer 1, centred on the origin): a regular
/// octagon with flat west and east edges, cut into four quarter slices; each of those
/// edges (2.3 m) joins a 2 m neck to a plaza 16 m across. Half the agents start in a
/// block on each plaza, a metre apart, and have a place in the same block on the other:
/// the two groups meet on the turning table. The table's polygons stay where they are (an
/// octagon turned is, to the navigation mesh, the same octagon); the bodies on it are
/// carried round its centre and lean into the carry to cross.
pub(super) fn turntable(agents: usize) -> Scenario {
    let radius = TURNTABLE_RADIUS_M;
    let corner = |index: usize| {
        let angle = (22.5f32 + 45.0 * index as f32).to_radians();
        Vec3::new(radius * angle.cos(), 0.0, radius * angle.sin())
    };
    let mut polygons = Vec::new();
    for quarter in 0..4 {
        let mut slice = WalkablePolygon::ground(vec![
            Vec3::ZERO,
            corner(2 * quarter),
            corner(2 * quarter + 1),
            corner((2 * quarter + 2) % 8),
        ]);
        slice.layer = 1;
        polygons.push(slice);
    }
    // The flat edges: x = ±radius cos 22.5°, |z| <= radius sin 22.5° (corners 3-4, 7-0).
    let (edge_x, half_width) = (corner(0).x, corner(0).z);
    let (neck_m, half_plaza) = (2.0, 8.0);
    let rows = 14;
    let per_side = agents.div_ceil(2);
    let plaza_m = per_side.div_ceil(rows) as f32 + 2.0;
    for side in [-1.0f32, 1.0] {
        let (near, mid, far) = (
            side * edge_x,
            side * (edge_x + neck_m),
            side * (edge_x + neck_m + plaza_m),
        );
        polygons.push(rectangle(
            near.min(mid),
            -half_width,
            near.max(mid),
            half_width,
        ));
        let (low, high) = (mid.min(far), mid.max(far));
        polygons.push(rectangle(low, -half_plaza, high, -half_width));
        polygons.push(rectangle(low, -half_width, high, half_width));
        polygons.push(rectangle(low, half_width, high, half_plaza));
    }
    let first_column = edge_x + neck_m + 1.0;
    let west = block(per_side, rows, 1.0, -first_column, -1.0, 0.0);
    let east = block(agents - per_side, rows, 1.0, first_column, 1.0, 0.0);
    let mut pairs = Vec::with_capacity(agents);
    for (index, &start) in west.iter().enumerate() {
        // Each takes the mirror place: the front of one group is the back of the other.
        pairs.push((start, Vec3::new(-start.x, 0.0, start.z)));
        if let Some(&other) = east.get(index) {
            pairs.push((other, Vec3::new(-other.x, 0.0, other.z)));
        }
    }
    let straight_line_s = straight_line_s(&pairs);
    Scenario {
        kind: ScenarioKind::Turntable,
        supports: vec![(
            SupportId(0),
            SupportMotion::turntable(Vec3::ZERO, TURNTABLE_RATE_RAD_S),
        )],
        walk_times_s: Vec::new(),
        platforms: Vec::new(),
        link_docks: Vec::new(),
        mesh: mesh_of(&polygons),
        params: WALKER,
        config: CrowdConfig::default(),
        dt_s: 0.1,
        straight_line_s,
        time_limit_s: 120.0 + 4.0 * agents as f32,
        agents: pairs,
    }
}

/// Where a platform's polygons are baked, in their own frame: 40 m below and 100 m beside
/// everything else, so no query near the ground finds them and no edge joins them to it.
pub(super) const PLATFORM_BAKED_AT: Vec3 = Vec3::new(0.0, -40.0, 100.0);

/// A crowd crossing between two plazas on a shuttling platform (support 0, layer 1), the
/// only way between them. The ferry: plazas at the same height either side of a 20 m
/// river, a 6 x 12 m deck going 13 m between docks 0.5 m off each bank (12 s at each dock,
/// 10 s across), six ramps at each dock. The lift: floors 4 m apart on either side of a
/// 4 x 4 m car going up and down in its shaft (8 s at each floor, 4 s between), four doors
/// at each floor. Each ramp or door is a link from the plaza's edge to the platform's
/// (bidirectional, 0.3 m in from each edge) with a dock: it joins the two only while the
/// platform stands within 5 cm of that stop. Everyone starts in a block on the first plaza
/// and has a place in a block on the second, the front of the crowd taking the far places.
pub(super) fn shuttle_crossing(kind: ScenarioKind, agents: usize) -> Scenario {
    let ferry = kind == ScenarioKind::Ferry;
    let (deck_m, deck_half_m, far_height_m) = if ferry {
        (6.0f32, 6.0f32, 0.0f32)
    } else {
        (4.0, 2.0, 4.0)
    };
    let gap_m = 0.5;
    let far_edge = if ferry { 20.0 } else { deck_m + 2.0 * gap_m };
    let (dwell_frames, travel_frames) = if ferry { (120, 100) } else { (80, 40) };
    let doors: Vec<f32> = if ferry {
        vec![-5.0, -3.0, -1.0, 1.0, 3.0, 5.0]
    } else {
        vec![-1.5, -0.5, 0.5, 1.5]
    };
    let rows = 12;
    let plaza_m = agents.div_ceil(rows) as f32 + 2.0;
    let plaza_half_m = 7.0;
    let mut polygons = vec![rectangle(-plaza_m, -plaza_half_m, 0.0, plaza_half_m), {
        let mut far = rectangle(far_edge, -plaza_half_m, far_edge + plaza_m, plaza_half_m);
        for corner in &mut far.corners {
            corner.y = far_height_m;
        }
        far
    }];
    let baked = PLATFORM_BAKED_AT;
    let mut deck = rectangle(
        baked.x,
        baked.z - deck_half_m,
        baked.x + deck_m,
        baked.z + deck_half_m,
    );
    for corner in &mut deck.corners {
        corner.y = baked.y;
    }
    deck.layer = 1;
    polygons.push(deck);
    let mut mesh = mesh_of(&polygons);
    let shuttle = Shuttle {
        from: Vec3::new(gap_m, 0.0, 0.0) - baked,
        to: Vec3::new(far_edge - gap_m - deck_m, far_height_m, 0.0) - baked,
        dwell_frames,
        travel_frames,
    };
    let kind_of_link = if ferry {
        LinkKind::Custom(1)
    } else {
        LinkKind::Lift
    };
    let mut link_docks = Vec::new();
    for &z in &doors {
        let ends = [
            (
                Vec3::new(-0.3, 0.0, z),
                baked + Vec3::new(0.3, 0.0, z),
                shuttle.from,
            ),
            (
                baked + Vec3::new(deck_m - 0.3, 0.0, z),
                Vec3::new(far_edge + 0.3, far_height_m, z),
                shuttle.to,
            ),
        ];
        for (start, end, offset) in ends {
            let link = mesh
                .add_link(LinkDesc {
                    kind: kind_of_link,
                    start,
                    end,
                    bidirectional: true,
                    radius_m: 0.5,
                    open: true,
                })
                .expect("scenario links are valid");
            link_docks.push((
                link,
                LinkDock {
                    support: SupportId(0),
                    pose: PlatformPose::at(offset),
                    tolerance_m: 0.05,
                },
            ));
        }
    }
    let starts = block(agents, rows, 1.0, -1.0, -1.0, 0.0);
    let places = block(agents, rows, 1.0, far_edge + plaza_m - 1.0, -1.0, 0.0);
    let pairs: Vec<(Vec3, Vec3)> = starts
        .into_iter()
        .zip(
            places
                .into_iter()
                .map(|place| place + Vec3::Y * far_height_m),
        )
        .collect();
    let period_s = shuttle.period_frames() as f32 * 0.1;
    let capacity = if ferry { 30 } else { 12 };
    Scenario {
        kind,
        supports: Vec::new(),
        walk_times_s: Vec::new(),
        platforms: vec![(SupportId(0), PlatformMotion::Shuttle(shuttle))],
        link_docks,
        mesh,
        params: WALKER,
        config: CrowdConfig::default(),
        dt_s: 0.1,
        straight_line_s: straight_line_s(&pairs),
        time_limit_s: 120.0 + 2.0 * period_s * agents.div_ceil(capacity) as f32,
        agents: pairs,
    }
}
