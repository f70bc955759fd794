//! The interaction orders a game gives: a legal pose found for a target, walked to, verified
//! and held ([`Crowd::request_interaction`] and the calls around it).
//!
//! Stage: crowd runtime, orders. Inputs: the target and the host's world; outputs: the
//! order's move and hold, its events. The types and the per-step checks live in the
//! interactions room.

use crate::target::ObjectState;
use glam::Vec3;

use super::commands::Logged;
use crate::crowd::agents::AgentId;
use crate::crowd::agents::AgentStatus;
use crate::crowd::agents::RequestId;
use crate::crowd::events::{CrowdError, CrowdEvent, FailureCondition, Outcome};
use crate::crowd::interactions::hold::{HoldKeeper, HoldPolicy};
use crate::crowd::interactions::interaction::{
    InteractionFailure, InteractionOrder, InteractionPhase, InteractionView, InteractionWorld,
};
use crate::crowd::log::LogRecord;
use crate::crowd::runtime::Crowd;
use crate::target::{Placement, TargetError, TargetRecord, Verdict, project_target};

impl Crowd {
    /// Sends the agent to interact with `record`'s target (spec 000) and keep the pose under
    /// `policy` (spec 001's station keeping): the target is projected here, against `world`
    /// (a moving target at its object's current motion), and the agent walks to the first
    /// verified pose; near it the hold reserved here takes the mover and settles the body on
    /// the pose, and the interaction ends `Success` when the hold's stand fact is first
    /// established with every check passing at the actual pose (see the module doc of
    /// `interaction.rs` for the phases and failures). Returns `(interaction, hold)`: the
    /// interaction's identity (also its walk's, as [`Crowd::owner`] shows it while walking)
    /// and the hold's, by which [`Crowd::cancel_order`] later releases the pose. A target
    /// with no legal region, or whose candidates all fail, is admitted and ends
    /// `Failure(Interaction(..))` with the next step's events (its hold `Cancelled`
    /// unstarted). Refused with a typed error naming the value: a record field out of
    /// range, a moving target whose object `world` does not place, a policy out of range,
    /// the holds table full, an agent still cancelling.
    pub fn request_interaction(
        &mut self,
        agent: AgentId,
        record: TargetRecord,
        policy: HoldPolicy,
        world: &dyn InteractionWorld,
    ) -> Result<(RequestId, RequestId), CrowdError> {
        let slot = self.slot(agent)?;
        HoldKeeper::new(policy)
            .map_err(|(field, value)| CrowdError::BadParameter { field, value })?;
        self.check_hold_capacity(agent)?;
        let motion = match record.placement {
            Placement::Fixed { .. } => None,
            Placement::Moving {
                reference_object, ..
            } => match world.object(reference_object) {
                ObjectState::Moving(motion) | ObjectState::Teleported(motion) => Some(motion),
                ObjectState::Replaced | ObjectState::Missing => {
                    return Err(CrowdError::Target(TargetError::MissingMotion {
                        reference_object,
                    }));
                }
            },
        };
        let projection = project_target(
            &self.snapshot,
            self.filter_of(slot),
            &record,
            &world.collision(),
            motion.as_ref(),
        )
        .map_err(CrowdError::Target)?;
        let pose = match projection.verdict {
            Verdict::Success(pose) => pose,
            Verdict::NoLegalRegion => {
                return self.refuse_interaction(
                    agent,
                    record,
                    policy,
                    InteractionFailure::NoLegalRegion,
                );
            }
            Verdict::CandidatesExhausted => {
                return self.refuse_interaction(
                    agent,
                    record,
                    policy,
                    InteractionFailure::CandidatesExhausted,
                );
            }
        };
        let foot = pose.foot;
        let foot_local = match &motion {
            Some(motion) => motion.world_from_object.inverse().transform_point3(foot),
            None => foot,
        };
        let order = self.order_move(agent, foot, None, Logged::InWhole)?;
        let hold = self.reserve_hold(agent, policy, Logged::InWhole);
        self.log(|| LogRecord::Interact {
            agent,
            order,
            hold,
            record: Box::new(record.clone()),
            policy,
            foot: Some(foot),
        });
        self.world
            .insert_one(
                self.ids.entity(agent),
                InteractionOrder {
                    order,
                    hold,
                    record,
                    fragment: pose.fragment,
                    polygon: pose.polygon,
                    avoided: Vec::new(),
                    foot_local,
                    foot,
                    foot_velocity: Vec3::ZERO,
                    motion,
                    collision_version: pose.versions.collision_version,
                    checked: None,
                    checks_pass: true,
                    phase: InteractionPhase::Walking,
                },
            )
            .expect("a known agent");
        Ok((order, hold))
    }

    /// An interaction whose projection found no pose: admitted (the old order ends as for
    /// any new one), and ended with the next step's events, its hold unstarted.
    fn refuse_interaction(
        &mut self,
        agent: AgentId,
        record: TargetRecord,
        policy: HoldPolicy,
        why: InteractionFailure,
    ) -> Result<(RequestId, RequestId), CrowdError> {
        let (slot, order) = self.admit(agent, |_, _| Ok(()))?;
        let hold = RequestId {
            logical: self.next_logical,
            attempt: 0,
            epoch: self.epoch,
        };
        self.next_logical += 1;
        self.log(|| LogRecord::Interact {
            agent,
            order,
            hold,
            record: Box::new(record),
            policy,
            foot: None,
        });
        if self.lanes.status[slot] != AgentStatus::CrossingLink {
            self.lanes.status[slot] = AgentStatus::Failed;
        }
        self.deferred_events.push(CrowdEvent::OrderEnded {
            agent,
            order,
            outcome: Outcome::Failure(FailureCondition::Interaction(why)),
        });
        self.deferred_events.push(CrowdEvent::OrderEnded {
            agent,
            order: hold,
            outcome: Outcome::Cancelled,
        });
        Ok((order, hold))
    }

    /// The agent's interaction order, if it has one under way or holding.
    pub fn interaction(&self, agent: AgentId) -> Result<Option<InteractionView>, CrowdError> {
        self.slot(agent)?;
        Ok(self
            .world
            .get::<&InteractionOrder>(self.ids.entity(agent))
            .ok()
            .map(|order| InteractionView {
                order: order.order,
                hold: order.hold,
                phase: order.phase,
                foot: order.foot,
                fragment: order.fragment,
                checks_pass: order.checks_pass,
            }))
    }
}
