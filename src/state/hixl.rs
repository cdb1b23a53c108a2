//! Per-instance state of `hixl::Hixl` objects, keyed by the object's address.

/// All HIXL instances regcheck has seen (filled in by the HIXL front end).
#[derive(Debug, Default)]
pub struct HixlState {}
