//! What a game asks of its agents: add and remove them, order moves or velocities, change
//! their parameters, filters and avoidance profiles, teleport them. (Hold orders are in
//! `hold_orders.rs`; what the game tells of its world, supports and links, in
//! `world_changes.rs`.)
//!
//! Stage: crowd runtime, between steps. Every call checks its agent id and its values
//! first and changes nothing when it refuses (a typed [`CrowdError`] naming the value).
//! Orders take effect at the next step: a move order is ingested there, a velocity order
//! read by the follow stage, new parameters by the avoid and slope passes.

use glam::Vec3;

use crate::crowd::agents::AgentStatus;
use crate::crowd::agents::RequestId;
use crate::crowd::agents::{AgentId, AgentParams, FilterId, ProfileId, TABLE_ENTRIES_MAX};
use crate::crowd::avoidance::velocities::AvoidanceProfile;
use crate::crowd::components::{
    Cancelling, Ending, HoldOrder, LinkCrossing, MoveRequest, Slot, VelocityRequest,
};
use crate::crowd::events::MoverAction;
use crate::crowd::events::{CancelRecord, CrowdError, CrowdEvent, Outcome};
use crate::crowd::lanes::NewAgent;
use crate::crowd::log::LogRecord;
use crate::crowd::runtime::Crowd;
use crate::crowd::walking::passes::PortalWindow;
use crate::geom::limits;
use crate::query::{Nearest, QueryFilter, nearest_polygon};

/// `Err(NotFinite)` or `Err(OutOfRange)` naming `what` when `point` is not a finite point
/// inside the world's coordinates ([`limits::COORDINATE_MAX_M`]).
pub(crate) fn check_point(what: &'static str, point: Vec3) -> Result<(), CrowdError> {
    if !point.is_finite() {
        return Err(CrowdError::NotFinite { what, value: point });
    }
    out_of_range(what, point, limits::COORDINATE_MAX_M, "1e5 m")
}

/// `Err(OutOfRange)` naming `what` and its largest component when a component of `value`
/// exceeds `limit` in magnitude (`limit_text` the range as the error states it).
pub(crate) fn out_of_range(
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
        self.log(|| LogRecord::AddAgent {
            agent,
            position,
            params,
        });
        Ok(agent)
    }

    /// Removes an agent; its pending searches are dropped.
    pub fn remove_agent(&mut self, agent: AgentId) -> Result<(), CrowdError> {
        let slot = self.slot(agent)?;
        self.log(|| LogRecord::RemoveAgent { agent });
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
    pub(crate) fn order_move(
        &mut self,
        agent: AgentId,
        target: Vec3,
        deadline_frame: Option<u64>,
        logged: Logged,
    ) -> Result<RequestId, CrowdError> {
        let (slot, request) = self.admit(agent, |_, _| check_point("move target", target))?;
        if logged == Logged::Yes {
            self.log(|| LogRecord::Move {
                agent,
                order: request,
                target,
                deadline_frame,
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
        self.log(|| LogRecord::Cancel { agent, record });
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
    pub(crate) fn start_braking(
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
        self.log(|| LogRecord::BumpEpoch { epoch });
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
        self.log(|| LogRecord::SetParams { agent, params });
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
        self.log(|| LogRecord::Push { agent, by });
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
        self.log(|| LogRecord::Teleport { agent, position });
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
        self.log(|| LogRecord::Velocity {
            agent,
            order,
            velocity,
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

    /// Registers a query filter (area costs and exclusions) agents can be given with
    /// [`Crowd::set_filter`]. A crowd holds at most 16 filters, its
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
        self.log(|| LogRecord::AddFilter {
            filter: id,
            query_filter: Box::new(filter.clone()),
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
        self.log(|| LogRecord::SetFilter { agent, filter });
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
    /// [`Crowd::set_avoidance_profile`]. A crowd holds at most 16
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
        self.log(|| LogRecord::AddAvoidanceProfile {
            profile: id,
            avoidance: profile,
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
        self.log(|| LogRecord::SetAvoidanceProfile { agent, profile });
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
    pub(crate) fn drop_corridor(&mut self, slot: usize) {
        self.lanes.corridor[slot] = None;
        self.lanes.on_head_start[slot] = false;
        self.lanes.corner_age[slot] = u8::MAX;
    }
}

/// Whether a part of a command writes its own log entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Logged {
    /// It is the command given: logged.
    Yes,
    /// It is part of a command logged as a whole.
    InWhole,
}
