//! Hot per-agent state as struct-of-arrays lanes, indexed by slot, with swap-remove.
//!
//! Stage: crowd runtime, the state every pass reads and writes each frame. The crowd adds
//! an agent with [`AgentLanes::push`] and removes it with [`AgentLanes::swap_remove`] (the
//! last agent moves into the freed slot; the crowd updates the moved agent's slot component).
//!
//! Invariant: every lane has one element per agent, and slot `i` of every lane is the same
//! agent. Swap-remove and the size report go through one list of lanes, which is checked
//! against the struct's fields when the crate compiles.

use crate::crowd::agents::AgentStatus;
use std::sync::Arc;

use crate::crowd::agents::{AgentId, FilterId, ProfileId};
use crate::crowd::paths::corridor::Corridor;
use crate::mesh::PolyRef;

/// Dense per-agent state every pass touches every frame; slot `i` of every lane is the same
/// agent. Horizontal vectors are split into x and z lanes so passes vectorise over agents.
#[derive(Clone, Debug, Default)]
pub struct AgentLanes {
    /// The agent's id.
    pub(crate) id: Vec<AgentId>,
    /// Foot position x, metres.
    pub(crate) position_x: Vec<f32>,
    /// Foot position y (height), metres.
    pub(crate) position_y: Vec<f32>,
    /// Foot position z, metres.
    pub(crate) position_z: Vec<f32>,
    /// Polygon under the foot.
    pub(crate) polygon: Vec<PolyRef>,
    /// Horizontal end-of-step velocity relative to the support (vEnd), x, m/s.
    pub(crate) velocity_x: Vec<f32>,
    /// vEnd, z, m/s.
    pub(crate) velocity_z: Vec<f32>,
    /// Net progress of the last step (vAverage), x, m/s.
    pub(crate) average_x: Vec<f32>,
    /// vAverage, z, m/s.
    pub(crate) average_z: Vec<f32>,
    /// Preferred (requested) horizontal velocity from the follow pass, x, m/s.
    pub(crate) desired_x: Vec<f32>,
    /// Preferred velocity, z, m/s.
    pub(crate) desired_z: Vec<f32>,
    /// Body radius, metres.
    pub(crate) radius: Vec<f32>,
    /// Surface speed limit V, m/s.
    pub(crate) max_speed: Vec<f32>,
    /// Surface cruising speed, m/s (at most V).
    pub(crate) preferred_speed: Vec<f32>,
    /// Surface acceleration budget A, m/s².
    pub(crate) max_acceleration: Vec<f32>,
    /// Patch gradient dh/dx under the agent.
    pub(crate) gradient_x: Vec<f32>,
    /// Patch gradient dh/dz.
    pub(crate) gradient_z: Vec<f32>,
    /// The detail triangle the gradient was last read from (its index in its tile): the
    /// slope pass tries it first.
    pub(crate) patch_hint: Vec<u32>,
    /// Horizontal speed limit V/k on the current patch, m/s.
    pub(crate) speed_limit: Vec<f32>,
    /// Horizontal acceleration limit A/k on the current patch, m/s².
    pub(crate) acceleration_limit: Vec<f32>,
    /// Where the current request ends (the target, or the reachable point nearest it for
    /// a partial corridor), x.
    pub(crate) goal_x: Vec<f32>,
    /// Goal, y.
    pub(crate) goal_y: Vec<f32>,
    /// Goal, z.
    pub(crate) goal_z: Vec<f32>,
    /// The goal's polygon.
    pub(crate) goal_polygon: Vec<PolyRef>,
    /// The corridor being followed.
    pub(crate) corridor: Vec<Option<Arc<Corridor>>>,
    /// Index of the corridor polygon the agent stands in.
    pub(crate) cursor: Vec<u32>,
    /// The polygon the agent stood in when the follow pass last found its corner or moved
    /// its cursor: the corridor's polygon at the cursor, or, for an agent pushed beside its
    /// corridor, the polygon it walks back from. Kept so the common frame (same polygon,
    /// corner kept) never touches the corridor's memory.
    pub(crate) cursor_polygon: Vec<PolyRef>,
    /// Next corner to steer for, x.
    pub(crate) corner_x: Vec<f32>,
    /// Next corner, z.
    pub(crate) corner_z: Vec<f32>,
    /// Distance along the path to the next stop point (goal), metres (infinite beyond the
    /// lookahead).
    pub(crate) stop_distance: Vec<f32>,
    /// Path length from the next corner to the goal, metres (infinite beyond the lookahead).
    pub(crate) corner_after_m: Vec<f32>,
    /// Frames since the funnel last ran for this agent (`u8::MAX`: run it now).
    pub(crate) corner_age: Vec<u8>,
    /// The next point ahead where the slope limit drops (entering a steeper patch), x.
    pub(crate) slow_x: Vec<f32>,
    /// That point, z.
    pub(crate) slow_z: Vec<f32>,
    /// The horizontal speed limit past that point (infinite: no such point ahead).
    pub(crate) slow_speed: Vec<f32>,
    /// Whether the corner is the end of the lookahead window rather than a real corner
    /// (then it must be recomputed as soon as the cursor moves).
    pub(crate) corner_is_horizon: Vec<bool>,
    /// Support the agent stands on (0: static ground).
    pub(crate) support: Vec<u32>,
    /// Whether the last feedback carried a valid end velocity (false: vUnknown).
    pub(crate) velocity_valid: Vec<bool>,
    /// Seconds of non-zero requests without 0.05 m of progress.
    pub(crate) stalled_s: Vec<f32>,
    /// Where progress is measured from, x.
    pub(crate) anchor_x: Vec<f32>,
    /// Progress anchor, z.
    pub(crate) anchor_z: Vec<f32>,
    /// Whether the current stall was reported.
    pub(crate) blocked: Vec<Option<super::events::BlockedBy>>,
    /// Progress along the corridor (toward the next corner) since the last
    /// [`PROGRESS_STEP_M`](crate::crowd::runtime::step::feedback::PROGRESS_STEP_M), metres; a step back counts against it.
    pub(crate) progress_m: Vec<f32>,
    /// Seconds since the agent last made [`PROGRESS_STEP_M`](crate::crowd::runtime::step::feedback::PROGRESS_STEP_M) of
    /// progress along its corridor: how long it has been held in a crowd, however much it
    /// is jostled meanwhile. Avoidance escalates on it.
    pub(crate) unprogressed_s: Vec<f32>,

    /// Whether the agent walks a head start: a few polygons toward its target, given while
    /// its request waits for the searched path (status `Moving`, the request still
    /// awaiting). Its end is no arrival, and leaving it is no reason to re-plan.
    pub(crate) on_head_start: Vec<bool>,
    /// Status.
    pub(crate) status: Vec<AgentStatus>,
    /// Whether the agent's request waits in the ingest list.
    pub(crate) ingest_pending: Vec<bool>,
    /// The agent's query filter (its place in the crowd's table).
    pub(crate) filter: Vec<FilterId>,
    /// The agent's avoidance profile (its place in the crowd's table).
    pub(crate) profile: Vec<ProfileId>,
    /// How many times the agent's mover has changed owner (spec 001's handoff step).
    pub(crate) handoff: Vec<u32>,
}

/// Calls `$action!(lane, lane, ...)` with every lane's name: the one list of lanes behind
/// swap-remove and the size report. [`AgentLanes::bytes_per_agent`] destructures the struct
/// with this list and no rest pattern, so a lane missing from it does not compile (a lane
/// left out of swap-remove would put every later slot out of step).
macro_rules! every_lane {
    ($action:ident) => {
        $action!(
            id,
            position_x,
            position_y,
            position_z,
            polygon,
            velocity_x,
            velocity_z,
            average_x,
            average_z,
            desired_x,
            desired_z,
            radius,
            max_speed,
            preferred_speed,
            max_acceleration,
            gradient_x,
            gradient_z,
            patch_hint,
            speed_limit,
            acceleration_limit,
            goal_x,
            goal_y,
            goal_z,
            goal_polygon,
            corridor,
            cursor,
            corner_x,
            corner_z,
            stop_distance,
            corner_after_m,
            corner_age,
            corner_is_horizon,
            cursor_polygon,
            slow_x,
            slow_z,
            slow_speed,
            support,
            velocity_valid,
            stalled_s,
            anchor_x,
            anchor_z,
            blocked,
            progress_m,
            unprogressed_s,
            on_head_start,
            status,
            ingest_pending,
            filter,
            profile,
            handoff
        )
    };
}

pub(crate) use every_lane;

/// The swaps that put, in place, into each slot `i` what slot `order[i]` held (`order` a
/// permutation): each cycle of the permutation walked once, one swap a step.
pub(crate) fn permutation_swaps(order: &[u32]) -> Vec<(u32, u32)> {
    let mut placed = vec![false; order.len()];
    let mut swaps = Vec::with_capacity(order.len());
    for start in 0..order.len() {
        if placed[start] {
            continue;
        }
        placed[start] = true;
        let mut at = start;
        loop {
            let from = order[at] as usize;
            if from == start {
                break;
            }
            swaps.push((at as u32, from as u32));
            placed[from] = true;
            at = from;
        }
    }
    swaps
}

/// Applies [`permutation_swaps`] to one slot-indexed array.
pub(crate) fn apply_swaps<T>(values: &mut [T], swaps: &[(u32, u32)]) {
    for &(a, b) in swaps {
        values.swap(a as usize, b as usize);
    }
}

/// Declares a view of some lanes over a run of slots, for a pass that writes its own
/// agents' lanes in parallel: the `write` lanes borrowed mutably, the `read` lanes shared,
/// all cut at the same slots. `new` borrows them from [`AgentLanes`]; `into_pieces(slots)`
/// hands rayon runs of at least `slots` agents (one run below twice that), each knowing
/// its first slot, so a pass can write many lanes by slot without a serial write-back.
macro_rules! lane_view {
    (
        $(#[$meta:meta])*
        $name:ident {
            write { $($write:ident: $write_type:ty),* $(,)? }
            read { $($read:ident: $read_type:ty),* $(,)? }
        }
    ) => {
        $(#[$meta])*
        pub(crate) struct $name<'a> {
            /// The slot of the view's first place.
            pub first: usize,
            /// Slots in the view.
            pub len: usize,
            $(pub $write: &'a mut [$write_type],)*
            $(pub $read: &'a [$read_type],)*
        }

        impl<'a> $name<'a> {
            /// The view over every slot of `lanes`.
            pub fn new(lanes: &'a mut $crate::crowd::lanes::AgentLanes) -> Self {
                let len = lanes.len();
                $name {
                    first: 0,
                    len,
                    $($write: &mut lanes.$write[..],)*
                    $($read: &lanes.$read[..],)*
                }
            }

            /// The first `middle` slots and the rest.
            fn split_at(self, middle: usize) -> (Self, Self) {
                $(let $write = self.$write.split_at_mut(middle);)*
                $(let $read = self.$read.split_at(middle);)*
                (
                    $name {
                        first: self.first,
                        len: middle,
                        $($write: $write.0,)*
                        $($read: $read.0,)*
                    },
                    $name {
                        first: self.first + middle,
                        len: self.len - middle,
                        $($write: $write.1,)*
                        $($read: $read.1,)*
                    },
                )
            }

            /// The view cut into runs of at least `slots` agents, as rayon splits it.
            pub fn into_pieces(
                self,
                slots: usize,
            ) -> impl rayon::iter::ParallelIterator<Item = Self> {
                rayon::iter::split(self, move |view| {
                    if view.len < 2 * slots {
                        return (view, None);
                    }
                    let middle = view.len / 2;
                    let (left, right) = view.split_at(middle);
                    (left, Some(right))
                })
            }
        }
    };
}
pub(crate) use lane_view;

fn element_size<T>(_lane: &[T]) -> usize {
    size_of::<T>()
}

/// What a new agent starts with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NewAgent {
    pub id: AgentId,
    pub position: glam::Vec3,
    pub polygon: PolyRef,
    pub radius: f32,
    pub max_speed: f32,
    pub preferred_speed: f32,
    pub max_acceleration: f32,
}

impl AgentLanes {
    /// Bytes of hot lane state per agent: the sum of every lane's element size (the agent
    /// id and the corridor handle included).
    pub fn bytes_per_agent() -> usize {
        macro_rules! sizes {
            ($($lane:ident),*) => {{
                let AgentLanes { $($lane),* } = AgentLanes::default();
                0 $( + element_size(&$lane) )*
            }};
        }
        every_lane!(sizes)
    }

    /// Number of agents.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// Whether there are no agents.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }

    /// Makes room in every lane for `additional` more agents (see [`Vec::try_reserve`]).
    pub(crate) fn try_reserve(
        &mut self,
        additional: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        macro_rules! reserve_all {
            ($($lane:ident),*) => { $( self.$lane.try_reserve(additional)?; )* };
        }
        every_lane!(reserve_all);
        Ok(())
    }

    pub(crate) fn push(&mut self, agent: NewAgent) -> usize {
        self.id.push(agent.id);
        self.position_x.push(agent.position.x);
        self.position_y.push(agent.position.y);
        self.position_z.push(agent.position.z);
        self.polygon.push(agent.polygon);
        self.velocity_x.push(0.0);
        self.velocity_z.push(0.0);
        self.average_x.push(0.0);
        self.average_z.push(0.0);
        self.desired_x.push(0.0);
        self.desired_z.push(0.0);
        self.radius.push(agent.radius);
        self.max_speed.push(agent.max_speed);
        self.preferred_speed.push(agent.preferred_speed);
        self.max_acceleration.push(agent.max_acceleration);
        self.gradient_x.push(0.0);
        self.gradient_z.push(0.0);
        self.patch_hint.push(u32::MAX);
        self.speed_limit.push(agent.max_speed);
        self.acceleration_limit.push(agent.max_acceleration);
        self.goal_x.push(agent.position.x);
        self.goal_y.push(agent.position.y);
        self.goal_z.push(agent.position.z);
        self.goal_polygon.push(agent.polygon);
        self.corridor.push(None);
        self.cursor.push(0);
        self.cursor_polygon.push(agent.polygon);
        self.corner_x.push(agent.position.x);
        self.corner_z.push(agent.position.z);
        self.stop_distance.push(0.0);
        self.corner_after_m.push(0.0);
        self.corner_age.push(u8::MAX);
        self.corner_is_horizon.push(true);
        self.slow_x.push(0.0);
        self.slow_z.push(0.0);
        self.slow_speed.push(f32::INFINITY);
        self.support.push(0);
        self.velocity_valid.push(true);
        self.stalled_s.push(0.0);
        self.anchor_x.push(agent.position.x);
        self.anchor_z.push(agent.position.z);
        self.blocked.push(None);
        self.progress_m.push(0.0);
        self.unprogressed_s.push(0.0);
        self.on_head_start.push(false);
        self.status.push(AgentStatus::Idle);
        self.ingest_pending.push(false);
        self.filter.push(FilterId::DEFAULT);
        self.profile.push(ProfileId::DEFAULT);
        self.handoff.push(0);
        self.id.len() - 1
    }

    /// Removes slot `slot` by moving the last agent into it; returns the id of the agent that moved
    /// (if any), whose slot is now `slot`.
    pub(crate) fn swap_remove(&mut self, slot: usize) -> Option<AgentId> {
        macro_rules! remove_all {
            ($($lane:ident),*) => { $( self.$lane.swap_remove(slot); )* };
        }
        every_lane!(remove_all);
        self.id.get(slot).copied()
    }

    /// Reorders the agents in every lane by `swaps` (from [`permutation_swaps`]), one
    /// lane a task on the pool when `parallel`, else lane by lane on this thread. Swapped
    /// in place: nothing allocated, nothing cloned (the corridor lane's handles move rather
    /// than count up and down).
    pub(crate) fn permute(&mut self, swaps: &[(u32, u32)], parallel: bool) {
        if !parallel {
            macro_rules! permute_each {
                ($($lane:ident),*) => { $( apply_swaps(&mut self.$lane, swaps); )* };
            }
            every_lane!(permute_each);
            return;
        }
        rayon::scope(|scope| {
            macro_rules! permute_all {
                ($($lane:ident),*) => { $(
                    let lane = &mut self.$lane;
                    scope.spawn(move |_| apply_swaps(lane, swaps));
                )* };
            }
            every_lane!(permute_all);
        });
    }

    /// The controller request of slot `slot` for a step of `dt` seconds. An agent crossing
    /// an off-mesh link is asked to stand still: the crowd carries it along the link and
    /// replaces the controller's feedback for it (its velocity lanes hold the crossing's
    /// velocity for the neighbours' avoidance, not a walk to continue).
    pub fn step_request(
        &self,
        slot: usize,
        dt: f32,
    ) -> crate::crowd::supports::controller::StepRequest {
        let velocity = if self.status[slot] == AgentStatus::CrossingLink {
            glam::Vec2::ZERO
        } else {
            glam::Vec2::new(self.velocity_x[slot], self.velocity_z[slot])
        };
        crate::crowd::supports::controller::StepRequest {
            dt,
            foot: self.position(slot),
            polygon: self.polygon[slot],
            velocity,
            desired: glam::Vec2::new(self.desired_x[slot], self.desired_z[slot]),
            speed_limit: self.speed_limit[slot],
            acceleration_limit: self.acceleration_limit[slot],
            gradient: glam::Vec2::new(self.gradient_x[slot], self.gradient_z[slot]),
            support: self.support[slot],
            support_velocity: glam::Vec3::ZERO,
            support_angular_velocity_rad_s: 0.0,
            filter: self.filter[slot],
        }
    }

    /// The horizontal cruising speed of slot `slot` on its patch (its preferred speed over
    /// k, like the limit), m/s.
    pub fn cruise_speed(&self, slot: usize) -> f32 {
        self.speed_limit[slot] * (self.preferred_speed[slot] / self.max_speed[slot])
    }

    /// The foot position of slot `slot`.
    pub fn position(&self, slot: usize) -> glam::Vec3 {
        glam::Vec3::new(
            self.position_x[slot],
            self.position_y[slot],
            self.position_z[slot],
        )
    }

    /// Slot `slot`'s net progress over the last step (vAverage: the controller's move less
    /// corrections, per second), m/s.
    pub fn average_velocity(&self, slot: usize) -> glam::Vec2 {
        glam::Vec2::new(self.average_x[slot], self.average_z[slot])
    }

    /// The foot position lanes x, y, z (what the neighbour grid is built over).
    pub fn positions(&self) -> [&[f32]; 3] {
        [&self.position_x, &self.position_y, &self.position_z]
    }

    /// The corridor slot `slot` follows and its cursor (the portal it walks toward).
    pub fn corridor_and_cursor(&self, slot: usize) -> Option<(&Corridor, usize)> {
        let corridor = self.corridor[slot].as_deref()?;
        Some((corridor, self.cursor[slot] as usize))
    }
}

#[cfg(test)]
mod tests;
