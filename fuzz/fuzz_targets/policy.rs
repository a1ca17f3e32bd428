//! The policy loader: Cedar text with toolgate's annotations (`@id`, `@outcome`, `@reason`,
//! `@rewrite` patches) from arbitrary bytes: never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate::fuzzing::load_policy;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = load_policy(text);
});
