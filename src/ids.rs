//! Identity, version and area newtypes shared by every layer.
//!
//! Stage: base (imported by everything, imports nothing of ours).
//!
//! Invariants: versions are monotone counters compared for equality (is this still the
//! state I read?) and for order (which is newer?). They are never bare integers in a
//! signature, so a transform version cannot be passed where a mesh version is expected.

use std::fmt;

/// Declares a `u64` version newtype with the common derives and a `Display` that names it.
macro_rules! version_newtype {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(formatter, "{}({})", stringify!($name), self.0)
            }
        }
    };
}

version_newtype!(
    /// Version of one instance's source geometry as it reaches the baker: it changes when the
    /// instance's mesh, its local transform or any ancestor transform changes, and only then.
    /// A tile built from an instance records this value; a mismatch means the tile is stale.
    SourceVersion
);

version_newtype!(
    /// Version of a triangle mesh's content (positions, indices, areas, unit scale).
    MeshVersion
);

version_newtype!(
    /// Version of one transform node's local transform or parent link.
    TransformVersion
);

version_newtype!(
    /// Version of a query filter's include/exclude rules: a result found under one set of
    /// rules is not adopted under another.
    FilterVersion
);

version_newtype!(
    /// Version of a query filter's area costs.
    CostVersion
);

version_newtype!(
    /// Version of an interaction target's placement (its object's transform and slot).
    TargetVersion
);

/// Surface type of a triangle or polygon, used by filters and costs.
///
/// `0` is reserved for "not walkable"; the named constants cover the common cases and the
/// rest up to [`AreaId::MAX`] are free for the game to assign.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct AreaId(pub u8);

impl AreaId {
    /// Not walkable: removed by the baker.
    pub const UNWALKABLE: AreaId = AreaId(0);
    /// Ordinary walkable ground; the default for untagged triangles.
    pub const GROUND: AreaId = AreaId(1);
    /// Shallow water: walkable, usually at a higher cost.
    pub const WATER: AreaId = AreaId(2);
    /// Road or path: walkable, usually at a lower cost.
    pub const ROAD: AreaId = AreaId(3);
    /// Grass or rough ground.
    pub const GRASS: AreaId = AreaId(4);
    /// Doorway floor, so a filter can close it.
    pub const DOOR: AreaId = AreaId(5);
    /// Largest area id (area ids share a byte with flags in baked tiles: 6 bits).
    pub const MAX: u8 = 63;

    /// The named areas and their spellings in level files (`area:water`).
    pub const NAMED: [(&'static str, AreaId); 6] = [
        ("unwalkable", AreaId::UNWALKABLE),
        ("ground", AreaId::GROUND),
        ("water", AreaId::WATER),
        ("road", AreaId::ROAD),
        ("grass", AreaId::GRASS),
        ("door", AreaId::DOOR),
    ];

    /// Parses an area spelling: a name from [`AreaId::NAMED`] or a number up to
    /// [`AreaId::MAX`]. Returns `None` for anything else.
    pub fn parse(text: &str) -> Option<AreaId> {
        if let Some((_, area)) = AreaId::NAMED.iter().find(|(name, _)| *name == text) {
            return Some(*area);
        }
        match text.parse::<u8>() {
            Ok(value) if value <= AreaId::MAX => Some(AreaId(value)),
            _ => None,
        }
    }

    /// Whether the baker keeps surfaces of this area.
    pub fn is_walkable(self) -> bool {
        self != AreaId::UNWALKABLE
    }
}

impl Default for AreaId {
    fn default() -> Self {
        AreaId::GROUND
    }
}

/// Identity of a moving support (platform, lift, ship deck) that navigation geometry rides
/// on. Static ground has no support id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct SupportId(pub u32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn area_parse_accepts_names_and_numbers_and_refuses_the_rest() {
        assert_eq!(AreaId::parse("water"), Some(AreaId::WATER));
        assert_eq!(AreaId::parse("17"), Some(AreaId(17)));
        assert_eq!(AreaId::parse("63"), Some(AreaId(63)));
        assert_eq!(AreaId::parse("64"), None);
        assert_eq!(AreaId::parse("lava"), None);
    }

    #[test]
    fn versions_order_and_display() {
        assert!(SourceVersion(3) > SourceVersion(2));
        assert_eq!(SourceVersion(7).to_string(), "SourceVersion(7)");
    }
}
