//! The sections of a saved crowd below the calls: the corridor table in parallel parts,
//! checksums, the mesh's generations and versions, the lanes read back and their values
//! checked against the saved limits.
//!
//! Stage: crowd runtime, save and restore (`mod.rs` holds the calls and the order of the
//! sections). Invariant: every value read is checked before the crowd uses it; a bad one
//! is refused by name with the byte where it was found.

use std::sync::Arc;

use rayon::prelude::*;

use super::{HEADER_BYTES, SAVE_FORMAT_VERSION};
use crate::crowd::codec::{MAGIC, Reader, RestoreError, Saved, SharedTable, Writer};

use crate::crowd::events::CrowdError;
use crate::crowd::lanes::{AgentLanes, every_lane};
use crate::crowd::paths::corridor::Corridor;
use crate::mesh::{LinkId, LinkVersion, SlotState, Snapshot, TileGeneration, TileSlot};

/// Corridors per part of the corridor table: the parts are written and read in parallel
/// (reading a corridor mostly waits for its memory, so the cores' waits overlap).
pub(super) const CORRIDORS_PER_PART: usize = 1024;

/// The corridor table's parts, each [`CORRIDORS_PER_PART`] corridors (the last fewer); the
/// section is the table's count, then each part's length in bytes and its bytes.
pub(super) fn corridor_parts(table: &CorridorTable) -> Vec<Checksummed> {
    table
        .values
        .par_chunks(CORRIDORS_PER_PART)
        .map(|part| {
            let mut part_out = Writer::new(&table.places);
            for (index, corridor) in part.iter().enumerate() {
                // Corridors lie scattered in memory, each a struct and two lists: the
                // struct is fetched a few corridors ahead, its lists (their addresses in
                // the struct by then) a few after that, so the misses overlap.
                if let Some(&ahead) = part.get(index + PREFETCH_STRUCTS_AHEAD) {
                    prefetch(std::ptr::from_ref(ahead).cast());
                }
                if let Some(&ahead) = part.get(index + PREFETCH_LISTS_AHEAD) {
                    for (start, length) in ahead.list_memory() {
                        // Every line the list touches, not only its first.
                        let into_line = start as usize % CACHE_LINE_BYTES;
                        let line = start.wrapping_sub(into_line);
                        for index in 0..(into_line + length).div_ceil(CACHE_LINE_BYTES) {
                            prefetch(line.wrapping_add(index * CACHE_LINE_BYTES));
                        }
                    }
                }
                corridor.write(&mut part_out);
            }
            Checksummed::of(part_out.bytes)
        })
        .collect()
}

/// Appends `pieces` to `bytes`, in order, copied on every core at once: in a save into
/// memory the process has not used before, most of the copy's cost is the system mapping
/// each page it first writes, which one core alone would pay for the whole table.
pub(super) fn append_in_parallel(bytes: &mut Vec<u8>, pieces: &[&[u8]]) {
    let total: usize = pieces.iter().map(|piece| piece.len()).sum();
    bytes.reserve(total);
    let start = bytes.len();
    let mut room = &mut bytes.spare_capacity_mut()[..total];
    // Copies of at most a chunk each, so the cores get even shares of a few large pieces.
    const CHUNK_BYTES: usize = 64 * 1024;
    let mut copies = Vec::with_capacity(total / CHUNK_BYTES + pieces.len());
    for chunk in pieces.iter().flat_map(|piece| piece.chunks(CHUNK_BYTES)) {
        let (place, rest) = room.split_at_mut(chunk.len());
        copies.push((place, chunk));
        room = rest;
    }
    copies.into_par_iter().for_each(|(place, chunk)| {
        debug_assert_eq!(place.len(), chunk.len());
        // SAFETY: `place` was split to `chunk`'s length, and the two cannot overlap (one
        // is room past the vector's length, the other a piece the caller holds).
        unsafe {
            std::ptr::copy_nonoverlapping(chunk.as_ptr(), place.as_mut_ptr().cast(), chunk.len());
        }
    });
    // SAFETY: the `total` bytes after `start` are the places above, which split the room
    // without gaps, and every place was written from its piece.
    unsafe { bytes.set_len(start + total) };
}

/// Bytes written on one side of the save, with their checksum (taken there, while they
/// are in that core's cache).
pub(super) struct Checksummed {
    pub bytes: Vec<u8>,
    pub checksum: crc32fast::Hasher,
}

impl Checksummed {
    pub fn of(bytes: Vec<u8>) -> Checksummed {
        let checksum = checksum_of(&bytes);
        Checksummed { bytes, checksum }
    }
}

pub(super) fn checksum_of(bytes: &[u8]) -> crc32fast::Hasher {
    let mut checksum = crc32fast::Hasher::new();
    checksum.update(bytes);
    checksum
}

/// What [`Crowd::write_plain_sections`] wrote: the save's buffer up to `PLCS`, with the
/// checksums of its payload before the agents' block's length and after it.
pub(super) struct PlainSections {
    pub bytes: Vec<u8>,
    /// Where the agents' block's length goes.
    pub agents_length_at: usize,
    pub checksum_before_length: crc32fast::Hasher,
    pub checksum: crc32fast::Hasher,
}

/// The processors' cache line (x86-64 and most ARM cores).
pub(super) const CACHE_LINE_BYTES: usize = 64;

/// How many corridors ahead of the one being written its struct is prefetched.
pub(super) const PREFETCH_STRUCTS_AHEAD: usize = 8;
/// How many corridors ahead its lists are.
pub(super) const PREFETCH_LISTS_AHEAD: usize = 4;

/// Asks the processor to bring the cache line at `address` in (a hint: nothing is read).
#[inline]
pub(super) fn prefetch(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 processor has; a prefetch
    // never faults and reads nothing the program sees, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// A part of the corridor table: its corridor count, its offset in the payload, its bytes.
type CorridorPart<'a> = (usize, usize, &'a [u8]);

/// The corridor table's parts, the reader moved past the table.
pub(super) fn corridor_parts_of<'a>(
    input: &mut Reader<'a>,
) -> Result<Vec<CorridorPart<'a>>, RestoreError> {
    let count = input.len(1)?;
    let mut parts = Vec::new();
    for first in (0..count).step_by(CORRIDORS_PER_PART) {
        let corridors = CORRIDORS_PER_PART.min(count - first);
        let len = input.len(1)?;
        let offset = input.offset();
        parts.push((corridors, offset, input.raw_bytes(len)?));
    }
    Ok(parts)
}

/// The corridors of the parts [`corridor_parts_of`] found, in order.
pub(super) fn build_corridors(
    parts: Vec<(usize, usize, &[u8])>,
) -> Result<Vec<Arc<Corridor>>, RestoreError> {
    let parts: Vec<Vec<Arc<Corridor>>> = parts
        .into_par_iter()
        .map(|(corridors, offset, bytes)| {
            let mut part = Reader::part(bytes, offset, "corridors");
            let read: Vec<Arc<Corridor>> = (0..corridors)
                .map(|_| Corridor::read(&mut part).map(Arc::new))
                .collect::<Result<_, _>>()?;
            if !part.is_at_end() {
                return Err(part.malformed("bytes after a part's last corridor"));
            }
            Ok(read)
        })
        .collect::<Result<_, RestoreError>>()?;
    Ok(parts.into_iter().flatten().collect())
}

/// The `LANE` section of `count` agents as [`Crowd::write_lanes`] wrote it (each reference
/// read before the lanes against it): every lane but the corridor lane, left empty for
/// `PLCS` to fill.
pub(super) fn read_lanes(input: &mut Reader, count: usize) -> Result<AgentLanes, RestoreError> {
    let mut lanes = AgentLanes::default();
    macro_rules! read_lane {
        (corridor) => {
            Vec::new()
        };
        (desired_x) => {
            input.column_against(&lanes.velocity_x)?
        };
        (desired_z) => {
            input.column_against(&lanes.velocity_z)?
        };
        (anchor_x) => {
            input.column_against(&lanes.position_x)?
        };
        (anchor_z) => {
            input.column_against(&lanes.position_z)?
        };
        (cursor_polygon) => {
            input.column_against(&lanes.polygon)?
        };
        ($lane:ident) => {
            input.column(count)?
        };
    }
    macro_rules! read_lanes {
        ($($lane:ident),* $(,)?) => {
            $(lanes.$lane = read_lane!($lane);)*
        };
    }
    every_lane!(read_lanes);
    Ok(lanes)
}

/// Writes the tile generations and link versions of `snapshot`.
pub(super) fn write_mesh(out: &mut Writer, snapshot: &Snapshot) {
    let data = snapshot.data();
    out.len(data.slots.len());
    for view in &data.slots {
        out.u8(slot_state_byte(&view.state));
        view.generation.write(out);
    }
    out.len(data.links.len());
    for link in &data.links {
        link.version.write(out);
    }
}

pub(super) fn slot_state_byte(state: &SlotState) -> u8 {
    match state {
        SlotState::Empty => 0,
        SlotState::Live(_) => 1,
        SlotState::Pending => 2,
    }
}

/// Refuses a mesh whose tiles or links differ from the saved snapshot's, naming the first.
pub(super) fn check_mesh(input: &mut Reader, snapshot: &Snapshot) -> Result<(), RestoreError> {
    let data = snapshot.data();
    let saved_slots = input.len(5)?;
    for index in 0..saved_slots.max(data.slots.len()) {
        let saved = if index < saved_slots {
            let state = input.u8()?;
            (state, TileGeneration::read(input)?)
        } else {
            (0, TileGeneration(0))
        };
        let mesh = data
            .slots
            .get(index)
            .map_or((0, TileGeneration(0)), |view| {
                (slot_state_byte(&view.state), view.generation)
            });
        if saved != mesh {
            return Err(RestoreError::TileChanged {
                slot: TileSlot(index as u16),
                saved: saved.1,
                mesh: mesh.1,
            });
        }
    }
    let saved_links = input.len(8)?;
    for index in 0..saved_links.max(data.links.len()) {
        let saved = if index < saved_links {
            LinkVersion::read(input)?
        } else {
            LinkVersion(0)
        };
        let mesh = data
            .links
            .get(index)
            .map_or(LinkVersion(0), |link| link.version);
        if saved != mesh {
            return Err(RestoreError::LinkChanged {
                link: LinkId(index as u32),
                saved,
                mesh,
            });
        }
    }
    Ok(())
}

/// The payload of a saved crowd whose header is whole and whose checksum matches.
pub(super) fn checked_payload(bytes: &[u8]) -> Result<&[u8], RestoreError> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(RestoreError::NotASave {
            found: bytes[..bytes.len().min(MAGIC.len())].to_vec(),
        });
    }
    if bytes.len() < HEADER_BYTES {
        return Err(RestoreError::Truncated {
            expected: HEADER_BYTES as u64,
            found: bytes.len() as u64,
        });
    }
    let field = |at: usize, len: usize| &bytes[at..at + len];
    let version = u32::from_le_bytes(field(8, 4).try_into().expect("4 bytes"));
    if version != SAVE_FORMAT_VERSION {
        return Err(RestoreError::Version {
            found: version,
            supported: SAVE_FORMAT_VERSION,
        });
    }
    let expected = u64::from_le_bytes(field(12, 8).try_into().expect("8 bytes"));
    let stored = u32::from_le_bytes(field(20, 4).try_into().expect("4 bytes"));
    let payload = &bytes[HEADER_BYTES..];
    if payload.len() as u64 != expected {
        return Err(RestoreError::Truncated {
            expected,
            found: payload.len() as u64,
        });
    }
    let computed = crc32fast::hash(payload);
    if computed != stored {
        return Err(RestoreError::Checksum { stored, computed });
    }
    Ok(payload)
}

/// Refuses the first lane value outside its physical range ([`crate::geom::limits`]):
/// places beyond the world's coordinates, velocities beyond the speed limit, sizes and
/// limits not positive, NaN anywhere. Checksums say the bytes are the ones written, not
/// that the writer was sane: a save edited by hand, or written by a crowd fed NaN before
/// the crowd refused it, must not reach the passes.
pub(super) fn check_lane_values(input: &Reader, lanes: &AgentLanes) -> Result<(), RestoreError> {
    use crate::geom::limits::{
        ACCELERATION_MAX_MPS2, BODY_SIZE_MAX_M, COORDINATE_MAX_M, SPEED_MAX_MPS,
    };
    // (lane, its values, the largest magnitude, whether it must be above zero)
    let checks: [(&str, &[f32], f32, bool); 29] = [
        ("position_x", &lanes.position_x, COORDINATE_MAX_M, false),
        ("position_y", &lanes.position_y, COORDINATE_MAX_M, false),
        ("position_z", &lanes.position_z, COORDINATE_MAX_M, false),
        ("goal_x", &lanes.goal_x, COORDINATE_MAX_M, false),
        ("goal_y", &lanes.goal_y, COORDINATE_MAX_M, false),
        ("goal_z", &lanes.goal_z, COORDINATE_MAX_M, false),
        ("corner_x", &lanes.corner_x, COORDINATE_MAX_M, false),
        ("corner_z", &lanes.corner_z, COORDINATE_MAX_M, false),
        ("slow_x", &lanes.slow_x, COORDINATE_MAX_M, false),
        ("slow_z", &lanes.slow_z, COORDINATE_MAX_M, false),
        ("anchor_x", &lanes.anchor_x, COORDINATE_MAX_M, false),
        ("anchor_z", &lanes.anchor_z, COORDINATE_MAX_M, false),
        ("velocity_x", &lanes.velocity_x, SPEED_MAX_MPS, false),
        ("velocity_z", &lanes.velocity_z, SPEED_MAX_MPS, false),
        ("average_x", &lanes.average_x, SPEED_MAX_MPS, false),
        ("average_z", &lanes.average_z, SPEED_MAX_MPS, false),
        ("desired_x", &lanes.desired_x, SPEED_MAX_MPS, false),
        ("desired_z", &lanes.desired_z, SPEED_MAX_MPS, false),
        ("radius", &lanes.radius, BODY_SIZE_MAX_M, true),
        ("max_speed", &lanes.max_speed, SPEED_MAX_MPS, true),
        (
            "preferred_speed",
            &lanes.preferred_speed,
            SPEED_MAX_MPS,
            true,
        ),
        ("speed_limit", &lanes.speed_limit, SPEED_MAX_MPS, false),
        (
            "max_acceleration",
            &lanes.max_acceleration,
            ACCELERATION_MAX_MPS2,
            true,
        ),
        (
            "acceleration_limit",
            &lanes.acceleration_limit,
            ACCELERATION_MAX_MPS2,
            false,
        ),
        ("gradient_x", &lanes.gradient_x, 1.0e3, false),
        ("gradient_z", &lanes.gradient_z, 1.0e3, false),
        ("stalled_s", &lanes.stalled_s, f32::MAX, false),
        ("unprogressed_s", &lanes.unprogressed_s, f32::MAX, false),
        ("progress_m", &lanes.progress_m, f32::MAX, false),
    ];
    for (lane, values, limit, positive) in checks {
        if let Some((slot, &value)) = values.iter().enumerate().find(|&(_, &value)| {
            !(value.is_finite() && value.abs() <= limit && (!positive || value > 0.0))
        }) {
            return Err(input.malformed(format!(
                "slot {slot}: {lane} {value} is outside its range (at most {limit:e}{})",
                if positive { ", above 0" } else { "" }
            )));
        }
    }
    // Distances along the corridor and the slow-down speed may be infinite (no corner,
    // no slow-down ahead), never NaN or negative.
    for (lane, values) in [
        ("stop_distance", &lanes.stop_distance),
        ("corner_after_m", &lanes.corner_after_m),
        ("slow_speed", &lanes.slow_speed),
    ] {
        if let Some((slot, &value)) = values
            .iter()
            .enumerate()
            .find(|&(_, &value)| !(value >= 0.0))
        {
            return Err(input.malformed(format!("slot {slot}: {lane} {value} is NaN or negative")));
        }
    }
    Ok(())
}

/// The agents' corridors and the cache's, each once.
pub(super) type CorridorTable<'a> = SharedTable<'a, Corridor>;

/// What refusing a configuration or its memory means for a restore.
pub(super) fn refused(error: CrowdError) -> RestoreError {
    match error {
        CrowdError::BadConfig { field, value } => RestoreError::BadConfig { field, value },
        CrowdError::OutOfMemory { agents } => RestoreError::OutOfMemory { agents },
        other => RestoreError::Malformed {
            section: "configuration",
            offset: 0,
            detail: other.to_string(),
        },
    }
}
