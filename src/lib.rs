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
//! | runtime | [`mesh`] | tiles, `.wmnav` files, polygon references, the runtime navmesh, snapshots |
//! | runtime | [`query`] | nearest polygon, sliced A*, straight paths, rays, surface moves, routes, read sets |
//! | runtime | [`crowd`] | agents as entities plus struct-of-arrays lanes, budgeted path scheduling, corridor following, slope limits, controller feedback |
//! | runtime | [`target`] | target projection: legal stand regions, pose validation against a collision world, start projection |
//! | build time (feature `bake`) | `scene` | input geometry: meshes, transform nodes, instances, OBJ import, versions |
//! | build time (feature `bake`) | `bake` | the voxel pipeline: world triangles to tiles |
//! | top (feature `harness`) | `harness` | standard crowd scenarios and the measures of a run: overlaps, completion, flow |
//! | top | [`debug`] | debug drawing: a draw trait and an SVG backend |
//!
//! Build-time modules (`scene` and the baker that follows it) sit behind the `bake` cargo
//! feature, so a game that ships baked tiles can compile the runtime alone (debug drawing
//! of tiles, targets and crowds included; drawing the input triangles needs `bake`). The
//! scenario harness and the generated levels (`scene::city`, `scene::hills`,
//! `scene::flow_levels`, `scene::proving_ground`) sit behind the `harness` feature, which
//! the command line turns on: they are how this crate measures itself, not part of a game.
//!
//! # Example
//! Build a scene, get its world triangles, bake them, and write a `.wmnav` file's bytes:
//! ```
//! # #[cfg(feature = "bake")] {
//! use glam::{Affine3A, Vec3};
//! use waymark::bake::{BakeConfig, Preset, bake};
//! use waymark::scene::{InstanceDesc, Scene, TriMesh};
//!
//! let mut scene = Scene::new();
//! let floor = scene.add_mesh(TriMesh::axis_box("floor", Vec3::new(0.0, -0.2, 0.0), Vec3::new(10.0, 0.0, 10.0)));
//! let parent = scene.add_node("room", None, Affine3A::from_scale(Vec3::splat(0.5))).unwrap();
//! let instance = scene.add_instance(InstanceDesc::new("floor", floor).under(parent)).unwrap();
//! let world = scene.world_triangles().unwrap(); // metres, every transform applied once
//! let version = scene.source_version(instance).unwrap();
//! scene.set_node_transform(parent, Affine3A::IDENTITY).unwrap();
//! assert!(scene.source_version(instance).unwrap() > version);
//! let baked = bake(&world, &BakeConfig::preset(Preset::Guard)).unwrap();
//! assert!(baked.stats.walkable_area_m2 > 10.0); // 5 m x 5 m, less the erosion band
//! let bytes = baked.to_file().to_bytes();
//! assert!(!bytes.is_empty());
//! # }
//! ```
//!
//! # Conventions
//! Metres, seconds and radians inside; degrees only at the configuration and CLI edge. World
//! Up is +Y unless a [`geom::UpBasis`] says otherwise; horizontal work happens in the
//! orthonormal (X, Z) basis derived from Up, carried as [`glam::Vec2`] `{ x, y: z }`.

pub mod crowd;
pub mod geom;
#[cfg(feature = "harness")]
pub mod harness;
pub mod ids;
pub mod mesh;
pub mod query;
pub mod target;

#[cfg(feature = "bake")]
pub mod bake;
pub mod debug;
#[cfg(feature = "bake")]
pub mod scene;

/// The README's snippets, compiled and run as doctests (`cargo test`), so the front door
/// cannot drift from the API.
#[cfg(all(doctest, feature = "bake"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
