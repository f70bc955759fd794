//! Corridors: the polygons of a found path and the off-mesh links it crosses,
//! immutable and shared, and the cache that hands one corridor to every agent asking for
//! the same start and goal polygons under the same filter.
//!
//! A corridor that crosses a link is walked in pieces: the follow pass treats the link's
//! entry as a stop point, the crowd carries the agent over the link, and walking resumes in
//! the polygon after it. No cursor search looks across a link: the polygons beyond it are
//! reachable only by crossing.
//!
//! A corridor keeps no portal points: the follow pass asks the mesh, which already holds
//! every edge, for the portals ahead of an agent ([`Corridor::portals_into`]), and each
//! agent keeps its last window's portals so that it asks only for new ones
//! ([`PortalWindow`](crate::crowd::walking::passes::PortalWindow)). Portals would be three fifths of a
//! corridor's memory (two points per polygon crossed against one 8-byte reference), and
//! with 100,000 agents walking paths of a hundred polygons across a city that is the
//! difference between fitting in 300 MB and not. While the corridor is
//! valid (every tile its search read is unchanged) a portal asked for is the one its search
//! crossed, to the bit. For the same reason a corridor keeps each polygon as its tile slot
//! and index without the tile's generation (4 bytes, not 8): every tile the path crosses is
//! in the corridor's read set, so while the corridor is valid the generation is the tile's
//! live one, which [`Corridor::polygon`] reads back from the snapshot. And what the search
//! read is kept as [`CorridorReads`]: the slots read and the newest generation seen, which
//! proves exactly what the search's full read set would (tile generations only grow, see
//! the mesh module), in a quarter of the bytes.

use std::sync::Arc;

use glam::Vec3;

use crate::crowd::codec::RestoreError;
use crate::crowd::codec::{Reader, Saved, Writer, saved_struct};
use crate::ids::{CostVersion, FilterVersion};
use crate::mesh::{
    LinkId, LinkVersion, PolyRef, RuntimeTile, SlotState, Snapshot, TileGeneration, TileSlot,
};
use crate::query::{PathResult, QueryFilter, ReadSet, Validity, portal, portal_in};

/// Most polygons a corridor holds: 65,536. A search's path is shorter than its node pool
/// ([`NODE_POOL_DEFAULT`](crate::query::NODE_POOL_DEFAULT) in the crowd); a corridor grows
/// only by reconnection, which prefixes a short path, and a reconnection past the limit is
/// refused (the agent re-plans instead). A saved corridor past it is refused on restore
/// before its polygons are read.
pub const CORRIDOR_POLYGONS_MAX: usize = 1 << 16;

/// A path's polygons and the off-mesh links it crosses.
#[derive(Debug, PartialEq)]
pub struct Corridor {
    /// Polygons from start to end, each as its slot and index ([`PolyRef::tile_bits`]).
    polygons: Vec<u32>,
    /// The off-mesh links the path crosses, in path order.
    pub links: Vec<CorridorLink>,
    /// Whether the last polygon holds the goal (false: partial, the goal is unreachable).
    pub complete: bool,
    /// What the search read.
    pub(crate) reads: CorridorReads,
}

impl Corridor {
    /// What the corridor's search read, for the crate's white-box tests.
    #[cfg(feature = "harness")]
    #[doc(hidden)]
    pub fn reads(&self) -> &CorridorReads {
        &self.reads
    }

    /// Builds the corridor of a search result; `None` if a portal or a link the path
    /// crosses no longer exists (the mesh changed between the search and now).
    pub fn from_path(snapshot: &Snapshot, result: &PathResult) -> Option<Corridor> {
        if result.steps.is_empty() || result.steps.len() > CORRIDOR_POLYGONS_MAX {
            return None;
        }
        let polygons: Vec<u32> = result
            .steps
            .iter()
            .map(|step| step.polygon.tile_bits())
            .collect();
        let mut links = Vec::new();
        for (index, pair) in result.steps.windows(2).enumerate() {
            let (from, to) = (pair[0].polygon, pair[1].polygon);
            match pair[1].via_link {
                None => {
                    portal(snapshot, from, to)?;
                }
                Some(id) => {
                    let link = snapshot.link(id)?;
                    let (entry, exit) = if link.start_polygon == Some(from) {
                        (link.desc.start, link.desc.end)
                    } else if link.desc.bidirectional && link.end_polygon == Some(from) {
                        (link.desc.end, link.desc.start)
                    } else {
                        return None;
                    };
                    links.push(CorridorLink {
                        index: index as u32 + 1,
                        link: id,
                        entry,
                        exit,
                    });
                }
            }
        }
        Some(Corridor {
            polygons,
            links,
            complete: result.complete,
            reads: CorridorReads::new(&result.read_set),
        })
    }

    /// This corridor joined from where an agent was pushed off it: `path` (a
    /// [`reconnect`](crate::query::reconnect) result, ending on polygon `join` of this
    /// corridor, which lies in the walkable piece the agent was on) and then this
    /// corridor from `join` on. Links behind `join` are dropped, those after it renumbered;
    /// the reads are both reads together (see `CorridorReads::joined`: the caller has
    /// checked this corridor still valid). Keeps whether the corridor reaches its goal.
    /// `None` if the joined corridor would be longer than 65,536 polygons.
    pub fn reconnected(&self, path: &PathResult, join: usize) -> Option<Corridor> {
        let prefix = path.steps.len().checked_sub(1)?;
        if prefix + self.polygons.len().saturating_sub(join) > CORRIDOR_POLYGONS_MAX {
            return None;
        }
        let mut polygons = Vec::with_capacity(prefix + self.polygons.len() - join);
        polygons.extend(
            path.steps[..prefix]
                .iter()
                .map(|step| step.polygon.tile_bits()),
        );
        polygons.extend_from_slice(&self.polygons[join..]);
        let links = self
            .links
            .iter()
            .filter(|link| link.index as usize > join)
            .map(|link| CorridorLink {
                index: link.index - join as u32 + prefix as u32,
                ..*link
            })
            .collect();
        Some(Corridor {
            polygons,
            links,
            complete: self.complete,
            reads: self.reads.joined(&path.read_set),
        })
    }

    /// What this corridor holds in memory, by part (capacities times element sizes, plus
    /// the struct itself).
    pub fn memory(&self) -> CorridorMemory {
        CorridorMemory {
            corridors: 1,
            polygon_bytes: self.polygons.capacity() * size_of::<u32>(),
            read_set_bytes: self.reads.heap_bytes(),
            other_bytes: size_of::<Corridor>() + self.links.capacity() * size_of::<CorridorLink>(),
        }
    }

    /// A corridor of `polygons` (from start to end, at least one, all on live tiles of the
    /// snapshot they are used with) and the links between them, depending on what
    /// `read_set` says was read; for hosts and tests that build corridors themselves.
    pub fn new(
        polygons: &[PolyRef],
        links: Vec<CorridorLink>,
        complete: bool,
        read_set: &ReadSet,
    ) -> Option<Corridor> {
        if polygons.is_empty() {
            return None;
        }
        Some(Corridor {
            polygons: polygons.iter().map(|polygon| polygon.tile_bits()).collect(),
            links,
            complete,
            reads: CorridorReads::new(read_set),
        })
    }

    /// Where its polygon and read-slot lists lie in memory (start address and length in
    /// bytes), for a caller about to read many corridors to prefetch them (the save does).
    pub(crate) fn list_memory(&self) -> [(*const u8, usize); 2] {
        [
            (
                self.polygons.as_ptr().cast(),
                size_of_val(self.polygons.as_slice()),
            ),
            (
                self.reads.slots.as_ptr().cast(),
                size_of_val(&*self.reads.slots),
            ),
        ]
    }

    /// Number of polygons (at least one).
    pub fn len(&self) -> usize {
        self.polygons.len()
    }

    /// Never: a corridor holds at least its start polygon (clippy asks for this beside
    /// [`Corridor::len`]).
    pub fn is_empty(&self) -> bool {
        self.polygons.is_empty()
    }

    /// Polygon `index`, with its tile's generation in `snapshot`; `None` past the end or
    /// when the tile is gone (the corridor is stale then, and the crowd drops it).
    #[inline]
    pub fn polygon(&self, snapshot: &Snapshot, index: usize) -> Option<PolyRef> {
        let bits = *self.polygons.get(index)?;
        let slot = PolyRef::slot_of_tile_bits(bits);
        let (_, generation) = snapshot.live_slot(slot)?;
        PolyRef::from_tile_bits(generation, bits)
    }

    /// The last polygon (where the goal is, or as near as the path got).
    pub fn last_polygon(&self, snapshot: &Snapshot) -> Option<PolyRef> {
        self.polygon(snapshot, self.polygons.len() - 1)
    }

    /// Whether `polygon` is on the corridor (compared by slot and index: the crowd keeps
    /// its agents' polygons on live tiles, as the corridor's are).
    pub fn contains(&self, polygon: PolyRef) -> bool {
        self.polygons.contains(&polygon.tile_bits())
    }

    /// The portal from polygon `index` into polygon `index + 1`, as (left, right) seen
    /// walking the corridor; where a link joins them, the link's entry twice (a portal of
    /// zero width). `None` past the end, or when the mesh no longer joins the two (a tile
    /// the corridor read was replaced: the crowd drops such corridors).
    #[inline]
    pub fn portal(&self, snapshot: &Snapshot, index: usize) -> Option<(Vec3, Vec3)> {
        let mut portal = None;
        self.portals_into(snapshot, index..index + 1, |edge| portal = Some(edge))?;
        portal
    }

    /// Hands `push` the portals out of polygons `range` in order (see [`Corridor::portal`]),
    /// looking each tile up once for a run of polygons in it; `None`, after the portals
    /// before it, at the first one the mesh no longer has or past the end.
    #[inline]
    pub fn portals_into(
        &self,
        snapshot: &Snapshot,
        range: std::ops::Range<usize>,
        mut push: impl FnMut((Vec3, Vec3)),
    ) -> Option<()> {
        if range.end >= self.polygons.len() {
            return None;
        }
        let mut links = self.links.iter().peekable();
        let mut tile: Option<(TileSlot, &Arc<RuntimeTile>, TileGeneration)> = None;
        for index in range {
            while links
                .next_if(|link| (link.index as usize) < index + 1)
                .is_some()
            {}
            if let Some(link) = links.peek().filter(|link| link.index as usize == index + 1) {
                push((link.entry, link.entry));
                continue;
            }
            let (from_bits, to_bits) = (self.polygons[index], self.polygons[index + 1]);
            let from_slot = PolyRef::slot_of_tile_bits(from_bits);
            let (_, from_tile, from_generation) = match tile {
                Some(kept) if kept.0 == from_slot => kept,
                _ => {
                    let (live, generation) = snapshot.live_slot(from_slot)?;
                    *tile.insert((from_slot, live, generation))
                }
            };
            let from = PolyRef::from_tile_bits(from_generation, from_bits)?;
            if usize::from(from.polygon()) >= from_tile.data.polygons.len() {
                return None;
            }
            let to_slot = PolyRef::slot_of_tile_bits(to_bits);
            if to_slot == from_slot {
                let to = PolyRef::from_tile_bits(from_generation, to_bits)?;
                push(portal_in(snapshot, from_tile, from, to, None)?);
            } else {
                // Into the next tile: it is the next portal's `from` tile as well.
                let (to_tile, to_generation) = snapshot.live_slot(to_slot)?;
                let to = PolyRef::from_tile_bits(to_generation, to_bits)?;
                push(portal_in(snapshot, from_tile, from, to, Some(to_tile))?);
                tile = Some((to_slot, to_tile, to_generation));
            }
        }
        Some(())
    }

    /// Polygons `range` as (corridor index, live tile, polygon index in the tile), each tile
    /// looked up once per run of polygons in it; ends early at the first polygon whose tile
    /// is gone (a stale corridor) or at the corridor's end.
    pub fn polygons_in_tiles<'a>(
        &'a self,
        snapshot: &'a Snapshot,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = (usize, &'a RuntimeTile, u16)> + 'a {
        let mut kept: Option<(TileSlot, &'a RuntimeTile)> = None;
        range.map_while(move |index| {
            let bits = *self.polygons.get(index)?;
            let slot = PolyRef::slot_of_tile_bits(bits);
            let tile = match kept {
                Some((kept_slot, tile)) if kept_slot == slot => tile,
                _ => {
                    let tile: &RuntimeTile = snapshot.live_slot(slot)?.0;
                    kept = Some((slot, tile));
                    tile
                }
            };
            Some((index, tile, (bits & 0xffff) as u16))
        })
    }

    /// The first link crossed after corridor polygon `cursor` (the agent reaches its entry
    /// in polygon `link.index - 1`).
    pub fn next_link(&self, cursor: usize) -> Option<&CorridorLink> {
        self.links.iter().find(|link| link.index as usize > cursor)
    }

    /// The stretch of the corridor walkable from polygon `cursor` without crossing a link:
    /// (first, last) polygon indices.
    pub fn walkable_piece(&self, cursor: usize) -> (usize, usize) {
        let first = self
            .links
            .iter()
            .rev()
            .find(|link| link.index as usize <= cursor)
            .map_or(0, |link| link.index as usize);
        let last = self
            .next_link(cursor)
            .map_or(self.polygons.len().saturating_sub(1), |link| {
                link.index as usize - 1
            });
        (first, last)
    }

    /// Index of `polygon` in the corridor within `back` polygons behind and `ahead`
    /// polygons ahead of `cursor`, preferring the furthest ahead; never across a link.
    pub fn find_near(
        &self,
        cursor: usize,
        polygon: PolyRef,
        back: usize,
        ahead: usize,
    ) -> Option<usize> {
        let (first, last) = self.walkable_piece(cursor);
        let last = (cursor + ahead).min(last);
        let bits = polygon.tile_bits();
        (cursor..=last)
            .rev()
            .find(|&i| self.polygons[i] == bits)
            .or_else(|| {
                (cursor.saturating_sub(back).max(first)..cursor)
                    .rev()
                    .find(|&i| self.polygons[i] == bits)
            })
    }
}

/// An off-mesh link on a corridor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CorridorLink {
    /// Index of the corridor polygon the link lands in (it starts in the one before).
    pub index: u32,
    /// The link.
    pub link: LinkId,
    /// Where the crossing starts (the link's start, or its end when crossed backwards).
    pub entry: Vec3,
    /// Where it lands.
    pub exit: Vec3,
}

/// A set of tile slots kept as 256 bits, slot `s` at bit `s % 256`: two sets that share no
/// bit share no slot (sets that share a bit may still share none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotBits([u64; 4]);

impl SlotBits {
    /// The set of `slots`.
    pub fn of(slots: impl IntoIterator<Item = TileSlot>) -> SlotBits {
        let mut bits = SlotBits::default();
        for slot in slots {
            bits.insert(slot);
        }
        bits
    }

    /// Adds a slot.
    pub fn insert(&mut self, slot: TileSlot) {
        let bit = usize::from(slot.0) % 256;
        self.0[bit / 64] |= 1 << (bit % 64);
    }

    /// Whether the two sets may share a slot.
    pub fn meets(&self, other: &SlotBits) -> bool {
        self.0.iter().zip(&other.0).any(|(a, b)| a & b != 0)
    }

    /// The slots whose tile changed from `before` to `after` (replaced, marked pending,
    /// emptied or new), as bits; `None` when a link changed too (links are not slots).
    pub fn changed_between(before: &Snapshot, after: &Snapshot) -> Option<SlotBits> {
        let (before, after) = (before.data(), after.data());
        let links_changed = before.links.len() != after.links.len()
            || before
                .links
                .iter()
                .zip(&after.links)
                .any(|(was, now)| was.id != now.id || was.version != now.version);
        if links_changed {
            return None;
        }
        let kind = |state: &SlotState| match state {
            SlotState::Empty => 0,
            SlotState::Live(_) => 1,
            SlotState::Pending => 2,
        };
        let mut changed = SlotBits::default();
        for (index, now) in after.slots.iter().enumerate() {
            let same = before.slots.get(index).is_some_and(|was| {
                was.generation == now.generation && kind(&was.state) == kind(&now.state)
            });
            if !same {
                changed.insert(TileSlot(index as u16));
            }
        }
        Some(changed)
    }
}

/// What a corridor's search read, in the form a long-lived corridor keeps: the slots of the
/// tiles read, the newest generation among them, the links considered with their versions
/// and the filter's versions.
///
/// A tile changed after the search has a generation above every generation the search saw
/// (one counter for the whole mesh), so "every slot read is live at a generation no newer
/// than the newest seen" holds exactly when every tile read is unchanged: the same answer
/// as [`ReadSet::still_valid_in`] on the full read set. Crowd corridors lead to positions,
/// not interaction targets, so there is no target version to keep.
#[derive(Clone, Debug, PartialEq)]
pub struct CorridorReads {
    newest_generation: TileGeneration,
    slots: Box<[TileSlot]>,
    /// The slots read, as bits (see [`SlotBits`]).
    slot_bits: SlotBits,
    links: Box<[(LinkId, LinkVersion)]>,
    filter: FilterVersion,
    cost: CostVersion,
}

impl CorridorReads {
    /// The compact form of a search's read set.
    pub fn new(read_set: &ReadSet) -> CorridorReads {
        CorridorReads {
            newest_generation: read_set
                .tiles
                .iter()
                .map(|read| read.generation)
                .max()
                .unwrap_or(TileGeneration(0)),
            slots: read_set.tiles.iter().map(|read| read.slot).collect(),
            slot_bits: SlotBits::of(read_set.tiles.iter().map(|read| read.slot)),
            links: read_set.links.iter().copied().collect(),
            filter: read_set.filter,
            cost: read_set.cost,
        }
    }

    /// These reads and `more` (a later query's, under the same filter) as one set: the
    /// slots of both, the newest generation of both. Only for reads still valid when
    /// `more` was read: a tile of these changed in between would have a generation at or
    /// below the joined newest and pass [`CorridorReads::still_valid_in`] unnoticed.
    pub fn joined(&self, more: &ReadSet) -> CorridorReads {
        let mut slots = self.slots.to_vec();
        let mut newest_generation = self.newest_generation;
        for read in &more.tiles {
            newest_generation = newest_generation.max(read.generation);
            if !slots.contains(&read.slot) {
                slots.push(read.slot);
            }
        }
        let mut links = self.links.to_vec();
        for &(id, version) in &more.links {
            if !links.iter().any(|&(seen, _)| seen == id) {
                links.push((id, version));
            }
        }
        CorridorReads {
            newest_generation,
            slot_bits: SlotBits::of(slots.iter().copied()),
            slots: slots.into_boxed_slice(),
            links: links.into_boxed_slice(),
            filter: self.filter,
            cost: self.cost,
        }
    }

    #[cfg(feature = "harness")]
    /// The newest tile generation the search saw.
    pub fn newest_generation(&self) -> TileGeneration {
        self.newest_generation
    }

    #[cfg(feature = "harness")]
    /// The slots of the tiles read, in the order first read.
    pub fn slots(&self) -> &[TileSlot] {
        &self.slots
    }

    /// The links considered, with the versions seen.
    pub fn links(&self) -> &[(LinkId, LinkVersion)] {
        &self.links
    }

    /// Whether everything read still holds on `snapshot` under `filter`, and if not the
    /// first reason, checked in the order of [`ReadSet::still_valid_in`].
    pub fn still_valid_in(&self, snapshot: &Snapshot, filter: &QueryFilter) -> Validity {
        if filter.version() != self.filter {
            return Validity::FilterChanged;
        }
        if filter.cost_version() != self.cost {
            return Validity::CostChanged;
        }
        let slots = &snapshot.data().slots;
        for &slot in self.slots.iter() {
            let unchanged = slots.get(usize::from(slot.0)).is_some_and(|view| {
                view.generation <= self.newest_generation
                    && matches!(view.state, SlotState::Live(_))
            });
            if !unchanged {
                return Validity::TileChanged(slot);
            }
        }
        for &(id, version) in self.links.iter() {
            if snapshot.link(id).is_none_or(|link| link.version != version) {
                return Validity::LinkChanged(id);
            }
        }
        Validity::Valid
    }

    /// [`CorridorReads::still_valid_in`] for reads that held on the snapshot before
    /// `snapshot`, given the slots that changed between the two (`None`: not known, or a
    /// link changed): reads of no changed slot still hold without looking at them. The
    /// same answer as `still_valid_in` for such reads, the filter's versions checked first
    /// as there.
    pub fn still_valid_after(
        &self,
        snapshot: &Snapshot,
        filter: &QueryFilter,
        changed: Option<&SlotBits>,
    ) -> Validity {
        let unchanged_filter =
            filter.version() == self.filter && filter.cost_version() == self.cost;
        match changed {
            Some(changed) if unchanged_filter && !self.slot_bits.meets(changed) => Validity::Valid,
            _ => self.still_valid_in(snapshot, filter),
        }
    }

    /// Bytes its lists hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        size_of_val(&*self.slots) + size_of_val(&*self.links)
    }
}

/// Memory held by corridors, by part, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CorridorMemory {
    /// Distinct corridors counted.
    pub corridors: usize,
    /// Their polygon lists.
    pub polygon_bytes: usize,
    /// What their searches read.
    pub read_set_bytes: usize,
    /// The structs themselves and their link lists.
    pub other_bytes: usize,
}

impl CorridorMemory {
    /// All parts together.
    pub fn total_bytes(&self) -> usize {
        self.polygon_bytes + self.read_set_bytes + self.other_bytes
    }
}

impl std::ops::AddAssign for CorridorMemory {
    fn add_assign(&mut self, other: CorridorMemory) {
        self.corridors += other.corridors;
        self.polygon_bytes += other.polygon_bytes;
        self.read_set_bytes += other.read_set_bytes;
        self.other_bytes += other.other_bytes;
    }
}

/// A corridor's saved form: its polygons' tile bits, its links, whether it is complete, and
/// what its search read.
impl Saved for Corridor {
    const MIN_BYTES: usize = 4 + 4 + 1;
    fn write(&self, out: &mut Writer) {
        out.deltas(self.polygons.iter().copied());
        self.links.write(out);
        self.complete.write(out);
        self.reads.write(out);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let polygons: Vec<u32> =
            read_deltas(input, CORRIDOR_POLYGONS_MAX, "CORRIDOR_POLYGONS_MAX")?;
        if polygons.is_empty() {
            return Err(input.malformed("a corridor without polygons"));
        }
        let links: Vec<CorridorLink> = Saved::read(input)?;
        if let Some(link) = links
            .iter()
            .find(|link| link.index == 0 || link.index as usize >= polygons.len())
        {
            return Err(input.malformed(format!(
                "a link landing at polygon {} of a corridor of {}",
                link.index,
                polygons.len()
            )));
        }
        Ok(Corridor {
            polygons,
            links,
            complete: Saved::read(input)?,
            reads: Saved::read(input)?,
        })
    }
}

saved_struct!(CorridorLink {
    index,
    link,
    entry,
    exit
});
saved_struct!(CorridorKey {
    start,
    goal,
    filter_id,
    filter,
    cost
});

impl Saved for CorridorReads {
    const MIN_BYTES: usize = 4 + 4 + 4 + 8 + 8;
    fn write(&self, out: &mut Writer) {
        self.newest_generation.write(out);
        out.deltas(self.slots.iter().map(|slot| u32::from(slot.0)));
        out.len(self.links.len());
        out.elements(&self.links);
        self.filter.write(out);
        self.cost.write(out);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let newest_generation = Saved::read(input)?;
        let slots: Vec<u16> = read_deltas(input, usize::from(u16::MAX) + 1, "tile slots")?;
        Ok(CorridorReads {
            newest_generation,
            slot_bits: SlotBits::of(slots.iter().copied().map(TileSlot)),
            slots: slots.into_iter().map(TileSlot).collect(),
            links: Vec::<(LinkId, LinkVersion)>::read(input)?.into_boxed_slice(),
            filter: Saved::read(input)?,
            cost: Saved::read(input)?,
        })
    }
}

/// Reads what [`Writer::deltas`] wrote, at most `limit` values (named `limit_name` in the
/// error), each checked to fit `T`.
fn read_deltas<T: TryFrom<i64>>(
    input: &mut Reader,
    limit: usize,
    limit_name: &str,
) -> Result<Vec<T>, RestoreError> {
    let count = input.len(1)?;
    if count > limit {
        return Err(input.malformed(format!(
            "{count} values in a corridor, over the limit of {limit} ({limit_name})"
        )));
    }
    let mut values = Vec::with_capacity(count);
    let mut value = 0i64;
    for _ in 0..count {
        value = value.wrapping_add(input.signed()?);
        match T::try_from(value) {
            Ok(fitted) => values.push(fitted),
            Err(_) => return Err(input.malformed(format!("{value} out of range in a corridor"))),
        }
    }
    Ok(values)
}

pub(crate) mod cache;
pub(crate) use cache::KeyHasher;
pub use cache::{CorridorCache, CorridorKey};

/// A shared corridor, by its place in the save's shared table.
impl Saved for Arc<Corridor> {
    const MIN_BYTES: usize = 4;
    fn write(&self, out: &mut Writer) {
        out.u32(out.shared_place(self));
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let place = input.u32()?;
        input.shared_value(place)
    }
}

#[cfg(test)]
mod tests;
