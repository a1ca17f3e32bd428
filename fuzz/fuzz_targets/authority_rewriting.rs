//! The unix socket's HPACK `:authority` rewriter (`toolgate::fuzzing::authority_rewriting`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| toolgate::fuzzing::authority_rewriting(data));
