//! The byte codec of a saved crowd: columns of per-agent values, and single values with
//! the [`Saved`] trait.
//!
//! Stage: crowd runtime, save and restore. Per-agent values are written a column at a time
//! ([`Writer::column`]): a mode byte, then either the one value every agent has (radius,
//! speeds, support and filter are usually the same for the whole crowd) or every agent's
//! value as its plain little-endian bytes, copied as a block. Everything else is written
//! value by value: integers as LEB128 variable-length numbers (ids, counts and indices are
//! mostly small), floats as their four bytes, enums as a tag byte and their fields. A
//! [`Writer`] appends to a byte vector; a
//! [`Reader`] walks a byte slice and refuses, naming the section it was reading, a value
//! that runs past the end or that no saved value has (a status byte out of range, a zero
//! id). Shared corridors are written once, in a table ahead of everything that names them;
//! the writer maps each corridor's address to its place in the table, and the reader hands
//! out the table's corridors by place, so agents that shared a corridor share it again.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use glam::{Vec2, Vec3};

use super::RestoreError;
use crate::crowd::corridor::Corridor;

/// Every corridor a crowd holds, once, in the order they are saved, with each one's place.
/// It borrows the corridors (a clone of each `Arc` would write its count, a cache miss on
/// a cold corridor, for nothing).
pub(crate) struct CorridorTable<'a> {
    pub corridors: Vec<&'a Corridor>,
    /// By address (as a number, so the table is shared between threads).
    places: HashMap<usize, u32, BuildHasherDefault<AddressHasher>>,
    /// The place of each agent's corridor, by slot (`u32::MAX`: none), found as the table
    /// was gathered: the lanes' corridor column is written from it.
    pub lane_places: Vec<u32>,
    /// The place of each cached corridor, in the order the cache is written.
    pub cache_places: Vec<u32>,
}

impl<'a> CorridorTable<'a> {
    /// The table of the agents' corridors (by slot) and the cache's (in the order it is
    /// written), each corridor kept once, in the order met.
    pub fn gather(
        lanes: &'a [Option<Arc<Corridor>>],
        cached: impl ExactSizeIterator<Item = &'a Arc<Corridor>>,
    ) -> CorridorTable<'a> {
        // Sized for every corridor distinct (a few agents share most of theirs, the cache
        // holds mostly the agents'): the map never grows while it is filled.
        let most = lanes.len() + cached.len();
        let mut table = CorridorTable {
            corridors: Vec::with_capacity(most),
            places: HashMap::with_capacity_and_hasher(most, Default::default()),
            lane_places: Vec::with_capacity(lanes.len()),
            cache_places: Vec::with_capacity(cached.len()),
        };
        for corridor in lanes {
            let place = corridor.as_ref().map_or(u32::MAX, |c| table.place_of(c));
            table.lane_places.push(place);
        }
        for corridor in cached {
            let place = table.place_of(corridor);
            table.cache_places.push(place);
        }
        table
    }

    /// The corridor's place, given the next one if it is new.
    fn place_of(&mut self, corridor: &'a Arc<Corridor>) -> u32 {
        let next = self.corridors.len() as u32;
        *self.places.entry(address(corridor)).or_insert_with(|| {
            self.corridors.push(corridor);
            next
        })
    }
}

fn address(corridor: &Arc<Corridor>) -> usize {
    Arc::as_ptr(corridor) as usize
}

/// Hashes a corridor's address: the table looks up tens of thousands a save, and an
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
    table: &'a CorridorTable<'a>,
}

impl<'a> Writer<'a> {
    /// A writer naming corridors by their place in `table`.
    pub fn new(table: &'a CorridorTable<'a>) -> Writer<'a> {
        Writer {
            bytes: Vec::new(),
            table,
        }
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

    pub fn u64(&mut self, value: u64) {
        self.varint(value);
    }

    /// A signed difference, zigzagged (0, -1, 1, -2, ... as 0, 1, 2, 3, ...) so small
    /// differences of either sign take one byte.
    #[inline]
    pub fn signed(&mut self, value: i64) {
        self.varint(((value << 1) ^ (value >> 63)) as u64);
    }

    pub fn f32(&mut self, value: f32) {
        self.bytes.extend_from_slice(&value.to_bits().to_le_bytes());
    }

    /// A length or count.
    pub fn len(&mut self, len: usize) {
        self.varint(len as u64);
    }

    /// A column: every agent's value of one kind, in slot order (see the module doc).
    pub fn column<T: LaneValue>(&mut self, values: &[T]) {
        T::write_column(values, self);
    }

    pub(crate) fn raw_column<R: bytemuck::Pod>(&mut self, raw: &[R]) {
        let bytes: &[u8] = bytemuck::cast_slice(raw);
        let size = size_of::<R>();
        let first = &bytes[..size.min(bytes.len())];
        // Compared as bytes, so -0.0 and 0.0 differ and NaNs compare by their bits.
        let differ = |value: &&[u8]| *value != first;
        let exceptions = bytes.chunks_exact(size).filter(differ).count();
        if raw.len() > 1 && exceptions == 0 {
            self.u8(COLUMN_SAME);
            self.bytes.extend_from_slice(first);
        } else if exceptions * (size + 2) < bytes.len() / 2 {
            // Mostly the first agent's value (no slope ahead, not stalled, on flat ground).
            self.u8(COLUMN_MOSTLY);
            self.bytes.extend_from_slice(first);
            self.len(exceptions);
            let mut previous = 0;
            for (slot, value) in bytes.chunks_exact(size).enumerate() {
                if value != first {
                    self.len(slot - previous);
                    self.bytes.extend_from_slice(value);
                    previous = slot;
                }
            }
        } else {
            self.u8(COLUMN_EACH);
            self.bytes.extend_from_slice(bytes);
        }
    }

    /// A four-byte section tag, checked on reading so a misplaced section is named.
    pub fn tag(&mut self, tag: &[u8; 4]) {
        self.bytes.extend_from_slice(tag);
    }

    /// The place of a corridor in the table.
    fn corridor_place(&self, corridor: &Arc<Corridor>) -> u32 {
        self.table.places[&address(corridor)]
    }

    /// A slice's elements, without their count (a lane, whose count is the crowd's).
    pub fn elements<T: Saved>(&mut self, values: &[T]) {
        for value in values {
            value.write(self);
        }
    }
}

/// Reads saved values from a byte slice.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Where `bytes` start in the payload (for errors).
    base: usize,
    /// The section being read, for errors.
    pub section: &'static str,
    /// The corridor table, once read.
    pub corridors: Vec<Arc<Corridor>>,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            at: 0,
            base: 0,
            section: "header",
            corridors: Vec::new(),
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

    #[inline]
    pub fn signed(&mut self) -> Result<i64, RestoreError> {
        let value = self.varint()?;
        Ok((value >> 1) as i64 ^ -((value & 1) as i64))
    }

    pub fn f32(&mut self) -> Result<f32, RestoreError> {
        Ok(f32::from_bits(u32::from_le_bytes(self.take()?)))
    }

    /// A column of `count` values (see [`Writer::column`]), each checked by
    /// [`LaneValue::from_raw`].
    pub fn column<T: LaneValue>(&mut self, count: usize) -> Result<Vec<T>, RestoreError> {
        T::read_column(self, count)
    }

    /// A column of plain values as [`Writer::raw_column`] wrote it.
    pub(crate) fn raw_column<R: bytemuck::Pod>(
        &mut self,
        count: usize,
    ) -> Result<Vec<R>, RestoreError> {
        let size = size_of::<R>();
        match self.u8()? {
            COLUMN_SAME => {
                let value = bytemuck::pod_read_unaligned(self.bytes_of(size)?);
                Ok(vec![value; count])
            }
            COLUMN_MOSTLY => {
                let value = bytemuck::pod_read_unaligned(self.bytes_of(size)?);
                let mut raw = vec![value; count];
                let exceptions = self.len(size + 1)?;
                let mut slot = 0usize;
                for _ in 0..exceptions {
                    slot = slot.saturating_add(self.len(0)?);
                    let value = bytemuck::pod_read_unaligned(self.bytes_of(size)?);
                    match raw.get_mut(slot) {
                        Some(place) => *place = value,
                        None => {
                            return Err(self.malformed(format!(
                                "an exception at slot {slot} of a column of {count}"
                            )));
                        }
                    }
                }
                Ok(raw)
            }
            COLUMN_EACH => {
                let bytes = self.bytes_of(
                    size.checked_mul(count)
                        .ok_or_else(|| self.malformed(format!("a column of {count} values")))?,
                )?;
                let mut raw = vec![<R as bytemuck::Zeroable>::zeroed(); count];
                bytemuck::cast_slice_mut::<R, u8>(&mut raw).copy_from_slice(bytes);
                Ok(raw)
            }
            other => Err(self.malformed(format!("column mode {other}"))),
        }
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

/// A shared corridor, by its place in the corridor table.
impl Saved for Arc<Corridor> {
    const MIN_BYTES: usize = 4;
    fn write(&self, out: &mut Writer) {
        out.u32(out.corridor_place(self));
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let place = input.u32()?;
        match input.corridors.get(place as usize) {
            Some(corridor) => Ok(corridor.clone()),
            None => Err(input.malformed(format!(
                "corridor {place} of a table of {}",
                input.corridors.len()
            ))),
        }
    }
}

/// Column mode: one value for every agent.
const COLUMN_SAME: u8 = 1;
/// Column mode: each agent's value.
const COLUMN_EACH: u8 = 0;
/// Column mode: the first agent's value for all but a few, listed by slot.
const COLUMN_MOSTLY: u8 = 2;

/// A per-agent value with a plain-bytes form for [`Writer::column`].
pub(crate) trait LaneValue: Sized {
    /// The plain form.
    type Raw: bytemuck::Pod + std::fmt::Debug;
    fn raw(&self, out: &Writer) -> Self::Raw;
    /// The value of a plain form; `None` if no value has it.
    fn from_raw(raw: Self::Raw, input: &Reader) -> Option<Self>;

    /// Writes a column of values (by their plain forms).
    fn write_column(values: &[Self], out: &mut Writer) {
        let raw: Vec<Self::Raw> = values.iter().map(|value| value.raw(out)).collect();
        out.raw_column(&raw);
    }

    /// Reads a column [`LaneValue::write_column`] wrote.
    fn read_column(input: &mut Reader, count: usize) -> Result<Vec<Self>, RestoreError> {
        let raw = input.raw_column::<Self::Raw>(count)?;
        Self::from_raw_column(raw, input)
    }

    /// The values of a column of plain forms, each checked.
    fn from_raw_column(raw: Vec<Self::Raw>, input: &Reader) -> Result<Vec<Self>, RestoreError> {
        let mut values = Vec::with_capacity(raw.len());
        for (slot, raw) in raw.into_iter().enumerate() {
            match Self::from_raw(raw, input) {
                Some(value) => values.push(value),
                None => {
                    return Err(input.malformed(format!(
                        "value {raw:?} of slot {slot} in a column of {}",
                        std::any::type_name::<Self>()
                    )));
                }
            }
        }
        Ok(values)
    }
}

/// Numbers are their own plain form: their columns are copied as they are.
macro_rules! plain_lane_value {
    ($($type:ty),*) => {$(
        impl LaneValue for $type {
            type Raw = $type;
            fn raw(&self, _out: &Writer) -> $type {
                *self
            }
            fn from_raw(raw: $type, _input: &Reader) -> Option<$type> {
                Some(raw)
            }
            fn write_column(values: &[$type], out: &mut Writer) {
                out.raw_column(values);
            }
            fn from_raw_column(raw: Vec<$type>, _input: &Reader) -> Result<Vec<$type>, RestoreError> {
                Ok(raw)
            }
        }
    )*};
}
plain_lane_value!(u8, u32, u64, f32);

impl LaneValue for bool {
    type Raw = u8;
    fn raw(&self, _out: &Writer) -> u8 {
        u8::from(*self)
    }
    fn from_raw(raw: u8, _input: &Reader) -> Option<bool> {
        match raw {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

/// An agent's corridor, by its place in the table (`u32::MAX`: none).
impl LaneValue for Option<Arc<Corridor>> {
    type Raw = u32;
    fn raw(&self, out: &Writer) -> u32 {
        self.as_ref()
            .map_or(u32::MAX, |corridor| out.corridor_place(corridor))
    }
    /// The lanes' corridor column, from the places the table found for it.
    fn write_column(values: &[Self], out: &mut Writer) {
        let table = out.table;
        debug_assert_eq!(values.len(), table.lane_places.len());
        out.raw_column(&table.lane_places);
    }
    fn from_raw(raw: u32, input: &Reader) -> Option<Self> {
        if raw == u32::MAX {
            return Some(None);
        }
        input.corridors.get(raw as usize).cloned().map(Some)
    }
}

/// Implements [`Saved`] for a struct by its fields, in order.
macro_rules! saved_struct {
    ($type:ty { $($field:ident),* $(,)? }) => {
        impl $crate::crowd::save::codec::Saved for $type {
            const MIN_BYTES: usize = 0;
            fn write(&self, out: &mut $crate::crowd::save::codec::Writer) {
                $($crate::crowd::save::codec::Saved::write(&self.$field, out);)*
            }
            fn read(
                input: &mut $crate::crowd::save::codec::Reader,
            ) -> Result<Self, $crate::crowd::save::RestoreError> {
                Ok(Self {
                    $($field: $crate::crowd::save::codec::Saved::read(input)?,)*
                })
            }
        }
    };
}
pub(crate) use saved_struct;

/// Implements [`Saved`] for a one-field tuple struct by its field.
macro_rules! saved_newtype {
    ($($type:ident($inner:ty)),* $(,)?) => {$(
        impl $crate::crowd::save::codec::Saved for $type {
            const MIN_BYTES: usize = <$inner as $crate::crowd::save::codec::Saved>::MIN_BYTES;
            fn write(&self, out: &mut $crate::crowd::save::codec::Writer) {
                $crate::crowd::save::codec::Saved::write(&self.0, out);
            }
            fn read(
                input: &mut $crate::crowd::save::codec::Reader,
            ) -> Result<Self, $crate::crowd::save::RestoreError> {
                Ok($type($crate::crowd::save::codec::Saved::read(input)?))
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
        let table = CorridorTable::gather(&[], std::iter::empty());
        let mut out = Writer::new(&table);
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
        let table = CorridorTable::gather(&[], std::iter::empty());
        let mut out = Writer::new(&table);
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
