//! The HIXL front end (`hixl::Hixl` members and the `HixlCS*` C API).
