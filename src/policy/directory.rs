//! The entities policies can reason about beyond the request: configured actors with their
//! roles and attributes, and action groups. Built once from the configuration and shared by
//! every evaluation, so `principal in Role::"admin"`, `principal.team == "payments"` and
//! `action in Action::"writes"` cost nothing per request.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::str::FromStr;
use std::sync::Arc;

use cedar_policy::{Entities, Entity, EntityId, EntityTypeName, EntityUid};

use super::PolicyError;
use super::context::json_expr;
use crate::config::{ActorSpec, Config};

/// Builds the entities of the configured actors and action groups.
#[allow(clippy::expect_used)] // see the INVARIANT inside
pub fn entities(config: &Config) -> Result<Arc<Entities>, PolicyError> {
    let (actors, action_groups): (&BTreeMap<String, ActorSpec>, _) =
        (&config.actors, &config.action_groups);
    let error = |message: String| PolicyError::Directory(message);
    let kind = |name: &str| {
        // INVARIANT: the three names are valid Cedar identifiers.
        EntityTypeName::from_str(name).expect("valid entity type name")
    };
    let (actor, role, action) = (kind("Actor"), kind("Role"), kind("Action"));
    let uid = |kind: &EntityTypeName, id: &str| {
        EntityUid::from_type_name_and_id(kind.clone(), EntityId::new(id))
    };

    let mut entities = Vec::new();
    let mut roles = HashSet::new();
    for (id, spec) in actors {
        let attrs = spec
            .attributes
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), json_expr(v)?)))
            .collect::<HashMap<_, _>>();
        let parents = spec.roles.iter().map(|r| uid(&role, r)).collect::<HashSet<_>>();
        roles.extend(spec.roles.iter().cloned());
        let entity = Entity::new(uid(&actor, id), attrs, parents)
            .map_err(|e| error(format!("actor `{id}`: {e}")))?;
        entities.push(entity);
    }
    entities.extend(roles.iter().map(|r| Entity::new_no_attrs(uid(&role, r), HashSet::new())));
    let mut members: HashMap<&str, HashSet<EntityUid>> = HashMap::new();
    for (group, actions) in action_groups {
        for member in actions {
            members.entry(member.as_str()).or_default().insert(uid(&action, group));
        }
        members.entry(group.as_str()).or_default();
    }
    entities.extend(
        members
            .into_iter()
            .map(|(name, parents)| Entity::new_no_attrs(uid(&action, name), parents)),
    );
    Entities::from_entities(entities, None).map(Arc::new).map_err(|e| error(e.to_string()))
}
