//! Errors in input geometry, each naming the instance (or mesh, node) and the bad value.

use glam::Vec3;

/// Input geometry the baker cannot use.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GeometryError {
    /// The scene has no instances, or its instances have no triangles.
    #[error("the scene has no triangles")]
    Empty,
    /// Every triangle was degenerate or unwalkable input: no surface can be built.
    #[error(
        "no stable surface: all {degenerate} of {triangles} triangles are degenerate (area below {tolerance_m2} m²)"
    )]
    NoSurface {
        /// Triangles read.
        triangles: usize,
        /// Triangles dropped as degenerate.
        degenerate: usize,
        /// The area tolerance in force, m².
        tolerance_m2: f32,
    },
    /// A vertex position is NaN or infinite.
    #[error("instance '{instance}' (mesh '{mesh}'): vertex {vertex} is not finite: {value}")]
    NonFinitePosition {
        /// Instance name.
        instance: String,
        /// Mesh name.
        mesh: String,
        /// Vertex index in the mesh.
        vertex: usize,
        /// The position as read, asset units.
        value: Vec3,
    },
    /// A world coordinate lies beyond [`COORDINATE_LIMIT_M`](super::COORDINATE_LIMIT_M).
    #[error(
        "instance '{instance}' (mesh '{mesh}'): vertex {vertex} lies at {value} m, beyond the {limit_m} m coordinate limit"
    )]
    CoordinateOutOfRange {
        /// Instance name.
        instance: String,
        /// Mesh name.
        mesh: String,
        /// Vertex index in the mesh.
        vertex: usize,
        /// The world position, metres.
        value: Vec3,
        /// The limit in force, metres.
        limit_m: f32,
    },
    /// A triangle refers to a vertex the mesh does not have.
    #[error(
        "mesh '{mesh}': triangle {triangle} uses vertex {index}, but the mesh has {vertex_count} vertices"
    )]
    IndexOutOfRange {
        /// Mesh name.
        mesh: String,
        /// Triangle index.
        triangle: usize,
        /// The bad vertex index.
        index: u32,
        /// Vertices in the mesh.
        vertex_count: usize,
    },
    /// The scene holds more triangles than the bake takes.
    #[error(
        "instance '{instance}' brings the scene to {triangles} triangles, over the limit of {limit} (TRIANGLES_MAX)"
    )]
    TooManyTriangles {
        /// The instance that went past the limit.
        instance: String,
        /// Triangles with that instance's counted.
        triangles: usize,
        /// The limit, [`crate::geom::limits::TRIANGLES_MAX`].
        limit: usize,
    },
    /// A mesh's per-triangle area list does not match its triangle count.
    #[error("mesh '{mesh}': {areas} area tags for {triangles} triangles")]
    AreaCountMismatch {
        /// Mesh name.
        mesh: String,
        /// Area tags given.
        areas: usize,
        /// Triangles in the mesh.
        triangles: usize,
    },
    /// A mesh's unit scale is not a finite positive number.
    #[error("mesh '{mesh}': unit scale {value} is not a finite positive number")]
    BadUnitScale {
        /// Mesh name.
        mesh: String,
        /// The unit scale given.
        value: f32,
    },
    /// A transform has NaN or infinite coefficients.
    #[error("{owner}: transform is not finite")]
    NonFiniteTransform {
        /// Which node or instance ("node 'bridge'", "instance 'door'").
        owner: String,
    },
    /// An instance's full world transform flattens space (determinant near zero), so its
    /// triangles have no stable normals.
    #[error("instance '{instance}': world transform is singular (determinant {determinant})")]
    SingularTransform {
        /// Instance name.
        instance: String,
        /// Determinant of the full world transform's linear part.
        determinant: f32,
    },
    /// An id from another scene, or one past the end.
    #[error("{kind} id {index} does not exist in this scene")]
    UnknownId {
        /// "mesh", "node" or "instance".
        kind: &'static str,
        /// The index given.
        index: u32,
    },
    /// Making a node its own ancestor.
    #[error("node {node} cannot have {parent} as parent: that would make a cycle")]
    Cycle {
        /// The node being re-parented.
        node: u32,
        /// The proposed parent.
        parent: u32,
    },
}
