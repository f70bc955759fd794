//! The runtime navigation mesh: the baked tile format, tiles with generations, polygon
//! references, off-mesh links and snapshots.
//!
//! Stage: runtime, first layer above `geom`. The baker writes [`TileData`]; the runtime reads
//! it. Nothing here knows how tiles are baked, so a game that ships baked tiles compiles this
//! module without the baker. Tiles can also be written by hand from convex polygons
//! ([`TileData::from_walkable_polygons`]), for scenarios and tests.

pub mod blob;
pub mod borders;
pub mod carve;
pub mod components;
pub mod connectivity;
pub mod hand_built;
pub mod landmarks;
pub mod navmesh;
pub mod parts;
pub mod poly_ref;
pub mod runtime_tile;
pub mod search_graph;
pub mod tile;
pub mod tile_grid;

pub use borders::{BorderPortal, BorderPortals};
pub use components::Components;
pub use hand_built::{HandBuiltError, WalkablePolygon};
pub use landmarks::{EndBounds, Landmarks};
pub use navmesh::{
    LINKS_MAX, Link, LinkDesc, LinkId, LinkKind, LinkVersion, NavMesh, NavMeshError, SlotState,
    Snapshot,
};
pub use poly_ref::{PolyRef, TileGeneration, TileSlot};
pub use runtime_tile::{Adjacent, RuntimeTile, Wall};
pub use search_graph::{SearchEdge, SearchTable};
pub use tile::{DetailSubMesh, PolyFlags, TileData, TileHeader, TilePoly, TileSource};
