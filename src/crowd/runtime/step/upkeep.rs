//! The orders' upkeep in a step: deadlines that have come, cancels waiting for their
//! agents to stand, holds judged where their agents stand, and velocity orders written to
//! their agents' lanes.
//!
//! Stage: crowd, early in the step (`step.rs` has the order). Inputs: the orders'
//! components and the lanes. Outputs: lanes and events; every order it ends ends exactly
//! once.

use glam::{Vec2, Vec3};

use crate::crowd::agents::AgentStatus;
use crate::crowd::components::{Cancelling, Ending, HoldOrder, MoveRequest, Slot, VelocityRequest};
use crate::crowd::events::{CANCEL_CONFIRM_S, CrowdEvent, FailureCondition, Outcome};
use crate::crowd::interactions::hold::{FactChange, HoldObservation, HoldPhase};
use crate::crowd::interactions::interaction::InteractionOrder;
use crate::crowd::runtime::Crowd;
use crate::crowd::stats::StepStats;

impl Crowd {
    /// The step's close: the counts kept, the slots put in cell order when it is time
    /// ([`SLOT_ORDER_FRAMES`](super::SLOT_ORDER_FRAMES)), routes invalidated during the
    /// step (a link closed at its entry, a corridor stale at landing) reported with it,
    /// the outcomes logged, and the frame and the platforms moved on.
    pub(crate) fn close_step(
        &mut self,
        dt: f32,
        mut stats: StepStats,
        events: &mut Vec<CrowdEvent>,
    ) {
        stats.waiting_for_path = self
            .lanes
            .status
            .iter()
            .zip(&self.lanes.on_head_start)
            .filter(|&(status, &head_start)| *status == AgentStatus::WaitingForPath || head_start)
            .count() as u32;
        self.last_stats = stats;
        if self.config.avoidance.enabled
            && self.frame % super::SLOT_ORDER_FRAMES == super::SLOT_ORDER_FRAMES - 1
            && self.neighbour_grid.len() == self.lanes.len()
        {
            self.order_slots_by_cell();
        }
        events.append(&mut self.deferred_events);
        self.log_outcomes(events);
        self.frame += 1;
        self.last_dt_s = dt;
        for platform in &mut self.platforms {
            platform.motion = platform.motion.after_step(dt);
        }
    }

    /// Orders whose deadline has come and that have not ended fail: their agents brake
    /// to a stop as after a cancel (the outcome comes once they stand).
    pub(crate) fn expire_deadlines(&mut self) {
        if self.deadlines.is_empty() {
            return;
        }
        let frame = self.frame;
        let mut due = Vec::new();
        self.deadlines.retain(|&entry| {
            let (deadline, _, _) = entry;
            if deadline <= frame {
                due.push(entry);
            }
            deadline > frame
        });
        for (_, agent, order) in due {
            let current = self
                .world
                .get::<&MoveRequest>(self.ids.entity(agent))
                .is_ok_and(|request| request.order == order);
            if let (true, Ok(slot)) = (current, self.slot(agent)) {
                self.start_braking(agent, slot, Ending::Deadline);
            }
        }
    }

    /// Cancels whose agents have stopped get their receipt and free the mover; those not
    /// stopped in time are reported once as faults. In slot order.
    pub(crate) fn confirm_cancels(&mut self, dt: f32, events: &mut Vec<CrowdEvent>) {
        let mut cancelling: Vec<usize> = self
            .world
            .query::<(&Slot, &Cancelling)>()
            .iter()
            .map(|(slot, _)| slot.0)
            .collect();
        if cancelling.is_empty() {
            return;
        }
        cancelling.sort_unstable();
        let stop_speed = self.config.stop_speed_mps;
        for slot in cancelling {
            let agent = self.lanes.id[slot];
            let lanes = &mut self.lanes;
            let speed = Vec2::new(lanes.velocity_x[slot], lanes.velocity_z[slot]).length();
            if lanes.status[slot] == AgentStatus::CrossingLink {
                continue; // a crossing is not cut short: the cancel's time starts at landing
            }
            let stopped = lanes.velocity_valid[slot] && speed < stop_speed;
            if stopped {
                let state = self
                    .world
                    .remove_one::<Cancelling>(self.ids.entity(agent))
                    .expect("listed above");
                lanes.handoff[slot] = lanes.handoff[slot].wrapping_add(1);
                lanes.status[slot] = AgentStatus::Idle;
                if state.receipt_owed {
                    events.push(CrowdEvent::Cancelled {
                        agent,
                        record: state.record,
                    });
                }
                let outcome = match state.ending {
                    Ending::Cancel => Outcome::Cancelled,
                    Ending::Deadline => Outcome::Failure(FailureCondition::DeadlinePassed),
                    Ending::Blocked(by) => Outcome::Failure(FailureCondition::Blocked(by)),
                    Ending::Hold(why) => Outcome::Failure(FailureCondition::Hold(why)),
                    Ending::Interaction(why) => {
                        Outcome::Failure(FailureCondition::Interaction(why))
                    }
                };
                if let Some(order) = state.record.order {
                    events.push(CrowdEvent::OrderEnded {
                        agent,
                        order,
                        outcome,
                    });
                }
                continue;
            }
            let mut state = self
                .world
                .get::<&mut Cancelling>(self.ids.entity(agent))
                .expect("listed above");
            state.waited_s += dt;
            if state.waited_s > CANCEL_CONFIRM_S && !state.faulted {
                state.faulted = true;
                events.push(CrowdEvent::CancelFault {
                    agent,
                    record: state.record,
                });
            }
        }
    }

    /// Agents under velocity control want the velocity their host asked for, within their
    /// patch's speed limit (the slope pass's V/k, as a walker's cruise is held to it).
    /// Station keeping: each holding agent's stand fact judged on where the last step left
    /// it, then its preferred velocity toward its pose (`hold.rs`). A hold that fails
    /// brakes its agent to a stop, as a deadline does. Few agents hold at a time: a query
    /// over the hold component, its changes reported in slot order.
    pub(crate) fn keep_holds(&mut self, events: &mut Vec<CrowdEvent>) {
        let tick = self.frame;
        let lanes = &mut self.lanes;
        let support_motions = &self.support_motions;
        let mut changes = Vec::new();
        for (slot, hold, interaction) in
            self.world
                .query_mut::<(&Slot, &mut HoldOrder, Option<&InteractionOrder>)>()
        {
            let slot = slot.0;
            if lanes.status[slot] != AgentStatus::Holding {
                continue; // (crossing a link: it lands first)
            }
            let foot = lanes.position(slot);
            // An interaction's hold judges its checks at the actual foot (run by the
            // interaction pass at the step's start) and carries its moving target.
            let (checks_pass, target_velocity) = interaction.map_or((true, Vec3::ZERO), |order| {
                (order.checks_pass, order.foot_velocity)
            });
            // On a moving support (a belt) the body's world velocity is its velocity
            // relative to the support plus the support's; holding still in the world is
            // walking against it (spec 001's h3).
            let support_velocity = support_motions
                .get(lanes.support[slot] as usize)
                .map_or(Vec3::ZERO, |motion| motion.velocity_at(foot));
            let relative = Vec3::new(lanes.velocity_x[slot], 0.0, lanes.velocity_z[slot]);
            let seen = HoldObservation {
                tick,
                target: hold.target,
                target_velocity,
                foot,
                velocity: relative + support_velocity,
                checks_pass,
            };
            let mut change = hold.keeper.observe(&seen);
            let preferred = hold.keeper.preferred_relative_velocity(
                hold.target,
                target_velocity,
                foot,
                support_velocity,
                lanes.speed_limit[slot],
            );
            let wanted = preferred.unwrap_or(Vec2::ZERO);
            lanes.desired_x[slot] = wanted.x;
            lanes.desired_z[slot] = wanted.y;
            if let (None, HoldPhase::Failed(why), FactChange::None) =
                (preferred, hold.keeper.phase(), change)
            {
                change = FactChange::Failed(why);
            }
            if change != FactChange::None {
                changes.push((slot, lanes.id[slot], hold.order, change));
            }
        }
        changes.sort_unstable_by_key(|&(slot, ..)| slot);
        for (slot, agent, order, change) in changes {
            events.push(CrowdEvent::StandFact {
                agent,
                order,
                change,
            });
            match change {
                FactChange::Established(_) => self.interaction_established(agent, events),
                FactChange::Failed(why) => {
                    self.interaction_hold_failed(agent, why, events);
                    self.start_braking(agent, slot, Ending::Hold(why));
                }
                _ => {}
            }
        }
    }

    pub(crate) fn apply_velocity_requests(&mut self) {
        let lanes = &mut self.lanes;
        for (slot, request) in self.world.query::<(&Slot, &VelocityRequest)>().iter() {
            let slot = slot.0;
            if lanes.status[slot] != AgentStatus::VelocityControlled {
                continue; // (crossing a link: it lands first)
            }
            let wanted = request.velocity.clamp_length_max(lanes.speed_limit[slot]);
            lanes.desired_x[slot] = wanted.x;
            lanes.desired_z[slot] = wanted.y;
        }
    }
}
