//! Hold orders: a game asks an agent to keep a stand pose (spec 001's station keeping),
//! at once or once a move order arrives, and releases the pose by the hold's id.
//!
//! Stage: crowd runtime, between steps. The law that keeps the pose is `hold.rs`'s; the
//! step judges each hold (`upkeep.rs`). Every call checks its agent and values first and
//! changes nothing when it refuses.

use glam::Vec3;

use super::commands::{Logged, check_point};
use crate::crowd::agents::AgentId;
use crate::crowd::agents::AgentStatus;
use crate::crowd::agents::RequestId;
use crate::crowd::components::{HoldOrder, HoldReserved};
use crate::crowd::events::MoverAction;
use crate::crowd::events::{CrowdError, CrowdEvent};
use crate::crowd::interactions::hold::{FactChange, HoldKeeper, HoldPolicy};
use crate::crowd::log::LogRecord;
use crate::crowd::runtime::Crowd;

impl Crowd {
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
        self.log(|| LogRecord::Hold {
            agent,
            order,
            target,
            policy,
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
        self.log(|| LogRecord::ReleaseHold { agent, hold });
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
    pub(crate) fn reserve_hold(
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
            self.log(|| LogRecord::ReserveHold {
                agent,
                hold,
                policy,
            });
        }
        self.world
            .insert_one(self.ids.entity(agent), HoldReserved { hold, policy })
            .expect("a known agent");
        hold
    }

    /// The hold reserved beside the agent's arrived move takes its mover, holding the
    /// move's goal.
    pub(crate) fn start_reserved_hold(&mut self, agent: AgentId, slot: usize) {
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
}
