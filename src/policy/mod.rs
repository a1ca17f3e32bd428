//! Policy evaluation: Cedar policies over the normalized action request. Cedar answers allow or
//! deny and names the policies that determined it; toolgate turns that into an [`Outcome`] and a
//! reason a model and an auditor can read, from the policies' own `@id` and `@reason`
//! annotations.

mod context;
mod directory;
mod engine;
mod shape;
mod slice;

pub use directory::entities;
pub use engine::{PolicyEngine, PolicyError, Verdict};
pub use shape::describe as describe_shape;

use std::fmt;

/// An approval given to a call, as policies see it (`context.approval`) when toolgate checks
/// the approval against them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Who approved.
    pub approver: String,
    /// The approver's configured roles (`[actors.<id>] roles`).
    pub roles: Vec<String>,
}

/// What the harness is told to do with a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Allow,
    Deny,
    RequireApproval,
    DryRun,
    Rewrite,
}

impl Outcome {
    /// The name the trail uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::RequireApproval => "require_approval",
            Self::DryRun => "dry_run",
            Self::Rewrite => "rewrite",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
