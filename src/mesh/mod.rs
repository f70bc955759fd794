//! The runtime navigation mesh: the baked tile format and (as it lands) tiles with
//! generations, polygon references, links and snapshots.
//!
//! Stage: runtime, first layer above `geom`. The baker writes [`TileData`]; the runtime reads
//! it. Nothing here knows how tiles are baked, so a game that ships baked tiles compiles this
//! module without the baker.

pub mod blob;
pub mod connectivity;
pub mod tile;

pub use tile::{DetailSubMesh, TileData, TileHeader, TilePoly, TileSource};
