//! The prologue every RPC shares: who is calling, may they, and the record of a refusal. Each
//! RPC names itself once, as an [`Rpc`], which carries its path and the roles it needs.

use std::sync::Arc;

use tonic::{Request, Status};

use crate::auth::{Auth, Caller, Presented, Refusal, Rpc, SignedIn};
use crate::error::FieldError;
use crate::gate::refusal;
use crate::store::Writer;

/// Authorizes calls and records refusals; cheap to clone.
#[derive(Debug, Clone)]
pub struct Guard {
    auth: Arc<Auth>,
    writer: Writer,
}

impl Guard {
    /// Checks callers against `auth`; refusals are recorded through `writer`.
    pub fn new(auth: Arc<Auth>, writer: Writer) -> Self {
        Self { auth, writer }
    }

    /// The caller of `rpc`, when it may call it (`None` while auth is off); otherwise the
    /// refusal, recorded.
    pub(super) async fn check<T>(
        &self,
        request: &Request<T>,
        rpc: Rpc,
    ) -> Result<Option<Caller>, Status> {
        // With auth off nothing a request presents is looked at.
        if !self.auth.enabled() {
            return Ok(None);
        }
        self.recorded(self.auth.authorize(Presented::of(request), rpc).await).await
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
