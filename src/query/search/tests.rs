//! Tests of `search`.

use super::*;
use crate::bake::{BakeConfig, Preset, bake};
use crate::mesh::{NavMesh, RuntimeTile, TilePoly, TileSlot};
use crate::query::NODE_POOL_DEFAULT;
use crate::query::portals::{border_crossing, cross_tile_portal_into, cross_tile_portals};

/// The city generated for 400 agents from `seed`, baked in tiles of 48 cells (portals
/// across tile borders everywhere).
fn tiled_city(seed: u64, preset: Preset) -> NavMesh {
    let city = crate::scene::city::city(400, seed);
    let world = city.scene.world_triangles().unwrap();
    let config = BakeConfig {
        tile_size_cells: Some(48),
        ..BakeConfig::preset(preset)
    };
    NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap()
}

/// The follow pass asks for one cross-tile portal at a time; it must be the portal the
/// search (and so the corridor it built) used: the first into that polygon of the full
/// list, to the bit. Checked over every border edge of a tiled city.
#[test]
fn the_single_border_portal_is_the_first_of_the_full_list() {
    let mesh = tiled_city(11, Preset::Guard);
    let snapshot = mesh.snapshot();
    let mut checked = 0;
    for slot in 0..snapshot.data().slots.len() {
        let Some((tile, generation)) = snapshot.live_slot(TileSlot(slot as u16)) else {
            continue;
        };
        for (index, polygon) in tile.data.polygons.iter().enumerate() {
            let from = PolyRef::new(generation, TileSlot(slot as u16), index as u16).unwrap();
            let count = usize::from(polygon.vertex_count);
            for edge in 0..count {
                let neighbour = polygon.neighbours[edge];
                if neighbour == TilePoly::NO_NEIGHBOUR || neighbour & TilePoly::TILE_EDGE == 0 {
                    continue;
                }
                let a = tile.data.vertex(polygon.vertices[edge]);
                let b = tile.data.vertex(polygon.vertices[(edge + 1) % count]);
                let side = neighbour & 3;
                let mut scratch = ReadSet::default();
                let all = cross_tile_portals(&snapshot, from, side, a, b, &mut scratch);
                for &(to, _, _) in &all {
                    let first = all.iter().find(|portal| portal.0 == to).unwrap();
                    let expected = Some((first.1, first.2));
                    assert_eq!(
                        cross_tile_portal_into(&snapshot, from, side, a, b, to, None),
                        expected
                    );
                    let to_tile: &RuntimeTile = snapshot.tile(to).unwrap();
                    assert_eq!(
                        cross_tile_portal_into(&snapshot, from, side, a, b, to, Some(to_tile)),
                        expected
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 200, "only {checked} border portals");
}

/// Every border edge's portals as the snapshot's table lists them against the portals
/// worked out at the crossing, with the facing tile each records as read; returns how
/// many border edges had portals.
fn assert_tables_match_worked_out(snapshot: &Snapshot) -> usize {
    let mut crossed = 0;
    for slot in 0..snapshot.data().slots.len() {
        let slot = TileSlot(slot as u16);
        let Some((tile, generation)) = snapshot.live_slot(slot) else {
            continue;
        };
        let table = snapshot.border_portals(slot).unwrap();
        assert_eq!(table.generation(), generation);
        for polygon in 0..tile.data.polygons.len() as u16 {
            let from = PolyRef::new(generation, slot, polygon).unwrap();
            let corners = tile.corners(polygon).collect::<Vec<_>>();
            for adjacent in tile.adjacent(polygon) {
                if adjacent.border_side == Adjacent::INTERNAL {
                    continue;
                }
                let edge = usize::from(adjacent.edge);
                let (a, b) = (corners[edge], corners[(edge + 1) % corners.len()]);
                let side = u16::from(adjacent.border_side);
                let mut worked_out_reads = ReadSet::default();
                let worked_out =
                    cross_tile_portals(snapshot, from, side, a, b, &mut worked_out_reads);
                assert_eq!(table.portals(adjacent.neighbour), &worked_out[..]);
                let mut scratch = Vec::new();
                let (facing, listed) =
                    border_crossing(snapshot, from, adjacent, (a, b), &mut scratch);
                assert_eq!(listed, &worked_out[..]);
                assert!(scratch.is_empty(), "read from the table, not worked out");
                let worked_out_facing = worked_out_reads.tiles.first();
                assert_eq!(
                    facing,
                    worked_out_facing.map(|read| (read.slot, read.generation))
                );
                crossed += usize::from(!worked_out.is_empty());
            }
        }
    }
    crossed
}

/// A search reads the portals across tile borders from the snapshot's table: it must
/// list what working them out at the crossing gives, in the same order, and record the
/// same facing tile as read. A published change works out again the tables of the
/// tiles it replaced and of their neighbours, and keeps every other tile's; a tile
/// marked pending is in no neighbour's table.
/// Asserts that `after` (the snapshot once the tile in slot `replaced` was committed
/// again) keeps every table `tables` picks from `before` except the replaced tile's and
/// its neighbours', which it rebuilt.
fn assert_kept_apart_from<T>(
    before: &Snapshot,
    after: &Snapshot,
    replaced: usize,
    tables: impl Fn(&crate::mesh::navmesh::SnapshotData) -> &Vec<Arc<T>>,
) {
    let touched: Vec<usize> = std::iter::once(replaced)
        .chain(
            before.data().neighbour_slots[replaced]
                .iter()
                .map(|&slot| usize::from(slot)),
        )
        .collect();
    for slot in 0..after.data().slots.len() {
        let kept = Arc::ptr_eq(&tables(before.data())[slot], &tables(after.data())[slot]);
        assert_eq!(kept, !touched.contains(&slot), "slot {slot}");
    }
}

#[test]
fn the_border_table_lists_the_worked_out_portals_and_follows_changes() {
    let mut mesh = tiled_city(11, Preset::Guard);
    let before = mesh.snapshot();
    assert!(assert_tables_match_worked_out(&before) > 200);
    // The slot with the most neighbours, its tile committed again (a new generation).
    let neighbours_of = |slot: usize| {
        before.data().neighbour_slots[slot]
            .iter()
            .filter(|&&other| other != u16::MAX)
            .count()
    };
    let replaced = (0..before.data().slots.len())
        .filter(|&slot| before.live_slot(TileSlot(slot as u16)).is_some())
        .max_by_key(|&slot| neighbours_of(slot))
        .unwrap();
    assert_eq!(neighbours_of(replaced), 4);
    let (tile, _) = before.live_slot(TileSlot(replaced as u16)).unwrap();
    mesh.add_tiles(vec![tile.data.clone()]).unwrap();
    let after = mesh.snapshot();
    assert!(assert_tables_match_worked_out(&after) > 200);
    assert_kept_apart_from(&before, &after, replaced, |data| &data.border_portals);
    // An edited source marks its tiles pending: their neighbours' tables must list no
    // portal into them and no read of them, as the worked-out crossing finds none.
    let mut tiles_of = std::collections::BTreeMap::<u32, usize>::new();
    for slot in 0..after.data().slots.len() {
        if let Some((tile, _)) = after.live_slot(TileSlot(slot as u16)) {
            for source in &tile.data.sources {
                *tiles_of.entry(source.instance).or_default() += 1;
            }
        }
    }
    let (&edited, _) = tiles_of.iter().min_by_key(|&(_, &tiles)| tiles).unwrap();
    let old = mesh.source_version(edited).unwrap();
    let pending = mesh.apply_source_changes(&[(edited, crate::ids::SourceVersion(old.0 + 1))]);
    assert!(!pending.is_empty());
    let edited_snapshot = mesh.snapshot();
    assert!(assert_tables_match_worked_out(&edited_snapshot) > 200);
    let data = edited_snapshot.data();
    let mut beside_pending = 0;
    for (slot, neighbours) in data.neighbour_slots.iter().enumerate() {
        let Some(table) = edited_snapshot.border_portals(TileSlot(slot as u16)) else {
            continue;
        };
        for (side, &other) in neighbours.iter().enumerate() {
            let other_pending = data
                .slots
                .get(usize::from(other))
                .is_some_and(|view| matches!(view.state, crate::mesh::SlotState::Pending));
            if other_pending && edited_snapshot.live_slot(TileSlot(slot as u16)).is_some() {
                assert_eq!(table.facing(side as u16), None, "slot {slot} side {side}");
                beside_pending += 1;
            }
        }
    }
    assert!(beside_pending > 0, "no live tile beside the pending ones");
}

/// The search graph gives every search what the walk over the tiles' own arrays gives:
/// the same steps, expansions and reads (in the same order), on both presets' tiled
/// cities, optimal and weighted, and after a tile is replaced (the replaced tile's table
/// and its neighbours' are rebuilt, every other kept).
#[test]
fn searches_over_the_search_graph_match_searches_over_the_tiles() {
    let filter = QueryFilter::new();
    let compare = |snapshot: &Snapshot| {
        let plain = snapshot.without_search_tables();
        assert!(plain.search_table(TileSlot(0)).is_none());
        let starts = crate::query::random_points(snapshot, &filter, 60, 3);
        let ends = crate::query::random_points(snapshot, &filter, 60, 4);
        let mut reads = 0;
        for (&(start, start_position), &(end, end_position)) in starts.iter().zip(&ends) {
            for weight in [1.0, 1.5] {
                let search = |snapshot: &Snapshot| {
                    let mut search = PathSearch::new_weighted(
                        snapshot,
                        start,
                        start_position,
                        end,
                        end_position,
                        &filter,
                        NodePool::new(NODE_POOL_DEFAULT),
                        weight,
                    )
                    .unwrap();
                    search.step(u32::MAX);
                    search.into_result().0
                };
                // Without landmarks on both sides: the tiles' own arrays have none.
                let (graph, tiles) = (search(&snapshot.without_landmarks()), search(&plain));
                assert_eq!(graph, tiles, "weight {weight}");
                reads += graph.read_set.tiles.len();
            }
        }
        assert!(
            reads > 600,
            "{reads} tile reads: the searches cross few borders"
        );
    };
    for preset in [Preset::Guard, Preset::Recast] {
        let mut mesh = tiled_city(7, preset);
        let before = mesh.snapshot();
        compare(&before);
        let replaced = (0..before.data().slots.len())
            .find(|&slot| {
                before.live_slot(TileSlot(slot as u16)).is_some()
                    && before.data().neighbour_slots[slot]
                        .iter()
                        .all(|&other| other != u16::MAX)
            })
            .unwrap();
        let (tile, _) = before.live_slot(TileSlot(replaced as u16)).unwrap();
        mesh.add_tiles(vec![tile.data.clone()]).unwrap();
        let after = mesh.snapshot();
        compare(&after);
        assert_kept_apart_from(&before, &after, replaced, |data| &data.search_tables);
    }
}

/// A pool made ready for the mesh answers every search as a pool made bare, and has
/// its per-polygon table already in place (the crowd makes its pools this way so its
/// first step does not fault the tables in).
#[test]
fn a_pool_made_for_the_mesh_finds_the_same_paths() {
    let mesh = tiled_city(5, Preset::Recast);
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let mut ready = NodePool::for_snapshot(NODE_POOL_DEFAULT, &snapshot);
    assert_eq!(ready.dense.len(), snapshot.data().polygon_total as usize);
    let mut bare = NodePool::new(NODE_POOL_DEFAULT);
    let starts = crate::query::random_points(&snapshot, &filter, 50, 1);
    let ends = crate::query::random_points(&snapshot, &filter, 50, 2);
    let mut complete = 0;
    for (&(start, start_position), &(end, end_position)) in starts.iter().zip(&ends) {
        let path = |pool: &mut NodePool| {
            find_path(
                &snapshot,
                start,
                start_position,
                end,
                end_position,
                &filter,
                pool,
            )
            .unwrap()
        };
        let (with_ready, with_bare) = (path(&mut ready), path(&mut bare));
        assert_eq!(with_ready.steps, with_bare.steps);
        assert_eq!(with_ready.nodes_expanded, with_bare.nodes_expanded);
        assert_eq!(with_ready.complete, with_bare.complete);
        complete += usize::from(with_ready.complete);
    }
    assert!(complete > 40, "{complete} of 50 paths complete");
}

/// Polygon factors steer the search round expensive polygons, and factors below 1
/// never make a polygon cheaper than its area cost.
#[test]
fn polygon_costs_route_round_crowded_polygons() {
    // Five columns by three rows of 2 m squares; start and end in the middle row's
    // end squares.
    let mut polygons = Vec::new();
    for row in 0..3 {
        for column in 0..5 {
            let (x0, z0) = (2.0 * column as f32, 2.0 * row as f32);
            polygons.push(crate::mesh::WalkablePolygon::ground(vec![
                Vec3::new(x0, 0.0, z0),
                Vec3::new(x0 + 2.0, 0.0, z0),
                Vec3::new(x0 + 2.0, 0.0, z0 + 2.0),
                Vec3::new(x0, 0.0, z0 + 2.0),
            ]));
        }
    }
    let mut mesh = NavMesh::new(crate::mesh::blob::BakeParams::default());
    mesh.add_tiles(vec![
        crate::mesh::TileData::from_walkable_polygons(&polygons).unwrap(),
    ])
    .unwrap();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let at = |x: f32, z: f32| {
        crate::query::nearest_polygon(&snapshot, Vec3::new(x, 0.0, z), Vec3::ONE, &filter)
            .unwrap()
            .unwrap()
            .polygon
    };
    let (start, end) = (Vec3::new(1.0, 0.0, 3.0), Vec3::new(9.0, 0.0, 3.0));
    let path_with = |factors: Option<Arc<[f32]>>| {
        let mut search = PathSearch::new(
            &snapshot,
            at(1.0, 3.0),
            start,
            at(9.0, 3.0),
            end,
            &filter,
            NodePool::new(NODE_POOL_DEFAULT),
        )
        .unwrap();
        if let Some(factors) = factors {
            search.set_polygon_costs(factors);
        }
        search.step(u32::MAX);
        let (result, _) = search.into_result();
        assert!(result.complete);
        result
            .steps
            .iter()
            .map(|step| step.polygon)
            .collect::<Vec<_>>()
    };
    let middle: Vec<PolyRef> = (0..5).map(|c| at(2.0 * c as f32 + 1.0, 3.0)).collect();
    assert_eq!(path_with(None), middle, "straight along the middle row");
    // The middle row's three inner squares crowded (factor 5): round by another row,
    // seven polygons, none of them crowded.
    let mut factors = vec![1.0; snapshot.data().polygon_total as usize];
    for polygon in &middle[1..4] {
        factors[snapshot.polygon_key(*polygon) as usize] = 5.0;
    }
    let around = path_with(Some(factors.into()));
    assert_eq!(around.len(), 7);
    assert!(around.iter().all(|polygon| !middle[1..4].contains(polygon)));
    // Factors below 1 count as 1: the straight way again.
    let cheaper = vec![0.1; snapshot.data().polygon_total as usize];
    assert_eq!(path_with(Some(cheaper.into())), middle);
}

/// nav_test, baked whole (`tiled`: None) or in tiles of `tiled` cells, and the shared
/// query pairs whose both ends snap.
fn nav_test_pairs(tiled: Option<u32>) -> (NavMesh, Vec<(PolyRef, Vec3, PolyRef, Vec3)>) {
    level_pairs("nav_test", tiled)
}

/// A shared level baked as RecastDemo does (in tiles of `tiled` cells, if given), and its
/// query pairs snapped to the mesh.
fn level_pairs(level: &str, tiled: Option<u32>) -> (NavMesh, Vec<(PolyRef, Vec3, PolyRef, Vec3)>) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/levels");
    let world =
        crate::scene::obj::load_obj(&root.join(format!("{level}.obj")), &Default::default())
            .unwrap()
            .world_triangles()
            .unwrap();
    let config = BakeConfig {
        tile_size_cells: tiled,
        ..BakeConfig::preset(Preset::Recast)
    };
    let mesh = NavMesh::from_file(bake(&world, &config).unwrap().to_file()).unwrap();
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let extents = Vec3::new(2.0, 4.0, 2.0);
    let text = std::fs::read_to_string(root.join(format!("{level}_queries.csv"))).unwrap();
    let pairs = text
        .lines()
        .skip(1)
        .filter_map(|line| {
            let v: Vec<f32> = line.split(',').map(|v| v.parse().unwrap()).collect();
            let snap =
                |point| crate::query::nearest_polygon(&snapshot, point, extents, &filter).unwrap();
            let from = snap(Vec3::new(v[0], v[1], v[2]))?;
            let to = snap(Vec3::new(v[3], v[4], v[5]))?;
            Some((from.polygon, from.point, to.polygon, to.point))
        })
        .collect();
    (mesh, pairs)
}

/// The 3-D distance from `point` to polygon `polygon`'s closest point.
fn distance_to(snapshot: &Snapshot, polygon: PolyRef, point: Vec3) -> f32 {
    let tile = snapshot.tile(polygon).unwrap();
    tile.closest_point(polygon.polygon(), point)
        .0
        .distance(point)
}

/// An end in another component is out of reach: the search reaches the same verdict as
/// a flood of everything reachable (the search on the tiles' own arrays, which has no
/// components), ends its partial path on the reachable polygon nearest the end (checked
/// against every polygon of the start's component), never farther from the end than the
/// flood's, and expands a fraction of what the flood does.
#[test]
fn an_end_out_of_reach_is_headed_for_not_flooded() {
    let (mesh, pairs) = nav_test_pairs(None);
    let snapshot = mesh.snapshot();
    let flooding = snapshot.without_search_tables();
    assert!(flooding.components().is_none());
    let components = snapshot.components().unwrap();
    assert!(components.count() > 1, "nav_test has islands");
    let filter = QueryFilter::new();
    let mut pool = NodePool::new(NODE_POOL_DEFAULT);
    let (mut partial, mut headed, mut flooded) = (0, 0u64, 0u64);
    for &(start, start_position, end, end_position) in &pairs {
        let search = |snapshot: &Snapshot, pool: &mut NodePool| {
            find_path(
                snapshot,
                start,
                start_position,
                end,
                end_position,
                &filter,
                pool,
            )
            .unwrap()
        };
        // Landmarks aside (the flood has none, and they may choose another equal path).
        let ours = search(&snapshot.without_landmarks(), &mut pool);
        let flood = search(&flooding, &mut pool);
        assert_eq!(
            ours.complete, flood.complete,
            "{start_position} to {end_position}"
        );
        if ours.complete {
            assert_eq!(ours.steps, flood.steps);
            continue;
        }
        partial += 1;
        headed += u64::from(ours.nodes_expanded);
        flooded += u64::from(flood.nodes_expanded);
        let component = components.of(&snapshot, start).unwrap();
        let nearest = (0..snapshot.data().slots.len())
            .filter_map(|slot| snapshot.live_slot(TileSlot(slot as u16)).map(|s| (slot, s)))
            .flat_map(|(slot, (tile, generation))| {
                (0..tile.data.polygons.len()).filter_map(move |polygon| {
                    PolyRef::new(generation, TileSlot(slot as u16), polygon as u16)
                })
            })
            .filter(|&polygon| components.of(&snapshot, polygon) == Some(component))
            .map(|polygon| distance_to(&snapshot, polygon, end_position))
            .fold(f32::INFINITY, f32::min);
        let last = ours.steps.last().unwrap().polygon;
        let ours_distance = distance_to(&snapshot, last, end_position);
        assert!(
            (ours_distance - nearest).abs() <= 1e-4,
            "{ours_distance} against {nearest}"
        );
        let flood_distance =
            distance_to(&snapshot, flood.steps.last().unwrap().polygon, end_position);
        assert!(ours_distance <= flood_distance + 1e-4);
        for &slot in components.slots(component) {
            assert!(ours.read_set.tiles.iter().any(|read| read.slot == slot));
        }
    }
    assert!(partial > 5_000, "{partial} partial queries");
    assert!(
        headed * 2 < flooded,
        "{headed} expansions against the flood's {flooded}"
    );
}

/// Baked in tiles, a partial result records every tile of its start's component and the
/// tiles across their sides: a change in any of them could join the end's component, so
/// it makes the result stale.
#[test]
fn a_partial_result_reads_its_whole_component() {
    let (mesh, pairs) = nav_test_pairs(Some(48));
    let snapshot = mesh.snapshot();
    let components = snapshot.components().unwrap();
    let filter = QueryFilter::new();
    let mut pool = NodePool::new(NODE_POOL_DEFAULT);
    let mut checked = 0;
    for &(start, start_position, end, end_position) in pairs.iter().take(2000) {
        let result = find_path(
            &snapshot,
            start,
            start_position,
            end,
            end_position,
            &filter,
            &mut pool,
        )
        .unwrap();
        let (here, there) = (
            components.of(&snapshot, start).unwrap(),
            components.of(&snapshot, end).unwrap(),
        );
        if here == there
            || components.slots(here).len() > crate::mesh::components::SMALL_COMPONENT_TILES_MAX
        {
            continue;
        }
        assert!(!result.complete);
        for &slot in components.slots(here) {
            assert!(result.read_set.tiles.iter().any(|read| read.slot == slot));
        }
        checked += 1;
    }
    assert!(checked > 100, "{checked} partial results checked");
}

/// The dungeon baked as RecastDemo does, and its shared query pairs snapped to the mesh.
fn dungeon_pairs() -> (NavMesh, Vec<(PolyRef, Vec3, PolyRef, Vec3)>) {
    level_pairs("dungeon", None)
}

/// The number (in the landmarks' table) and midpoint of the first edge from `from` into
/// `to`.
fn edge_into(snapshot: &Snapshot, from: PolyRef, to: PolyRef) -> (u32, Vec3) {
    let table = snapshot.search_table(from.slot()).unwrap();
    let first = table.first_edge(from.polygon());
    let (offset, edge) = table
        .edges(from.polygon())
        .iter()
        .enumerate()
        .find(|(_, edge)| edge.neighbour == Some(to))
        .unwrap();
    let number = snapshot
        .landmarks()
        .unwrap()
        .edge_number(from, first + offset)
        .unwrap();
    (number, edge.midpoint)
}

/// The landmarks' bound never exceeds what is left to pay: along every complete path found
/// on the dungeon and on nav_test baked in tiles (portals across tile borders), from each
/// portal it crosses, the bound is at most the length of the chain of portal midpoints the
/// path takes from there to its end; and it is tighter than the straight line.
#[test]
fn landmark_bounds_never_exceed_the_cost_left() {
    for (mesh, pairs) in [dungeon_pairs(), nav_test_pairs(Some(48))] {
        let snapshot = mesh.snapshot();
        let landmarks = snapshot
            .landmarks()
            .expect("landmarks on a small linkless mesh");
        let filter = QueryFilter::new();
        let mut pool = NodePool::new(NODE_POOL_DEFAULT);
        let (mut checked, mut bound_sum, mut straight_sum) = (0, 0.0f64, 0.0f64);
        for &(start, start_position, end, end_position) in &pairs {
            let path = find_path(
                &snapshot,
                start,
                start_position,
                end,
                end_position,
                &filter,
                &mut pool,
            )
            .unwrap();
            if !path.complete || path.steps.len() < 2 {
                continue;
            }
            let bounds = landmarks.end_bounds(&snapshot, end, end_position).unwrap();
            let crossings: Vec<(u32, Vec3)> = path
                .steps
                .windows(2)
                .map(|pair| edge_into(&snapshot, pair[0].polygon, pair[1].polygon))
                .collect();
            let mut left = 0.0f32;
            let mut next = end_position;
            for &(number, midpoint) in crossings.iter().rev() {
                left += midpoint.distance(next);
                next = midpoint;
                let bound = landmarks.cost_bound(number, &bounds);
                assert!(
                    bound <= left * 1.0001 + 1e-4,
                    "bound {bound} over the {left} m left from {midpoint}"
                );
                bound_sum += f64::from(bound.max(midpoint.distance(end_position)));
                straight_sum += f64::from(midpoint.distance(end_position));
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked} crossings checked");
        // A number the table lacks bounds nothing, and does not panic.
        let (_, _, end, end_position) = pairs[0];
        let bounds = landmarks.end_bounds(&snapshot, end, end_position).unwrap();
        assert_eq!(landmarks.cost_bound(u32::MAX, &bounds), 0.0);
        assert!(
            bound_sum > straight_sum * 1.05,
            "landmarks {bound_sum} against the straight line's {straight_sum}"
        );
    }
}

/// On the dungeon's rooms and corridors the landmarks cut the nodes a search expands by
/// over a quarter, with the same verdicts and paths no longer on average.
#[test]
fn landmarks_cut_the_expansions_through_rooms_and_corridors() {
    let (mesh, pairs) = dungeon_pairs();
    let snapshot = mesh.snapshot();
    let straight_only = snapshot.without_landmarks();
    let filter = QueryFilter::new();
    let mut pool = NodePool::new(NODE_POOL_DEFAULT);
    let (mut with, mut without) = (0u64, 0u64);
    let (mut length_with, mut length_without) = (0.0f64, 0.0f64);
    for &(start, start_position, end, end_position) in &pairs {
        let search = |snapshot: &Snapshot, pool: &mut NodePool| {
            let path = find_path(
                snapshot,
                start,
                start_position,
                end,
                end_position,
                &filter,
                pool,
            )
            .unwrap();
            let corners =
                crate::query::straight_path(snapshot, &path.steps, start_position, end_position)
                    .unwrap();
            let length: f32 = corners
                .windows(2)
                .map(|pair| pair[0].position.distance(pair[1].position))
                .sum();
            (path, length)
        };
        let (landmarked, landmarked_length) = search(&snapshot, &mut pool);
        let (plain, plain_length) = search(&straight_only, &mut pool);
        assert_eq!(
            landmarked.complete, plain.complete,
            "{start_position} to {end_position}"
        );
        with += u64::from(landmarked.nodes_expanded);
        without += u64::from(plain.nodes_expanded);
        if plain.complete {
            length_with += f64::from(landmarked_length);
            length_without += f64::from(plain_length);
        }
    }
    println!(
        "{} searches: {with} expansions with landmarks, {without} without; complete straight \
         paths {length_with:.1} m against {length_without:.1} m",
        pairs.len()
    );
    assert!(
        with * 4 < without * 3,
        "{with} expansions against {without}"
    );
    assert!(
        length_with <= length_without * 1.001,
        "mean length {length_with} against {length_without}"
    );
}

/// The graph follows no off-mesh link, so a mesh with one has no landmarks (a link could
/// be a shorter way than any bound the graph gives).
#[test]
fn a_mesh_with_links_has_no_landmarks() {
    let (mut mesh, pairs) = dungeon_pairs();
    assert!(mesh.snapshot().landmarks().is_some());
    let (_, from, _, to) = pairs[0];
    mesh.add_link(crate::mesh::LinkDesc {
        kind: crate::mesh::LinkKind::Jump,
        start: from,
        end: to,
        bidirectional: true,
        radius_m: 0.5,
        open: true,
    })
    .unwrap();
    assert!(mesh.snapshot().landmarks().is_none());
}
