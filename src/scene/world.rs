//! Scene to world triangles: every transform applied once, in full, to metres.

use glam::{Affine3A, Vec3};

use super::error::GeometryError;
use super::graph::{InstanceId, Scene};
use crate::geom::{Aabb, transform, triangle};
use crate::ids::{AreaId, SourceVersion, SupportId};

/// Largest absolute world coordinate a level's vertex may have, metres: the crate's
/// [`COORDINATE_MAX_M`](crate::geom::limits::COORDINATE_MAX_M).
pub const COORDINATE_LIMIT_M: f32 = crate::geom::limits::COORDINATE_MAX_M;

/// A world transform whose determinant magnitude is below this flattens space: its
/// triangles have no normals to judge slope by.
const SINGULAR_DETERMINANT: f32 = 1.0e-15;

/// Tolerances for [`Scene::world_triangles_with`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldOptions {
    /// Triangles whose world area is below this are dropped as degenerate and counted.
    /// Units: m². Limit: finite, >= 0.
    pub degenerate_area_m2: f32,
}

impl Default for WorldOptions {
    fn default() -> Self {
        WorldOptions {
            degenerate_area_m2: triangle::DEGENERATE_AREA_M2,
        }
    }
}

/// What one instance contributed to the world triangles.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceSummary {
    /// The instance.
    pub instance: InstanceId,
    /// Its name.
    pub name: String,
    /// Its source version at the time of the pass.
    pub source_version: SourceVersion,
    /// Moving support it belongs to, if any.
    pub support: Option<SupportId>,
    /// Whether its world transform mirrors space (winding was flipped).
    pub mirrored: bool,
    /// Triangles kept.
    pub triangles_kept: usize,
    /// Triangles dropped as degenerate.
    pub degenerate_dropped: usize,
    /// World bounds of its kept triangles, metres.
    pub bounds: Aabb,
}

/// Every triangle of a scene in world metres, ready for the baker.
///
/// Triangles are counter-clockwise seen from the side they face, in world space, whatever
/// transforms they went through. The per-triangle columns share one index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorldTriangles {
    /// Corner positions per triangle. Units: metres.
    pub corners: Vec<[Vec3; 3]>,
    /// Area tag per triangle.
    pub areas: Vec<AreaId>,
    /// Instance each triangle came from (index into the scene's instances).
    pub sources: Vec<InstanceId>,
    /// One summary per instance, in instance order.
    pub instances: Vec<InstanceSummary>,
    /// Bounds of every kept triangle, metres.
    pub bounds: Aabb,
    /// Triangles read from all instances.
    pub triangles_read: usize,
    /// Triangles dropped as degenerate.
    pub degenerate_dropped: usize,
}

impl WorldTriangles {
    /// Triangles kept.
    pub fn len(&self) -> usize {
        self.corners.len()
    }

    /// Whether no triangle was kept.
    pub fn is_empty(&self) -> bool {
        self.corners.is_empty()
    }

    /// Total area of the kept triangles, m².
    pub fn total_area_m2(&self) -> f64 {
        self.corners
            .iter()
            .map(|[a, b, c]| f64::from(triangle::area(*a, *b, *c)))
            .sum()
    }
}

impl Scene {
    /// Every triangle in world metres with the default tolerances.
    pub fn world_triangles(&self) -> Result<WorldTriangles, GeometryError> {
        self.world_triangles_with(&WorldOptions::default())
    }

    /// Every triangle in world metres.
    ///
    /// Each instance's positions are scaled by its mesh's unit scale, then by its full world
    /// transform (ancestor chain x local), once. A mirroring transform flips the winding;
    /// triangles below the area tolerance are dropped and counted.
    pub fn world_triangles_with(
        &self,
        options: &WorldOptions,
    ) -> Result<WorldTriangles, GeometryError> {
        let mut world = WorldTriangles::default();
        let mut corner_buffer: Vec<Vec3> = Vec::new();
        for index in 0..self.instances().len() {
            let id = InstanceId(index as u32);
            let summary =
                self.add_instance_triangles(id, options, &mut corner_buffer, &mut world)?;
            world.bounds.add_box(&summary.bounds);
            world.instances.push(summary);
        }
        if world.triangles_read == 0 {
            return Err(GeometryError::Empty);
        }
        if world.corners.is_empty() {
            return Err(GeometryError::NoSurface {
                triangles: world.triangles_read,
                degenerate: world.degenerate_dropped,
                tolerance_m2: options.degenerate_area_m2,
            });
        }
        Ok(world)
    }

    fn add_instance_triangles(
        &self,
        id: InstanceId,
        options: &WorldOptions,
        world_positions: &mut Vec<Vec3>,
        world: &mut WorldTriangles,
    ) -> Result<InstanceSummary, GeometryError> {
        let instance = &self.instances()[id.0 as usize];
        let desc = &instance.desc;
        let mesh = self
            .mesh(desc.mesh)
            .expect("instance meshes are checked on insertion");
        let triangles = world.triangles_read.saturating_add(mesh.triangles.len());
        if triangles > crate::geom::limits::TRIANGLES_MAX {
            return Err(GeometryError::TooManyTriangles {
                instance: desc.name.clone(),
                triangles,
                limit: crate::geom::limits::TRIANGLES_MAX,
            });
        }
        let world_transform = self.checked_world_transform(id, mesh)?;
        let mirrored = transform::mirrors(&world_transform);

        if let Some(areas) = &mesh.areas {
            if areas.len() != mesh.triangles.len() {
                return Err(GeometryError::AreaCountMismatch {
                    mesh: mesh.name.clone(),
                    areas: areas.len(),
                    triangles: mesh.triangles.len(),
                });
            }
        }

        // Transform every vertex once; checking here names the vertex and its value.
        world_positions.clear();
        for (vertex, &position) in mesh.positions.iter().enumerate() {
            if !position.is_finite() {
                return Err(GeometryError::NonFinitePosition {
                    instance: desc.name.clone(),
                    mesh: mesh.name.clone(),
                    vertex,
                    value: position,
                });
            }
            let world_position = world_transform.transform_point3(position);
            if !(world_position.abs().max_element() <= COORDINATE_LIMIT_M) {
                return Err(GeometryError::CoordinateOutOfRange {
                    instance: desc.name.clone(),
                    mesh: mesh.name.clone(),
                    vertex,
                    value: world_position,
                    limit_m: COORDINATE_LIMIT_M,
                });
            }
            world_positions.push(world_position);
        }

        let mut summary = InstanceSummary {
            instance: id,
            name: desc.name.clone(),
            source_version: self.source_version(id).expect("instance exists"),
            support: desc.support,
            mirrored,
            triangles_kept: 0,
            degenerate_dropped: 0,
            bounds: Aabb::EMPTY,
        };
        world.triangles_read += mesh.triangles.len();
        for (triangle_index, indices) in mesh.triangles.iter().enumerate() {
            let mut corners = [Vec3::ZERO; 3];
            for (corner, &vertex) in corners.iter_mut().zip(indices) {
                *corner = *world_positions.get(vertex as usize).ok_or_else(|| {
                    GeometryError::IndexOutOfRange {
                        mesh: mesh.name.clone(),
                        triangle: triangle_index,
                        index: vertex,
                        vertex_count: mesh.positions.len(),
                    }
                })?;
            }
            if mirrored {
                corners.swap(1, 2);
            }
            let [a, b, c] = corners;
            // NOTE: `!(x >= tol)` also drops a NaN area, which finite corners cannot produce
            // but costs nothing to guard.
            if !(triangle::area(a, b, c) >= options.degenerate_area_m2) {
                summary.degenerate_dropped += 1;
                continue;
            }
            corners
                .iter()
                .for_each(|&corner| summary.bounds.add_point(corner));
            world.corners.push(corners);
            world.areas.push(mesh.area(triangle_index));
            world.sources.push(id);
            summary.triangles_kept += 1;
        }
        world.degenerate_dropped += summary.degenerate_dropped;
        Ok(summary)
    }

    /// The full world transform including the mesh's unit scale, after checking that every
    /// part of it is finite and that it does not flatten space.
    fn checked_world_transform(
        &self,
        id: InstanceId,
        mesh: &super::TriMesh,
    ) -> Result<Affine3A, GeometryError> {
        let desc = &self.instances()[id.0 as usize].desc;
        if !(mesh.unit_scale_m.is_finite() && mesh.unit_scale_m > 0.0) {
            return Err(GeometryError::BadUnitScale {
                mesh: mesh.name.clone(),
                value: mesh.unit_scale_m,
            });
        }
        if !transform::is_finite(&desc.local) {
            return Err(GeometryError::NonFiniteTransform {
                owner: format!("instance '{}'", desc.name),
            });
        }
        if let Some(node) = self.non_finite_ancestor(id) {
            return Err(GeometryError::NonFiniteTransform {
                owner: format!("node '{}'", self.node_name(node).unwrap_or("?")),
            });
        }
        let world_transform = self.world_transform(id).expect("instance exists")
            * Affine3A::from_scale(Vec3::splat(mesh.unit_scale_m));
        let determinant = transform::determinant(&world_transform);
        if !(determinant.abs() >= SINGULAR_DETERMINANT) {
            return Err(GeometryError::SingularTransform {
                instance: desc.name.clone(),
                determinant,
            });
        }
        Ok(world_transform)
    }
}
