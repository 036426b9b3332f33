#![no_main]
//! Fuzz target: see `modelctx_core::fuzzing::http_headers`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| modelctx_core::fuzzing::http_headers(data));
