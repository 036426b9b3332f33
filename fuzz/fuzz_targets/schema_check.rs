#![no_main]
//! Fuzz target: see `modelctx_core::fuzzing::schema_check`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| modelctx_core::fuzzing::schema_check(data));
