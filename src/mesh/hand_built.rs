//! Tiles written by hand: walkable space given directly as convex polygons.
//!
//! Stage: runtime input, beside baked tiles. Scenario files, tests and tools that describe
//! walkable space as a few polygons (a seat's floor patch, a test corridor) get a real
//! [`TileData`] that every query runs on, without a bake.
//!
//! Input: convex polygons of 3 to 6 corners in world metres, either winding, with area,
//! flags and support layer. Output: one tile whose polygons wind as the tile invariant
//! requires, whose shared edges (same two corners, within [`WELD_M`]) are neighbours, and
//! whose detail mesh is each polygon's own fan (heights interpolate the corners).

use crate::geom::limits;
use glam::{Vec2, Vec3};

use super::tile::{DetailSubMesh, PolyFlags, TileData, TileHeader, TilePoly};
use crate::geom::planar::{is_convex, signed_area};
use crate::ids::AreaId;

/// Corners closer than this are one vertex, metres.
pub const WELD_M: f32 = 1e-4;

/// One walkable polygon of a hand-built tile.
#[derive(Clone, Debug, PartialEq)]
pub struct WalkablePolygon {
    /// Corners, world metres, 3 to 6, convex seen from above, either winding.
    pub corners: Vec<Vec3>,
    /// Area id.
    pub area: AreaId,
    /// Support layer (0: static ground, `n + 1`: moving support `n`).
    pub layer: u16,
}

impl WalkablePolygon {
    /// Ground-layer polygon of the default area.
    pub fn ground(corners: Vec<Vec3>) -> WalkablePolygon {
        WalkablePolygon {
            corners,
            area: AreaId::GROUND,
            layer: 0,
        }
    }
}

/// Why polygons cannot form a tile.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum HandBuiltError {
    /// A polygon with fewer than 3 or more than 6 corners.
    #[error("walkable polygon {polygon} has {corners} corners; 3 to 6 are allowed")]
    CornerCount {
        /// Polygon index.
        polygon: usize,
        /// Its corner count.
        corners: usize,
    },
    /// A corner with a NaN or infinite coordinate, or one beyond
    /// [`COORDINATE_MAX_M`](crate::geom::limits::COORDINATE_MAX_M).
    #[error(
        "walkable polygon {polygon} corner {corner} is {value}: not finite or beyond {} m",
        limits::COORDINATE_MAX_M
    )]
    NotFinite {
        /// Polygon index.
        polygon: usize,
        /// Corner index.
        corner: usize,
        /// The value.
        value: Vec3,
    },
    /// A polygon that is not convex seen from above, or has no area.
    #[error("walkable polygon {polygon} is not convex (or has no area) seen from above")]
    NotConvex {
        /// Polygon index.
        polygon: usize,
    },
    /// An area id above [`AreaId::MAX`].
    #[error(
        "walkable polygon {polygon} has area {area}; at most {} is allowed",
        AreaId::MAX
    )]
    BadArea {
        /// Polygon index.
        polygon: usize,
        /// The area.
        area: u8,
    },
    /// More polygons or vertices than a tile indexes.
    #[error("{count} {what} do not fit one tile (at most {limit})")]
    TooMany {
        /// Polygons or vertices.
        what: &'static str,
        /// How many.
        count: usize,
        /// The limit.
        limit: usize,
    },
}

impl TileData {
    /// A tile at grid position (0, 0) holding exactly `polygons`.
    pub fn from_walkable_polygons(
        polygons: &[WalkablePolygon],
    ) -> Result<TileData, HandBuiltError> {
        let limit = usize::from(u16::MAX - 1) & !TilePoly::TILE_EDGE as usize;
        if polygons.len() > limit {
            return Err(HandBuiltError::TooMany {
                what: "polygons",
                count: polygons.len(),
                limit,
            });
        }
        let mut tile = TileData::default();
        let mut bounds_min = Vec3::splat(f32::INFINITY);
        let mut bounds_max = Vec3::splat(f32::NEG_INFINITY);
        for (index, polygon) in polygons.iter().enumerate() {
            let count = polygon.corners.len();
            if !(3..=6).contains(&count) {
                return Err(HandBuiltError::CornerCount {
                    polygon: index,
                    corners: count,
                });
            }
            if let Some((corner, &value)) = polygon
                .corners
                .iter()
                .enumerate()
                .find(|(_, c)| !limits::within_each(**c, limits::COORDINATE_MAX_M))
            {
                return Err(HandBuiltError::NotFinite {
                    polygon: index,
                    corner,
                    value,
                });
            }
            if polygon.area.0 > AreaId::MAX {
                return Err(HandBuiltError::BadArea {
                    polygon: index,
                    area: polygon.area.0,
                });
            }
            let flat: Vec<Vec2> = polygon
                .corners
                .iter()
                .map(|c| Vec2::new(c.x, c.z))
                .collect();
            if !is_convex(&flat) {
                return Err(HandBuiltError::NotConvex { polygon: index });
            }
            // The tile invariant: clockwise in (x, z) maths orientation, which is
            // counter-clockwise seen from above with +Y up.
            let mut corners = polygon.corners.clone();
            if signed_area(&flat) > 0.0 {
                corners.reverse();
            }
            let mut record = TilePoly {
                vertices: [TilePoly::NO_VERTEX; 6],
                neighbours: [TilePoly::NO_NEIGHBOUR; 6],
                vertex_count: count as u8,
                area: polygon.area.0,
                region: index as u16,
                flags: PolyFlags::for_area(polygon.area.0),
                layer: polygon.layer,
            };
            for (slot, corner) in record.vertices.iter_mut().zip(&corners) {
                bounds_min = bounds_min.min(*corner);
                bounds_max = bounds_max.max(*corner);
                let existing = tile
                    .vertices
                    .iter()
                    .position(|v| Vec3::from(*v).distance(*corner) <= WELD_M);
                *slot = match existing {
                    Some(vertex) => vertex as u16,
                    None => {
                        if tile.vertices.len() >= usize::from(TilePoly::NO_VERTEX) {
                            return Err(HandBuiltError::TooMany {
                                what: "vertices",
                                count: tile.vertices.len() + 1,
                                limit: usize::from(TilePoly::NO_VERTEX),
                            });
                        }
                        tile.vertices.push(corner.to_array());
                        (tile.vertices.len() - 1) as u16
                    }
                };
            }
            tile.detail_meshes.push(DetailSubMesh {
                vertex_base: 0,
                triangle_base: tile.detail_triangles.len() as u32,
                vertex_count: 0,
                triangle_count: (count - 2) as u32,
            });
            for corner in 1..count - 1 {
                tile.detail_triangles
                    .push([0, corner as u8, corner as u8 + 1, 0]);
            }
            tile.polygons.push(record);
        }
        // Neighbours: an edge a -> b meets the edge b -> a of another polygon.
        let edges: Vec<(u16, u16, usize, usize)> = tile
            .polygons
            .iter()
            .enumerate()
            .flat_map(|(index, polygon)| {
                let indices = polygon.vertex_indices().to_vec();
                let count = indices.len();
                (0..count)
                    .map(move |edge| (indices[edge], indices[(edge + 1) % count], index, edge))
            })
            .collect();
        for &(a, b, index, edge) in &edges {
            if let Some(&(_, _, other, _)) = edges
                .iter()
                .find(|&&(c, d, other, _)| c == b && d == a && other != index)
            {
                tile.polygons[index].neighbours[edge] = other as u16;
            }
        }
        if !polygons.is_empty() {
            tile.header = TileHeader {
                tile_x: 0,
                tile_z: 0,
                bounds_min: bounds_min.to_array(),
                bounds_max: bounds_max.to_array(),
                cell_size_m: 0.0,
                cell_height_m: 0.0,
            };
        }
        Ok(tile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_squares_sharing_an_edge_are_neighbours_and_valid() {
        let square = |x0: f32| {
            WalkablePolygon::ground(vec![
                Vec3::new(x0, 0.0, 0.0),
                Vec3::new(x0 + 1.0, 0.0, 0.0),
                Vec3::new(x0 + 1.0, 0.0, 1.0),
                Vec3::new(x0, 0.0, 1.0),
            ])
        };
        let tile = TileData::from_walkable_polygons(&[square(0.0), square(1.0)]).unwrap();
        tile.validate().unwrap();
        assert_eq!(tile.vertices.len(), 6);
        assert_eq!(
            tile.polygons[0].neighbours[..4]
                .iter()
                .filter(|&&n| n == 1)
                .count(),
            1
        );
        assert!((tile.walkable_area_m2() - 2.0).abs() < 1e-6);
    }

    #[test]
    fn bad_polygons_are_named() {
        let dart = WalkablePolygon::ground(vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 1.0),
            Vec3::new(0.0, 0.0, 2.0),
            Vec3::new(0.5, 0.0, 1.0),
        ]);
        assert_eq!(
            TileData::from_walkable_polygons(&[dart]),
            Err(HandBuiltError::NotConvex { polygon: 0 })
        );
        let nan = WalkablePolygon::ground(vec![Vec3::ZERO, Vec3::X, Vec3::new(0.0, f32::NAN, 1.0)]);
        assert!(matches!(
            TileData::from_walkable_polygons(&[nan]),
            Err(HandBuiltError::NotFinite {
                polygon: 0,
                corner: 2,
                ..
            })
        ));
    }
}
