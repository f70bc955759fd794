//! The byte codec of a saved crowd: single values with the [`Saved`] trait, the writer
//! and reader both they and the columns of `column.rs` use, and the corridor table.
//!
//! Stage: crowd runtime, save and restore. Per-agent values are written a column at a time
//! (`column.rs`). Everything else is written value by value: integers as LEB128
//! variable-length numbers (ids, counts and indices are mostly small), floats as their
//! four bytes, enums as a tag byte and their fields. A [`Writer`] appends to a byte
//! vector; a
//! [`Reader`] walks a byte slice and refuses, naming the section it was reading, a value
//! that runs past the end or that no saved value has (a status byte out of range, a zero
//! id). Shared corridors are written once, in a table ahead of everything that names them;
//! the writer maps each corridor's address to its place in the table, and the reader hands
//! out the table's corridors by place, so agents that shared a corridor share it again.

use std::any::Any;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use glam::{Vec2, Vec3};
use rayon::prelude::*;

use crate::mesh::{LinkId, LinkVersion, TileGeneration, TileSlot};

pub(crate) mod column;

/// The first bytes of every saved crowd.
pub(crate) const MAGIC: [u8; 8] = *b"WMCROWD\0";

/// Why a saved crowd was not restored.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RestoreError {
    /// The bytes do not start with a saved crowd's magic.
    #[error("not a saved crowd: it starts with {found:02x?}, not {MAGIC:02x?}")]
    NotASave {
        /// The first bytes found (up to eight).
        found: Vec<u8>,
    },
    /// Saved by a build with another format.
    #[error("saved crowd format version {found}; this build reads version {supported}")]
    Version {
        /// The version in the header.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// Fewer bytes (or more) than the header says the payload has.
    #[error(
        "the saved crowd is truncated: {found} bytes after the header, which promises {expected}"
    )]
    Truncated {
        /// Payload bytes the header gives.
        expected: u64,
        /// Payload bytes there are.
        found: u64,
    },
    /// The payload's checksum does not match: the bytes were changed after the save.
    #[error(
        "the saved crowd is corrupted: its checksum is {stored:#010x}, its bytes give {computed:#010x}"
    )]
    Checksum {
        /// The checksum in the header.
        stored: u32,
        /// The checksum of the payload as found.
        computed: u32,
    },
    /// A value no save holds, although the checksum matches (a save from a faulty build).
    #[error("malformed saved crowd, section {section} at byte {offset} of the payload: {detail}")]
    Malformed {
        /// The section being read.
        section: &'static str,
        /// Where in the payload.
        offset: usize,
        /// What was found.
        detail: String,
    },
    /// A tile slot of the mesh is not at the generation the saved crowd's snapshot had
    /// (generation 0: no slot).
    #[error(
        "tile slot {} changed since the save: generation {} then, {} in the mesh now",
        .slot.0, .saved.0, .mesh.0
    )]
    TileChanged {
        /// The slot.
        slot: TileSlot,
        /// Its generation at the save.
        saved: TileGeneration,
        /// Its generation in the mesh given to restore.
        mesh: TileGeneration,
    },
    /// A link of the mesh is not at the version the saved crowd's snapshot had (version 0:
    /// no such link).
    #[error(
        "link {} changed since the save: version {} then, {} in the mesh now",
        .link.0, .saved.0, .mesh.0
    )]
    LinkChanged {
        /// The link.
        link: LinkId,
        /// Its version at the save.
        saved: LinkVersion,
        /// Its version in the mesh given to restore.
        mesh: LinkVersion,
    },
    /// A field of the configuration given to restore is out of range (as `Crowd::new`
    /// refuses it).
    #[error("crowd configuration {field} = {value} is invalid")]
    BadConfig {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f32,
    },
    /// The system refused the memory for the saved crowd's agents.
    #[error("no memory for the state of {agents} agents")]
    OutOfMemory {
        /// Agents the saved crowd holds.
        agents: usize,
    },
}

/// Every shared value a crowd holds (its corridors), once, in the order they are saved,
/// with each one's place. It borrows the values (a clone of each `Arc` would write its
/// count, a cache miss on a cold value, for nothing).
pub(crate) struct SharedTable<'a, T> {
    pub values: Vec<&'a T>,
    /// Where each value is written, for the [`Writer`].
    pub places: SharedPlaces,
}

/// The places of a [`SharedTable`]'s values, by address: what a [`Writer`] names a shared
/// value by, whatever its type.
pub(crate) struct SharedPlaces {
    /// By address (as a number, so the table is shared between threads).
    by_address: HashMap<usize, u32, BuildHasherDefault<AddressHasher>>,
    /// The place of each agent's value, by slot (`u32::MAX`: none), found as the table was
    /// gathered: the lanes' column of shared values is written from it.
    pub lane_places: Vec<u32>,
    /// The place of each cached value, in the order the cache is written.
    pub cache_places: Vec<u32>,
}

impl<'a, T> SharedTable<'a, T> {
    /// The table of the agents' values, by slot, with room for `cached` more.
    pub fn of_lanes(lanes: &'a [Option<Arc<T>>], cached: usize) -> SharedTable<'a, T> {
        // Sized for every value distinct (a few agents share most of theirs, the cache
        // holds mostly the agents'): the map never grows while it is filled.
        let most = lanes.len() + cached;
        let mut table = SharedTable {
            values: Vec::with_capacity(most),
            places: SharedPlaces {
                by_address: HashMap::with_capacity_and_hasher(most, Default::default()),
                lane_places: Vec::with_capacity(lanes.len()),
                cache_places: Vec::with_capacity(cached),
            },
        };
        for value in lanes {
            let place = value.as_ref().map_or(u32::MAX, |v| table.place_of(v));
            table.places.lane_places.push(place);
        }
        table
    }

    /// Adds the cache's values, in the order the cache is written.
    pub fn add_cached(&mut self, cached: impl Iterator<Item = &'a Arc<T>>) {
        for value in cached {
            let place = self.place_of(value);
            self.places.cache_places.push(place);
        }
    }

    /// The value's place, given the next one if it is new.
    fn place_of(&mut self, value: &'a Arc<T>) -> u32 {
        let next = self.values.len() as u32;
        *self
            .places
            .by_address
            .entry(address(value))
            .or_insert_with(|| {
                self.values.push(value);
                next
            })
    }
}

fn address<T>(value: &Arc<T>) -> usize {
    Arc::as_ptr(value) as usize
}

/// Hashes a shared value's address: the table looks up tens of thousands a save, and an
/// address needs no protection against crafted keys.
#[derive(Default)]
pub(crate) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn write(&mut self, _bytes: &[u8]) {
        unreachable!("addresses hash through write_usize");
    }

    fn write_usize(&mut self, address: usize) {
        // Allocations are 16-byte aligned: drop the zero bits, spread the rest (Fibonacci
        // hashing), and fold the high half down, where the table takes its bucket index.
        let spread = (address as u64 >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = spread ^ (spread >> 32);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Appends saved values to a byte vector.
pub(crate) struct Writer<'a> {
    pub bytes: Vec<u8>,
    /// Where shared values are named; `None` for the sections written while the table is
    /// gathered, which hold none.
    table: Option<&'a SharedPlaces>,
}

impl<'a> Writer<'a> {
    /// A writer naming shared values by their place in `table`.
    pub fn new(table: &'a SharedPlaces) -> Writer<'a> {
        Writer {
            bytes: Vec::new(),
            table: Some(table),
        }
    }

    /// A writer for sections that hold no corridor, into `bytes`, so they are written
    /// before the corridor table is gathered (or beside it).
    pub fn without_corridors(bytes: Vec<u8>) -> Writer<'a> {
        Writer { bytes, table: None }
    }

    #[inline]
    pub fn u8(&mut self, value: u8) {
        self.bytes.push(value);
    }

    pub fn u16(&mut self, value: u16) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// A number as LEB128: seven bits a byte, low first, the high bit set on all but the
    /// last.
    #[inline]
    pub fn varint(&mut self, mut value: u64) {
        if value < 0x80 {
            self.bytes.push(value as u8); // most of them
            return;
        }
        while value >= 0x80 {
            self.bytes.push(value as u8 | 0x80);
            value >>= 7;
        }
        self.bytes.push(value as u8);
    }

    #[inline]
    pub fn u32(&mut self, value: u32) {
        self.varint(u64::from(value));
    }

    /// A run of numbers as its count, then each one's difference from the one before
    /// (the first from 0) as [`Writer::signed`] writes it: the same bytes as those calls,
    /// encoded into room made for the longest case (five bytes a difference of 32-bit
    /// numbers) and cut to what was used, so no byte checks the vector's capacity.
    pub fn deltas(&mut self, values: impl ExactSizeIterator<Item = u32>) {
        const COUNT_BYTES: usize = 10;
        const DIFFERENCE_BYTES: usize = 5;
        let start = self.bytes.len();
        self.bytes
            .resize(start + COUNT_BYTES + DIFFERENCE_BYTES * values.len(), 0);
        let room = &mut self.bytes[start..];
        let mut at = put_varint(room, 0, values.len() as u64);
        let mut previous = 0i64;
        for value in values {
            let difference = i64::from(value) - previous;
            previous = i64::from(value);
            at = put_varint(room, at, ((difference << 1) ^ (difference >> 63)) as u64);
        }
        self.bytes.truncate(start + at);
    }

    pub fn u64(&mut self, value: u64) {
        self.varint(value);
    }

    pub fn f32(&mut self, value: f32) {
        self.bytes.extend_from_slice(&value.to_bits().to_le_bytes());
    }

    /// A length or count.
    pub fn len(&mut self, len: usize) {
        self.varint(len as u64);
    }

    /// A four-byte section tag, checked on reading so a misplaced section is named.
    pub fn tag(&mut self, tag: &[u8; 4]) {
        self.bytes.extend_from_slice(tag);
    }

    /// The place of a shared value in the table.
    pub fn shared_place<T>(&self, value: &Arc<T>) -> u32 {
        let table = self
            .table
            .expect("a section holding shared values is written with the shared table");
        table.by_address[&address(value)]
    }

    /// The lanes' column of shared values (their corridors): each agent's by its place in
    /// the table (`u32::MAX`: none), as the table found them while it was gathered.
    pub fn shared_column(&mut self) {
        let table = self
            .table
            .expect("the shared column is written with the shared table");
        self.raw_column(&table.lane_places, None);
    }

    /// A slice's elements, without their count (a lane, whose count is the crowd's).
    pub fn elements<T: Saved>(&mut self, values: &[T]) {
        for value in values {
            value.write(self);
        }
    }
}

/// Writes `value` as LEB128 into `room` at `at`; where the next byte goes.
#[inline]
pub(crate) fn put_varint(room: &mut [u8], mut at: usize, mut value: u64) -> usize {
    while value >= 0x80 {
        room[at] = value as u8 | 0x80;
        value >>= 7;
        at += 1;
    }
    room[at] = value as u8;
    at + 1
}

/// Reads saved values from a byte slice.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Where `bytes` start in the payload (for errors).
    base: usize,
    /// The section being read, for errors.
    pub section: &'static str,
    /// The shared table (a `Vec<Arc<T>>`), once read.
    shared: Option<Box<dyn Any + Send + Sync>>,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            at: 0,
            base: 0,
            section: "header",
            shared: None,
        }
    }

    /// A reader of `bytes`, a part of a section that starts at `base` in the payload.
    pub fn part(bytes: &'a [u8], base: usize, section: &'static str) -> Reader<'a> {
        Reader {
            base,
            section,
            ..Reader::new(bytes)
        }
    }

    /// Where the next value starts in the payload.
    pub fn offset(&self) -> usize {
        self.base + self.at
    }

    /// The next `len` bytes, as they are.
    pub fn raw_bytes(&mut self, len: usize) -> Result<&'a [u8], RestoreError> {
        self.bytes_of(len)
    }

    /// A value no save holds, in the current section.
    pub fn malformed(&self, detail: impl Into<String>) -> RestoreError {
        RestoreError::Malformed {
            section: self.section,
            offset: self.base + self.at,
            detail: detail.into(),
        }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], RestoreError> {
        let end = self
            .at
            .checked_add(N)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.malformed(format!("{N} bytes needed past the end")));
        };
        let bytes = self.bytes[self.at..end]
            .try_into()
            .expect("the range is N long");
        self.at = end;
        Ok(bytes)
    }

    #[inline]
    pub fn u8(&mut self) -> Result<u8, RestoreError> {
        Ok(self.take::<1>()?[0])
    }

    pub fn u16(&mut self) -> Result<u16, RestoreError> {
        Ok(u16::from_le_bytes(self.take()?))
    }

    #[inline]
    pub fn varint(&mut self) -> Result<u64, RestoreError> {
        // Most numbers a save holds are under 128: one byte, no loop.
        if let Some(&byte) = self.bytes.get(self.at)
            && byte < 0x80
        {
            self.at += 1;
            return Ok(u64::from(byte));
        }
        self.long_varint()
    }

    /// [`Reader::varint`] of two bytes or more (or none left).
    fn long_varint(&mut self) -> Result<u64, RestoreError> {
        let mut value = 0u64;
        // At most ten bytes hold 64 bits; the tenth may carry only the top bit.
        for (index, &byte) in self.bytes[self.at..].iter().take(10).enumerate() {
            value |= u64::from(byte & 0x7f) << (7 * index);
            if byte & 0x80 == 0 {
                if index == 9 && byte > 1 {
                    break;
                }
                self.at += index + 1;
                return Ok(value);
            }
        }
        Err(self.bad_varint())
    }

    #[cold]
    fn bad_varint(&self) -> RestoreError {
        self.malformed("a variable-length number past 64 bits or past the end")
    }

    #[inline]
    pub fn u32(&mut self) -> Result<u32, RestoreError> {
        let value = self.varint()?;
        u32::try_from(value).map_err(|_| self.malformed(format!("{value} past a 32-bit field")))
    }

    pub fn u64(&mut self) -> Result<u64, RestoreError> {
        self.varint()
    }

    /// A `u64` in eight little-endian bytes (a length written after what it measures).
    pub fn u64_fixed(&mut self) -> Result<u64, RestoreError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    #[inline]
    pub fn signed(&mut self) -> Result<i64, RestoreError> {
        let value = self.varint()?;
        Ok((value >> 1) as i64 ^ -((value & 1) as i64))
    }

    pub fn f32(&mut self) -> Result<f32, RestoreError> {
        Ok(f32::from_bits(u32::from_le_bytes(self.take()?)))
    }

    /// `count` agents' shared values' places as [`Writer::shared_column`] wrote them (the
    /// lanes may be read before the table is: see [`Reader::shared_at`]).
    pub fn shared_places(&mut self, count: usize) -> Result<Vec<u32>, RestoreError> {
        self.raw_column(count, None)
    }

    /// Keeps the shared table read, for the values that name their place in it.
    pub fn set_shared<T: Send + Sync + 'static>(&mut self, values: Vec<Arc<T>>) {
        self.shared = Some(Box::new(values));
    }

    /// The shared table read (empty before it is, or if it holds another type).
    pub fn shared<T: Send + Sync + 'static>(&self) -> &[Arc<T>] {
        self.shared
            .as_ref()
            .and_then(|table| table.downcast_ref::<Vec<Arc<T>>>())
            .map_or(&[], Vec::as_slice)
    }

    /// The shared value at `place`, refused by place past the table.
    pub fn shared_value<T: Send + Sync + 'static>(
        &self,
        place: u32,
    ) -> Result<Arc<T>, RestoreError> {
        let table = self.shared::<T>();
        match table.get(place as usize) {
            Some(value) => Ok(value.clone()),
            None => Err(self.malformed(format!(
                "shared value {place} of a table of {}",
                table.len()
            ))),
        }
    }

    /// The shared values of the table at `places` (`u32::MAX`: none), by slot.
    pub fn shared_at<T: Send + Sync + 'static>(
        &self,
        places: &[u32],
    ) -> Result<Vec<Option<Arc<T>>>, RestoreError> {
        let table = self.shared::<T>();
        let count = table.len();
        if let Some((slot, place)) = places
            .iter()
            .enumerate()
            .find(|&(_, &place)| place != u32::MAX && place as usize >= count)
        {
            return Err(self.malformed(format!(
                "slot {slot}: shared value {place} of a table of {count}"
            )));
        }
        // Each share counts itself in its value, a line scattered in memory: the cores'
        // misses overlap when both take a share of the slots.
        Ok(places
            .par_iter()
            .map(|&place| (place != u32::MAX).then(|| table[place as usize].clone()))
            .collect())
    }

    #[inline]
    fn bytes_of(&mut self, len: usize) -> Result<&'a [u8], RestoreError> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.malformed(format!("{len} bytes needed past the end")));
        };
        let bytes = &self.bytes[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    /// A length, refused if the bytes left could not hold that many items of at least
    /// `item_bytes` each (so a corrupt length cannot ask for a huge allocation).
    pub fn len(&mut self, item_bytes: usize) -> Result<usize, RestoreError> {
        let len = usize::try_from(self.varint()?).unwrap_or(usize::MAX);
        let left = self.bytes.len() - self.at;
        if len.saturating_mul(item_bytes.max(1)) > left {
            return Err(self.malformed(format!(
                "a count of {len} items does not fit in the {left} bytes left"
            )));
        }
        Ok(len)
    }

    /// Enters section `name`, whose tag must come next.
    pub fn section(&mut self, name: &'static str, tag: &[u8; 4]) -> Result<(), RestoreError> {
        self.section = name;
        let found = self.take::<4>()?;
        if &found != tag {
            return Err(self.malformed(format!(
                "section tag {:?} where {:?} belongs",
                String::from_utf8_lossy(&found),
                String::from_utf8_lossy(tag)
            )));
        }
        Ok(())
    }

    /// `count` elements (a lane).
    pub fn elements<T: Saved>(&mut self, count: usize) -> Result<Vec<T>, RestoreError> {
        let mut values = Vec::with_capacity(count);
        for _ in 0..count {
            values.push(T::read(self)?);
        }
        Ok(values)
    }

    /// Whether every byte was read.
    pub fn is_at_end(&self) -> bool {
        self.at == self.bytes.len()
    }
}

/// A value with a saved form.
pub(crate) trait Saved: Sized {
    /// Bytes the smallest saved value takes (for [`Reader::len`]'s bound).
    const MIN_BYTES: usize;
    fn write(&self, out: &mut Writer);
    fn read(input: &mut Reader) -> Result<Self, RestoreError>;
}

macro_rules! saved_number {
    ($($type:ident: $min_bytes:expr),*) => {$(
        impl Saved for $type {
            const MIN_BYTES: usize = $min_bytes;
            fn write(&self, out: &mut Writer) {
                out.$type(*self);
            }
            fn read(input: &mut Reader) -> Result<Self, RestoreError> {
                input.$type()
            }
        }
    )*};
}
saved_number!(u8: 1, u16: 2, u32: 1, u64: 1, f32: 4);

impl Saved for bool {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        out.u8(u8::from(*self));
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        match input.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(input.malformed(format!("boolean byte {other}"))),
        }
    }
}

impl Saved for Vec2 {
    const MIN_BYTES: usize = 8;
    fn write(&self, out: &mut Writer) {
        out.f32(self.x);
        out.f32(self.y);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok(Vec2::new(input.f32()?, input.f32()?))
    }
}

impl Saved for Vec3 {
    const MIN_BYTES: usize = 12;
    fn write(&self, out: &mut Writer) {
        out.f32(self.x);
        out.f32(self.y);
        out.f32(self.z);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok(Vec3::new(input.f32()?, input.f32()?, input.f32()?))
    }
}

impl<T: Saved> Saved for Option<T> {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        match self {
            None => out.u8(0),
            Some(value) => {
                out.u8(1);
                value.write(out);
            }
        }
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        match input.u8()? {
            0 => Ok(None),
            1 => Ok(Some(T::read(input)?)),
            other => Err(input.malformed(format!("option byte {other}"))),
        }
    }
}

impl<T: Saved> Saved for Vec<T> {
    const MIN_BYTES: usize = 4;
    fn write(&self, out: &mut Writer) {
        out.len(self.len());
        out.elements(self);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let len = input.len(T::MIN_BYTES)?;
        input.elements(len)
    }
}

impl<A: Saved, B: Saved> Saved for (A, B) {
    const MIN_BYTES: usize = A::MIN_BYTES + B::MIN_BYTES;
    fn write(&self, out: &mut Writer) {
        self.0.write(out);
        self.1.write(out);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok((A::read(input)?, B::read(input)?))
    }
}

/// Implements [`Saved`] for a struct by its fields, in order.
macro_rules! saved_struct {
    ($type:ty { $($field:ident),* $(,)? }) => {
        impl $crate::crowd::codec::Saved for $type {
            const MIN_BYTES: usize = 0;
            fn write(&self, out: &mut $crate::crowd::codec::Writer) {
                $($crate::crowd::codec::Saved::write(&self.$field, out);)*
            }
            fn read(
                input: &mut $crate::crowd::codec::Reader,
            ) -> Result<Self, $crate::crowd::codec::RestoreError> {
                Ok(Self {
                    $($field: $crate::crowd::codec::Saved::read(input)?,)*
                })
            }
        }
    };
}
pub(crate) use saved_struct;

/// Implements [`Saved`] for a one-field tuple struct by its field.
macro_rules! saved_newtype {
    ($($type:ident($inner:ty)),* $(,)?) => {$(
        impl $crate::crowd::codec::Saved for $type {
            const MIN_BYTES: usize = <$inner as $crate::crowd::codec::Saved>::MIN_BYTES;
            fn write(&self, out: &mut $crate::crowd::codec::Writer) {
                $crate::crowd::codec::Saved::write(&self.0, out);
            }
            fn read(
                input: &mut $crate::crowd::codec::Reader,
            ) -> Result<Self, $crate::crowd::codec::RestoreError> {
                Ok($type($crate::crowd::codec::Saved::read(input)?))
            }
        }
    )*};
}
pub(crate) use saved_newtype;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_as_written_and_a_short_input_is_refused_by_section() {
        let table = SharedTable::<u8>::of_lanes(&[], 0);
        let mut out = Writer::new(&table.places);
        out.tag(b"TEST");
        (7u8, 0x1234_5678u32).write(&mut out);
        Some(Vec3::new(1.0, -2.5, f32::MAX)).write(&mut out);
        vec![true, false].write(&mut out);
        let mut input = Reader::new(&out.bytes);
        input.section("test", b"TEST").unwrap();
        assert_eq!(<(u8, u32)>::read(&mut input).unwrap(), (7, 0x1234_5678));
        assert_eq!(
            Option::<Vec3>::read(&mut input).unwrap(),
            Some(Vec3::new(1.0, -2.5, f32::MAX))
        );
        assert_eq!(Vec::<bool>::read(&mut input).unwrap(), vec![true, false]);
        assert!(input.is_at_end());

        let cut = &out.bytes[..out.bytes.len() - 1];
        let mut input = Reader::new(cut);
        input.section("test", b"TEST").unwrap();
        <(u8, u32)>::read(&mut input).unwrap();
        Option::<Vec3>::read(&mut input).unwrap();
        let error = Vec::<bool>::read(&mut input).unwrap_err();
        assert!(
            matches!(
                &error,
                RestoreError::Malformed {
                    section: "test",
                    ..
                }
            ),
            "{error}"
        );
    }

    #[test]
    fn a_count_larger_than_the_bytes_left_is_refused_before_allocating() {
        let table = SharedTable::<u8>::of_lanes(&[], 0);
        let mut out = Writer::new(&table.places);
        out.u32(u32::MAX);
        let mut input = Reader::new(&out.bytes);
        let error = Vec::<u64>::read(&mut input).unwrap_err();
        assert!(error.to_string().contains("4294967295"), "{error}");
    }

    #[test]
    fn a_byte_no_boolean_has_is_refused_by_value() {
        let mut input = Reader::new(&[2]);
        let error = bool::read(&mut input).unwrap_err();
        assert!(error.to_string().contains("boolean byte 2"), "{error}");
    }
}
