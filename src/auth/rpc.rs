//! The roles a caller holds, and the RPCs that check them: [`Rpc`] is the one list of the RPCs,
//! their paths and the roles each needs.

use crate::config::Role;

/// Every RPC that checks its caller, and the roles that may call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rpc {
    Decide,
    Execute,
    NeverAllowed,
    DefineTools,
    RecordRefusal,
    ListPending,
    Approve,
    Reject,
    Await,
    Withdraw,
    HashArgs,
    Query,
    ExportCsv,
    Subscribe,
    Verify,
    Head,
    Stats,
    Checkpoint,
    InclusionProof,
    TlogProof,
    ConsistencyProof,
    ReloadPolicy,
    /// The console's sign-in (`POST /ui/sign-in`): a token that may read the trail or judge
    /// approvals.
    SignIn,
}

impl Rpc {
    /// Every RPC of the gRPC services (the console's sign-in is not one).
    const GRPC: [Self; 22] = [
        Self::Decide,
        Self::Execute,
        Self::NeverAllowed,
        Self::DefineTools,
        Self::RecordRefusal,
        Self::ListPending,
        Self::Approve,
        Self::Reject,
        Self::Await,
        Self::Withdraw,
        Self::HashArgs,
        Self::Query,
        Self::ExportCsv,
        Self::Subscribe,
        Self::Verify,
        Self::Head,
        Self::Stats,
        Self::Checkpoint,
        Self::InclusionProof,
        Self::TlogProof,
        Self::ConsistencyProof,
        Self::ReloadPolicy,
    ];

    /// The RPC a request's path names (`/toolgate.v1.Gate/Decide`), if it is one of ours.
    pub fn of_path(path: &str) -> Option<Self> {
        let path = path.strip_prefix('/')?;
        Self::GRPC.into_iter().find(|rpc| rpc.path() == path)
    }

    /// The gRPC path (for the console's sign-in, its URL path), as the trail records it.
    pub fn path(self) -> &'static str {
        match self {
            Self::Decide => "toolgate.v1.Gate/Decide",
            Self::Execute => "toolgate.v1.Gate/Execute",
            Self::NeverAllowed => "toolgate.v1.Gate/NeverAllowed",
            Self::DefineTools => "toolgate.v1.Gate/DefineTools",
            Self::RecordRefusal => "toolgate.v1.Gate/RecordRefusal",
            Self::ListPending => "toolgate.v1.Approvals/ListPending",
            Self::Approve => "toolgate.v1.Approvals/Approve",
            Self::Reject => "toolgate.v1.Approvals/Reject",
            Self::Await => "toolgate.v1.Approvals/Await",
            Self::Withdraw => "toolgate.v1.Approvals/Withdraw",
            Self::HashArgs => "toolgate.v1.Audit/HashArgs",
            Self::Query => "toolgate.v1.Audit/Query",
            Self::ExportCsv => "toolgate.v1.Audit/ExportCsv",
            Self::Subscribe => "toolgate.v1.Audit/Subscribe",
            Self::Verify => "toolgate.v1.Audit/Verify",
            Self::Head => "toolgate.v1.Audit/Head",
            Self::Stats => "toolgate.v1.Audit/Stats",
            Self::Checkpoint => "toolgate.v1.Audit/Checkpoint",
            Self::InclusionProof => "toolgate.v1.Audit/InclusionProof",
            Self::TlogProof => "toolgate.v1.Audit/TlogProof",
            Self::ConsistencyProof => "toolgate.v1.Audit/ConsistencyProof",
            Self::ReloadPolicy => "toolgate.v1.Admin/ReloadPolicy",
            Self::SignIn => "/ui/sign-in",
        }
    }

    /// The roles that may call it.
    pub fn roles(self) -> &'static [Role] {
        match self {
            Self::Decide | Self::Execute | Self::NeverAllowed | Self::Withdraw => &[Role::Agent],
            Self::DefineTools | Self::RecordRefusal => &[Role::Gateway],
            Self::Approve | Self::Reject => &[Role::Approver],
            // An agent lists and awaits its own calls only; an approver or an auditor any.
            Self::ListPending | Self::Await => &[Role::Agent, Role::Approver, Role::Auditor],
            Self::HashArgs
            | Self::Query
            | Self::ExportCsv
            | Self::Subscribe
            | Self::Verify
            | Self::Head
            | Self::Stats
            | Self::Checkpoint
            | Self::InclusionProof
            | Self::TlogProof
            | Self::ConsistencyProof => &[Role::Auditor],
            Self::ReloadPolicy => &[Role::Admin],
            Self::SignIn => &[Role::Auditor, Role::Approver],
        }
    }
}
