//! Full transform composition: the ancestor chain times the local transform, applied once.
//!
//! A level places a mesh through a chain of nodes (root first) and the instance's own local
//! transform. The world transform is `chain[0] * chain[1] * ... * local`; it is composed once
//! and applied once, so a doorway authored 1 m wide under a parent scaled 0.5 reaches the
//! baker 0.5 m wide (spec 002, "世界空间与缩放").

use glam::{Affine3A, Vec3};

/// Composes `ancestors` (root first) with `local` into one world transform.
pub fn compose<'a>(ancestors: impl IntoIterator<Item = &'a Affine3A>, local: Affine3A) -> Affine3A {
    ancestors
        .into_iter()
        .fold(Affine3A::IDENTITY, |world, node| world * *node)
        * local
}

/// Determinant of the linear part: negative for a mirroring transform, which reverses
/// triangle winding; (almost) zero for a transform that flattens space.
pub fn determinant(transform: &Affine3A) -> f32 {
    transform.matrix3.determinant()
}

/// Whether a transform mirrors space, so that triangle winding must be flipped to keep the
/// normals pointing the same way relative to the surface.
pub fn mirrors(transform: &Affine3A) -> bool {
    determinant(transform) < 0.0
}

/// World length of a local displacement: `|A·d|` where `A` is the linear part.
pub fn world_length(transform: &Affine3A, local_displacement: Vec3) -> f32 {
    transform.transform_vector3(local_displacement).length()
}

/// Whether every coefficient of the transform is finite.
pub fn is_finite(transform: &Affine3A) -> bool {
    transform.matrix3.is_finite() && transform.translation.is_finite()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn chain_applies_root_first() {
        let root = Affine3A::from_translation(Vec3::new(10.0, 0.0, 0.0));
        let parent = Affine3A::from_scale(Vec3::splat(0.5));
        let local = Affine3A::from_translation(Vec3::new(2.0, 0.0, 0.0));
        let world = compose([&root, &parent], local);
        // The local 2 m offset is halved by the parent, then moved by the root.
        assert_eq!(
            world.transform_point3(Vec3::ZERO),
            Vec3::new(11.0, 0.0, 0.0)
        );
        assert!((world_length(&world, Vec3::X) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn mirror_and_rotation_handedness() {
        assert!(mirrors(&Affine3A::from_scale(Vec3::new(-1.0, 1.0, 1.0))));
        assert!(!mirrors(&Affine3A::from_quat(Quat::from_rotation_y(1.0))));
        assert!((determinant(&Affine3A::from_scale(Vec3::new(2.0, 1.0, 0.5))) - 1.0).abs() < 1e-6);
    }
}
