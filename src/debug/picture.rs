//! A top-down picture: what [`DebugDraw`] primitives become before they are written as an
//! SVG ([`Picture::to_svg`]) or rasterised ([`Picture::to_raster`]). X runs to the right and
//! Z downwards; primitives keep world metres and are projected when written, layer by layer
//! in a fixed order (input, polygons, edges, walls, tile borders, markers), each kind with
//! one [`Style`] so every backend shows it alike.

use glam::Vec3;

use super::{DebugDraw, DrawKind};
use crate::geom::Aabb;

/// A primitive in world metres.
pub(super) enum Shape {
    Line(Vec3, Vec3),
    Polygon(Vec<Vec3>),
    Point(Vec3),
}

/// An sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// How a kind of primitive is painted: a fill (colour and opacity) for areas and points, a
/// stroke for lines and outlines, in pixels of the written picture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Style {
    /// Fill colour and opacity (0 to 1).
    pub fill: Option<(Rgb, f32)>,
    /// Stroke colour, opacity, width (px) and dash (on and off lengths, px).
    pub stroke: Option<Stroke>,
}

/// A line's paint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stroke {
    /// Colour.
    pub colour: Rgb,
    /// Opacity, 0 to 1.
    pub opacity: f32,
    /// Width, px.
    pub width_px: f32,
    /// Dash on and off lengths, px; solid without.
    pub dash_px: Option<(f32, f32)>,
}

const fn fill(colour: Rgb, opacity: f32) -> Style {
    Style {
        fill: Some((colour, opacity)),
        stroke: None,
    }
}

const fn stroke(colour: Rgb, width_px: f32) -> Stroke {
    Stroke {
        colour,
        opacity: 1.0,
        width_px,
        dash_px: None,
    }
}

const fn line(stroke: Stroke) -> Style {
    Style {
        fill: None,
        stroke: Some(stroke),
    }
}

/// The colour of a polygon of area `area`.
pub fn area_colour(area: u8) -> Rgb {
    const PALETTE: [Rgb; 8] = [
        Rgb(0x9e, 0xca, 0xe1),
        Rgb(0x74, 0xc4, 0x76),
        Rgb(0x6b, 0xae, 0xd6),
        Rgb(0xfd, 0x8d, 0x3c),
        Rgb(0xc7, 0xe9, 0xc0),
        Rgb(0xfd, 0xd0, 0xa2),
        Rgb(0xbc, 0xbd, 0xdc),
        Rgb(0xfa, 0x9f, 0xb5),
    ];
    PALETTE[usize::from(area) % PALETTE.len()]
}

/// How `kind` is painted.
pub fn style(kind: DrawKind) -> Style {
    let orange = Rgb(0xe6, 0x55, 0x0d);
    match kind {
        DrawKind::InputUnwalkable => fill(Rgb(0xbd, 0xbd, 0xbd), 1.0),
        DrawKind::InputWalkable => fill(Rgb(0xe8, 0xe8, 0xe8), 1.0),
        DrawKind::Polygon(area) => fill(area_colour(area.0), 0.85),
        DrawKind::PolygonEdge => line(stroke(Rgb(0x31, 0x82, 0xbd), 0.6)),
        DrawKind::WallEdge => line(stroke(Rgb(0x08, 0x30, 0x6b), 1.4)),
        DrawKind::TileBorder => line(Stroke {
            dash_px: Some((4.0, 3.0)),
            ..stroke(orange, 0.8)
        }),
        DrawKind::Marker => fill(Rgb(0xd6, 0x27, 0x28), 1.0),
        DrawKind::AllowedRegion => Style {
            fill: Some((Rgb(0x31, 0xa3, 0x54), 1.0)),
            stroke: Some(Stroke {
                dash_px: Some((6.0, 3.0)),
                ..stroke(Rgb(0x31, 0xa3, 0x54), 1.5)
            }),
        },
        DrawKind::Fragment => Style {
            fill: Some((Rgb(0xfd, 0xae, 0x6b), 0.8)),
            stroke: Some(stroke(orange, 1.0)),
        },
        DrawKind::Occluder => line(stroke(Rgb(0x25, 0x25, 0x25), 3.0)),
        DrawKind::SightLine => line(stroke(Rgb(0x75, 0x6b, 0xb1), 1.2)),
        DrawKind::ProbePath => line(Stroke {
            dash_px: Some((3.0, 2.0)),
            ..stroke(Rgb(0xde, 0x2d, 0x26), 1.2)
        }),
        DrawKind::RejectedCandidate => fill(Rgb(0x96, 0x96, 0x96), 1.0),
        DrawKind::Corridor => line(Stroke {
            opacity: 0.6,
            ..stroke(Rgb(0x9e, 0x9a, 0xc8), 0.5)
        }),
        DrawKind::Velocity => line(stroke(Rgb(0xa5, 0x0f, 0x15), 1.0)),
        DrawKind::Support => Style {
            fill: Some((Rgb(0xfe, 0xc4, 0x4f), 0.6)),
            stroke: Some(stroke(Rgb(0xcc, 0x4c, 0x02), 1.0)),
        },
        DrawKind::SupportMotion => line(stroke(Rgb(0xcc, 0x4c, 0x02), 2.0)),
    }
}

/// Drawing order: higher layers over lower ones.
fn layer(kind: DrawKind) -> u8 {
    match kind {
        DrawKind::InputUnwalkable | DrawKind::InputWalkable => 0,
        DrawKind::Polygon(_) | DrawKind::AllowedRegion | DrawKind::Fragment => 1,
        DrawKind::PolygonEdge | DrawKind::Support => 2,
        DrawKind::WallEdge => 3,
        DrawKind::TileBorder
        | DrawKind::Occluder
        | DrawKind::SightLine
        | DrawKind::ProbePath
        | DrawKind::Corridor
        | DrawKind::Velocity
        | DrawKind::SupportMotion => 4,
        DrawKind::Marker | DrawKind::RejectedCandidate => 5,
    }
}

/// Radius of a point marker, px.
pub const POINT_RADIUS_PX: f32 = 3.0;
/// Margin around the picture, px.
pub const MARGIN_PX: f32 = 10.0;

/// Collects primitives for a top-down picture.
#[derive(Default)]
pub struct Picture {
    pub(super) shapes: Vec<(DrawKind, Shape)>,
    bounds: Aabb,
    view: Option<Aabb>,
}

impl Picture {
    /// A picture that frames everything drawn.
    pub fn new() -> Self {
        Picture::default()
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

    /// The window shown: the view if one was set, else everything drawn.
    pub(super) fn frame(&self) -> Aabb {
        self.view.unwrap_or(self.bounds)
    }

    /// Pixels per metre and the picture's height (margins excluded) for `width_px`.
    pub(super) fn scale(&self, width_px: f32) -> (f32, f32) {
        let size = self.frame().size();
        let scale = width_px / size.x.max(1e-3);
        (scale, size.z.max(1e-3) * scale)
    }

    /// Where world point `point` lands, px from the top left (margin included).
    pub(super) fn to_pixels(&self, scale: f32, point: Vec3) -> glam::Vec2 {
        let frame = self.frame();
        glam::Vec2::new(
            MARGIN_PX + (point.x - frame.min.x) * scale,
            MARGIN_PX + (point.z - frame.min.z) * scale,
        )
    }

    /// The shapes in drawing order (stable within a layer).
    pub(super) fn in_layer_order(&self) -> impl Iterator<Item = &(DrawKind, Shape)> {
        let mut order: Vec<usize> = (0..self.shapes.len()).collect();
        order.sort_by_key(|&index| layer(self.shapes[index].0));
        order.into_iter().map(|index| &self.shapes[index])
    }

    /// The scale bar's length, metres: the largest power of ten under a quarter of the
    /// frame's width.
    pub fn scale_bar_m(&self) -> f32 {
        10f32.powf((self.frame().size().x.max(1e-3) * 0.25).log10().floor())
    }
}

impl DebugDraw for Picture {
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
