//! Tests of `scheduler`.

use super::*;
use crate::crowd::CrowdError;
use crate::mesh::blob::BakeParams;
use crate::mesh::{NavMesh, TileGeneration, TileSlot};

/// A mesh of `count` unit squares in a row along +X, one tile.
fn strip(count: usize) -> NavMesh {
    use crate::mesh::{TileData, WalkablePolygon};
    let quads: Vec<WalkablePolygon> = (0..count)
        .map(|i| {
            let (x0, x1) = (i as f32, i as f32 + 1.0);
            WalkablePolygon::ground(vec![
                Vec3::new(x0, 0.0, 0.0),
                Vec3::new(x1, 0.0, 0.0),
                Vec3::new(x1, 0.0, 1.0),
                Vec3::new(x0, 0.0, 1.0),
            ])
        })
        .collect();
    let mut mesh = NavMesh::new(BakeParams::default());
    mesh.add_tiles(vec![TileData::from_walkable_polygons(&quads).unwrap()])
        .unwrap();
    mesh
}

#[test]
fn the_wait_histogram_gives_the_sorted_list_s_percentiles() {
    let waits = [
        0u64, 3, 3, 1, 7, 0, 2, 3, 12, 1, 1, 0, 5, 4, 3, 3, 2, 9, 0, 1,
    ];
    let mut histogram = PathWaits::default();
    assert_eq!(histogram.percentile(0.95).unwrap(), None);
    for &wait in &waits {
        histogram.record(wait);
    }
    let mut sorted = waits.to_vec();
    sorted.sort_unstable();
    assert_eq!(histogram.total(), 20);
    for fraction in [0.0, 0.1, 0.5, 0.9, 0.95, 1.0] {
        let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
        assert_eq!(
            histogram.percentile(fraction).unwrap(),
            Some(sorted[index]),
            "{fraction}"
        );
    }
    // 19 * 0.95 = 18.05: the 19th smallest of 20, the 9.
    assert_eq!(histogram.percentile(0.95).unwrap(), Some(9));
}

#[test]
fn waits_since_an_earlier_state_are_the_ones_recorded_after_it() {
    let mut histogram = PathWaits::default();
    for wait in [1, 1, 4] {
        histogram.record(wait);
    }
    let earlier = histogram.clone();
    for wait in [1, 30, 30, 2] {
        histogram.record(wait);
    }
    let since = histogram.since(&earlier).expect("an earlier state");
    assert_eq!(since.total(), 4);
    assert_eq!(since.percentile(0.0).unwrap(), Some(1));
    assert_eq!(since.percentile(0.34).unwrap(), Some(2)); // index round(3 * 0.34) = 1
    assert_eq!(since.percentile(1.0).unwrap(), Some(30));
    // Asked the other way round, the later histogram is no earlier state: it counts
    // waits of 1 frame more often.
    assert_eq!(earlier.since(&histogram), None);
    // Memory follows the longest wait, not the number of requests.
    for _ in 0..100_000 {
        histogram.record(3);
    }
    assert_eq!(histogram.count_by_frames.len(), 31);
}

#[test]
fn a_percentile_beyond_the_list_is_refused_by_value() {
    let mut histogram = PathWaits::default();
    histogram.record(2);
    for fraction in [1.5, -0.1, f64::NAN] {
        let refused = histogram.percentile(fraction).unwrap_err();
        assert!(
            matches!(refused, CrowdError::BadPercentile(f) if f.to_bits() == fraction.to_bits())
        );
    }
    assert_eq!(
        histogram.percentile(1.5).unwrap_err().to_string(),
        "percentile fraction 1.5 is not within 0 to 1"
    );
}

#[test]
fn a_query_queued_twice_is_searched_once() {
    // A strip of 30 quads: a search from the first to the last takes many nodes.
    let mesh = strip(30);
    let snapshot = mesh.snapshot();
    let filters = [QueryFilter::new()];
    let start = snapshot.poly_ref(TileSlot(0), 0).unwrap();
    let job = Job {
        agent: AgentId::from_bits(1 << 32).unwrap(),
        filter: FilterId::DEFAULT,
        request: RequestId {
            logical: 7,
            attempt: 0,
            epoch: 0,
        },
        start,
        start_position: Vec3::new(0.5, 0.0, 0.5),
        target: Vec3::new(29.5, 0.0, 0.5),
        goal: None,
        queued_frame: 0,
    };
    let mut scheduler = Scheduler::new(1.0, Vec3::ONE, &snapshot);
    scheduler.enqueue(job);
    scheduler.enqueue(job);
    let mut cache = CorridorCache::default();
    let budget = FrameBudget {
        node_expansions: 40,
        head_starts: 0,
        search_time_ms: 0.0,
    };
    let mut finished = Vec::new();
    let mut answers = 0;
    for frame in 0..10 {
        finished.clear();
        scheduler.run(
            &snapshot,
            &filters,
            &mut cache,
            budget,
            frame,
            &|_| true,
            &|_| None,
            &|_| None,
            &mut finished,
        );
        assert!(
            scheduler.in_flight.len() <= 1,
            "one search open for the query"
        );
        answers += finished.len();
    }
    assert_eq!(answers, 1, "answered once");
    assert_eq!(scheduler.depth(), 0);
}

#[test]
fn a_reserved_queue_takes_a_request_per_agent_without_regrowing() {
    let snapshot = NavMesh::new(BakeParams::default()).snapshot();
    let mut scheduler = Scheduler::new(1.0, Vec3::ONE, &snapshot);
    let agents = 1000;
    scheduler.try_reserve_for_agents(agents, agents).unwrap();
    let reserved = (scheduler.queue.capacity(), scheduler.fresh.capacity());
    assert!(reserved.0 >= agents + QUEUE_MARGIN && reserved.1 >= agents + QUEUE_MARGIN);
    let polygon = PolyRef::new(TileGeneration(1), TileSlot(0), 0).unwrap();
    for logical in 0..(agents + QUEUE_MARGIN) as u64 {
        scheduler.enqueue(Job {
            agent: AgentId::from_bits(1 << 32 | logical).expect("generation 1"),
            filter: FilterId::DEFAULT,
            request: RequestId {
                logical,
                attempt: 0,
                epoch: 0,
            },
            start: polygon,
            start_position: Vec3::ZERO,
            target: Vec3::X,
            goal: None,
            queued_frame: 0,
        });
        let capacities = (scheduler.queue.capacity(), scheduler.fresh.capacity());
        assert_eq!(capacities, reserved, "request {logical}");
    }
}

/// A kept destination tree lasts while jobs read it and is dropped once none has for
/// `TREE_IDLE_STEPS_MAX` steps, so trees do not pile up as a game sends its crowd to one
/// new place after another.
#[test]
fn an_unread_destination_tree_is_dropped() {
    use super::shared::{SharedDestinations, TREE_IDLE_STEPS_MAX};
    let mesh = strip(4);
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let job = Job {
        agent: AgentId::from_bits(1 << 32).unwrap(),
        filter: FilterId::DEFAULT,
        request: RequestId {
            logical: 1,
            attempt: 0,
            epoch: 0,
        },
        start: snapshot.poly_ref(TileSlot(0), 0).unwrap(),
        start_position: Vec3::new(0.5, 0.0, 0.5),
        target: Vec3::new(3.5, 0.0, 0.5),
        goal: Some((
            snapshot.poly_ref(TileSlot(0), 3).unwrap(),
            Vec3::new(3.5, 0.0, 0.5),
        )),
        queued_frame: 0,
    };
    let mut shared = SharedDestinations::default();
    shared.count(std::iter::empty(), &snapshot);
    let path = shared.path(&snapshot, &job, &filter).unwrap();
    assert_eq!(path.steps.len(), 4);
    assert_eq!(shared.trees_kept(), 1);
    // Read every step: kept however long.
    for _ in 0..2 * TREE_IDLE_STEPS_MAX {
        shared.count(std::iter::empty(), &snapshot);
        assert!(shared.path(&snapshot, &job, &filter).is_some());
    }
    assert_eq!(shared.trees_kept(), 1);
    // Unread: kept for the allowed steps, then dropped.
    for _ in 0..TREE_IDLE_STEPS_MAX {
        shared.count(std::iter::empty(), &snapshot);
    }
    assert_eq!(shared.trees_kept(), 1);
    shared.count(std::iter::empty(), &snapshot);
    assert_eq!(shared.trees_kept(), 0);
}
