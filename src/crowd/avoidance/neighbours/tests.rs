//! Tests of `neighbours`.

use super::*;
use crate::geom::SplitMix64;

fn brute_force(x: &[f32], z: &[f32], slot: usize, range: f32, k: usize) -> Vec<u32> {
    let floor = |slot: usize| slot % 10 == 0;
    let mut all: Vec<(f32, u32)> = (0..x.len())
        .filter(|&other| other != slot && floor(other) == floor(slot))
        .map(|other| {
            (
                (x[other] - x[slot]).powi(2) + (z[other] - z[slot]).powi(2),
                other as u32,
            )
        })
        .filter(|&(d, _)| d < range * range)
        .collect();
    all.sort_by(|a, b| a.partial_cmp(b).unwrap());
    all.into_iter().take(k).map(|(_, slot)| slot).collect()
}

#[test]
fn the_grid_finds_the_same_neighbours_as_brute_force() {
    let mut random = SplitMix64::new(7);
    let agents = 3_000;
    // Two far-apart groups and some agents on exact cell borders and shared spots.
    let mut x: Vec<f32> = (0..agents).map(|_| random.next_f32() * 120.0).collect();
    let mut z: Vec<f32> = (0..agents).map(|_| random.next_f32() * 80.0).collect();
    for far in &mut x[..500] {
        *far += 50_000.0;
    }
    for slot in 500..560 {
        x[slot] = 14.0 * (slot % 5) as f32;
        z[slot] = 7.0 * (slot % 3) as f32;
    }
    let mut grid = NeighbourGrid::default();
    // Every tenth agent stands on a floor 3 m up: it neighbours only its own floor.
    let y: Vec<f32> = (0..agents)
        .map(|slot| if slot % 10 == 0 { 3.0 } else { 0.0 })
        .collect();
    grid.rebuild([&x, &y, &z], 7.0, 2.0, 10);
    assert_same_as_brute_force(&grid, &x, &z);
    let mut pairs = 0;
    grid.for_each_pair_within(2.0, |a, b, distance| {
        assert!(a < b && distance < 2.0);
        pairs += 1;
    });
    let expected: usize = (0..agents)
        .map(|slot| {
            brute_force(&x, &z, slot, 2.0, agents)
                .iter()
                .filter(|&&o| o as usize > slot)
                .count()
        })
        .sum();
    assert_eq!(pairs, expected);

    // The next frames: the grid now looks first within last frame's K-th distances.
    // Agents step up to 0.3 m, a hundred jump anywhere (their hints are wrong), and the
    // last frame's two last agents swap slots: the answers must still be exact.
    for _frame in 0..3 {
        for slot in 0..agents {
            x[slot] += (random.next_f32() - 0.5) * 0.6;
            z[slot] += (random.next_f32() - 0.5) * 0.6;
        }
        for _ in 0..100 {
            let slot = (random.next_f32() * agents as f32) as usize % agents;
            x[slot] = random.next_f32() * 120.0;
            z[slot] = random.next_f32() * 80.0;
        }
        x.swap(agents - 1, agents - 2);
        z.swap(agents - 1, agents - 2);
        grid.rebuild([&x, &y, &z], 7.0, 2.0, 10);
        assert_same_as_brute_force(&grid, &x, &z);
    }
}

#[test]
fn the_grid_sizes_itself_by_the_agent_count_not_by_their_spread() {
    // Two agents 2e14 m apart once made the grid allocate 2.3 GB (capacity overflow
    // from 1e18); the world's own extent, 2e5 m across, must cost no more than a
    // crowd standing together.
    for spread in [2e14f32, 2e5, 10.0] {
        let x = [-spread / 2.0, spread / 2.0, spread / 2.0 - 1.0];
        let (y, z) = ([0.0; 3], [0.0, 0.0, 0.5]);
        let mut grid = NeighbourGrid::default();
        grid.rebuild([&x, &y, &z], 7.0, 2.0, 2);
        let cells = grid.cell_start.len() - 1;
        assert!(
            cells <= (3 * CELLS_PER_AGENT_MAX).max(CELLS_MIN),
            "{cells} cells for agents {spread} m apart"
        );
        // The two close agents still find each other; the one 9 m or more away, nobody.
        assert_eq!(grid.neighbours_of(1).collect::<Vec<_>>(), [2]);
        assert_eq!(grid.neighbours_of(0).count(), 0);
    }
}

/// The query's four-lane candidate test keeps exactly the keys the one-at-a-time test
/// keeps, in the same order, over runs of every length from every agent, with the
/// worst key tight (after cuts) or loose, agents on two floors, and runs longer than
/// the candidate list (cut midway).
#[test]
fn the_lanes_keep_what_the_scalar_test_keeps() {
    let mut random = SplitMix64::new(3);
    let agents = 1_500;
    let x: Vec<f32> = (0..agents).map(|_| random.next_f32() * 40.0).collect();
    let z: Vec<f32> = (0..agents).map(|_| random.next_f32() * 30.0).collect();
    let y: Vec<f32> = (0..agents)
        .map(|slot| {
            if slot % 7 == 0 {
                3.0
            } else {
                random.next_f32() * 0.2
            }
        })
        .collect();
    let mut grid = NeighbourGrid::default();
    grid.rebuild([&x, &y, &z], 7.0, 2.0, 10);
    let mut compared = 0;
    for index in (0..agents).step_by(7) {
        for (run_start, run_length) in [
            (0, 1),
            (index / 2, 3),
            (index, 5),
            (0, 200),
            (index / 3, 129),
        ] {
            let run = run_start..(run_start + run_length).min(agents);
            for capacity in [1, 10] {
                let mut lanes = Nearest::new();
                let foot = grid.foot(index);
                lanes.range_squared = 49.0;
                lanes.vertical_range_m = 2.0;
                lanes.index = index as u32;
                lanes.position = foot;
                lanes.capacity = capacity;
                lanes.count = 0;
                lanes.worst = lanes.range_key();
                let mut scalar = Nearest::new();
                scalar.range_squared = lanes.range_squared;
                scalar.vertical_range_m = lanes.vertical_range_m;
                scalar.index = lanes.index;
                scalar.position = lanes.position;
                scalar.capacity = capacity;
                scalar.count = 0;
                scalar.worst = lanes.worst;
                // Twice over the same run: the second time against a worst key set by
                // a cut.
                for _ in 0..2 {
                    lanes.consider_run(&grid, run.clone());
                    scalar.consider_run_scalar(&grid, run.clone());
                    assert_eq!(lanes.count, scalar.count, "agent {index} run {run:?}");
                    assert_eq!(lanes.keys[..lanes.count], scalar.keys[..scalar.count]);
                    lanes.cut();
                    scalar.cut();
                    assert_eq!(lanes.worst, scalar.worst);
                    compared += lanes.count;
                }
            }
        }
    }
    assert!(compared > 3_000, "only {compared} keys compared");
}

/// Every agent's neighbours from a grid rebuilt with range 7 m and K = 10 against the
/// brute-force answer.
fn assert_same_as_brute_force(grid: &NeighbourGrid, x: &[f32], z: &[f32]) {
    for slot in 0..x.len() {
        assert_eq!(
            grid.neighbours_of(slot).collect::<Vec<_>>(),
            brute_force(x, z, slot, 7.0, 10),
            "slot {slot}"
        );
    }
}
