//! The built-in "proving ground": spec 002's validation level, generated in code.
//!
//! Eleven test bays side by side along +Z, each an island (4 m of nothing between bays), each
//! with two sides joined only by the feature under test:
//!
//! | bay | feature | guard (r 0.4, climb 0.4, slope 45°) | r 0.3 |
//! |---|---|---|---|
//! | `door_0_7` | 0.7 m opening in a 2.5 m wall | separate | connected |
//! | `door_1_2` | 1.2 m opening | connected | connected |
//! | `step_0_3` | 0.3 m step up | connected | connected |
//! | `step_0_6` | 0.6 m step up | separate | separate |
//! | `ramp_30` | 30° ramp up 1.5 m | connected | connected |
//! | `ramp_60` | 60° ramp up 1.5 m | separate | separate |
//! | `broken_bridge` | two cliffs, bridge with a 1 m gap | separate | separate |
//! | `balcony` | balcony 3 m above the ground floor, overlapping it, reached by 27° stairs | connected (only by the stairs) | connected |
//! | `scaled_doorway` | doorway authored 1 m wide under a parent scaled 0.5 | separate | separate |
//! | `turntable` | a disc 5 m across, 0.1 m up, on its own support | connected | connected |
//! | `lift` | a floor 3 m above another, reached only by a lift car | separate (the car joins them by links, at runtime) | separate |
//!
//! The lift's car is a platform (spec 002): a slab on its own support, baked in its own
//! frame 10 m beyond its shaft (so no edge joins it to a floor) and placed in its shaft by
//! the crowd ([`ProvingGround::lift`] says where, and where its doors' links go).
//!
//! Each bay hangs under its own transform node (a translation along Z), so the level also
//! exercises ancestor chains. Bay floors are 0.2 m slabs with their top at local height 0.

use glam::{Affine3A, Vec3};

use super::graph::{InstanceDesc, NodeId, Scene};
use super::mesh::TriMesh;
use crate::geom::Aabb;
use crate::ids::SupportId;

/// One feature of the proving ground and what a correct bake must say about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Feature {
    /// Bay name (also the prefix of its instances' names).
    pub name: &'static str,
    /// What the bay tests.
    pub description: &'static str,
    /// A point on the walkable floor of one side, world metres.
    pub side_a: Vec3,
    /// A point on the walkable floor of the other side, world metres.
    pub side_b: Vec3,
    /// Whether the sides must connect for the guard (radius 0.4, height 1.8, climb 0.4,
    /// slope 45°).
    pub connects_for_guard: bool,
    /// Whether the sides must connect for the same agent with radius 0.3.
    pub connects_at_radius_0_3: bool,
}

/// The proving ground: its scene and the features with their expected answers.
#[derive(Clone, Debug)]
pub struct ProvingGround {
    /// The level geometry.
    pub scene: Scene,
    /// The features, in bay order.
    pub features: Vec<Feature>,
    /// World bounds of the balcony stairs: the only way between the balcony and the ground.
    pub stairs_bounds: Aabb,
    /// A ground-floor point under the balcony (same horizontal position as
    /// [`ProvingGround::balcony_point`], 3 m lower): the two floors overlap here (spec n5).
    pub under_balcony_point: Vec3,
    /// A point on the balcony floor.
    pub balcony_point: Vec3,
    /// The turntable bay's table: its support, its centre (world, on its top) and the
    /// turn rate the level runs it at (`Crowd::set_support_rotation`), rad/s.
    pub turntable: (SupportId, Vec3, f32),
    /// The lift bay's car and its doors.
    pub lift: Lift,
}

/// The lift bay's car: a platform going up and down its shaft between two floors
/// (`Crowd::set_platform_motion` with a shuttle between the two offsets), and the links of
/// its doors (each with a dock at its floor's offset, `Crowd::set_link_dock`).
#[derive(Clone, Debug, PartialEq)]
pub struct Lift {
    /// The car's support.
    pub support: SupportId,
    /// World minus baked coordinates of the car at the lower floor, and at the upper.
    pub lower_offset: Vec3,
    /// See `lower_offset`.
    pub upper_offset: Vec3,
    /// Seconds it stands at each floor, and takes between them.
    pub dwell_s: f32,
    /// See `dwell_s`.
    pub travel_s: f32,
    /// The doors: a link from a floor (world) to the car (its baked frame), each way, and
    /// whether that floor is the lower.
    pub doors: Vec<(Vec3, Vec3, bool)>,
    /// A point on the lower floor and one on the upper (world).
    pub floors: (Vec3, Vec3),
}

/// Gap between bays along Z, metres: wider than any agent, so bays never connect.
const BAY_GAP_M: f32 = 4.0;
/// Floor slab thickness, metres.
const SLAB_M: f32 = 0.2;
/// Wall height, metres: above every agent height the tests use.
const WALL_HEIGHT_M: f32 = 2.5;
/// Wall thickness, metres.
const WALL_THICKNESS_M: f32 = 0.2;
/// Standard bay size (X by Z), metres.
const BAY_LENGTH_M: f32 = 10.0;
const BAY_WIDTH_M: f32 = 6.0;
/// The turntable bay's table: circumradius of its sixteen-sided top, its height above
/// the floor, and its turn rate.
const TURNTABLE_RADIUS_M: f32 = 2.5;
const TURNTABLE_TOP_M: f32 = 0.1;
const TURNTABLE_RATE_RAD_S: f32 = 0.5;

struct Builder {
    scene: Scene,
    bay_name: &'static str,
    bay_node: Option<NodeId>,
    bay_offset_z: f32,
}

impl Builder {
    fn start_bay(&mut self, name: &'static str) {
        let offset = Affine3A::from_translation(Vec3::new(0.0, 0.0, self.bay_offset_z));
        self.bay_name = name;
        self.bay_node = Some(
            self.scene
                .add_node(name, None, offset)
                .expect("root nodes always insert"),
        );
    }

    fn finish_bay(&mut self, width_m: f32) {
        self.bay_offset_z += width_m + BAY_GAP_M;
    }

    /// A world point from bay-local coordinates.
    fn at(&self, x: f32, y: f32, z: f32) -> Vec3 {
        Vec3::new(x, y, z + self.bay_offset_z)
    }

    fn add(&mut self, part: &str, mesh: TriMesh, parent: Option<NodeId>) {
        let name = format!("{}/{part}", self.bay_name);
        let mesh_id = self.scene.add_mesh(TriMesh {
            name: name.clone(),
            ..mesh
        });
        let parent = parent.or(self.bay_node).expect("a bay is open");
        self.scene
            .add_instance(InstanceDesc::new(name, mesh_id).under(parent))
            .expect("mesh and node were just added");
    }

    fn solid(&mut self, part: &str, min: Vec3, max: Vec3) {
        self.add(part, TriMesh::axis_box(part, min, max), None);
    }

    /// A floor slab from `x0` to `x1` across the bay width, top at `top`.
    /// A sixteen-sided prism from the floor (y 0) up to `centre.y`, around `centre` (bay
    /// coordinates), riding on `support`.
    fn disc_on_support(&mut self, part: &str, centre: Vec3, radius_m: f32, support: SupportId) {
        const SIDES: u32 = 16;
        let mut positions = Vec::with_capacity(2 * SIDES as usize + 1);
        for level in [centre.y, 0.0] {
            for side in 0..SIDES {
                let angle = side as f32 * std::f32::consts::TAU / SIDES as f32;
                positions.push(Vec3::new(
                    centre.x + radius_m * angle.cos(),
                    level,
                    centre.z + radius_m * angle.sin(),
                ));
            }
        }
        positions.push(centre);
        let top_centre = 2 * SIDES;
        let mut triangles = Vec::new();
        for side in 0..SIDES {
            let next = (side + 1) % SIDES;
            // The top, facing up, and the rim.
            triangles.push([top_centre, next, side]);
            triangles.push([side, next, SIDES + next]);
            triangles.push([side, SIDES + next, SIDES + side]);
        }
        self.add_on_support(part, TriMesh::new("", positions, triangles), support);
    }

    /// A box (bay coordinates) riding on `support`.
    fn box_on_support(&mut self, part: &str, min: Vec3, max: Vec3, support: SupportId) {
        self.add_on_support(part, TriMesh::axis_box("", min, max), support);
    }

    /// `mesh` as a part of the open bay riding on `support`.
    fn add_on_support(&mut self, part: &str, mesh: TriMesh, support: SupportId) {
        let name = format!("{}/{part}", self.bay_name);
        let mesh_id = self.scene.add_mesh(TriMesh {
            name: name.clone(),
            ..mesh
        });
        let parent = self.bay_node.expect("a bay is open");
        self.scene
            .add_instance(
                InstanceDesc::new(name, mesh_id)
                    .under(parent)
                    .on_support(support),
            )
            .expect("mesh and node were just added");
    }

    fn slab(&mut self, part: &str, x0: f32, x1: f32, top: f32) {
        self.solid(
            part,
            Vec3::new(x0, top - SLAB_M, 0.0),
            Vec3::new(x1, top, BAY_WIDTH_M),
        );
    }

    /// A wall across the bay at `x`, with an opening of `opening_m` centred on the bay.
    fn wall_with_opening(&mut self, x: f32, opening_m: f32) {
        let half = WALL_THICKNESS_M * 0.5;
        let centre = BAY_WIDTH_M * 0.5;
        let low = Vec3::new(x - half, 0.0, 0.0);
        self.solid(
            "wall_left",
            low,
            Vec3::new(x + half, WALL_HEIGHT_M, centre - opening_m * 0.5),
        );
        let high = Vec3::new(x + half, WALL_HEIGHT_M, BAY_WIDTH_M);
        self.solid(
            "wall_right",
            Vec3::new(x - half, 0.0, centre + opening_m * 0.5),
            high,
        );
    }

    fn feature(
        &self,
        name: &'static str,
        description: &'static str,
        side_a: Vec3,
        side_b: Vec3,
        connects: (bool, bool),
    ) -> Feature {
        Feature {
            name,
            description,
            side_a,
            side_b,
            connects_for_guard: connects.0,
            connects_at_radius_0_3: connects.1,
        }
    }
}

/// Builds the proving ground.
pub fn proving_ground() -> ProvingGround {
    let mut builder = Builder {
        scene: Scene::new(),
        bay_name: "",
        bay_node: None,
        bay_offset_z: 0.0,
    };
    let mut features = Vec::new();
    let mid_z = BAY_WIDTH_M * 0.5;

    for (name, description, opening_m, connects) in [
        (
            "door_0_7",
            "0.7 m door: too narrow for the guard's 0.8 m body",
            0.7,
            (false, true),
        ),
        (
            "door_1_2",
            "1.2 m door: wide enough for the guard",
            1.2,
            (true, true),
        ),
    ] {
        builder.start_bay(name);
        builder.slab("floor", 0.0, BAY_LENGTH_M, 0.0);
        builder.wall_with_opening(BAY_LENGTH_M * 0.5, opening_m);
        let (a, b) = (builder.at(2.5, 0.0, mid_z), builder.at(7.5, 0.0, mid_z));
        features.push(builder.feature(name, description, a, b, connects));
        builder.finish_bay(BAY_WIDTH_M);
    }

    for (name, description, rise_m, connects) in [
        (
            "step_0_3",
            "0.3 m step: within the 0.4 m climb",
            0.3,
            (true, true),
        ),
        (
            "step_0_6",
            "0.6 m step: beyond the 0.4 m climb",
            0.6,
            (false, false),
        ),
    ] {
        builder.start_bay(name);
        builder.slab("low_floor", 0.0, 5.0, 0.0);
        builder.solid(
            "high_floor",
            Vec3::new(5.0, -SLAB_M, 0.0),
            Vec3::new(10.0, rise_m, BAY_WIDTH_M),
        );
        let (a, b) = (builder.at(2.5, 0.0, mid_z), builder.at(7.5, rise_m, mid_z));
        features.push(builder.feature(name, description, a, b, connects));
        builder.finish_bay(BAY_WIDTH_M);
    }

    for (name, description, angle_deg, connects) in [
        (
            "ramp_30",
            "30° ramp: within the 45° slope limit",
            30.0_f32,
            (true, true),
        ),
        (
            "ramp_60",
            "60° ramp: beyond the 45° slope limit",
            60.0_f32,
            (false, false),
        ),
    ] {
        const RISE_M: f32 = 1.5;
        let run_m = RISE_M / angle_deg.to_radians().tan();
        let (ramp_start, ramp_end) = (4.0, 4.0 + run_m);
        builder.start_bay(name);
        builder.slab("low_floor", 0.0, ramp_start, 0.0);
        let ramp = TriMesh::quad(
            "ramp",
            [
                Vec3::new(ramp_start, 0.0, 0.0),
                Vec3::new(ramp_start, 0.0, BAY_WIDTH_M),
                Vec3::new(ramp_end, RISE_M, BAY_WIDTH_M),
                Vec3::new(ramp_end, RISE_M, 0.0),
            ],
        );
        builder.add("ramp", ramp, None);
        let high_min = Vec3::new(ramp_end, RISE_M - SLAB_M, 0.0);
        builder.solid(
            "high_floor",
            high_min,
            Vec3::new(ramp_end + 4.0, RISE_M, BAY_WIDTH_M),
        );
        let (a, b) = (
            builder.at(2.0, 0.0, mid_z),
            builder.at(ramp_end + 2.0, RISE_M, mid_z),
        );
        features.push(builder.feature(name, description, a, b, connects));
        builder.finish_bay(BAY_WIDTH_M);
    }

    {
        const CLIFF_TOP_M: f32 = 3.0;
        builder.start_bay("broken_bridge");
        builder.solid(
            "cliff_a",
            Vec3::ZERO,
            Vec3::new(3.0, CLIFF_TOP_M, BAY_WIDTH_M),
        );
        builder.solid(
            "cliff_b",
            Vec3::new(8.0, 0.0, 0.0),
            Vec3::new(11.0, CLIFF_TOP_M, BAY_WIDTH_M),
        );
        let deck_low = CLIFF_TOP_M - 0.3;
        builder.solid(
            "deck_a",
            Vec3::new(3.0, deck_low, 2.0),
            Vec3::new(5.0, CLIFF_TOP_M, 4.0),
        );
        builder.solid(
            "deck_b",
            Vec3::new(6.0, deck_low, 2.0),
            Vec3::new(8.0, CLIFF_TOP_M, 4.0),
        );
        let (a, b) = (
            builder.at(1.5, CLIFF_TOP_M, mid_z),
            builder.at(9.5, CLIFF_TOP_M, mid_z),
        );
        let description = "bridge between two cliffs with a 1 m gap in its middle";
        features.push(builder.feature("broken_bridge", description, a, b, (false, false)));
        builder.finish_bay(BAY_WIDTH_M);
    }

    // The balcony: a 12 m x 16 m ground floor, a balcony slab over its back 7 m, 3 m up
    // (2.8 m of headroom below), and twenty stairs of 0.15 m rise and 0.3 m tread (27°) along
    // its left edge, 2 m wide.
    let stairs_bounds;
    let (under_balcony_point, balcony_point);
    {
        const SIZE_X_M: f32 = 12.0;
        const SIZE_Z_M: f32 = 16.0;
        const BALCONY_TOP_M: f32 = 3.0;
        const BALCONY_FROM_Z_M: f32 = 9.0;
        const STEP_COUNT: usize = 20;
        const STEP_RISE_M: f32 = BALCONY_TOP_M / STEP_COUNT as f32;
        const STEP_TREAD_M: f32 = 0.3;
        const STAIRS_WIDTH_M: f32 = 2.0;
        builder.start_bay("balcony");
        builder.solid(
            "ground",
            Vec3::new(0.0, -SLAB_M, 0.0),
            Vec3::new(SIZE_X_M, 0.0, SIZE_Z_M),
        );
        let slab_min = Vec3::new(0.0, BALCONY_TOP_M - SLAB_M, BALCONY_FROM_Z_M);
        builder.solid(
            "balcony",
            slab_min,
            Vec3::new(SIZE_X_M, BALCONY_TOP_M, SIZE_Z_M),
        );
        let stairs_start_z = BALCONY_FROM_Z_M - STEP_TREAD_M * STEP_COUNT as f32;
        for step in 0..STEP_COUNT {
            let z0 = stairs_start_z + STEP_TREAD_M * step as f32;
            let top = STEP_RISE_M * (step + 1) as f32;
            let part = format!("stair_{step:02}");
            let max = Vec3::new(STAIRS_WIDTH_M, top, z0 + STEP_TREAD_M);
            builder.solid(&part, Vec3::new(0.0, 0.0, z0), max);
        }
        stairs_bounds = Aabb {
            min: builder.at(0.0, 0.0, stairs_start_z),
            max: builder.at(STAIRS_WIDTH_M, BALCONY_TOP_M, BALCONY_FROM_Z_M),
        };
        under_balcony_point = builder.at(9.0, 0.0, 12.5);
        balcony_point = builder.at(9.0, BALCONY_TOP_M, 12.5);
        let description = "balcony over the ground floor, reached only by its stairs";
        let ground = builder.at(9.0, 0.0, 3.0);
        features.push(builder.feature("balcony", description, ground, balcony_point, (true, true)));
        builder.finish_bay(SIZE_Z_M);
    }

    {
        builder.start_bay("scaled_doorway");
        builder.slab("floor", 0.0, BAY_LENGTH_M, 0.0);
        // The frame is authored at twice the size: a 1 m doorway in a 5 m high wall, placed
        // under a node scaled 0.5, so the world doorway is 0.5 m (spec n2).
        let frame_transform = Affine3A::from_scale_rotation_translation(
            Vec3::splat(0.5),
            glam::Quat::IDENTITY,
            Vec3::new(BAY_LENGTH_M * 0.5, 0.0, mid_z),
        );
        let frame = builder
            .scene
            .add_node("scaled_doorway/frame", builder.bay_node, frame_transform)
            .expect("bay node exists");
        let (half_thickness, height) = (0.2, 5.0);
        let left = TriMesh::axis_box(
            "",
            Vec3::new(-half_thickness, 0.0, -6.5),
            Vec3::new(half_thickness, height, -0.5),
        );
        let right = TriMesh::axis_box(
            "",
            Vec3::new(-half_thickness, 0.0, 0.5),
            Vec3::new(half_thickness, height, 6.5),
        );
        builder.add("wall_left", left, Some(frame));
        builder.add("wall_right", right, Some(frame));
        let (a, b) = (builder.at(2.5, 0.0, mid_z), builder.at(7.5, 0.0, mid_z));
        let description = "doorway authored 1 m wide under a parent scaled 0.5: 0.5 m in the world";
        features.push(builder.feature("scaled_doorway", description, a, b, (false, false)));
        builder.finish_bay(BAY_WIDTH_M);
    }

    let turntable;
    {
        // A disc 5 m across, 0.1 m up (a step well within the climb), on its own support:
        // the crowd turns it about its centre (spec 004's rotating support).
        builder.start_bay("turntable");
        builder.slab("floor", 0.0, BAY_LENGTH_M, 0.0);
        let support = builder.scene.support("turntable");
        let centre = Vec3::new(BAY_LENGTH_M * 0.5, TURNTABLE_TOP_M, mid_z);
        builder.disc_on_support("table", centre, TURNTABLE_RADIUS_M, support);
        turntable = (
            support,
            builder.at(centre.x, centre.y, centre.z),
            TURNTABLE_RATE_RAD_S,
        );
        let (a, b) = (builder.at(1.0, 0.0, mid_z), builder.at(9.0, 0.0, mid_z));
        let description = "a turntable 5 m across, 0.1 m up, turning at 0.5 rad/s";
        features.push(builder.feature("turntable", description, a, b, (true, true)));
        builder.finish_bay(BAY_WIDTH_M);
    }

    let lift;
    {
        // A lower floor (x 0 to 4), an upper one 3 m up (x 8.4 to 12.4), and between them
        // the shaft of a 4 x 4 m car (x 4.2 to 8.2, z 1 to 5), baked in its own frame 10 m
        // along z, beyond the bay's far side (the last bay's: nothing is there), and placed
        // by the crowd in its shaft at either floor's height. Two doors at each floor,
        // links 0.9 m in from the floor's edge to 0.9 m in from the car's.
        const UPPER_M: f32 = 3.0;
        builder.start_bay("lift");
        builder.slab("lower_floor", 0.0, 4.0, 0.0);
        builder.solid(
            "upper_floor",
            Vec3::new(8.4, -SLAB_M, 0.0),
            Vec3::new(12.4, UPPER_M, BAY_WIDTH_M),
        );
        let support = builder.scene.support("lift");
        builder.box_on_support(
            "car",
            Vec3::new(4.2, -SLAB_M, 11.0),
            Vec3::new(8.2, 0.0, 15.0),
            support,
        );
        let lower_offset = Vec3::new(0.0, 0.0, -10.0);
        let upper_offset = lower_offset + Vec3::new(0.0, UPPER_M, 0.0);
        let mut doors = Vec::new();
        for z in [2.3, 3.7] {
            let car = |x: f32| builder.at(x, 0.0, z + 10.0);
            doors.push((builder.at(3.1, 0.0, z), car(5.1), true));
            doors.push((car(7.3), builder.at(9.3, UPPER_M, z), false));
        }
        let (a, b) = (
            builder.at(1.5, 0.0, mid_z),
            builder.at(11.0, UPPER_M, mid_z),
        );
        lift = Lift {
            support,
            lower_offset,
            upper_offset,
            dwell_s: 4.0,
            travel_s: 3.0,
            doors,
            floors: (a, b),
        };
        let description = "a floor 3 m up, reached only by a lift car (links, at runtime)";
        features.push(builder.feature("lift", description, a, b, (false, false)));
        builder.finish_bay(BAY_WIDTH_M);
    }

    ProvingGround {
        scene: builder.scene,
        features,
        stairs_bounds,
        under_balcony_point,
        balcony_point,
        turntable,
        lift,
    }
}
