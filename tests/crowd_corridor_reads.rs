//! A corridor keeps what its search read in compact form (the slots read and the newest
//! generation seen); through every kind of mesh change it must judge a corridor exactly as
//! the search's full read set does.

use waymark::crowd::internals::CorridorReads;
use waymark::ids::SourceVersion;
use waymark::mesh::{NavMesh, TileData};
use waymark::query::{PathResult, QueryFilter, Validity};

mod common;
use common::{rooms, rooms_door, rooms_query as query};

/// Both forms' verdicts on the current mesh; they must agree.
fn verdict(
    mesh: &NavMesh,
    result: &PathResult,
    reads: &CorridorReads,
    filter: &QueryFilter,
) -> Validity {
    let snapshot = mesh.snapshot();
    let full = result.read_set.still_valid_in(&snapshot, filter, |_| None);
    assert_eq!(reads.still_valid_in(&snapshot, filter), full);
    full
}

#[test]
fn compact_reads_judge_every_mesh_change_as_the_full_read_set_does() {
    let (mut mesh, tiles) = rooms();
    let door = mesh.add_link(rooms_door(true)).unwrap();
    let filter = QueryFilter::new();
    let result = query(&mesh, &filter);
    assert!(result.steps.iter().any(|step| step.via_link == Some(door)));
    let reads = CorridorReads::new(&result.read_set);
    assert_eq!(reads.slots().len(), result.read_set.tiles.len());
    assert_eq!(verdict(&mesh, &result, &reads, &filter), Validity::Valid);

    let snapshot = mesh.snapshot();
    let slot_of =
        |tile: &TileData| snapshot.data().slot_at[&(tile.header.tile_x, tile.header.tile_z)];
    let (read, unread): (Vec<&TileData>, Vec<&TileData>) = tiles
        .iter()
        .partition(|tile| reads.slots().contains(&slot_of(tile)));
    assert!(!read.is_empty() && !unread.is_empty());

    // Rebuilding a tile the search did not read: still valid, though the new generation is
    // now the newest in the mesh.
    mesh.commit_rebuilt_tile(unread[0].clone()).unwrap();
    let rebuilt = mesh.snapshot().data().slots[usize::from(slot_of(unread[0]).0)].generation;
    assert!(rebuilt > reads.newest_generation());
    assert_eq!(verdict(&mesh, &result, &reads, &filter), Validity::Valid);

    // The door closing: the link changed.
    mesh.set_link_open(door, false).unwrap();
    assert_eq!(
        verdict(&mesh, &result, &reads, &filter),
        Validity::LinkChanged(door)
    );
    mesh.set_link_open(door, true).unwrap();
    // Open again, but at a newer version: still changed.
    assert_eq!(
        verdict(&mesh, &result, &reads, &filter),
        Validity::LinkChanged(door)
    );

    // A fresh search on the current mesh, judged under a stricter filter; then a read
    // tile goes pending (its source was edited).
    let result = query(&mesh, &filter);
    let reads = CorridorReads::new(&result.read_set);
    assert_eq!(verdict(&mesh, &result, &reads, &filter), Validity::Valid);
    // A stricter filter.
    let mut stricter = filter.clone();
    stricter.set_links_allowed(false);
    assert_eq!(
        verdict(&mesh, &result, &reads, &stricter),
        Validity::FilterChanged
    );
    let edited = read
        .iter()
        .flat_map(|tile| tile.sources.iter())
        .map(|source| source.instance)
        .next()
        .expect("read tiles have sources");
    let old = mesh.source_version(edited).unwrap();
    assert!(
        !mesh
            .apply_source_changes(&[(edited, SourceVersion(old.0 + 1))])
            .is_empty()
    );
    assert!(matches!(
        verdict(&mesh, &result, &reads, &filter),
        Validity::TileChanged(_)
    ));
}
