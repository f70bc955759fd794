//! A [`Picture`] written as an SVG document: the shapes in layer order, a scale bar and a
//! caption.

use std::fmt::Write;

use super::picture::{MARGIN_PX, POINT_RADIUS_PX, Picture, Shape, Style, style};

/// The SVG attributes of a style.
fn attributes(style: Style) -> String {
    let mut out = String::new();
    match style.fill {
        Some((colour, opacity)) => {
            let _ = write!(out, "fill=\"{}\"", colour.hex());
            if opacity < 1.0 {
                let _ = write!(out, " fill-opacity=\"{opacity}\"");
            }
        }
        None => out.push_str("fill=\"none\""),
    }
    if let Some(stroke) = style.stroke {
        let _ = write!(
            out,
            " stroke=\"{}\" stroke-width=\"{}\"",
            stroke.colour.hex(),
            stroke.width_px
        );
        if stroke.opacity < 1.0 {
            let _ = write!(out, " stroke-opacity=\"{}\"", stroke.opacity);
        }
        if let Some((on, off)) = stroke.dash_px {
            let _ = write!(out, " stroke-dasharray=\"{on} {off}\"");
        }
    }
    out
}

impl Picture {
    /// The picture as an SVG document, `width_px` wide, with `caption` under it.
    pub fn to_svg(&self, width_px: f32, caption: &str) -> String {
        let (scale, height_px) = self.scale(width_px);
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
        for (kind, shape) in self.in_layer_order() {
            let style = style(*kind);
            match shape {
                Shape::Line(a, b) => {
                    let (a, b) = (self.to_pixels(scale, *a), self.to_pixels(scale, *b));
                    // A line is its stroke; a kind filled for points only leaves it unfilled.
                    let style = attributes(Style {
                        fill: None,
                        ..style
                    });
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
                            let p = self.to_pixels(scale, c);
                            format!("{:.2},{:.2}", p.x, p.y)
                        })
                        .collect();
                    let _ = writeln!(
                        out,
                        "<polygon points=\"{}\" {}/>",
                        points.join(" "),
                        attributes(style)
                    );
                }
                Shape::Point(at) => {
                    let p = self.to_pixels(scale, *at);
                    let _ = writeln!(
                        out,
                        "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"{POINT_RADIUS_PX}\" {}/>",
                        p.x,
                        p.y,
                        attributes(style)
                    );
                }
            }
        }
        let bar_m = self.scale_bar_m();
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
