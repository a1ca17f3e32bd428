//! The gRPC face of toolgate: the `toolgate.v1` services over [`crate::gate`] (and the fleet's
//! ingest service over `fleet::ingest`), plus the standard
//! health (`grpc.health.v1`) and reflection services so that generic clients can list and call
//! the API.

mod admin;
mod approvals;
mod audit;
mod gate;
mod guard;
mod ingest;

pub use admin::AdminService;
pub use approvals::ApprovalsService;
pub use audit::AuditService;
pub use gate::GateService;
pub use guard::Guard;
pub use ingest::{IngestService, MAX_MESSAGE};
