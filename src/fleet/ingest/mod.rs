//! The ingest service (`toolgate serve --ingest --postgres URL`): stateless receivers in front
//! of the fleet store. A node ships its committed events over gRPC, authenticated by its token;
//! each batch is checked here, natively, and written with binary `COPY` in one transaction
//! under the node's lock, so that several ingest servers behind one address share a fleet.
//!
//! - `budget`: how many alarms a node's token may have stored a minute.
//! - [`check`]: the checks of a batch and of a cosignature, pure.
//! - `copy`: a batch as a binary `COPY` stream.
//! - [`writer`]: the store's side: the lock, the head, the write, the alarms.
//!
//! The `toolgate.v1.FleetIngest` service in front of them is `grpc::ingest`.

mod budget;
pub mod check;
mod copy;
pub mod writer;

pub use writer::Writer;
