//! The collision world pose validation asks: primitive shapes with stable ids, signed
//! distances, segment sweeps and margin-widened line-of-sight crossings.
//!
//! Stage: runtime, used by [`target`](super) only. A host with its own physics implements
//! [`CollisionWorld`] by handing out primitive proxies of what is near a pose; the built-in
//! [`StaticWorld`] holds boxes, half-spaces and capsules.
//!
//! Invariants: distances are signed (negative inside a shape); a segment's distance to a
//! shape is the minimum over the segment, found by golden-section search on a convex
//! function (every primitive's distance is convex along a line), so it is exact to about
//! 1e-6 m; ids are stable and returned in increasing order.

use glam::{Vec2, Vec3};

use crate::geom::Aabb;
use crate::geom::planar::convex_hull;

/// A shape's identity in a collision world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShapeId(pub u32);

/// Version of a collision world's content: a new or moved obstacle bumps it, which
/// invalidates poses verified against the old content (spec 000).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CollisionVersion(pub u64);

/// A collision primitive, world metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// An axis-aligned box; a zero extent on one axis makes a plate (a thin board).
    Box {
        /// Minimum corner.
        min: Vec3,
        /// Maximum corner.
        max: Vec3,
    },
    /// Everything on the back side of a plane: points `p` with `normal · p <= offset` are
    /// solid (a floor with `normal` up, a ceiling with `normal` down).
    HalfSpace {
        /// Unit normal, pointing out of the solid.
        normal: Vec3,
        /// Plane offset along the normal.
        offset: f32,
    },
    /// A capsule: points within `radius` of the segment `a b`.
    Capsule {
        /// One end of the axis.
        a: Vec3,
        /// The other end.
        b: Vec3,
        /// Radius.
        radius: f32,
    },
}

/// Where a line-of-sight segment crosses a face of a shape (after widening by the margin).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossing {
    /// The shape.
    pub shape: ShapeId,
    /// Fraction along the segment, 0 at its start.
    pub fraction: f32,
    /// The crossing point, metres.
    pub point: Vec3,
    /// Whether the point lies within the widened face (the segment is blocked there).
    pub blocked: bool,
    /// For a box face: the face's axis (0 x, 1 y, 2 z); `u8::MAX` for other shapes.
    pub face_axis: u8,
}

impl Shape {
    /// Whether every value is finite and the shape is well formed (min <= max, unit normal,
    /// radius >= 0).
    pub fn is_valid(&self) -> bool {
        match *self {
            Shape::Box { min, max } => min.is_finite() && max.is_finite() && min.cmple(max).all(),
            Shape::HalfSpace { normal, offset } => {
                normal.is_finite() && offset.is_finite() && (normal.length() - 1.0).abs() < 1e-3
            }
            Shape::Capsule { a, b, radius } => {
                a.is_finite() && b.is_finite() && radius.is_finite() && radius >= 0.0
            }
        }
    }

    /// Signed distance from `point` to the shape's surface (negative inside).
    pub fn distance(&self, point: Vec3) -> f32 {
        match *self {
            Shape::Box { min, max } => {
                let centre = (min + max) * 0.5;
                let half = (max - min) * 0.5;
                let q = (point - centre).abs() - half;
                q.max(Vec3::ZERO).length() + q.max_element().min(0.0)
            }
            Shape::HalfSpace { normal, offset } => normal.dot(point) - offset,
            Shape::Capsule { a, b, radius } => {
                point.distance(closest_on_segment(a, b, point)) - radius
            }
        }
    }

    /// The point of the shape's surface nearest `point` (for a point outside the shape).
    pub fn closest_point(&self, point: Vec3) -> Vec3 {
        match *self {
            Shape::Box { min, max } => point.clamp(min, max),
            Shape::HalfSpace { normal, offset } => point - normal * (normal.dot(point) - offset),
            Shape::Capsule { a, b, radius } => {
                let axis = closest_on_segment(a, b, point);
                axis + (point - axis).normalize_or_zero() * radius
            }
        }
    }

    /// Smallest signed distance from the segment `a b` to the shape.
    pub fn segment_distance(&self, a: Vec3, b: Vec3) -> f32 {
        if let Shape::HalfSpace { .. } = self {
            // Linear along the segment: the minimum is at an end.
            return self.distance(a).min(self.distance(b));
        }
        minimise_along(a, b, |p| self.distance(p))
    }

    /// Smallest signed distance from the segment `axis_low axis_high` to the shape while the
    /// segment translates by `travel` (a capsule axis swept along a move).
    pub fn swept_segment_distance(&self, axis_low: Vec3, axis_high: Vec3, travel: Vec3) -> f32 {
        // Distance to a convex shape is jointly convex in (travel fraction, axis fraction),
        // so minimising over the axis leaves a convex function of the travel fraction.
        minimise_along(Vec3::ZERO, travel, |offset| {
            self.segment_distance(axis_low + offset, axis_high + offset)
        })
    }

    /// Bounds of the shape (a half-space is unbounded).
    pub fn bounds(&self) -> Aabb {
        match *self {
            Shape::Box { min, max } => Aabb { min, max },
            Shape::HalfSpace { .. } => Aabb {
                min: Vec3::splat(f32::NEG_INFINITY),
                max: Vec3::splat(f32::INFINITY),
            },
            Shape::Capsule { a, b, radius } => Aabb {
                min: a.min(b) - Vec3::splat(radius),
                max: a.max(b) + Vec3::splat(radius),
            },
        }
    }

    /// Where the segment `from to` crosses the shape with the margin rule of line-of-sight
    /// checks (spec 000): each face of a box is widened by `margin` within its own plane
    /// (a board's outline grows, its thickness does not), a capsule grows by `margin`, and a
    /// half-space blocks where the segment enters it.
    pub fn crossings(&self, id: ShapeId, from: Vec3, to: Vec3, margin: f32) -> Vec<Crossing> {
        let direction = to - from;
        let mut crossings = Vec::new();
        match *self {
            Shape::Box { min, max } => {
                for axis in 0..3 {
                    if direction[axis].abs() < 1e-12 {
                        continue;
                    }
                    for plane in [min[axis], max[axis]] {
                        let fraction = (plane - from[axis]) / direction[axis];
                        if !(0.0..=1.0).contains(&fraction) {
                            continue;
                        }
                        if crossings.iter().any(|c: &Crossing| {
                            c.face_axis == axis as u8 && (c.fraction - fraction).abs() < 1e-7
                        }) {
                            continue; // the two faces of a plate coincide
                        }
                        let point = from + direction * fraction;
                        let blocked = (0..3).filter(|&other| other != axis).all(|other| {
                            point[other] >= min[other] - margin
                                && point[other] <= max[other] + margin
                        });
                        crossings.push(Crossing {
                            shape: id,
                            fraction,
                            point,
                            blocked,
                            face_axis: axis as u8,
                        });
                    }
                }
            }
            Shape::HalfSpace { normal, offset } => {
                let (start, end) = (normal.dot(from) - offset, normal.dot(to) - offset);
                if end < start && end <= 0.0 {
                    let fraction = if start <= 0.0 {
                        0.0
                    } else {
                        start / (start - end)
                    };
                    crossings.push(Crossing {
                        shape: id,
                        fraction,
                        point: from + direction * fraction,
                        blocked: true,
                        face_axis: u8::MAX,
                    });
                }
            }
            Shape::Capsule { a, b, radius } => {
                let fraction = argmin_along(from, to, |p| p.distance(closest_on_segment(a, b, p)));
                let point = from + direction * fraction;
                let distance = point.distance(closest_on_segment(a, b, point));
                crossings.push(Crossing {
                    shape: id,
                    fraction,
                    point,
                    blocked: distance < radius + margin,
                    face_axis: u8::MAX,
                });
            }
        }
        crossings.sort_by(|x, y| x.fraction.total_cmp(&y.fraction));
        crossings
    }

    /// The plan outline (x, z) that blocks sight in the horizontal plane, under the same
    /// margin rule as [`Shape::crossings`], with the height range it covers; boxes only.
    pub fn sight_footprint(&self, margin: f32) -> Option<(Vec<Vec2>, f32, f32)> {
        let Shape::Box { min, max } = *self else {
            return None;
        };
        // Each vertical face widened within its plane: x faces keep their x and grow in z;
        // z faces keep their z and grow in x. The outline is the hull of those segments.
        let points = [
            Vec2::new(min.x, min.z - margin),
            Vec2::new(min.x, max.z + margin),
            Vec2::new(max.x, min.z - margin),
            Vec2::new(max.x, max.z + margin),
            Vec2::new(min.x - margin, min.z),
            Vec2::new(max.x + margin, min.z),
            Vec2::new(min.x - margin, max.z),
            Vec2::new(max.x + margin, max.z),
        ];
        Some((convex_hull(&points), min.y - margin, max.y + margin))
    }
}

/// The point of segment `a b` nearest `point`.
pub fn closest_on_segment(a: Vec3, b: Vec3, point: Vec3) -> Vec3 {
    let edge = b - a;
    let length_squared = edge.length_squared();
    if length_squared <= 0.0 {
        return a;
    }
    a + edge * ((point - a).dot(edge) / length_squared).clamp(0.0, 1.0)
}

/// Fraction along `a b` minimising a convex function, by golden-section search.
fn argmin_along(a: Vec3, b: Vec3, f: impl Fn(Vec3) -> f32) -> f32 {
    const INVERSE_PHI: f64 = 0.618_033_988_749_895;
    let at = |t: f64| f(a + (b - a) * t as f32);
    let (mut low, mut high) = (0.0f64, 1.0f64);
    let mut left = high - INVERSE_PHI * (high - low);
    let mut right = low + INVERSE_PHI * (high - low);
    let (mut f_left, mut f_right) = (at(left), at(right));
    for _ in 0..80 {
        if f_left <= f_right {
            high = right;
            right = left;
            f_right = f_left;
            left = high - INVERSE_PHI * (high - low);
            f_left = at(left);
        } else {
            low = left;
            left = right;
            f_left = f_right;
            right = low + INVERSE_PHI * (high - low);
            f_right = at(right);
        }
    }
    let middle = 0.5 * (low + high);
    // The ends can be the minimum of a monotone function: compare them too.
    [(0.0, at(0.0)), (1.0, at(1.0)), (middle, at(middle))]
        .into_iter()
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .map_or(0.0, |(t, _)| t as f32)
}

/// Minimum of a convex function along `a b`.
fn minimise_along(a: Vec3, b: Vec3, f: impl Fn(Vec3) -> f32) -> f32 {
    let t = argmin_along(a, b, &f);
    f(a + (b - a) * t)
}

/// What pose validation reads of the world.
pub trait CollisionWorld {
    /// Ids of the shapes whose bounds overlap `bounds`, in increasing order.
    fn shapes_near(&self, bounds: &Aabb) -> Vec<ShapeId>;
    /// A shape by id.
    fn shape(&self, id: ShapeId) -> Option<Shape>;
    /// The version of the world's content.
    fn version(&self) -> CollisionVersion;
    /// A name for reports (the id unless the world knows better).
    fn shape_name(&self, id: ShapeId) -> String {
        format!("shape {}", id.0)
    }
}

/// A world of fixed primitives: the built-in [`CollisionWorld`].
#[derive(Clone, Debug, Default)]
pub struct StaticWorld {
    shapes: Vec<(Shape, String)>,
    version: CollisionVersion,
}

/// A shape that cannot be added to a world.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "shape {name:?} is malformed (non-finite value, min > max, non-unit normal or negative radius): {shape:?}"
)]
pub struct BadShape {
    /// The shape's name.
    pub name: String,
    /// The shape.
    pub shape: Shape,
}

impl StaticWorld {
    /// An empty world.
    pub fn new() -> StaticWorld {
        StaticWorld::default()
    }

    /// Adds a named shape; bumps the version.
    pub fn add(&mut self, name: &str, shape: Shape) -> Result<ShapeId, BadShape> {
        if !shape.is_valid() {
            return Err(BadShape {
                name: name.to_owned(),
                shape,
            });
        }
        self.shapes.push((shape, name.to_owned()));
        self.version.0 += 1;
        Ok(ShapeId(self.shapes.len() as u32 - 1))
    }

    /// A shape's name.
    pub fn name(&self, id: ShapeId) -> Option<&str> {
        self.shapes
            .get(id.0 as usize)
            .map(|(_, name)| name.as_str())
    }

    /// The id of the shape with this name.
    pub fn find(&self, name: &str) -> Option<ShapeId> {
        self.shapes
            .iter()
            .position(|(_, n)| n == name)
            .map(|index| ShapeId(index as u32))
    }

    /// Every shape with its id and name.
    pub fn iter(&self) -> impl Iterator<Item = (ShapeId, &Shape, &str)> {
        self.shapes
            .iter()
            .enumerate()
            .map(|(index, (shape, name))| (ShapeId(index as u32), shape, name.as_str()))
    }
}

impl CollisionWorld for StaticWorld {
    fn shapes_near(&self, bounds: &Aabb) -> Vec<ShapeId> {
        self.iter()
            .filter(|(_, shape, _)| shape.bounds().overlaps(bounds))
            .map(|(id, _, _)| id)
            .collect()
    }

    fn shape(&self, id: ShapeId) -> Option<Shape> {
        self.shapes.get(id.0 as usize).map(|(shape, _)| *shape)
    }

    fn version(&self) -> CollisionVersion {
        self.version
    }

    fn shape_name(&self, id: ShapeId) -> String {
        self.name(id)
            .map_or_else(|| format!("shape {}", id.0), str::to_owned)
    }
}

/// A world seen through a reference (a host's `&dyn CollisionWorld` among them) is the
/// world itself.
impl<W: CollisionWorld + ?Sized> CollisionWorld for &W {
    fn shapes_near(&self, bounds: &Aabb) -> Vec<ShapeId> {
        (**self).shapes_near(bounds)
    }
    fn shape(&self, id: ShapeId) -> Option<Shape> {
        (**self).shape(id)
    }
    fn version(&self) -> CollisionVersion {
        (**self).version()
    }
    fn shape_name(&self, id: ShapeId) -> String {
        (**self).shape_name(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_to_each_primitive() {
        let board = Shape::Box {
            min: Vec3::new(0.2, 0.0, -0.1),
            max: Vec3::new(0.2, 1.6, 0.1),
        };
        assert!((board.distance(Vec3::new(0.75, 1.0, 0.0)) - 0.55).abs() < 1e-6);
        let floor = Shape::HalfSpace {
            normal: Vec3::Y,
            offset: 0.0,
        };
        assert_eq!(
            floor.segment_distance(Vec3::new(0.0, 0.4, 0.0), Vec3::new(0.0, 1.4, 0.0)),
            0.4
        );
        let pillar = Shape::Capsule {
            a: Vec3::ZERO,
            b: Vec3::Y * 2.0,
            radius: 0.5,
        };
        let d = pillar.segment_distance(Vec3::new(-2.0, 1.0, 1.0), Vec3::new(2.0, 1.0, 1.0));
        assert!((d - 0.5).abs() < 1e-5, "{d}");
    }

    #[test]
    fn a_plate_widens_within_its_plane_only() {
        let board = Shape::Box {
            min: Vec3::new(0.2, 0.0, -0.1),
            max: Vec3::new(0.2, 1.6, 0.1),
        };
        let (outline, low, high) = board.sight_footprint(0.02).unwrap();
        assert!((low + 0.02).abs() < 1e-6 && (high - 1.62).abs() < 1e-6);
        // The steepest corner seen from the origin is (0.2, 0.12): slope 0.6.
        let steepest = outline.iter().map(|p| p.y / p.x).fold(f32::MIN, f32::max);
        assert!((steepest - 0.6).abs() < 1e-6, "{steepest}");
        let crossings = board.crossings(
            ShapeId(0),
            Vec3::new(0.75, 1.2, 0.525),
            Vec3::new(0.0, 1.2, 0.0),
            0.02,
        );
        let face = crossings.iter().find(|c| c.face_axis == 0).unwrap();
        assert!((face.point.z - 0.14).abs() < 1e-6 && !face.blocked);
    }
}
