//! The `hixl::Hixl` members (Itanium-mangled names) and the `HixlCS*` C API.
