#![no_main]
//! Fuzz target: see `modelctx_core::fuzzing::uri_template`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| modelctx_core::fuzzing::uri_template(&String::from_utf8_lossy(data)));
