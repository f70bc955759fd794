//! What `waymark sim` traces: each step's events and decisions, the agents that changed, and
//! the closing report with the state hash.

use std::collections::HashMap;
use std::io::Write;

use glam::Vec3;
use serde_json::{Value, json};
use waymark::crowd::{
    AgentId, BlockedBy, CancelRecord, Crowd, CrowdEvent, Decision, FactChange, FailureCondition,
    HoldFailure, HoldPhase, InteractionFailure, InteractionPhase, LogEntry, LogRecord, MoverAction,
    MoverOwner, Outcome, RequestId,
};

use crate::CliError;

use super::spec::{CommandSpec, Scenario};
use super::{Sim, SimCommand};

impl Sim {
    /// The commit point's decisions of the step, from the ordered log.
    pub(super) fn decisions(&self, log: &[LogEntry]) -> Vec<Value> {
        log.iter()
            .filter_map(|entry| match &entry.record {
                LogRecord::Result {
                    agent,
                    query,
                    decision,
                    ..
                } => {
                    let mut record = json!({
                        "agent": self.name(*agent),
                        "query": identity(*query),
                        "decision": decision_name(*decision),
                    });
                    if let Decision::RejectedStale(changed) = decision {
                        record["changed"] = json!(format!("{changed:?}"));
                    }
                    Some(record)
                }
                LogRecord::Expired {
                    agent,
                    query,
                    changed,
                } => Some(json!({
                    "agent": self.name(*agent),
                    "query": identity(*query),
                    "decision": "expired",
                    "changed": format!("{changed:?}"),
                })),
                _ => None,
            })
            .collect()
    }

    pub(super) fn event(&mut self, tick: u64, event: &CrowdEvent) -> Value {
        let (kind, agent, mut details) = match *event {
            CrowdEvent::Arrived { agent, request } => {
                ("arrived", agent, json!({ "order": identity(request) }))
            }
            CrowdEvent::PartialArrived { agent, request } => (
                "partial_arrived",
                agent,
                json!({ "order": identity(request) }),
            ),
            CrowdEvent::Blocked { agent, request, by } => (
                "blocked",
                agent,
                json!({ "order": identity(request), "by": blocked_by(by) }),
            ),
            CrowdEvent::LinkStarted { agent, link } => {
                ("link_started", agent, json!({ "link": link.0 }))
            }
            CrowdEvent::LinkFinished { agent, link } => {
                ("link_finished", agent, json!({ "link": link.0 }))
            }
            CrowdEvent::Cancelled { agent, record } => (
                "cancelled",
                agent,
                json!({ "record": cancel_record(record) }),
            ),
            CrowdEvent::CancelFault { agent, record } => (
                "cancel_fault",
                agent,
                json!({ "record": cancel_record(record) }),
            ),
            CrowdEvent::RouteInvalidated {
                agent,
                request,
                changed,
            } => (
                "route_invalidated",
                agent,
                json!({ "order": identity(request), "changed": format!("{changed:?}") }),
            ),
            CrowdEvent::NoPath { agent, request } => {
                ("no_path", agent, json!({ "order": identity(request) }))
            }
            CrowdEvent::Quarantined {
                agent,
                field,
                value_bits,
            } => (
                "quarantined",
                agent,
                json!({ "field": field, "value": format!("{}", f32::from_bits(value_bits)) }),
            ),
            CrowdEvent::StandFact {
                agent,
                order,
                change,
            } => {
                let change = match change {
                    FactChange::None => json!("none"),
                    FactChange::Established(generation) => {
                        json!({ "established": generation })
                    }
                    FactChange::Invalidated { deadline_tick } => {
                        json!({ "invalidated": { "deadline_frame": deadline_tick } })
                    }
                    FactChange::Failed(why) => json!({ "failed": hold_failure(why) }),
                    FactChange::Released => json!("released"),
                };
                (
                    "stand_fact",
                    agent,
                    json!({ "order": identity(order), "change": change }),
                )
            }
            CrowdEvent::OrderEnded {
                agent,
                order,
                outcome,
            } => {
                self.ended.push((tick, self.name(agent), order, outcome));
                (
                    "order_ended",
                    agent,
                    json!({ "order": identity(order), "outcome": outcome_name(outcome) }),
                )
            }
        };
        details["event"] = json!(kind);
        details["agent"] = json!(self.name(agent));
        details
    }

    /// Agents whose position, status, order, query or owner changed since last traced.
    pub(super) fn changed_agents(&mut self) -> Vec<Value> {
        let mut changed = Vec::new();
        for (name, agent) in &self.agents {
            let state = agent_state(&self.crowd, *agent);
            if self.last.get(agent) != Some(&state) {
                let mut record = state.clone();
                record["name"] = json!(name);
                changed.push(record);
                self.last.insert(*agent, state);
            }
        }
        changed
    }

    pub(super) fn report(
        &self,
        command: &SimCommand,
        scenario: &Scenario,
        out: &mut dyn Write,
    ) -> Result<(), CliError> {
        let mut counts: HashMap<&'static str, usize> = HashMap::new();
        for (_, _, _, outcome) in &self.ended {
            *counts.entry(outcome_name(*outcome)).or_default() += 1;
        }
        let agents: Vec<Value> = self
            .agents
            .iter()
            .map(|(name, agent)| {
                let mut state = agent_state(&self.crowd, *agent);
                state["name"] = json!(name);
                state
            })
            .collect();
        let hash = waymark::harness::state_hash(&self.crowd);
        if command.json {
            let summary = json!({
                "scenario": command.scenario.display().to_string(),
                "ticks": scenario.ticks,
                "frame": self.crowd.frame(),
                "epoch": self.crowd.epoch(),
                "agents": agents,
                "orders": self.ended.iter().map(|(tick, name, order, outcome)| json!({
                    "tick": tick,
                    "agent": name,
                    "order": identity(*order),
                    "outcome": outcome_name(*outcome),
                })).collect::<Vec<_>>(),
                "outcomes": counts,
                "refused": self.refused,
                "state_hash": format!("{hash:016x}"),
            });
            writeln!(out, "{summary}")?;
        } else {
            writeln!(
                out,
                "{}: {} ticks, frame {}, epoch {}",
                command.scenario.display(),
                scenario.ticks,
                self.crowd.frame(),
                self.crowd.epoch()
            )?;
            for (tick, name, order, outcome) in &self.ended {
                writeln!(
                    out,
                    "  tick {tick:>4}: {name} order {}.{}.{} ended {}",
                    order.logical,
                    order.attempt,
                    order.epoch,
                    outcome_name(*outcome)
                )?;
            }
            for refused in &self.refused {
                writeln!(out, "  refused: {refused}")?;
            }
            writeln!(out, "  state hash {hash:016x}")?;
        }
        Ok(())
    }
}

/// What the trace shows of an agent.
pub(super) fn agent_state(crowd: &Crowd, agent: AgentId) -> Value {
    let Ok(position) = crowd.position(agent) else {
        return json!({ "removed": true });
    };
    let status = crowd.status(agent).map(|s| format!("{s:?}")).ok();
    let order = crowd.request(agent).ok().flatten().map(identity);
    let query = crowd.query(agent).ok().flatten().map(identity);
    let owner = crowd.owner(agent).ok().flatten().map(owner_record);
    let velocity = crowd.world_velocity(agent).unwrap_or(Vec3::ZERO);
    let hold = crowd.hold(agent).ok().flatten().map(|hold| {
        let phase = match hold.phase {
            HoldPhase::Settling => json!("settling"),
            HoldPhase::Standing => json!("standing"),
            HoldPhase::Recovering { deadline_tick } => {
                json!({ "recovering": { "deadline_frame": deadline_tick } })
            }
            HoldPhase::Failed(why) => json!({ "failed": hold_failure(why) }),
            HoldPhase::Released => json!("released"),
        };
        json!({ "order": identity(hold.order), "phase": phase, "fact": hold.fact })
    });
    let interaction = crowd.interaction(agent).ok().flatten().map(|view| {
        let phase = match view.phase {
            InteractionPhase::Walking => "walking",
            InteractionPhase::Verifying => "verifying",
            InteractionPhase::Holding => "holding",
        };
        json!({
            "order": identity(view.order),
            "phase": phase,
            "foot": v3(view.foot),
            "checks_pass": view.checks_pass,
        })
    });
    // Positions to the millimetre: a trace records motion, not float noise.
    let rounded = |value: f32| (f64::from(value) * 1000.0).round() / 1000.0;
    json!({
        "position": [rounded(position.x), rounded(position.y), rounded(position.z)],
        "velocity": [rounded(velocity.x), rounded(velocity.y), rounded(velocity.z)],
        "hold": hold,
        "interaction": interaction,
        "status": status,
        "order": order,
        "query": query,
        "owner": owner,
    })
}

/// A point to the micrometre.
pub(super) fn v3(point: Vec3) -> Value {
    let rounded = |value: f32| (f64::from(value) * 1e6).round() / 1e6;
    json!([rounded(point.x), rounded(point.y), rounded(point.z)])
}

pub(super) fn identity(id: RequestId) -> Value {
    json!({ "logical": id.logical, "attempt": id.attempt, "epoch": id.epoch })
}

pub(super) fn cancel_record(record: CancelRecord) -> Value {
    json!({ "order": record.order.map(identity), "frame": record.frame })
}

pub(super) fn owner_record(owner: MoverOwner) -> Value {
    let (action, id) = match owner.action {
        MoverAction::Move(order) => ("move", identity(order)),
        MoverAction::Velocity(order) => ("velocity", identity(order)),
        MoverAction::Braking(record) => ("braking", cancel_record(record)),
        MoverAction::Hold(order) => ("hold", identity(order)),
    };
    json!({ "action": action, "id": id, "handoff": owner.handoff })
}

pub(crate) fn blocked_by(by: BlockedBy) -> &'static str {
    match by {
        BlockedBy::Crowd => "crowd",
        BlockedBy::Wall => "wall",
    }
}

pub(crate) fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "success",
        Outcome::Cancelled => "cancelled",
        Outcome::Failure(FailureCondition::Unreachable) => "unreachable",
        Outcome::Failure(FailureCondition::NoPath) => "no_path",
        Outcome::Failure(FailureCondition::DeadlinePassed) => "deadline_passed",
        Outcome::Failure(FailureCondition::Blocked(BlockedBy::Crowd)) => "blocked_by_crowd",
        Outcome::Failure(FailureCondition::Blocked(BlockedBy::Wall)) => "blocked_by_wall",
        Outcome::Failure(FailureCondition::Hold(HoldFailure::CapabilityInsufficient)) => {
            "hold_capability_insufficient"
        }
        Outcome::Failure(FailureCondition::Hold(HoldFailure::DeadlinePassed)) => {
            "hold_deadline_passed"
        }
        Outcome::Failure(FailureCondition::Interaction(why)) => match why {
            InteractionFailure::NoLegalRegion => "interaction_no_legal_region",
            InteractionFailure::CandidatesExhausted => "interaction_candidates_exhausted",
            InteractionFailure::PoseCheck(_) => "interaction_pose_check",
            InteractionFailure::TargetTeleported => "interaction_target_teleported",
            InteractionFailure::TargetReplaced => "interaction_target_replaced",
            InteractionFailure::TargetMoved => "interaction_target_moved",
            InteractionFailure::TargetMissing => "interaction_target_missing",
            InteractionFailure::NoWorld => "interaction_no_world",
            InteractionFailure::Unreachable => "interaction_unreachable",
        },
    }
}

pub(super) fn hold_failure(why: HoldFailure) -> &'static str {
    match why {
        HoldFailure::CapabilityInsufficient => "capability_insufficient",
        HoldFailure::DeadlinePassed => "deadline_passed",
    }
}

pub(super) fn decision_name(decision: Decision) -> &'static str {
    match decision {
        Decision::Adopted => "adopted",
        Decision::HeadStartWalked => "head_start_walked",
        Decision::HeadStartSkipped => "head_start_skipped",
        Decision::Failed => "failed",
        Decision::RejectedNotCurrent => "rejected_not_current",
        Decision::RejectedNoCorridor => "rejected_no_corridor",
        Decision::RejectedStale(_) => "rejected_stale",
        Decision::RejectedOffCorridor => "rejected_off_corridor",
    }
}

pub(super) fn command_name(command: &CommandSpec) -> &'static str {
    match command {
        CommandSpec::Move { .. } => "move",
        CommandSpec::Velocity { .. } => "velocity",
        CommandSpec::Cancel { .. } => "cancel",
        CommandSpec::Release { .. } => "release",
        CommandSpec::Belt { .. } => "belt",
        CommandSpec::Turntable { .. } => "turntable",
        CommandSpec::Teleport { .. } => "teleport",
        CommandSpec::Push { .. } => "push",
        CommandSpec::Hold { .. } => "hold",
        CommandSpec::Interact { .. } => "interact",
        CommandSpec::Add(_) => "add",
        CommandSpec::Remove { .. } => "remove",
        CommandSpec::Door { .. } => "door",
        CommandSpec::Obstacle { .. } => "obstacle",
        CommandSpec::RemoveObstacle { .. } => "remove_obstacle",
        CommandSpec::LinkWindow { .. } => "link_window",
        CommandSpec::Save => "save",
        CommandSpec::Restore => "restore",
    }
}

pub(super) fn command_agent(command: &CommandSpec) -> Option<&str> {
    match command {
        CommandSpec::Move { agent, .. }
        | CommandSpec::Velocity { agent, .. }
        | CommandSpec::Cancel { agent }
        | CommandSpec::Release { agent }
        | CommandSpec::Teleport { agent, .. }
        | CommandSpec::Push { agent, .. }
        | CommandSpec::Hold { agent, .. }
        | CommandSpec::Interact { agent, .. }
        | CommandSpec::Remove { agent } => Some(agent),
        CommandSpec::Add(agent) => Some(&agent.name),
        CommandSpec::Door { .. }
        | CommandSpec::Obstacle { .. }
        | CommandSpec::RemoveObstacle { .. }
        | CommandSpec::LinkWindow { .. }
        | CommandSpec::Belt { .. }
        | CommandSpec::Turntable { .. }
        | CommandSpec::Save
        | CommandSpec::Restore => None,
    }
}
