//! Spec 001, worked example h1: a result is adopted only if everything it read is unchanged.
//! A door open at version 8 when Q7 is queried and closed (version 9) before adoption
//! rejects Q7, and a new query Q8 finds the other way; moving the target (its transform
//! version) also rejects Q7; rebuilding a tile Q7 did not read keeps it valid. Also: sliced
//! searches equal unsliced ones at any budget, stale references and NaN are errors, and
//! pending tiles are refused until a rebuilt tile with current sources is committed.

use glam::Vec3;
use waymark::ids::{SourceVersion, TargetVersion};
use waymark::mesh::{LinkVersion, NavMesh, NavMeshError, TileData};
use waymark::query::{
    NodePool, PathResult, PathSearch, Progress, QueryError, QueryFilter, Validity, find_path,
    nearest_polygon,
};

mod common;
use common::{ROOMS_GOAL, ROOMS_START, ends, rooms, rooms_door, rooms_query};

const START: Vec3 = ROOMS_START;
const GOAL: Vec3 = ROOMS_GOAL;

fn query(mesh: &NavMesh, filter: &QueryFilter) -> PathResult {
    rooms_query(mesh, filter)
}

#[test]
fn h1_closing_the_door_rejects_q7_and_q8_takes_the_other_way() {
    let (mut mesh, _) = rooms();
    let door = mesh.add_link(rooms_door(false)).unwrap();
    // Seven state changes from closed at version 1: open at version 8, as in the spec.
    let mut version = LinkVersion(1);
    for step in 0..7 {
        version = mesh.set_link_open(door, step % 2 == 0).unwrap();
    }
    assert_eq!(version, LinkVersion(8));
    assert!(mesh.snapshot().link(door).unwrap().open);

    let filter = QueryFilter::new();
    let q7 = query(&mesh, &filter);
    assert!(q7.complete);
    assert!(
        q7.steps.iter().any(|step| step.via_link == Some(door)),
        "Q7 goes through the door"
    );
    assert!(q7.read_set.links.contains(&(door, LinkVersion(8))));
    assert_eq!(
        q7.read_set.still_valid(&mesh, &filter, |_| None),
        Validity::Valid
    );

    // Closed before adoption: version 9, Q7 is rejected.
    assert_eq!(mesh.set_link_open(door, false).unwrap(), LinkVersion(9));
    assert_eq!(
        q7.read_set.still_valid(&mesh, &filter, |_| None),
        Validity::LinkChanged(door)
    );

    // Q8, a new query, finds the corridor round the back: complete, no door, longer.
    let q8 = query(&mesh, &filter);
    assert!(q8.complete);
    assert!(q8.steps.iter().all(|step| step.via_link.is_none()));
    assert!(q8.steps.len() > q7.steps.len());
    assert_eq!(
        q8.read_set.still_valid(&mesh, &filter, |_| None),
        Validity::Valid
    );
}

#[test]
fn h1_moving_the_target_rejects_q7() {
    let (mesh, _) = rooms();
    let filter = QueryFilter::new();
    const COVER: u64 = 7;
    let q7 = query(&mesh, &filter)
        .read_set
        .with_target(COVER, TargetVersion(3));
    assert_eq!(
        q7.still_valid(&mesh, &filter, |_| Some(TargetVersion(3))),
        Validity::Valid
    );
    // The cover moved from a to b: its transform version is now 4.
    assert_eq!(
        q7.still_valid(&mesh, &filter, |_| Some(TargetVersion(4))),
        Validity::TargetChanged(COVER)
    );
}

#[test]
fn h1_rebuilding_an_unread_tile_keeps_q7_and_a_read_one_rejects_it() {
    let (mut mesh, tiles) = rooms();
    let filter = QueryFilter::new();
    let q7 = query(&mesh, &filter);
    let read: Vec<_> = q7.read_set.tiles.iter().map(|read| read.slot).collect();
    let snapshot = mesh.snapshot();
    let slot_of =
        |tile: &TileData| snapshot.data().slot_at[&(tile.header.tile_x, tile.header.tile_z)];
    let unread = tiles
        .iter()
        .find(|tile| !read.contains(&slot_of(tile)))
        .expect("some tile is not read");
    let on_route = tiles
        .iter()
        .find(|tile| {
            q7.read_set
                .tiles
                .iter()
                .any(|r| r.slot == slot_of(tile) && r.on_route)
        })
        .expect("some tile is on the route");
    mesh.commit_rebuilt_tile(unread.clone()).unwrap();
    assert_eq!(
        q7.read_set.still_valid(&mesh, &filter, |_| None),
        Validity::Valid
    );
    mesh.commit_rebuilt_tile(on_route.clone()).unwrap();
    assert_eq!(
        q7.read_set.still_valid(&mesh, &filter, |_| None),
        Validity::TileChanged(slot_of(on_route))
    );
    // Changing the filter also rejects it.
    let mut stricter = filter.clone();
    stricter.set_links_allowed(false);
    assert_eq!(
        query(&mesh, &filter)
            .read_set
            .still_valid(&mesh, &stricter, |_| None),
        Validity::FilterChanged
    );
}

#[test]
fn pending_tiles_are_refused_until_a_current_rebuild_is_committed() {
    let (mut mesh, tiles) = rooms();
    let filter = QueryFilter::new();
    let before = query(&mesh, &filter);
    let start_tile = before.steps[0].polygon;
    // Room A's instance (0) is edited: its tiles go pending in the same call.
    let old = mesh.source_version(0).unwrap();
    let pending = mesh.apply_source_changes(&[(0, SourceVersion(old.0 + 100))]);
    assert!(!pending.is_empty());
    let snapshot = mesh.snapshot();
    assert!(
        snapshot.tile(start_tile).is_none(),
        "the old reference is stale"
    );
    let extents = Vec3::new(1.0, 2.0, 1.0);
    assert_eq!(
        nearest_polygon(&snapshot, START, extents, &filter).unwrap(),
        None,
        "pending space is not walkable"
    );
    let to = nearest_polygon(&snapshot, GOAL, extents, &filter)
        .unwrap()
        .unwrap();
    let error = find_path(
        &snapshot,
        start_tile,
        START,
        to.polygon,
        to.point,
        &filter,
        &mut NodePool::new(64),
    )
    .unwrap_err();
    assert_eq!(error, QueryError::StaleRef(start_tile));
    // A tile rebuilt from the old source version is refused, naming the versions.
    let stale = tiles
        .iter()
        .find(|t| (t.header.tile_x, t.header.tile_z) == pending[0])
        .unwrap()
        .clone();
    assert!(matches!(
        mesh.commit_rebuilt_tile(stale.clone()),
        Err(NavMeshError::StaleSource { instance: 0, .. })
    ));
    // Rebuilt from the current version, it is accepted with a new generation.
    let mut rebuilt = stale;
    for source in rebuilt.sources.iter_mut().filter(|s| s.instance == 0) {
        source.version = old.0 + 100;
    }
    let slot = mesh.commit_rebuilt_tile(rebuilt).unwrap();
    let (_, generation) = mesh.snapshot().live_slot(slot).unwrap();
    assert!(generation > start_tile.generation() || slot != start_tile.slot());
}

#[test]
fn sliced_search_equals_unsliced_at_any_budget() {
    let (mesh, _) = rooms();
    let filter = QueryFilter::new();
    let snapshot = mesh.snapshot();
    let (from, to) = ends(&snapshot, &filter, START, GOAL);
    let whole = find_path(
        &snapshot,
        from.polygon,
        from.point,
        to.polygon,
        to.point,
        &filter,
        &mut NodePool::new(256),
    )
    .unwrap();
    for budget in [1, 7, 64] {
        let mut search = PathSearch::new(
            &snapshot,
            from.polygon,
            from.point,
            to.polygon,
            to.point,
            &filter,
            NodePool::new(256),
        )
        .unwrap();
        let mut steps = 0;
        loop {
            steps += 1;
            match search.step(budget) {
                Progress::InProgress { expanded } => assert_eq!(expanded, budget),
                Progress::Done { expanded } => {
                    assert!(expanded <= budget);
                    break;
                }
            }
        }
        let (sliced, _) = search.into_result();
        assert_eq!(sliced.steps, whole.steps, "budget {budget}");
        assert_eq!(sliced.nodes_expanded, whole.nodes_expanded);
        if budget == 1 {
            assert_eq!(steps as u32, whole.nodes_expanded, "one node per step");
        }
    }
}

#[test]
fn bad_query_input_is_an_error() {
    let (mesh, _) = rooms();
    let filter = QueryFilter::new();
    let snapshot = mesh.snapshot();
    let nan = Vec3::new(f32::NAN, 0.0, 0.0);
    assert!(matches!(
        nearest_polygon(&snapshot, nan, Vec3::ONE, &filter),
        Err(QueryError::NotFinite { .. })
    ));
    assert!(matches!(
        nearest_polygon(&snapshot, START, Vec3::new(1.0, 0.0, 1.0), &filter),
        Err(QueryError::BadExtents(_))
    ));
    let from = nearest_polygon(&snapshot, START, Vec3::ONE, &filter)
        .unwrap()
        .unwrap();
    let mut pool = NodePool::new(16);
    assert!(matches!(
        find_path(
            &snapshot,
            from.polygon,
            nan,
            from.polygon,
            START,
            &filter,
            &mut pool
        ),
        Err(QueryError::NotFinite { .. })
    ));
    // The pool survives a refused query.
    assert_eq!(pool.capacity(), 16);
    // A tiny pool gives a partial, flagged result rather than a failure.
    let to = nearest_polygon(&snapshot, GOAL, Vec3::ONE, &filter)
        .unwrap()
        .unwrap();
    let partial = find_path(
        &snapshot,
        from.polygon,
        from.point,
        to.polygon,
        to.point,
        &filter,
        &mut NodePool::new(2),
    )
    .unwrap();
    assert!(!partial.complete && partial.out_of_nodes);
}

#[test]
fn hashed_and_dense_node_indexes_find_the_same_paths() {
    let (mesh, _) = rooms();
    let filter = QueryFilter::new();
    let snapshot = mesh.snapshot();
    let mut dense = NodePool::new(256);
    let mut hashed = NodePool::hashed(256);
    for (start, goal) in [
        (START, GOAL),
        (Vec3::new(1.0, 0.0, 9.5), Vec3::new(23.0, 0.0, 1.0)),
        (GOAL, Vec3::new(2.0, 0.0, 10.0)),
    ] {
        let (from, to) = ends(&snapshot, &filter, start, goal);
        let one = find_path(
            &snapshot,
            from.polygon,
            from.point,
            to.polygon,
            to.point,
            &filter,
            &mut dense,
        )
        .unwrap();
        let other = find_path(
            &snapshot,
            from.polygon,
            from.point,
            to.polygon,
            to.point,
            &filter,
            &mut hashed,
        )
        .unwrap();
        assert!(one.complete);
        assert_eq!(one, other);
    }
}
