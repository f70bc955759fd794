//! waymark: a navigation runtime for large-crowd games.
//!
//! Games embed waymark to bake walkable space from level triangles, find paths and legal
//! interaction poses, and move thousands of agents every frame.
//!
//! # Module map
//! The layers import one way; a module never imports one to its right.
//!
//! | layer | module | what it holds |
//! |---|---|---|
//! | base | [`ids`] | version, generation and area newtypes shared by every layer |
//! | base | [`geom`] | the Up basis, transforms, triangle primitives, bounds |
//! | runtime | [`mesh`] | the baked tile format (and, as it lands, the runtime navmesh) |
//! | build time | [`scene`] | input geometry: meshes, transform nodes, instances, OBJ import, versions |
//! | build time | [`bake`] | the voxel pipeline: world triangles to tiles |
//! | top | [`debug`] | debug drawing: a draw trait and an SVG backend |
//!
//! Build-time modules (`scene`, and the baker that follows it) sit behind the `bake` cargo
//! feature, so a game that ships baked tiles can compile the runtime alone.
//!
//! # Conventions
//! Metres, seconds and radians inside; degrees only at the configuration and CLI edge. World
//! Up is +Y unless a [`geom::UpBasis`] says otherwise; horizontal work happens in the
//! orthonormal (X, Z) basis derived from Up, carried as [`glam::Vec2`] `{ x, y: z }`.

pub mod geom;
pub mod ids;
pub mod mesh;

#[cfg(feature = "bake")]
pub mod bake;
#[cfg(feature = "bake")]
pub mod debug;
#[cfg(feature = "bake")]
pub mod scene;
