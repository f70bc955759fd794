//! The owner of an agent's mover (spec 001): the movement resource has one owner at a time,
//! named by a token, and changes hands at one entry.
//!
//! Stage: crowd runtime, between steps. The owner is the agent's move order, its velocity
//! order, its hold order, or its braking (after a cancel, a deadline or a block) until it stands; an agent
//! with none is idle. [`Crowd::owner`] reads the token: the action and the handoff step, a
//! per-agent count of owner changes. Every new action is admitted by `Crowd::admit`, which
//! checks together that no braking holds the mover (its receipt not given yet) and the new
//! action's own preconditions, then ends the old owner's order (`Cancelled`) and counts the
//! handoff. Invariant: whatever an old owner's results or events do later (a search
//! answering, an arrival reported), they never touch the new owner: results are matched to
//! the current query's identity, and an ended order's events only report.

use crate::crowd::agents::AgentId;
use crate::crowd::agents::RequestId;
use crate::crowd::components::{Cancelling, HoldOrder, HoldReserved, MoveRequest, VelocityRequest};
use crate::crowd::events::{CrowdError, CrowdEvent, Outcome};
use crate::crowd::events::{MoverAction, MoverOwner};
use crate::crowd::interactions::hold::HoldView;
use crate::crowd::runtime::Crowd;

impl Crowd {
    /// The owner of the agent's mover, `None` when it is idle (no order, not braking).
    pub fn owner(&self, agent: AgentId) -> Result<Option<MoverOwner>, CrowdError> {
        let slot = self.slot(agent)?;
        let entity = self.ids.entity(agent);
        let action = if let Ok(braking) = self.world.get::<&Cancelling>(entity) {
            MoverAction::Braking(braking.record)
        } else if let Ok(request) = self.world.get::<&MoveRequest>(entity) {
            MoverAction::Move(request.order)
        } else if let Ok(velocity) = self.world.get::<&VelocityRequest>(entity) {
            MoverAction::Velocity(velocity.order)
        } else if let Ok(hold) = self.world.get::<&HoldOrder>(entity) {
            MoverAction::Hold(hold.order)
        } else {
            return Ok(None);
        };
        Ok(Some(MoverOwner {
            action,
            handoff: self.lanes.handoff[slot],
        }))
    }

    /// The agent's hold, if a hold order owns its mover: its identity, stand point, phase
    /// and fact generation.
    pub fn hold(&self, agent: AgentId) -> Result<Option<HoldView>, CrowdError> {
        self.slot(agent)?;
        Ok(self
            .world
            .get::<&HoldOrder>(self.ids.entity(agent))
            .ok()
            .map(|hold| HoldView {
                order: hold.order,
                target: hold.target,
                phase: hold.keeper.phase(),
                fact: hold.keeper.fact(),
            }))
    }

    /// Refuses a new hold (started or reserved) for `agent` when the crowd's holds, its own
    /// current one aside (the new order replaces it), fill `CrowdConfig::holds_max`.
    pub(crate) fn check_hold_capacity(&self, agent: AgentId) -> Result<(), CrowdError> {
        let entity = self.ids.entity(agent);
        let own = usize::from(
            self.world.get::<&HoldOrder>(entity).is_ok()
                || self.world.get::<&HoldReserved>(entity).is_ok(),
        );
        let held = self.world.query::<&HoldOrder>().iter().len()
            + self.world.query::<&HoldReserved>().iter().len();
        if held - own >= self.config.holds_max {
            return Err(CrowdError::TableFull {
                table: "holds (CrowdConfig::holds_max)",
                entries: self.config.holds_max,
            });
        }
        Ok(())
    }

    /// The hold reserved beside the agent's move order (`request_move_then_hold`), if any:
    /// it owns nothing until the move succeeds.
    pub fn reserved_hold(&self, agent: AgentId) -> Result<Option<RequestId>, CrowdError> {
        self.slot(agent)?;
        Ok(self
            .world
            .get::<&HoldReserved>(self.ids.entity(agent))
            .ok()
            .map(|reserved| reserved.hold))
    }

    /// The one entry by which a new action takes the agent's mover: refused while a
    /// braking holds it (until its receipt), while its velocity is unknown and an order
    /// holds it (spec 004's vUnknown: the owner keeps the mover until the controller
    /// reports a valid velocity again), then by the action's own `preconditions`; once
    /// admitted, the old owner's order ends `Cancelled` (reported with the next step's
    /// events), the handoff is counted, and the new order's identity is returned for the
    /// caller to install.
    pub(crate) fn admit(
        &mut self,
        agent: AgentId,
        preconditions: impl FnOnce(&Crowd, usize) -> Result<(), CrowdError>,
    ) -> Result<(usize, RequestId), CrowdError> {
        let slot = self.slot(agent)?;
        if let Ok(braking) = self.world.get::<&Cancelling>(self.ids.entity(agent)) {
            return Err(CrowdError::Cancelling {
                agent,
                record: braking.record,
            });
        }
        if !self.lanes.velocity_valid[slot]
            && let Some(owner) = self.owner(agent)?
        {
            return Err(CrowdError::VelocityUnknown {
                agent,
                owner: owner.action,
            });
        }
        preconditions(self, slot)?;
        let order = RequestId {
            logical: self.next_logical,
            attempt: 0,
            epoch: self.epoch,
        };
        self.next_logical += 1;
        self.end_replaced_order(agent);
        self.count_handoff(slot);
        Ok((slot, order))
    }

    /// Ends the agent's current move or velocity order, if any, as cancelled (replaced by
    /// a newer order, or its agent removed), reported with the next step's events.
    pub(crate) fn end_replaced_order(&mut self, agent: AgentId) {
        if let Some(order) = self.take_order(agent) {
            self.deferred_events.push(CrowdEvent::OrderEnded {
                agent,
                order,
                outcome: Outcome::Cancelled,
            });
        }
    }

    /// Takes the agent's move, velocity or hold order from its mover (it has at most one:
    /// the admission replaces the old), returning the order's identity.
    pub(crate) fn take_order(&mut self, agent: AgentId) -> Option<RequestId> {
        let entity = self.ids.entity(agent);
        let moving = self.world.remove_one::<MoveRequest>(entity).ok();
        let steering = self.world.remove_one::<VelocityRequest>(entity).ok();
        let holding = self.world.remove_one::<HoldOrder>(entity).ok();
        if moving.is_some() {
            // The move's reserved hold never starts: it ends with the move.
            self.end_reserved_hold(agent, None);
        }
        self.take_interaction(agent);
        if let Some(hold) = &holding {
            // A hold ended while its fact held (a cancel, a successor order): the fact
            // ends first, reported before the hold's outcome.
            if hold.keeper.fact().is_some() {
                self.deferred_events.push(CrowdEvent::StandFact {
                    agent,
                    order: hold.order,
                    change: crate::crowd::interactions::hold::FactChange::Released,
                });
            }
        }
        let orders = [
            moving.map(|request| request.order),
            steering.map(|velocity| velocity.order),
            holding.map(|hold| hold.order),
        ];
        debug_assert!(orders.iter().flatten().count() <= 1, "one owner at a time");
        orders.into_iter().flatten().next()
    }

    /// Ends the hold reserved beside the agent's move order, if any, `Cancelled` (its move
    /// ended otherwise than in success): with `events` when given, else with the next
    /// step's.
    pub(crate) fn end_reserved_hold(
        &mut self,
        agent: AgentId,
        events: Option<&mut Vec<CrowdEvent>>,
    ) {
        let Ok(reserved) = self
            .world
            .remove_one::<HoldReserved>(self.ids.entity(agent))
        else {
            return;
        };
        let ended = CrowdEvent::OrderEnded {
            agent,
            order: reserved.hold,
            outcome: Outcome::Cancelled,
        };
        match events {
            Some(events) => events.push(ended),
            None => self.deferred_events.push(ended),
        }
    }

    /// Counts one change of the owner of the mover in `slot`.
    pub(crate) fn count_handoff(&mut self, slot: usize) {
        self.lanes.handoff[slot] = self.lanes.handoff[slot].wrapping_add(1);
    }
}
