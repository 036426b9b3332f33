//! client placeholder
