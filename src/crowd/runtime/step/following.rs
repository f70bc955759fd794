//! The follow pass's glue: runs [`follow_pass`] over the agents' corridors, writes its
//! answers to the lanes, reconnects walkers pushed off their corridors and starts the
//! crossings of agents at a link's entry.
//!
//! Stage: crowd, the follow pass of the step (`step.rs` has the order; the pass itself is
//! in `passes.rs`). Inputs: lanes, corridors, the snapshot. Outputs: cursors, corners and
//! preferred velocities; re-plans and crossings as events and components.

use std::sync::Arc;

use rayon::prelude::*;

use crate::crowd::agents::AgentId;
use crate::crowd::agents::AgentStatus;
use crate::crowd::events::CrowdEvent;
use crate::crowd::lanes::lane_view;
use crate::crowd::runtime::Crowd;
use crate::crowd::walking::passes::{CORNER_REFRESH_FRAMES, follow_pass};
use crate::query::{RECONNECT_NODES_MAX, Validity, reconnect};

impl Crowd {
    /// Follow: cursor, corner and preferred velocity for every moving agent. Returns how
    /// many agents ran the funnel and how many off their corridor were reconnected to it.
    pub(crate) fn follow(&mut self, dt: f32, events: &mut Vec<CrowdEvent>) -> (u32, u32) {
        let mut outputs = std::mem::take(&mut self.scratch.follow_outputs);
        follow_pass(
            &self.snapshot,
            &self.lanes,
            &mut self.portal_windows,
            dt,
            self.config.arrive_tolerance_m,
            &mut outputs,
        );
        // Written back in parallel over runs of slots; the agents off their corridor and
        // those at a link's entry are noted, in slot order, and handled after.
        let (funnel_runs, lost, at_link) = FollowLanes::new(&mut self.lanes)
            .into_pieces(crate::crowd::compute::parallel::LIGHT_AGENTS_PER_TASK)
            .map(|view| {
                let outputs = &outputs[view.first..view.first + view.len];
                follow_write_back(view, outputs)
            })
            .reduce(
                || (0, Vec::new(), Vec::new()),
                |mut left, right| {
                    left.0 += right.0;
                    left.1.extend(right.1);
                    left.2.extend(right.2);
                    left
                },
            );
        let mut reconnected = 0;
        for agent in lost {
            // Off the corridor (pushed away, or the corridor's tiles changed): back to it
            // by the fewest polygons if it is near, else a new path from where the agent
            // actually is. Off a head start, the agent waits for the path its request is
            // already queued for.
            if let Ok(slot) = self.slot(agent) {
                if !self.lanes.on_head_start[slot] && self.reconnect(slot) {
                    reconnected += 1;
                    continue;
                }
                self.lanes.corridor[slot] = None;
                if self.lanes.on_head_start[slot] {
                    self.lanes.on_head_start[slot] = false;
                    self.lanes.status[slot] = AgentStatus::WaitingForPath;
                    continue;
                }
            }
            self.reissue(agent);
        }
        for slot in at_link {
            self.start_crossing(slot, dt, events);
        }
        self.scratch.follow_outputs = outputs;
        (funnel_runs, reconnected)
    }

    /// Joins the corridor of the agent in `slot`, which follow found it off, from the
    /// polygon it stands on: the fewest polygons (at most [`RECONNECT_NODES_MAX`] looked
    /// at, through polygons its filter passes) to its corridor's polygon one behind to
    /// eight ahead of its cursor, on the piece it walks (never across a link), then the
    /// corridor on from there. The agent keeps its order, its query's identity and its
    /// place; the new corridor's reads are the old one's and the reconnection's. False,
    /// with nothing changed, when the corridor is no longer valid or no such way exists.
    pub(crate) fn reconnect(&mut self, slot: usize) -> bool {
        let Some(corridor) = self.lanes.corridor[slot].clone() else {
            return false;
        };
        let Some(filter) = self.filters.get(self.lanes.filter[slot].index()) else {
            return false;
        };
        if corridor.reads.still_valid_in(&self.snapshot, filter) != Validity::Valid {
            return false;
        }
        let cursor = self.lanes.cursor[slot] as usize;
        let (first, last) = corridor.walkable_piece(cursor);
        let back = cursor.saturating_sub(1).max(first)..=(cursor + 8).min(last);
        let snapshot = &self.snapshot;
        let mut join = None;
        let found = reconnect(
            snapshot,
            self.lanes.polygon[slot],
            filter,
            RECONNECT_NODES_MAX,
            |polygon| {
                // Furthest ahead first, as follow's own search of the corridor does.
                join = back
                    .clone()
                    .rev()
                    .find(|&index| corridor.polygon(snapshot, index) == Some(polygon));
                join.is_some()
            },
        );
        let (Ok(Some(path)), Some(join)) = (found, join) else {
            return false;
        };
        let Some(joined) = corridor.reconnected(&path, join) else {
            return false;
        };
        self.lanes.corridor[slot] = Some(Arc::new(joined));
        self.lanes.cursor[slot] = 0;
        self.lanes.cursor_polygon[slot] = self.lanes.polygon[slot];
        // The kept corner belongs to the old corridor: the funnel runs next step.
        self.lanes.corner_age[slot] = CORNER_REFRESH_FRAMES;
        true
    }
}

lane_view! {
    /// What the follow pass's write-back writes of each agent, and what it reads beside.
    FollowLanes {
        write {
            cursor: u32,
            cursor_polygon: crate::mesh::PolyRef,
            corner_is_horizon: bool,
            corner_x: f32,
            corner_z: f32,
            slow_x: f32,
            slow_z: f32,
            slow_speed: f32,
            desired_x: f32,
            desired_z: f32,
            stop_distance: f32,
            corner_after_m: f32,
            corner_age: u8,
        }
        read {
            polygon: crate::mesh::PolyRef,
            id: AgentId,
        }
    }
}

/// The follow pass's outputs for one run of slots written to its lanes. Returns how many
/// of the run's agents ran the funnel, the agents off their corridor (to be re-issued) and
/// the slots at a link's entry, in slot order.
fn follow_write_back(
    view: FollowLanes<'_>,
    outputs: &[Option<crate::crowd::walking::passes::FollowOutput>],
) -> (u32, Vec<AgentId>, Vec<usize>) {
    let (mut funnel_runs, mut lost, mut at_link) = (0, Vec::new(), Vec::new());
    for (offset, &output) in outputs.iter().enumerate() {
        match output {
            Some(output) if !output.off_corridor => {
                funnel_runs += u32::from(output.refreshed);
                // The polygon the corner was found from: the corridor's at the cursor, or
                // the one beside the corridor the agent was pushed into (its window starts
                // with the edge back in). Either way the agent's own polygon, so an agent
                // walking beside its corridor keeps its corner as long as it stays there,
                // as one walking in the corridor does.
                view.cursor_polygon[offset] = view.polygon[offset];
                if output.refreshed {
                    view.corner_is_horizon[offset] = output.horizon;
                }
                view.cursor[offset] = output.cursor;
                view.corner_x[offset] = output.corner.x;
                view.corner_z[offset] = output.corner.y;
                if let Some((point, speed)) = output.slowdown {
                    view.slow_x[offset] = point.x;
                    view.slow_z[offset] = point.y;
                    view.slow_speed[offset] = speed;
                }
                // The follow pass capped it for the next slow-down point.
                view.desired_x[offset] = output.desired.x;
                view.desired_z[offset] = output.desired.y;
                view.stop_distance[offset] = output.stop_distance;
                view.corner_after_m[offset] = output.corner_after;
                view.corner_age[offset] = if output.refreshed {
                    0
                } else {
                    view.corner_age[offset].saturating_add(1)
                };
                if output.link_ready {
                    at_link.push(view.first + offset);
                }
            }
            Some(_) => {
                view.desired_x[offset] = 0.0;
                view.desired_z[offset] = 0.0;
                lost.push(view.id[offset]);
            }
            None => {
                view.desired_x[offset] = 0.0;
                view.desired_z[offset] = 0.0;
            }
        }
    }
    (funnel_runs, lost, at_link)
}
