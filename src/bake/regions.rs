//! Stages [`Stage::DistanceField`](super::Stage::DistanceField) and [`Stage::Regions`](super::Stage::Regions): partition walkable spans into regions, each of which becomes one contour.
//!
//! Watershed (the default): a distance field to the walkable boundary, blurred, is flooded
//! from its ridges down, two chamfer units (one cell) per level: existing regions grow into
//! the newly submerged spans first, and spans still unclaimed seed new regions. Regions come
//! out round and few. Monotone: a row sweep that never makes holes; faster, thinner regions.
//!
//! Both then remove regions smaller than the minimum (with everything connected to them)
//! unless they touch the tile border, merge regions below the merge size into their smallest
//! neighbour, and renumber regions 1..n in scan order, so the result does not depend on
//! traversal accidents. Tile borders get their own regions, flagged with [`BORDER_REGION`],
//! so no region of the tile proper reaches across its edge.
//!
//! Invariants after this stage: `regions[span] == 0` exactly for spans that are not walkable
//! or were filtered out; two spans of one region are never stacked in one column (so a
//! region is a single-valued surface the contour stage can trace).

use super::compact::{CompactHeightfield, chamfer_distance};
use super::config::Partition;

/// Flag on the regions painted over a tile's border.
pub const BORDER_REGION: u16 = 0x8000;

/// Largest number of regions one grid may hold (ids are `u16`, the top bit is the border
/// flag).
pub const REGION_COUNT_MAX: usize = (BORDER_REGION - 1) as usize;

/// Region stage parameters, in cells.
#[derive(Clone, Copy, Debug)]
pub struct RegionParams {
    /// Which partition to run.
    pub partition: Partition,
    /// Connected groups of regions smaller than this are removed. Units: spans.
    pub min_region_spans: u32,
    /// Regions smaller than this merge into a neighbour. Units: spans.
    pub merge_region_spans: u32,
}

/// Partitions the walkable spans into regions.
pub fn build_regions(compact: &mut CompactHeightfield, params: &RegionParams) {
    compact.regions.iter_mut().for_each(|region| *region = 0);
    let mut next_region = paint_border(compact);
    match params.partition {
        Partition::Watershed => {
            if compact.distances.len() != compact.span_count() {
                build_distance_field(compact);
            }
            watershed(compact, &mut next_region);
        }
        Partition::Monotone => monotone(compact, &mut next_region),
    }
    merge_and_filter(compact, next_region, params);
}

/// Paints the four border strips with one region each. Returns the next free region id.
fn paint_border(compact: &mut CompactHeightfield) -> u16 {
    let border = compact.border;
    if border == 0 {
        return 1;
    }
    let (width, depth) = (compact.width, compact.depth);
    let border_x = border.min(width);
    let border_z = border.min(depth);
    let strips = [
        (0, border_x, 0, depth),
        (width - border_x, width, 0, depth),
        (0, width, 0, border_z),
        (0, width, depth - border_z, depth),
    ];
    for (index, (x0, x1, z0, z1)) in strips.into_iter().enumerate() {
        let region = (index as u16 + 1) | BORDER_REGION;
        for z in z0..z1 {
            for x in x0..x1 {
                let column = (x + z * width) as usize;
                for span in compact.column_spans(column) {
                    if compact.areas[span] != 0 {
                        compact.regions[span] = region;
                    }
                }
            }
        }
    }
    5
}

/// Distance of every walkable span to the nearest span that is not surrounded by four
/// linked spans of its own area, blurred over the 3x3 neighbourhood. Input of the watershed
/// partition; [`build_regions`] runs it when it has not been run.
pub fn build_distance_field(compact: &mut CompactHeightfield) {
    let mut distances = vec![u16::MAX; compact.span_count()];
    compact.for_each_span(|x, z, span| {
        let area = compact.areas[span];
        let interior = (0..4).all(|direction| {
            compact
                .neighbour(x, z, span, direction)
                .is_some_and(|neighbour| compact.areas[neighbour] == area)
        });
        if !interior {
            distances[span] = 0;
        }
    });
    chamfer_distance(compact, &mut distances);

    // Box blur: smooths the staircase of the chamfer metric so that ridges, and with them
    // region seeds, do not split along diagonal walls. Missing neighbours count as the
    // centre's own value; spans at the boundary keep theirs.
    let mut blurred = distances.clone();
    compact.for_each_span(|x, z, span| {
        let centre = distances[span];
        if centre <= 2 {
            return;
        }
        let mut sum = u32::from(centre);
        for direction in 0..4 {
            match compact.neighbour(x, z, span, direction) {
                Some(neighbour) => {
                    sum += u32::from(distances[neighbour]);
                    let (dx, dz) = super::filter::DIRECTIONS[direction];
                    let (nx, nz) = ((x as i32 + dx) as u32, (z as i32 + dz) as u32);
                    let turn = (direction + 1) % 4;
                    match compact.neighbour(nx, nz, neighbour, turn) {
                        Some(diagonal) => sum += u32::from(distances[diagonal]),
                        None => sum += u32::from(centre),
                    }
                }
                None => sum += 2 * u32::from(centre),
            }
        }
        blurred[span] = ((sum + 4) / 9) as u16;
    });
    compact.distance_max = blurred.iter().copied().max().unwrap_or(0);
    compact.distances = blurred;
}

/// Span coordinates, cached once so the flood loops do not search columns.
fn span_coordinates(compact: &CompactHeightfield) -> Vec<(u32, u32)> {
    let mut coordinates = vec![(0, 0); compact.span_count()];
    compact.for_each_span(|x, z, span| coordinates[span] = (x, z));
    coordinates
}

fn watershed(compact: &mut CompactHeightfield, next_region: &mut u16) {
    let coordinates = span_coordinates(compact);
    let span_total = compact.span_count();
    // Expansion distance of each span from its region's seed, to grow evenly.
    let mut grown_distance = vec![0u16; span_total];
    // Spans still unclaimed, in scan order, sorted by level as the water falls.
    let mut by_distance: Vec<usize> = (0..span_total)
        .filter(|&span| compact.areas[span] != 0 && compact.regions[span] == 0)
        .collect();
    by_distance.sort_by_key(|&span| std::cmp::Reverse(compact.distances[span]));
    let mut submerged: Vec<usize> = Vec::new();
    let mut cursor = 0;
    let mut flood_stack: Vec<usize> = Vec::new();

    let mut level = (compact.distance_max + 1) & !1;
    while level > 0 {
        level = level.saturating_sub(2);
        while cursor < by_distance.len() && compact.distances[by_distance[cursor]] >= level {
            submerged.push(by_distance[cursor]);
            cursor += 1;
        }
        submerged.retain(|&span| compact.regions[span] == 0);
        expand_regions(
            compact,
            &coordinates,
            &mut submerged,
            &mut grown_distance,
            8,
        );
        // Seeds in scan order: `submerged` keeps the sorted order, ties by span index.
        let seeds: Vec<usize> = submerged.clone();
        for seed in seeds {
            if compact.regions[seed] != 0 {
                continue;
            }
            if usize::from(*next_region) >= REGION_COUNT_MAX {
                break;
            }
            if flood_region(
                compact,
                &coordinates,
                seed,
                level,
                *next_region,
                &mut grown_distance,
                &mut flood_stack,
            ) {
                *next_region += 1;
            }
        }
    }
    // Whatever remains unclaimed (narrow spans the flood never reached) joins its neighbours.
    let mut rest: Vec<usize> = (0..span_total)
        .filter(|&span| compact.areas[span] != 0 && compact.regions[span] == 0)
        .collect();
    expand_regions(
        compact,
        &coordinates,
        &mut rest,
        &mut grown_distance,
        usize::MAX,
    );
}

/// Grows existing regions into the spans of `pending`, one ring per iteration, each span
/// joining the neighbouring region whose seed is nearest along the growth. Spans claimed are
/// removed from `pending`.
fn expand_regions(
    compact: &mut CompactHeightfield,
    coordinates: &[(u32, u32)],
    pending: &mut Vec<usize>,
    grown_distance: &mut [u16],
    iterations_max: usize,
) {
    let mut claims: Vec<(usize, u16, u16)> = Vec::new();
    for _ in 0..iterations_max {
        claims.clear();
        for &span in pending.iter() {
            let (x, z) = coordinates[span];
            let area = compact.areas[span];
            let mut best: Option<(u16, u16)> = None;
            for direction in 0..4 {
                let Some(neighbour) = compact.neighbour(x, z, span, direction) else {
                    continue;
                };
                let region = compact.regions[neighbour];
                if region == 0 || region & BORDER_REGION != 0 || compact.areas[neighbour] != area {
                    continue;
                }
                let distance = grown_distance[neighbour].saturating_add(2);
                if best.is_none_or(|(_, best_distance)| distance < best_distance) {
                    best = Some((region, distance));
                }
            }
            if let Some((region, distance)) = best {
                claims.push((span, region, distance));
            }
        }
        if claims.is_empty() {
            break;
        }
        // Applied after the sweep, so a ring grows from the previous ring only.
        for &(span, region, distance) in &claims {
            compact.regions[span] = region;
            grown_distance[span] = distance;
        }
        pending.retain(|&span| compact.regions[span] == 0);
    }
}

/// Floods a new region from `seed` over spans at or above `level - 2`, stopping where the
/// 8-neighbourhood touches another region. Returns whether any span was claimed.
fn flood_region(
    compact: &mut CompactHeightfield,
    coordinates: &[(u32, u32)],
    seed: usize,
    level: u16,
    region: u16,
    grown_distance: &mut [u16],
    stack: &mut Vec<usize>,
) -> bool {
    let area = compact.areas[seed];
    let floor_level = level.saturating_sub(2);
    stack.clear();
    stack.push(seed);
    compact.regions[seed] = region;
    grown_distance[seed] = 0;
    let mut claimed = 0usize;
    while let Some(span) = stack.pop() {
        let (x, z) = coordinates[span];
        // Touching another region (not a border) along any of the eight directions: leave
        // this span for expansion to settle, so regions meet on the watershed line.
        let mut touches_other = false;
        for direction in 0..4 {
            let Some(neighbour) = compact.neighbour(x, z, span, direction) else {
                continue;
            };
            let other = compact.regions[neighbour];
            if other != 0
                && other != region
                && other & BORDER_REGION == 0
                && compact.areas[neighbour] == area
            {
                touches_other = true;
                break;
            }
            let (dx, dz) = super::filter::DIRECTIONS[direction];
            let (nx, nz) = ((x as i32 + dx) as u32, (z as i32 + dz) as u32);
            if let Some(diagonal) = compact.neighbour(nx, nz, neighbour, (direction + 1) % 4) {
                let other = compact.regions[diagonal];
                if other != 0
                    && other != region
                    && other & BORDER_REGION == 0
                    && compact.areas[diagonal] == area
                {
                    touches_other = true;
                    break;
                }
            }
        }
        if touches_other {
            compact.regions[span] = 0;
            continue;
        }
        claimed += 1;
        for direction in 0..4 {
            let Some(neighbour) = compact.neighbour(x, z, span, direction) else {
                continue;
            };
            if compact.areas[neighbour] == area
                && compact.regions[neighbour] == 0
                && compact.distances[neighbour] >= floor_level
            {
                compact.regions[neighbour] = region;
                grown_distance[neighbour] = 0;
                stack.push(neighbour);
            }
        }
    }
    claimed > 0
}

/// Monotone partition: each row's runs of linked spans continue the region of the run
/// below them when that region is their only neighbour below and no other run of this row
/// continues it; otherwise they start a new region.
fn monotone(compact: &mut CompactHeightfield, next_region: &mut u16) {
    #[derive(Clone, Copy, Default)]
    struct Run {
        below: u16,
        unique_below: bool,
        region: u16,
    }
    let width = compact.width;
    let mut runs: Vec<Run> = Vec::new();
    let mut below_users: Vec<u16> = Vec::new();
    let mut run_of_span: Vec<u32> = vec![0; compact.span_count()];
    for z in 0..compact.depth {
        runs.clear();
        // Pass 1: runs along X; a span continues the run of its -X neighbour.
        for x in 0..width {
            let column = (x + z * width) as usize;
            for span in compact.column_spans(column) {
                if compact.areas[span] == 0 || compact.regions[span] & BORDER_REGION != 0 {
                    continue;
                }
                let run = match compact.neighbour(x, z, span, 0) {
                    Some(west)
                        if compact.areas[west] == compact.areas[span]
                            && compact.regions[west] == 0
                            && (run_of_span[west] as usize) < runs.len() =>
                    {
                        run_of_span[west]
                    }
                    _ => {
                        runs.push(Run {
                            below: 0,
                            unique_below: true,
                            region: 0,
                        });
                        runs.len() as u32 - 1
                    }
                };
                run_of_span[span] = run;
                if let Some(south) = compact.neighbour(x, z, span, 3) {
                    let below = compact.regions[south];
                    if below != 0
                        && below & BORDER_REGION == 0
                        && compact.areas[south] == compact.areas[span]
                    {
                        let entry = &mut runs[run as usize];
                        if entry.below == 0 {
                            entry.below = below;
                        } else if entry.below != below {
                            entry.unique_below = false;
                        }
                    }
                }
            }
        }
        // Pass 2: a run takes the region below if it is the only run of this row below it.
        below_users.clear();
        below_users.resize(usize::from(*next_region) + 1, 0);
        for run in &runs {
            if run.below != 0 && run.unique_below {
                below_users[usize::from(run.below)] += 1;
            }
        }
        for run in runs.iter_mut() {
            if run.below != 0 && run.unique_below && below_users[usize::from(run.below)] == 1 {
                run.region = run.below;
            } else if usize::from(*next_region) < REGION_COUNT_MAX {
                run.region = *next_region;
                *next_region += 1;
            }
        }
        // Pass 3: write the regions; run ids are meaningful only within this row.
        for x in 0..width {
            let column = (x + z * width) as usize;
            for span in compact.column_spans(column) {
                if compact.areas[span] == 0 || compact.regions[span] & BORDER_REGION != 0 {
                    continue;
                }
                compact.regions[span] = runs[run_of_span[span] as usize].region;
            }
        }
        // Spans of this row must not be mistaken for the current row's runs next row.
        for x in 0..width {
            let column = (x + z * width) as usize;
            for span in compact.column_spans(column) {
                run_of_span[span] = u32::MAX;
            }
        }
    }
}

/// Removes regions too small to matter and merges small ones into neighbours, then numbers
/// regions 1..n in scan order.
fn merge_and_filter(compact: &mut CompactHeightfield, region_end: u16, params: &RegionParams) {
    let region_total = usize::from(region_end);
    let mut sizes = vec![0u32; region_total];
    // Area of each region (a region never mixes areas: floods and expansion stay in one).
    let mut region_area = vec![0u8; region_total];
    let mut touches_border = vec![false; region_total];
    let mut neighbours: Vec<Vec<u16>> = vec![Vec::new(); region_total];
    let mut stacked = vec![Vec::<u16>::new(); region_total];
    let width = compact.width;
    for z in 0..compact.depth {
        for x in 0..width {
            let column = (x + z * width) as usize;
            let spans = compact.column_spans(column);
            for span in spans.clone() {
                let region = compact.regions[span];
                if region == 0 || region & BORDER_REGION != 0 {
                    continue;
                }
                let index = usize::from(region);
                sizes[index] += 1;
                region_area[index] = compact.areas[span];
                // Regions stacked in one column must never merge.
                for other in spans.clone() {
                    let other_region = compact.regions[other];
                    if other != span
                        && other_region != 0
                        && other_region & BORDER_REGION == 0
                        && other_region != region
                        && !stacked[index].contains(&other_region)
                    {
                        stacked[index].push(other_region);
                    }
                }
                for direction in 0..4 {
                    match compact.neighbour(x, z, span, direction) {
                        Some(neighbour) => {
                            let other = compact.regions[neighbour];
                            if other & BORDER_REGION != 0 {
                                touches_border[index] = true;
                            } else if other != 0
                                && other != region
                                && !neighbours[index].contains(&other)
                            {
                                neighbours[index].push(other);
                            }
                        }
                        None => {
                            if compact.border > 0 && is_tile_edge(compact, x, z, direction) {
                                touches_border[index] = true;
                            }
                        }
                    }
                }
            }
        }
    }

    // Remove connected groups smaller than the minimum that do not reach a tile border (a
    // region cut by the border may continue in the next tile).
    let mut remap: Vec<u16> = (0..region_end).collect();
    let mut visited = vec![false; region_total];
    let mut group: Vec<u16> = Vec::new();
    for start in 1..region_total {
        if visited[start] || sizes[start] == 0 {
            continue;
        }
        group.clear();
        group.push(start as u16);
        visited[start] = true;
        let mut cursor = 0;
        let (mut total, mut bordered) = (0u32, false);
        while cursor < group.len() {
            let region = usize::from(group[cursor]);
            cursor += 1;
            total += sizes[region];
            bordered |= touches_border[region];
            for &other in &neighbours[region] {
                if !visited[usize::from(other)] {
                    visited[usize::from(other)] = true;
                    group.push(other);
                }
            }
        }
        if total < params.min_region_spans && !bordered {
            for &region in &group {
                remap[usize::from(region)] = 0;
                sizes[usize::from(region)] = 0;
            }
        }
    }

    // Merge small regions into their smallest mergeable neighbour until nothing changes.
    // Deterministic: regions are visited in id order and ties break on the lower id.
    loop {
        let mut merged_any = false;
        for region in 1..region_total {
            if remap[region] as usize != region || sizes[region] == 0 {
                continue;
            }
            if sizes[region] >= params.merge_region_spans && touches_border[region] {
                continue;
            }
            if sizes[region] >= params.merge_region_spans && neighbours[region].len() > 1 {
                continue;
            }
            let mut target: Option<usize> = None;
            for &other in &neighbours[region] {
                let other = usize::from(resolve(&remap, other));
                // Never across areas: a pond stays water however small it is.
                if other == 0
                    || other == region
                    || sizes[other] == 0
                    || region_area[other] != region_area[region]
                {
                    continue;
                }
                let conflicts = stacked[region]
                    .iter()
                    .any(|&s| usize::from(resolve(&remap, s)) == other)
                    || stacked[other]
                        .iter()
                        .any(|&s| usize::from(resolve(&remap, s)) == region);
                if conflicts {
                    continue;
                }
                if target.is_none_or(|best| (sizes[other], other) < (sizes[best], best)) {
                    target = Some(other);
                }
            }
            let Some(target) = target else { continue };
            // Smaller region folds into the larger's record; the larger keeps its id.
            remap[region] = target as u16;
            sizes[target] += sizes[region];
            sizes[region] = 0;
            touches_border[target] |= touches_border[region];
            let moved = std::mem::take(&mut neighbours[region]);
            for other in moved {
                if !neighbours[target].contains(&other) && usize::from(other) != target {
                    neighbours[target].push(other);
                }
            }
            let moved = std::mem::take(&mut stacked[region]);
            stacked[target].extend(moved);
            merged_any = true;
        }
        if !merged_any {
            break;
        }
    }

    // Final ids 1..n in scan order of first appearance.
    let mut final_id = vec![0u16; region_total];
    let mut next = 1u16;
    for region in compact.regions.iter_mut() {
        if *region == 0 {
            continue;
        }
        if *region & BORDER_REGION != 0 {
            continue;
        }
        let resolved = usize::from(resolve(&remap, *region));
        if resolved == 0 {
            *region = 0;
            continue;
        }
        if final_id[resolved] == 0 {
            final_id[resolved] = next;
            next += 1;
        }
        *region = final_id[resolved];
    }
}

/// Follows merge links to the surviving region id (0 if removed).
fn resolve(remap: &[u16], mut region: u16) -> u16 {
    while region != 0 && remap[usize::from(region)] != region {
        region = remap[usize::from(region)];
    }
    region
}

fn is_tile_edge(compact: &CompactHeightfield, x: u32, z: u32, direction: usize) -> bool {
    let (dx, dz) = super::filter::DIRECTIONS[direction];
    let (nx, nz) = (x as i32 + dx, z as i32 + dz);
    nx < 0 || nz < 0 || nx >= compact.width as i32 || nz >= compact.depth as i32
}
