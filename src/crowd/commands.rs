//! What a game asks of its agents: add and remove them, order moves or velocities, change
//! their parameters, filters and avoidance profiles, teleport them.
//!
//! Stage: crowd runtime, between steps. Every call checks its agent id and its values
//! first and changes nothing when it refuses (a typed [`CrowdError`] naming the value).
//! Orders take effect at the next step: a move order is ingested there, a velocity order
//! read by the follow stage, new parameters by the avoid and slope passes.

use glam::Vec3;

use super::agent::{AgentId, AgentParams, FilterId, ProfileId, TABLE_ENTRIES_MAX};
use super::avoid::AvoidanceProfile;
use super::components::{
    Cancelling, Ending, HoldOrder, HoldReserved, LinkCrossing, MoveRequest, Slot, VelocityRequest,
};
use super::events::{CancelRecord, CrowdError, CrowdEvent, Outcome};
use super::hold::{FactChange, HoldKeeper, HoldPolicy};
use super::lanes::AgentStatus;
use super::lanes::NewAgent;
use super::log::{Command, LogRecord};
use super::owner::MoverAction;
use super::passes::PortalWindow;
use super::runtime::Crowd;
use super::scheduler::RequestId;
use super::support::SupportMotion;
use crate::geom::limits;
use crate::query::{Nearest, QueryFilter, nearest_polygon};

/// `Err(NotFinite)` or `Err(OutOfRange)` naming `what` when `point` is not a finite point
/// inside the world's coordinates ([`limits::COORDINATE_MAX_M`]).
fn check_point(what: &'static str, point: Vec3) -> Result<(), CrowdError> {
    if !point.is_finite() {
        return Err(CrowdError::NotFinite { what, value: point });
    }
    out_of_range(what, point, limits::COORDINATE_MAX_M, "1e5 m")
}

/// `Err(OutOfRange)` naming `what` and its largest component when a component of `value`
/// exceeds `limit` in magnitude (`limit_text` the range as the error states it).
fn out_of_range(
    what: &'static str,
    value: Vec3,
    limit: f32,
    limit_text: &'static str,
) -> Result<(), CrowdError> {
    if limits::within_each(value, limit) {
        return Ok(());
    }
    Err(CrowdError::OutOfRange {
        what,
        value: value.abs().max_element(),
        limit: limit_text,
    })
}

impl Crowd {
    /// Adds an agent standing at `position` (snapped to the mesh). Everything the step
    /// keeps per agent grows here, not in the step (see [`Crowd::reserve`] to size it all
    /// at once).
    pub fn add_agent(
        &mut self,
        position: Vec3,
        params: AgentParams,
    ) -> Result<AgentId, CrowdError> {
        check_point("agent position", position)?;
        self.check_params(&params)?;
        let nearest = self.snap(position, FilterId::DEFAULT)?;
        // Room first, so a refusal leaves the crowd as it was.
        self.reserve(1)?;
        let entity = self.world.spawn(());
        let agent = self.ids.issue(entity);
        let slot = self.lanes.push(NewAgent {
            id: agent,
            position: nearest.point,
            polygon: nearest.polygon,
            radius: params.radius_m,
            max_speed: params.max_speed_mps,
            preferred_speed: params.preferred_speed_mps,
            max_acceleration: params.max_acceleration_mps2,
        });
        self.lanes.support[slot] = self.support_layer(nearest.polygon);
        self.portal_windows.push(PortalWindow::EMPTY);
        self.world
            .insert(entity, (Slot(slot), params))
            .expect("the entity was just spawned");
        self.log(|| {
            LogRecord::Command(Command::AddAgent {
                agent,
                position,
                params,
            })
        });
        Ok(agent)
    }

    /// Removes an agent; its pending searches are dropped.
    pub fn remove_agent(&mut self, agent: AgentId) -> Result<(), CrowdError> {
        let slot = self.slot(agent)?;
        self.log(|| LogRecord::Command(Command::RemoveAgent { agent }));
        self.portal_windows.swap_remove(slot);
        if let Some(moved) = self.lanes.swap_remove(slot) {
            if let Ok(mut moved_slot) = self.world.get::<&mut Slot>(self.ids.entity(moved)) {
                moved_slot.0 = slot;
            }
        }
        // Its order ends here (cancelled), with the next step's events, whether it walked
        // or braked; its queued jobs and pending request are dropped lazily: the scheduler
        // and the ingest pass skip agents that are gone.
        self.end_replaced_order(agent);
        let braking = self
            .world
            .get::<&Cancelling>(self.ids.entity(agent))
            .ok()
            .map(|c| c.record);
        if let Some(order) = braking.and_then(|record| record.order) {
            self.deferred_events.push(CrowdEvent::OrderEnded {
                agent,
                order,
                outcome: Outcome::Cancelled,
            });
        }
        self.world
            .despawn(self.ids.entity(agent))
            .expect("a known agent");
        self.ids.retire(agent);
        Ok(())
    }

    /// Asks the agent to move to `target`; replaces any current order (which ends
    /// [`Outcome::Cancelled`](crate::crowd::Outcome::Cancelled); its results, if any
    /// arrive, are rejected at adoption by their request id). The order ends once, in a
    /// [`CrowdEvent::OrderEnded`](crate::crowd::CrowdEvent::OrderEnded).
    pub fn request_move(&mut self, agent: AgentId, target: Vec3) -> Result<RequestId, CrowdError> {
        self.order_move(agent, target, None, Logged::Yes)
    }

    /// [`Crowd::request_move`] with a deadline: an order not ended by the step that starts
    /// at [`Crowd::frame`] `deadline_frame` fails there
    /// ([`FailureCondition::DeadlinePassed`](crate::crowd::FailureCondition::DeadlinePassed)):
    /// the agent brakes to a stop as after a cancel, takes no new order meanwhile, and the
    /// outcome is reported once it stands. A deadline not after the current frame is
    /// refused by value.
    pub fn request_move_by(
        &mut self,
        agent: AgentId,
        target: Vec3,
        deadline_frame: u64,
    ) -> Result<RequestId, CrowdError> {
        if deadline_frame <= self.frame {
            return Err(CrowdError::PastDeadline {
                deadline_frame,
                frame: self.frame,
            });
        }
        self.order_move(agent, target, Some(deadline_frame), Logged::Yes)
    }

    /// A move order's admission and installation; logged as a `Move` command unless it
    /// is part of a command logged as a whole (an interaction's walk).
    pub(super) fn order_move(
        &mut self,
        agent: AgentId,
        target: Vec3,
        deadline_frame: Option<u64>,
        logged: Logged,
    ) -> Result<RequestId, CrowdError> {
        let (slot, request) = self.admit(agent, |_, _| check_point("move target", target))?;
        if logged == Logged::Yes {
            self.log(|| {
                LogRecord::Command(Command::Move {
                    agent,
                    order: request,
                    target,
                    deadline_frame,
                })
            });
        }
        self.world
            .insert_one(
                self.ids.entity(agent),
                MoveRequest {
                    target,
                    order: request,
                    query: request,
                    awaiting: true,
                    attempts_since_adopted: 0,
                    adopted_once: false,
                    deadline_frame,
                },
            )
            .expect("a known agent");
        if let Some(deadline) = deadline_frame {
            self.deadlines.push((deadline, agent, request));
        }
        // An older job of this agent is skipped by the scheduler (its request id no longer
        // matches); one pending entry per agent is enough.
        if !self.lanes.ingest_pending[slot] {
            self.lanes.ingest_pending[slot] = true;
            self.pending.push(agent);
        }
        if self.lanes.status[slot] != AgentStatus::CrossingLink {
            // (A crossing agent lands first; its new request is served from the exit.)
            self.lanes.status[slot] = AgentStatus::WaitingForPath;
        }
        self.lanes.on_head_start[slot] = false;
        self.lanes.blocked[slot] = None;
        self.lanes.stalled_s[slot] = 0.0;
        self.lanes.progress_m[slot] = 0.0;
        self.lanes.unprogressed_s[slot] = 0.0;
        Ok(request)
    }

    /// Cancels the agent's order (spec 001: cancel is a state with a receipt, not a flag):
    /// the agent enters `Cancelling` and brakes to a stop (an agent crossing a link lands
    /// first); once it stands, a
    /// [`CrowdEvent::Cancelled`](crate::crowd::CrowdEvent::Cancelled) carries the record
    /// back and the agent is idle, its mover free. Until then it takes no new order, and
    /// asking again returns the same record. Not stopped within two seconds: a
    /// [`CrowdEvent::CancelFault`](crate::crowd::CrowdEvent::CancelFault), once, and it
    /// stays cancelling.
    pub fn cancel(&mut self, agent: AgentId) -> Result<CancelRecord, CrowdError> {
        let slot = self.slot(agent)?;
        let record = self.start_braking(agent, slot, Ending::Cancel);
        self.log(|| LogRecord::Command(Command::Cancel { agent, record }));
        // Braking for a deadline or a block already: the host's cancel is owed its receipt
        // all the same (the order's outcome stays what stopped it).
        if let Ok(mut braking) = self.world.get::<&mut Cancelling>(self.ids.entity(agent)) {
            braking.receipt_owed = true;
        }
        Ok(record)
    }

    /// [`Crowd::cancel`] of one order by its identity (a move, velocity or hold order, as
    /// its request returned it; spec 001: a hold is cancelled by the hold's id): cancelled
    /// if it owns the agent's mover now, the same record again while its braking lasts,
    /// and refused with [`CrowdError::NotOwner`] otherwise, so a cancel that arrives after
    /// its order ended never stops the order that replaced it.
    pub fn cancel_order(
        &mut self,
        agent: AgentId,
        order: RequestId,
    ) -> Result<CancelRecord, CrowdError> {
        let owner = self.owner(agent)?.map(|owner| owner.action);
        match owner {
            Some(MoverAction::Move(id) | MoverAction::Velocity(id) | MoverAction::Hold(id))
                if id == order =>
            {
                self.cancel(agent)
            }
            Some(MoverAction::Braking(record)) if record.order == Some(order) => self.cancel(agent),
            _ => Err(CrowdError::NotOwner {
                agent,
                order,
                owner,
            }),
        }
    }

    /// Takes the agent's mover from its order and brakes it to a stop (a cancel, or a
    /// deadline passed): the record of a braking already under way, else a new one.
    pub(super) fn start_braking(
        &mut self,
        agent: AgentId,
        slot: usize,
        ending: Ending,
    ) -> CancelRecord {
        if let Ok(cancelling) = self.world.get::<&Cancelling>(self.ids.entity(agent)) {
            return cancelling.record;
        }
        let record = CancelRecord {
            order: self.take_order(agent),
            frame: self.frame,
        };
        self.count_handoff(slot);
        self.world
            .insert_one(
                self.ids.entity(agent),
                Cancelling {
                    record,
                    ending,
                    receipt_owed: false,
                    waited_s: 0.0,
                    faulted: false,
                },
            )
            .expect("a known agent");
        if self.lanes.status[slot] != AgentStatus::CrossingLink {
            self.lanes.status[slot] = AgentStatus::Cancelling;
            self.lanes.corridor[slot] = None;
            self.lanes.on_head_start[slot] = false;
        }
        record
    }

    /// Starts a new epoch (after a restore): every result of a query made before it is
    /// rejected at adoption, and each query still waiting for its answer resumes under the
    /// new epoch with the same logical id and the next attempt (spec 001: a registered query
    /// not yet answered continues; its old attempt's results are stale).
    pub fn bump_epoch(&mut self) {
        let epoch = self.epoch + 1;
        self.log(|| LogRecord::Command(Command::BumpEpoch { epoch }));
        self.epoch += 1;
        let epoch = self.epoch;
        let mut resumed = Vec::new();
        for (slot, request) in self.world.query_mut::<(&Slot, &mut MoveRequest)>() {
            if request.awaiting {
                request.query.attempt += 1;
                request.query.epoch = epoch;
                resumed.push(slot.0);
            }
        }
        // In slot order, so the resumed queries queue the same way at any thread count.
        resumed.sort_unstable();
        for slot in resumed {
            let agent = self.lanes.id[slot];
            if self.lanes.status[slot] != AgentStatus::CrossingLink {
                self.lanes.status[slot] = AgentStatus::WaitingForPath;
            }
            self.lanes.on_head_start[slot] = false;
            if !self.lanes.ingest_pending[slot] {
                self.lanes.ingest_pending[slot] = true;
                self.pending.push(agent);
            }
        }
    }

    /// The agent's parameters.
    pub fn params(&self, agent: AgentId) -> Result<AgentParams, CrowdError> {
        self.world
            .get::<&AgentParams>(self.ids.entity(agent))
            .map(|params| *params)
            .map_err(|_| CrowdError::UnknownAgent(agent))
    }

    /// Changes the agent's parameters; they take effect in the next step (its avoidance
    /// spacing, its speed and acceleration limits). Refused, with the crowd unchanged, as
    /// [`Crowd::add_agent`] refuses them.
    pub fn set_params(&mut self, agent: AgentId, params: AgentParams) -> Result<(), CrowdError> {
        let slot = self.slot(agent)?;
        self.check_params(&params)?;
        self.log(|| LogRecord::Command(Command::SetParams { agent, params }));
        let lanes = &mut self.lanes;
        // The patch limits are the surface limits over the patch's k: scaled with them, they
        // hold on the patch the agent stands on until the slope pass refreshes them.
        lanes.speed_limit[slot] *= params.max_speed_mps / lanes.max_speed[slot];
        lanes.acceleration_limit[slot] *=
            params.max_acceleration_mps2 / lanes.max_acceleration[slot];
        lanes.radius[slot] = params.radius_m;
        lanes.max_speed[slot] = params.max_speed_mps;
        lanes.preferred_speed[slot] = params.preferred_speed_mps;
        lanes.max_acceleration[slot] = params.max_acceleration_mps2;
        *self
            .world
            .get::<&mut AgentParams>(self.ids.entity(agent))
            .expect("a known agent") = params;
        Ok(())
    }

    /// Displaces the agent by `by` (an outside force: a shove, a blast), its foot landing
    /// at the point snapped to the mesh under its filter: unlike [`Crowd::teleport`], its
    /// velocity, orders and hold stay as they were (a hold judges its fact where the body
    /// now stands; a walker pushed off its corridor walks back to it, or plans again when
    /// it is too far). An agent crossing a link is teleported off it instead. A non-finite
    /// `by` or a point off the mesh is refused and the agent stays where it was.
    pub fn push(&mut self, agent: AgentId, by: Vec3) -> Result<(), CrowdError> {
        let slot = self.slot(agent)?;
        if !by.is_finite() {
            return Err(CrowdError::NotFinite {
                what: "push",
                value: by,
            });
        }
        out_of_range("push (m)", by, 2.0 * limits::COORDINATE_MAX_M, "2e5 m")?;
        let landing = self.lanes.position(slot) + by;
        if self.lanes.status[slot] == AgentStatus::CrossingLink {
            return self.teleport(agent, landing);
        }
        let nearest = self.snap(landing, self.lanes.filter[slot])?;
        self.log(|| LogRecord::Command(Command::Push { agent, by }));
        let lanes = &mut self.lanes;
        let point = nearest.point;
        (
            lanes.position_x[slot],
            lanes.position_y[slot],
            lanes.position_z[slot],
        ) = (point.x, point.y, point.z);
        lanes.polygon[slot] = nearest.polygon;
        lanes.patch_hint[slot] = u32::MAX;
        self.lanes.support[slot] = self.support_layer(nearest.polygon);
        Ok(())
    }

    /// The support layer of `polygon` (0, the static ground, for a stale one): the support
    /// a foot on it stands on.
    fn support_layer(&self, polygon: crate::mesh::PolyRef) -> u32 {
        self.snapshot.support_layer(polygon).map_or(0, u32::from)
    }

    /// Puts the agent at `position` (snapped to the mesh under its filter), standing still:
    /// it leaves any link it was crossing and its corridor, and an agent with a move order
    /// plans again from where it now stands. A quarantined agent
    /// ([`CrowdEvent::Quarantined`](crate::crowd::CrowdEvent::Quarantined)) leaves its
    /// quarantine so. An off-mesh or non-finite position is refused
    /// and the agent stays where it was.
    pub fn teleport(&mut self, agent: AgentId, position: Vec3) -> Result<(), CrowdError> {
        let slot = self.slot(agent)?;
        check_point("teleport position", position)?;
        let nearest = self.snap(position, self.lanes.filter[slot])?;
        self.log(|| LogRecord::Command(Command::Teleport { agent, position }));
        let _ = self
            .world
            .remove_one::<LinkCrossing>(self.ids.entity(agent));
        let lanes = &mut self.lanes;
        let point = nearest.point;
        (
            lanes.position_x[slot],
            lanes.position_y[slot],
            lanes.position_z[slot],
        ) = (point.x, point.y, point.z);
        lanes.polygon[slot] = nearest.polygon;
        lanes.cursor_polygon[slot] = nearest.polygon;
        (lanes.anchor_x[slot], lanes.anchor_z[slot]) = (point.x, point.z);
        for lane in [
            &mut lanes.velocity_x,
            &mut lanes.velocity_z,
            &mut lanes.average_x,
            &mut lanes.average_z,
            &mut lanes.desired_x,
            &mut lanes.desired_z,
            &mut lanes.stalled_s,
            &mut lanes.progress_m,
            &mut lanes.unprogressed_s,
        ] {
            lane[slot] = 0.0;
        }
        lanes.patch_hint[slot] = u32::MAX;
        lanes.corner_age[slot] = u8::MAX;
        lanes.velocity_valid[slot] = true;
        lanes.blocked[slot] = None;
        self.lanes.support[slot] = self.support_layer(nearest.polygon);
        self.portal_windows[slot] = PortalWindow::EMPTY;
        self.drop_corridor(slot);
        let status = &mut self.lanes.status[slot];
        if self
            .world
            .get::<&Cancelling>(self.ids.entity(agent))
            .is_ok()
        {
            // Braking still: the mover stays held until the receipt (teleported mid-link,
            // it has landed, so its braking counts from here).
            *status = AgentStatus::Cancelling;
        } else if self
            .world
            .get::<&VelocityRequest>(self.ids.entity(agent))
            .is_ok()
        {
            *status = AgentStatus::VelocityControlled;
        } else if self.world.get::<&HoldOrder>(self.ids.entity(agent)).is_ok() {
            // Pushed: the hold judges its fact where the agent now stands.
            *status = AgentStatus::Holding;
        } else if self
            .world
            .get::<&MoveRequest>(self.ids.entity(agent))
            .is_ok()
        {
            self.reissue(agent);
        } else if matches!(
            *status,
            AgentStatus::Moving | AgentStatus::CrossingLink | AgentStatus::Quarantined
        ) {
            *status = AgentStatus::Idle;
        }
        Ok(())
    }

    /// Moves the agent at `velocity` (horizontal, m/s; `y` is ignored) until another
    /// order: its move request, if any, is dropped, and avoidance still adjusts the
    /// velocity around its neighbours (DetourCrowd's `requestMoveVelocity`). A speed above
    /// the agent's `max_speed_mps` or a non-finite velocity is refused by value.
    /// `Vec3::ZERO` holds the agent in place; [`Crowd::cancel`] ends the control. Returns
    /// the order's identity: it owns the agent's mover ([`Crowd::owner`]) and ends, like a
    /// move order, in one [`CrowdEvent::OrderEnded`](crate::crowd::CrowdEvent::OrderEnded)
    /// (cancelled, or replaced by a newer order).
    pub fn request_velocity(
        &mut self,
        agent: AgentId,
        velocity: Vec3,
    ) -> Result<RequestId, CrowdError> {
        let horizontal = glam::Vec2::new(velocity.x, velocity.z);
        let (slot, order) = self.admit(agent, |crowd, slot| {
            if !velocity.is_finite() {
                return Err(CrowdError::NotFinite {
                    what: "requested velocity",
                    value: velocity,
                });
            }
            if horizontal.length() > crowd.lanes.max_speed[slot] {
                return Err(CrowdError::BadParameter {
                    field: "requested speed (above max_speed_mps)",
                    value: horizontal.length(),
                });
            }
            Ok(())
        })?;
        self.log(|| {
            LogRecord::Command(Command::Velocity {
                agent,
                order,
                velocity,
            })
        });
        self.world
            .insert_one(
                self.ids.entity(agent),
                VelocityRequest {
                    velocity: horizontal,
                    order,
                },
            )
            .expect("a known agent");
        if self.lanes.status[slot] != AgentStatus::CrossingLink {
            // (A crossing agent lands first.)
            self.lanes.status[slot] = AgentStatus::VelocityControlled;
            self.drop_corridor(slot);
        }
        self.lanes.blocked[slot] = None;
        self.lanes.stalled_s[slot] = 0.0;
        Ok(order)
    }

    /// Holds the agent at `target` (spec 001's station keeping) under `policy`: each step
    /// the crowd judges its stand fact where it stands
    /// ([`CrowdEvent::StandFact`](crate::crowd::CrowdEvent::StandFact): established with a
    /// new generation, invalidated past the exit threshold, Recovering until a deadline) and
    /// walks it back toward `target` at the policy's correction speed, with avoidance. The
    /// order owns the mover ([`Crowd::owner`]) until it is cancelled or replaced (it ends
    /// `Cancelled`) or the hold fails (`Failure(Hold(why))` once the agent has braked to a
    /// stop). A non-finite target or a policy out of range is refused by value. A hold with
    /// interaction checks comes with [`Crowd::request_interaction`].
    pub fn request_hold(
        &mut self,
        agent: AgentId,
        target: Vec3,
        policy: HoldPolicy,
    ) -> Result<RequestId, CrowdError> {
        let (slot, order) = self.admit(agent, |crowd, _| {
            check_point("hold target", target)?;
            HoldKeeper::new(policy)
                .map_err(|(field, value)| CrowdError::BadParameter { field, value })?;
            crowd.check_hold_capacity(agent)
        })?;
        let keeper = HoldKeeper::new(policy).expect("checked at admission");
        self.log(|| {
            LogRecord::Command(Command::Hold {
                agent,
                order,
                target,
                policy,
            })
        });
        self.world
            .insert_one(
                self.ids.entity(agent),
                HoldOrder {
                    order,
                    target,
                    keeper,
                },
            )
            .expect("a known agent");
        if self.lanes.status[slot] != AgentStatus::CrossingLink {
            // (A crossing agent lands first.)
            self.lanes.status[slot] = AgentStatus::Holding;
            self.drop_corridor(slot);
        }
        self.lanes.blocked[slot] = None;
        self.lanes.stalled_s[slot] = 0.0;
        Ok(order)
    }

    /// Sets the surface velocity of moving support `support` (a conveyor belt's `u`, m/s):
    /// from the next step, a body standing on a polygon of its layer (`SupportId(n)` is
    /// support layer `n + 1`) is carried at `u` besides its own velocity relative to the
    /// belt (spec 004: `u_support + v`); walkers walk at their speed relative to the belt,
    /// holds walk against it to stay on their pose (spec 001's h3). `Vec3::ZERO` stops
    /// the belt. Refused by value: a non-finite velocity, a support beyond the layers.
    pub fn set_support_velocity(
        &mut self,
        support: crate::ids::SupportId,
        velocity: Vec3,
    ) -> Result<(), CrowdError> {
        if !velocity.is_finite() {
            return Err(CrowdError::NotFinite {
                what: "support velocity",
                value: velocity,
            });
        }
        out_of_range(
            "support velocity (m/s)",
            velocity,
            limits::SPEED_MAX_MPS,
            "1e3 m/s",
        )?;
        let layer = support.0 as usize + 1;
        if layer > usize::from(u16::MAX) {
            return Err(CrowdError::UnknownSupport(support));
        }
        if velocity != Vec3::ZERO && self.platform_motion(support).is_some() {
            return Err(CrowdError::PlatformWithSurfaceMotion { support });
        }
        self.log(|| LogRecord::Command(Command::SetSupportVelocity { support, velocity }));
        self.store_support_motion(layer, SupportMotion::belt(velocity));
        Ok(())
    }

    /// Turns moving support `support` about Up through `centre` at `angular_velocity_rad_s`
    /// (a turntable; positive takes +x towards -z): from the next step a body on a polygon
    /// of its layer is carried round the centre, its velocity relative to the table turning
    /// with it (spec 004's wCarry: keeping a local velocity costs no acceleration), goals
    /// on the table ride it, and avoidance sees neighbours in the table's frame. The
    /// table's polygons stay where they were baked: its footprint must be the same at every
    /// angle (a disc; the baked polygon approximates it). `0.0` stops it. Refused by value:
    /// a non-finite centre or rate, a support beyond the layers.
    pub fn set_support_rotation(
        &mut self,
        support: crate::ids::SupportId,
        centre: Vec3,
        angular_velocity_rad_s: f32,
    ) -> Result<(), CrowdError> {
        check_point("turntable centre", centre)?;
        if !angular_velocity_rad_s.is_finite() {
            return Err(CrowdError::NotFinite {
                what: "turntable angular velocity (rad/s, in x)",
                value: Vec3::new(angular_velocity_rad_s, 0.0, 0.0),
            });
        }
        out_of_range(
            "turntable angular velocity (rad/s)",
            Vec3::new(angular_velocity_rad_s, 0.0, 0.0),
            limits::ANGULAR_SPEED_MAX_RAD_S,
            "100 rad/s",
        )?;
        let layer = support.0 as usize + 1;
        if layer > usize::from(u16::MAX) {
            return Err(CrowdError::UnknownSupport(support));
        }
        if angular_velocity_rad_s != 0.0 && self.platform_motion(support).is_some() {
            return Err(CrowdError::PlatformWithSurfaceMotion { support });
        }
        self.log(|| {
            LogRecord::Command(Command::SetSupportRotation {
                support,
                centre,
                angular_velocity_rad_s,
            })
        });
        self.store_support_motion(
            layer,
            SupportMotion::turntable(centre, angular_velocity_rad_s),
        );
        Ok(())
    }

    /// Sets moving support `support` going as `motion`: without a turn rate a belt
    /// ([`Crowd::set_support_velocity`] with its velocity), with one a turntable turning
    /// about the motion's still point, where its velocity is zero
    /// ([`Crowd::set_support_rotation`]; the same field the motion describes from its
    /// pivot). Refused by value: non-finite values, a support beyond the layers, a turning
    /// motion that also moves vertically.
    pub fn set_support_motion(
        &mut self,
        support: crate::ids::SupportId,
        motion: SupportMotion,
    ) -> Result<(), CrowdError> {
        // Each part named as given (the delegated calls would see derived values).
        for (what, value) in [
            ("support motion velocity", motion.velocity),
            ("support motion pivot", motion.pivot),
            (
                "support motion turn rate (rad/s, in x)",
                Vec3::new(motion.angular_velocity_rad_s, 0.0, 0.0),
            ),
        ] {
            if !value.is_finite() {
                return Err(CrowdError::NotFinite { what, value });
            }
        }
        let Some(still) = motion.still_point() else {
            return self.set_support_velocity(support, motion.velocity);
        };
        if motion.velocity.y != 0.0 {
            return Err(CrowdError::UnsupportedSupportMotion {
                support,
                turn_rad_s: motion.angular_velocity_rad_s,
                vertical_mps: motion.velocity.y,
            });
        }
        let centre = Vec3::new(still.x, motion.pivot.y, still.y);
        self.set_support_rotation(support, centre, motion.angular_velocity_rad_s)
    }

    /// Lets link `link` be crossed only within `window` (`None`: whenever it is open), a
    /// connection between a platform and the ground that holds only while the two are
    /// aligned: a lift's door at a floor, a ferry's ramp at a dock. An agent whose path
    /// crosses the link waits at its entry, on its own side, until a crossing started now
    /// would land before the window closes, then crosses; the link stays in its paths
    /// meanwhile (no new search). A window shorter than the crossing (at the agent's cruising
    /// speed) never lets it start: the agent waits until its order is cancelled or fails by
    /// its deadline. Refused by value: a link the mesh does not have, a window that cannot
    /// open ([`ConnectionWindow::problem`](super::ConnectionWindow::problem)).
    pub fn set_link_window(
        &mut self,
        link: crate::mesh::LinkId,
        window: Option<super::ConnectionWindow>,
    ) -> Result<(), CrowdError> {
        if self.snapshot.link(link).is_none() {
            return Err(CrowdError::UnknownLink(link));
        }
        if let Some(problem) = window.as_ref().and_then(super::ConnectionWindow::problem) {
            return Err(CrowdError::BadConnectionWindow {
                link,
                window: window.expect("a window has a problem"),
                problem,
            });
        }
        self.log(|| LogRecord::Command(Command::SetLinkWindow { link, window }));
        let at = self.link_windows.binary_search_by_key(&link, |&(id, _)| id);
        match (at, window) {
            (Ok(at), Some(window)) => self.link_windows[at].1 = window,
            (Ok(at), None) => {
                self.link_windows.remove(at);
            }
            (Err(at), Some(window)) => self.link_windows.insert(at, (link, window)),
            (Err(_), None) => {}
        }
        Ok(())
    }

    /// The window link `link` may be crossed in (`None`: whenever it is open).
    pub fn link_window(&self, link: crate::mesh::LinkId) -> Option<super::ConnectionWindow> {
        self.link_windows
            .binary_search_by_key(&link, |&(id, _)| id)
            .ok()
            .map(|at| self.link_windows[at].1)
    }

    /// Makes support `support` a platform whose footprint moves as `motion` (`None`: no
    /// longer a platform; its polygons stand where they were baked). A platform's polygons
    /// are baked in its own frame, away from the ground, and placed in the world by its
    /// pose, moved and turned about Up (`platform.rs`): agents on it keep their feet and
    /// corridors in its frame, walk it as still ground, ride it, and leave it only by
    /// links, which join it to the ground while it is at their dock
    /// ([`Crowd::set_link_dock`]) and in their window ([`Crowd::set_link_window`]). A host
    /// placing the platform itself sets a
    /// [`PlatformMotion::Placed`](super::PlatformMotion::Placed) each step it moves; a
    /// [`PlatformMotion::Shuttle`](super::PlatformMotion::Shuttle) goes by itself. Takes
    /// effect at once: world positions read now are placed by it. Refused by value: a
    /// motion that cannot be one, a support beyond the layers, a support that is a belt or
    /// a turntable.
    pub fn set_platform_motion(
        &mut self,
        support: crate::ids::SupportId,
        motion: Option<super::PlatformMotion>,
    ) -> Result<(), CrowdError> {
        if let Some(problem) = motion.as_ref().and_then(super::PlatformMotion::problem) {
            return Err(CrowdError::BadPlatformMotion {
                support,
                motion: motion.expect("a motion has a problem"),
                problem,
            });
        }
        let layer = support.0 as usize + 1;
        if layer > usize::from(u16::MAX) {
            return Err(CrowdError::UnknownSupport(support));
        }
        if !self.support_motion(support).is_still() {
            return Err(CrowdError::PlatformWithSurfaceMotion { support });
        }
        self.log(|| LogRecord::Command(Command::SetPlatformMotion { support, motion }));
        let layer = layer as u16;
        let at = self
            .platforms
            .binary_search_by_key(&layer, |platform| platform.layer);
        let platform = motion.map(|motion| super::platform::Platform { layer, motion });
        match (at, platform) {
            (Ok(at), Some(platform)) => self.platforms[at] = platform,
            (Ok(at), None) => {
                self.platforms.remove(at);
            }
            (Err(at), Some(platform)) => self.platforms.insert(at, platform),
            (Err(_), None) => {}
        }
        Ok(())
    }

    /// The motion of platform `support` (`None`: not a platform).
    pub fn platform_motion(&self, support: crate::ids::SupportId) -> Option<super::PlatformMotion> {
        self.platform_on_layer(support.0.checked_add(1)?)
            .map(|platform| platform.motion)
    }

    /// Where platform `support` stands now: the pose that places its polygons in the
    /// world (the identity for a support that is not a platform).
    pub fn platform_pose(&self, support: crate::ids::SupportId) -> super::PlatformPose {
        self.frame_pose(support.0.saturating_add(1))
    }

    /// Lets link `link` join its two sides only while platform `dock.support` stands at
    /// `dock.pose`: the link's end on the platform within `dock.tolerance_m` of where that
    /// pose puts it (`None`: always): a ferry's ramp at its dock, a lift's door at its
    /// floor. A dock on a support that is not (yet) a platform is read against the support
    /// standing where it was baked. A crossing starts only in contact, and each of its
    /// steps checks it again: an agent whose crossing loses it goes back to the entry and
    /// waits there, on its own side, for the next contact (with a window,
    /// [`Crowd::set_link_window`], a crossing starts only if it lands before the window
    /// closes, so a window within the platform's stop keeps every crossing whole). The link
    /// stays in paths meanwhile. Refused by value: a link the mesh does not have, a dock
    /// that cannot be one.
    pub fn set_link_dock(
        &mut self,
        link: crate::mesh::LinkId,
        dock: Option<super::LinkDock>,
    ) -> Result<(), CrowdError> {
        if self.snapshot.link(link).is_none() {
            return Err(CrowdError::UnknownLink(link));
        }
        if let Some(problem) = dock.as_ref().and_then(super::LinkDock::problem) {
            return Err(CrowdError::BadLinkDock {
                link,
                dock: dock.expect("a dock has a problem"),
                problem,
            });
        }
        self.log(|| LogRecord::Command(Command::SetLinkDock { link, dock }));
        let at = self.link_docks.binary_search_by_key(&link, |&(id, _)| id);
        match (at, dock) {
            (Ok(at), Some(dock)) => self.link_docks[at].1 = dock,
            (Ok(at), None) => {
                self.link_docks.remove(at);
            }
            (Err(at), Some(dock)) => self.link_docks.insert(at, (link, dock)),
            (Err(_), None) => {}
        }
        Ok(())
    }

    /// The dock of link `link` (`None`: it joins its sides whenever it is open).
    pub fn link_dock(&self, link: crate::mesh::LinkId) -> Option<super::LinkDock> {
        self.link_docks
            .binary_search_by_key(&link, |&(id, _)| id)
            .ok()
            .map(|at| self.link_docks[at].1)
    }

    /// Whether link `link`'s dock (if any) holds at frame `frame`: the link's end on the
    /// platform, placed by the platform's pose then and by the dock's, within the
    /// tolerance.
    pub(super) fn link_in_contact(&self, link: crate::mesh::LinkId, frame: u64) -> bool {
        let Some(dock) = self.link_dock(link) else {
            return true;
        };
        let layer = dock.support.0.saturating_add(1);
        let pose = self
            .platform_on_layer(layer)
            .map_or(super::PlatformPose::IDENTITY, |platform| {
                platform.motion.pose_at(frame)
            });
        let Some(link) = self.snapshot.link(link) else {
            return false;
        };
        // The end on the platform (the end, if neither is attached to it).
        let on_platform = |polygon: Option<crate::mesh::PolyRef>| {
            polygon.and_then(|polygon| self.snapshot.support_layer(polygon))
                == u16::try_from(layer).ok()
        };
        let end = if on_platform(link.start_polygon) && !on_platform(link.end_polygon) {
            link.desc.start
        } else {
            link.desc.end
        };
        pose.distance_of(end, &dock.pose) <= dock.tolerance_m
    }

    fn store_support_motion(&mut self, layer: usize, motion: SupportMotion) {
        if self.support_motions.len() <= layer {
            self.support_motions.resize(layer + 1, SupportMotion::STILL);
        }
        self.support_motions[layer] = motion;
    }

    /// The surface velocity of moving support `support` as a belt (zero unless set; a
    /// turntable's is zero at its centre: see [`Crowd::support_motion`]).
    pub fn support_velocity(&self, support: crate::ids::SupportId) -> Vec3 {
        self.support_motion(support).velocity
    }

    /// The motion of moving support `support` ([`SupportMotion::STILL`] unless set).
    pub fn support_motion(&self, support: crate::ids::SupportId) -> SupportMotion {
        self.support_motions
            .get(support.0 as usize + 1)
            .copied()
            .unwrap_or(SupportMotion::STILL)
    }

    /// Releases the agent's hold `hold` for a mode exit (spec 001: first the stand fact
    /// ends, then the interaction is cleaned up, then the hold is cancelled by its id): its
    /// fact, if one holds, ends now ([`CrowdEvent::StandFact`] with
    /// [`FactChange::Released`](crate::crowd::FactChange::Released), with the next step's
    /// events) and is never established again, so nothing may act on it; the body is
    /// still kept on the pose while the host cleans up. An interaction whose pose the hold
    /// was still settling on ends `Cancelled`. [`Crowd::cancel_order`] with the same id
    /// then brakes the agent and frees the mover. Asking again changes nothing; a hold
    /// that does not own the agent's mover is refused ([`CrowdError::NotOwner`]).
    pub fn release_hold(&mut self, agent: AgentId, hold: RequestId) -> Result<(), CrowdError> {
        let owner = self.owner(agent)?.map(|owner| owner.action);
        if owner != Some(MoverAction::Hold(hold)) {
            return Err(CrowdError::NotOwner {
                agent,
                order: hold,
                owner,
            });
        }
        self.log(|| LogRecord::Command(Command::ReleaseHold { agent, hold }));
        let fact_ended = self
            .world
            .get::<&mut HoldOrder>(self.ids.entity(agent))
            .expect("the hold owns the mover")
            .keeper
            .release();
        if fact_ended {
            self.deferred_events.push(CrowdEvent::StandFact {
                agent,
                order: hold,
                change: FactChange::Released,
            });
        }
        // The interaction's checks end with the fact (one still settling ends Cancelled).
        self.take_interaction(agent);
        Ok(())
    }

    /// [`Crowd::request_move`] whose success hands the mover straight to a hold of the
    /// target (as snapped to the mesh) under `policy` ([`Crowd::request_hold`]): the move ends `Success` and,
    /// in the same step, the hold takes the mover (one owner change). Both identities are
    /// issued here, the hold's reserved with the move (returned as `(move, hold)`); a move
    /// that ends any other way ends its hold `Cancelled` unstarted, so each order still
    /// ends exactly once. Refused as `request_move` and `request_hold` refuse.
    pub fn request_move_then_hold(
        &mut self,
        agent: AgentId,
        target: Vec3,
        policy: HoldPolicy,
    ) -> Result<(RequestId, RequestId), CrowdError> {
        HoldKeeper::new(policy)
            .map_err(|(field, value)| CrowdError::BadParameter { field, value })?;
        self.slot(agent)?;
        self.check_hold_capacity(agent)?;
        let walk = self.order_move(agent, target, None, Logged::Yes)?;
        Ok((walk, self.reserve_hold(agent, policy, Logged::Yes)))
    }

    /// Reserves a hold beside the agent's (just given) move order; returns its identity.
    pub(super) fn reserve_hold(
        &mut self,
        agent: AgentId,
        policy: HoldPolicy,
        logged: Logged,
    ) -> RequestId {
        let hold = RequestId {
            logical: self.next_logical,
            attempt: 0,
            epoch: self.epoch,
        };
        self.next_logical += 1;
        if logged == Logged::Yes {
            self.log(|| {
                LogRecord::Command(Command::ReserveHold {
                    agent,
                    hold,
                    policy,
                })
            });
        }
        self.world
            .insert_one(self.ids.entity(agent), HoldReserved { hold, policy })
            .expect("a known agent");
        hold
    }

    /// The hold reserved beside the agent's arrived move takes its mover, holding the
    /// move's goal.
    pub(super) fn start_reserved_hold(&mut self, agent: AgentId, slot: usize) {
        let Ok(reserved) = self
            .world
            .remove_one::<HoldReserved>(self.ids.entity(agent))
        else {
            return;
        };
        let keeper = HoldKeeper::new(reserved.policy).expect("checked at admission");
        // The pose the move was sent to (its snapped goal), not where it stopped within the
        // arrival tolerance: the hold walks the rest (spec 001 keeps the target stand pose
        // from admission).
        let lanes = &self.lanes;
        let target = Vec3::new(lanes.goal_x[slot], lanes.goal_y[slot], lanes.goal_z[slot]);
        self.world
            .insert_one(
                self.ids.entity(agent),
                HoldOrder {
                    order: reserved.hold,
                    target,
                    keeper,
                },
            )
            .expect("a known agent");
        self.lanes.status[slot] = AgentStatus::Holding;
    }

    /// Registers a query filter (area costs and exclusions) agents can be given with
    /// [`Crowd::set_filter`]. A crowd holds at most [`TABLE_ENTRIES_MAX`] filters, its
    /// default among them. In a crowd configured without links
    /// ([`CrowdConfig::use_links`](crate::crowd::CrowdConfig::use_links) false) the
    /// registered copy forbids links too.
    pub fn add_filter(&mut self, mut filter: QueryFilter) -> Result<FilterId, CrowdError> {
        if self.filters.len() >= TABLE_ENTRIES_MAX {
            return Err(CrowdError::TableFull {
                table: "query filters",
                entries: TABLE_ENTRIES_MAX,
            });
        }
        let id = FilterId(self.filters.len() as u8);
        self.log(|| {
            LogRecord::Command(Command::AddFilter {
                filter: id,
                query_filter: Box::new(filter.clone()),
            })
        });
        if !self.config.use_links {
            filter.set_links_allowed(false);
        }
        self.filters.push(filter);
        Ok(id)
    }

    /// The agent walks under `filter` from now on: its corridor is dropped and a move order
    /// plans again under the new filter.
    pub fn set_filter(&mut self, agent: AgentId, filter: FilterId) -> Result<(), CrowdError> {
        let slot = self.slot(agent)?;
        if filter.index() >= self.filters.len() {
            return Err(CrowdError::UnknownFilter(filter));
        }
        self.log(|| LogRecord::Command(Command::SetFilter { agent, filter }));
        if self.lanes.filter[slot] == filter {
            return Ok(());
        }
        self.lanes.filter[slot] = filter;
        if self.lanes.status[slot] != AgentStatus::CrossingLink {
            self.drop_corridor(slot);
            if self
                .world
                .get::<&MoveRequest>(self.ids.entity(agent))
                .is_ok()
            {
                self.reissue(agent);
            }
        }
        Ok(())
    }

    /// The agent's query filter.
    pub fn filter(&self, agent: AgentId) -> Result<FilterId, CrowdError> {
        Ok(self.lanes.filter[self.slot(agent)?])
    }

    /// Registers an avoidance profile agents can be given with
    /// [`Crowd::set_avoidance_profile`]. A crowd holds at most [`TABLE_ENTRIES_MAX`]
    /// profiles, its default among them.
    pub fn add_avoidance_profile(
        &mut self,
        profile: AvoidanceProfile,
    ) -> Result<ProfileId, CrowdError> {
        if let Some((field, value)) = profile.invalid_field() {
            return Err(CrowdError::BadParameter { field, value });
        }
        if self.profiles.len() >= TABLE_ENTRIES_MAX {
            return Err(CrowdError::TableFull {
                table: "avoidance profiles",
                entries: TABLE_ENTRIES_MAX,
            });
        }
        let id = ProfileId(self.profiles.len() as u8);
        self.log(|| {
            LogRecord::Command(Command::AddAvoidanceProfile {
                profile: id,
                avoidance: profile,
            })
        });
        self.profiles.push(profile);
        Ok(id)
    }

    /// The agent avoids by `profile` from the next step on.
    pub fn set_avoidance_profile(
        &mut self,
        agent: AgentId,
        profile: ProfileId,
    ) -> Result<(), CrowdError> {
        let slot = self.slot(agent)?;
        if profile.index() >= self.profiles.len() {
            return Err(CrowdError::UnknownProfile(profile));
        }
        self.log(|| LogRecord::Command(Command::SetAvoidanceProfile { agent, profile }));
        self.lanes.profile[slot] = profile;
        Ok(())
    }

    /// Parameters refused on their own or against the mesh the crowd runs on: a body wider
    /// or taller than the mesh was baked for would scrape its walls or miss its ceilings.
    /// (A hand-built mesh names no agent size, 0, and sets no bound.)
    fn check_params(&self, params: &AgentParams) -> Result<(), CrowdError> {
        if let Some((field, value)) = params.invalid_field() {
            return Err(CrowdError::BadParameter { field, value });
        }
        let baked = &self.snapshot.data().params;
        if baked.agent_radius_m > 0.0 && params.radius_m > baked.agent_radius_m {
            return Err(CrowdError::RadiusOverBaked {
                radius_m: params.radius_m,
                baked_radius_m: baked.agent_radius_m,
            });
        }
        if baked.agent_height_m > 0.0 && params.height_m > baked.agent_height_m {
            return Err(CrowdError::HeightOverBaked {
                height_m: params.height_m,
                baked_height_m: baked.agent_height_m,
            });
        }
        Ok(())
    }

    /// The nearest walkable point to `position` under `filter`, or `OffMesh`.
    fn snap(&self, position: Vec3, filter: FilterId) -> Result<Nearest, CrowdError> {
        nearest_polygon(
            &self.snapshot,
            position,
            self.config.snap_half_extents,
            &self.filters[filter.index()],
        )
        .ok()
        .flatten()
        .ok_or(CrowdError::OffMesh(position))
    }

    /// Drops the corridor of the agent in `slot` (and its head start).
    fn drop_corridor(&mut self, slot: usize) {
        self.lanes.corridor[slot] = None;
        self.lanes.on_head_start[slot] = false;
        self.lanes.corner_age[slot] = u8::MAX;
    }
}

/// Whether a part of a command writes its own log entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Logged {
    /// It is the command given: logged.
    Yes,
    /// It is part of a command logged as a whole.
    InWhole,
}
