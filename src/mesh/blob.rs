//! The `.wmnav` file: baked tiles as bytes (written as the format lands).
