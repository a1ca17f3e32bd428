//! The SSE splitter of the gateway's HTTP front (`toolgate::fuzzing::sse_splitting`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| toolgate::fuzzing::sse_splitting(data));
