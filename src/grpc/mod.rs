//! The gRPC face of toolgate: the `toolgate.v1` services over [`crate::gate`], plus the standard
//! health (`grpc.health.v1`) and reflection services so that generic clients can list and call
//! the API.

mod admin;
mod approvals;
mod audit;
mod convert;
mod gate;
mod guard;

pub use admin::AdminService;
pub use approvals::ApprovalsService;
pub use audit::AuditService;
pub use convert::{event_from_proto, event_to_proto};
pub use gate::GateService;
pub use guard::Guard;
