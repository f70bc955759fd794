//! A top-down SVG backend for [`DebugDraw`]: X to the right, Z downwards, layers drawn in a
//! fixed order (input, polygons, edges, walls, tile borders, markers), a scale bar and a
//! caption. Primitives are kept in world metres and projected to pixels when written.

use std::fmt::Write;

use glam::{Vec2, Vec3};

use super::{DebugDraw, DrawKind};
use crate::geom::Aabb;

enum Shape {
    Line(Vec3, Vec3),
    Polygon(Vec<Vec3>),
    Point(Vec3),
}

/// Collects primitives and writes them as an SVG document.
#[derive(Default)]
pub struct SvgDrawer {
    shapes: Vec<(DrawKind, Shape)>,
    bounds: Aabb,
    view: Option<Aabb>,
}

fn layer(kind: DrawKind) -> u8 {
    match kind {
        DrawKind::InputUnwalkable | DrawKind::InputWalkable => 0,
        DrawKind::Polygon(_) => 1,
        DrawKind::PolygonEdge => 2,
        DrawKind::WallEdge => 3,
        DrawKind::TileBorder => 4,
        DrawKind::Marker => 5,
        DrawKind::AllowedRegion | DrawKind::Fragment => 1,
        DrawKind::Occluder | DrawKind::SightLine | DrawKind::ProbePath => 4,
        DrawKind::RejectedCandidate => 5,
        DrawKind::Corridor | DrawKind::Velocity => 4,
        DrawKind::Support => 2,
        DrawKind::SupportMotion => 4,
    }
}

fn area_colour(area: u8) -> &'static str {
    const PALETTE: [&str; 8] = [
        "#9ecae1", "#74c476", "#6baed6", "#fd8d3c", "#c7e9c0", "#fdd0a2", "#bcbddc", "#fa9fb5",
    ];
    PALETTE[usize::from(area) % PALETTE.len()]
}

fn style(kind: DrawKind) -> String {
    match kind {
        DrawKind::InputUnwalkable => "fill=\"#bdbdbd\"".into(),
        DrawKind::InputWalkable => "fill=\"#e8e8e8\"".into(),
        DrawKind::Polygon(area) => {
            format!("fill=\"{}\" fill-opacity=\"0.85\"", area_colour(area.0))
        }
        DrawKind::PolygonEdge => "stroke=\"#3182bd\" stroke-width=\"0.6\"".into(),
        DrawKind::WallEdge => "stroke=\"#08306b\" stroke-width=\"1.4\"".into(),
        DrawKind::TileBorder => {
            "stroke=\"#e6550d\" stroke-width=\"0.8\" stroke-dasharray=\"4 3\"".into()
        }
        DrawKind::Marker => "fill=\"#d62728\"".into(),
        DrawKind::AllowedRegion => {
            "stroke=\"#31a354\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\" fill=\"#31a354\""
                .into()
        }
        DrawKind::Fragment => {
            "fill=\"#fdae6b\" fill-opacity=\"0.8\" stroke=\"#e6550d\" stroke-width=\"1\"".into()
        }
        DrawKind::Occluder => "stroke=\"#252525\" stroke-width=\"3\"".into(),
        DrawKind::SightLine => "stroke=\"#756bb1\" stroke-width=\"1.2\"".into(),
        DrawKind::ProbePath => {
            "stroke=\"#de2d26\" stroke-width=\"1.2\" stroke-dasharray=\"3 2\"".into()
        }
        DrawKind::RejectedCandidate => "fill=\"#969696\"".into(),
        DrawKind::Corridor => {
            "stroke=\"#9e9ac8\" stroke-width=\"0.5\" stroke-opacity=\"0.6\"".into()
        }
        DrawKind::Velocity => "stroke=\"#a50f15\" stroke-width=\"1\"".into(),
        DrawKind::Support => {
            "fill=\"#fec44f\" fill-opacity=\"0.6\" stroke=\"#cc4c02\" stroke-width=\"1\"".into()
        }
        DrawKind::SupportMotion => "stroke=\"#cc4c02\" stroke-width=\"2\"".into(),
    }
}

impl SvgDrawer {
    /// A drawer that frames everything drawn.
    pub fn new() -> Self {
        SvgDrawer::default()
    }

    /// Restricts the picture to a window (world metres; X and Z are used).
    pub fn with_view(mut self, view: Aabb) -> Self {
        self.view = Some(view);
        self
    }

    fn push(&mut self, kind: DrawKind, shape: Shape, points: &[Vec3]) {
        points
            .iter()
            .for_each(|point| self.bounds.add_point(*point));
        self.shapes.push((kind, shape));
    }

    /// Writes the document, `width_px` wide, with `caption` under the picture.
    pub fn finish(&self, width_px: f32, caption: &str) -> String {
        const MARGIN_PX: f32 = 10.0;
        let frame = self.view.unwrap_or(self.bounds);
        let size = frame.size();
        let (size_x, size_z) = (size.x.max(1e-3), size.z.max(1e-3));
        let scale = width_px / size_x;
        let height_px = size_z * scale;
        let to_pixels = |p: Vec3| {
            Vec2::new(
                MARGIN_PX + (p.x - frame.min.x) * scale,
                MARGIN_PX + (p.z - frame.min.z) * scale,
            )
        };
        let (total_width, total_height) = (
            width_px + 2.0 * MARGIN_PX,
            height_px + 2.0 * MARGIN_PX + 40.0,
        );
        let mut out = String::new();
        let _ = writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{total_width:.0}\" height=\"{total_height:.0}\" viewBox=\"0 0 {total_width:.0} {total_height:.0}\">"
        );
        let _ = writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
        let mut order: Vec<usize> = (0..self.shapes.len()).collect();
        order.sort_by_key(|&index| layer(self.shapes[index].0));
        for index in order {
            let (kind, shape) = &self.shapes[index];
            let style = style(*kind);
            match shape {
                Shape::Line(a, b) => {
                    let (a, b) = (to_pixels(*a), to_pixels(*b));
                    let _ = writeln!(
                        out,
                        "<line x1=\"{:.2}\" y1=\"{:.2}\" x2=\"{:.2}\" y2=\"{:.2}\" {style}/>",
                        a.x, a.y, b.x, b.y
                    );
                }
                Shape::Polygon(corners) => {
                    let points: Vec<String> = corners
                        .iter()
                        .map(|&c| {
                            let p = to_pixels(c);
                            format!("{:.2},{:.2}", p.x, p.y)
                        })
                        .collect();
                    let _ = writeln!(out, "<polygon points=\"{}\" {style}/>", points.join(" "));
                }
                Shape::Point(at) => {
                    let p = to_pixels(*at);
                    let _ = writeln!(
                        out,
                        "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"3\" {style}/>",
                        p.x, p.y
                    );
                }
            }
        }
        // Scale bar: the largest power of ten metres under a quarter of the width.
        let bar_m = 10f32.powf((size_x * 0.25).log10().floor());
        let bar_px = bar_m * scale;
        let bar_y = height_px + 2.0 * MARGIN_PX + 8.0;
        let _ = writeln!(
            out,
            "<line x1=\"{MARGIN_PX}\" y1=\"{bar_y:.1}\" x2=\"{:.1}\" y2=\"{bar_y:.1}\" stroke=\"black\" stroke-width=\"2\"/>",
            MARGIN_PX + bar_px
        );
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"11\">{bar_m} m</text>",
            MARGIN_PX + bar_px + 4.0,
            bar_y + 4.0
        );
        let _ = writeln!(
            out,
            "<text x=\"{MARGIN_PX}\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"12\">{}</text>",
            bar_y + 22.0,
            escape(caption)
        );
        let _ = writeln!(out, "</svg>");
        out
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl DebugDraw for SvgDrawer {
    fn line(&mut self, kind: DrawKind, a: Vec3, b: Vec3) {
        self.push(kind, Shape::Line(a, b), &[a, b]);
    }

    fn triangle(&mut self, kind: DrawKind, corners: [Vec3; 3]) {
        self.polygon(kind, &corners);
    }

    fn polygon(&mut self, kind: DrawKind, corners: &[Vec3]) {
        self.push(kind, Shape::Polygon(corners.to_vec()), corners);
    }

    fn point(&mut self, kind: DrawKind, at: Vec3) {
        self.push(kind, Shape::Point(at), &[at]);
    }
}
