//! Farmed bakes: rectangles of a level's tile grid baked alone and merged give the whole
//! bake's `.wmnav` bytes exactly; parts that cannot make one level (overlapping, baked with
//! other settings or for another grid, leaving a tile uncovered, damaged) are refused
//! naming the part or the tile.

#![cfg(feature = "bake")]

mod common;

use std::ops::Range;

use waymark::bake::farm::{bake_tile_range, tile_grid};
use waymark::bake::{BakeConfig, BakeError, Preset, bake};
use waymark::mesh::blob::{BlobError, NavMeshFile};
use waymark::mesh::parts::{MergeError, PartError, TilePart, merge_parts};
use waymark::scene::WorldTriangles;
use waymark::scene::obj::{ObjOptions, load_obj};

fn world(level: &str) -> WorldTriangles {
    load_obj(&common::level_path(level), &ObjOptions::default())
        .unwrap()
        .world_triangles()
        .unwrap()
}

fn tiled(tile_size_cells: Option<u32>) -> BakeConfig {
    BakeConfig {
        tile_size_cells,
        ..BakeConfig::preset(Preset::Recast)
    }
}

/// A part through its file's bytes, named by its rectangle.
fn part(
    world: &WorldTriangles,
    config: &BakeConfig,
    columns: Range<u32>,
    rows: Range<u32>,
) -> (String, TilePart) {
    let name = format!("{columns:?},{rows:?}");
    let bytes = bake_tile_range(world, config, columns, rows)
        .unwrap()
        .part
        .to_bytes();
    (name, TilePart::from_bytes(&bytes).unwrap())
}

/// Splits `grid` into `columns_cut` x `rows_cut` rectangles (cuts at the given indices).
fn rectangles(
    grid: [u32; 2],
    column_cuts: &[u32],
    row_cuts: &[u32],
) -> Vec<(Range<u32>, Range<u32>)> {
    let bands = |cuts: &[u32], end: u32| {
        let mut edges = vec![0];
        edges.extend_from_slice(cuts);
        edges.push(end);
        edges
            .windows(2)
            .map(|pair| pair[0]..pair[1])
            .collect::<Vec<_>>()
    };
    let (columns, rows) = (bands(column_cuts, grid[0]), bands(row_cuts, grid[1]));
    rows.iter()
        .flat_map(|rows| {
            columns
                .iter()
                .map(move |columns| (columns.clone(), rows.clone()))
        })
        .collect()
}

#[test]
fn four_parts_of_the_dungeon_merge_to_the_whole_bake_byte_for_byte() {
    let (world, config) = (world("dungeon.obj"), tiled(Some(48)));
    let grid = tile_grid(&world, &config).unwrap();
    assert_eq!(grid, [6, 7]);
    let whole = bake(&world, &config).unwrap().to_file().to_bytes();
    // Four quadrants, given to the merge out of order.
    let mut parts: Vec<_> = rectangles(grid, &[3], &[4])
        .into_iter()
        .map(|(columns, rows)| part(&world, &config, columns, rows))
        .collect();
    parts.reverse();
    assert_eq!(parts.len(), 4);
    let merged = merge_parts(&parts).unwrap();
    assert_eq!(merged.to_bytes(), whole);
    // Each part holds only its own tiles.
    let tiles: usize = parts.iter().map(|(_, part)| part.file.tiles.len()).sum();
    assert_eq!(tiles, merged.tiles.len());
}

#[test]
fn nav_test_in_single_tiles_and_a_solo_bake_in_one_part_merge_to_the_whole() {
    let (world, config) = (world("nav_test.obj"), tiled(Some(64)));
    let grid = tile_grid(&world, &config).unwrap();
    let whole = bake(&world, &config).unwrap().to_file().to_bytes();
    let column_cuts: Vec<u32> = (1..grid[0]).collect();
    let row_cuts: Vec<u32> = (1..grid[1]).collect();
    let parts: Vec<_> = rectangles(grid, &column_cuts, &row_cuts)
        .into_iter()
        .map(|(columns, rows)| part(&world, &config, columns, rows))
        .collect();
    assert_eq!(parts.len(), (grid[0] * grid[1]) as usize);
    assert_eq!(merge_parts(&parts).unwrap().to_bytes(), whole);

    let solo = tiled(None);
    assert_eq!(tile_grid(&world, &solo).unwrap(), [1, 1]);
    let parts = [part(&world, &solo, 0..1, 0..1)];
    assert_eq!(
        merge_parts(&parts).unwrap().to_bytes(),
        bake(&world, &solo).unwrap().to_file().to_bytes()
    );
}

#[test]
fn a_bake_rasterized_in_row_pieces_and_bands_equals_every_tile_rasterized_alone() {
    // 16-cell tiles cut nav_test into 20 x 17 tiles: more than a band of 256 tiles, so
    // the whole bake rasterizes and builds in bands of rows, and a row is wider than one
    // rasterized piece (16 tiles). A farmed part rasterizes each tile's bordered grid on
    // its own; the two must give the same bytes.
    let (world, config) = (world("nav_test.obj"), tiled(Some(16)));
    let grid = tile_grid(&world, &config).unwrap();
    assert_eq!(grid, [20, 17]);
    let whole = bake(&world, &config).unwrap().to_file();
    let (_, alone) = part(&world, &config, 0..grid[0], 0..grid[1]);
    assert!(whole.tiles.len() > 256, "{} tiles", whole.tiles.len());
    assert_eq!(alone.file.to_bytes(), whole.to_bytes());
}

#[test]
fn parts_that_do_not_make_one_level_are_refused_naming_the_part() {
    let (dungeon, config) = (world("dungeon.obj"), tiled(Some(48)));
    let left = part(&dungeon, &config, 0..3, 0..7);
    let right = part(&dungeon, &config, 3..6, 0..7);
    let middle = part(&dungeon, &config, 2..4, 0..7);
    assert_eq!(
        merge_parts(&[left.clone(), middle.clone(), right.clone()]),
        Err(MergeError::Overlap {
            part: middle.0.clone(),
            other: left.0.clone(),
            column: 2,
            row: 0
        })
    );
    let top = part(&dungeon, &config, 3..6, 0..6);
    assert_eq!(
        merge_parts(&[left.clone(), top.clone()]),
        Err(MergeError::Missing {
            column: 3,
            row: 6,
            grid: [6, 7]
        })
    );
    // Baked for a smaller agent: the same grid, other settings.
    let smaller = BakeConfig {
        agent_radius_m: 0.4,
        ..config
    };
    let other = part(&dungeon, &smaller, 3..6, 0..7);
    assert_eq!(
        merge_parts(&[left.clone(), other.clone()]),
        Err(MergeError::OtherSettings {
            part: other.0.clone(),
            first: left.0.clone()
        })
    );
    // The same settings on another level: another grid.
    let nav_test = world("nav_test.obj");
    let foreign = part(&nav_test, &config, 0..1, 0..1);
    let error = merge_parts(&[left.clone(), foreign.clone()]).unwrap_err();
    assert!(
        matches!(&error, MergeError::OtherGrid { part, .. } if *part == foreign.0),
        "{error}"
    );
    assert_eq!(merge_parts(&[]), Err(MergeError::NoParts));

    // A rectangle off the grid is refused when baked.
    assert!(matches!(
        bake_tile_range(&dungeon, &config, 5..7, 0..1),
        Err(BakeError::TileRange { grid: [6, 7], .. })
    ));
    assert!(matches!(
        bake_tile_range(&dungeon, &config, 2..2, 0..1),
        Err(BakeError::TileRange { .. })
    ));
}

#[test]
fn damaged_or_inconsistent_part_files_are_refused() {
    let (dungeon, config) = (world("dungeon.obj"), tiled(Some(48)));
    let (_, good) = part(&dungeon, &config, 0..3, 0..4);
    let bytes = good.to_bytes();
    // A changed rectangle without a matching checksum.
    let mut damaged = bytes.clone();
    damaged[20] ^= 1;
    assert!(matches!(
        TilePart::from_bytes(&damaged),
        Err(PartError::ChecksumMismatch { .. })
    ));
    assert_eq!(
        TilePart::from_bytes(&bytes[..30]),
        Err(PartError::Truncated { length: 30 })
    );
    // A damaged tile: the embedded file's own checksum.
    let mut damaged = bytes.clone();
    let last = damaged.len() - 20;
    damaged[last] ^= 0x40;
    assert!(matches!(
        TilePart::from_bytes(&damaged),
        Err(PartError::Tiles(BlobError::ChecksumMismatch { .. }))
    ));
    // A part whose header claims a rectangle its tiles are not in.
    let lying = TilePart {
        columns: 3..6,
        ..good.clone()
    };
    assert!(matches!(
        TilePart::from_bytes(&lying.to_bytes()),
        Err(PartError::TileOutside { columns, .. }) if columns == (3..6)
    ));
    let beyond = TilePart {
        columns: 0..9,
        ..good.clone()
    };
    assert!(matches!(
        TilePart::from_bytes(&beyond.to_bytes()),
        Err(PartError::BadRectangle { .. })
    ));
    // A part is not a level: loading it as one says what it is.
    assert_eq!(NavMeshFile::from_bytes(&bytes), Err(BlobError::FarmedPart));
    // And a whole file is not a part.
    let whole = bake(&dungeon, &config).unwrap().to_file().to_bytes();
    assert!(matches!(
        TilePart::from_bytes(&whole),
        Err(PartError::BadMagic { .. })
    ));
}
