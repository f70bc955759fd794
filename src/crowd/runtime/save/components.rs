//! The `AGNT` section: each agent's parameters and orders (the crowd's `hecs` components),
//! written as columns in slot order.
//!
//! Stage: crowd runtime, save and restore. Layout: the five parameter columns; a column of
//! which components each agent has (bit 0 a move order, 1 a cancel, 2 a velocity order, 3 a
//! link crossing, 4 a hold order, 5 a hold reserved beside a move, 6 an interaction order); the move orders of those that have one, as columns
//! (target, order and query identities, flags, deadline); then the cancels, velocity
//! orders, crossings, holds, reserved holds and interactions of those that have them, value by value (few agents have
//! one at a time).

use crate::crowd::agents::RequestId;
use crate::crowd::agents::{AgentId, AgentParams};
use crate::crowd::codec::RestoreError;
use crate::crowd::codec::{Reader, Saved, Writer};
use crate::crowd::components::{
    Cancelling, HoldOrder, HoldReserved, LinkCrossing, MoveRequest, Slot, VelocityRequest,
};
use crate::crowd::interactions::interaction::InteractionOrder;
use crate::crowd::lanes::AgentLanes;
use crate::crowd::runtime::Crowd;

const HAS_MOVE: u8 = 1;
const HAS_CANCEL: u8 = 2;
const HAS_VELOCITY: u8 = 4;
const HAS_CROSSING: u8 = 8;
const HAS_HOLD: u8 = 16;
const HAS_RESERVED_HOLD: u8 = 32;
const HAS_INTERACTION: u8 = 64;

/// A move order's deadline column's value for "none".
const NO_DEADLINE: u64 = u64::MAX;

/// Per slot, where an agent's component is in the list gathered from the world.
const NONE: u32 = u32::MAX;

impl Crowd {
    pub(crate) fn write_components(&self, out: &mut Writer) {
        // The world is read archetype by archetype; each component goes to a dense list
        // and each slot notes where its own went (a table of one value per agent per kind
        // would be megabytes of mostly empty rows, mapped and zeroed for every save).
        let agents = self.lanes.len();
        let mut params = vec![AgentParams::DETOUR_REFERENCE; agents];
        let mut has = vec![0u8; agents];
        let mut request_at = vec![NONE; agents];
        let (mut requests_met, mut cancels_met, mut velocities_met, mut crossings_met) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut query = self.world.query::<(
            &Slot,
            &AgentParams,
            Option<&MoveRequest>,
            Option<&Cancelling>,
            Option<&VelocityRequest>,
            Option<&LinkCrossing>,
            Option<&HoldOrder>,
            Option<&HoldReserved>,
            Option<&InteractionOrder>,
        )>();
        let mut interactions_met = Vec::new();
        let (mut holds_met, mut reserved_met) = (Vec::new(), Vec::new());
        for (
            slot,
            agent_params,
            request,
            cancelling,
            velocity,
            crossing,
            hold,
            reserved,
            interaction,
        ) in query.iter()
        {
            let slot = slot.0;
            params[slot] = *agent_params;
            let mut bits = 0;
            if let Some(request) = request {
                bits |= HAS_MOVE;
                request_at[slot] = requests_met.len() as u32;
                requests_met.push(request);
            }
            if let Some(cancelling) = cancelling {
                bits |= HAS_CANCEL;
                cancels_met.push((slot, *cancelling));
            }
            if let Some(velocity) = velocity {
                bits |= HAS_VELOCITY;
                velocities_met.push((slot, *velocity));
            }
            if let Some(crossing) = crossing {
                bits |= HAS_CROSSING;
                crossings_met.push((slot, *crossing));
            }
            if let Some(hold) = hold {
                bits |= HAS_HOLD;
                holds_met.push((slot, *hold));
            }
            if let Some(reserved) = reserved {
                bits |= HAS_RESERVED_HOLD;
                reserved_met.push((slot, *reserved));
            }
            if let Some(interaction) = interaction {
                bits |= HAS_INTERACTION;
                interactions_met.push((slot, interaction));
            }
            has[slot] = bits;
        }
        out.column(&column(&params, |p| p.radius_m));
        out.column(&column(&params, |p| p.height_m));
        out.column(&column(&params, |p| p.max_speed_mps));
        out.column(&column(&params, |p| p.preferred_speed_mps));
        out.column(&column(&params, |p| p.max_acceleration_mps2));
        out.column(&has);

        let (request_slots, requests): (Vec<usize>, Vec<&MoveRequest>) = request_at
            .iter()
            .enumerate()
            .filter(|&(_, &at)| at != NONE)
            .map(|(slot, &at)| (slot, &requests_met[at as usize]))
            .unzip();
        // Against what the lanes (written before) hold: the goal is mostly the target,
        // the query's identity mostly a step from the order's.
        let goals = GoalColumns::of(&self.lanes, &request_slots);
        out.column_against(&column(&requests, |r| r.target.x), &goals.x);
        out.column_against(&column(&requests, |r| r.target.y), &goals.y);
        out.column_against(&column(&requests, |r| r.target.z), &goals.z);
        let orders = column(&requests, |r| r.order);
        let queries = column(&requests, |r| r.query);
        write_identities(out, &orders, None);
        write_identities(out, &queries, Some(&orders));
        out.column(&column(&requests, |r| r.awaiting));
        out.column(&column(&requests, |r| r.attempts_since_adopted));
        out.column(&column(&requests, |r| r.adopted_once));
        out.column(&column(&requests, |r| {
            r.deadline_frame.unwrap_or(NO_DEADLINE)
        }));

        // Few agents have these at a time: sorted into slot order where they are.
        cancels_met.sort_unstable_by_key(|&(slot, _)| slot);
        velocities_met.sort_unstable_by_key(|&(slot, _)| slot);
        crossings_met.sort_unstable_by_key(|&(slot, _)| slot);
        cancels_met.iter().for_each(|(_, c)| c.write(out));
        velocities_met.iter().for_each(|(_, v)| v.write(out));
        crossings_met.iter().for_each(|(_, c)| c.write(out));
        holds_met.sort_unstable_by_key(|&(slot, _)| slot);
        holds_met.iter().for_each(|(_, h)| h.write(out));
        reserved_met.sort_unstable_by_key(|&(slot, _)| slot);
        reserved_met.iter().for_each(|(_, r)| r.write(out));
        interactions_met.sort_unstable_by_key(|&(slot, _)| slot);
        interactions_met.iter().for_each(|(_, i)| i.write(out));
    }

    /// Reads what [`Crowd::write_components`] wrote and gives each agent of `ids` (in slot
    /// order) its identity record with them.
    pub(crate) fn read_components(
        &mut self,
        input: &mut Reader,
        lanes: &AgentLanes,
    ) -> Result<(), RestoreError> {
        let ids = &lanes.id;
        let count = ids.len();
        let radius_m: Vec<f32> = input.column(count)?;
        let height_m: Vec<f32> = input.column(count)?;
        let max_speed_mps: Vec<f32> = input.column(count)?;
        let preferred_speed_mps: Vec<f32> = input.column(count)?;
        let max_acceleration_mps2: Vec<f32> = input.column(count)?;
        let has: Vec<u8> = input.column(count)?;
        if let Some(slot) = has.iter().position(|&bits| bits > 127) {
            return Err(input.malformed(format!("component bits {} of slot {slot}", has[slot])));
        }
        let request_slots: Vec<usize> = (0..count)
            .filter(|&slot| has[slot] & HAS_MOVE != 0)
            .collect();
        let requests = read_requests(input, &GoalColumns::of(lanes, &request_slots))?;
        let rows = |bit: u8| has.iter().filter(move |&&b| b & bit != 0).count();
        let cancelling: Vec<Cancelling> = input.elements(rows(HAS_CANCEL))?;
        let velocity: Vec<VelocityRequest> = input.elements(rows(HAS_VELOCITY))?;
        let crossing: Vec<LinkCrossing> = input.elements(rows(HAS_CROSSING))?;
        let holds: Vec<HoldOrder> = input.elements(rows(HAS_HOLD))?;
        let reserved: Vec<HoldReserved> = input.elements(rows(HAS_RESERVED_HOLD))?;
        let interactions: Vec<InteractionOrder> = input.elements(rows(HAS_INTERACTION))?;
        let mut interactions = interactions.into_iter();
        let (mut requests, mut cancelling, mut velocity, mut crossing) = (
            requests.into_iter(),
            cancelling.into_iter(),
            velocity.into_iter(),
            crossing.into_iter(),
        );
        let (mut holds, mut reserved) = (holds.into_iter(), reserved.into_iter());
        // Agents with parameters only, or with a move order besides, are spawned in two
        // batches (one archetype each, no per-agent lookup); the few with more one by one.
        let (mut standing, mut standing_records) = (Vec::new(), Vec::new());
        let (mut walking, mut walking_records) = (Vec::new(), Vec::new());
        let mut spawned = Vec::new();
        for (slot, &agent) in ids.iter().enumerate() {
            let params = AgentParams {
                radius_m: radius_m[slot],
                height_m: height_m[slot],
                max_speed_mps: max_speed_mps[slot],
                preferred_speed_mps: preferred_speed_mps[slot],
                max_acceleration_mps2: max_acceleration_mps2[slot],
            };
            match has[slot] {
                0 => {
                    standing.push(agent);
                    standing_records.push((Slot(slot), params));
                }
                HAS_MOVE => {
                    let request = requests.next().expect("counted from the same bits");
                    self.note_deadline(agent, &request);
                    walking.push(agent);
                    walking_records.push((Slot(slot), params, request));
                }
                bits => {
                    let mut record = hecs::EntityBuilder::new();
                    record.add(Slot(slot)).add(params);
                    let take = |bit: u8| bits & bit != 0;
                    if take(HAS_MOVE) {
                        let request = requests.next().expect("counted");
                        self.note_deadline(agent, &request);
                        record.add(request);
                    }
                    if take(HAS_CANCEL) {
                        record.add(cancelling.next().expect("counted"));
                    }
                    if take(HAS_VELOCITY) {
                        record.add(velocity.next().expect("counted"));
                    }
                    if take(HAS_CROSSING) {
                        record.add(crossing.next().expect("counted"));
                    }
                    if take(HAS_HOLD) {
                        record.add(holds.next().expect("counted"));
                    }
                    if take(HAS_RESERVED_HOLD) {
                        record.add(reserved.next().expect("counted"));
                    }
                    if take(HAS_INTERACTION) {
                        record.add(interactions.next().expect("counted"));
                    }
                    spawned.push((agent, self.world.spawn(record.build())));
                }
            }
        }
        spawned.extend(
            standing
                .into_iter()
                .zip(self.world.spawn_batch(standing_records)),
        );
        spawned.extend(
            walking
                .into_iter()
                .zip(self.world.spawn_batch(walking_records)),
        );
        for (agent, entity) in spawned {
            if !self.ids.revive(agent, entity) {
                return Err(input.malformed(format!(
                    "{agent} is not a live id of the identity table, or is in two slots"
                )));
            }
        }
        Ok(())
    }
}

impl Crowd {
    /// Lists a restored order's deadline, as `request_move_by` did.
    fn note_deadline(&mut self, agent: AgentId, request: &MoveRequest) {
        if let Some(deadline) = request.deadline_frame {
            self.deadlines.push((deadline, agent, request.order));
        }
    }
}

/// One field of every item, as a column.
fn column<T, F>(items: &[T], field: impl Fn(&T) -> F) -> Vec<F> {
    items.iter().map(field).collect()
}

/// The goal lanes of the agents in `slots`: the columns a move order's target is written
/// against.
struct GoalColumns {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
}

impl GoalColumns {
    fn of(lanes: &AgentLanes, slots: &[usize]) -> GoalColumns {
        GoalColumns {
            x: slots.iter().map(|&slot| lanes.goal_x[slot]).collect(),
            y: slots.iter().map(|&slot| lanes.goal_y[slot]).collect(),
            z: slots.iter().map(|&slot| lanes.goal_z[slot]).collect(),
        }
    }
}

/// Request identities as three columns, against `reference`'s if given.
fn write_identities(out: &mut Writer, identities: &[RequestId], reference: Option<&[RequestId]>) {
    let logical = column(identities, |id| id.logical);
    let attempt = column(identities, |id| id.attempt);
    let epoch = column(identities, |id| id.epoch);
    match reference {
        None => {
            out.column(&logical);
            out.column(&attempt);
            out.column(&epoch);
        }
        Some(reference) => {
            out.column_against(&logical, &column(reference, |id| id.logical));
            out.column_against(&attempt, &column(reference, |id| id.attempt));
            out.column_against(&epoch, &column(reference, |id| id.epoch));
        }
    }
}

/// Reads what [`write_identities`] wrote (`count` of them, or as many as `reference`).
fn read_identities(
    input: &mut Reader,
    count: usize,
    reference: Option<&[RequestId]>,
) -> Result<Vec<RequestId>, RestoreError> {
    let (logical, attempt, epoch): (Vec<u64>, Vec<u32>, Vec<u32>) = match reference {
        None => (
            input.column(count)?,
            input.column(count)?,
            input.column(count)?,
        ),
        Some(reference) => (
            input.column_against(&column(reference, |id| id.logical))?,
            input.column_against(&column(reference, |id| id.attempt))?,
            input.column_against(&column(reference, |id| id.epoch))?,
        ),
    };
    Ok((0..count)
        .map(|row| RequestId {
            logical: logical[row],
            attempt: attempt[row],
            epoch: epoch[row],
        })
        .collect())
}

fn read_requests(
    input: &mut Reader,
    goals: &GoalColumns,
) -> Result<Vec<MoveRequest>, RestoreError> {
    let count = goals.x.len();
    let target_x: Vec<f32> = input.column_against(&goals.x)?;
    let target_y: Vec<f32> = input.column_against(&goals.y)?;
    let target_z: Vec<f32> = input.column_against(&goals.z)?;
    let orders = read_identities(input, count, None)?;
    let queries = read_identities(input, count, Some(&orders))?;
    let awaiting: Vec<bool> = input.column(count)?;
    let attempts_since_adopted: Vec<u32> = input.column(count)?;
    let adopted_once: Vec<bool> = input.column(count)?;
    let deadline_frame: Vec<u64> = input.column(count)?;
    Ok((0..count)
        .map(|index| MoveRequest {
            target: glam::Vec3::new(target_x[index], target_y[index], target_z[index]),
            order: orders[index],
            query: queries[index],
            awaiting: awaiting[index],
            attempts_since_adopted: attempts_since_adopted[index],
            adopted_once: adopted_once[index],
            deadline_frame: Some(deadline_frame[index]).filter(|&frame| frame != NO_DEADLINE),
        })
        .collect())
}
