//! Triangle meshes in asset units.

use glam::Vec3;

use crate::ids::AreaId;

/// An indexed triangle mesh as authored: positions in asset units and a scale to metres.
///
/// Triangles are counter-clockwise seen from the side their surface faces (the walkable
/// side of a floor). Validation happens when the scene is turned into world triangles, where
/// the instance using the mesh can be named.
#[derive(Clone, Debug, PartialEq)]
pub struct TriMesh {
    /// Name used in errors and reports.
    pub name: String,
    /// Vertex positions. Units: asset units.
    pub positions: Vec<Vec3>,
    /// Three vertex indices per triangle.
    pub triangles: Vec<[u32; 3]>,
    /// Metres per asset unit (0.01 for a centimetre asset). Limit: finite, > 0.
    pub unit_scale_m: f32,
    /// Area tag per triangle; `None` tags every triangle [`AreaId::GROUND`].
    pub areas: Option<Vec<AreaId>>,
}

impl TriMesh {
    /// A mesh in metres with every triangle tagged ground.
    pub fn new(name: impl Into<String>, positions: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Self {
        TriMesh {
            name: name.into(),
            positions,
            triangles,
            unit_scale_m: 1.0,
            areas: None,
        }
    }

    /// Sets the metres per asset unit.
    pub fn with_unit_scale(mut self, unit_scale_m: f32) -> Self {
        self.unit_scale_m = unit_scale_m;
        self
    }

    /// Tags every triangle with one area.
    pub fn with_area(mut self, area: AreaId) -> Self {
        self.areas = Some(vec![area; self.triangles.len()]);
        self
    }

    /// Area of triangle `index` (ground when untagged).
    pub fn area(&self, index: usize) -> AreaId {
        self.areas
            .as_ref()
            .and_then(|areas| areas.get(index).copied())
            .unwrap_or_default()
    }

    /// An axis-aligned box between `min` and `max` (metres), twelve triangles, normals out.
    pub fn axis_box(name: impl Into<String>, min: Vec3, max: Vec3) -> Self {
        let corner = |x: bool, y: bool, z: bool| {
            Vec3::new(
                if x { max.x } else { min.x },
                if y { max.y } else { min.y },
                if z { max.z } else { min.z },
            )
        };
        // Corners indexed by bits (x, y, z): index = x + 2y + 4z.
        let positions: Vec<Vec3> = (0..8)
            .map(|bits| corner(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0))
            .collect();
        // Each face as a quad, counter-clockwise seen from outside.
        const FACES: [[u32; 4]; 6] = [
            [2, 6, 7, 3], // +Y (top)
            [0, 1, 5, 4], // -Y (bottom)
            [1, 3, 7, 5], // +X
            [0, 4, 6, 2], // -X
            [4, 5, 7, 6], // +Z
            [0, 2, 3, 1], // -Z
        ];
        let triangles = FACES
            .iter()
            .flat_map(|&[a, b, c, d]| [[a, b, c], [a, c, d]])
            .collect();
        TriMesh::new(name, positions, triangles)
    }

    /// A single quad `a b c d` (counter-clockwise seen from the side it faces), two triangles.
    pub fn quad(name: impl Into<String>, corners: [Vec3; 4]) -> Self {
        TriMesh::new(name, corners.to_vec(), vec![[0, 1, 2], [0, 2, 3]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::triangle;

    #[test]
    fn box_faces_point_outward() {
        let (min, max) = (Vec3::new(-1.0, 0.0, 2.0), Vec3::new(3.0, 0.5, 4.0));
        let centre = (min + max) * 0.5;
        let mesh = TriMesh::axis_box("box", min, max);
        assert_eq!(mesh.triangles.len(), 12);
        for [a, b, c] in &mesh.triangles {
            let (a, b, c) = (
                mesh.positions[*a as usize],
                mesh.positions[*b as usize],
                mesh.positions[*c as usize],
            );
            let normal = triangle::try_normal(a, b, c).unwrap();
            let face_centre = (a + b + c) / 3.0;
            assert!(
                normal.dot(face_centre - centre) > 0.0,
                "inward face {a} {b} {c}"
            );
        }
    }
}
