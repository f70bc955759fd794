//! The per-frame passes, as free functions over lanes: follow, slope, feedback (the move
//! pass is the [`Controller`](crate::crowd::supports::controller::Controller)). Each pass writes only its own outputs,
//! so the parallel ones give the same lanes at any thread count.

use std::sync::{Arc, Weak};

use glam::{Vec2, Vec3};
use rayon::prelude::*;
use wide::f32x8;

use super::funnel::{FUNNEL_PORTALS_MAX, FunnelResult, LOOKAHEAD_PORTALS, funnel_scalar};
use crate::crowd::agents::AgentStatus;
use crate::crowd::lanes::AgentLanes;
use crate::crowd::paths::corridor::Corridor;
use crate::mesh::{PolyRef, Snapshot};
use crate::query::portal;

/// The portals of an agent's last funnel window, kept so that the next window (mostly the
/// same one, moved on by a polygon or two) asks the mesh only for the portals it has not
/// seen. Kept seen from above, as the window is pulled (see `from_above`): 16 bytes a portal,
/// 208 an agent. Corridors keep no portals (memory: see the corridor module), and on a large mesh
/// each portal asked for is a cache miss or two; this brings the follow pass back to about
/// one per polygon walked. Cold state beside the lanes: read and written only when the
/// agent's funnel runs. The window names its corridor by a weak handle (which keeps the
/// corridor's address from being reused, not its polygons alive), so portals kept from a
/// corridor the agent has since left are never used.
#[derive(Clone, Debug)]
pub struct PortalWindow {
    corridor: Weak<Corridor>,
    /// Corridor index of the first portal kept (the portal out of that polygon).
    first: u32,
    /// How many are kept.
    count: u8,
    portals: [(Vec2, Vec2); LOOKAHEAD_PORTALS],
}

impl PortalWindow {
    /// A window that keeps nothing.
    pub const EMPTY: PortalWindow = PortalWindow {
        corridor: Weak::new(),
        first: 0,
        count: 0,
        portals: [(Vec2::ZERO, Vec2::ZERO); LOOKAHEAD_PORTALS],
    };

    /// The portals kept from `corridor`'s index `index` on (empty if `index` is not kept,
    /// or they were kept from another corridor).
    fn kept_from(&self, corridor: &Arc<Corridor>, index: usize) -> &[(Vec2, Vec2)] {
        let first = self.first as usize;
        let end = first + usize::from(self.count);
        if std::ptr::eq(self.corridor.as_ptr(), Arc::as_ptr(corridor))
            && (first..end).contains(&index)
        {
            &self.portals[index - first..usize::from(self.count)]
        } else {
            &[]
        }
    }

    /// Keeps `portals` (flat), the portals out of `corridor`'s polygons `first..`.
    fn keep(&mut self, corridor: &Arc<Corridor>, first: usize, portals: &[(Vec3, Vec3)]) {
        if !std::ptr::eq(self.corridor.as_ptr(), Arc::as_ptr(corridor)) {
            self.corridor = Arc::downgrade(corridor);
        }
        let count = portals.len().min(LOOKAHEAD_PORTALS);
        self.first = first as u32;
        self.count = count as u8;
        for (kept, &(left, right)) in self.portals.iter_mut().zip(&portals[..count]) {
            *kept = (Vec2::new(left.x, left.z), Vec2::new(right.x, right.z));
        }
    }
}

/// A window point seen from above (height zero). The follow pass pulls its windows flat:
/// the corner it steers for and the string length it brakes along are horizontal, so
/// heights would only make points that coincide from above differ, and make the kept
/// portals half as large again.
fn from_above(point: Vec3) -> Vec3 {
    Vec3::new(point.x, 0.0, point.z)
}

/// A kept flat portal as a window portal.
fn window_portal((left, right): (Vec2, Vec2)) -> (Vec3, Vec3) {
    (
        Vec3::new(left.x, 0.0, left.y),
        Vec3::new(right.x, 0.0, right.y),
    )
}
/// Frames an agent keeps its corner before the funnel runs again even if nothing changed
/// (the corner of a straight walk stays the corner until the cursor moves or it is reached).
pub const CORNER_REFRESH_FRAMES: u8 = 30;

/// Horizontal distance needed to stop from speed `speed` (m/s) with the horizontal braking
/// budget `acceleration` (m/s²), after a reaction step of `reaction_s` at that speed:
/// `v * t + v^2 / (2 A)`. It consumes the end velocity of the last step (spec 004, m4).
#[cfg(feature = "harness")]
pub fn stopping_distance(speed: f32, acceleration: f32, reaction_s: f32) -> f32 {
    speed * reaction_s + speed * speed / (2.0 * acceleration)
}

/// The speed to request with `distance` metres left to a stop point: the largest that can
/// still stop there after one reaction step at the current speed, capped by `limit`.
pub fn profile_speed(
    distance: f32,
    current_speed: f32,
    acceleration: f32,
    dt: f32,
    limit: f32,
) -> f32 {
    let room = (distance - current_speed * dt).max(0.0);
    (2.0 * acceleration * room).sqrt().min(limit)
}

/// How far from a link's entry an agent walking to it brakes to stop, as a share of the
/// arrival tolerance: inside the circle where the crossing starts, so it enters the circle
/// at about 0.65 m/s (with 8 m/s² of braking) instead of at the speed that would stop it on
/// the entry itself, and it cannot stall short of the circle.
const LINK_STOP_INSIDE_TOLERANCE: f32 = 0.8;

/// [`profile_speed`] towards the goal, or towards the entry of a link (`link_stop`), zero
/// once within the arrival tolerance.
fn goal_speed(
    stop_distance: f32,
    link_stop: bool,
    current_speed: f32,
    acceleration: f32,
    dt: f32,
    limit: f32,
    arrive_tolerance_m: f32,
) -> f32 {
    if stop_distance <= arrive_tolerance_m {
        return 0.0;
    }
    let braking_distance = if link_stop {
        stop_distance - LINK_STOP_INSIDE_TOLERANCE * arrive_tolerance_m
    } else {
        stop_distance
    };
    profile_speed(braking_distance, current_speed, acceleration, dt, limit)
}

/// One agent's follow result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FollowOutput {
    /// New corridor cursor.
    pub cursor: u32,
    /// Next corner to steer for (x, z).
    pub corner: Vec2,
    /// Requested horizontal velocity.
    pub desired: Vec2,
    /// Path distance to the goal (infinite beyond the lookahead).
    pub stop_distance: f32,
    /// Path length from the corner to the goal (infinite beyond the lookahead).
    pub corner_after: f32,
    /// Whether the funnel ran (false: the kept corner was reused).
    pub refreshed: bool,
    /// Whether the corner is the end of the lookahead window.
    pub horizon: bool,
    /// The agent is not on its corridor near the cursor: it needs a new path.
    pub off_corridor: bool,
    /// The agent stands at the entry of the corridor's next off-mesh link (within the
    /// arrival tolerance): it may start crossing.
    pub link_ready: bool,
    /// The next point ahead where the slope limit drops and the limit past it, found again
    /// when the funnel ran or the cursor moved (`None`: keep the last one; an infinite
    /// speed: no such point).
    pub slowdown: Option<(Vec2, f32)>,
}

impl FollowOutput {
    /// The output for an agent that is off its corridor at `cursor`: no request, a fresh
    /// path wanted.
    fn off_corridor(cursor: usize, foot: Vec2) -> FollowOutput {
        FollowOutput {
            cursor: cursor as u32,
            corner: foot,
            desired: Vec2::ZERO,
            stop_distance: f32::INFINITY,
            corner_after: f32::INFINITY,
            refreshed: true,
            horizon: true,
            off_corridor: true,
            link_ready: false,
            slowdown: None,
        }
    }
}

/// Follows the corridor for one agent: moves the cursor to the corridor polygon the agent
/// actually stands in (forward only once it has crossed into the next polygon, backward
/// when pushed back), pulls the string through the next [`LOOKAHEAD_PORTALS`] portals (up
/// to the next off-mesh link), and requests a velocity towards the first corner with a
/// speed that can stop at the goal or at the link's entry.
#[cfg(feature = "harness")]
#[allow(clippy::too_many_arguments)]
pub fn follow_one(
    snapshot: &Snapshot,
    corridor: &Arc<Corridor>,
    cursor: usize,
    position: Vec3,
    polygon: PolyRef,
    goal: Vec3,
    velocity: Vec2,
    speed_limit: f32,
    acceleration_limit: f32,
    dt: f32,
    arrive_tolerance_m: f32,
) -> FollowOutput {
    let agent = FollowAgent {
        cursor,
        position,
        polygon,
        goal,
        velocity,
        speed_limit,
        acceleration_limit,
    };
    let mut window = Vec::with_capacity(FUNNEL_PORTALS_MAX);
    let mut nothing_kept = PortalWindow::EMPTY;
    match plan_follow(snapshot, corridor, &agent, &mut window, &mut nothing_kept) {
        Ok(plan) => {
            let funnel = funnel_scalar(&window, &mut Vec::with_capacity(window.len()));
            finish_follow(&plan, funnel, dt, arrive_tolerance_m)
        }
        Err(lost) => lost,
    }
}

/// What the follow pass knows of one agent before its funnel runs.
#[derive(Clone, Copy, Debug)]
struct FollowAgent {
    cursor: usize,
    position: Vec3,
    polygon: PolyRef,
    goal: Vec3,
    velocity: Vec2,
    speed_limit: f32,
    acceleration_limit: f32,
}

/// One agent's funnel window, planned: what [`finish_follow`] needs besides the funnel.
#[derive(Clone, Copy, Debug)]
struct FollowPlan {
    cursor: u32,
    foot: Vec2,
    /// The window ends at the stop point (the goal or the next link's entry).
    reaches_stop: bool,
    /// The stop point is a link's entry.
    stops_at_link: bool,
    velocity: Vec2,
    speed_limit: f32,
    acceleration_limit: f32,
}

/// Moves the cursor to the corridor polygon the agent stands in (or finds the edge back
/// into the corridor) and writes its funnel window: the foot, the rejoin edge if any, the
/// next [`LOOKAHEAD_PORTALS`] portals up to the next link, the window's end. The output of
/// an agent that is off its corridor is the error.
fn plan_follow(
    snapshot: &Snapshot,
    corridor: &Arc<Corridor>,
    agent: &FollowAgent,
    window: &mut Vec<(Vec3, Vec3)>,
    kept: &mut PortalWindow,
) -> Result<FollowPlan, FollowOutput> {
    let (cursor, position, polygon) = (agent.cursor, agent.position, agent.polygon);
    let flat = Vec2::new(position.x, position.z);
    let found = match corridor.find_near(cursor, polygon, 4, 8) {
        Some(cursor) => Some((cursor, None)),
        None => {
            rejoin(snapshot, corridor, cursor, polygon).map(|(cursor, entry)| (cursor, Some(entry)))
        }
    };
    let Some((cursor, entry)) = found else {
        return Err(FollowOutput::off_corridor(cursor, flat));
    };
    // The walk ends at the goal or at the entry of the next link, whichever comes first:
    // the speed profile brakes for either.
    let (_, piece_last) = corridor.walkable_piece(cursor);
    let link = corridor.next_link(cursor);
    let window_end = (cursor + LOOKAHEAD_PORTALS).min(piece_last);
    let reaches_stop = window_end == piece_last;
    window.clear();
    window.push((from_above(position), from_above(position)));
    // Beside the corridor (pushed into a neighbouring polygon): back in through the shared
    // edge first.
    window.extend(entry.map(|(left, right)| (from_above(left), from_above(right))));
    // The portals kept from the last window first, then the mesh for the rest. `None` only
    // if the mesh changed under a corridor the crowd has not dropped yet: the agent asks
    // for a new path as if it had left its corridor.
    let portals_start = window.len();
    let reused = kept.kept_from(corridor, cursor);
    let reused = &reused[..reused.len().min(window_end - cursor)];
    window.extend(reused.iter().copied().map(window_portal));
    corridor
        .portals_into(
            snapshot,
            cursor + reused.len()..window_end,
            |(left, right)| window.push((from_above(left), from_above(right))),
        )
        .ok_or_else(|| FollowOutput::off_corridor(cursor, flat))?;
    kept.keep(corridor, cursor, &window[portals_start..]);
    let end = if reaches_stop {
        link.map_or(agent.goal, |link| link.entry)
    } else {
        // Not at the stop: the window holds at least one portal, the last pushed.
        let (left, right) = window[window.len() - 1];
        (left + right) * 0.5
    };
    window.push((from_above(end), from_above(end)));
    Ok(FollowPlan {
        cursor: cursor as u32,
        foot: flat,
        reaches_stop,
        stops_at_link: link.is_some(),
        velocity: agent.velocity,
        speed_limit: agent.speed_limit,
        acceleration_limit: agent.acceleration_limit,
    })
}

/// The follow output of a planned window and its pulled string: the corner to steer for,
/// and a speed that can stop at the stop point along the string (lookahead is measured
/// along the path, corner to corner).
fn finish_follow(
    plan: &FollowPlan,
    funnel: FunnelResult,
    dt: f32,
    arrive_tolerance_m: f32,
) -> FollowOutput {
    let stop_distance = if plan.reaches_stop {
        funnel.length_m
    } else {
        f32::INFINITY
    };
    let corner = funnel.corner;
    let corner_after = (stop_distance - corner.distance(plan.foot)).max(0.0);
    let speed = goal_speed(
        stop_distance,
        plan.stops_at_link,
        plan.velocity.length(),
        plan.acceleration_limit,
        dt,
        plan.speed_limit,
        arrive_tolerance_m,
    );
    FollowOutput {
        cursor: plan.cursor,
        corner,
        desired: (corner - plan.foot).normalize_or_zero() * speed,
        stop_distance,
        corner_after,
        refreshed: true,
        horizon: funnel.corner_is_end && !plan.reaches_stop,
        off_corridor: false,
        link_ready: plan.stops_at_link && plan.reaches_stop && stop_distance <= arrive_tolerance_m,
        slowdown: None,
    }
}

/// An agent pushed out of its corridor into a polygon beside it (avoidance, a shove) can
/// walk back in instead of asking for a new path: the first corridor polygon near `cursor`
/// (one back, three ahead) that shares an edge with `polygon`, and that edge as a portal.
pub fn rejoin(
    snapshot: &Snapshot,
    corridor: &Corridor,
    cursor: usize,
    polygon: PolyRef,
) -> Option<(usize, (Vec3, Vec3))> {
    let (first, piece_last) = corridor.walkable_piece(cursor);
    let last = (piece_last + 1).min(cursor + 4);
    (cursor.saturating_sub(1).max(first)..last).find_map(|index| {
        let beside = corridor.polygon(snapshot, index)?;
        portal(snapshot, polygon, beside).map(|edge| (index, edge))
    })
}

/// The kept corner, if it still serves: the agent is in the same corridor polygon and has
/// not reached the corner. The speed profile is recomputed from the distance to the corner
/// plus the path length after it, braking for a link's entry when `link_stop`.
#[allow(clippy::too_many_arguments)]
pub fn follow_kept(
    cursor: usize,
    link_stop: bool,
    position: Vec3,
    corner: Vec2,
    corner_after: f32,
    velocity: Vec2,
    speed_limit: f32,
    acceleration_limit: f32,
    dt: f32,
    arrive_tolerance_m: f32,
) -> Option<FollowOutput> {
    let flat = Vec2::new(position.x, position.z);
    let to_corner = corner - flat;
    let distance = to_corner.length();
    // Reached (or about to be within a step): the funnel must pick the next corner.
    if distance <= 0.1 + velocity.length() * dt {
        return None;
    }
    let stop_distance = distance + corner_after;
    if stop_distance <= arrive_tolerance_m {
        // At the stop point: the funnel decides whether it is a link entry to cross.
        return None;
    }
    let speed = goal_speed(
        stop_distance,
        link_stop,
        velocity.length(),
        acceleration_limit,
        dt,
        speed_limit,
        arrive_tolerance_m,
    );
    Some(FollowOutput {
        cursor: cursor as u32,
        corner,
        desired: to_corner / distance * speed,
        stop_distance,
        corner_after,
        refreshed: false,
        horizon: false,
        off_corridor: false,
        link_ready: false,
        slowdown: None,
    })
}

/// Where the path ahead first enters a patch whose slope limit is below `speed_limit` (the
/// agent's current one): the entry portal's midpoint and the limit there (`V / k`, with
/// `k` from the polygon's steepest detail triangle). Spec 004 puts stop points at gradient
/// changes; braking to the lower limit before the boundary is the part of that a crowd
/// needs (a full stop at every change of plane would halt walkers on every bump).
pub fn next_slowdown(
    snapshot: &Snapshot,
    corridor: &Corridor,
    cursor: usize,
    max_speed: f32,
    speed_limit: f32,
) -> Option<(Vec2, f32)> {
    let last = (cursor + LOOKAHEAD_PORTALS).min(corridor.len() - 1);
    for (index, tile, polygon) in corridor.polygons_in_tiles(snapshot, cursor + 1..last + 1) {
        let steepest = *tile.steepest_gradient.get(usize::from(polygon))?;
        let limit = max_speed / (1.0 + steepest * steepest).sqrt();
        if limit < speed_limit - 1e-3 {
            let (left, right) = corridor.portal(snapshot, index - 1)?;
            let middle = (left + right) * 0.5;
            return Some((Vec2::new(middle.x, middle.z), limit));
        }
    }
    None
}

/// Caps a requested velocity so the agent can be at or below `slow_speed` when it reaches
/// `slow_point` (after a reaction step at its current speed).
pub fn cap_for_slowdown(
    desired: Vec2,
    position: Vec2,
    slow_point: Vec2,
    slow_speed: f32,
    current_speed: f32,
    acceleration: f32,
    dt: f32,
) -> Vec2 {
    if !slow_speed.is_finite() {
        return desired;
    }
    let room = (position.distance(slow_point) - current_speed * dt).max(0.0);
    let allowed = (slow_speed * slow_speed + 2.0 * acceleration * room).sqrt();
    let speed = desired.length();
    if speed > allowed {
        desired * (allowed / speed)
    } else {
        desired
    }
}

/// Agents per parallel work item of the follow pass.
const FOLLOW_CHUNK_AGENTS: usize = 256;

/// The follow pass over every moving agent (parallel over chunks of slots; results in
/// slot order). An agent still walking to its kept corner is served on the spot; the
/// others' windows are planned and pulled, one agent at a time (the cost is in fetching
/// portals, which an eight-wide funnel cannot share).
///
/// `windows` holds each agent's [`PortalWindow`] by slot; it is resized to the lanes (new
/// slots keep nothing), so a caller may start from an empty one.
pub fn follow_pass(
    snapshot: &Snapshot,
    lanes: &AgentLanes,
    windows: &mut Vec<PortalWindow>,
    dt: f32,
    arrive_tolerance_m: f32,
    out: &mut Vec<Option<FollowOutput>>,
) {
    windows.resize(lanes.len(), PortalWindow::EMPTY);
    out.clear();
    out.resize(lanes.len(), None);
    out.par_chunks_mut(FOLLOW_CHUNK_AGENTS)
        .zip(windows.par_chunks_mut(FOLLOW_CHUNK_AGENTS))
        .with_min_len(crate::crowd::compute::parallel::task_min(1))
        .enumerate()
        .for_each(|(chunk, (outputs, kept_windows))| {
            let first = chunk * FOLLOW_CHUNK_AGENTS;
            // Window and corner buffers shared by the chunk's agents.
            let mut window = Vec::with_capacity(FUNNEL_PORTALS_MAX);
            let mut corners = Vec::with_capacity(FUNNEL_PORTALS_MAX);
            for (offset, (output, kept)) in outputs.iter_mut().zip(kept_windows).enumerate() {
                let slot = first + offset;
                *output = match follow_without_funnel(lanes, slot, dt, arrive_tolerance_m) {
                    Ok(output) => output,
                    Err(agent) => {
                        let corridor = lanes.corridor[slot].as_ref().expect("checked");
                        Some(
                            match plan_follow(snapshot, corridor, &agent, &mut window, kept) {
                                Ok(plan) => finish_follow(
                                    &plan,
                                    funnel_scalar(&window, &mut corners),
                                    dt,
                                    arrive_tolerance_m,
                                ),
                                Err(lost) => lost,
                            },
                        )
                    }
                };
                if let Some(output) = output.as_mut().filter(|output| !output.off_corridor) {
                    slow_down(snapshot, lanes, slot, dt, output);
                }
            }
        });
}

/// Finds the next slow-down point again when the funnel ran or the cursor moved on (a kept
/// corner can outlast several polygons, and the point is looked for from the cursor), and
/// caps the requested velocity so the agent is slow enough when it gets there.
fn slow_down(
    snapshot: &Snapshot,
    lanes: &AgentLanes,
    slot: usize,
    dt: f32,
    output: &mut FollowOutput,
) {
    if output.refreshed || output.cursor != lanes.cursor[slot] {
        let found = lanes.corridor[slot].as_ref().and_then(|corridor| {
            next_slowdown(
                snapshot,
                corridor,
                output.cursor as usize,
                lanes.max_speed[slot],
                lanes.speed_limit[slot],
            )
        });
        output.slowdown = Some(found.unwrap_or((Vec2::ZERO, f32::INFINITY)));
    }
    let (point, speed) = output.slowdown.unwrap_or((
        Vec2::new(lanes.slow_x[slot], lanes.slow_z[slot]),
        lanes.slow_speed[slot],
    ));
    output.desired = cap_for_slowdown(
        output.desired,
        Vec2::new(lanes.position_x[slot], lanes.position_z[slot]),
        point,
        speed,
        Vec2::new(lanes.velocity_x[slot], lanes.velocity_z[slot]).length(),
        lanes.acceleration_limit[slot],
        dt,
    );
}

/// The follow output of an agent that needs no funnel (not moving, no corridor, or still
/// walking to its kept corner), or the agent to plan a window for.
fn follow_without_funnel(
    lanes: &AgentLanes,
    slot: usize,
    dt: f32,
    arrive_tolerance_m: f32,
) -> Result<Option<FollowOutput>, FollowAgent> {
    if lanes.status[slot] != AgentStatus::Moving {
        return Ok(None);
    }
    let velocity = Vec2::new(lanes.velocity_x[slot], lanes.velocity_z[slot]);
    if lanes.corner_age[slot] < CORNER_REFRESH_FRAMES {
        // Keep the corner while the agent walks towards it: in the same polygon, or in a
        // later polygon of the corridor when the corner is a real corner (a window end
        // must move with the window).
        let polygon = lanes.polygon[slot];
        let cursor = if polygon == lanes.cursor_polygon[slot] {
            Some(lanes.cursor[slot] as usize)
        } else if lanes.corner_is_horizon[slot] {
            None
        } else {
            lanes.corridor[slot]
                .as_ref()
                .and_then(|c| c.find_near(lanes.cursor[slot] as usize, polygon, 0, 8))
        };
        let kept = cursor.and_then(|cursor| {
            // The stop ahead is a link's entry when a link follows the cursor.
            let link_stop = lanes.corridor[slot]
                .as_ref()
                .is_some_and(|corridor| corridor.next_link(cursor).is_some());
            follow_kept(
                cursor,
                link_stop,
                lanes.position(slot),
                Vec2::new(lanes.corner_x[slot], lanes.corner_z[slot]),
                lanes.corner_after_m[slot],
                velocity,
                lanes.cruise_speed(slot),
                lanes.acceleration_limit[slot],
                dt,
                arrive_tolerance_m,
            )
        });
        if kept.is_some() {
            return Ok(kept);
        }
    }
    if lanes.corridor[slot].is_none() {
        return Ok(None);
    }
    Err(FollowAgent {
        cursor: lanes.cursor[slot] as usize,
        position: lanes.position(slot),
        polygon: lanes.polygon[slot],
        goal: Vec3::new(lanes.goal_x[slot], lanes.goal_y[slot], lanes.goal_z[slot]),
        velocity,
        speed_limit: lanes.cruise_speed(slot),
        acceleration_limit: lanes.acceleration_limit[slot],
    })
}

/// The gradient (dh/dx, dh/dz) of the detail triangle under `position` in `polygon` (zero
/// when the polygon is stale), and the triangle's hint for the next lookup:
/// [`RuntimeTile::gradient_at`](crate::mesh::RuntimeTile::gradient_at), whose triangles
/// carry their gradients from when the tile was loaded.
pub fn patch_gradient(
    snapshot: &Snapshot,
    polygon: PolyRef,
    position: Vec3,
    hint: u32,
) -> (Vec2, u32) {
    snapshot.tile(polygon).map_or((Vec2::ZERO, hint), |tile| {
        tile.gradient_at(polygon.polygon(), Vec2::new(position.x, position.z), hint)
    })
}

/// Slope limits (spec 004, m1), scalar: `k = sqrt(1 + |g|^2)`, speed `V/k`, acceleration
/// `A/k`, per lane.
pub fn slope_limits_scalar(
    gradient_x: &[f32],
    gradient_z: &[f32],
    max_speed: &[f32],
    max_acceleration: &[f32],
    speed_limit: &mut [f32],
    acceleration_limit: &mut [f32],
) {
    for i in 0..gradient_x.len() {
        let k = (1.0 + gradient_x[i] * gradient_x[i] + gradient_z[i] * gradient_z[i]).sqrt();
        speed_limit[i] = max_speed[i] / k;
        acceleration_limit[i] = max_acceleration[i] / k;
    }
}

/// [`slope_limits_scalar`] eight lanes at a time with `wide`; the same operations in the
/// same order, so the results are bit-identical (tested).
pub fn slope_limits_simd(
    gradient_x: &[f32],
    gradient_z: &[f32],
    max_speed: &[f32],
    max_acceleration: &[f32],
    speed_limit: &mut [f32],
    acceleration_limit: &mut [f32],
) {
    let full = gradient_x.len() / 8 * 8;
    let load = |lane: &[f32], at: usize| {
        f32x8::from(<[f32; 8]>::try_from(&lane[at..at + 8]).expect("eight lanes"))
    };
    let one = f32x8::splat(1.0);
    for at in (0..full).step_by(8) {
        let (gx, gz) = (load(gradient_x, at), load(gradient_z, at));
        let k = (one + gx * gx + gz * gz).sqrt();
        speed_limit[at..at + 8].copy_from_slice(&(load(max_speed, at) / k).to_array());
        acceleration_limit[at..at + 8]
            .copy_from_slice(&(load(max_acceleration, at) / k).to_array());
    }
    slope_limits_scalar(
        &gradient_x[full..],
        &gradient_z[full..],
        &max_speed[full..],
        &max_acceleration[full..],
        &mut speed_limit[full..],
        &mut acceleration_limit[full..],
    );
}

/// The slope pass: gradients under every agent (parallel gather), then the limits (SIMD).
pub fn slope_pass(snapshot: &Snapshot, lanes: &mut AgentLanes) {
    // Written in place, lane by lane: no per-frame buffer.
    let (polygon, x, y, z) = (
        &lanes.polygon,
        &lanes.position_x,
        &lanes.position_y,
        &lanes.position_z,
    );
    lanes
        .gradient_x
        .par_iter_mut()
        .zip(lanes.gradient_z.par_iter_mut())
        .zip(lanes.patch_hint.par_iter_mut())
        .with_min_len(crate::crowd::compute::parallel::task_min(1))
        .enumerate()
        .for_each(|(slot, ((gradient_x, gradient_z), hint))| {
            let (gradient, found) = patch_gradient(
                snapshot,
                polygon[slot],
                Vec3::new(x[slot], y[slot], z[slot]),
                *hint,
            );
            *gradient_x = gradient.x;
            *gradient_z = gradient.y;
            *hint = found;
        });
    slope_limits_simd(
        &lanes.gradient_x,
        &lanes.gradient_z,
        &lanes.max_speed,
        &lanes.max_acceleration,
        &mut lanes.speed_limit,
        &mut lanes.acceleration_limit,
    );
}

/// vEnd and vAverage from a step's feedback (spec 004): the horizontal part of
/// `vWorldEnd - vSupportEnd`, and the horizontal net progress
/// `(Δx - ΔxSupport - ΔxCorrection) / dt`.
pub fn feedback_velocities(
    feedback: &crate::crowd::supports::controller::StepFeedback,
) -> (Vec2, Vec2) {
    let relative = feedback.velocity_world_end - feedback.velocity_support_end;
    let progress =
        feedback.displacement - feedback.displacement_support - feedback.displacement_correction;
    let average = if feedback.dt > 0.0 {
        Vec2::new(progress.x, progress.z) / feedback.dt
    } else {
        Vec2::ZERO
    };
    (Vec2::new(relative.x, relative.z), average)
}

/// Progress below this over [`STALL_S`] of non-zero requests is a stall (spec 001, h2).
pub const STALL_PROGRESS_M: f32 = 0.05;
/// Seconds of non-zero requests without progress before an agent is Blocked.
pub const STALL_S: f32 = 0.5;

/// Tracks progress for the Blocked rule: returns the new (anchor, stalled seconds) and
/// whether the agent is stalled now.
pub fn track_progress(
    anchor: Vec2,
    stalled_s: f32,
    position: Vec2,
    requesting: bool,
    dt: f32,
) -> (Vec2, f32, bool) {
    if !requesting || position.distance(anchor) >= STALL_PROGRESS_M {
        return (position, 0.0, false);
    }
    let stalled_s = stalled_s + dt;
    (anchor, stalled_s, stalled_s >= STALL_S - 1e-6)
}
