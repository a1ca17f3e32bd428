//! Policy slicing: the policies whose scope can match a principal and an action.
//!
//! Cedar evaluates every policy of a set for every request, rebuilding each policy's condition
//! as it goes. A policy whose scope names another principal or another action cannot match,
//! so toolgate hands Cedar only the slice of the set whose scope can: the same answer, the same
//! errors, for less work. Slices are built on first use per (actor, action) and kept, up to
//! [`MAX_SLICES`]; the resource scope is left to Cedar, since resource ids rarely repeat.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use cedar_policy::{ActionConstraint, Entities, EntityUid, Policy, PolicySet, PrincipalConstraint};

/// Slices kept before the cache starts over, so that a stream of new actor ids stays bounded.
const MAX_SLICES: usize = 4096;

/// The slices of one policy set under one set of entities.
#[derive(Debug, Default)]
pub struct Slices {
    cache: RwLock<HashMap<(EntityUid, EntityUid), Arc<PolicySet>>>,
}

impl Slices {
    /// The policies of `set` that can match `principal` doing `action`.
    pub fn get(
        &self,
        set: &PolicySet,
        entities: &Entities,
        principal: &EntityUid,
        action: &EntityUid,
    ) -> Arc<PolicySet> {
        let key = (principal.clone(), action.clone());
        if let Some(slice) = self.read().get(&key) {
            return Arc::clone(slice);
        }
        let slice = Arc::new(slice(set, entities, principal, action));
        let mut cache = self.cache.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        if cache.len() >= MAX_SLICES {
            cache.clear();
        }
        cache.insert(key, Arc::clone(&slice));
        slice
    }

    /// Forgets every slice: for new entities, whose hierarchy decides what `in` matches.
    pub fn clear(&self) {
        self.cache.write().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
    }

    fn read(
        &self,
    ) -> std::sync::RwLockReadGuard<'_, HashMap<(EntityUid, EntityUid), Arc<PolicySet>>> {
        // A panic while holding the lock leaves at worst a missing slice, rebuilt next time.
        self.cache.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[allow(clippy::expect_used)] // see the INVARIANT inside
fn slice(
    set: &PolicySet,
    entities: &Entities,
    principal: &EntityUid,
    action: &EntityUid,
) -> PolicySet {
    // INVARIANT: the policies come from a set, so their ids are distinct.
    PolicySet::from_policies(
        set.policies().filter(|p| can_match(p, entities, principal, action)).cloned(),
    )
    .expect("policy ids of a set are distinct")
}

/// Whether the scope of `policy` can hold for `principal` and `action`. Errs on the side of
/// keeping a policy: a kept policy is evaluated by Cedar exactly as without slicing.
fn can_match(
    policy: &Policy,
    entities: &Entities,
    principal: &EntityUid,
    action: &EntityUid,
) -> bool {
    let within = |uid: &EntityUid, group: &EntityUid| {
        uid == group || entities.ancestors(uid).is_some_and(|mut a| a.any(|g| g == group))
    };
    let principal_matches = match policy.principal_constraint() {
        PrincipalConstraint::Any => true,
        PrincipalConstraint::Eq(uid) => &uid == principal,
        PrincipalConstraint::In(group) => within(principal, &group),
        PrincipalConstraint::Is(kind) => &kind == principal.type_name(),
        PrincipalConstraint::IsIn(kind, group) => {
            &kind == principal.type_name() && within(principal, &group)
        }
    };
    let action_matches = match policy.action_constraint() {
        ActionConstraint::Any => true,
        ActionConstraint::Eq(uid) => &uid == action,
        ActionConstraint::In(groups) => groups.iter().any(|group| within(action, group)),
    };
    principal_matches && action_matches
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn uid(text: &str) -> EntityUid {
        EntityUid::from_str(text).unwrap()
    }

    fn ids(set: &PolicySet) -> Vec<String> {
        let mut ids: Vec<_> = set.policies().map(|p| p.id().to_string()).collect();
        ids.sort();
        ids
    }

    #[test]
    fn keeps_only_policies_whose_scope_can_match() {
        let set = PolicySet::from_str(
            r#"permit (principal, action, resource);
               permit (principal == Actor::"alice", action, resource);
               permit (principal in Role::"admin", action, resource);
               permit (principal, action == Action::"fs.read", resource);
               permit (principal, action in [Action::"writes"], resource);
               permit (principal is Actor, action, resource);"#,
        )
        .unwrap();
        let entities = Entities::from_json_str(
            r#"[{"uid": {"type": "Actor", "id": "alice"}, "attrs": {},
                 "parents": [{"type": "Role", "id": "admin"}]},
                {"uid": {"type": "Action", "id": "fs.write"}, "attrs": {},
                 "parents": [{"type": "Action", "id": "writes"}]}]"#,
            None,
        )
        .unwrap();
        let slices = Slices::default();

        let alice_writes =
            slices.get(&set, &entities, &uid(r#"Actor::"alice""#), &uid(r#"Action::"fs.write""#));
        assert_eq!(ids(&alice_writes), ["policy0", "policy1", "policy2", "policy4", "policy5"]);

        let bob_reads =
            slices.get(&set, &entities, &uid(r#"Actor::"bob""#), &uid(r#"Action::"fs.read""#));
        assert_eq!(ids(&bob_reads), ["policy0", "policy3", "policy5"]);
    }
}
