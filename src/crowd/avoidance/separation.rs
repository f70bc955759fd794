//! The separation pass (depenetration): after the move, overlapping agents are pushed apart
//! along the surface.
//!
//! Stage: crowd runtime, after the controller's move and before feedback. Inputs: the
//! neighbour grid and the bodies the avoid pass gathered this step (cell order), the
//! controller's feedback records (slot order). Output: the feedback records with their
//! feet moved out of overlap (a `displacement_correction`, not walking) and, with an
//! inelastic contact ([`AvoidanceConfig::inelastic_contact`]), the velocity into the contact removed. The same at any
//! thread count: every round reads the last round's feet and writes a second buffer.

use glam::Vec2;
use rayon::prelude::*;

use super::neighbours::NeighbourGrid;
use crate::crowd::agents::AgentStatus;
use crate::crowd::avoidance::velocities::{
    AvoidBody, AvoidanceConfig, AvoidanceProfile, ProfileTable, give, passes, passing_through,
};
use crate::crowd::supports::platform::{FlatFrame, PlatformFrames};
use crate::mesh::Snapshot;

/// Overlap left alone by the separation pass, metres (rounding, not contact).
const SEPARATION_SLACK_M: f32 = 1e-3;

/// Relaxation rounds of the separation pass per step, at most: a round looks only at the
/// agents the last one moved, so rounds past the first cost only where a crowd is packed,
/// which is where they settle crushes. What a step leaves, the next step's avoidance (its
/// case for bodies already in contact) and separation take up: on the flow suite's
/// subset, four rounds cost a third less than eight on the packed dungeon, for 1% more
/// overlapping pairs and as many complete arrivals or more.
const SEPARATION_ROUNDS: usize = 4;

/// A separation round looking at fewer agents than this runs on the calling thread.
const SEPARATION_SERIAL_BELOW: usize = 256;

/// Agents (in cell order) per parallel work item of the separation pass, as in the avoid
/// pass: a crush in one corner spreads over several items.
const SEPARATION_CHUNK_AGENTS: usize = 64;

/// The share of an agent's mean overlap removed per round: all of it (averaging over
/// contacts already keeps pushes from several sides from overshooting).
const SEPARATION_FACTOR: f32 = 1.0;

/// The separation pass (depenetration): after the move, overlapping agents are pushed
/// apart along the surface (so they stay on the mesh), in up to four relaxation rounds: each
/// agent moves by half its mean overlap with its neighbours, away from them (a lone pair is
/// apart after one round). ORCA keeps agents apart when it can; in a crush (its fallback
/// minimises violations, it cannot remove them) and when the acceleration limit keeps an
/// agent from dodging in time, this keeps bodies from sinking into each other. The move is
/// written to the feedback as `displacement_correction`, so it does not count as walking
/// (vAverage).
///
/// `grid` holds the neighbours found at the start of the step (agents move a fraction of
/// the neighbour range in one step). The rounds work on the agents' feet, polygons and end
/// velocities copied into the grid's cell order (`scratch`), where an agent's neighbours
/// lie close by, and the feedback records (a hundred bytes each, in slot order) are read
/// once and written once, at the end. Each round reads the feet the last round left and
/// writes the next ones into a second buffer, so the pass is the same at any thread count;
/// a round is one parallel region with nothing serial after it (a serial apply of each
/// round's moves would leave the other cores idle).
#[allow(clippy::too_many_arguments)]
pub fn separation_pass(
    grid: &NeighbourGrid,
    bodies: &[AvoidBody],
    config: &AvoidanceConfig,
    snapshot: &Snapshot,
    filters: &[crate::query::QueryFilter],
    profiles: &[AvoidanceProfile],
    dt: f32,
    support_motions: &[crate::crowd::supports::support::SupportMotion],
    platforms: &PlatformFrames,
    feedback: &mut [crate::crowd::supports::controller::StepFeedback],
    scratch: &mut SeparationScratch,
) {
    let profiles = ProfileTable::new(profiles);
    let SeparationScratch {
        agents,
        feet,
        feet_next,
        moved,
        active,
    } = scratch;
    let agent_count = grid.len();
    if agent_count == 0 {
        return;
    }
    let chunks = agent_count.div_ceil(SEPARATION_CHUNK_AGENTS);
    // Every place is written below; the first agent only fills new ones.
    agents.resize(
        agent_count,
        SeparationAgent::after(&feedback[grid.slot_at(0)], FlatFrame::WORLD),
    );
    feet.resize(agent_count, Vec2::ZERO);
    feet_next.resize(agent_count, Vec2::ZERO);
    moved.resize(agent_count, false);
    active.truncate(chunks);
    active.resize_with(chunks, Vec::new);
    // The copy into cell order, in one parallel region: each chunk of cell order gathers
    // its agents' records, sets both feet buffers and puts every agent in its active list
    // (the first round looks at everyone). Feet are read in the world (an agent on a
    // platform at its foot placed by the platform's pose after the step), so bodies on and
    // off a platform push each other where they are; each moves by its push turned into
    // its own frame. The widest body rides along: a neighbour
    // farther than the agent's radius plus this cannot touch it, which is known from the
    // feet alone, without reading the neighbour's record.
    let feedback_read = &*feedback;
    let widest_m = agents
        .par_chunks_mut(SEPARATION_CHUNK_AGENTS)
        .zip(feet.par_chunks_mut(SEPARATION_CHUNK_AGENTS))
        .zip(feet_next.par_chunks_mut(SEPARATION_CHUNK_AGENTS))
        .zip(moved.par_chunks_mut(SEPARATION_CHUNK_AGENTS))
        .zip(active.par_iter_mut())
        .enumerate()
        .with_min_len(crate::crowd::compute::parallel::task_min(
            crate::crowd::compute::parallel::LIGHT_AGENTS_PER_TASK / SEPARATION_CHUNK_AGENTS,
        ))
        .map(|(chunk, ((((agents, feet), feet_next), moved), active))| {
            let first = chunk * SEPARATION_CHUNK_AGENTS;
            active.clear();
            let mut widest_m = 0.0f32;
            for (offset, agent) in agents.iter_mut().enumerate() {
                let index = first + offset;
                let step = &feedback_read[grid.slot_at(index)];
                *agent = SeparationAgent::after(step, platforms.flat(step.support));
                let flat = agent.frame.place(Vec2::new(step.foot.x, step.foot.z));
                (feet[offset], feet_next[offset], moved[offset]) = (flat, flat, false);
                active.push(index as u32);
                widest_m = widest_m.max(bodies[index].radius);
            }
            widest_m
        })
        .reduce(|| 0.0, f32::max);
    // Each round reads the feet the last round left (`feet`) and writes the next
    // (`feet_next`); an agent's own record is its chunk's, updated in place. Later rounds
    // look only at the agents the last round moved (most of a crowd touches nobody, and
    // rounds are for settling crushes), and those are exactly the places where
    // `feet_next`, two rounds old, differs from `feet`: each is brought up to date before
    // it is looked at, so after the round `feet_next` is whole again. No serial stretch
    // between rounds: the chunks keep their own active lists.
    let relax = (config.contact_relax_per_s * dt).min(1.0);
    // A round with few agents left to look at runs on the calling thread: sharing a few
    // dozen agents' pushes costs more in waking the other thread than it saves.
    let mut looking_at = agent_count;
    for round in 0..SEPARATION_ROUNDS {
        let read = &*feet;
        let soft_share = if round == 0 { relax } else { 0.0 };
        let serial = looking_at < SEPARATION_SERIAL_BELOW;
        let still: usize = agents
            .par_chunks_mut(SEPARATION_CHUNK_AGENTS)
            .zip(feet_next.par_chunks_mut(SEPARATION_CHUNK_AGENTS))
            .zip(moved.par_chunks_mut(SEPARATION_CHUNK_AGENTS))
            .zip(active.par_iter_mut())
            .enumerate()
            .with_min_len(if serial {
                chunks
            } else {
                crate::crowd::compute::parallel::task_min(1)
            })
            .map(|(chunk, (((agents, next), moved), active))| {
                let first = chunk * SEPARATION_CHUNK_AGENTS;
                let mut kept = 0;
                for position in 0..active.len() {
                    let index = active[position] as usize;
                    let offset = index - first;
                    next[offset] = read[index];
                    let agent = &mut agents[offset];
                    let Some(correction) = separation_move(
                        grid, bodies, config, snapshot, filters, &profiles, agent, read, widest_m,
                        index, soft_share,
                    ) else {
                        continue;
                    };
                    agent.foot = correction.foot;
                    agent.height_stale = correction.height_stale;
                    agent.polygon = correction.polygon;
                    agent.end += correction.velocity_change;
                    next[offset] = agent
                        .frame
                        .place(Vec2::new(correction.foot.x, correction.foot.z));
                    moved[offset] = true;
                    active[kept] = index as u32;
                    kept += 1;
                }
                active.truncate(kept);
                kept
            })
            .sum();
        std::mem::swap(feet, feet_next);
        if still == 0 {
            break;
        }
        looking_at = still;
    }
    let (agents, moved) = (&*agents, &*moved);
    feedback
        .par_iter_mut()
        .with_min_len(crate::crowd::compute::parallel::task_min(1))
        .enumerate()
        .for_each(|(slot, step)| {
            let Some(index) = grid.index_of_slot(slot).filter(|&index| moved[index]) else {
                return;
            };
            let agent = &agents[index];
            let mut foot = agent.foot;
            if agent.height_stale {
                if let Some(tile) = snapshot.tile(agent.polygon) {
                    foot.y = tile.height_at(agent.polygon.polygon(), Vec2::new(foot.x, foot.z));
                }
            }
            let shift = foot - step.foot;
            step.foot = foot;
            if agent.polygon != step.polygon {
                // Pushed onto another polygon, maybe of another support (off a belt's
                // side onto the ground beside it): the support is the new polygon's, and
                // so is the surface velocity the relative end velocity is taken from.
                if let Some(layer) = snapshot.support_layer(agent.polygon).map(u32::from) {
                    if layer != step.support {
                        step.support = layer;
                        step.velocity_support_end =
                            crate::crowd::supports::support::support_end_velocity(
                                support_motions,
                                layer,
                                foot,
                            );
                    }
                }
                step.polygon = agent.polygon;
            }
            step.displacement += shift;
            step.displacement_correction += shift;
            step.velocity_world_end.x = agent.end.x;
            step.velocity_world_end.z = agent.end.y;
        });
}

/// The separation pass's working state, kept by the crowd between steps so its buffers
/// are reused: per agent in cell order, what the rounds read and move.
#[derive(Clone, Debug, Default)]
pub struct SeparationScratch {
    /// Foot, polygon and end velocity, as the last round left them.
    agents: Vec<SeparationAgent>,
    /// The feet seen from above, as the last round left them: what a neighbour reads,
    /// packed (8 bytes an agent).
    feet: Vec<Vec2>,
    /// The feet the current round writes (see [`separation_pass`]).
    feet_next: Vec<Vec2>,
    /// Whether a round has moved the agent (its feedback is rewritten at the end).
    moved: Vec<bool>,
    /// Per chunk of cell order, the agents the next round looks at (those the last round
    /// moved), ascending.
    active: Vec<Vec<u32>>,
}

impl SeparationScratch {
    /// Writes the memory of the per-agent buffers for agents `from..to`, and makes each
    /// chunk's active list, ahead of the steps that fill them (see
    /// `runtime::map_step_buffers`).
    pub(crate) fn map_pages(
        &mut self,
        from: usize,
        to: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        use crate::crowd::compute::parallel::map_pages;
        map_pages(&mut self.agents, from, to)?;
        map_pages(&mut self.feet, from, to)?;
        map_pages(&mut self.feet_next, from, to)?;
        map_pages(&mut self.moved, from, to)?;
        let chunks = to.div_ceil(SEPARATION_CHUNK_AGENTS);
        if self.active.len() < chunks {
            self.active.try_reserve(chunks - self.active.len())?;
            self.active
                .resize_with(chunks, || Vec::with_capacity(SEPARATION_CHUNK_AGENTS));
        }
        Ok(())
    }
}

/// One agent's state in the separation rounds.
#[derive(Clone, Copy, Debug)]
struct SeparationAgent {
    /// The foot; its height is stale while `height_stale`.
    foot: glam::Vec3,
    height_stale: bool,
    polygon: crate::mesh::PolyRef,
    /// Horizontal end velocity, m/s.
    end: Vec2,
    /// The horizontal offset of its frame from the world's (a platform's), metres.
    frame: FlatFrame,
}

impl SeparationAgent {
    /// The agent as its step left it, in the frame offset by `frame`.
    fn after(
        step: &crate::crowd::supports::controller::StepFeedback,
        frame: FlatFrame,
    ) -> SeparationAgent {
        SeparationAgent {
            foot: step.foot,
            height_stale: false,
            polygon: step.polygon,
            end: Vec2::new(step.velocity_world_end.x, step.velocity_world_end.z),
            frame,
        }
    }
}

/// One agent's correction in a separation round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeparationMove {
    /// New foot position.
    pub foot: glam::Vec3,
    /// Its polygon.
    pub polygon: crate::mesh::PolyRef,
    /// Change of the horizontal end velocity, m/s (zero for a sliding contact).
    pub velocity_change: Vec2,
    /// Whether `foot.y` is still the height before the move (a move within the polygon;
    /// the pass reads the height once, after its last round).
    pub height_stale: bool,
}

/// One move out of its overlaps, in one separation round, for the agent at `index` in
/// cell order, if it has any.
#[allow(clippy::too_many_arguments)]
fn separation_move(
    grid: &NeighbourGrid,
    bodies: &[AvoidBody],
    config: &AvoidanceConfig,
    snapshot: &Snapshot,
    filters: &[crate::query::QueryFilter],
    profiles: &ProfileTable,
    agent: &SeparationAgent,
    feet: &[Vec2],
    widest_m: f32,
    index: usize,
    soft_share: f32,
) -> Option<SeparationMove> {
    let own = &bodies[index];
    let keeps_course = |body: &AvoidBody| profiles.keeps_course(body.status, body.profile.index());
    if keeps_course(own) {
        return None; // carried along its link, or not negotiating; the others make room
    }
    if own.status == AgentStatus::Quarantined {
        return None; // frozen where it stood, left out of every contact
    }
    let here = feet[index];
    let (mut push, mut contacts) = (Vec2::ZERO, 0u32);
    let ghost = passing_through(config, own);
    let could_touch = own.radius + widest_m;
    for &other in grid.neighbours_at(index) {
        let other = other as usize;
        let offset = here - feet[other];
        if offset.length_squared() >= could_touch * could_touch {
            continue;
        }
        // A walker passing through and the agents it passes do not push each other.
        if bodies[other].status == AgentStatus::Quarantined
            || (ghost && passes(profiles, &bodies[other]))
            || (passing_through(config, &bodies[other]) && passes(profiles, own))
        {
            continue;
        }
        let distance = offset.length();
        let reach = (own.radius + bodies[other].radius) * give(config, own, &bodies[other]);
        let overlap = reach - distance;
        if overlap <= SEPARATION_SLACK_M {
            continue;
        }
        // Deeper than the allowance: out at once; within it: eased out by the round's
        // soft share (the first round's only), so a brushing contact fades over steps.
        let allowed = reach * config.overlap_allowance;
        let overlap = (overlap - allowed).max(0.0) + soft_share * overlap.min(allowed);
        if overlap <= SEPARATION_SLACK_M {
            continue;
        }
        // Two feet on the same spot part along a direction fixed by their order.
        let away = if distance > 1e-6 {
            offset / distance
        } else if index < other {
            Vec2::X
        } else {
            -Vec2::X
        };
        // Half each, all of it against an agent crossing a link or keeping its course.
        let part = if keeps_course(&bodies[other]) {
            1.0
        } else {
            0.5
        };
        push += away * (overlap * part);
        contacts += 1;
    }
    if contacts == 0 {
        return None;
    }
    // The push is found in the world (where the feet are compared); the agent moves in its
    // own frame.
    let push = agent
        .frame
        .to_local(push * (SEPARATION_FACTOR / contacts as f32));
    // An inelastic contact: the end velocity keeps nothing that drives back into the
    // agents it was pushed away from.
    let velocity_change = if config.inelastic_contact {
        let normal = push.normalize_or_zero();
        -normal * agent.end.dot(normal).min(0.0)
    } else {
        Vec2::ZERO
    };
    let target = agent.foot + glam::Vec3::new(push.x, 0.0, push.y);
    // Most pushes stay in the agent's polygon: the foot moves there with its height left
    // as it was, to be read from the detail mesh once after the last round (the rounds
    // read only the feet seen from above). The rest walk the surface, which gives the
    // height with the clamped point.
    let tile = snapshot.tile(agent.polygon)?;
    if tile.contains_xz(agent.polygon.polygon(), Vec2::new(target.x, target.z)) {
        return Some(SeparationMove {
            foot: glam::Vec3::new(target.x, agent.foot.y, target.z),
            polygon: agent.polygon,
            velocity_change,
            height_stale: true,
        });
    }
    let filter = &filters[own.filter.index()];
    crate::query::move_along_surface(snapshot, agent.polygon, agent.foot, target, filter)
        .ok()
        .map(|moved| SeparationMove {
            foot: moved.position,
            polygon: moved.polygon,
            velocity_change,
            height_stale: false,
        })
}
