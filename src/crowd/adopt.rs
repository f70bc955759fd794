//! Ingest and adoption: a move order becomes a path job, and a finished job's corridor
//! becomes the agent's at the commit point.
//!
//! Stage: crowd runtime, the step's ingest and adopt passes. Ingest turns pending orders
//! into jobs for the scheduler (from where the agent stands, under its filter). Adoption
//! takes a result only if its request id, attempt and epoch still match the agent's
//! request and everything it read is still valid; otherwise the request is asked again
//! as a new attempt, and after a few failed attempts it fails with an event. A head start
//! is walked while the request keeps its place in the queue.

use glam::Vec3;

use super::agent::AgentId;
use super::components::MoveRequest;
use super::events::{CrowdEvent, FailureCondition, Outcome};
use super::lanes::AgentStatus;
use super::passes::rejoin;
use super::runtime::Crowd;
use super::scheduler::{Answer, Finished, Job, RequestId};
use crate::query::{Validity, nearest_polygon};

/// Attempts in a row without an adopted corridor after which a request is given up.
const ATTEMPTS_MAX: u32 = 4;

impl Crowd {
    /// The query filter of the agent in `slot`.
    pub(super) fn filter_of(&self, slot: usize) -> &crate::query::QueryFilter {
        &self.filters[self.lanes.filter[slot].index()]
    }

    /// Computes the agent's route again under a new query identity (next frame's ingest):
    /// spec 001 h1, a re-computed route is a new request, and the old query expires (its
    /// results never match again). An agent without an order (arrived, cancelled) has
    /// nothing to re-issue.
    pub(super) fn reissue(&mut self, agent: AgentId) {
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

    pub(super) fn fail(&mut self, agent: AgentId, slot: usize, events: &mut Vec<CrowdEvent>) {
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
        }
        self.lanes.status[slot] = AgentStatus::Failed;
        self.lanes.corridor[slot] = None;
        self.lanes.on_head_start[slot] = false;
    }

    /// Ingest: each pending request becomes a path job (start and goal snapped to the mesh).
    pub(super) fn ingest(&mut self, pending: &[AgentId], events: &mut Vec<CrowdEvent>) {
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
                self.fail(agent, slot, events);
                continue;
            };
            self.lanes.polygon[slot] = start;
            self.lanes.status[slot] = AgentStatus::WaitingForPath;
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

    /// Adopt: the one commit point. Returns how many results were rejected.
    pub(super) fn adopt(&mut self, finished: Vec<Finished>, events: &mut Vec<CrowdEvent>) -> u32 {
        let mut rejected = 0;
        for Finished { job, outcome } in finished {
            let Ok(slot) = self.slot(job.agent) else {
                continue;
            };
            let current = self
                .world
                .get::<&MoveRequest>(self.ids.entity(job.agent))
                .ok()
                .map(|m| *m);
            // The result's query must be the agent's current one, of the current epoch.
            let current = current.filter(|m| {
                m.awaiting && m.query == job.request && job.request.epoch == self.epoch
            });
            let Some(current) = current else {
                rejected += 1; // superseded, expired, cancelled or from an old epoch
                continue;
            };
            let corridor = match outcome {
                Answer::NoGoal => {
                    self.fail(job.agent, slot, events);
                    continue;
                }
                Answer::Retry => None,
                Answer::Corridor(corridor) => Some(corridor),
                Answer::HeadStart(corridor) => {
                    self.adopt_head_start(slot, &corridor, current.target);
                    continue;
                }
            };
            let usable = corridor.filter(|c| {
                c.reads.still_valid_in(&self.snapshot, self.filter_of(slot)) == Validity::Valid
            });
            let Some(corridor) = usable else {
                rejected += 1;
                self.reissue(job.agent);
                continue;
            };
            let (goal_polygon_snapped, goal_position) = job.goal.expect("a corridor has a goal");
            // The agent kept moving while it waited: it must still be on the corridor, or
            // beside it (the follow pass walks it back in).
            let polygon = self.lanes.polygon[slot];
            let cursor = corridor.find_near(0, polygon, 0, 16).or_else(|| {
                rejoin(&self.snapshot, &corridor, 0, polygon).map(|(cursor, _)| cursor)
            });
            let Some(cursor) = cursor else {
                rejected += 1;
                self.reissue(job.agent);
                continue;
            };
            let goal = if corridor.complete {
                goal_position
            } else {
                corridor
                    .last_polygon(&self.snapshot)
                    .and_then(|last| {
                        let tile = self.snapshot.tile(last)?;
                        Some(tile.closest_point(last.polygon(), current.target).0)
                    })
                    .unwrap_or(goal_position)
            };
            let goal_polygon = if corridor.complete {
                goal_polygon_snapped
            } else {
                // Adopted corridors passed the read-set check: their tiles are live.
                corridor
                    .last_polygon(&self.snapshot)
                    .unwrap_or(goal_polygon_snapped)
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
            if let Ok(mut request) = self
                .world
                .get::<&mut MoveRequest>(self.ids.entity(job.agent))
            {
                request.awaiting = false;
                request.attempts_since_adopted = 0;
                request.adopted_once = true;
            }
        }
        rejected
    }

    /// An agent still waiting for its path walks `corridor`, a head start toward
    /// `target`, if the mesh it read is unchanged and the agent still stands at its start;
    /// its request stays queued. Otherwise the agent just waits.
    fn adopt_head_start(
        &mut self,
        slot: usize,
        corridor: &std::sync::Arc<super::corridor::Corridor>,
        target: Vec3,
    ) {
        if self.lanes.status[slot] != AgentStatus::WaitingForPath {
            return;
        }
        self.walk_head_start(slot, corridor, target);
    }

    /// Puts the agent on `corridor`, a head start toward `target`, if the mesh it read is
    /// unchanged and the agent stands at its start.
    pub(super) fn walk_head_start(
        &mut self,
        slot: usize,
        corridor: &std::sync::Arc<super::corridor::Corridor>,
        target: Vec3,
    ) {
        let lanes = &mut self.lanes;
        let filter = &self.filters[lanes.filter[slot].index()];
        if corridor.reads.still_valid_in(&self.snapshot, filter) != Validity::Valid
            || corridor.find_near(0, lanes.polygon[slot], 0, 1).is_none()
        {
            return;
        }
        let Some(last) = corridor.last_polygon(&self.snapshot) else {
            return;
        };
        let Some(tile) = self.snapshot.tile(last) else {
            return;
        };
        let goal = tile.closest_point(last.polygon(), target).0;
        lanes.goal_x[slot] = goal.x;
        lanes.goal_y[slot] = goal.y;
        lanes.goal_z[slot] = goal.z;
        lanes.goal_polygon[slot] = last;
        lanes.corridor[slot] = Some(corridor.clone());
        lanes.cursor[slot] = 0;
        lanes.corner_age[slot] = u8::MAX;
        lanes.status[slot] = AgentStatus::Moving;
        lanes.on_head_start[slot] = true;
    }
}
