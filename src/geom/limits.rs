//! The physical ranges every value entering waymark must lie in.
//!
//! Stage: base, read by every boundary that takes a value from outside (the crowd's calls,
//! mesh and save decoding, the bake configuration, the CLI's files). Inputs: none; these
//! are constants. A value outside its range is refused with an error naming the field, the
//! value and the limit, never clamped: a game that sends a belt speed of 3e38 m/s has a bug
//! it wants to hear about.
//!
//! Why these numbers: positions are `f32` metres, whose spacing at 100 km is 8 mm, about
//! what a walker moves in a tenth of a frame: beyond that a crowd's steps round away. The
//! other limits are a hundred times what a game needs (a sprinting human runs at 10 m/s, a
//! fast fairground ride turns at 2 rad/s), so no real input meets them, and every product
//! of two of them stays far inside `f32` (speed x horizon x neighbours never overflows).

/// Largest absolute value of any world coordinate, metres: positions, targets, pivots,
/// mesh vertices and bounds.
pub const COORDINATE_MAX_M: f32 = 1.0e5;

/// Largest speed anything moves at, metres per second: agents' speed limits, requested
/// velocities, belts, platforms.
pub const SPEED_MAX_MPS: f32 = 1.0e3;

/// Largest acceleration limit of an agent, metres per second squared.
pub const ACCELERATION_MAX_MPS2: f32 = 1.0e4;

/// Largest turn rate of a turntable or platform, radians per second.
pub const ANGULAR_SPEED_MAX_RAD_S: f32 = 100.0;

/// Largest size of a body: an agent's radius or height, metres.
pub const BODY_SIZE_MAX_M: f32 = 100.0;

/// Largest duration any setting or order is given in, seconds (deadlines, horizons, hold
/// timers): a day.
pub const DURATION_MAX_S: f32 = 86_400.0;

/// Largest input file read, bytes (levels, meshes, saves, scenarios, CSV): 256 MiB, an
/// OBJ of some three million triangles (the reference levels are under 1 MiB). A path that
/// names an endless stream (a pipe, a device) is read to this size and refused, never
/// until memory runs out.
pub const INPUT_FILE_BYTES_MAX: u64 = 256 << 20;

/// Most vertices an OBJ file may declare (`v` lines): 16.7 million, which is 64 bytes of
/// parsed and transformed data each, about 1 GiB; real levels hold well under a million.
pub const OBJ_VERTICES_MAX: usize = 1 << 24;

/// Most triangles a scene may hand to the bake, read from files and multiplied by
/// instancing: 16.7 million (the reference levels have 10-50 thousand). Instancing is how a
/// small file asks for unbounded work (a million instances of a large mesh), so the count
/// is checked before each instance's triangles are written out.
pub const TRIANGLES_MAX: usize = 1 << 24;

/// The whole content of the file at `path`, refused with an `InvalidData` error naming the
/// limit when it is longer than [`INPUT_FILE_BYTES_MAX`] (a regular file by its length,
/// before reading; a stream once that much has been read).
pub fn read_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let too_long = |length: u64| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} is {length} bytes or more, over the input limit of {INPUT_FILE_BYTES_MAX} \
                 bytes (INPUT_FILE_BYTES_MAX)",
                path.display()
            ),
        )
    };
    let length = file.metadata()?.len();
    if length > INPUT_FILE_BYTES_MAX {
        return Err(too_long(length));
    }
    let mut bytes = Vec::with_capacity(length as usize);
    file.take(INPUT_FILE_BYTES_MAX + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > INPUT_FILE_BYTES_MAX {
        return Err(too_long(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read_file`] as UTF-8 text (`InvalidData` naming the path if it is not).
pub fn read_text_file(path: &std::path::Path) -> std::io::Result<String> {
    String::from_utf8(read_file(path)?).map_err(|error| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} is not UTF-8 text (byte {})",
                path.display(),
                error.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Whether `value` is finite and its magnitude at most `limit`.
#[inline]
pub fn within(value: f32, limit: f32) -> bool {
    value.is_finite() && value.abs() <= limit
}

/// Whether every component of `value` is finite with magnitude at most `limit`.
#[inline]
pub fn within_each(value: glam::Vec3, limit: f32) -> bool {
    within(value.x, limit) && within(value.y, limit) && within(value.z, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_refuses_non_finite_and_past_the_limit() {
        assert!(within(-COORDINATE_MAX_M, COORDINATE_MAX_M));
        assert!(!within(COORDINATE_MAX_M * 1.01, COORDINATE_MAX_M));
        assert!(!within(f32::NAN, COORDINATE_MAX_M));
        assert!(!within(f32::INFINITY, f32::INFINITY));
        assert!(within_each(glam::Vec3::new(1.0, -2.0, 3.0), 3.0));
        assert!(!within_each(glam::Vec3::new(1.0, -2.0, 3.5), 3.0));
    }

    #[test]
    fn the_products_the_passes_form_stay_finite() {
        // speed x horizon x coordinate (the largest terms of an ORCA half-plane) and
        // speed squared x turn rate (a carried frame's terms) are far from f32::MAX.
        let worst = SPEED_MAX_MPS * DURATION_MAX_S * COORDINATE_MAX_M * ANGULAR_SPEED_MAX_RAD_S;
        assert!(worst.is_finite() && worst < 1e20);
    }
}
