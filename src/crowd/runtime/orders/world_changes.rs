//! What a game tells the crowd about its world between steps: the motion of moving supports
//! (belts, turntables) and platforms, and the windows and docks of off-mesh links.
//!
//! Stage: crowd runtime, between steps. Every call checks its ids and values first and
//! changes nothing when it refuses (a typed [`CrowdError`] naming the value). The next step
//! reads what was set: the supports' carry, the platforms' frames, which links are open.

use glam::Vec3;

use super::commands::{check_point, out_of_range};
use crate::crowd::events::CrowdError;
use crate::crowd::log::LogRecord;
use crate::crowd::runtime::Crowd;
use crate::crowd::supports::support::SupportMotion;
use crate::geom::limits;

impl Crowd {
    /// Sets the surface velocity of moving support `support` (a conveyor belt's `u`, m/s):
    /// from the next step, a body standing on a polygon of its layer (`SupportId(n)` is
    /// support layer `n + 1`) is carried at `u` besides its own velocity relative to the
    /// belt (spec 004: `u_support + v`); walkers walk at their speed relative to the belt,
    /// holds walk against it to stay on their pose (spec 001's h3). `Vec3::ZERO` stops
    /// the belt. Refused by value: a non-finite velocity, a support beyond the layers.
    pub fn set_support_velocity(
        &mut self,
        support: crate::ids::SupportId,
        velocity: Vec3,
    ) -> Result<(), CrowdError> {
        if !velocity.is_finite() {
            return Err(CrowdError::NotFinite {
                what: "support velocity",
                value: velocity,
            });
        }
        out_of_range(
            "support velocity (m/s)",
            velocity,
            limits::SPEED_MAX_MPS,
            "1e3 m/s",
        )?;
        let layer = support.0 as usize + 1;
        if layer > usize::from(u16::MAX) {
            return Err(CrowdError::UnknownSupport(support));
        }
        if velocity != Vec3::ZERO && self.platform_motion(support).is_some() {
            return Err(CrowdError::PlatformWithSurfaceMotion { support });
        }
        self.log(|| LogRecord::SetSupportVelocity { support, velocity });
        self.store_support_motion(layer, SupportMotion::belt(velocity));
        Ok(())
    }

    /// Turns moving support `support` about Up through `centre` at `angular_velocity_rad_s`
    /// (a turntable; positive takes +x towards -z): from the next step a body on a polygon
    /// of its layer is carried round the centre, its velocity relative to the table turning
    /// with it (spec 004's wCarry: keeping a local velocity costs no acceleration), goals
    /// on the table ride it, and avoidance sees neighbours in the table's frame. The
    /// table's polygons stay where they were baked: its footprint must be the same at every
    /// angle (a disc; the baked polygon approximates it). `0.0` stops it. Refused by value:
    /// a non-finite centre or rate, a support beyond the layers.
    pub fn set_support_rotation(
        &mut self,
        support: crate::ids::SupportId,
        centre: Vec3,
        angular_velocity_rad_s: f32,
    ) -> Result<(), CrowdError> {
        check_point("turntable centre", centre)?;
        if !angular_velocity_rad_s.is_finite() {
            return Err(CrowdError::NotFinite {
                what: "turntable angular velocity (rad/s, in x)",
                value: Vec3::new(angular_velocity_rad_s, 0.0, 0.0),
            });
        }
        out_of_range(
            "turntable angular velocity (rad/s)",
            Vec3::new(angular_velocity_rad_s, 0.0, 0.0),
            limits::ANGULAR_SPEED_MAX_RAD_S,
            "100 rad/s",
        )?;
        let layer = support.0 as usize + 1;
        if layer > usize::from(u16::MAX) {
            return Err(CrowdError::UnknownSupport(support));
        }
        if angular_velocity_rad_s != 0.0 && self.platform_motion(support).is_some() {
            return Err(CrowdError::PlatformWithSurfaceMotion { support });
        }
        self.log(|| LogRecord::SetSupportRotation {
            support,
            centre,
            angular_velocity_rad_s,
        });
        self.store_support_motion(
            layer,
            SupportMotion::turntable(centre, angular_velocity_rad_s),
        );
        Ok(())
    }

    /// Sets moving support `support` going as `motion`: without a turn rate a belt
    /// ([`Crowd::set_support_velocity`] with its velocity), with one a turntable turning
    /// about the motion's still point, where its velocity is zero
    /// ([`Crowd::set_support_rotation`]; the same field the motion describes from its
    /// pivot). Refused by value: non-finite values, a support beyond the layers, a turning
    /// motion that also moves vertically.
    pub fn set_support_motion(
        &mut self,
        support: crate::ids::SupportId,
        motion: SupportMotion,
    ) -> Result<(), CrowdError> {
        // Each part named as given (the delegated calls would see derived values).
        for (what, value) in [
            ("support motion velocity", motion.velocity),
            ("support motion pivot", motion.pivot),
            (
                "support motion turn rate (rad/s, in x)",
                Vec3::new(motion.angular_velocity_rad_s, 0.0, 0.0),
            ),
        ] {
            if !value.is_finite() {
                return Err(CrowdError::NotFinite { what, value });
            }
        }
        let Some(still) = motion.still_point() else {
            return self.set_support_velocity(support, motion.velocity);
        };
        if motion.velocity.y != 0.0 {
            return Err(CrowdError::UnsupportedSupportMotion {
                support,
                turn_rad_s: motion.angular_velocity_rad_s,
                vertical_mps: motion.velocity.y,
            });
        }
        let centre = Vec3::new(still.x, motion.pivot.y, still.y);
        self.set_support_rotation(support, centre, motion.angular_velocity_rad_s)
    }

    /// Lets link `link` be crossed only within `window` (`None`: whenever it is open), a
    /// connection between a platform and the ground that holds only while the two are
    /// aligned: a lift's door at a floor, a ferry's ramp at a dock. An agent whose path
    /// crosses the link waits at its entry, on its own side, until a crossing started now
    /// would land before the window closes, then crosses; the link stays in its paths
    /// meanwhile (no new search). A window shorter than the crossing (at the agent's cruising
    /// speed) never lets it start: the agent waits until its order is cancelled or fails by
    /// its deadline. Refused by value: a link the mesh does not have, a window that cannot
    /// open ([`ConnectionWindow::problem`](crate::crowd::supports::connection::ConnectionWindow::problem)).
    pub fn set_link_window(
        &mut self,
        link: crate::mesh::LinkId,
        window: Option<crate::crowd::supports::connection::ConnectionWindow>,
    ) -> Result<(), CrowdError> {
        if self.snapshot.link(link).is_none() {
            return Err(CrowdError::UnknownLink(link));
        }
        if let Some(problem) = window
            .as_ref()
            .and_then(crate::crowd::supports::connection::ConnectionWindow::problem)
        {
            return Err(CrowdError::BadConnectionWindow {
                link,
                window: window.expect("a window has a problem"),
                problem,
            });
        }
        self.log(|| LogRecord::SetLinkWindow { link, window });
        let at = self.link_windows.binary_search_by_key(&link, |&(id, _)| id);
        match (at, window) {
            (Ok(at), Some(window)) => self.link_windows[at].1 = window,
            (Ok(at), None) => {
                self.link_windows.remove(at);
            }
            (Err(at), Some(window)) => self.link_windows.insert(at, (link, window)),
            (Err(_), None) => {}
        }
        Ok(())
    }

    /// The window link `link` may be crossed in (`None`: whenever it is open).
    pub fn link_window(
        &self,
        link: crate::mesh::LinkId,
    ) -> Option<crate::crowd::supports::connection::ConnectionWindow> {
        self.link_windows
            .binary_search_by_key(&link, |&(id, _)| id)
            .ok()
            .map(|at| self.link_windows[at].1)
    }

    /// Makes support `support` a platform whose footprint moves as `motion` (`None`: no
    /// longer a platform; its polygons stand where they were baked). A platform's polygons
    /// are baked in its own frame, away from the ground, and placed in the world by its
    /// pose, moved and turned about Up (`platform.rs`): agents on it keep their feet and
    /// corridors in its frame, walk it as still ground, ride it, and leave it only by
    /// links, which join it to the ground while it is at their dock
    /// ([`Crowd::set_link_dock`]) and in their window ([`Crowd::set_link_window`]). A host
    /// placing the platform itself sets a
    /// [`PlatformMotion::Placed`](crate::crowd::supports::platform::PlatformMotion::Placed) each step it moves; a
    /// [`PlatformMotion::Shuttle`](crate::crowd::supports::platform::PlatformMotion::Shuttle) goes by itself. Takes
    /// effect at once: world positions read now are placed by it. Refused by value: a
    /// motion that cannot be one, a support beyond the layers, a support that is a belt or
    /// a turntable.
    pub fn set_platform_motion(
        &mut self,
        support: crate::ids::SupportId,
        motion: Option<crate::crowd::supports::platform::PlatformMotion>,
    ) -> Result<(), CrowdError> {
        if let Some(problem) = motion
            .as_ref()
            .and_then(crate::crowd::supports::platform::PlatformMotion::problem)
        {
            return Err(CrowdError::BadPlatformMotion {
                support,
                motion: motion.expect("a motion has a problem"),
                problem,
            });
        }
        let layer = support.0 as usize + 1;
        if layer > usize::from(u16::MAX) {
            return Err(CrowdError::UnknownSupport(support));
        }
        if !self.support_motion(support).is_still() {
            return Err(CrowdError::PlatformWithSurfaceMotion { support });
        }
        self.log(|| LogRecord::SetPlatformMotion { support, motion });
        let layer = layer as u16;
        let at = self
            .platforms
            .binary_search_by_key(&layer, |platform| platform.layer);
        let platform =
            motion.map(|motion| crate::crowd::supports::platform::Platform { layer, motion });
        match (at, platform) {
            (Ok(at), Some(platform)) => self.platforms[at] = platform,
            (Ok(at), None) => {
                self.platforms.remove(at);
            }
            (Err(at), Some(platform)) => self.platforms.insert(at, platform),
            (Err(_), None) => {}
        }
        Ok(())
    }

    /// The motion of platform `support` (`None`: not a platform).
    pub fn platform_motion(
        &self,
        support: crate::ids::SupportId,
    ) -> Option<crate::crowd::supports::platform::PlatformMotion> {
        self.platform_on_layer(support.0.checked_add(1)?)
            .map(|platform| platform.motion)
    }

    /// Where platform `support` stands now: the pose that places its polygons in the
    /// world (the identity for a support that is not a platform).
    pub fn platform_pose(
        &self,
        support: crate::ids::SupportId,
    ) -> crate::crowd::supports::platform::PlatformPose {
        self.frame_pose(support.0.saturating_add(1))
    }

    /// Lets link `link` join its two sides only while platform `dock.support` stands at
    /// `dock.pose`: the link's end on the platform within `dock.tolerance_m` of where that
    /// pose puts it (`None`: always): a ferry's ramp at its dock, a lift's door at its
    /// floor. A dock on a support that is not (yet) a platform is read against the support
    /// standing where it was baked. A crossing starts only in contact, and each of its
    /// steps checks it again: an agent whose crossing loses it goes back to the entry and
    /// waits there, on its own side, for the next contact (with a window,
    /// [`Crowd::set_link_window`], a crossing starts only if it lands before the window
    /// closes, so a window within the platform's stop keeps every crossing whole). The link
    /// stays in paths meanwhile. Refused by value: a link the mesh does not have, a dock
    /// that cannot be one.
    pub fn set_link_dock(
        &mut self,
        link: crate::mesh::LinkId,
        dock: Option<crate::crowd::supports::platform::LinkDock>,
    ) -> Result<(), CrowdError> {
        if self.snapshot.link(link).is_none() {
            return Err(CrowdError::UnknownLink(link));
        }
        if let Some(problem) = dock
            .as_ref()
            .and_then(crate::crowd::supports::platform::LinkDock::problem)
        {
            return Err(CrowdError::BadLinkDock {
                link,
                dock: dock.expect("a dock has a problem"),
                problem,
            });
        }
        self.log(|| LogRecord::SetLinkDock { link, dock });
        let at = self.link_docks.binary_search_by_key(&link, |&(id, _)| id);
        match (at, dock) {
            (Ok(at), Some(dock)) => self.link_docks[at].1 = dock,
            (Ok(at), None) => {
                self.link_docks.remove(at);
            }
            (Err(at), Some(dock)) => self.link_docks.insert(at, (link, dock)),
            (Err(_), None) => {}
        }
        Ok(())
    }

    /// The dock of link `link` (`None`: it joins its sides whenever it is open).
    pub fn link_dock(
        &self,
        link: crate::mesh::LinkId,
    ) -> Option<crate::crowd::supports::platform::LinkDock> {
        self.link_docks
            .binary_search_by_key(&link, |&(id, _)| id)
            .ok()
            .map(|at| self.link_docks[at].1)
    }

    /// Whether link `link`'s dock (if any) holds at frame `frame`: the link's end on the
    /// platform, placed by the platform's pose then and by the dock's, within the
    /// tolerance.
    pub(crate) fn link_in_contact(&self, link: crate::mesh::LinkId, frame: u64) -> bool {
        let Some(dock) = self.link_dock(link) else {
            return true;
        };
        let layer = dock.support.0.saturating_add(1);
        let pose = self.platform_on_layer(layer).map_or(
            crate::crowd::supports::platform::PlatformPose::IDENTITY,
            |platform| platform.motion.pose_at(frame),
        );
        let Some(link) = self.snapshot.link(link) else {
            return false;
        };
        // The end on the platform (the end, if neither is attached to it).
        let on_platform = |polygon: Option<crate::mesh::PolyRef>| {
            polygon.and_then(|polygon| self.snapshot.support_layer(polygon))
                == u16::try_from(layer).ok()
        };
        let end = if on_platform(link.start_polygon) && !on_platform(link.end_polygon) {
            link.desc.start
        } else {
            link.desc.end
        };
        pose.distance_of(end, &dock.pose) <= dock.tolerance_m
    }

    fn store_support_motion(&mut self, layer: usize, motion: SupportMotion) {
        if self.support_motions.len() <= layer {
            self.support_motions.resize(layer + 1, SupportMotion::STILL);
        }
        self.support_motions[layer] = motion;
    }

    /// The surface velocity of moving support `support` as a belt (zero unless set; a
    /// turntable's is zero at its centre: see [`Crowd::support_motion`]).
    pub fn support_velocity(&self, support: crate::ids::SupportId) -> Vec3 {
        self.support_motion(support).velocity
    }

    /// The motion of moving support `support` ([`SupportMotion::STILL`] unless set).
    pub fn support_motion(&self, support: crate::ids::SupportId) -> SupportMotion {
        self.support_motions
            .get(support.0 as usize + 1)
            .copied()
            .unwrap_or(SupportMotion::STILL)
    }
}
