//! The byte codec of a saved crowd: little-endian fixed-width fields, no padding, lengths
//! as `u32`, and the [`Saved`] trait every saved value implements.
//!
//! Stage: crowd runtime, save and restore. A [`Writer`] appends to a byte vector; a
//! [`Reader`] walks a byte slice and refuses, naming the section it was reading, a value
//! that runs past the end or that no saved value has (a status byte out of range, a zero
//! id). Shared corridors are written once, in a table ahead of everything that names them;
//! the writer maps each corridor's address to its place in the table, and the reader hands
//! out the table's corridors by place, so agents that shared a corridor share it again.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Vec2, Vec3};

use super::RestoreError;
use crate::crowd::corridor::Corridor;

/// Appends saved values to a byte vector.
pub(crate) struct Writer {
    pub bytes: Vec<u8>,
    /// Each saved corridor's place in the corridor table, by address.
    corridor_place: HashMap<*const Corridor, u32>,
}

impl Writer {
    /// A writer whose corridor table is `corridors`, in that order.
    pub fn new(corridors: &[Arc<Corridor>]) -> Writer {
        let corridor_place = corridors
            .iter()
            .enumerate()
            .map(|(place, corridor)| (Arc::as_ptr(corridor), place as u32))
            .collect();
        Writer {
            bytes: Vec::new(),
            corridor_place,
        }
    }

    pub fn u8(&mut self, value: u8) {
        self.bytes.push(value);
    }

    pub fn u16(&mut self, value: u16) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    pub fn u32(&mut self, value: u32) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    pub fn u64(&mut self, value: u64) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    pub fn f32(&mut self, value: f32) {
        self.u32(value.to_bits());
    }

    /// A length or count (every saved collection is far below `u32::MAX`: agents are
    /// capped at [`AGENTS_MAX`](crate::crowd::AGENTS_MAX)).
    pub fn len(&mut self, len: usize) {
        self.u32(u32::try_from(len).expect("a saved collection holds fewer than 2^32 items"));
    }

    /// A four-byte section tag, checked on reading so a misplaced section is named.
    pub fn tag(&mut self, tag: &[u8; 4]) {
        self.bytes.extend_from_slice(tag);
    }

    /// The place of a corridor in the table.
    fn corridor(&mut self, corridor: &Arc<Corridor>) {
        let place = self.corridor_place[&Arc::as_ptr(corridor)];
        self.u32(place);
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
            section: "header",
            corridors: Vec::new(),
        }
    }

    /// A value no save holds, in the current section.
    pub fn malformed(&self, detail: impl Into<String>) -> RestoreError {
        RestoreError::Malformed {
            section: self.section,
            offset: self.at,
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

    pub fn u8(&mut self) -> Result<u8, RestoreError> {
        Ok(self.take::<1>()?[0])
    }

    pub fn u16(&mut self) -> Result<u16, RestoreError> {
        Ok(u16::from_le_bytes(self.take()?))
    }

    pub fn u32(&mut self) -> Result<u32, RestoreError> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    pub fn u64(&mut self) -> Result<u64, RestoreError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    pub fn f32(&mut self) -> Result<f32, RestoreError> {
        Ok(f32::from_bits(self.u32()?))
    }

    /// A length, refused if the bytes left could not hold that many items of at least
    /// `item_bytes` each (so a corrupt length cannot ask for a huge allocation).
    pub fn len(&mut self, item_bytes: usize) -> Result<usize, RestoreError> {
        let len = self.u32()? as usize;
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
    ($($type:ident),*) => {$(
        impl Saved for $type {
            const MIN_BYTES: usize = size_of::<$type>();
            fn write(&self, out: &mut Writer) {
                out.$type(*self);
            }
            fn read(input: &mut Reader) -> Result<Self, RestoreError> {
                input.$type()
            }
        }
    )*};
}
saved_number!(u8, u16, u32, u64, f32);

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
        out.corridor(self);
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
            const MIN_BYTES: usize = size_of::<$inner>();
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
        let mut out = Writer::new(&[]);
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
        let mut out = Writer::new(&[]);
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
