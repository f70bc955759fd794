//! The world Up axis and the horizontal orthonormal basis derived from it.

use glam::{Vec2, Vec3};

/// World Up plus two horizontal unit axes, together orthonormal and right-handed
/// (`horizontal_x × up = horizontal_z`, as X × Y = Z for the default +Y Up).
///
/// A horizontal vector is written `Vec2 { x, y }` with `x` along [`UpBasis::horizontal_x`]
/// and `y` along [`UpBasis::horizontal_z`]; for the default basis that is `(X, Z)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UpBasis {
    up: Vec3,
    horizontal_x: Vec3,
    horizontal_z: Vec3,
}

/// An Up vector that cannot define a basis.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum UpBasisError {
    /// Up had a NaN or infinite component.
    #[error("up vector {0} is not finite")]
    NotFinite(Vec3),
    /// Up had (almost) zero length.
    #[error("up vector {0} has zero length")]
    ZeroLength(Vec3),
}

impl Default for UpBasis {
    fn default() -> Self {
        UpBasis::Y_UP
    }
}

impl UpBasis {
    /// +Y Up with horizontal axes X and Z: the default, and Recast's convention.
    pub const Y_UP: UpBasis = UpBasis {
        up: Vec3::Y,
        horizontal_x: Vec3::X,
        horizontal_z: Vec3::Z,
    };

    /// Builds the basis for any Up direction (normalised here).
    ///
    /// The first horizontal axis is world X with its Up component removed, or world Z when Up
    /// is within about 25° of X, so a Y-up input gives exactly [`UpBasis::Y_UP`].
    pub fn new(up: Vec3) -> Result<UpBasis, UpBasisError> {
        if !up.is_finite() {
            return Err(UpBasisError::NotFinite(up));
        }
        let up = up.try_normalize().ok_or(UpBasisError::ZeroLength(up))?;
        // NOTE: 0.9 keeps the reference axis far enough from Up that the Gram-Schmidt step
        // below never divides by a tiny length.
        let reference = if up.x.abs() < 0.9 { Vec3::X } else { Vec3::Z };
        let horizontal_x = (reference - up * reference.dot(up)).normalize();
        let horizontal_z = horizontal_x.cross(up);
        Ok(UpBasis {
            up,
            horizontal_x,
            horizontal_z,
        })
    }

    /// World Up (unit length).
    pub fn up(&self) -> Vec3 {
        self.up
    }

    /// First horizontal axis (unit length).
    pub fn horizontal_x(&self) -> Vec3 {
        self.horizontal_x
    }

    /// Second horizontal axis (unit length).
    pub fn horizontal_z(&self) -> Vec3 {
        self.horizontal_z
    }

    /// Horizontal coordinates of a world vector or point, in metres.
    pub fn project_horizontal(&self, world: Vec3) -> Vec2 {
        Vec2::new(world.dot(self.horizontal_x), world.dot(self.horizontal_z))
    }

    /// Height of a world point along Up, in metres.
    pub fn height(&self, world: Vec3) -> f32 {
        world.dot(self.up)
    }

    /// Rebuilds a world vector from horizontal coordinates and a height.
    pub fn from_horizontal(&self, horizontal: Vec2, height: f32) -> Vec3 {
        self.horizontal_x * horizontal.x + self.horizontal_z * horizontal.y + self.up * height
    }

    /// Horizontal length of a world vector, in metres.
    pub fn horizontal_length(&self, world: Vec3) -> f32 {
        self.project_horizontal(world).length()
    }

    /// Horizontal distance between two world points, in metres.
    pub fn horizontal_distance(&self, a: Vec3, b: Vec3) -> f32 {
        self.horizontal_length(b - a)
    }

    /// Cosine of the angle between a unit normal and Up: 1 for a flat floor, 0 for a wall.
    pub fn slope_cos(&self, unit_normal: Vec3) -> f32 {
        unit_normal.dot(self.up)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn y_up_is_the_default_and_maps_x_z() {
        let basis = UpBasis::new(Vec3::new(0.0, 2.0, 0.0)).unwrap();
        assert_eq!(basis, UpBasis::Y_UP);
        let point = Vec3::new(1.5, 7.0, -2.0);
        assert_eq!(basis.project_horizontal(point), Vec2::new(1.5, -2.0));
        assert_eq!(basis.height(point), 7.0);
    }

    #[test]
    fn z_up_basis_is_orthonormal_right_handed_and_preserves_lengths() {
        let basis = UpBasis::new(Vec3::Z).unwrap();
        let (x, z, up) = (basis.horizontal_x(), basis.horizontal_z(), basis.up());
        assert!(x.dot(z).abs() < 1e-6 && x.dot(up).abs() < 1e-6 && z.dot(up).abs() < 1e-6);
        assert!((x.cross(up) - z).length() < 1e-6);
        // A 3-4-5 displacement in the Z-up host's ground plane stays 5 m long.
        let displacement = Vec3::new(3.0, 4.0, 10.0);
        assert!((basis.horizontal_length(displacement) - 5.0).abs() < 1e-6);
        assert!((basis.height(displacement) - 10.0).abs() < 1e-6);
        let back = basis.from_horizontal(basis.project_horizontal(displacement), 10.0);
        assert!((back - displacement).length() < 1e-5);
    }

    #[test]
    fn slanted_up_round_trips() {
        let basis = UpBasis::new(Vec3::new(1.0, 1.0, 0.0)).unwrap();
        let point = Vec3::new(0.3, -2.0, 5.0);
        let back = basis.from_horizontal(basis.project_horizontal(point), basis.height(point));
        assert!((back - point).length() < 1e-5);
    }

    #[test]
    fn bad_up_vectors_are_refused_by_value() {
        assert_eq!(
            UpBasis::new(Vec3::ZERO),
            Err(UpBasisError::ZeroLength(Vec3::ZERO))
        );
        assert!(matches!(
            UpBasis::new(Vec3::new(f32::NAN, 1.0, 0.0)),
            Err(UpBasisError::NotFinite(_))
        ));
    }
}
