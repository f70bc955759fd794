//! Polygon references: which polygon of which tile, and of which generation of that tile.
//!
//! A [`PolyRef`] packs `generation (32 bits) | tile slot (16) | polygon (16)` into a non-zero
//! `u64`. When a tile is replaced its slot's generation changes, so every reference into the
//! old tile stops resolving: a stale reference is detected, never silently misread as a
//! polygon of the new tile.

use std::fmt;
use std::num::NonZeroU64;

/// A tile slot of a [`NavMesh`](super::NavMesh).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TileSlot(pub u16);

/// How many times a tile slot has been filled; never 0 for a live tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TileGeneration(pub u32);

/// A reference to one polygon of one generation of one tile.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PolyRef(NonZeroU64);

impl PolyRef {
    /// Packs the three parts. `generation` must be non-zero (live tiles start at 1).
    pub fn new(generation: TileGeneration, slot: TileSlot, polygon: u16) -> Option<PolyRef> {
        let bits = (u64::from(generation.0) << 32) | (u64::from(slot.0) << 16) | u64::from(polygon);
        NonZeroU64::new(bits)
            .filter(|_| generation.0 != 0)
            .map(PolyRef)
    }

    /// The tile generation the reference was made for.
    pub fn generation(self) -> TileGeneration {
        TileGeneration((self.0.get() >> 32) as u32)
    }

    /// The tile slot.
    pub fn slot(self) -> TileSlot {
        TileSlot((self.0.get() >> 16) as u16)
    }

    /// The polygon index within the tile.
    pub fn polygon(self) -> u16 {
        self.0.get() as u16
    }

    /// A reference to another polygon of the same tile and generation.
    #[inline]
    pub fn with_polygon(self, polygon: u16) -> PolyRef {
        let bits = (self.0.get() & !0xffff) | u64::from(polygon);
        // The generation bits are unchanged and non-zero, so the value is non-zero.
        PolyRef(NonZeroU64::new(bits).unwrap_or(self.0))
    }

    /// The slot and polygon without the generation (the low half of the bits): enough to
    /// name a polygon where the tile's generation is known from elsewhere.
    #[inline]
    pub fn tile_bits(self) -> u32 {
        self.0.get() as u32
    }

    /// The slot of [`PolyRef::tile_bits`].
    #[inline]
    pub fn slot_of_tile_bits(bits: u32) -> TileSlot {
        TileSlot((bits >> 16) as u16)
    }

    /// The reference of [`PolyRef::tile_bits`] in tile generation `generation`; `None` for
    /// a zero generation.
    #[inline]
    pub fn from_tile_bits(generation: TileGeneration, bits: u32) -> Option<PolyRef> {
        PolyRef::new(
            generation,
            Self::slot_of_tile_bits(bits),
            (bits & 0xffff) as u16,
        )
    }

    /// The packed bits (for storage and hashing).
    pub fn to_bits(self) -> u64 {
        self.0.get()
    }

    /// Unpacks stored bits; `None` for zero or a zero generation.
    pub fn from_bits(bits: u64) -> Option<PolyRef> {
        NonZeroU64::new(bits)
            .map(PolyRef)
            .filter(|r| r.generation().0 != 0)
    }
}

impl fmt::Debug for PolyRef {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "PolyRef(tile {} gen {} poly {})",
            self.slot().0,
            self.generation().0,
            self.polygon()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poly_ref_bits_round_trip() {
        let reference =
            PolyRef::new(TileGeneration(0xdead_beef), TileSlot(0xfffe), 0x1234).unwrap();
        assert_eq!(reference.generation(), TileGeneration(0xdead_beef));
        assert_eq!(reference.slot(), TileSlot(0xfffe));
        assert_eq!(reference.polygon(), 0x1234);
        assert_eq!(PolyRef::from_bits(reference.to_bits()), Some(reference));
        assert_eq!(PolyRef::new(TileGeneration(0), TileSlot(1), 1), None);
        assert_eq!(PolyRef::from_bits(0), None);
        assert_eq!(
            PolyRef::from_bits(0x0000_0000_0001_0001),
            None,
            "generation 0 is never live"
        );
    }
}
