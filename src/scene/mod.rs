//! Input geometry for the baker: meshes, transform nodes, instances and their versions.
//!
//! Stage: build time, first stage. Inputs are triangle meshes in asset units (with a unit
//! scale to metres), a tree of transform nodes and instances that place meshes under it,
//! or an OBJ file ([`obj`]). Output is [`WorldTriangles`]: every triangle in world metres,
//! with its area tag and the instance (hence [`SourceVersion`](crate::ids::SourceVersion))
//! it came from.
//!
//! Invariants (spec 002, "世界空间与缩放"):
//! - every transform is applied once, in full: unit scale, local transform, then each
//!   ancestor up to the root;
//! - a mirroring transform (negative determinant) flips the winding, so normals keep
//!   pointing out of the surface;
//! - degenerate triangles are dropped by an area tolerance and counted, never silently;
//! - bad input (NaN, infinite or out-of-range coordinates, out-of-range indices, singular
//!   transforms, nothing to stand on) is a [`GeometryError`] naming the instance and value;
//! - an instance's source version changes exactly when its mesh, its local transform or an
//!   ancestor transform changes.

#[cfg(feature = "harness")]
pub mod city;
mod error;
#[cfg(feature = "harness")]
pub mod flow_levels;
pub mod gltf;
mod graph;
#[cfg(feature = "harness")]
pub mod hills;
mod mesh;
pub mod obj;
#[cfg(feature = "harness")]
pub mod proving_ground;
mod world;

pub use error::GeometryError;
pub use graph::{Instance, InstanceDesc, InstanceId, MeshId, NodeId, Scene};
pub use mesh::TriMesh;
pub use world::{COORDINATE_LIMIT_M, InstanceSummary, WorldOptions, WorldTriangles};
