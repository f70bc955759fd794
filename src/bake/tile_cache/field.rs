//! The compact heightfield a tile cache keeps per tile, as bytes: what the voxel rebuild
//! decompresses. Only the fields a field has before erosion are written (the grid, and per
//! span its floor, clearance, links and area); regions and distances are remade.

use glam::{Vec2, Vec3};

use crate::bake::compact::CompactHeightfield;

/// The grid's footprint (border included), world x and z.
pub(super) fn footprint(compact: &CompactHeightfield) -> (Vec2, Vec2) {
    let low = Vec2::new(compact.origin.x, compact.origin.z);
    let size = Vec2::new(compact.width as f32, compact.depth as f32) * compact.cell_size;
    (low, low + size)
}

/// The fields a compact heightfield has before erosion, as bytes: the grid's numbers, then
/// per column its span count, then per span its floor, clearance, links and area.
pub(super) fn encode(compact: &CompactHeightfield) -> Vec<u8> {
    let spans = compact.floor.len();
    let mut out = Vec::with_capacity(48 + compact.column_count.len() + spans * 8);
    for value in [
        compact.width,
        compact.depth,
        compact.border,
        compact.walkable_height,
        compact.walkable_climb,
        spans as u32,
    ] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    for value in [
        compact.origin.x,
        compact.origin.y,
        compact.origin.z,
        compact.cell_size,
        compact.cell_height,
    ] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(&compact.column_count);
    out.extend(compact.floor.iter().flat_map(|floor| floor.to_le_bytes()));
    out.extend_from_slice(&compact.clearance);
    out.extend(compact.links.iter().flatten());
    out.extend_from_slice(&compact.areas);
    out
}

/// [`encode`]'s inverse.
pub(super) fn decode(bytes: &[u8]) -> CompactHeightfield {
    let word = |index: usize| {
        u32::from_le_bytes(
            bytes[4 * index..4 * index + 4]
                .try_into()
                .expect("four bytes"),
        )
    };
    let float = |index: usize| f32::from_bits(word(index));
    let (width, depth, spans) = (word(0), word(1), word(5) as usize);
    let columns = (width * depth) as usize;
    let mut at = 44;
    let mut take = |length: usize| {
        let slice = &bytes[at..at + length];
        at += length;
        slice
    };
    let column_count = take(columns).to_vec();
    let floor = take(2 * spans)
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .collect();
    let clearance = take(spans).to_vec();
    let links = take(4 * spans)
        .chunks_exact(4)
        .map(|link| [link[0], link[1], link[2], link[3]])
        .collect();
    let areas = take(spans).to_vec();
    let mut column_first = Vec::with_capacity(columns);
    let mut first = 0u32;
    for &count in &column_count {
        column_first.push(first);
        first += u32::from(count);
    }
    CompactHeightfield {
        width,
        depth,
        border: word(2),
        origin: Vec3::new(float(6), float(7), float(8)),
        cell_size: float(9),
        cell_height: float(10),
        walkable_height: word(3),
        walkable_climb: word(4),
        column_first,
        column_count,
        floor,
        clearance,
        links,
        areas,
        regions: vec![0; spans],
        distances: Vec::new(),
        distance_max: 0,
    }
}
