//! Off-mesh link crossing: an agent at a link's entry is carried by the crowd to its exit
//! (the host plays the link's action) and lands on its corridor again.
//!
//! Stage: crowd runtime. The follow pass finds agents at a link's entry; the move pass
//! advances the crossing agents in place of the controller's answer; landing reads what
//! changed while the agent was in the air (a new order, a cancel, a stale corridor).
//! A crossing's state is a hecs component: few agents cross at once.

use glam::Vec3;

use crate::crowd::agents::AgentStatus;
use crate::crowd::components::{Cancelling, HoldOrder, LinkCrossing, MoveRequest, VelocityRequest};
use crate::crowd::events::CrowdEvent;
use crate::crowd::runtime::Crowd;
use crate::query::{Validity, nearest_polygon};

/// Where an agent is on the off-mesh link it is crossing ([`Crowd::crossing`]), for the
/// host's animation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrossingState {
    /// The link.
    pub link: crate::mesh::LinkId,
    /// Foot position where the crossing started.
    pub from: Vec3,
    /// Where it lands.
    pub to: Vec3,
    /// How far along, 0 at the start to 1 at landing.
    pub progress: f32,
    /// Seconds the whole crossing takes.
    pub duration_s: f32,
}

impl Crowd {
    /// An agent at the entry of its corridor's next link starts crossing it, if the link is
    /// still open in the version its path read; otherwise it asks for a new path (a door
    /// closed in its face is never walked through). A link with a connection window
    /// ([`Crowd::set_link_window`]) is crossed only when the crossing fits in what is left
    /// of the window; until then the agent waits at the entry.
    pub(crate) fn start_crossing(&mut self, slot: usize, dt: f32, events: &mut Vec<CrowdEvent>) {
        let agent = self.lanes.id[slot];
        let Some(corridor) = self.lanes.corridor[slot].clone() else {
            return;
        };
        let Some(&next) = corridor.next_link(self.lanes.cursor[slot] as usize) else {
            return;
        };
        let open_as_read = corridor.reads.links().iter().any(|&(id, version)| {
            id == next.link
                && self
                    .snapshot
                    .link(id)
                    .is_some_and(|link| link.open && link.version == version)
        });
        let landing = corridor.polygon(&self.snapshot, next.index as usize);
        let (true, Some(landing)) = (open_as_read, landing) else {
            self.lanes.corridor[slot] = None;
            let changed = if open_as_read {
                corridor
                    .reads
                    .still_valid_in(&self.snapshot, self.filter_of(slot))
            } else {
                Validity::LinkChanged(next.link)
            };
            self.report_invalidated(agent, changed);
            self.reissue(agent);
            return;
        };
        // The crossing runs in the world: from the foot where the platform (if any) has
        // carried it to the exit where the landing's platform stands.
        let entry = self.lanes.position(slot);
        let from = self.frame_pose(self.lanes.support[slot]).place(entry);
        let to = self.frame_pose(self.layer_of(landing)).place(next.exit);
        // Crossed at the agent's cruising speed, in at least one step.
        let duration_s = (from.distance(to) / self.lanes.preferred_speed[slot]).max(dt);
        let frames_needed = (duration_s / dt).ceil() as u64;
        // A connection is crossed only if the crossing lands before its window closes and
        // the platform it joins is at the link's dock now and (as far as its motion tells)
        // when the crossing lands: otherwise the agent stands at the entry, on its own
        // side, and tries again next frame (its path still goes this way).
        let window_too_short = self
            .link_window(next.link)
            .is_some_and(|window| window.open_frames_left(self.frame) < frames_needed);
        let out_of_contact = !self.link_in_contact(next.link, self.frame)
            || !self.link_in_contact(next.link, self.frame + frames_needed);
        if window_too_short || out_of_contact {
            self.wait_at_entry(slot);
            return;
        }
        let crossing = LinkCrossing {
            link: next.link,
            from,
            entry,
            to: next.exit,
            elapsed_s: 0.0,
            duration_s,
            landing,
            landing_index: next.index,
        };
        self.world
            .insert_one(self.ids.entity(agent), crossing)
            .expect("a known agent");
        let velocity = (next.exit - from) / duration_s;
        let lanes = &mut self.lanes;
        lanes.status[slot] = AgentStatus::CrossingLink;
        // Neighbours see the crossing's velocity; the agent does not negotiate.
        lanes.velocity_x[slot] = velocity.x;
        lanes.velocity_z[slot] = velocity.z;
        lanes.desired_x[slot] = 0.0;
        lanes.desired_z[slot] = 0.0;
        events.push(CrowdEvent::LinkStarted {
            agent,
            link: next.link,
        });
    }

    /// Holds the agent in `slot` at the entry of a connection it may not cross yet.
    fn wait_at_entry(&mut self, slot: usize) {
        let lanes = &mut self.lanes;
        lanes.desired_x[slot] = 0.0;
        lanes.desired_z[slot] = 0.0;
        // Waiting for a connection is no block: it reports no `Blocked`, and a
        // `FailAfter` policy does not fail the order for it.
        lanes.unprogressed_s[slot] = 0.0;
        lanes.stalled_s[slot] = 0.0;
        lanes.anchor_x[slot] = lanes.position_x[slot];
        lanes.anchor_z[slot] = lanes.position_z[slot];
    }

    /// The support layer of `polygon` (0, the ground's, for a polygon gone).
    pub(crate) fn layer_of(&self, polygon: crate::mesh::PolyRef) -> u32 {
        self.snapshot.support_layer(polygon).map_or(0, u32::from)
    }

    /// Carries every crossing agent along its link for one step, replacing the controller's
    /// feedback for it (the controller was asked to stand still); an agent reaching the
    /// exit lands in the corridor polygon after the link and walks on. A crossing agent is
    /// in the world's frame (support 0) until it lands; `platforms_end` places the exit on
    /// a platform where the platform is after the step. A crossing whose link loses its
    /// dock's contact ([`Crowd::set_link_dock`]) is undone: the agent stands at the entry
    /// again, in its own frame, and waits there.
    pub(crate) fn advance_crossings(
        &mut self,
        feedback: &mut [crate::crowd::supports::controller::StepFeedback],
        dt: f32,
        platforms_end: &crate::crowd::supports::platform::PlatformFrames,
        events: &mut Vec<CrowdEvent>,
    ) {
        for (slot, step) in feedback.iter_mut().enumerate() {
            if self.lanes.status[slot] != AgentStatus::CrossingLink {
                continue;
            }
            let agent = self.lanes.id[slot];
            let Ok(mut crossing) = self
                .world
                .get::<&mut LinkCrossing>(self.ids.entity(agent))
                .map(|c| *c)
            else {
                // Cannot happen (the component lives as long as the status); recover by
                // walking on from where the agent is.
                self.lanes.status[slot] = AgentStatus::Moving;
                continue;
            };
            let before = self
                .frame_pose(self.lanes.support[slot])
                .place(self.lanes.position(slot));
            if !self.link_in_contact(crossing.link, self.frame + 1) {
                self.undo_crossing(slot, step, &crossing, before, dt);
                continue;
            }
            crossing.elapsed_s += dt;
            let landed = crossing.elapsed_s >= crossing.duration_s;
            let landing_layer = self.layer_of(crossing.landing);
            let to = platforms_end.place(landing_layer, crossing.to);
            let (foot, polygon, support) = if landed {
                let (foot, polygon) = self.landing(slot, &crossing);
                (foot, polygon, self.layer_of(polygon))
            } else {
                let t = crossing.elapsed_s / crossing.duration_s;
                (crossing.from.lerp(to, t), self.lanes.polygon[slot], 0)
            };
            let velocity = if landed {
                Vec3::ZERO
            } else {
                (to - crossing.from) / crossing.duration_s
            };
            // The move in the world: a landing on a platform is placed by it.
            let displacement = platforms_end.place(support, foot) - before;
            *step = crate::crowd::supports::controller::StepFeedback {
                dt,
                foot,
                polygon,
                displacement,
                displacement_support: Vec3::ZERO,
                displacement_correction: Vec3::ZERO,
                support,
                contact: landed,
                velocity_world_end: velocity,
                velocity_support_end: Vec3::ZERO,
                velocity_valid: true,
                blocked: false,
            };
            if !landed {
                *self
                    .world
                    .get::<&mut LinkCrossing>(self.ids.entity(agent))
                    .expect("read above") = crossing;
                continue;
            }
            let _ = self
                .world
                .remove_one::<LinkCrossing>(self.ids.entity(agent));
            events.push(CrowdEvent::LinkFinished {
                agent,
                link: crossing.link,
            });
            self.land(slot, &crossing);
        }
    }

    /// Puts a crossing agent back at its link's entry, standing in its own frame, and
    /// ends the crossing: its link lost the contact it needs.
    fn undo_crossing(
        &mut self,
        slot: usize,
        step: &mut crate::crowd::supports::controller::StepFeedback,
        crossing: &LinkCrossing,
        before: Vec3,
        dt: f32,
    ) {
        let agent = self.lanes.id[slot];
        let _ = self
            .world
            .remove_one::<LinkCrossing>(self.ids.entity(agent));
        let polygon = self.lanes.polygon[slot];
        let support = self.layer_of(polygon);
        *step = crate::crowd::supports::controller::StepFeedback {
            dt,
            foot: crossing.entry,
            polygon,
            displacement: self.frame_pose(support).place(crossing.entry) - before,
            displacement_support: Vec3::ZERO,
            displacement_correction: Vec3::ZERO,
            support,
            contact: true,
            velocity_world_end: Vec3::ZERO,
            velocity_support_end: Vec3::ZERO,
            velocity_valid: true,
            blocked: false,
        };
        self.lanes.status[slot] = AgentStatus::Moving;
        self.lanes.velocity_x[slot] = 0.0;
        self.lanes.velocity_z[slot] = 0.0;
    }

    /// Where a crossing ends: the exit on the landing polygon (or, if that polygon's tile
    /// was replaced meanwhile, on the nearest polygon).
    fn landing(&self, slot: usize, crossing: &LinkCrossing) -> (Vec3, crate::mesh::PolyRef) {
        let filter = self.filter_of(slot);
        if let Some(tile) = self.snapshot.tile(crossing.landing) {
            return (
                tile.closest_point(crossing.landing.polygon(), crossing.to)
                    .0,
                crossing.landing,
            );
        }
        nearest_polygon(
            &self.snapshot,
            crossing.to,
            self.config.snap_half_extents,
            filter,
        )
        .ok()
        .flatten()
        .map_or((crossing.to, crossing.landing), |nearest| {
            (nearest.point, nearest.polygon)
        })
    }

    /// The agent's state after landing: walking on along its corridor from the landing
    /// polygon, or serving what changed while it was in the air (a new request, a cancel,
    /// a corridor gone stale).
    fn land(&mut self, slot: usize, crossing: &LinkCrossing) {
        let agent = self.lanes.id[slot];
        let request = self
            .world
            .get::<&MoveRequest>(self.ids.entity(agent))
            .ok()
            .map(|m| *m);
        let lanes = &mut self.lanes;
        lanes.cursor[slot] = crossing.landing_index;
        lanes.cursor_polygon[slot] = crossing.landing;
        lanes.corner_age[slot] = u8::MAX;
        lanes.corner_is_horizon[slot] = true;
        lanes.stalled_s[slot] = 0.0;
        lanes.progress_m[slot] = 0.0;
        lanes.unprogressed_s[slot] = 0.0;
        let Some(request) = request else {
            // Cancelled, or put under velocity control, during the crossing.
            let velocity_controlled = self
                .world
                .get::<&VelocityRequest>(self.ids.entity(agent))
                .is_ok();
            let cancelling = self
                .world
                .get::<&Cancelling>(self.ids.entity(agent))
                .is_ok();
            let holding = self.world.get::<&HoldOrder>(self.ids.entity(agent)).is_ok();
            lanes.status[slot] = if velocity_controlled {
                AgentStatus::VelocityControlled
            } else if holding {
                AgentStatus::Holding
            } else if cancelling {
                AgentStatus::Cancelling
            } else {
                AgentStatus::Idle
            };
            lanes.corridor[slot] = None;
            return;
        };
        if request.awaiting {
            // A new request arrived during the crossing; its ingest was deferred to now.
            lanes.status[slot] = AgentStatus::WaitingForPath;
            lanes.corridor[slot] = None;
            return;
        }
        lanes.status[slot] = AgentStatus::Moving;
        let filter = &self.filters[lanes.filter[slot].index()];
        let changed = match lanes.corridor[slot].as_ref() {
            None => None,
            Some(corridor) => Some(corridor.reads.still_valid_in(&self.snapshot, filter)),
        };
        match changed {
            Some(Validity::Valid) => {}
            changed => {
                lanes.corridor[slot] = None;
                if let Some(changed) = changed {
                    self.report_invalidated(agent, changed);
                }
                self.reissue(agent);
            }
        }
    }
}
