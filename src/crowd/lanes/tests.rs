//! Tests of `lanes`.

use super::*;

#[test]
fn every_status_is_listed_at_its_own_value() {
    assert_eq!(
        AgentStatus::ALL.len(),
        AgentStatus::Quarantined as usize + 1
    );
    for (index, status) in AgentStatus::ALL.into_iter().enumerate() {
        assert_eq!(status as usize, index);
    }
}

/// An id at `index`, generation 1.
fn id(index: u32) -> AgentId {
    AgentId::from_bits(1 << 32 | u64::from(index)).expect("generation 1")
}

fn agent(id: AgentId, x: f32) -> NewAgent {
    NewAgent {
        id,
        position: glam::Vec3::new(x, 0.0, 0.0),
        polygon: PolyRef::new(crate::mesh::TileGeneration(1), crate::mesh::TileSlot(0), 0)
            .expect("a valid reference"),
        radius: 0.5,
        max_speed: 3.0,
        preferred_speed: 2.0,
        max_acceleration: 8.0,
    }
}

/// Every lane's length, by an exhaustive destructuring of its own (not the lane list,
/// which is what is under test).
fn lane_lengths(lanes: &AgentLanes) -> Vec<usize> {
    let AgentLanes {
        id,
        position_x,
        position_y,
        position_z,
        polygon,
        velocity_x,
        velocity_z,
        average_x,
        average_z,
        desired_x,
        desired_z,
        radius,
        max_speed,
        preferred_speed,
        max_acceleration,
        gradient_x,
        gradient_z,
        patch_hint,
        speed_limit,
        acceleration_limit,
        goal_x,
        goal_y,
        goal_z,
        goal_polygon,
        corridor,
        cursor,
        cursor_polygon,
        corner_x,
        corner_z,
        stop_distance,
        corner_after_m,
        corner_age,
        corner_is_horizon,
        slow_x,
        slow_z,
        slow_speed,
        support,
        velocity_valid,
        stalled_s,
        anchor_x,
        anchor_z,
        blocked,
        progress_m,
        unprogressed_s,
        on_head_start,
        status,
        ingest_pending,
        filter,
        profile,
        handoff,
    } = lanes;
    vec![
        id.len(),
        position_x.len(),
        position_y.len(),
        position_z.len(),
        polygon.len(),
        velocity_x.len(),
        velocity_z.len(),
        average_x.len(),
        average_z.len(),
        desired_x.len(),
        desired_z.len(),
        radius.len(),
        max_speed.len(),
        preferred_speed.len(),
        max_acceleration.len(),
        gradient_x.len(),
        gradient_z.len(),
        patch_hint.len(),
        speed_limit.len(),
        acceleration_limit.len(),
        goal_x.len(),
        goal_y.len(),
        goal_z.len(),
        goal_polygon.len(),
        corridor.len(),
        cursor.len(),
        cursor_polygon.len(),
        corner_x.len(),
        corner_z.len(),
        stop_distance.len(),
        corner_after_m.len(),
        corner_age.len(),
        corner_is_horizon.len(),
        slow_x.len(),
        slow_z.len(),
        slow_speed.len(),
        support.len(),
        velocity_valid.len(),
        stalled_s.len(),
        anchor_x.len(),
        anchor_z.len(),
        blocked.len(),
        progress_m.len(),
        unprogressed_s.len(),
        on_head_start.len(),
        status.len(),
        ingest_pending.len(),
        filter.len(),
        profile.len(),
        handoff.len(),
    ]
}

#[test]
fn swaps_put_every_slot_where_the_order_says_in_every_lane() {
    // Random permutations of sizes with one long cycle, many short ones and fixed
    // points: applying the swaps to the slots themselves gives the order back.
    let mut random = crate::geom::SplitMix64::new(5);
    for size in [0usize, 1, 2, 3, 17, 1000] {
        let mut order: Vec<u32> = (0..size as u32).collect();
        for index in (1..size).rev() {
            let other = (random.next_u64() % (index as u64 + 1)) as usize;
            order.swap(index, other);
        }
        let swaps = permutation_swaps(&order);
        assert!(
            swaps.len() < size.max(1),
            "at most one swap per slot, less one"
        );
        let mut slots: Vec<u32> = (0..size as u32).collect();
        apply_swaps(&mut slots, &swaps);
        assert_eq!(slots, order, "size {size}");
    }
    // The lanes move together: each slot's entity keeps its own position.
    // Either way: a lane a task on the pool, or every lane in turn on this thread.
    for parallel in [true, false] {
        let mut lanes = AgentLanes::default();
        for index in 0..5 {
            lanes.push(agent(id(index), index as f32));
        }
        let entities = lanes.id.clone();
        let order = [3, 0, 4, 1, 2];
        lanes.permute(&permutation_swaps(&order), parallel);
        for (slot, &old) in order.iter().enumerate() {
            assert_eq!(lanes.id[slot], entities[old as usize]);
            assert_eq!(lanes.position_x[slot], old as f32);
        }
        assert!(lane_lengths(&lanes).iter().all(|&length| length == 5));
    }
}

#[test]
fn swap_remove_moves_every_lane_of_the_last_agent() {
    let ids: Vec<AgentId> = (0..3).map(id).collect();
    let mut lanes = AgentLanes::default();
    for (index, &agent_id) in ids.iter().enumerate() {
        let slot = lanes.push(agent(agent_id, index as f32));
        // Lanes the push leaves at defaults, marked per agent.
        lanes.slow_speed[slot] = 10.0 + index as f32;
        lanes.corner_after_m[slot] = 20.0 + index as f32;
        lanes.corner_age[slot] = index as u8;
        lanes.ingest_pending[slot] = index == 2;
    }
    let moved = lanes.swap_remove(0);
    assert_eq!(moved, Some(ids[2]));
    assert!(lane_lengths(&lanes).iter().all(|&length| length == 2));
    // Slot 0 is now the last agent, in every lane.
    assert_eq!(lanes.id[0], ids[2]);
    assert_eq!(lanes.position_x[0], 2.0);
    assert_eq!(lanes.slow_speed[0], 12.0);
    assert_eq!(lanes.corner_after_m[0], 22.0);
    assert_eq!(lanes.corner_age[0], 2);
    assert!(lanes.ingest_pending[0]);
    // A new agent's lanes line up with its slot.
    let slot = lanes.push(agent(ids[0], 5.0));
    assert_eq!(slot, 2);
    assert!(lane_lengths(&lanes).iter().all(|&length| length == 3));
    assert_eq!(lanes.slow_speed[slot], f32::INFINITY);
    assert!(!lanes.ingest_pending[slot]);
}

#[test]
fn hot_state_stays_within_the_lane_budget() {
    // The crowd issue's bound on hot lane state per agent.
    let bytes = AgentLanes::bytes_per_agent();
    assert!(bytes <= 256, "{bytes} bytes of lanes per agent");
    assert!(
        bytes >= 30 * size_of::<f32>(),
        "{bytes}: a lane is not counted"
    );
}

lane_view! {
    /// A view for the test below: one lane written, one read.
    TestView {
        write { desired_x: f32 }
        read { position_x: f32 }
    }
}

#[test]
fn a_lane_view_hands_out_every_slot_once_with_its_own_lanes() {
    use rayon::prelude::*;
    let mut lanes = AgentLanes::default();
    for index in 0..10_000 {
        lanes.push(agent(id(index), index as f32));
    }
    // Each run writes its slots' positions plus one into the written lane and reports
    // its first slot and length.
    let mut runs: Vec<(usize, usize)> = TestView::new(&mut lanes)
        .into_pieces(1_000)
        .map(|view| {
            for (offset, desired) in view.desired_x.iter_mut().enumerate() {
                assert_eq!(view.position_x[offset], (view.first + offset) as f32);
                *desired = view.position_x[offset] + 1.0;
            }
            vec![(view.first, view.len)]
        })
        .reduce(Vec::new, |mut left, right| {
            left.extend(right);
            left
        });
    // The runs tile the slots in order (the reduction keeps their order), none shorter
    // than the minimum, at least two of them.
    assert!(runs.len() >= 2, "{runs:?}");
    assert!(runs.iter().all(|&(_, len)| len >= 1_000), "{runs:?}");
    let mut next = 0;
    for &(first, len) in &runs {
        assert_eq!(first, next, "{runs:?}");
        next += len;
    }
    assert_eq!(next, 10_000);
    assert!(
        (0..10_000).all(|slot| lanes.desired_x[slot] == slot as f32 + 1.0),
        "every slot written once, at its own place"
    );
    // Below twice the minimum the view stays one run.
    runs = TestView::new(&mut lanes)
        .into_pieces(6_000)
        .map(|view| vec![(view.first, view.len)])
        .reduce(Vec::new, |mut left, right| {
            left.extend(right);
            left
        });
    assert_eq!(runs, vec![(0, 10_000)]);
}
