//! SPIFFE IDs (`spiffe://<trust domain>/<path>`), as an X.509 SVID carries one in its only URI
//! subject alternative name, and the `[[auth.spiffe]]` entries that map them to callers.
//!
//! An ID is taken only in the form the SPIFFE ID standard gives it (`tls::spiffe_id`).
//! Entries match an ID exactly, or every ID under a path (`…/agents/*`), always on a
//! segment's boundary.

use super::{BadAuth, Caller};
use crate::config::SpiffeSpec;
use crate::tls::{spiffe_id as id, trust_domain};

/// The callers of `[[auth.spiffe]]`, longest pattern first.
#[derive(Debug, Default)]
pub struct Spiffe {
    entries: Vec<(Pattern, Caller)>,
}

/// An entry's ID: exact, or a prefix ending in `/`.
#[derive(Debug)]
struct Pattern {
    id: String,
    under: bool,
}

impl Spiffe {
    /// The entries of `[[auth.spiffe]]`, checked.
    pub fn new(specs: &[SpiffeSpec]) -> Result<Self, BadAuth> {
        let mut entries = Vec::new();
        for spec in specs {
            let bad = |why: &str| BadAuth::Spiffe(spec.id.clone(), why.to_owned());
            let pattern = match spec.id.strip_suffix("/*") {
                Some(base) => {
                    // A trust domain alone (`spiffe://example.org/*`) or an ID's path.
                    let domain_only = base.strip_prefix("spiffe://").is_some_and(trust_domain);
                    if !domain_only {
                        id(base).map_err(bad)?;
                    }
                    Pattern { id: format!("{base}/"), under: true }
                }
                None => Pattern { id: id(&spec.id).map_err(bad)?.to_owned(), under: false },
            };
            if entries.iter().any(|(known, _): &(Pattern, Caller)| known.id == pattern.id) {
                return Err(bad("is listed twice"));
            }
            // Without actors, the caller acts as the ID it holds (filled in by `caller`).
            let caller = Caller {
                id: spec.id.clone(),
                roles: spec.roles.clone(),
                actors: spec.actors.clone(),
                harness_approvals: false,
            };
            entries.push((pattern, caller));
        }
        entries.sort_by_key(|(pattern, _)| std::cmp::Reverse(pattern.id.len()));
        Ok(Self { entries })
    }

    /// Whether any entry is configured.
    pub fn any(&self) -> bool {
        !self.entries.is_empty()
    }

    /// The caller holding the SVID of `spiffe_id` (checked), by the longest entry matching it.
    pub fn caller(&self, spiffe_id: &str) -> Option<Caller> {
        let (_, caller) = self.entries.iter().find(|(pattern, _)| match pattern.under {
            true => spiffe_id.starts_with(&pattern.id),
            false => spiffe_id == pattern.id,
        })?;
        let mut caller = caller.clone();
        caller.id = spiffe_id.to_owned();
        if caller.actors.is_empty() {
            caller.actors = vec![spiffe_id.to_owned()];
        }
        Some(caller)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Role;

    #[test]
    fn the_longest_entry_matches_on_a_segment_boundary() {
        let spec = |id: &str, roles: Vec<Role>, actors: &[&str]| SpiffeSpec {
            id: id.into(),
            roles,
            actors: actors.iter().map(|a| a.to_string()).collect(),
        };
        let spiffe = Spiffe::new(&[
            spec("spiffe://example.org/agents/*", vec![Role::Agent], &[]),
            spec("spiffe://example.org/agents/billing/*", vec![Role::Agent], &["billing"]),
            spec("spiffe://example.org/ops/auditor", vec![Role::Auditor], &[]),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let caller = |id: &str| spiffe.caller(id);
        let billing = caller("spiffe://example.org/agents/billing/7").unwrap_or_else(|| panic!());
        assert_eq!(billing.id, "spiffe://example.org/agents/billing/7");
        assert!(billing.may_act_as("billing") && !billing.may_act_as("other"));
        let agent = caller("spiffe://example.org/agents/search").unwrap_or_else(|| panic!());
        assert_eq!(agent.sole_actor(), Some("spiffe://example.org/agents/search"));
        assert!(caller("spiffe://example.org/agentsmith/x").is_none(), "not a segment boundary");
        assert!(caller("spiffe://example.org/ops/auditor/x").is_none(), "exact entries are exact");
        assert!(caller("spiffe://example.org/ops/auditor").is_some_and(|c| c.has(Role::Auditor)));
        assert!(caller("spiffe://other.org/agents/search").is_none(), "another trust domain");
        let bad = Spiffe::new(&[spec("spiffe://example.org", vec![], &[])]);
        assert!(bad.is_err());
    }
}
