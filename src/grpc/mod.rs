//! The gRPC face of toolgate: the `toolgate.v1` services over [`crate::gate`], plus the standard
//! health (`grpc.health.v1`) and reflection services so that generic clients can list and call
//! the API.

mod gate;

pub use gate::GateService;
