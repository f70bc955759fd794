//! Debug drawing: what the navigation data looks like, for people.
//!
//! Stage: top layer (imports everything, imported by nothing but the CLI and tests). The
//! [`DebugDraw`] trait needs only points, lines and triangles tagged with a [`DrawKind`];
//! free `draw_*` functions feed it; a [`picture::Picture`] collects them and writes a
//! top-down SVG (`svg`) or rasterises them for a PNG (`raster`).

pub mod picture;
pub mod raster;
pub mod svg;

use glam::Vec3;

use crate::ids::AreaId;
use crate::mesh::{TileData, TilePoly};
#[cfg(feature = "bake")]
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
    /// An allowed stand region's outline (target projection).
    AllowedRegion,
    /// A legal region fragment (target projection).
    Fragment,
    /// An occluder's plan outline.
    Occluder,
    /// A sight line from a hand or eye to a contact.
    SightLine,
    /// A probe's centre path.
    ProbePath,
    /// A candidate pose that failed a check.
    RejectedCandidate,
    /// An agent's corridor (through its portal midpoints).
    Corridor,
    /// An agent's velocity.
    Velocity,
    /// A polygon of a moving support (a belt), over its area's fill.
    Support,
    /// A support's surface velocity, an arrow from the polygon's centre (1 m per m/s).
    SupportMotion,
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
#[cfg(feature = "bake")]
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
    draw_placed_tiles(tiles, |_| crate::crowd::PlatformPose::IDENTITY, drawer);
}

/// [`draw_tiles`] with each polygon placed by `placement` of its support layer (a
/// platform's pose: its polygons drawn where it stands, not where they were baked); a
/// tile outline then bounds the polygons as drawn.
fn draw_placed_tiles(
    tiles: &[TileData],
    placement: impl Fn(u16) -> crate::crowd::PlatformPose,
    drawer: &mut impl DebugDraw,
) {
    for tile in tiles {
        let (mut low, mut high) = (
            Vec3::from_array(tile.header.bounds_min),
            Vec3::from_array(tile.header.bounds_max),
        );
        let mut moved = false;
        let (mut drawn_low, mut drawn_high) =
            (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for polygon in &tile.polygons {
            let pose = placement(polygon.layer);
            moved |= pose != crate::crowd::PlatformPose::IDENTITY;
            let corners: Vec<Vec3> = polygon
                .vertex_indices()
                .iter()
                .map(|&v| pose.place(tile.vertex(v)))
                .collect();
            for &corner in &corners {
                (drawn_low, drawn_high) = (drawn_low.min(corner), drawn_high.max(corner));
            }
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
        if moved {
            (low, high) = (drawn_low, drawn_high);
        }
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

/// Draws a target projection in plan: walkable polygons used, allowed regions, fragments
/// (outlined from their exact slices), occluder outlines, every candidate tried (the
/// verified one as a marker), and the chosen pose's sight line and probe path.
pub fn draw_target(
    record: &crate::target::TargetRecord,
    result: &crate::target::TargetResult,
    world: &crate::target::StaticWorld,
    drawer: &mut impl DebugDraw,
) {
    use crate::target::{Shape, StandArea, Verdict};
    let at = |x: f32, z: f32| Vec3::new(x, 0.0, z);
    for face in &result.region.walkable {
        let corners: Vec<Vec3> = face.corners.iter().map(|c| at(c.x, c.y)).collect();
        drawer.polygon(DrawKind::Polygon(AreaId::GROUND), &corners);
    }
    match &record.stand {
        StandArea::Region { polygons, .. } => {
            for polygon in polygons {
                for (index, corner) in polygon.iter().enumerate() {
                    let next = polygon[(index + 1) % polygon.len()];
                    drawer.line(
                        DrawKind::AllowedRegion,
                        at(corner.x, corner.y),
                        at(next.x, next.y),
                    );
                }
            }
        }
        StandArea::Points { points, .. } => {
            for point in points {
                drawer.point(DrawKind::AllowedRegion, *point);
            }
        }
    }
    for fragment in &result.region.fragments {
        let (low, high) = fragment.x_extent;
        let samples = 48;
        let mut lower = Vec::new();
        let mut upper = Vec::new();
        for step in 0..=samples {
            let x = low + (high - low) * step as f32 / samples as f32;
            let x = x.clamp(low + 1e-5 * (high - low), high - 1e-5 * (high - low));
            if let Some(interval) = fragment.region.slice(x).first() {
                lower.push(at(x, interval.low));
                upper.push(at(x, interval.high));
            }
        }
        upper.reverse();
        lower.extend(upper);
        if lower.len() >= 3 {
            drawer.polygon(DrawKind::Fragment, &lower);
        }
    }
    for (_, shape, _) in world.iter() {
        if let Shape::Box { min, max } = shape {
            let corners = [
                at(min.x, min.z),
                at(max.x, min.z),
                at(max.x, max.z),
                at(min.x, max.z),
            ];
            for index in 0..4 {
                drawer.line(DrawKind::Occluder, corners[index], corners[(index + 1) % 4]);
            }
        }
    }
    for attempt in &result.attempts {
        if !attempt.report.passed {
            drawer.point(DrawKind::RejectedCandidate, attempt.report.foot);
        }
    }
    if let Verdict::Success(pose) = &result.verdict {
        drawer.point(DrawKind::Marker, pose.foot);
        if let Some(attempt) = result.attempts.iter().find(|a| a.report.passed) {
            if let Some(sight) = &attempt.report.sight {
                drawer.line(DrawKind::SightLine, sight.from, record.interaction.contact);
            }
            if let Some(probe) = &attempt.report.probe {
                drawer.line(DrawKind::ProbePath, probe.hand, probe.centre_end);
            }
        }
    }
    drawer.point(DrawKind::Marker, record.interaction.contact);
}

/// Draws a crowd: the mesh's tiles (a platform's polygons where it stands now), each
/// moving agent's corridor from its cursor (through portal midpoints), agents as markers
/// and their velocities as one-second segments, all in the world.
pub fn draw_crowd(crowd: &crate::crowd::Crowd, drawer: &mut impl DebugDraw) {
    let snapshot = crowd.snapshot();
    let tiles: Vec<TileData> = (0..snapshot.data().slots.len())
        .filter_map(|slot| snapshot.live_slot(crate::mesh::TileSlot(slot as u16)))
        .map(|(tile, _)| tile.data.clone())
        .collect();
    let platforms = crowd.platform_frames();
    let placement = |layer: u16| platforms.pose(u32::from(layer));
    draw_placed_tiles(&tiles, placement, drawer);
    // Supports over the floor: each polygon of one, and where its surface goes.
    for tile in &tiles {
        for polygon in tile.polygons.iter().filter(|polygon| polygon.layer > 0) {
            let corners: Vec<Vec3> = polygon
                .vertex_indices()
                .iter()
                .map(|&v| placement(polygon.layer).place(tile.vertex(v)))
                .collect();
            drawer.polygon(DrawKind::Support, &corners);
            let support = crate::ids::SupportId(u32::from(polygon.layer) - 1);
            // The surface velocity at the polygon's centre: a belt's everywhere, a
            // turntable's arrows circling its centre.
            let centre = corners.iter().copied().sum::<Vec3>() / corners.len() as f32;
            let motion = crowd.support_motion(support).velocity_at(centre);
            if motion != Vec3::ZERO {
                drawer.line(DrawKind::SupportMotion, centre, centre + motion);
            }
        }
    }
    let lanes = crowd.lanes();
    for slot in 0..lanes.len() {
        let pose = platforms.pose(lanes.support[slot]);
        let position = pose.place(lanes.position(slot));
        if let Some(corridor) = &lanes.corridor[slot] {
            let mut previous = position;
            let portals = (lanes.cursor[slot] as usize..corridor.len())
                .map_while(|index| corridor.portal(snapshot, index));
            for (left, right) in portals {
                // (Drawn in the agent's own frame: a corridor on from a platform to the
                // ground shows its part off the platform where the platform puts it.)
                let middle = pose.place((left + right) * 0.5);
                drawer.line(DrawKind::Corridor, previous, middle);
                previous = middle;
            }
        }
        let velocity = Vec3::new(lanes.velocity_x[slot], 0.0, lanes.velocity_z[slot]);
        drawer.line(DrawKind::Velocity, position, position + velocity);
        drawer.point(DrawKind::Marker, position);
    }
}
