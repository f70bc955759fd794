//! Triangle primitives on world-space points.

use glam::Vec3;

/// Default area below which a world triangle is degenerate and dropped, in m².
///
/// 1 mm²: a triangle this small covers no voxel at any cell size the baker accepts (the
/// smallest is 1 cm), so dropping it changes no walkable surface, while its normal (a cross
/// product of millimetre edges) would be too noisy to judge slope by.
pub const DEGENERATE_AREA_M2: f32 = 1.0e-6;

/// Twice the signed area vector: `(b - a) × (c - a)`, pointing along the counter-clockwise
/// normal.
pub fn doubled_area_vector(a: Vec3, b: Vec3, c: Vec3) -> Vec3 {
    (b - a).cross(c - a)
}

/// Area of the triangle in square metres.
pub fn area(a: Vec3, b: Vec3, c: Vec3) -> f32 {
    0.5 * doubled_area_vector(a, b, c).length()
}

/// Unit normal of a counter-clockwise triangle, or `None` when it is degenerate.
pub fn try_normal(a: Vec3, b: Vec3, c: Vec3) -> Option<Vec3> {
    doubled_area_vector(a, b, c).try_normalize()
}

/// Unit normal of a counter-clockwise triangle, or zero when it is degenerate.
pub fn normal_or_zero(a: Vec3, b: Vec3, c: Vec3) -> Vec3 {
    try_normal(a, b, c).unwrap_or(Vec3::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_triangle_area_and_upward_normal() {
        // Counter-clockwise seen from above (+Y): X then -Z.
        let (a, b, c) = (
            Vec3::ZERO,
            Vec3::new(0.0, 0.0, 2.0),
            Vec3::new(3.0, 0.0, 0.0),
        );
        assert!((area(a, b, c) - 3.0).abs() < 1e-6);
        assert_eq!(try_normal(a, b, c), Some(Vec3::Y));
    }

    #[test]
    fn collinear_points_have_no_normal() {
        let (a, b, c) = (Vec3::ZERO, Vec3::X, Vec3::new(2.0, 0.0, 0.0));
        assert_eq!(area(a, b, c), 0.0);
        assert_eq!(try_normal(a, b, c), None);
        assert_eq!(normal_or_zero(a, b, c), Vec3::ZERO);
    }
}
