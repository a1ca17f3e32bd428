//! Compiles `proto/toolgate/v1/*.proto` with protox (no system `protoc`) into Rust code, and writes
//! the file descriptor set that the gRPC reflection service serves.

use std::path::PathBuf;

use protox::prost::Message;

const PROTOS: &[&str] = &[
    "../../proto/toolgate/v1/gate.proto",
    "../../proto/toolgate/v1/audit.proto",
    "../../proto/toolgate/v1/admin.proto",
    "../../proto/toolgate/v1/approvals.proto",
    "../../proto/toolgate/v1/fleet.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=../../proto");
    let fds = protox::compile(PROTOS, ["../../proto"])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join("toolgate_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
