//! Columns: one kind of value for every agent (or every order, every queued job), in slot
//! order, in the smallest of a few forms.
//!
//! Stage: crowd runtime, save and restore (the codec's per-agent half). A column is a mode
//! byte, then:
//! - `SAME`: the one value every row has (radius, speeds, support, filter);
//! - `MOSTLY`: the value most rows have, then the count of the others and each as the gap
//!   from the previous one's row (LEB128) and its value (no slope ahead, not stalled);
//! - `EACH`: every value's little-endian bytes as one block (positions, velocities);
//! - `NARROW` (integers): a width byte, 1 or 2, and every value in that many bytes (agent
//!   indices under 65,536, corridor cursors under 256);
//! - `DELTAS` (integers): each value as the zigzag LEB128 difference from the previous one,
//!   the first from 0 (places in the corridor table rise by one from slot to slot, logical
//!   ids by a few).
//!
//! A column can be written against a reference: a column of the same rows the reader has
//! already read, which usually holds the same value (the preferred velocity against the
//! velocity, the progress anchor against the position, a queued job's target against its
//! agent's order). Then `MOSTLY` takes the reference's value as each row's usual value
//! (none is written), and `DELTAS` takes differences from it; `SAME` and `NARROW` are not
//! used. 64-bit integers are written as two 32-bit columns, the low halves, then the high
//! halves (an id's index, then its generation, mostly one value).
//!
//! The writer measures every form that applies in one pass over the column and writes the
//! smallest (on a tie, the earlier in the order above), so the choice is a function of the
//! values alone and the same crowd always writes the same bytes. Floats are compared by
//! their bits, so `-0.0`, `0.0` and every NaN keep their exact bits.

use super::RestoreError;
use crate::crowd::codec::{Reader, Writer, put_varint};

/// Column mode: each row's value.
const COLUMN_EACH: u8 = 0;
/// Column mode: one value for every row.
const COLUMN_SAME: u8 = 1;
/// Column mode: the usual value for all but a few rows, listed by row.
const COLUMN_MOSTLY: u8 = 2;
/// Column mode: integers in a narrower width.
const COLUMN_NARROW: u8 = 3;
/// Column mode: integers as differences.
const COLUMN_DELTAS: u8 = 4;

/// A plain value a column holds, compared by its bits.
pub(crate) trait RawValue: bytemuck::Pod + std::fmt::Debug {
    /// Whether the value is an integer, so differences and narrow widths apply (the bits of
    /// nearby floats differ in their low bits as much as distant ones do).
    const INTEGER: bool;
    /// The bits, zero-extended.
    fn to_bits64(self) -> u64;
    /// The value of the low bits.
    fn from_bits64(bits: u64) -> Self;
}

macro_rules! raw_integer {
    ($($type:ty),*) => {$(
        impl RawValue for $type {
            const INTEGER: bool = true;
            #[inline]
            fn to_bits64(self) -> u64 {
                self as u64
            }
            #[inline]
            fn from_bits64(bits: u64) -> Self {
                bits as $type
            }
        }
    )*};
}
raw_integer!(u8, u16, u32, u64);

impl RawValue for f32 {
    const INTEGER: bool = false;
    #[inline]
    fn to_bits64(self) -> u64 {
        u64::from(self.to_bits())
    }
    #[inline]
    fn from_bits64(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

/// The value `base + difference`, `difference` as [`zigzag32`] gave it.
#[inline]
fn undo_difference<R: RawValue>(zigzag: u64, base: u64) -> R {
    let signed = (zigzag >> 1) as i64 ^ -((zigzag & 1) as i64);
    R::from_bits64(base.wrapping_add(signed as u64))
}

/// The bits of a value of at most 32 bits.
#[inline]
fn bits32<R: RawValue>(value: R) -> u32 {
    value.to_bits64() as u32
}

/// The difference `value - base` in the values' width, sign-extended and zigzagged (0, -1,
/// 1, -2, ... as 0, 1, 2, 3, ...), so a small step either way is one LEB128 byte. Values
/// are at most 32 bits wide (wider ones are written as two columns), so the difference fits
/// 32 bits, a width the measuring loops run four or eight to a vector.
#[inline]
fn zigzag32<R: RawValue>(value: R, base: R) -> u32 {
    let shift = 32 - 8 * size_of::<R>() as u32;
    let signed = ((bits32(value).wrapping_sub(bits32(base)) << shift) as i32) >> shift;
    ((signed << 1) ^ (signed >> 31)) as u32
}

/// Bytes of a 32-bit number as LEB128, by comparisons (which run in vectors).
#[inline]
fn varint_bytes32(value: u32) -> usize {
    1 + usize::from(value >= 1 << 7)
        + usize::from(value >= 1 << 14)
        + usize::from(value >= 1 << 21)
        + usize::from(value >= 1 << 28)
}

/// What the writer needs to choose a column's form, measured in one pass written so it
/// runs in vectors.
struct Measure {
    /// Rows whose value is not their usual one (the first row's, or the reference's).
    exceptions: usize,
    /// Bytes of the differences (from the row before, or from the reference).
    deltas_bytes: usize,
    /// Every value's bits or-ed together (the widest value's width); integers alone only.
    all_bits: u32,
}

impl Measure {
    const EMPTY: Measure = Measure {
        exceptions: 0,
        deltas_bytes: 0,
        all_bits: 0,
    };

    fn of<R: RawValue>(values: &[R], reference: Option<&[R]>) -> Measure {
        match reference {
            Some(reference) => Measure::against(values, reference),
            None => Measure::alone(values),
        }
    }

    /// Against a reference: the usual value is the reference's, the difference from it.
    fn against<R: RawValue>(values: &[R], reference: &[R]) -> Measure {
        let mut measure = Measure::EMPTY;
        // Counted in 32 bits a block of rows (four or eight to a vector, where 64-bit
        // counts would run two or four), the blocks short enough that no count overflows.
        for (values, reference) in values
            .chunks(ROWS_PER_COUNT)
            .zip(reference.chunks(ROWS_PER_COUNT))
        {
            let mut exceptions = 0u32;
            let mut deltas_bytes = 0u32;
            for (&value, &usual) in values.iter().zip(reference) {
                exceptions += u32::from(bits32(value) != bits32(usual));
                if R::INTEGER {
                    deltas_bytes += varint_bytes32(zigzag32(value, usual)) as u32;
                }
            }
            measure.exceptions += exceptions as usize;
            measure.deltas_bytes += deltas_bytes as usize;
        }
        measure
    }

    /// Alone: the usual value is the first row's, the difference from the row before.
    fn alone<R: RawValue>(values: &[R]) -> Measure {
        let Some(&first) = values.first() else {
            return Measure::EMPTY;
        };
        let mut measure = Measure::EMPTY;
        if R::INTEGER {
            measure.deltas_bytes = varint_bytes32(zigzag32(first, R::zeroed()));
            measure.all_bits = bits32(first);
        }
        // Row by row from the second, beside the row before it, in blocks as above.
        for block_start in (1..values.len()).step_by(ROWS_PER_COUNT) {
            let block_end = (block_start + ROWS_PER_COUNT).min(values.len());
            let rows = &values[block_start..block_end];
            let previous_rows = &values[block_start - 1..block_end - 1];
            let mut exceptions = 0u32;
            let mut deltas_bytes = 0u32;
            let mut all_bits = 0u32;
            for (&value, &previous) in rows.iter().zip(previous_rows) {
                exceptions += u32::from(bits32(value) != bits32(first));
                if R::INTEGER {
                    deltas_bytes += varint_bytes32(zigzag32(value, previous)) as u32;
                    all_bits |= bits32(value);
                }
            }
            measure.exceptions += exceptions as usize;
            measure.deltas_bytes += deltas_bytes as usize;
            measure.all_bits |= all_bits;
        }
        measure
    }
}

/// Rows counted in 32 bits at a time by [`Measure`]: at five bytes a difference at most,
/// no count of a block reaches 2^32.
const ROWS_PER_COUNT: usize = 1 << 24;

/// Calls `exception` with each row (and its value) whose value is not its usual one: the
/// reference's, or `first` without one. Rows are compared thirty-two at a time into a mask
/// (which runs in vectors), and only the mask's set bits are visited: a block without
/// exceptions costs its comparisons alone.
#[inline]
fn for_each_exception<R: RawValue>(
    values: &[R],
    reference: Option<&[R]>,
    first: R,
    mut exception: impl FnMut(usize, R),
) {
    const BLOCK: usize = 32;
    for (block_index, block) in values.chunks(BLOCK).enumerate() {
        let start = block_index * BLOCK;
        let mut differs = 0u32;
        match reference {
            Some(reference) => {
                let usual = &reference[start..start + block.len()];
                for (offset, (&value, &usual)) in block.iter().zip(usual).enumerate() {
                    differs |= u32::from(bits32(value) != bits32(usual)) << offset;
                }
            }
            None => {
                for (offset, &value) in block.iter().enumerate() {
                    differs |= u32::from(bits32(value) != bits32(first)) << offset;
                }
            }
        }
        while differs != 0 {
            let offset = differs.trailing_zeros() as usize;
            exception(start + offset, block[offset]);
            differs &= differs - 1;
        }
    }
}

/// Bytes of a number as LEB128.
#[inline]
fn varint_bytes(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// Splits 64-bit values into their low and high halves.
fn halves<R: RawValue>(values: &[R]) -> (Vec<u32>, Vec<u32>) {
    values
        .iter()
        .map(|value| {
            let bits = value.to_bits64();
            (bits as u32, (bits >> 32) as u32)
        })
        .unzip()
}

impl Writer<'_> {
    /// A column of `values`, against `reference` if given (as many rows; see the module
    /// doc).
    pub(crate) fn raw_column<R: RawValue>(&mut self, values: &[R], reference: Option<&[R]>) {
        debug_assert!(reference.is_none_or(|reference| reference.len() == values.len()));
        if size_of::<R>() == 8 {
            let (low, high) = halves(values);
            let reference = reference.map(halves);
            self.raw_column_narrow(&low, reference.as_ref().map(|(low, _)| &low[..]));
            self.raw_column_narrow(&high, reference.as_ref().map(|(_, high)| &high[..]));
        } else {
            self.raw_column_narrow(values, reference);
        }
    }

    /// [`Writer::raw_column`] of values of at most 32 bits.
    fn raw_column_narrow<R: RawValue>(&mut self, values: &[R], reference: Option<&[R]>) {
        let size = size_of::<R>();
        let first = values.first().copied().unwrap_or_else(R::zeroed);
        let measure = Measure::of(values, reference);
        let count = values.len();
        let each = size_of_val(values);
        let exceptions = measure.exceptions;
        // Each exception's gap is one or two bytes; two is the bound used.
        let mostly = varint_bytes(exceptions as u64)
            + exceptions * (size + 2)
            + if reference.is_some() { 0 } else { size };
        let narrow_width = match measure.all_bits {
            _ if !R::INTEGER || reference.is_some() => size,
            0..0x100 => 1,
            0x100..0x1_0000 => 2,
            _ => size,
        };
        let narrow = if narrow_width < size {
            1 + count * narrow_width
        } else {
            usize::MAX
        };
        let deltas = if R::INTEGER {
            measure.deltas_bytes
        } else {
            usize::MAX
        };
        if reference.is_none() && count > 0 && exceptions == 0 {
            self.u8(COLUMN_SAME);
            self.bytes.extend_from_slice(bytemuck::bytes_of(&first));
        } else if each <= narrow.min(mostly).min(deltas) {
            self.u8(COLUMN_EACH);
            self.bytes.extend_from_slice(bytemuck::cast_slice(values));
        } else if narrow <= mostly.min(deltas) {
            self.u8(COLUMN_NARROW);
            self.u8(narrow_width as u8);
            let start = self.bytes.len();
            self.bytes.resize(start + count * narrow_width, 0);
            let room = &mut self.bytes[start..];
            for (place, value) in room.chunks_exact_mut(narrow_width).zip(values) {
                place.copy_from_slice(&bits32(*value).to_le_bytes()[..narrow_width]);
            }
        } else if mostly <= deltas {
            self.u8(COLUMN_MOSTLY);
            if reference.is_none() {
                self.bytes.extend_from_slice(bytemuck::bytes_of(&first));
            }
            self.len(exceptions);
            let mut previous_row = 0;
            for_each_exception(values, reference, first, |row, value| {
                self.len(row - previous_row);
                self.bytes.extend_from_slice(bytemuck::bytes_of(&value));
                previous_row = row;
            });
        } else {
            self.u8(COLUMN_DELTAS);
            // The measure gave the exact length: the room is made once and filled.
            let start = self.bytes.len();
            self.bytes.resize(start + measure.deltas_bytes, 0);
            let room = &mut self.bytes[start..];
            let mut at = 0;
            match reference {
                Some(reference) => {
                    for (&value, &base) in values.iter().zip(reference) {
                        at = put_varint(room, at, u64::from(zigzag32(value, base)));
                    }
                }
                None => {
                    let mut previous = R::zeroed();
                    for &value in values {
                        at = put_varint(room, at, u64::from(zigzag32(value, previous)));
                        previous = value;
                    }
                }
            }
            debug_assert_eq!(at, measure.deltas_bytes, "the measure of a deltas column");
        }
    }

    /// A column of values with a plain form.
    pub(crate) fn column<T: LaneValue>(&mut self, values: &[T]) {
        T::write_column(values, None, self);
    }

    /// A column of values with a plain form, against a reference column of as many rows.
    pub(crate) fn column_against<T: LaneValue>(&mut self, values: &[T], reference: &[T]) {
        T::write_column(values, Some(reference), self);
    }
}

impl Reader<'_> {
    /// `count` values as [`Writer::raw_column`] wrote them, against `reference` (of
    /// `count` rows) if given.
    pub(crate) fn raw_column<R: RawValue>(
        &mut self,
        count: usize,
        reference: Option<&[R]>,
    ) -> Result<Vec<R>, RestoreError> {
        if reference.is_some_and(|reference| reference.len() != count) {
            return Err(self.malformed(format!("a column of {count} rows read against another")));
        }
        if size_of::<R>() == 8 {
            let reference = reference.map(halves);
            let low: Vec<u32> =
                self.raw_column_narrow(count, reference.as_ref().map(|(low, _)| &low[..]))?;
            let high: Vec<u32> =
                self.raw_column_narrow(count, reference.as_ref().map(|(_, high)| &high[..]))?;
            Ok(low
                .into_iter()
                .zip(high)
                .map(|(low, high)| R::from_bits64(u64::from(high) << 32 | u64::from(low)))
                .collect())
        } else {
            self.raw_column_narrow(count, reference)
        }
    }

    fn raw_column_narrow<R: RawValue>(
        &mut self,
        count: usize,
        reference: Option<&[R]>,
    ) -> Result<Vec<R>, RestoreError> {
        let size = size_of::<R>();
        match self.u8()? {
            COLUMN_SAME if reference.is_none() => {
                let value = bytemuck::pod_read_unaligned(self.raw_bytes(size)?);
                Ok(vec![value; count])
            }
            COLUMN_EACH => {
                let block = size
                    .checked_mul(count)
                    .ok_or_else(|| self.malformed(format!("a column of {count} values")))?;
                let bytes = self.raw_bytes(block)?;
                let mut values = vec![R::zeroed(); count];
                bytemuck::cast_slice_mut::<R, u8>(&mut values).copy_from_slice(bytes);
                Ok(values)
            }
            COLUMN_NARROW if R::INTEGER && reference.is_none() => {
                let width = usize::from(self.u8()?);
                if width == 0 || width >= size {
                    return Err(
                        self.malformed(format!("a column narrowed to {width} bytes from {size}"))
                    );
                }
                let block = width
                    .checked_mul(count)
                    .ok_or_else(|| self.malformed(format!("a column of {count} values")))?;
                let bytes = self.raw_bytes(block)?;
                Ok(bytes
                    .chunks_exact(width)
                    .map(|chunk| {
                        let mut bits = [0u8; 8];
                        bits[..width].copy_from_slice(chunk);
                        R::from_bits64(u64::from_le_bytes(bits))
                    })
                    .collect())
            }
            COLUMN_MOSTLY => {
                let mut values = match reference {
                    Some(reference) => reference.to_vec(),
                    None => vec![bytemuck::pod_read_unaligned(self.raw_bytes(size)?); count],
                };
                let exceptions = self.len(size + 1)?;
                let mut row = 0usize;
                for _ in 0..exceptions {
                    // A gap is a number of rows, not of items in the bytes left.
                    let gap = usize::try_from(self.varint()?).unwrap_or(usize::MAX);
                    row = row.saturating_add(gap);
                    let value = bytemuck::pod_read_unaligned(self.raw_bytes(size)?);
                    match values.get_mut(row) {
                        Some(place) => *place = value,
                        None => {
                            return Err(self.malformed(format!(
                                "an exception at row {row} of a column of {count}"
                            )));
                        }
                    }
                }
                Ok(values)
            }
            COLUMN_DELTAS if R::INTEGER => {
                let mut values = Vec::with_capacity(count);
                let mut previous = 0u64;
                for row in 0..count {
                    let base = match reference {
                        Some(reference) => reference[row].to_bits64(),
                        None => previous,
                    };
                    let value: R = undo_difference(self.varint()?, base);
                    previous = value.to_bits64();
                    values.push(value);
                }
                Ok(values)
            }
            other => Err(self.malformed(format!(
                "column mode {other} for a column of {}{}",
                std::any::type_name::<R>(),
                if reference.is_some() {
                    " against a reference"
                } else {
                    ""
                }
            ))),
        }
    }

    /// A column of `count` values with a plain form, each checked by
    /// [`LaneValue::from_raw`].
    pub(crate) fn column<T: LaneValue>(&mut self, count: usize) -> Result<Vec<T>, RestoreError> {
        T::read_column(self, count, None)
    }

    /// A column of values with a plain form written against `reference` (its rows the
    /// column's).
    pub(crate) fn column_against<T: LaneValue>(
        &mut self,
        reference: &[T],
    ) -> Result<Vec<T>, RestoreError> {
        T::read_column(self, reference.len(), Some(reference))
    }
}

/// A value with a plain form a column holds.
pub(crate) trait LaneValue: Sized {
    /// The plain form.
    type Raw: RawValue;
    fn raw(&self) -> Self::Raw;
    /// The value of a plain form; `None` if no value has it.
    fn from_raw(raw: Self::Raw) -> Option<Self>;

    /// Writes a column of values by their plain forms.
    fn write_column(values: &[Self], reference: Option<&[Self]>, out: &mut Writer) {
        let raw: Vec<Self::Raw> = values.iter().map(Self::raw).collect();
        let reference: Option<Vec<Self::Raw>> =
            reference.map(|reference| reference.iter().map(Self::raw).collect());
        out.raw_column(&raw, reference.as_deref());
    }

    /// Reads a column [`LaneValue::write_column`] wrote.
    fn read_column(
        input: &mut Reader,
        count: usize,
        reference: Option<&[Self]>,
    ) -> Result<Vec<Self>, RestoreError> {
        let reference: Option<Vec<Self::Raw>> =
            reference.map(|reference| reference.iter().map(Self::raw).collect());
        let raw = input.raw_column::<Self::Raw>(count, reference.as_deref())?;
        let mut values = Vec::with_capacity(raw.len());
        for (row, raw) in raw.into_iter().enumerate() {
            match Self::from_raw(raw) {
                Some(value) => values.push(value),
                None => {
                    return Err(input.malformed(format!(
                        "value {raw:?} of row {row} in a column of {}",
                        std::any::type_name::<Self>()
                    )));
                }
            }
        }
        Ok(values)
    }
}

/// Numbers are their own plain form: their columns are written and read as they are.
macro_rules! plain_lane_value {
    ($($type:ty),*) => {$(
        impl LaneValue for $type {
            type Raw = $type;
            fn raw(&self) -> $type {
                *self
            }
            fn from_raw(raw: $type) -> Option<$type> {
                Some(raw)
            }
            fn write_column(values: &[$type], reference: Option<&[$type]>, out: &mut Writer) {
                out.raw_column(values, reference);
            }
            fn read_column(
                input: &mut Reader,
                count: usize,
                reference: Option<&[$type]>,
            ) -> Result<Vec<$type>, RestoreError> {
                input.raw_column(count, reference)
            }
        }
    )*};
}
plain_lane_value!(u8, u32, u64, f32);

impl LaneValue for bool {
    type Raw = u8;
    fn raw(&self) -> u8 {
        u8::from(*self)
    }
    fn from_raw(raw: u8) -> Option<bool> {
        match raw {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crowd::codec::SharedTable;

    fn same_bits<R: RawValue>(a: R, b: R) -> bool {
        a.to_bits64() == b.to_bits64()
    }

    /// Writes `values` (against `reference`), checks the mode chosen, reads them back;
    /// the column's length in bytes.
    fn round_trip<R: RawValue>(values: &[R], reference: Option<&[R]>, mode: u8) -> usize {
        let bytes = reads_back(values, reference);
        assert_eq!(bytes[0], mode, "mode of {values:?}");
        bytes.len()
    }

    #[test]
    fn each_form_is_chosen_where_it_is_smallest_and_reads_back() {
        let rows = 1000;
        // One value everywhere: the value alone.
        assert_eq!(round_trip(&vec![0.4f32; rows], None, COLUMN_SAME), 5);
        // Mostly one value (bits compared: -0.0 is an exception to 0.0).
        let mut mostly = vec![0.0f32; rows];
        mostly[17] = -0.0;
        mostly[900] = f32::NAN;
        assert_eq!(
            round_trip(&mostly, None, COLUMN_MOSTLY),
            1 + 4 + 1 + 2 * 5 + 1
        );
        // Every value different: the bytes as they are.
        let each: Vec<f32> = (0..rows).map(|row| row as f32 * 0.37).collect();
        assert_eq!(round_trip(&each, None, COLUMN_EACH), 1 + 4 * rows);
        // Small integers in scattered order: a byte each.
        let narrow: Vec<u32> = (0..rows as u32).map(|row| row * 7919 % 251).collect();
        assert_eq!(round_trip(&narrow, None, COLUMN_NARROW), 2 + rows);
        let wide: Vec<u32> = (0..rows as u32).map(|row| row * 7919 % 60_000).collect();
        assert_eq!(round_trip(&wide, None, COLUMN_NARROW), 2 + 2 * rows);
        // Rising one by one, with a none (u32::MAX) among them: a byte each, the none's
        // step down and back up included.
        let mut rising: Vec<u32> = (5000..5000 + rows as u32).collect();
        rising[10] = u32::MAX;
        // (The first, 5000, takes two bytes; the steps to and from the none two each.)
        assert_eq!(round_trip(&rising, None, COLUMN_DELTAS), rows + 4);
        // 64-bit values: two columns (indices rising, generations one value).
        let ids: Vec<u64> = (0..rows as u64)
            .map(|row| 1 << 32 | (70_000 + row))
            .collect();
        assert_eq!(round_trip(&ids, None, COLUMN_DELTAS), 3 + rows + 5);
        assert_eq!(round_trip::<u32>(&[], None, COLUMN_EACH), 1);
    }

    #[test]
    fn a_column_against_its_reference_keeps_only_the_rows_that_differ() {
        let rows = 1000;
        let velocity: Vec<f32> = (0..rows).map(|row| (row as f32).sin()).collect();
        let mut desired = velocity.clone();
        desired[3] = 1.5;
        assert_eq!(
            round_trip(&desired, Some(&velocity), COLUMN_MOSTLY),
            1 + 1 + 1 + 4
        );
        // Integers close to their reference: small differences.
        let order: Vec<u64> = (0..rows as u64).map(|row| row * 1_000_003).collect();
        let query: Vec<u64> = order.iter().map(|logical| logical + 1).collect();
        assert_eq!(
            round_trip(&query, Some(&order), COLUMN_DELTAS),
            1 + rows + 2
        );
    }

    /// Writes `values` (against `reference`) and reads them back, whatever the mode; the
    /// column's bytes.
    fn reads_back<R: RawValue>(values: &[R], reference: Option<&[R]>) -> Vec<u8> {
        let table = SharedTable::<u8>::of_lanes(&[], 0);
        let mut out = Writer::new(&table.places);
        out.raw_column(values, reference);
        let mut input = Reader::new(&out.bytes);
        let read: Vec<R> = input.raw_column(values.len(), reference).unwrap();
        assert!(
            read.len() == values.len() && read.iter().zip(values).all(|(a, b)| same_bits(*a, *b)),
            "{read:?} read back from {values:?} (mode {})",
            out.bytes[0]
        );
        assert!(input.is_at_end(), "every byte of {values:?} read");
        out.bytes
    }

    #[test]
    fn columns_of_every_length_and_exception_pattern_read_back() {
        // Lengths around the writer's blocks of sixteen, exceptions anywhere (the first
        // and last rows, block edges), values near and far apart, in every width.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for length in 0..70usize {
            for _ in 0..12 {
                let spread = [1u64, 3, 300, 70_000, u64::MAX][(next() % 5) as usize];
                let exceptions = next() % 4;
                let base = next();
                let mut values: Vec<u64> = (0..length)
                    .map(|row| {
                        if next() % 4 < exceptions {
                            base.wrapping_add(next() % spread.max(1))
                        } else {
                            base.wrapping_add(row as u64 * (spread % 3))
                        }
                    })
                    .collect();
                if length > 0 && next() % 3 == 0 {
                    values[length - 1] ^= 1 << (next() % 64);
                }
                let reference: Vec<u64> = values
                    .iter()
                    .map(|&value| if next() % 5 == 0 { next() } else { value })
                    .collect();
                for reference in [None, Some(&reference[..])] {
                    reads_back(&values, reference);
                    let narrow = |value: &u64| *value as u32;
                    let values32: Vec<u32> = values.iter().map(narrow).collect();
                    let reference32: Option<Vec<u32>> =
                        reference.map(|reference| reference.iter().map(narrow).collect());
                    reads_back(&values32, reference32.as_deref());
                    let values16: Vec<u16> = values.iter().map(|&value| value as u16).collect();
                    reads_back(&values16, None);
                    let values8: Vec<u8> = values.iter().map(|&value| value as u8).collect();
                    reads_back(&values8, None);
                    let floats: Vec<f32> =
                        values32.iter().map(|&bits| f32::from_bits(bits)).collect();
                    let reference_floats: Option<Vec<f32>> =
                        reference32.as_ref().map(|reference| {
                            reference.iter().map(|&bits| f32::from_bits(bits)).collect()
                        });
                    reads_back(&floats, reference_floats.as_deref());
                }
            }
        }
    }

    #[test]
    fn a_mode_the_column_cannot_have_is_refused_by_value() {
        // A narrow float column, and differences against a reference for floats.
        for bytes in [
            &[COLUMN_NARROW, 1, 0][..],
            &[COLUMN_DELTAS, 0][..],
            &[9][..],
        ] {
            let error = Reader::new(bytes).raw_column::<f32>(1, None).unwrap_err();
            assert!(error.to_string().contains("column mode"), "{error}");
        }
        let error = Reader::new(&[COLUMN_NARROW, 4, 0, 0, 0, 0])
            .raw_column::<u32>(1, None)
            .unwrap_err();
        assert!(error.to_string().contains("narrowed to 4"), "{error}");
    }
}
