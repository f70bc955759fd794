//! The runtime navigation mesh: tile slots with generations, off-mesh links with versions,
//! and immutable snapshots for queries.
//!
//! Every mutation builds a new [`Snapshot`] (copy-on-write: the slot table is a vector of
//! `Arc`s), so a query that holds a snapshot keeps reading the tiles it started with, even
//! if they are replaced meanwhile; what it read is recorded in its read set and checked at
//! adoption against the current mesh.
//!
//! Tile updates follow spec 001: a source-geometry change marks the affected tiles pending in
//! the same call that records the new source versions; queries refuse pending tiles; a
//! rebuilt tile is committed only if the source versions it was built from are still the
//! current ones, and its slot's generation is bumped so old references go stale.
//!
//! Generations come from one counter for the whole mesh, advanced once per change that
//! replaces or invalidates tiles, and every slot changed in it takes the new value. So a
//! tile's generation only grows, and a tile changed after some query read the mesh has a
//! generation above every generation that query saw: a result can prove its reads still
//! hold by keeping the slots it read and the newest generation among them (8 bytes for
//! the newest and 2 a slot, where a list of slot and generation pairs takes 8 a slot).
//! The crowd's corridors keep their reads that way.

use std::collections::HashMap;
use std::sync::Arc;

use glam::Vec3;

use super::blob::{BakeParams, FNV1A64_OFFSET, fnv1a64_continued};
use super::borders::{BorderPortals, border_tables};
use super::poly_ref::{PolyRef, TileGeneration, TileSlot};
use super::runtime_tile::RuntimeTile;
use super::search_graph::{SearchTable, search_tables};
use super::tile::TileData;
use super::tile_grid::TileGrid;
use crate::geom::Aabb;
use crate::ids::SourceVersion;

/// Most tile slots (slot numbers are 16 bits in a [`PolyRef`]).
pub const TILE_SLOTS_MAX: usize = 1 << 16;

/// Version of one off-mesh link's state (open, closed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkVersion(pub u64);

/// An off-mesh link of a [`NavMesh`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// What crossing a link takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// A jump or drop.
    Jump,
    /// A door that opens and closes.
    Door,
    /// A lift.
    Lift,
    /// A ladder.
    Ladder,
    /// Anything else, with a game-defined code.
    Custom(u16),
}

/// An off-mesh link as the game describes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkDesc {
    /// What crossing takes.
    pub kind: LinkKind,
    /// Start point, metres (snapped to the polygon under it, within `radius_m`).
    pub start: Vec3,
    /// End point, metres.
    pub end: Vec3,
    /// Whether it can be crossed from end to start too.
    pub bidirectional: bool,
    /// How far from the endpoints a polygon may be to attach. Units: m. Limit: > 0.
    pub radius_m: f32,
    /// Whether it starts open.
    pub open: bool,
}

/// A link with its state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// Its id.
    pub id: LinkId,
    /// As described.
    pub desc: LinkDesc,
    /// Open: traversable.
    pub open: bool,
    /// Bumped at each state change.
    pub version: LinkVersion,
    /// Polygon under the start point in the current snapshot (None: not attached).
    pub start_polygon: Option<PolyRef>,
    /// Polygon under the end point.
    pub end_polygon: Option<PolyRef>,
}

/// State of a tile slot.
#[derive(Clone, Debug)]
pub enum SlotState {
    /// No tile.
    Empty,
    /// A tile queries may use.
    Live(Arc<RuntimeTile>),
    /// Its sources changed: not walkable space until a rebuilt tile is committed.
    Pending,
}

/// One tile slot as a snapshot sees it.
#[derive(Clone, Debug)]
pub struct SlotView {
    /// Tile coordinates.
    pub tile: (i32, i32),
    /// Current generation: the mesh's change count when the slot's tile was last replaced
    /// or marked pending (see the module doc).
    pub generation: TileGeneration,
    /// State.
    pub state: SlotState,
}

/// An immutable view of the mesh; cheap to clone.
#[derive(Clone, Debug)]
pub struct Snapshot(pub(crate) Arc<SnapshotData>);

/// The content of a [`Snapshot`].
#[derive(Debug)]
pub struct SnapshotData {
    /// Slots by index.
    pub slots: Vec<SlotView>,
    /// Slot of each tile coordinate.
    pub slot_at: Arc<HashMap<(i32, i32), TileSlot>>,
    /// Links by id.
    pub links: Vec<Link>,
    /// Links leaving each polygon (by [`PolyRef`] bits), in id order.
    pub links_from: HashMap<u64, Vec<LinkId>>,
    /// The settings the tiles were baked with.
    pub params: BakeParams,
    /// Bounds of each slot's live tile (empty for other slots), beside the slots so that
    /// finding the tiles a box touches reads one compact array, not every tile.
    pub slot_bounds: Vec<Aabb>,
    /// A uniform grid over the live tiles' bounds (horizontal), so that finding the tiles a
    /// box touches costs a few cells, not a pass over every slot.
    pub tile_grid: Arc<TileGrid>,
    /// Per slot, the slots of the tiles across its four sides (0: -X, 1: +Z, 2: +X, 3: -Z),
    /// `u16::MAX` where there is none: crossing a tile border needs no hash lookup.
    pub neighbour_slots: Arc<Vec<[u16; 4]>>,
    /// Per slot, the dense index of its live tile's first polygon (`u32::MAX` if not
    /// live): polygon `p` of slot `s` is `polygon_base[s] + p`. Searches index their node
    /// table by it instead of hashing.
    pub polygon_base: Vec<u32>,
    /// Number of polygons over all live tiles.
    pub polygon_total: u32,
    /// Per slot, the portals across its live tile's borders (empty for other slots):
    /// searches read them instead of working them out at each crossing.
    pub border_portals: Vec<Arc<BorderPortals>>,
    /// Per slot, the search graph of its live tile (empty for other slots): what a path
    /// search expands a polygon by.
    pub search_tables: Vec<Arc<SearchTable>>,
    /// The polygons' components, worked out on first use (see [`Snapshot::components`]).
    pub(crate) components: std::sync::OnceLock<Option<super::Components>>,
    /// The search graph's landmark distances, worked out on first use.
    pub(crate) landmarks: std::sync::OnceLock<Option<super::Landmarks>>,
}

impl SnapshotData {
    /// The slots `slots` with nothing derived from them yet (no links, no tables): what a
    /// change starts from before publishing works the rest out.
    pub(super) fn bare(slots: Vec<SlotView>, params: BakeParams) -> SnapshotData {
        SnapshotData {
            slots,
            slot_at: Arc::default(),
            links: Vec::new(),
            links_from: HashMap::new(),
            params,
            slot_bounds: Vec::new(),
            tile_grid: Arc::default(),
            neighbour_slots: Arc::default(),
            polygon_base: Vec::new(),
            polygon_total: 0,
            border_portals: Vec::new(),
            search_tables: Vec::new(),
            components: std::sync::OnceLock::new(),
            landmarks: std::sync::OnceLock::new(),
        }
    }
}

impl Snapshot {
    /// The content.
    pub fn data(&self) -> &SnapshotData {
        &self.0
    }

    /// Whether `other` is this very snapshot (the same publication, not merely equal
    /// content): a mesh that published nothing since hands out the same one.
    pub fn is_same(&self, other: &Snapshot) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The live tile a reference points into, if the reference is current.
    pub fn tile(&self, reference: PolyRef) -> Option<&Arc<RuntimeTile>> {
        let slot = self.0.slots.get(usize::from(reference.slot().0))?;
        if slot.generation != reference.generation() {
            return None;
        }
        match &slot.state {
            SlotState::Live(tile)
                if usize::from(reference.polygon()) < tile.data.polygons.len() =>
            {
                Some(tile)
            }
            _ => None,
        }
    }

    /// The horizontal area of every live tile's polygons, m² (what a crowd's bodies cover
    /// a share of).
    pub fn walkable_area_m2(&self) -> f64 {
        self.0
            .slots
            .iter()
            .filter_map(|view| match &view.state {
                SlotState::Live(tile) => Some(tile.data.walkable_area_m2()),
                _ => None,
            })
            .sum()
    }

    /// A fingerprint of what was baked: the bake settings and every live tile's data, by
    /// slot (FNV-1a). Two meshes with the same fingerprint hold the same tiles, so a host
    /// can tell that a level was rebuilt with other settings or geometry (a saved crowd's
    /// own check compares tile generations, which count changes, not content). Links and
    /// their states are not part of it.
    pub fn content_fingerprint(&self) -> u64 {
        let mut hash = fnv1a64_continued(FNV1A64_OFFSET, bytemuck::bytes_of(&self.0.params));
        for view in &self.0.slots {
            let SlotState::Live(tile) = &view.state else {
                hash = fnv1a64_continued(hash, &[0]);
                continue;
            };
            let data = &tile.data;
            hash = fnv1a64_continued(hash, &[1]);
            hash = fnv1a64_continued(hash, bytemuck::bytes_of(&data.header));
            for (count, bytes) in [
                (
                    data.vertices.len(),
                    bytemuck::cast_slice::<_, u8>(&data.vertices),
                ),
                (data.polygons.len(), bytemuck::cast_slice(&data.polygons)),
                (
                    data.detail_meshes.len(),
                    bytemuck::cast_slice(&data.detail_meshes),
                ),
                (
                    data.detail_vertices.len(),
                    bytemuck::cast_slice(&data.detail_vertices),
                ),
                (
                    data.detail_triangles.len(),
                    bytemuck::cast_slice(&data.detail_triangles),
                ),
                (data.sources.len(), bytemuck::cast_slice(&data.sources)),
            ] {
                hash = fnv1a64_continued(hash, &(count as u64).to_le_bytes());
                hash = fnv1a64_continued(hash, bytes);
            }
        }
        hash
    }

    /// The live tile in a slot with its generation.
    pub fn live_slot(&self, slot: TileSlot) -> Option<(&Arc<RuntimeTile>, TileGeneration)> {
        let view = self.0.slots.get(usize::from(slot.0))?;
        match &view.state {
            SlotState::Live(tile) => Some((tile, view.generation)),
            _ => None,
        }
    }

    /// Live tiles whose bounds overlap `bounds`, with their slots and generations.
    pub fn tiles_overlapping(
        &self,
        bounds: &Aabb,
    ) -> impl Iterator<Item = (TileSlot, TileGeneration, &Arc<RuntimeTile>)> + '_ {
        let bounds = *bounds;
        let data = &self.0;
        // The grid's candidates when it is built, else every slot: one of the two is empty,
        // and without a grid (few tiles) nothing is allocated for a query.
        let (listed, every) = match data.tile_grid.candidates(&bounds) {
            Some(slots) => (Some(slots.into_iter().map(usize::from)), None),
            None => (None, Some(0..data.slots.len())),
        };
        let candidates = listed
            .into_iter()
            .flatten()
            .chain(every.into_iter().flatten());
        candidates.filter_map(move |index| {
            let view = &data.slots[index];
            match &view.state {
                SlotState::Live(tile) => {
                    let tile_bounds = Aabb {
                        min: Vec3::from_array(tile.data.header.bounds_min),
                        max: Vec3::from_array(tile.data.header.bounds_max),
                    };
                    tile_bounds.overlaps(&bounds).then_some((
                        TileSlot(index as u16),
                        view.generation,
                        tile,
                    ))
                }
                _ => None,
            }
        })
    }

    /// The support layer of a live polygon (0: the static ground, `n + 1`: moving support
    /// `n`); `None` for a stale reference.
    #[inline]
    pub fn support_layer(&self, reference: PolyRef) -> Option<u16> {
        self.tile(reference)
            .map(|tile| tile.data.polygons[usize::from(reference.polygon())].layer)
    }

    /// Dense index of a live polygon (see [`SnapshotData::polygon_base`]).
    #[inline]
    pub fn polygon_key(&self, reference: PolyRef) -> u32 {
        self.0
            .polygon_base
            .get(usize::from(reference.slot().0))
            .map_or(u32::MAX, |&base| {
                base.wrapping_add(u32::from(reference.polygon()))
            })
    }

    /// The portals across the borders of the live tile in `slot` (see
    /// [`BorderPortals`]), if this snapshot has worked them out.
    #[inline]
    pub fn border_portals(&self, slot: TileSlot) -> Option<&BorderPortals> {
        self.0
            .border_portals
            .get(usize::from(slot.0))
            .map(|table| &**table)
    }

    /// The search graph of the live tile in `slot`, if this snapshot has one for it (its
    /// generation is the tile's; see [`SearchTable`]).
    #[inline]
    pub fn search_table(&self, slot: TileSlot) -> Option<&SearchTable> {
        self.0
            .search_tables
            .get(usize::from(slot.0))
            .map(|table| &**table)
    }

    /// The link with this id.
    pub fn link(&self, id: LinkId) -> Option<&Link> {
        self.0.links.get(id.0 as usize)
    }

    /// Reference to polygon `polygon` of the live tile in `slot`.
    pub fn poly_ref(&self, slot: TileSlot, polygon: u16) -> Option<PolyRef> {
        let (_, generation) = self.live_slot(slot)?;
        PolyRef::new(generation, slot, polygon)
    }
}

/// A change the mesh refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NavMeshError {
    /// The tile's data is inconsistent.
    #[error("tile ({x}, {z}) is malformed: {problem}")]
    MalformedTile {
        /// Tile column.
        x: i32,
        /// Tile row.
        z: i32,
        /// What is wrong.
        problem: String,
    },
    /// More tiles than [`TILE_SLOTS_MAX`].
    #[error("no free tile slot: the mesh already holds {TILE_SLOTS_MAX} tiles")]
    OutOfSlots,
    /// A rebuilt tile was built from sources that have changed since.
    #[error(
        "tile ({x}, {z}) was built from instance {instance} at {built}, but its source is now {current}: rebuild it again"
    )]
    StaleSource {
        /// Tile column.
        x: i32,
        /// Tile row.
        z: i32,
        /// The instance.
        instance: u32,
        /// The version the tile was built from.
        built: SourceVersion,
        /// The current version.
        current: SourceVersion,
    },
    /// No such link.
    #[error("link {0} does not exist")]
    UnknownLink(u32),
    /// A link description with a bad value.
    #[error("link: {0}")]
    BadLink(String),
    /// The links would be more than [`LINKS_MAX`].
    #[error(
        "the mesh holds {links} links; {adding} more would pass the limit of {LINKS_MAX} (LINKS_MAX)"
    )]
    TooManyLinks {
        /// Links in the mesh.
        links: usize,
        /// Links being added.
        adding: usize,
    },
}

/// Most off-mesh links a mesh holds: 65,536, ten times a large level's doors, ladders and
/// jumps (link ids are dense indices into one table that every snapshot copies).
pub const LINKS_MAX: usize = 1 << 16;

/// The mutable navigation mesh; queries run on its [`Snapshot`]s.
#[derive(Debug)]
pub struct NavMesh {
    current: Arc<SnapshotData>,
    /// Latest source version of every instance the mesh has been told about.
    source_versions: HashMap<u32, SourceVersion>,
    /// The generation given to the slots of the last change (0: none yet).
    last_generation: u32,
}

impl NavMesh {
    /// An empty mesh for tiles baked with `params`.
    pub fn new(params: BakeParams) -> NavMesh {
        NavMesh {
            current: Arc::new(SnapshotData::bare(Vec::new(), params)),
            source_versions: HashMap::new(),
            last_generation: 0,
        }
    }

    /// The generation the next change gives the slots it changes (not yet taken).
    fn next_generation(&self) -> TileGeneration {
        TileGeneration(self.last_generation.wrapping_add(1).max(1))
    }

    /// A mesh holding every tile of a `.wmnav` file.
    pub fn from_file(file: super::blob::NavMeshFile) -> Result<NavMesh, NavMeshError> {
        let mut mesh = NavMesh::new(file.params);
        mesh.add_tiles(file.tiles)?;
        Ok(mesh)
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot(self.current.clone())
    }

    /// The source version the mesh holds for an instance.
    pub fn source_version(&self, instance: u32) -> Option<SourceVersion> {
        self.source_versions.get(&instance).copied()
    }

    /// Adds (or replaces) tiles, one new snapshot for all of them. A replaced slot's
    /// generation is bumped. The tiles' source versions become the current ones.
    pub fn add_tiles(&mut self, tiles: Vec<TileData>) -> Result<Vec<TileSlot>, NavMeshError> {
        let mut data = self.copy_data();
        let mut slots = Vec::with_capacity(tiles.len());
        let generation = self.next_generation();
        for tile in tiles {
            let (x, z) = (tile.header.tile_x, tile.header.tile_z);
            tile.validate()
                .map_err(|problem| NavMeshError::MalformedTile { x, z, problem })?;
            for source in &tile.sources {
                self.source_versions
                    .insert(source.instance, source.source_version());
            }
            slots.push(place_tile(&mut data, tile, generation)?);
        }
        self.last_generation = generation.0;
        self.publish(data);
        Ok(slots)
    }

    /// Records new source versions (an instance moved, was edited or rescaled) and marks
    /// pending, in the same step, every tile built from an older version of one of them.
    /// Returns the coordinates of the tiles that now need a rebuild.
    pub fn apply_source_changes(&mut self, changes: &[(u32, SourceVersion)]) -> Vec<(i32, i32)> {
        self.apply_source_changes_reaching(changes, &[])
    }

    /// [`NavMesh::apply_source_changes`], and the tiles at `reached` marked pending in the
    /// same step: where the changed instances' triangles lie now (an instance moved into a
    /// tile that was not built from it). Returns every tile to rebuild, each once: those
    /// marked, and those of `reached` the mesh has no tile at yet.
    pub fn apply_source_changes_reaching(
        &mut self,
        changes: &[(u32, SourceVersion)],
        reached: &[(i32, i32)],
    ) -> Vec<(i32, i32)> {
        for &(instance, version) in changes {
            self.source_versions.insert(instance, version);
        }
        let mut data = self.copy_data();
        let mut pending = Vec::new();
        let generation = self.next_generation();
        for view in data.slots.iter_mut() {
            let SlotState::Live(tile) = &view.state else {
                continue;
            };
            let stale = tile.data.sources.iter().any(|source| {
                changes.iter().any(|&(instance, version)| {
                    instance == source.instance && version != source.source_version()
                })
            });
            if stale || reached.contains(&view.tile) {
                view.state = SlotState::Pending;
                view.generation = generation;
                pending.push(view.tile);
            }
        }
        if !pending.is_empty() {
            self.last_generation = generation.0;
        }
        self.publish(data);
        for &tile in reached {
            if !pending.contains(&tile) {
                pending.push(tile);
            }
        }
        pending
    }

    /// Commits a rebuilt tile, only if every source version it was built from is still the
    /// current one; the slot's generation is bumped.
    pub fn commit_rebuilt_tile(&mut self, tile: TileData) -> Result<TileSlot, NavMeshError> {
        self.check_sources(&tile)?;
        Ok(self.add_tiles(vec![tile])?[0])
    }

    /// [`NavMesh::commit_rebuilt_tile`] for tiles the crate prepared itself (and so
    /// already valid), all in one snapshot: a rebuild that keeps a tile's runtime form
    /// commits it as it is. Each tile is checked against its sources on its own; the
    /// result per tile, in order, a stale one refused and left pending.
    // Its caller, the tile cache, is part of the baker.
    #[cfg_attr(not(feature = "bake"), allow(dead_code))]
    pub(crate) fn commit_prepared_tiles(
        &mut self,
        tiles: Vec<Arc<RuntimeTile>>,
    ) -> Vec<Result<TileSlot, NavMeshError>> {
        let mut data = None;
        let generation = self.next_generation();
        let results = tiles
            .into_iter()
            .map(|tile| {
                debug_assert_eq!(tile.data.validate(), Ok(()));
                self.check_sources(&tile.data)?;
                let data = data.get_or_insert_with(|| self.copy_data());
                place_runtime_tile(data, tile, generation)
            })
            .collect();
        if let Some(data) = data {
            self.last_generation = generation.0;
            self.publish(data);
        }
        results
    }

    /// Refuses a tile built from a source version older than the current one.
    fn check_sources(&self, tile: &TileData) -> Result<(), NavMeshError> {
        let (x, z) = (tile.header.tile_x, tile.header.tile_z);
        for source in &tile.sources {
            if let Some(&current) = self.source_versions.get(&source.instance) {
                if current != source.source_version() {
                    return Err(NavMeshError::StaleSource {
                        x,
                        z,
                        instance: source.instance,
                        built: source.source_version(),
                        current,
                    });
                }
            }
        }
        Ok(())
    }

    /// Adds an off-mesh link. Its endpoints lie within
    /// [`COORDINATE_MAX_M`](crate::geom::limits::COORDINATE_MAX_M) of the origin on each
    /// axis, its radius in (0, [`BODY_SIZE_MAX_M`](crate::geom::limits::BODY_SIZE_MAX_M)];
    /// a mesh holds at most [`LINKS_MAX`] links. Each call publishes a snapshot that
    /// attaches every link anew: add many at once with [`NavMesh::add_links`].
    pub fn add_link(&mut self, desc: LinkDesc) -> Result<LinkId, NavMeshError> {
        Ok(self.add_links(&[desc])?[0])
    }

    /// Adds off-mesh links, all or none, in one snapshot; their ids in order. Each is
    /// checked as [`NavMesh::add_link`] checks it, the first bad one named.
    pub fn add_links(&mut self, descs: &[LinkDesc]) -> Result<Vec<LinkId>, NavMeshError> {
        use crate::geom::limits::{BODY_SIZE_MAX_M, COORDINATE_MAX_M, within_each};
        for desc in descs {
            let inside = within_each(desc.start, COORDINATE_MAX_M)
                && within_each(desc.end, COORDINATE_MAX_M);
            if !(inside && desc.radius_m > 0.0 && desc.radius_m <= BODY_SIZE_MAX_M) {
                return Err(NavMeshError::BadLink(format!(
                    "start {} end {} radius {}: endpoints must be finite and within \
                     {COORDINATE_MAX_M} m (COORDINATE_MAX_M), the radius in (0, \
                     {BODY_SIZE_MAX_M}] m (BODY_SIZE_MAX_M)",
                    desc.start, desc.end, desc.radius_m
                )));
            }
        }
        let links = self.current.links.len();
        if links.saturating_add(descs.len()) > LINKS_MAX {
            return Err(NavMeshError::TooManyLinks {
                links,
                adding: descs.len(),
            });
        }
        let mut data = self.copy_data();
        let ids: Vec<LinkId> = (links..links + descs.len())
            .map(|index| LinkId(index as u32))
            .collect();
        data.links
            .extend(descs.iter().zip(&ids).map(|(&desc, &id)| Link {
                id,
                desc,
                open: desc.open,
                version: LinkVersion(1),
                start_polygon: None,
                end_polygon: None,
            }));
        self.publish(data);
        Ok(ids)
    }

    /// Opens or closes a link; returns its new version (unchanged if the state was already so).
    pub fn set_link_open(&mut self, id: LinkId, open: bool) -> Result<LinkVersion, NavMeshError> {
        let link = self
            .current
            .links
            .get(id.0 as usize)
            .ok_or(NavMeshError::UnknownLink(id.0))?;
        if link.open == open {
            return Ok(link.version);
        }
        let mut data = self.copy_data();
        let link = &mut data.links[id.0 as usize];
        link.open = open;
        link.version = LinkVersion(link.version.0 + 1);
        let version = link.version;
        self.publish(data);
        Ok(version)
    }

    fn copy_data(&self) -> SnapshotData {
        SnapshotData {
            slot_at: self.current.slot_at.clone(),
            links: self.current.links.clone(),
            ..SnapshotData::bare(self.current.slots.clone(), self.current.params)
        }
    }

    /// Attaches each link to the polygons under its endpoints.
    fn attach_links(&self, data: &mut SnapshotData) {
        let snapshot_so_far = Snapshot(Arc::new(SnapshotData::bare(
            data.slots.clone(),
            data.params,
        )));
        let mut links_from: HashMap<u64, Vec<LinkId>> = HashMap::new();
        for link in data.links.iter_mut() {
            link.start_polygon =
                polygon_under(&snapshot_so_far, link.desc.start, link.desc.radius_m);
            link.end_polygon = polygon_under(&snapshot_so_far, link.desc.end, link.desc.radius_m);
            if let (Some(start), Some(end)) = (link.start_polygon, link.end_polygon) {
                links_from.entry(start.to_bits()).or_default().push(link.id);
                if link.desc.bidirectional {
                    links_from.entry(end.to_bits()).or_default().push(link.id);
                }
            }
        }
        data.links_from = links_from;
    }

    /// Attaches links to the polygons under their endpoints and makes `data` current.
    fn publish(&mut self, mut data: SnapshotData) {
        if !data.links.is_empty() {
            self.attach_links(&mut data);
        }
        let mut total = 0u32;
        data.polygon_base = data
            .slots
            .iter()
            .map(|view| match &view.state {
                SlotState::Live(tile) => {
                    let base = total;
                    total += tile.data.polygons.len() as u32;
                    base
                }
                _ => u32::MAX,
            })
            .collect();
        data.polygon_total = total;
        data.slot_bounds = data
            .slots
            .iter()
            .map(|view| match &view.state {
                SlotState::Live(tile) => Aabb {
                    min: Vec3::from_array(tile.data.header.bounds_min),
                    max: Vec3::from_array(tile.data.header.bounds_max),
                },
                _ => Aabb::EMPTY,
            })
            .collect();
        data.tile_grid = if self.current.tile_grid.still_fits(&data.slot_bounds) {
            self.current.tile_grid.clone()
        } else {
            Arc::new(TileGrid::new(&data.slot_bounds))
        };
        // Slots are only ever added, each at a new coordinate: with as many slots as
        // before, every slot's neighbours are the same.
        data.neighbour_slots = if self.current.neighbour_slots.len() == data.slots.len() {
            self.current.neighbour_slots.clone()
        } else {
            Arc::new(
                data.slots
                    .iter()
                    .map(|view| {
                        let (x, z) = view.tile;
                        [(x - 1, z), (x, z + 1), (x + 1, z), (x, z - 1)]
                            .map(|key| data.slot_at.get(&key).map_or(u16::MAX, |slot| slot.0))
                    })
                    .collect(),
            )
        };
        data.border_portals = border_tables(&data, &self.current.border_portals);
        data.search_tables = search_tables(
            &data,
            &self.current.border_portals,
            &self.current.search_tables,
        );
        self.current = Arc::new(data);
    }
}

fn place_tile(
    data: &mut SnapshotData,
    tile: TileData,
    generation: TileGeneration,
) -> Result<TileSlot, NavMeshError> {
    place_runtime_tile(data, Arc::new(RuntimeTile::new(tile)), generation)
}

fn place_runtime_tile(
    data: &mut SnapshotData,
    runtime: Arc<RuntimeTile>,
    generation: TileGeneration,
) -> Result<TileSlot, NavMeshError> {
    let key = (runtime.data.header.tile_x, runtime.data.header.tile_z);
    if let Some(&slot) = data.slot_at.get(&key) {
        let view = &mut data.slots[usize::from(slot.0)];
        view.generation = generation;
        view.state = SlotState::Live(runtime);
        return Ok(slot);
    }
    if data.slots.len() >= TILE_SLOTS_MAX {
        return Err(NavMeshError::OutOfSlots);
    }
    let slot = TileSlot(data.slots.len() as u16);
    data.slots.push(SlotView {
        tile: key,
        generation,
        state: SlotState::Live(runtime),
    });
    Arc::make_mut(&mut data.slot_at).insert(key, slot);
    Ok(slot)
}

/// The live polygon nearest `point` within `radius` (horizontally) and two metres
/// vertically.
pub fn polygon_under(snapshot: &Snapshot, point: Vec3, radius: f32) -> Option<PolyRef> {
    let extent = Vec3::new(radius, 2.0, radius);
    let query = Aabb {
        min: point - extent,
        max: point + extent,
    };
    let mut best: Option<(f32, PolyRef)> = None;
    for (slot, generation, tile) in snapshot.tiles_overlapping(&query) {
        tile.for_each_overlapping(&query, |polygon| {
            let (closest, _) = tile.closest_point(polygon, point);
            let distance = closest.distance_squared(point);
            if best.is_none_or(|(d, _)| distance < d) {
                if let Some(reference) = PolyRef::new(generation, slot, polygon) {
                    best = Some((distance, reference));
                }
            }
        });
    }
    best.filter(|(d, _)| *d <= radius * radius + 4.0)
        .map(|(_, reference)| reference)
}
