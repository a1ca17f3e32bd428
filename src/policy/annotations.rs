//! toolgate's annotations on Cedar policies: `@outcome` and `@rewrite` on a forbid (what a
//! denial becomes), and `@reason` templates filled with the request's values.

use crate::registry::Safety;
use crate::request::ActionRequest;
use crate::state::facts::Observed;
use crate::trail::Outcome;

/// Reads and checks a policy's `@outcome` and `@rewrite` annotations.
pub fn outcome_annotations(
    policy: &cedar_policy::Policy,
) -> Result<(Option<Outcome>, Option<serde_json::Value>), String> {
    let outcome = match policy.annotation("outcome") {
        None => None,
        Some(_) if policy.effect() == cedar_policy::Effect::Permit => {
            return Err("`@outcome` applies to forbid policies only".to_owned());
        }
        Some("require_approval") => Some(Outcome::RequireApproval),
        Some("dry_run") => Some(Outcome::DryRun),
        Some("rewrite") => Some(Outcome::Rewrite),
        Some(other) => {
            return Err(format!(
                "`@outcome` must be `require_approval`, `dry_run` or `rewrite`, not `{other}`"
            ));
        }
    };
    let patch = match (policy.annotation("rewrite"), outcome) {
        (None, Some(Outcome::Rewrite)) => {
            return Err("`@outcome(\"rewrite\")` needs a `@rewrite` merge patch".to_owned());
        }
        (None, _) => None,
        (Some(_), outcome) if outcome != Some(Outcome::Rewrite) => {
            return Err("`@rewrite` needs `@outcome(\"rewrite\")`".to_owned());
        }
        (Some(text), _) => match serde_json::from_str(text) {
            Ok(patch @ serde_json::Value::Object(_)) => Some(patch),
            _ => {
                return Err("`@rewrite` must be a JSON object (an RFC 7386 merge patch)".to_owned());
            }
        },
    };
    Ok((outcome, patch))
}

/// Fills a `@reason` template: `{tool}`, `{action}`, `{actor}`, `{safety}`, `{resource}` and
/// `{task_type}` stand for the request's values, `{read_classes}` for the data classes the
/// session has read and `{read_seqs}` for the executions that first read each (`seq 12
/// (secret)`); an empty one reads `(none)` (an empty task type, `default`), so that a reason
/// never has a hole where a value should be.
pub fn render(template: &str, req: &ActionRequest, safety: Safety, facts: &Observed) -> String {
    if !template.contains('{') {
        return template.to_owned();
    }
    let value = |text: &str| if text.is_empty() { "(none)".to_owned() } else { text.to_owned() };
    let reads = &facts.read_classes;
    let classes = reads.iter().map(|r| &*r.class).collect::<Vec<_>>().join(", ");
    let seqs = reads.iter().map(|r| match r.seq {
        0 => format!("an execution ({})", r.class),
        seq => format!("seq {seq} ({})", r.class),
    });
    template
        .replace("{read_classes}", &value(&classes))
        .replace("{read_seqs}", &value(&seqs.collect::<Vec<_>>().join(", ")))
        .replace("{tool}", &value(&req.tool))
        .replace("{action}", &value(&req.action))
        .replace("{actor}", &value(&req.actor.id))
        .replace("{safety}", safety.as_str())
        .replace("{resource}", &value(&req.resource.id))
        .replace("{task_type}", if req.task_type.is_empty() { "default" } else { &req.task_type })
}
