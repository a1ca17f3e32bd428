//! The configuration loader (TOML) from arbitrary bytes: never a panic; a configuration that
//! parses yields its tool registry, its limits and its auth.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate::config::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(config) = toml::from_str::<Config>(text) else { return };
    let _ = config.registry();
    let _ = config.limits.max_message_bytes();
    let _ = toolgate::auth::Auth::new(&config.auth);
});
