//! The saved forms of the crowd's values: ids, requests, events, the hecs components,
//! parameters, filters and profiles.
//!
//! Stage: crowd runtime, save and restore. Enums are a tag byte and their fields; a tag no
//! variant has, or an id no crowd issues (generation 0, polygon reference 0), is refused
//! by value. Types with private fields (corridors, the scheduler's jobs) are saved by
//! their own modules.

use crate::crowd::agents::AgentStatus;
use crate::crowd::agents::RequestId;
use crate::crowd::agents::{AgentId, AgentParams, FilterId, ProfileId};
use crate::crowd::avoidance::velocities::AvoidanceProfile;
use crate::crowd::codec::RestoreError;
use crate::crowd::codec::column::LaneValue;
use crate::crowd::codec::{Reader, Saved, Writer, saved_newtype, saved_struct};
use crate::crowd::components::{
    Cancelling, Ending, HoldOrder, HoldReserved, LinkCrossing, MoveRequest, VelocityRequest,
};
use crate::crowd::events::{BlockedBy, CancelRecord, CrowdEvent, FailureCondition, Outcome};
use crate::crowd::interactions::hold::HoldFailure;
use crate::ids::{AreaId, CostVersion, FilterVersion, SupportId};
use crate::mesh::{LinkId, LinkVersion, PolyRef, TileGeneration, TileSlot};
use crate::query::{QueryFilter, Validity};

saved_newtype!(
    FilterId(u8),
    ProfileId(u8),
    LinkId(u32),
    LinkVersion(u64),
    TileSlot(u16),
    TileGeneration(u32),
    FilterVersion(u64),
    CostVersion(u64),
    SupportId(u32),
);

saved_struct!(RequestId {
    logical,
    attempt,
    epoch
});
saved_struct!(CancelRecord { order, frame });
saved_struct!(crate::crowd::supports::connection::ConnectionWindow {
    first_open_frame,
    open_frames,
    period_frames,
});
saved_struct!(crate::crowd::supports::platform::PlatformPose { offset, yaw_rad });
saved_struct!(crate::crowd::supports::platform::LinkDock {
    support,
    pose,
    tolerance_m,
});
saved_struct!(crate::crowd::supports::platform::Shuttle {
    from,
    to,
    dwell_frames,
    travel_frames,
});
saved_struct!(crate::crowd::supports::platform::Platform { layer, motion });
saved_struct!(VelocityRequest { velocity, order });
saved_struct!(HoldReserved { hold, policy });
saved_struct!(HoldOrder {
    order,
    target,
    keeper
});
saved_struct!(MoveRequest {
    target,
    order,
    query,
    awaiting,
    attempts_since_adopted,
    adopted_once,
    deadline_frame,
});
saved_struct!(Cancelling {
    record,
    ending,
    receipt_owed,
    waited_s,
    faulted
});
saved_struct!(LinkCrossing {
    link,
    from,
    entry,
    to,
    elapsed_s,
    duration_s,
    landing,
    landing_index,
});
saved_struct!(AgentParams {
    radius_m,
    height_m,
    max_speed_mps,
    preferred_speed_mps,
    max_acceleration_mps2,
});
saved_struct!(AvoidanceProfile {
    negotiates,
    time_horizon_s,
    wall_time_horizon_s,
});

/// An id as its index and generation, each a variable-length number.
impl Saved for AgentId {
    const MIN_BYTES: usize = 2;
    fn write(&self, out: &mut Writer) {
        out.u32(self.index());
        out.u32(self.generation());
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let (index, generation) = (input.u32()?, input.u32()?);
        AgentId::from_bits(u64::from(generation) << 32 | u64::from(index))
            .ok_or_else(|| input.malformed(format!("agent id {index} of generation 0")))
    }
}

/// A reference as its tile generation and its slot-and-polygon bits.
impl Saved for PolyRef {
    const MIN_BYTES: usize = 2;
    fn write(&self, out: &mut Writer) {
        self.generation().write(out);
        out.u32(self.tile_bits());
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let generation = TileGeneration::read(input)?;
        let bits = input.u32()?;
        PolyRef::from_tile_bits(generation, bits).ok_or_else(|| {
            input.malformed(format!(
                "polygon reference {bits:#x} of generation {}",
                generation.0
            ))
        })
    }
}

/// An id's plain form: its bits (a column of them is two, the indices, then the
/// generations, mostly 1).
impl LaneValue for AgentId {
    type Raw = u64;
    fn raw(&self) -> u64 {
        self.to_bits()
    }
    fn from_raw(raw: u64) -> Option<Self> {
        AgentId::from_bits(raw)
    }
}

/// A polygon reference's plain form: its bits (a column of them is two, the slot-and-polygon
/// bits, then the tile generations, one value while no tile has been rebuilt).
impl LaneValue for PolyRef {
    type Raw = u64;
    fn raw(&self) -> u64 {
        self.to_bits()
    }
    fn from_raw(raw: u64) -> Option<Self> {
        PolyRef::from_bits(raw)
    }
}

impl LaneValue for AgentStatus {
    type Raw = u8;
    fn raw(&self) -> u8 {
        *self as u8
    }
    fn from_raw(raw: u8) -> Option<Self> {
        AgentStatus::ALL.get(usize::from(raw)).copied()
    }
}

impl LaneValue for FilterId {
    type Raw = u8;
    fn raw(&self) -> u8 {
        self.0
    }
    fn from_raw(raw: u8) -> Option<Self> {
        Some(FilterId(raw))
    }
}

impl LaneValue for ProfileId {
    type Raw = u8;
    fn raw(&self) -> u8 {
        self.0
    }
    fn from_raw(raw: u8) -> Option<Self> {
        Some(ProfileId(raw))
    }
}

impl Saved for Validity {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        match *self {
            Validity::Valid => out.u8(0),
            Validity::TileChanged(slot) => {
                out.u8(1);
                slot.write(out);
            }
            Validity::LinkChanged(link) => {
                out.u8(2);
                link.write(out);
            }
            Validity::FilterChanged => out.u8(3),
            Validity::CostChanged => out.u8(4),
            Validity::TargetChanged(target) => {
                out.u8(5);
                out.u64(target);
            }
        }
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok(match input.u8()? {
            0 => Validity::Valid,
            1 => Validity::TileChanged(Saved::read(input)?),
            2 => Validity::LinkChanged(Saved::read(input)?),
            3 => Validity::FilterChanged,
            4 => Validity::CostChanged,
            5 => Validity::TargetChanged(input.u64()?),
            other => return Err(input.malformed(format!("validity tag {other}"))),
        })
    }
}

impl Saved for CrowdEvent {
    // The shortest is a quarantine: its tag, the agent, the field and a one-byte value.
    // (Nine, the figure before, refused a save of 75 deferred events in 669 bytes.)
    const MIN_BYTES: usize = 1 + <AgentId as Saved>::MIN_BYTES + 1 + 1;
    fn write(&self, out: &mut Writer) {
        match *self {
            CrowdEvent::Arrived { agent, request } => {
                out.u8(0);
                (agent, request).write(out);
            }
            CrowdEvent::PartialArrived { agent, request } => {
                out.u8(1);
                (agent, request).write(out);
            }
            CrowdEvent::Blocked { agent, request, by } => {
                out.u8(2);
                (agent, request).write(out);
                by.write(out);
            }
            CrowdEvent::LinkStarted { agent, link } => {
                out.u8(3);
                (agent, link).write(out);
            }
            CrowdEvent::LinkFinished { agent, link } => {
                out.u8(4);
                (agent, link).write(out);
            }
            CrowdEvent::Cancelled { agent, record } => {
                out.u8(5);
                (agent, record).write(out);
            }
            CrowdEvent::CancelFault { agent, record } => {
                out.u8(6);
                (agent, record).write(out);
            }
            CrowdEvent::RouteInvalidated {
                agent,
                request,
                changed,
            } => {
                out.u8(7);
                (agent, request).write(out);
                changed.write(out);
            }
            CrowdEvent::NoPath { agent, request } => {
                out.u8(8);
                (agent, request).write(out);
            }
            CrowdEvent::OrderEnded {
                agent,
                order,
                outcome,
            } => {
                out.u8(9);
                (agent, order).write(out);
                outcome.write(out);
            }
            CrowdEvent::StandFact {
                agent,
                order,
                change,
            } => {
                out.u8(10);
                (agent, order).write(out);
                change.write(out);
            }
            CrowdEvent::Quarantined {
                agent,
                field,
                value_bits,
            } => {
                out.u8(11);
                agent.write(out);
                let index = crate::crowd::events::FeedbackField::ALL
                    .iter()
                    .position(|known| known.name() == field)
                    .unwrap_or(usize::from(u8::MAX));
                out.u8(index as u8);
                out.u32(value_bits);
            }
        }
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let tag = input.u8()?;
        let agent = AgentId::read(input)?;
        Ok(match tag {
            0 => CrowdEvent::Arrived {
                agent,
                request: Saved::read(input)?,
            },
            1 => CrowdEvent::PartialArrived {
                agent,
                request: Saved::read(input)?,
            },
            2 => CrowdEvent::Blocked {
                agent,
                request: Saved::read(input)?,
                by: Saved::read(input)?,
            },
            3 => CrowdEvent::LinkStarted {
                agent,
                link: Saved::read(input)?,
            },
            4 => CrowdEvent::LinkFinished {
                agent,
                link: Saved::read(input)?,
            },
            5 => CrowdEvent::Cancelled {
                agent,
                record: Saved::read(input)?,
            },
            6 => CrowdEvent::CancelFault {
                agent,
                record: Saved::read(input)?,
            },
            7 => CrowdEvent::RouteInvalidated {
                agent,
                request: Saved::read(input)?,
                changed: Saved::read(input)?,
            },
            8 => CrowdEvent::NoPath {
                agent,
                request: Saved::read(input)?,
            },
            9 => CrowdEvent::OrderEnded {
                agent,
                order: Saved::read(input)?,
                outcome: Saved::read(input)?,
            },
            10 => CrowdEvent::StandFact {
                agent,
                order: Saved::read(input)?,
                change: Saved::read(input)?,
            },
            11 => {
                let field = input.u8()?;
                let field = crate::crowd::events::FeedbackField::ALL
                    .get(usize::from(field))
                    .ok_or_else(|| input.malformed(format!("feedback field {field}")))?
                    .name();
                CrowdEvent::Quarantined {
                    agent,
                    field,
                    value_bits: input.u32()?,
                }
            }
            other => return Err(input.malformed(format!("event tag {other}"))),
        })
    }
}

impl Saved for QueryFilter {
    const MIN_BYTES: usize = (AreaId::MAX as usize + 1) * 4 + 8 + 2 + 2 + 1 + 8 + 8;
    fn write(&self, out: &mut Writer) {
        out.elements(&self.area_costs);
        out.u64(self.excluded_areas);
        out.u16(self.include_flags);
        out.u16(self.exclude_flags);
        self.use_links.write(out);
        self.version.write(out);
        self.cost_version.write(out);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let mut area_costs = [0.0; AreaId::MAX as usize + 1];
        for (area, cost) in area_costs.iter_mut().enumerate() {
            *cost = input.f32()?;
            // As `QueryFilter::set_area_cost` admits them: a cost below one would make the
            // search's heuristic overestimate, a NaN would order nothing.
            if !(cost.is_finite() && *cost >= 1.0) {
                return Err(input.malformed(format!("filter area {area} cost {cost}")));
            }
        }
        Ok(QueryFilter {
            area_costs,
            excluded_areas: input.u64()?,
            include_flags: input.u16()?,
            exclude_flags: input.u16()?,
            use_links: Saved::read(input)?,
            version: Saved::read(input)?,
            cost_version: Saved::read(input)?,
        })
    }
}

impl Saved for crate::crowd::supports::platform::PlatformMotion {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        match self {
            crate::crowd::supports::platform::PlatformMotion::Placed {
                pose,
                velocity,
                yaw_rate_rad_s,
            } => {
                out.u8(0);
                pose.write(out);
                velocity.write(out);
                out.f32(*yaw_rate_rad_s);
            }
            crate::crowd::supports::platform::PlatformMotion::Shuttle(shuttle) => {
                out.u8(1);
                shuttle.write(out);
            }
        }
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok(match input.u8()? {
            0 => crate::crowd::supports::platform::PlatformMotion::Placed {
                pose: Saved::read(input)?,
                velocity: Saved::read(input)?,
                yaw_rate_rad_s: input.f32()?,
            },
            1 => crate::crowd::supports::platform::PlatformMotion::Shuttle(Saved::read(input)?),
            other => return Err(input.malformed(format!("platform motion tag {other}"))),
        })
    }
}

impl Saved for Outcome {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        out.u8(match self {
            Outcome::Success => 0,
            Outcome::Cancelled => 1,
            Outcome::Failure(FailureCondition::Unreachable) => 2,
            Outcome::Failure(FailureCondition::NoPath) => 3,
            Outcome::Failure(FailureCondition::DeadlinePassed) => 4,
            Outcome::Failure(FailureCondition::Blocked(BlockedBy::Crowd)) => 5,
            Outcome::Failure(FailureCondition::Blocked(BlockedBy::Wall)) => 6,
            Outcome::Failure(FailureCondition::Hold(HoldFailure::CapabilityInsufficient)) => 7,
            Outcome::Failure(FailureCondition::Hold(HoldFailure::DeadlinePassed)) => 8,
            Outcome::Failure(FailureCondition::Interaction(why)) => {
                out.u8(9);
                why.write(out);
                return;
            }
        });
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok(match input.u8()? {
            0 => Outcome::Success,
            1 => Outcome::Cancelled,
            2 => Outcome::Failure(FailureCondition::Unreachable),
            3 => Outcome::Failure(FailureCondition::NoPath),
            4 => Outcome::Failure(FailureCondition::DeadlinePassed),
            5 => Outcome::Failure(FailureCondition::Blocked(BlockedBy::Crowd)),
            6 => Outcome::Failure(FailureCondition::Blocked(BlockedBy::Wall)),
            7 => Outcome::Failure(FailureCondition::Hold(HoldFailure::CapabilityInsufficient)),
            8 => Outcome::Failure(FailureCondition::Hold(HoldFailure::DeadlinePassed)),
            9 => Outcome::Failure(FailureCondition::Interaction(Saved::read(input)?)),
            other => return Err(input.malformed(format!("outcome tag {other}"))),
        })
    }
}

impl Saved for Ending {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        out.u8(match self {
            Ending::Cancel => 0,
            Ending::Deadline => 1,
            Ending::Blocked(BlockedBy::Crowd) => 2,
            Ending::Blocked(BlockedBy::Wall) => 3,
            Ending::Hold(HoldFailure::CapabilityInsufficient) => 4,
            Ending::Hold(HoldFailure::DeadlinePassed) => 5,
            Ending::Interaction(why) => {
                out.u8(6);
                why.write(out);
                return;
            }
        });
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        match input.u8()? {
            0 => Ok(Ending::Cancel),
            1 => Ok(Ending::Deadline),
            2 => Ok(Ending::Blocked(BlockedBy::Crowd)),
            3 => Ok(Ending::Blocked(BlockedBy::Wall)),
            4 => Ok(Ending::Hold(HoldFailure::CapabilityInsufficient)),
            5 => Ok(Ending::Hold(HoldFailure::DeadlinePassed)),
            6 => Ok(Ending::Interaction(Saved::read(input)?)),
            other => Err(input.malformed(format!("braking cause {other}"))),
        }
    }
}

impl Saved for BlockedBy {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        out.u8(match self {
            BlockedBy::Crowd => 0,
            BlockedBy::Wall => 1,
        });
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        match input.u8()? {
            0 => Ok(BlockedBy::Crowd),
            1 => Ok(BlockedBy::Wall),
            other => Err(input.malformed(format!("blocked-by tag {other}"))),
        }
    }
}

/// A blocked lane: 0 not blocked, 1 by the crowd, 2 by a wall.
impl LaneValue for Option<BlockedBy> {
    type Raw = u8;
    fn raw(&self) -> u8 {
        match self {
            None => 0,
            Some(BlockedBy::Crowd) => 1,
            Some(BlockedBy::Wall) => 2,
        }
    }
    fn from_raw(raw: u8) -> Option<Self> {
        match raw {
            0 => Some(None),
            1 => Some(Some(BlockedBy::Crowd)),
            2 => Some(Some(BlockedBy::Wall)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crowd::codec::SharedTable;
    use crate::crowd::events::FeedbackField;

    #[test]
    fn the_shortest_event_is_no_shorter_than_the_least_a_count_allows_for() {
        // A count of events is refused when the bytes left could not hold that many of at
        // least `MIN_BYTES` each; a crowd's own save must never be refused by it.
        let agent = AgentId::from_bits(1 << 32).unwrap();
        let event = CrowdEvent::Quarantined {
            agent,
            field: FeedbackField::Foot.name(),
            value_bits: 0,
        };
        let events = vec![event; 75];
        let table = SharedTable::<u8>::of_lanes(&[], 0);
        let mut out = Writer::new(&table.places);
        event.write(&mut out);
        assert!(
            out.bytes.len() >= CrowdEvent::MIN_BYTES,
            "{} bytes",
            out.bytes.len()
        );
        let mut out = Writer::new(&table.places);
        events.write(&mut out);
        let mut input = Reader::new(&out.bytes);
        assert_eq!(Vec::<CrowdEvent>::read(&mut input).unwrap(), events);
        assert!(input.is_at_end());
    }
}
