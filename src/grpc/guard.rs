//! The prologue every RPC shares: who is calling, may they, and the record of a refusal. Each
//! RPC names itself once, as an [`Rpc`], which carries its path and the roles it needs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tonic::{Request, Status};

use crate::auth::{Auth, Caller, Presented, Refusal, Rpc, SignedIn};
use crate::config::Limits;
use crate::error::FieldError;
use crate::gate::refusal;
use crate::listener::{Door, Entry};
use crate::request::{ActionRequest, NeverAllowed, ToolDefinitions};
use crate::store::Writer;

/// Authorizes calls and records refusals; cheap to clone.
#[derive(Debug, Clone)]
pub struct Guard {
    auth: Arc<Auth>,
    writer: Writer,
    limits: Arc<Limits>,
}

/// A call the port's front let in, and who made it: found by [`Guard::check`], so that a call
/// is authorized once, on its head, before its body is read.
#[derive(Debug, Clone)]
struct Admitted {
    rpc: Rpc,
    caller: Option<Caller>,
}

impl Guard {
    /// Checks callers against `auth`; refusals are recorded through `writer`; each RPC's
    /// message is bounded by what `limits` let it carry.
    pub fn new(auth: Arc<Auth>, writer: Writer, limits: &Limits) -> Self {
        Self { auth, writer, limits: Arc::new(limits.clone()) }
    }

    /// The caller of `rpc`, when it may call it (`None` while auth is off); otherwise the
    /// refusal, recorded. A call the port's front let in was authorized there.
    pub(super) async fn check<T>(
        &self,
        request: &Request<T>,
        rpc: Rpc,
    ) -> Result<Option<Caller>, Status> {
        // With auth off nothing a request presents is looked at.
        if !self.auth.enabled() {
            return Ok(None);
        }
        if let Some(admitted) = request.extensions().get::<Admitted>()
            && admitted.rpc == rpc
        {
            return Ok(admitted.caller.clone());
        }
        self.recorded(self.auth.authorize(Presented::of(request), rpc).await).await
    }

    /// The largest message `rpc` can need: every field of its request at its limit.
    fn max_message(&self, rpc: Option<Rpc>) -> usize {
        let limits = &self.limits;
        let small = 64 * limits.max_name_bytes + limits.max_error_bytes;
        let Some(rpc) = rpc else { return small };
        match rpc {
            Rpc::Decide | Rpc::HashArgs => ActionRequest::max_bytes(limits),
            Rpc::Execute => limits.max_message_bytes(),
            Rpc::NeverAllowed => NeverAllowed::max_bytes(limits) + limits.max_context_bytes,
            Rpc::DefineTools => ToolDefinitions::max_bytes(limits),
            Rpc::RecordRefusal
            | Rpc::ListPending
            | Rpc::Approve
            | Rpc::Reject
            | Rpc::Await
            | Rpc::Withdraw
            | Rpc::Query
            | Rpc::ExportCsv
            | Rpc::Subscribe
            | Rpc::Verify
            | Rpc::Head
            | Rpc::Stats
            | Rpc::Checkpoint
            | Rpc::InclusionProof
            | Rpc::TlogProof
            | Rpc::ConsistencyProof
            | Rpc::ReloadPolicy
            | Rpc::SignIn => small,
        }
    }

    /// The holder of `token` signing in to the console, when it may read the trail or judge
    /// approvals (`None` while auth is off); otherwise the refusal, recorded.
    pub async fn sign_in(&self, token: &str) -> Result<Option<Caller>, Status> {
        self.recorded(self.auth.authorize(Presented::bearer(token), Rpc::SignIn).await).await
    }

    /// The person an ID token of `provider` (issuer, client id) names, signing in to the
    /// console through it, when they may read the trail or judge approvals; otherwise the
    /// refusal, recorded.
    pub async fn sign_in_person(
        &self,
        provider: (&str, &str),
        id_token: &str,
        nonce: &str,
    ) -> Result<SignedIn, Status> {
        self.recorded(self.auth.person(provider, id_token, nonce).await).await
    }

    /// What auth answered, its refusal recorded.
    async fn recorded<T>(&self, answered: Result<T, Refusal>) -> Result<T, Status> {
        match answered {
            Ok(answer) => Ok(answer),
            Err(refused) => Err(refusal::deny(&self.writer, refused).await.into()),
        }
    }

    /// Refuses, and records, an authenticated caller acting beyond its identities.
    pub(super) async fn refuse_identity(&self, caller: &Caller, rpc: Rpc, why: String) -> Status {
        let refused = self.auth.refuse_identity(caller, rpc, why);
        refusal::deny(&self.writer, refused).await.into()
    }

    /// Refuses, and records, a malformed request.
    pub(super) async fn invalid(&self, rpc: Rpc, error: FieldError) -> Status {
        refusal::invalid(&self.writer, rpc, error).await.into()
    }
}

impl Door for Guard {
    /// A call to one of toolgate's services is authorized on its head (a refusal answered and
    /// recorded before its body is read), and trusts its connection once it is; health and
    /// reflection need no credential, and trust nothing.
    fn admit<'a>(
        &'a self,
        head: &'a mut http::request::Parts,
    ) -> Pin<Box<dyn Future<Output = Result<Entry, Status>> + Send + 'a>> {
        Box::pin(async move {
            let rpc = Rpc::of_path(head.uri.path());
            let max_message = self.max_message(rpc);
            let Some(rpc) = rpc else { return Ok(Entry { trusted: false, max_message }) };
            let caller = match self.auth.enabled() {
                true => {
                    let presented = Presented::of_head(head);
                    self.recorded(self.auth.authorize(presented, rpc).await).await?
                }
                false => None,
            };
            head.extensions.insert(Admitted { rpc, caller });
            Ok(Entry { trusted: true, max_message })
        })
    }
}
