//! A [`Picture`] rasterised to RGB pixels, for PNG output where an SVG cannot go (reports,
//! CI artifacts). The same layers and styles as the SVG; edges anti-aliased by drawing at
//! twice the resolution and averaging each 2x2 block; no text (the caption belongs in the
//! image file's metadata).

use glam::Vec2;

use super::picture::{MARGIN_PX, POINT_RADIUS_PX, Picture, Rgb, Shape, Stroke};

/// Samples per pixel along each axis.
const SUPERSAMPLE: usize = 2;

/// Sides of the polygon a point marker is drawn as.
const POINT_SIDES: usize = 16;

/// An RGB image, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raster {
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
    /// Three bytes a pixel (red, green, blue), row by row.
    pub rgb: Vec<u8>,
}

/// A canvas of samples, white at first.
struct Canvas {
    width: usize,
    height: usize,
    samples: Vec<[f32; 3]>,
}

impl Canvas {
    fn blend(&mut self, column: usize, row: usize, colour: Rgb, opacity: f32) {
        let sample = &mut self.samples[row * self.width + column];
        for (channel, value) in sample.iter_mut().zip([colour.0, colour.1, colour.2]) {
            *channel += (f32::from(value) - *channel) * opacity;
        }
    }

    /// Fills a polygon (even-odd rule) given in sample coordinates, at sample centres.
    fn fill(&mut self, corners: &[Vec2], colour: Rgb, opacity: f32) {
        if corners.len() < 3 || !corners.iter().all(|c| c.is_finite()) {
            return;
        }
        let (low, high) = corners
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(low, high), c| {
                (low.min(c.y), high.max(c.y))
            });
        let first_row = (low - 0.5).ceil().max(0.0) as usize;
        let end_row = ((high - 0.5).ceil().max(0.0) as usize).min(self.height);
        let mut crossings = Vec::new();
        for row in first_row..end_row {
            let y = row as f32 + 0.5;
            crossings.clear();
            for (index, &a) in corners.iter().enumerate() {
                let b = corners[(index + 1) % corners.len()];
                if (a.y <= y) != (b.y <= y) {
                    crossings.push(a.x + (y - a.y) * (b.x - a.x) / (b.y - a.y));
                }
            }
            crossings.sort_by(f32::total_cmp);
            for span in crossings.chunks_exact(2) {
                let first = (span[0] - 0.5).ceil().max(0.0) as usize;
                let end = ((span[1] - 0.5).ceil().max(0.0) as usize).min(self.width);
                for column in first..end {
                    self.blend(column, row, colour, opacity);
                }
            }
        }
    }

    /// Strokes a segment as a rectangle `width` samples wide, dashed if asked.
    fn stroke(&mut self, a: Vec2, b: Vec2, stroke: Stroke, samples_per_px: f32) {
        let length = a.distance(b);
        if !(length > 0.0) {
            return;
        }
        let direction = (b - a) / length;
        let half = direction.perp() * (stroke.width_px * samples_per_px).max(1.0) * 0.5;
        let pieces: Vec<(f32, f32)> = match stroke.dash_px {
            None => vec![(0.0, length)],
            Some((on, off)) => {
                let (on, period) = (on * samples_per_px, (on + off) * samples_per_px);
                (0..)
                    .map(|dash| dash as f32 * period)
                    .take_while(|&start| start < length)
                    .map(|start| (start, (start + on).min(length)))
                    .collect()
            }
        };
        for (start, end) in pieces {
            let (from, to) = (a + direction * start, a + direction * end);
            self.fill(
                &[from - half, to - half, to + half, from + half],
                stroke.colour,
                stroke.opacity,
            );
        }
    }
}

impl Picture {
    /// The picture rasterised with its longer side `long_side_px` pixels (margins
    /// included in neither side), with the scale bar under it.
    pub fn to_raster(&self, long_side_px: u32) -> Raster {
        let size = self.frame().size();
        let width_px = long_side_px as f32 * size.x.max(1e-3) / size.x.max(size.z).max(1e-3);
        let (scale, height_px) = self.scale(width_px);
        let width = (width_px + 2.0 * MARGIN_PX).ceil() as usize;
        let height = (height_px + 2.0 * MARGIN_PX + 20.0).ceil() as usize;
        let factor = SUPERSAMPLE as f32;
        let mut canvas = Canvas {
            width: width * SUPERSAMPLE,
            height: height * SUPERSAMPLE,
            samples: vec![[255.0; 3]; width * height * SUPERSAMPLE * SUPERSAMPLE],
        };
        let at = |point| self.to_pixels(scale, point) * factor;
        for (kind, shape) in self.in_layer_order() {
            let style = super::picture::style(*kind);
            match shape {
                Shape::Line(a, b) => {
                    if let Some(stroke) = style.stroke {
                        canvas.stroke(at(*a), at(*b), stroke, factor);
                    }
                }
                Shape::Polygon(corners) => {
                    let corners: Vec<Vec2> = corners.iter().map(|&c| at(c)).collect();
                    if let Some((colour, opacity)) = style.fill {
                        canvas.fill(&corners, colour, opacity);
                    }
                    if let Some(stroke) = style.stroke {
                        for (index, &a) in corners.iter().enumerate() {
                            let b = corners[(index + 1) % corners.len()];
                            canvas.stroke(a, b, stroke, factor);
                        }
                    }
                }
                Shape::Point(point) => {
                    let centre = at(*point);
                    let radius = POINT_RADIUS_PX * factor;
                    let disc: Vec<Vec2> = (0..POINT_SIDES)
                        .map(|side| {
                            let angle = side as f32 / POINT_SIDES as f32 * std::f32::consts::TAU;
                            centre + Vec2::from_angle(angle) * radius
                        })
                        .collect();
                    if let Some((colour, opacity)) = style.fill {
                        canvas.fill(&disc, colour, opacity);
                    }
                }
            }
        }
        // The scale bar, as in the SVG (its length in metres goes in the caption).
        let bar_y = (height_px + 2.0 * MARGIN_PX + 8.0) * factor;
        let bar = Stroke {
            colour: Rgb(0, 0, 0),
            opacity: 1.0,
            width_px: 2.0,
            dash_px: None,
        };
        canvas.stroke(
            Vec2::new(MARGIN_PX * factor, bar_y),
            Vec2::new((MARGIN_PX + self.scale_bar_m() * scale) * factor, bar_y),
            bar,
            factor,
        );
        downsample(&canvas, width, height)
    }
}

/// Averages each block of samples into its pixel.
fn downsample(canvas: &Canvas, width: usize, height: usize) -> Raster {
    let mut rgb = Vec::with_capacity(width * height * 3);
    for row in 0..height {
        for column in 0..width {
            let mut sum = [0.0f32; 3];
            for sub_row in 0..SUPERSAMPLE {
                for sub_column in 0..SUPERSAMPLE {
                    let sample = canvas.samples[(row * SUPERSAMPLE + sub_row) * canvas.width
                        + column * SUPERSAMPLE
                        + sub_column];
                    for (total, value) in sum.iter_mut().zip(sample) {
                        *total += value;
                    }
                }
            }
            let blocks = (SUPERSAMPLE * SUPERSAMPLE) as f32;
            rgb.extend(sum.map(|total| (total / blocks).round().clamp(0.0, 255.0) as u8));
        }
    }
    Raster {
        width: width as u32,
        height: height as u32,
        rgb,
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::debug::picture::{area_colour, style};
    use crate::debug::{DebugDraw, DrawKind};
    use crate::geom::Aabb;
    use crate::ids::AreaId;

    /// A picture of the window 0..20 m square, 10 px a metre at a long side of 200 px.
    fn window() -> Picture {
        let mut view = Aabb::default();
        view.add_point(Vec3::ZERO);
        view.add_point(Vec3::new(20.0, 0.0, 20.0));
        Picture::new().with_view(view)
    }

    fn pixel(raster: &Raster, column: usize, row: usize) -> [u8; 3] {
        let at = (row * raster.width as usize + column) * 3;
        [raster.rgb[at], raster.rgb[at + 1], raster.rgb[at + 2]]
    }

    #[test]
    fn a_square_polygon_covers_its_area_in_pixels_in_its_colour() {
        let mut picture = window();
        let square = [
            Vec3::new(5.0, 0.0, 5.0),
            Vec3::new(15.0, 0.0, 5.0),
            Vec3::new(15.0, 0.0, 15.0),
            Vec3::new(5.0, 0.0, 15.0),
        ];
        picture.polygon(DrawKind::Polygon(AreaId(1)), &square);
        let raster = picture.to_raster(200);
        assert_eq!((raster.width, raster.height), (220, 240));
        // 85% of the area's colour over white, exactly on the 10 m x 10 m = 100 x 100 px.
        let colour = area_colour(1);
        let expected = [colour.0, colour.1, colour.2]
            .map(|c| (255.0 + (f32::from(c) - 255.0) * 0.85).round() as u8);
        let painted = (0..raster.height as usize)
            .flat_map(|row| (0..raster.width as usize).map(move |column| (column, row)))
            .filter(|&(column, row)| pixel(&raster, column, row) != [255; 3])
            .collect::<Vec<_>>();
        let in_square =
            |(column, row): (usize, usize)| (60..160).contains(&column) && (60..160).contains(&row);
        // The square's pixels, and the scale bar under the picture.
        assert_eq!(painted.iter().filter(|&&p| in_square(p)).count(), 100 * 100);
        assert!(
            painted
                .iter()
                .filter(|&&p| in_square(p))
                .all(|&(c, r)| pixel(&raster, c, r) == expected)
        );
        assert!(
            painted
                .iter()
                .all(|&(column, row)| in_square((column, row)) || row >= 220)
        );
    }

    #[test]
    fn a_line_inks_its_length_times_its_width() {
        let mut picture = window();
        picture.line(
            DrawKind::WallEdge,
            Vec3::new(2.0, 0.0, 3.3),
            Vec3::new(17.0, 0.0, 12.1),
        );
        let raster = picture.to_raster(200);
        let stroke = style(DrawKind::WallEdge).stroke.unwrap();
        // Ink: each pixel's share of the stroke colour, summed over the picture's window.
        let ink: f32 = (0..220usize)
            .flat_map(|row| (0..raster.width as usize).map(move |column| (column, row)))
            .map(|(column, row)| {
                (255.0 - f32::from(pixel(&raster, column, row)[0]))
                    / (255.0 - f32::from(stroke.colour.0))
            })
            .sum();
        let length_px = Vec2::new(15.0, 8.8).length() * 10.0;
        let expected = length_px * stroke.width_px;
        assert!(
            (ink - expected).abs() < 0.05 * expected,
            "ink {ink} px, expected {expected}"
        );
    }

    #[test]
    fn a_dashed_line_inks_its_on_share() {
        let mut solid = window();
        solid.line(
            DrawKind::WallEdge,
            Vec3::new(1.0, 0.0, 10.0),
            Vec3::new(19.0, 0.0, 10.0),
        );
        let mut dashed = window();
        dashed.line(
            DrawKind::TileBorder,
            Vec3::new(1.0, 0.0, 10.0),
            Vec3::new(19.0, 0.0, 10.0),
        );
        let count = |raster: &Raster| {
            (0..raster.width as usize)
                .filter(|&c| pixel(raster, c, 110) != [255; 3])
                .count()
        };
        let (solid, dashed) = (count(&solid.to_raster(200)), count(&dashed.to_raster(200)));
        assert_eq!(solid, 180);
        // Dashes of 4 px on, 3 px off: 4/7 of the length.
        assert!(
            (dashed as f32 - 180.0 * 4.0 / 7.0).abs() <= 4.0,
            "{dashed} px of dashes"
        );
    }
}
