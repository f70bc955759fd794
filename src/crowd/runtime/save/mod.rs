//! Saving a crowd to bytes and restoring it (spec 001: a saved game restores into the same
//! identities, owners and deadlines).
//!
//! Stage: crowd runtime, between steps. Input of [`Crowd::save`]: the crowd. Output: a byte
//! vector in the format below. Input of [`Crowd::restore`]: the mesh the crowd ran on (in
//! the state it had at the save), the crowd's configuration, and those bytes. Output: a
//! crowd that steps on exactly as the saved one would have, or a [`RestoreError`] naming
//! what is wrong.
//!
//! # What is saved
//! Everything a later step reads: every lane of every agent in slot order; the identity
//! table (each index's generation and the free list, so the ids issued after a restore are
//! the ones the uninterrupted game would have issued); each agent's parameters, move
//! order (order and query identities), cancel record, velocity order and link crossing;
//! the path queue in order and each open search as its job and the nodes it had expanded;
//! the corridor cache; every corridor once, with its polygons, links and read set, shared
//! again on restore by whoever shared it; the filter and avoidance-profile tables; the
//! frame counter, epoch, next logical id and the ordered log's frontier; events raised between steps and not yet
//! reported; the neighbour grid's cell sizing. The crowd keeps no random state.
//!
//! Not saved, because nothing reads it before writing it: per-step buffers, the portal
//! windows (a cache of portals a corridor gives again), the neighbour grid's per-agent
//! hints (they change how long a query takes, never its answer), the last step's timings.
//! The configuration is not saved either: it is the game's code, passed to `restore` as to
//! [`Crowd::new`], so a game that retunes its crowd in a patch restores old saves under
//! the new tuning (the run then continues under that tuning, not bit for bit as before).
//!
//! # Restoring
//! The mesh must be in the state the crowd last saw: every tile slot at the generation it
//! had, every link at its version. Anything else is refused naming the first tile (with
//! both generations) or link (with both versions) that differs, rather than restoring
//! agents onto polygons that may no longer exist. Open searches are started again from
//! their requests and run as far as they had run, which puts them in the same state (see
//! [`PathSearch::nodes_expanded`](crate::query::PathSearch::nodes_expanded)); nothing
//! depends on addresses or snapshot pointers. The restored crowd runs under a new epoch:
//! every query still waiting for its result becomes the next attempt of its logical
//! request in that epoch (spec 001, h5), keeping its place in the queue, so a result of
//! the old epoch can never be adopted; move orders keep their identities.
//!
//! # Format (version 5)
//! Little-endian, no padding. A 24-byte header: the magic `WMCROWD\0`, the format version
//! (`u32`), the payload's length (`u64`) and its CRC-32 (`u32`, IEEE). Then the payload,
//! in sections each opening with a four-byte tag: `MESH` (the tile generations and link
//! versions of the crowd's snapshot), `CRWD` (the agent count, counters, tables, pending
//! orders and events, the supports' surface velocities), `IDS ` (the identity table), `AGTS` (the byte length of the next
//! five sections, a fixed-width `u64`), `LANE` (each lane but the corridor lane as a
//! column, in the order `lanes.rs` lists them; a few against a lane before them), `AGNT`
//! (parameters and orders as columns, `components.rs`), `PLCS` (the corridor lane: each
//! agent's corridor by its place in the table, a column), `SCHD` (its length, the path
//! queue, the open searches), `CACH` (the corridor cache by key), and last `CORR` (the
//! corridor table, in parts of 1,024 corridors, each part's length first). Columns are
//! described in `column.rs`; other integers are LEB128, counts included; enums a tag byte
//! and their fields; corridors are named by their place in the table.
//!
//! # Cost
//! Saving runs two sides at once (rayon): one writes every section that holds no corridor
//! straight into the caller's buffer, the other gathers the corridor table, writes the
//! sections that name corridors, then the table in parts (corridors prefetched a few
//! ahead), the first side taking parts once it is done. That is why the corridor lane has
//! a section of its own after the others. The second side's bytes are then moved in behind
//! the first's on both cores: into memory the process never used, the system's mapping of
//! each page first written is most of that copy's cost. Restoring maps the per-step buffers' pages while
//! it reads, builds the corridors while it reads the lanes and the agents' records (the
//! lanes name corridors by place, resolved after), and runs the open searches again while
//! it reads the cache. `cargo bench --bench save` measures both on 10,000 walking agents.

pub(crate) mod components;
mod sections;

use sections::{
    Checksummed, CorridorTable, PlainSections, append_in_parallel, build_corridors,
    check_lane_values, check_mesh, checked_payload, checksum_of, corridor_parts, corridor_parts_of,
    read_lanes, refused, write_mesh,
};

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use crate::crowd::codec::{MAGIC, Reader, RestoreError, Saved, Writer};

use crate::crowd::agents::RequestId;
use crate::crowd::agents::{AgentIds, TABLE_ENTRIES_MAX};
use crate::crowd::avoidance::velocities::AvoidanceProfile;
use crate::crowd::components::MoveRequest;
use crate::crowd::config::CrowdConfig;
use crate::crowd::lanes::{AgentLanes, every_lane};
use crate::crowd::paths::corridor::{Corridor, CorridorKey, KeyHasher};
use crate::crowd::runtime::{Crowd, map_step_buffers};
use crate::crowd::walking::passes::PortalWindow;
use crate::mesh::{LinkId, NavMesh};
use crate::query::QueryFilter;

/// The format this build writes and reads.
pub(crate) const SAVE_FORMAT_VERSION: u32 = 8;

/// Bytes of the header: magic, version, payload length, checksum.
pub(super) const HEADER_BYTES: usize = 8 + 4 + 8 + 4;

impl Crowd {
    /// The whole crowd as bytes (see the module doc for what is kept and the format).
    /// Between steps; the crowd is unchanged.
    pub fn save(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        self.save_into(&mut bytes);
        bytes
    }

    /// [`Crowd::save`] into `bytes` (emptied first), so a game that saves often reuses one
    /// buffer instead of mapping fresh memory for each save.
    pub fn save_into(&self, bytes: &mut Vec<u8>) {
        let mut buffer = std::mem::take(bytes);
        buffer.clear();
        // A little over what walking agents take, so the buffer grows rarely if ever.
        buffer.reserve(HEADER_BYTES + 256 * self.lanes.len());
        buffer.extend_from_slice(&[0; HEADER_BYTES]);
        // Two sides at once. One gathers the corridor table (every corridor once: the
        // agents' in slot order, then the cache's by key, so the same crowd writes the
        // same bytes), writes the sections that name corridors by their place in it, then
        // the table itself in parts; the other writes, straight into the buffer, every
        // section that holds no corridor. Whichever finishes first takes parts of the
        // table from the other (rayon steals them): reading corridors mostly waits for
        // their memory, the columns stream through theirs. Each side checksums its bytes.
        let ((table, named, parts), plain) = rayon::join(
            || {
                let cached = self.cache.sorted_entries();
                let mut table = CorridorTable::of_lanes(&self.lanes.corridor, cached.len());
                table.add_cached(cached.iter().map(|(_, corridor)| *corridor));
                let mut named = Writer::new(&table.places);
                self.write_named_sections(&mut named, &table, &cached);
                let named = Checksummed::of(named.bytes);
                let parts = corridor_parts(&table);
                (table, named, parts)
            },
            || self.write_plain_sections(buffer),
        );
        let PlainSections {
            bytes: mut buffer,
            agents_length_at,
            checksum_before_length,
            mut checksum,
        } = plain;
        checksum.combine(&named.checksum);
        // The agents' block ends after the named sections: its length goes before it, a
        // fixed eight bytes the plain side's checksum left out (it comes in where they
        // are, below).
        let agents_length = (buffer.len() + named.bytes.len() - agents_length_at - 8) as u64;
        buffer[agents_length_at..agents_length_at + 8]
            .copy_from_slice(&agents_length.to_le_bytes());
        // The table's head and each part's length, small, written here; the rest is
        // moved in below.
        let mut heads = Writer::new(&table.places);
        heads.tag(b"CORR");
        heads.len(table.values.len());
        let mut head_ends = vec![heads.bytes.len()];
        for part in &parts {
            heads.len(part.bytes.len());
            head_ends.push(heads.bytes.len());
        }
        let heads = heads.bytes;
        let mut table_checksum = checksum_of(&heads[..head_ends[0]]);
        let mut pieces: Vec<&[u8]> = vec![&named.bytes, &heads[..head_ends[0]]];
        for (part, lengths) in parts.iter().zip(head_ends.windows(2)) {
            let length = &heads[lengths[0]..lengths[1]];
            table_checksum.update(length);
            table_checksum.combine(&part.checksum);
            pieces.extend([length, &part.bytes[..]]);
        }
        append_in_parallel(&mut buffer, &pieces);
        // The whole payload's checksum: up to the length, the length, the rest.
        let mut payload_checksum = checksum_before_length;
        payload_checksum.combine(&checksum_of(
            &buffer[agents_length_at..agents_length_at + 8],
        ));
        payload_checksum.combine(&checksum);
        payload_checksum.combine(&table_checksum);
        let payload_bytes = (buffer.len() - HEADER_BYTES) as u64;
        let header = buffer
            .first_chunk_mut::<HEADER_BYTES>()
            .expect("the header was written");
        header[..8].copy_from_slice(&MAGIC);
        header[8..12].copy_from_slice(&SAVE_FORMAT_VERSION.to_le_bytes());
        header[12..20].copy_from_slice(&payload_bytes.to_le_bytes());
        header[20..24].copy_from_slice(&payload_checksum.finalize().to_le_bytes());
        *bytes = buffer;
    }

    /// The crowd `bytes` hold, on `mesh` (in the state the saved crowd last saw) under
    /// `config`, resumed under a new epoch. Refused, naming the first thing wrong, if the
    /// bytes are not a whole, unchanged save of this format, or the mesh changed since (see
    /// the module doc).
    pub fn restore(
        mesh: &NavMesh,
        config: CrowdConfig,
        bytes: &[u8],
    ) -> Result<Crowd, RestoreError> {
        let mut crowd = Crowd::restore_for_replay(mesh, config, bytes)?;
        crowd.start_new_epoch();
        Ok(crowd)
    }

    /// The crowd `bytes` hold exactly as it was saved, in the saved epoch: the state a
    /// [`Replay`](super::replay::Replay) of the log the saved crowd went on to write starts
    /// from (that log's first entry is the restored [`Crowd::log_frontier`]). Not for
    /// resuming a game: results of searches under way at the save would still match their
    /// queries, which [`Crowd::restore`]'s new epoch forbids. Refused as `restore` refuses.
    pub fn restore_for_replay(
        mesh: &NavMesh,
        config: CrowdConfig,
        bytes: &[u8],
    ) -> Result<Crowd, RestoreError> {
        let payload = checked_payload(bytes)?;
        let mut crowd = Crowd::new(mesh, config).map_err(refused)?;
        let mut input = Reader::new(payload);
        input.section("mesh", b"MESH")?;
        check_mesh(&mut input, &crowd.snapshot)?;
        crowd.read_payload(&mut input)?;
        if !input.is_at_end() {
            return Err(input.malformed("bytes after the last section"));
        }
        Ok(crowd)
    }

    /// The sections before the agents' block: `MESH`, `CRWD`, `IDS `.
    fn write_head(&self, out: &mut Writer) {
        out.tag(b"MESH");
        write_mesh(out, &self.snapshot);

        out.tag(b"CRWD");
        out.len(self.lanes.len());
        out.u64(self.frame);
        out.u32(self.epoch);
        out.u64(self.next_logical);
        out.u64(self.log.frontier);
        self.filters.write(out);
        self.profiles.write(out);
        self.pending.write(out);
        self.deferred_events.write(out);
        self.neighbour_grid.cell_sizing().write(out);
        self.support_motions.write(out);
        self.link_windows.write(out);
        self.platforms.write(out);
        self.link_docks.write(out);
        out.f32(self.last_dt_s);

        out.tag(b"IDS ");
        let (generation, free) = self.ids.parts();
        out.len(generation.len());
        out.elements(generation);
        out.len(free.len());
        out.elements(free);
    }

    /// The sections that hold no corridor, written into `buffer` (after its header) while
    /// the corridor table is gathered: `MESH`, `CRWD`, `IDS `, the `AGTS` tag and room for
    /// its length, `LANE`, `AGNT`.
    fn write_plain_sections(&self, buffer: Vec<u8>) -> PlainSections {
        let mut out = Writer::without_corridors(buffer);
        self.write_head(&mut out);
        out.tag(b"AGTS");
        let agents_length_at = out.bytes.len();
        let checksum_before_length = checksum_of(&out.bytes[HEADER_BYTES..]);
        out.bytes.extend_from_slice(&[0; 8]);
        out.tag(b"LANE");
        self.write_lanes(&mut out);
        out.tag(b"AGNT");
        self.write_components(&mut out);
        let checksum = checksum_of(&out.bytes[agents_length_at + 8..]);
        PlainSections {
            bytes: out.bytes,
            agents_length_at,
            checksum_before_length,
            checksum,
        }
    }

    /// Every lane but the corridor lane (which names corridors: it is `PLCS`) as a column,
    /// in the order `lanes.rs` lists them.
    fn write_lanes(&self, out: &mut Writer) {
        let lanes = &self.lanes;
        // A lane that usually equals one written before it is written against that one
        // (`column.rs`): most agents' preferred velocity is the velocity they got, most
        // progress anchors are where the agent is, most cursors' polygons the agent's.
        macro_rules! write_lane {
            (corridor) => {};
            (desired_x) => {
                out.column_against(&lanes.desired_x, &lanes.velocity_x)
            };
            (desired_z) => {
                out.column_against(&lanes.desired_z, &lanes.velocity_z)
            };
            (anchor_x) => {
                out.column_against(&lanes.anchor_x, &lanes.position_x)
            };
            (anchor_z) => {
                out.column_against(&lanes.anchor_z, &lanes.position_z)
            };
            (cursor_polygon) => {
                out.column_against(&lanes.cursor_polygon, &lanes.polygon)
            };
            ($lane:ident) => {
                out.column(&lanes.$lane)
            };
        }
        macro_rules! write_lanes {
            ($($lane:ident),* $(,)?) => {
                $(write_lane!($lane);)*
            };
        }
        every_lane!(write_lanes);
    }

    /// The sections of the agents' block that name corridors by their place in `table`:
    /// `PLCS` (each agent's corridor), `SCHD` (its length first, so a restore reads the
    /// cache beside it), `CACH`.
    fn write_named_sections(
        &self,
        out: &mut Writer,
        table: &CorridorTable,
        cached: &[(CorridorKey, &Arc<Corridor>)],
    ) {
        out.tag(b"PLCS");
        out.shared_column();

        out.tag(b"SCHD");
        let mut scheduler = Writer::new(&table.places);
        self.scheduler.write_state(&mut scheduler);
        out.len(scheduler.bytes.len());
        out.bytes.extend_from_slice(&scheduler.bytes);

        out.tag(b"CACH");
        self.cache
            .write_state(out, cached, &table.places.cache_places);
    }

    fn read_payload(&mut self, input: &mut Reader) -> Result<(), RestoreError> {
        input.section("crowd", b"CRWD")?;
        // Each agent holds an index of the identity table, itself at least a byte an
        // index: a count beyond the bytes left is refused before anything is sized for it.
        let agents = input.len(1)?;
        self.frame = input.u64()?;
        self.epoch = input.u32()?;
        self.next_logical = input.u64()?;
        self.log.frontier = input.u64()?;
        let filters: Vec<QueryFilter> = Saved::read(input)?;
        let profiles: Vec<AvoidanceProfile> = Saved::read(input)?;
        for (table, len) in [("filter", filters.len()), ("profile", profiles.len())] {
            if !(1..=TABLE_ENTRIES_MAX).contains(&len) {
                return Err(input.malformed(format!(
                    "a {table} table of {len} entries (1 to {TABLE_ENTRIES_MAX})"
                )));
            }
        }
        self.filters = filters;
        self.profiles = profiles;
        self.pending = Saved::read(input)?;
        self.deferred_events = Saved::read(input)?;
        self.neighbour_grid.set_cell_sizing(Saved::read(input)?);
        let support_motions: Vec<crate::crowd::supports::support::SupportMotion> =
            Saved::read(input)?;
        if support_motions.len() > usize::from(u16::MAX) + 1
            || support_motions.iter().any(|motion| !motion.in_range())
        {
            return Err(input.malformed(format!(
                "a table of {} support motions, or one out of range (not finite, or past \
                 the speed, turn or coordinate limits)",
                support_motions.len()
            )));
        }
        self.support_motions = support_motions;
        let link_windows: Vec<(LinkId, crate::crowd::supports::connection::ConnectionWindow)> =
            Saved::read(input)?;
        if let Some(pair) = link_windows.windows(2).find(|pair| pair[0].0 >= pair[1].0) {
            return Err(input.malformed(format!(
                "link windows out of order: {:?} before {:?}",
                pair[0].0, pair[1].0
            )));
        }
        if let Some((link, window, problem)) = link_windows
            .iter()
            .find_map(|&(link, window)| window.problem().map(|problem| (link, window, problem)))
        {
            return Err(input.malformed(format!(
                "connection window {window:?} of {link:?}: {problem}"
            )));
        }
        self.link_windows = link_windows;
        let platforms: Vec<crate::crowd::supports::platform::Platform> = Saved::read(input)?;
        if let Some(pair) = platforms
            .windows(2)
            .find(|pair| pair[0].layer >= pair[1].layer)
        {
            return Err(input.malformed(format!(
                "platforms out of order: layer {} before {}",
                pair[0].layer, pair[1].layer
            )));
        }
        if let Some((platform, problem)) = platforms
            .iter()
            .find_map(|platform| platform.motion.problem().map(|problem| (platform, problem)))
        {
            return Err(input.malformed(format!(
                "platform motion {:?} of layer {}: {problem}",
                platform.motion, platform.layer
            )));
        }
        self.platforms = platforms;
        let link_docks: Vec<(LinkId, crate::crowd::supports::platform::LinkDock)> =
            Saved::read(input)?;
        if let Some(pair) = link_docks.windows(2).find(|pair| pair[0].0 >= pair[1].0) {
            return Err(input.malformed(format!(
                "link docks out of order: {:?} before {:?}",
                pair[0].0, pair[1].0
            )));
        }
        if let Some((link, dock, problem)) = link_docks
            .iter()
            .find_map(|&(link, dock)| dock.problem().map(|problem| (link, dock, problem)))
        {
            return Err(input.malformed(format!("dock {dock:?} of {link:?}: {problem}")));
        }
        self.link_docks = link_docks;
        let last_dt_s = input.f32()?;
        if !super::step::STEP_RANGE_S.contains(&last_dt_s) {
            return Err(input.malformed(format!("last step length {last_dt_s} s")));
        }
        self.last_dt_s = last_dt_s;

        // The per-step buffers are sized for the crowd, their pages mapped as `reserve`
        // maps them (so the first step does not fault them in), while the rest is read:
        // mapping waits on the system, reading on memory, and neither needs the other.
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut grid = std::mem::take(&mut self.neighbour_grid);
        let avoidance = self.config.avoidance;
        let (read, mapped) = rayon::join(
            || self.read_agents(input, agents),
            || map_step_buffers(&mut scratch, &mut grid, &avoidance, agents),
        );
        self.scratch = scratch;
        self.neighbour_grid = grid;
        // What is wrong with the bytes comes first; then whether the memory was there.
        read?;
        mapped.map_err(|_| RestoreError::OutOfMemory { agents })
    }

    /// The sections after `CRWD`, for a crowd of `count` agents: the identity table, the
    /// agents' block and the corridor table.
    fn read_agents(&mut self, input: &mut Reader, count: usize) -> Result<(), RestoreError> {
        input.section("ids", b"IDS ")?;
        let generation: Vec<u32> = Saved::read(input)?;
        let free: Vec<u32> = Saved::read(input)?;
        self.ids = AgentIds::from_parts(generation, free).ok_or_else(|| {
            input.malformed("a generation 0, or a free index out of range or twice")
        })?;

        input.section("agents", b"AGTS")?;
        let length = usize::try_from(input.u64_fixed()?).unwrap_or(usize::MAX);
        let offset = input.offset();
        let mut agents = Reader::part(input.raw_bytes(length)?, offset, "agents");
        input.section("corridors", b"CORR")?;
        let corridor_parts = corridor_parts_of(input)?;
        // The corridors are built (in parallel parts) while the lanes and the agents'
        // records are read: the lanes name their corridors by place, resolved after.
        let (corridors, lanes) = rayon::join(
            || build_corridors(corridor_parts),
            || -> Result<(AgentLanes, Vec<u32>), RestoreError> {
                agents.section("lanes", b"LANE")?;
                let lanes = read_lanes(&mut agents, count)?;
                agents.section("agents", b"AGNT")?;
                self.read_components(&mut agents, &lanes)?;
                agents.section("corridor places", b"PLCS")?;
                let places = agents.shared_places(count)?;
                Ok((lanes, places))
            },
        );
        agents.set_shared(corridors?);
        let (mut lanes, corridor_places) = lanes?;
        lanes.corridor = agents.shared_at(&corridor_places)?;
        self.check_lanes(&agents, &lanes)?;
        if !self.ids.free_are_dead() {
            return Err(agents.malformed("an agent on a free index"));
        }
        self.portal_windows = vec![PortalWindow::EMPTY; lanes.len()];
        self.lanes = lanes;
        // The path queue and the cache sized for the crowd, as `reserve` sizes them for
        // agents about to be added (before either is filled, so neither grows as it is
        // read); the per-step buffers are mapped beside the reading.
        self.reserve_tables().map_err(refused)?;

        // The open searches run again as far as they had run while the cache is read.
        agents.section("scheduler", b"SCHD")?;
        let len = agents.len(1)?;
        let offset = agents.offset();
        let mut scheduler = Reader::part(agents.raw_bytes(len)?, offset, "scheduler");
        agents.section("cache", b"CACH")?;
        let (scheduler_read, cache_read) = rayon::join(
            || -> Result<(), RestoreError> {
                self.scheduler
                    .read_state(&mut scheduler, &self.snapshot, &self.filters)?;
                if !scheduler.is_at_end() {
                    return Err(scheduler.malformed("bytes after the path queue"));
                }
                Ok(())
            },
            || -> Result<(), RestoreError> {
                self.cache.read_state(&mut agents)?;
                if !agents.is_at_end() {
                    return Err(agents.malformed("bytes after the cache"));
                }
                Ok(())
            },
        );
        scheduler_read.and(cache_read)
    }

    /// Refuses lanes whose values would send a pass out of range: a corridor cursor past
    /// its corridor, a filter or profile not in the tables, a number outside its physical
    /// range ([`check_lane_values`]).
    fn check_lanes(&self, input: &Reader, lanes: &AgentLanes) -> Result<(), RestoreError> {
        check_lane_values(input, lanes)?;
        for slot in 0..lanes.len() {
            if let Some(corridor) = &lanes.corridor[slot] {
                if lanes.cursor[slot] as usize >= corridor.len() {
                    return Err(input.malformed(format!(
                        "slot {slot}: cursor {} on a corridor of {} polygons",
                        lanes.cursor[slot],
                        corridor.len()
                    )));
                }
            }
            let filter = lanes.filter[slot].index();
            let profile = lanes.profile[slot].index();
            if filter >= self.filters.len() || profile >= self.profiles.len() {
                return Err(input.malformed(format!(
                    "slot {slot}: filter {filter} of {}, profile {profile} of {}",
                    self.filters.len(),
                    self.profiles.len()
                )));
            }
        }
        Ok(())
    }

    /// Enters a new epoch after a restore: every query still waiting for its result
    /// becomes the next attempt of its logical request in the new epoch, in its place in
    /// the queue (an open search keeps its progress), so no result of the old epoch can
    /// be adopted.
    fn start_new_epoch(&mut self) {
        self.epoch += 1;
        let epoch = self.epoch;
        // (Thousands of queries wait in a large crowd's queue: the cache's hasher, not
        // the standard one, and room for all of them.)
        let mut renamed: HashMap<RequestId, RequestId, BuildHasherDefault<KeyHasher>> =
            HashMap::with_capacity_and_hasher(self.scheduler.depth(), Default::default());
        for request in self.world.query_mut::<&mut MoveRequest>() {
            if request.awaiting {
                let old = request.query;
                request.query = RequestId {
                    attempt: old.attempt + 1,
                    epoch,
                    ..old
                };
                renamed.insert(old, request.query);
            }
        }
        self.scheduler
            .relabel(|job| renamed.get(&job.request).copied());
    }
}

#[cfg(test)]
mod tests {
    use super::append_in_parallel;

    #[test]
    fn pieces_appended_in_parallel_follow_the_bytes_in_order() {
        // Empty pieces, pieces of a chunk and more, into a vector already holding some.
        let pieces: Vec<Vec<u8>> = [0usize, 5, 65_536, 0, 200_003, 1]
            .iter()
            .enumerate()
            .map(|(index, &length)| (0..length).map(|at| (at * 7 + index) as u8).collect())
            .collect();
        let mut bytes = vec![9u8, 8, 7];
        let borrowed: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
        append_in_parallel(&mut bytes, &borrowed);
        let expected: Vec<u8> = [vec![9u8, 8, 7]]
            .into_iter()
            .chain(pieces)
            .flatten()
            .collect();
        assert_eq!(bytes.len(), 3 + 5 + 65_536 + 200_003 + 1);
        assert!(
            bytes == expected,
            "the bytes differ from the pieces in order"
        );
    }
}
