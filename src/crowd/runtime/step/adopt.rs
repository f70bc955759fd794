//! Ingest and adoption: a move order becomes a path job, and a finished job's corridor
//! becomes the agent's at the commit point.
//!
//! Stage: crowd runtime, the step's ingest and adopt passes. Ingest turns pending orders
//! into jobs for the scheduler (from where the agent stands, under its filter). Adoption
//! takes a result only if its request id, attempt and epoch still match the agent's
//! request and everything it read is still valid; otherwise the request is asked again
//! as a new attempt, and after a few failed attempts it fails with an event. A head start
//! is walked while the request keeps its place in the queue.

use std::sync::Arc;

use glam::Vec3;

use crate::crowd::agents::AgentId;
use crate::crowd::agents::AgentStatus;
use crate::crowd::agents::RequestId;
use crate::crowd::components::MoveRequest;
use crate::crowd::events::{CrowdEvent, FailureCondition, Outcome};
use crate::crowd::lanes::AgentLanes;
use crate::crowd::log::{Decision, LogRecord, LoggedAnswer, Rejection};
use crate::crowd::paths::corridor::Corridor;
use crate::crowd::paths::scheduler::{Answer, Finished, Job};
use crate::crowd::runtime::Crowd;
use crate::crowd::walking::passes::rejoin;
use crate::mesh::PolyRef;
use crate::query::{Validity, nearest_polygon};

/// Attempts in a row without an adopted corridor after which a request is given up.
const ATTEMPTS_MAX: u32 = 4;

impl Crowd {
    /// The query filter of the agent in `slot`.
    pub(crate) fn filter_of(&self, slot: usize) -> &crate::query::QueryFilter {
        &self.filters[self.lanes.filter[slot].index()]
    }

    /// Computes the agent's route again under a new query identity (next frame's ingest):
    /// spec 001 h1, a re-computed route is a new request, and the old query expires (its
    /// results never match again). An agent without an order (arrived, cancelled) has
    /// nothing to re-issue.
    pub(crate) fn reissue(&mut self, agent: AgentId) {
        let query = RequestId {
            logical: self.next_logical,
            attempt: 0,
            epoch: self.epoch,
        };
        let Ok(mut request) = self.world.get::<&mut MoveRequest>(self.ids.entity(agent)) else {
            return;
        };
        self.next_logical += 1;
        request.query = query;
        request.attempts_since_adopted += 1;
        request.awaiting = true;
        drop(request);
        if let Ok(slot) = self.slot(agent) {
            self.lanes.status[slot] = AgentStatus::WaitingForPath;
            self.lanes.on_head_start[slot] = false;
            if !self.lanes.ingest_pending[slot] {
                self.lanes.ingest_pending[slot] = true;
                self.pending.push(agent);
            }
        }
    }

    /// Plans the agent's order again as a new query ([`BlockedPolicy::Replan`]): as
    /// [`Crowd::reissue`], except that a walker on its corridor walks on while the new path
    /// is searched; the scheduler weighs crowded polygons for it (`congestion.rs`) and
    /// runs its search to the end in the step it opens, so no such search is ever in
    /// flight between steps (nothing of it needs saving).
    ///
    /// [`BlockedPolicy::Replan`]: crate::crowd::config::BlockedPolicy::Replan
    pub(crate) fn replan(&mut self, agent: AgentId) {
        let walking = self
            .slot(agent)
            .ok()
            .filter(|&slot| walks_while_replanned(&self.lanes, slot));
        self.reissue(agent);
        if let Some(slot) = walking {
            self.lanes.status[slot] = AgentStatus::Moving;
        }
    }

    /// Whether the tile of the polygon the agent in `slot` last stood on is pending.
    fn on_pending_tile(&self, slot: usize) -> bool {
        let tile = self.lanes.polygon[slot].slot();
        self.snapshot
            .data()
            .slots
            .get(usize::from(tile.0))
            .is_some_and(|view| matches!(view.state, crate::mesh::SlotState::Pending))
    }

    pub(crate) fn fail(&mut self, agent: AgentId, slot: usize, events: &mut Vec<CrowdEvent>) {
        if let Ok(request) = self.world.remove_one::<MoveRequest>(self.ids.entity(agent)) {
            self.count_handoff(slot);
            events.push(CrowdEvent::NoPath {
                agent,
                request: request.order,
            });
            events.push(CrowdEvent::OrderEnded {
                agent,
                order: request.order,
                outcome: Outcome::Failure(FailureCondition::NoPath),
            });
            self.end_reserved_hold(agent, Some(events));
            self.take_interaction(agent);
        }
        self.lanes.status[slot] = AgentStatus::Failed;
        self.lanes.corridor[slot] = None;
        self.lanes.on_head_start[slot] = false;
    }

    /// Ingest: each pending request becomes a path job (start and goal snapped to the mesh).
    pub(crate) fn ingest(&mut self, pending: &[AgentId], events: &mut Vec<CrowdEvent>) {
        for &agent in pending {
            let Ok(slot) = self.slot(agent) else {
                continue;
            };
            if !self.lanes.ingest_pending[slot] {
                continue;
            }
            self.lanes.ingest_pending[slot] = false;
            let Some(request) = self
                .world
                .get::<&MoveRequest>(self.ids.entity(agent))
                .ok()
                .map(|m| *m)
            else {
                continue;
            };
            if !self.lanes.velocity_valid[slot]
                || self.lanes.status[slot] == AgentStatus::CrossingLink
            {
                // vUnknown: no new solve until the controller reports a valid velocity; the
                // request keeps its ownership and waits. A crossing agent's path starts
                // where it lands.
                self.lanes.ingest_pending[slot] = true;
                self.pending.push(agent);
                continue;
            }
            if request.attempts_since_adopted > ATTEMPTS_MAX {
                self.fail(agent, slot, events);
                continue;
            }
            let position = self.lanes.position(slot);
            let half = self.config.snap_half_extents;
            let start = match self.snapshot.tile(self.lanes.polygon[slot]) {
                Some(_) => Some((self.lanes.polygon[slot], position)),
                None => nearest_polygon(&self.snapshot, position, half, self.filter_of(slot))
                    .ok()
                    .flatten()
                    .map(|n| (n.polygon, n.point)),
            };
            let Some((start, start_position)) = start else {
                if self.on_pending_tile(slot) {
                    // Its tile is being rebuilt (a scene edit, spec 001): no polygon to
                    // start from until the rebuilt tile commits, so the order waits for it
                    // rather than failing.
                    self.lanes.ingest_pending[slot] = true;
                    self.pending.push(agent);
                    continue;
                }
                self.fail(agent, slot, events);
                continue;
            };
            self.lanes.polygon[slot] = start;
            if !walks_while_replanned(&self.lanes, slot) {
                self.lanes.status[slot] = AgentStatus::WaitingForPath;
            }
            if self.replaying() {
                continue; // its results come from the log
            }
            self.scheduler.enqueue(Job {
                agent,
                filter: self.lanes.filter[slot],
                request: request.query,
                start,
                start_position,
                target: request.target,
                goal: None,
                queued_frame: self.frame,
            });
        }
    }

    /// Adopt: the one commit point. Each result is judged, the result and the decision
    /// logged, then the decision applied. In replay mode the results are the log's and
    /// each decision must come out as logged. Returns how many results were rejected.
    pub(crate) fn adopt(&mut self, finished: Vec<Finished>, events: &mut Vec<CrowdEvent>) -> u32 {
        let logged = self.logged_results();
        // Each result as the commit point reads it, the log's in replay mode.
        let results: Vec<Candidate> = if self.replaying() {
            logged
                .iter()
                .map(|(_, result)| Candidate {
                    agent: result.agent,
                    query: result.query,
                    goal: result.goal,
                    answer: match &result.answer {
                        LoggedAnswer::Corridor(corridor) => Answer::Corridor(corridor.clone()),
                        LoggedAnswer::HeadStart(corridor) => Answer::HeadStart(corridor.clone()),
                        LoggedAnswer::Retry => Answer::Retry,
                        LoggedAnswer::NoGoal => Answer::NoGoal,
                    },
                })
                .collect()
        } else {
            finished
                .into_iter()
                .map(|Finished { job, outcome }| Candidate {
                    agent: job.agent,
                    query: job.request,
                    goal: job.goal,
                    answer: outcome,
                })
                .collect()
        };
        let mut rejected = 0;
        for (index, candidate) in results.into_iter().enumerate() {
            let Candidate {
                agent,
                query,
                goal,
                answer: outcome,
            } = candidate;
            let Ok(slot) = self.slot(agent) else {
                continue; // removed since its search was queued: nothing to decide
            };
            let current = self
                .world
                .get::<&MoveRequest>(self.ids.entity(agent))
                .ok()
                .map(|m| *m)
                // The result's query must be the agent's current one, of the current epoch.
                .filter(|m| m.awaiting && m.query == query && query.epoch == self.epoch);
            let verdict = match current {
                None => Verdict::Reject(Rejection::NotCurrent),
                Some(current) => self.judge(goal, &outcome, slot, current.target),
            };
            let decision = verdict.decision();
            if let Some((sequence, result)) = logged.get(index) {
                self.check_decision(*sequence, result.decision, decision);
            }
            self.log(|| LogRecord::Result {
                agent,
                query,
                goal,
                answer: match &outcome {
                    Answer::Corridor(corridor) => LoggedAnswer::Corridor(corridor.clone()),
                    Answer::HeadStart(corridor) => LoggedAnswer::HeadStart(corridor.clone()),
                    Answer::Retry => LoggedAnswer::Retry,
                    Answer::NoGoal => LoggedAnswer::NoGoal,
                },
                decision,
            });
            match verdict {
                Verdict::Reject(Rejection::NotCurrent) => rejected += 1,
                Verdict::Reject(_) => {
                    rejected += 1;
                    self.reissue(agent);
                }
                Verdict::Fail => self.fail(agent, slot, events),
                Verdict::HeadStartSkipped => {}
                Verdict::HeadStart { goal, last } => {
                    let Answer::HeadStart(corridor) = outcome else {
                        unreachable!("judged a head start")
                    };
                    self.put_on_head_start(slot, corridor, goal, last);
                }
                Verdict::Adopt {
                    cursor,
                    goal,
                    goal_polygon,
                } => {
                    let Answer::Corridor(corridor) = outcome else {
                        unreachable!("judged a corridor")
                    };
                    let lanes = &mut self.lanes;
                    lanes.goal_x[slot] = goal.x;
                    lanes.goal_y[slot] = goal.y;
                    lanes.goal_z[slot] = goal.z;
                    lanes.goal_polygon[slot] = goal_polygon;
                    lanes.corridor[slot] = Some(corridor);
                    lanes.cursor[slot] = cursor as u32;
                    lanes.corner_age[slot] = u8::MAX;
                    lanes.status[slot] = AgentStatus::Moving;
                    lanes.on_head_start[slot] = false;
                    if let Ok(mut request) =
                        self.world.get::<&mut MoveRequest>(self.ids.entity(agent))
                    {
                        request.awaiting = false;
                        request.attempts_since_adopted = 0;
                        request.adopted_once = true;
                    }
                }
            }
        }
        rejected
    }

    /// What the commit point makes of a current result for the agent in `slot` (its
    /// order's target `target`), changing nothing.
    fn judge(
        &self,
        goal: Option<(PolyRef, Vec3)>,
        outcome: &Answer,
        slot: usize,
        target: Vec3,
    ) -> Verdict {
        let corridor = match outcome {
            Answer::NoGoal => return Verdict::Fail,
            Answer::Retry => return Verdict::Reject(Rejection::NoCorridor),
            Answer::HeadStart(corridor) => {
                if self.lanes.status[slot] != AgentStatus::WaitingForPath {
                    return Verdict::HeadStartSkipped;
                }
                return match self.head_start_fits(slot, corridor, target) {
                    Some((goal, last)) => Verdict::HeadStart { goal, last },
                    None => Verdict::HeadStartSkipped,
                };
            }
            Answer::Corridor(corridor) => corridor,
        };
        let validity = corridor
            .reads
            .still_valid_in(&self.snapshot, self.filter_of(slot));
        if validity != Validity::Valid {
            return Verdict::Reject(Rejection::Stale(validity));
        }
        let (goal_polygon_snapped, goal_position) = goal.expect("a corridor has a goal");
        // The agent kept moving while it waited: it must still be on the corridor, or
        // beside it (the follow pass walks it back in).
        let polygon = self.lanes.polygon[slot];
        let cursor = corridor
            .find_near(0, polygon, 0, 16)
            .or_else(|| rejoin(&self.snapshot, corridor, 0, polygon).map(|(cursor, _)| cursor));
        let Some(cursor) = cursor else {
            return Verdict::Reject(Rejection::OffCorridor);
        };
        if corridor.complete {
            return Verdict::Adopt {
                cursor,
                goal: goal_position,
                goal_polygon: goal_polygon_snapped,
            };
        }
        // Partial: the goal is the point of its last polygon nearest the target (adopted
        // corridors passed the read-set check, so their tiles are live).
        let last = corridor.last_polygon(&self.snapshot);
        let goal = last
            .and_then(|last| {
                let tile = self.snapshot.tile(last)?;
                Some(tile.closest_point(last.polygon(), target).0)
            })
            .unwrap_or(goal_position);
        Verdict::Adopt {
            cursor,
            goal,
            goal_polygon: last.unwrap_or(goal_polygon_snapped),
        }
    }

    /// Puts the agent on `corridor`, a head start toward `target`, if the mesh it read is
    /// unchanged and the agent stands at its start.
    pub(crate) fn walk_head_start(&mut self, slot: usize, corridor: &Arc<Corridor>, target: Vec3) {
        if let Some((goal, last)) = self.head_start_fits(slot, corridor, target) {
            self.put_on_head_start(slot, corridor.clone(), goal, last);
        }
    }

    /// Where a head start along `corridor` would lead the agent in `slot` (the point of
    /// its last polygon nearest `target`, and that polygon), if the mesh it read is
    /// unchanged and the agent stands at its start.
    fn head_start_fits(
        &self,
        slot: usize,
        corridor: &Corridor,
        target: Vec3,
    ) -> Option<(Vec3, PolyRef)> {
        let filter = self.filter_of(slot);
        if corridor.reads.still_valid_in(&self.snapshot, filter) != Validity::Valid
            || corridor
                .find_near(0, self.lanes.polygon[slot], 0, 1)
                .is_none()
        {
            return None;
        }
        let last = corridor.last_polygon(&self.snapshot)?;
        let tile = self.snapshot.tile(last)?;
        Some((tile.closest_point(last.polygon(), target).0, last))
    }

    fn put_on_head_start(
        &mut self,
        slot: usize,
        corridor: Arc<Corridor>,
        goal: Vec3,
        last: PolyRef,
    ) {
        let lanes = &mut self.lanes;
        lanes.goal_x[slot] = goal.x;
        lanes.goal_y[slot] = goal.y;
        lanes.goal_z[slot] = goal.z;
        lanes.goal_polygon[slot] = last;
        lanes.corridor[slot] = Some(corridor);
        lanes.cursor[slot] = 0;
        lanes.corner_age[slot] = u8::MAX;
        lanes.status[slot] = AgentStatus::Moving;
        lanes.on_head_start[slot] = true;
    }
}

/// A result at the commit point: the agent, the query it answers, the goal its search
/// snapped the target to, and what the search produced.
struct Candidate {
    agent: AgentId,
    query: RequestId,
    goal: Option<(PolyRef, Vec3)>,
    answer: Answer,
}

/// The commit point's judgement of one result, with what applying it needs.
enum Verdict {
    Reject(Rejection),
    Fail,
    HeadStart {
        goal: Vec3,
        last: PolyRef,
    },
    HeadStartSkipped,
    Adopt {
        cursor: usize,
        goal: Vec3,
        goal_polygon: PolyRef,
    },
}

impl Verdict {
    fn decision(&self) -> Decision {
        match *self {
            Verdict::Reject(rejection) => Decision::rejected(rejection),
            Verdict::Fail => Decision::Failed,
            Verdict::HeadStart { .. } => Decision::HeadStartWalked,
            Verdict::HeadStartSkipped => Decision::HeadStartSkipped,
            Verdict::Adopt { .. } => Decision::Adopted,
        }
    }
}

/// Whether the agent in `slot` walks its corridor while its path is searched again: a
/// walker on a searched corridor (not a head start) whose order is re-planned. Only
/// [`Crowd::replan`] leaves an agent awaiting a path in this state (a new order, a lost
/// corridor or a new filter all stop it), so the scheduler tells such re-plans by it.
pub(crate) fn walks_while_replanned(lanes: &AgentLanes, slot: usize) -> bool {
    lanes.status[slot] == AgentStatus::Moving
        && lanes.corridor[slot].is_some()
        && !lanes.on_head_start[slot]
}
