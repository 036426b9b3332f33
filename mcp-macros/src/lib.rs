//! Procedural macros of the `mcp` SDK.
//!
//! The attribute macros (`#[tool]`, `#[resource]`, `#[prompt]`) land with the macro-layer issue;
//! this crate already exists so that the facade's paths are stable.
#![warn(missing_docs)]
