#![no_main]
//! Fuzz target: see `modelctx_core::fuzzing::decode_message`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| modelctx_core::fuzzing::decode_message(data));
