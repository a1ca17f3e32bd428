//! The MCP gateway's stdio framing, message classification and ids (`toolgate::fuzzing::jsonrpc_framing`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| toolgate::fuzzing::jsonrpc_framing(data));
