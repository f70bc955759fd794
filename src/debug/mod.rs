//! Debug drawing: what the navigation data looks like, for people.
//!
//! Stage: top layer (imports everything, imported by nothing but the CLI and tests). The
//! [`DebugDraw`] trait needs only points, lines and triangles tagged with a [`DrawKind`];
//! free `draw_*` functions feed it; [`svg::SvgDrawer`] turns it into a top-down SVG.

pub mod svg;

use glam::Vec3;

use crate::ids::AreaId;
use crate::mesh::{TileData, TilePoly};
use crate::scene::WorldTriangles;

/// What a primitive shows; backends pick colour and layer from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DrawKind {
    /// Input geometry that is not walkable by slope.
    InputUnwalkable,
    /// Input geometry walkable by slope (whether or not it survived the bake).
    InputWalkable,
    /// A navmesh polygon, filled by its area.
    Polygon(AreaId),
    /// An edge between two polygons.
    PolygonEdge,
    /// A polygon edge with nothing across it.
    WallEdge,
    /// A tile's outline.
    TileBorder,
    /// A marker (probe points, agents).
    Marker,
}

/// A sink for debug primitives.
pub trait DebugDraw {
    /// A line segment.
    fn line(&mut self, kind: DrawKind, a: Vec3, b: Vec3);
    /// A filled triangle.
    fn triangle(&mut self, kind: DrawKind, corners: [Vec3; 3]);
    /// A filled convex polygon (backends without polygons may fan it into triangles).
    fn polygon(&mut self, kind: DrawKind, corners: &[Vec3]) {
        for i in 1..corners.len().saturating_sub(1) {
            self.triangle(kind, [corners[0], corners[i], corners[i + 1]]);
        }
    }
    /// A point marker.
    fn point(&mut self, kind: DrawKind, at: Vec3);
}

/// Draws the input triangles, grey where their slope is beyond `walkable_slope_cos`.
pub fn draw_input(world: &WorldTriangles, walkable_slope_cos: f32, drawer: &mut impl DebugDraw) {
    for corners in &world.corners {
        let walkable = crate::geom::triangle::try_normal(corners[0], corners[1], corners[2])
            .is_some_and(|normal| normal.y > walkable_slope_cos);
        let kind = if walkable {
            DrawKind::InputWalkable
        } else {
            DrawKind::InputUnwalkable
        };
        drawer.triangle(kind, *corners);
    }
}

/// Draws tiles: polygons by area, their edges (walls distinct), and tile outlines.
pub fn draw_tiles(tiles: &[TileData], drawer: &mut impl DebugDraw) {
    for tile in tiles {
        for polygon in &tile.polygons {
            let corners: Vec<Vec3> = polygon
                .vertex_indices()
                .iter()
                .map(|&v| tile.vertex(v))
                .collect();
            drawer.polygon(DrawKind::Polygon(AreaId(polygon.area)), &corners);
            for (edge, &neighbour) in polygon.neighbours[..corners.len()].iter().enumerate() {
                let kind = if neighbour == TilePoly::NO_NEIGHBOUR {
                    DrawKind::WallEdge
                } else {
                    DrawKind::PolygonEdge
                };
                drawer.line(kind, corners[edge], corners[(edge + 1) % corners.len()]);
            }
        }
        let (low, high) = (
            Vec3::from_array(tile.header.bounds_min),
            Vec3::from_array(tile.header.bounds_max),
        );
        let corners = [
            Vec3::new(low.x, high.y, low.z),
            Vec3::new(high.x, high.y, low.z),
            Vec3::new(high.x, high.y, high.z),
            Vec3::new(low.x, high.y, high.z),
        ];
        for i in 0..4 {
            drawer.line(DrawKind::TileBorder, corners[i], corners[(i + 1) % 4]);
        }
    }
}
