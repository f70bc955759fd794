//! Tests of `corridor`.

use super::*;
use crate::mesh::{TileGeneration, TileSlot};

fn entry(polygon: u16) -> (CorridorKey, Arc<Corridor>) {
    let reference = PolyRef::new(TileGeneration(1), TileSlot(0), polygon).unwrap();
    let filter = QueryFilter::new();
    let key = CorridorKey {
        start: reference,
        goal: reference,
        filter_id: crate::crowd::FilterId::DEFAULT,
        filter: filter.version(),
        cost: filter.cost_version(),
    };
    let corridor = Corridor::new(&[reference], Vec::new(), true, &ReadSet::default());
    (key, Arc::new(corridor.unwrap()))
}

#[test]
fn a_saved_corridor_past_the_polygon_limit_is_refused_and_one_at_it_restores() {
    let reference = PolyRef::new(TileGeneration(1), TileSlot(0), 7).unwrap();
    let table = crate::crowd::codec::SharedTable::<Corridor>::of_lanes(&[], 0);
    for (polygons, restores) in [
        (CORRIDOR_POLYGONS_MAX, true),
        (CORRIDOR_POLYGONS_MAX + 1, false),
    ] {
        let path = vec![reference; polygons];
        let corridor = Corridor::new(&path, Vec::new(), true, &ReadSet::default()).unwrap();
        let mut out = Writer::new(&table.places);
        corridor.write(&mut out);
        let restored = Corridor::read(&mut Reader::new(&out.bytes));
        match restored {
            Ok(read) => {
                assert!(restores, "{polygons} polygons restored");
                assert_eq!(read, corridor);
            }
            Err(error) => {
                assert!(!restores, "{polygons} polygons refused: {error}");
                let text = error.to_string();
                assert!(text.contains("65537") && text.contains("CORRIDOR_POLYGONS_MAX"));
            }
        }
    }
}

#[test]
fn a_full_cache_drops_only_the_corridors_nobody_holds() {
    let mut cache = CorridorCache::with_capacity(4);
    let mut held = Vec::new();
    for polygon in 0..4 {
        let (key, corridor) = entry(polygon);
        if polygon != 3 {
            held.push(corridor.clone());
        }
        cache.insert(key, corridor);
    }
    assert_eq!(cache.len(), 4, "no sweep up to the capacity");
    let (key, corridor) = entry(100);
    cache.insert(key, corridor);
    // Polygon 3's went; the three held ones and the new one stay.
    assert_eq!((cache.len(), cache.released), (4, 1));
    for corridor in &held {
        assert!(cache.corridors().any(|kept| Arc::ptr_eq(kept, corridor)));
    }
    // The sweep kept three, under the capacity: the next comes at the capacity again, and
    // drops the unheld 100.
    let (key, corridor) = entry(200);
    held.push(corridor.clone());
    cache.insert(key, corridor);
    assert_eq!((cache.len(), cache.released), (4, 2));
    // Twenty held: a sweep comes once the cache has grown by an eighth of what the last
    // kept (two of twenty) and one more, so unheld corridors coming and going never number
    // more than three, and every one of them goes.
    for polygon in 500..516 {
        let (key, corridor) = entry(polygon);
        held.push(corridor.clone());
        cache.insert(key, corridor);
    }
    assert_eq!((cache.len(), cache.released), (20, 2));
    let mut most = 0;
    for polygon in 600..700 {
        let (key, corridor) = entry(polygon);
        cache.insert(key, corridor);
        most = most.max(cache.len());
    }
    assert_eq!(most, 20 + 3);
    assert_eq!((cache.len(), cache.released), (22, 2 + 98));
    for corridor in &held {
        assert!(cache.corridors().any(|kept| Arc::ptr_eq(kept, corridor)));
    }
}

#[test]
fn a_cache_reserved_for_a_crowd_never_grows_its_table_in_a_step() {
    // Every agent holds a corridor and as many unheld ones come and go: the sweeps keep
    // the held ones. The table made at reserve time is never regrown (its room never
    // rises above what was reserved), and after every insert it has room for all the
    // entries allowed before the next sweep, so no insert rehashes it.
    let agents = 300;
    let mut cache = CorridorCache::with_capacity(16);
    cache.try_reserve_for_agents(agents).unwrap();
    let reserved = cache.entries.capacity();
    assert!(
        reserved > agents + agents / 8,
        "room for {reserved} entries"
    );
    let mut held = Vec::new();
    for polygon in 0..(20 * agents) as u16 {
        let (key, corridor) = entry(polygon);
        if polygon % 2 == 0 && held.len() < agents {
            held.push(corridor.clone());
        }
        cache.insert(key, corridor);
        let room = cache.entries.capacity();
        assert!(
            room <= reserved,
            "regrown at entry {polygon}: room for {room}"
        );
        assert!(
            room >= cache.sweep_at,
            "at entry {polygon}: room for {room}, sweep at {}",
            cache.sweep_at
        );
    }
    assert!(cache.released > 0, "the sweeps ran");
}

#[test]
fn slot_bits_meet_only_where_a_slot_or_its_alias_256_apart_is_in_both() {
    let reads = SlotBits::of([TileSlot(3), TileSlot(64), TileSlot(300)]);
    assert!(reads.meets(&SlotBits::of([TileSlot(64)])));
    // 300 and 44 share bit 44: a possible meeting, checked in full by the caller.
    assert!(reads.meets(&SlotBits::of([TileSlot(44)])));
    assert!(!reads.meets(&SlotBits::of([TileSlot(4), TileSlot(65), TileSlot(255)])));
    assert!(!reads.meets(&SlotBits::default()));
    // A corridor's reads keep the bits of its slots, also through a restore.
    let read_set = ReadSet {
        tiles: [7u16, 200]
            .map(|slot| crate::query::TileRead {
                slot: TileSlot(slot),
                generation: TileGeneration(1),
                on_route: true,
            })
            .to_vec(),
        ..ReadSet::default()
    };
    let corridor_reads = CorridorReads::new(&read_set);
    assert_eq!(
        corridor_reads.slot_bits,
        SlotBits::of([TileSlot(7), TileSlot(200)])
    );
    let table = crate::crowd::codec::SharedTable::<Corridor>::of_lanes(&[], 0);
    let mut out = Writer::new(&table.places);
    corridor_reads.write(&mut out);
    let restored = CorridorReads::read(&mut Reader::new(&out.bytes)).unwrap();
    assert_eq!(restored, corridor_reads);
}
