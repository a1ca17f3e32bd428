//! Policy evaluation: Cedar policies over the normalized action request. Cedar answers allow or
//! deny and names the policies that determined it; toolgate turns that into an [`Outcome`] and a
//! reason a model and an auditor can read, from the policies' own `@id` and `@reason`
//! annotations.

mod annotations;
mod context;
mod diagnostic;
mod directory;
mod engine;
mod schema;
mod shape;
mod slice;

pub use directory::entities;
pub use engine::{PolicyEngine, PolicyError, Verdict};
pub use schema::cedar_schema;
pub use shape::describe as describe_shape;

/// An approval given to a call, as policies see it (`context.approval`) when toolgate checks
/// the approval against them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Who approved.
    pub approver: String,
    /// The approver's configured roles (`[actors.<id>] roles`).
    pub roles: Vec<String>,
}
