//! The sidecar's Gate and Approvals services as the adapters call them (the Claude Code hook,
//! the MCP gateway): over a channel to a running sidecar, or in process, straight into the
//! server's own services.

use tonic::Status;
use tonic::body::Body;
use tonic::codegen::StdError;
use tonic::codegen::http::{Request, Response};
use tonic::metadata::{Ascii, MetadataValue};
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

use crate::proto::approvals_client::ApprovalsClient;
use crate::proto::gate_client::GateClient;

/// A way to the sidecar's gRPC services: a channel, or (for the http hook) the server's own
/// services, called in process. Its errors are `Status`es (a boxed error would not do: the
/// http hook's handler could then not be proven `Send`).
pub type Conn = BoxCloneSyncService<Request<Body>, Response<Body>, Status>;

/// The sidecar, over gRPC.
#[derive(Debug, Clone)]
pub struct Sidecar {
    pub gate: GateClient<Conn>,
    pub approvals: ApprovalsClient<Conn>,
    /// The `authorization` header to send, when auth is on.
    authorization: Option<MetadataValue<Ascii>>,
}

impl Sidecar {
    /// The sidecar whose Gate and Approvals services are these (both may be one channel).
    pub fn new(gate: Conn, approvals: Conn) -> Self {
        Self {
            gate: GateClient::new(gate),
            approvals: ApprovalsClient::new(approvals),
            authorization: None,
        }
    }

    /// The same sidecar, called with this `authorization` header value (`Bearer <token>`).
    pub fn authorized(self, header: &str) -> Result<Self, Status> {
        let value = header
            .parse()
            .map_err(|_| Status::invalid_argument("authorization: not a valid header value"))?;
        Ok(Self { authorization: Some(value), ..self })
    }

    /// `message` as a request, with the `authorization` header when there is one.
    pub fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        if let Some(value) = &self.authorization {
            request.metadata_mut().insert("authorization", value.clone());
        }
        request
    }
}

/// A gRPC service (a channel, a generated server) as a [`Conn`].
pub fn conn<S>(service: S) -> Conn
where
    S: tower::Service<Request<Body>, Response = Response<Body>> + Clone + Send + Sync + 'static,
    S::Error: Into<StdError>,
    S::Future: Send + 'static,
{
    BoxCloneSyncService::new(service.map_err(|e| Status::from_error(e.into())))
}
