//! `--png` beside `--svg`: the same picture rasterised. The PNG decodes, its longer side is
//! the size asked, its caption is in its text chunks, and the polygons it paints cover
//! the area the SVG's polygons cover at the PNG's scale (less the edges drawn over them).

#![cfg(feature = "cli")]

mod common;

use std::path::{Path, PathBuf};

use common::{level_path, waymark};

fn temporary(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("waymark_pictures_{}_{name}", std::process::id()))
}

/// A decoded PNG: width, height, RGB bytes, and its tEXt chunks.
struct Decoded {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
    text: Vec<(String, String)>,
}

fn decode(path: &Path) -> Decoded {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut rgb).unwrap();
    assert_eq!(frame.color_type, png::ColorType::Rgb);
    let text = reader
        .info()
        .uncompressed_latin1_text
        .iter()
        .map(|chunk| (chunk.keyword.clone(), chunk.text.clone()))
        .collect();
    Decoded {
        width: frame.width as usize,
        height: frame.height as usize,
        rgb,
        text,
    }
}

/// The SVG's width and the summed pixel area of its polygons filled with `fill`.
fn svg_polygon_area(svg: &str, fill: &str) -> (f64, f64) {
    let width: f64 = svg
        .split("width=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let area = svg
        .lines()
        .filter(|line| line.starts_with("<polygon") && line.contains(&format!("fill=\"{fill}\"")))
        .map(|line| {
            let points: Vec<(f64, f64)> = line
                .split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .split_whitespace()
                .map(|pair| {
                    let (x, y) = pair.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            let twice: f64 = (0..points.len())
                .map(|i| {
                    let ((x1, y1), (x2, y2)) = (points[i], points[(i + 1) % points.len()]);
                    x1 * y2 - x2 * y1
                })
                .sum();
            twice.abs() / 2.0
        })
        .sum();
    (width, area)
}

#[test]
fn a_bake_png_paints_what_its_svg_draws() {
    let (svg_path, png_path) = (temporary("bake.svg"), temporary("bake.png"));
    let output = waymark(&[
        "bake",
        level_path("dungeon.obj").to_str().unwrap(),
        "--preset",
        "recast",
        "--svg",
        svg_path.to_str().unwrap(),
        "--png",
        png_path.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let png = decode(&png_path);
    // The dungeon is taller than wide: 1,200 px tall, margins of 10 px and 20 px under it
    // for the scale bar.
    assert_eq!(png.height, 1200 + 20 + 20);
    assert!(png.width < png.height);
    let title = png
        .text
        .iter()
        .find(|(keyword, _)| keyword == "Title")
        .unwrap();
    assert!(title.1.contains("116 polygons"), "{}", title.1);
    assert!(
        png.text
            .iter()
            .any(|(keyword, text)| keyword == "Comment" && text.contains("scale bar"))
    );

    // The ground's colour, 85% opaque over white or over the input's greys.
    let ground = [0x74u8, 0xc4, 0x76];
    let blends: Vec<[f64; 3]> = [255.0, 232.0, 189.0]
        .iter()
        .map(|&under| ground.map(|c| under + (f64::from(c) - under) * 0.85))
        .collect();
    let painted = png
        .rgb
        .chunks(3)
        .filter(|pixel| {
            blends.iter().any(|blend| {
                (0..3)
                    .map(|k| (f64::from(pixel[k]) - blend[k]).abs())
                    .sum::<f64>()
                    <= 6.0
            })
        })
        .count() as f64;
    let (svg_width, svg_area) = svg_polygon_area(&svg, "#74c476");
    // Both pictures frame the same window: the PNG is (its width - margins) / (the SVG's
    // width - margins) the SVG's scale.
    let ratio = (png.width as f64 - 20.0) / (svg_width - 20.0);
    let expected = svg_area * ratio * ratio;
    assert!(
        painted <= expected && painted >= 0.85 * expected,
        "{painted} ground pixels in the PNG, {expected:.0} under the SVG's polygons at its scale"
    );
    for path in [&svg_path, &png_path] {
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn crowd_scenario_and_target_write_pngs() {
    let png_path = temporary("any.png");
    let runs: [&[&str]; 3] = [
        &["crowd", "--agents", "20", "--frames", "10"],
        &["scenario", "circle", "--agents", "8"],
        &["target", "tests/fixtures/target_seat.json"],
    ];
    for args in runs {
        let _ = std::fs::remove_file(&png_path);
        let mut args = args.to_vec();
        args.extend(["--png", png_path.to_str().unwrap()]);
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_waymark"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let png = decode(&png_path);
        let long_side = png.width.max(png.height - 20) - 20;
        assert!(
            long_side == 1200 || long_side == 640,
            "{args:?}: {}x{}",
            png.width,
            png.height
        );
        let coloured = png
            .rgb
            .chunks(3)
            .filter(|pixel| pixel != &[255, 255, 255])
            .count();
        assert!(coloured > 1000, "{args:?}: {coloured} coloured pixels");
    }
    let output = waymark(&["bake", "--png", "/no/such/dir/out.png"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/no/such/dir/out.png"));
    let _ = std::fs::remove_file(&png_path);
}
