//! Axis-aligned bounding boxes in world metres.

use glam::Vec3;

/// An axis-aligned box; empty (min > max) until a point is added.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Smallest corner, metres.
    pub min: Vec3,
    /// Largest corner, metres.
    pub max: Vec3,
}

impl Default for Aabb {
    fn default() -> Self {
        Aabb::EMPTY
    }
}

impl Aabb {
    /// The empty box: adding any point makes it that point.
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    /// Whether no point has been added.
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// Grows the box to hold `point`.
    pub fn add_point(&mut self, point: Vec3) {
        self.min = self.min.min(point);
        self.max = self.max.max(point);
    }

    /// Grows the box to hold `other`.
    pub fn add_box(&mut self, other: &Aabb) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Extent along each axis, metres (zero for an empty box).
    pub fn size(&self) -> Vec3 {
        if self.is_empty() {
            Vec3::ZERO
        } else {
            self.max - self.min
        }
    }

    /// Whether the two boxes overlap (touching counts).
    pub fn overlaps(&self, other: &Aabb) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }
}

impl FromIterator<Vec3> for Aabb {
    fn from_iter<I: IntoIterator<Item = Vec3>>(points: I) -> Self {
        let mut bounds = Aabb::EMPTY;
        points.into_iter().for_each(|point| bounds.add_point(point));
        bounds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_then_grown() {
        let mut bounds = Aabb::EMPTY;
        assert!(bounds.is_empty());
        assert_eq!(bounds.size(), Vec3::ZERO);
        bounds.add_point(Vec3::new(1.0, 2.0, 3.0));
        bounds.add_point(Vec3::new(-1.0, 0.0, 5.0));
        assert_eq!(bounds.size(), Vec3::new(2.0, 2.0, 2.0));
        let other: Aabb = [Vec3::new(0.5, 1.0, 4.0), Vec3::new(9.0, 9.0, 9.0)]
            .into_iter()
            .collect();
        assert!(bounds.overlaps(&other));
    }
}
