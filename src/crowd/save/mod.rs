//! How the crowd's own types are saved: each lane value, component, event and interaction
//! state written and read through the codec.
//!
//! Stage: crowd, save and restore (the whole-crowd format and the calls live with the
//! runtime). Invariant: every type's least encoded size is at least its `MIN_BYTES`, so a
//! count read from a save is checked against the bytes left before anything is allocated.

pub(crate) mod interaction;
pub(crate) mod types;
