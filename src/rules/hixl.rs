//! The HIXL rules, as pure functions (filled in by the HIXL front end).
