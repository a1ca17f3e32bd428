//! A decision's `request` cell: the normalized request less what the event's own columns hold
//! (session, task type, actor, tool, action, resource type and id, the arguments' hash) and less
//! every field at its default, so that a plain call stores `{}`. It keeps the shape of the whole
//! request, so that a reader takes both this form and the whole request that trails written
//! before it hold (docs/trail-format.md): the columns fill in what the cell leaves out.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ActionRequest, Actor, ActorKind, ExecutionPlan, Resource, RunOptions};
use crate::trail::Record;

/// The cell's JSON: borrowed from a request when written, owned when read.
#[derive(Serialize, Deserialize, Default)]
#[serde(default)]
struct Rest<'a> {
    #[serde(skip_serializing_if = "ActorRest::is_empty")]
    actor: ActorRest<'a>,
    #[serde(skip_serializing_if = "ResourceRest::is_empty")]
    resource: ResourceRest<'a>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    context: Cow<'a, Map<String, Value>>,
    #[serde(skip_serializing_if = "is_default")]
    options: Cow<'a, RunOptions>,
    #[serde(skip_serializing_if = "is_default")]
    plan: Cow<'a, ExecutionPlan>,
    /// How the arguments broke the tool's input schema, when they did.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    args_errors: Cow<'a, [String]>,
    /// Which of them the tool's normalizations could not normalize.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    unnormalized: Cow<'a, [String]>,
    /// The hash of the arguments as sent, when normalizing changed them and it is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    raw_args_hash: Option<Cow<'a, str>>,
    /// The hash of the tool's definition the caller was shown, when it named one.
    #[serde(skip_serializing_if = "str::is_empty")]
    tool_definition: Cow<'a, str>,
    /// Who asked, with auth on.
    #[serde(skip_serializing_if = "Option::is_none")]
    identity: Option<Cow<'a, str>>,
}

#[derive(Serialize, Deserialize, Default)]
#[serde(default)]
struct ActorRest<'a> {
    delegation_chain: Cow<'a, [String]>,
}

impl ActorRest<'_> {
    fn is_empty(&self) -> bool {
        self.delegation_chain.is_empty()
    }
}

#[derive(Serialize, Deserialize, Default)]
#[serde(default)]
struct ResourceRest<'a> {
    classification: Cow<'a, str>,
}

impl ResourceRest<'_> {
    fn is_empty(&self) -> bool {
        self.classification.is_empty()
    }
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// A decision's `request` cell read for the resource's classification only.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Classified {
    resource: ResourceRest<'static>,
}

/// The classification of the resource a decision event's request named (empty for none);
/// `None` when its `request` cell does not read.
pub fn classification(record: &Record) -> Option<String> {
    let cell = record.request.as_deref()?;
    // Most calls name no classification (`{}`): the writer's thread parses nothing for them.
    if !cell.contains("\"classification\"") {
        return Some(String::new());
    }
    let cell: Classified = serde_json::from_str(cell).ok()?;
    Some(cell.resource.classification.into_owned())
}

impl ActionRequest {
    /// The `request` cell of this request's decision event.
    #[allow(clippy::expect_used)] // see the INVARIANT inside
    pub fn stored(&self) -> String {
        let rest = Rest {
            actor: ActorRest { delegation_chain: Cow::Borrowed(&self.actor.delegation_chain) },
            resource: ResourceRest { classification: Cow::Borrowed(&self.resource.classification) },
            context: Cow::Borrowed(&self.context),
            options: Cow::Borrowed(&self.options),
            plan: Cow::Borrowed(&self.plan),
            args_errors: Cow::Borrowed(&self.args_errors),
            unnormalized: Cow::Borrowed(&self.unnormalized),
            raw_args_hash: self.raw_args_hash.as_deref().map(Cow::Borrowed),
            tool_definition: Cow::Borrowed(&self.tool_definition),
            identity: self.identity.as_deref().map(Cow::Borrowed),
        };
        // INVARIANT: the request holds only JSON values and plain fields, which serialize.
        serde_json::to_string(&rest).expect("the request serializes")
    }

    /// The request of a decision event, from its columns and its `request` cell (either form),
    /// without the arguments, which the trail never holds; `None` when the event is not a
    /// readable decision.
    pub fn from_trail(record: &Record) -> Option<Self> {
        let rest: Rest<'static> = serde_json::from_str(record.request.as_deref()?).ok()?;
        let text = |cell: &Option<String>| cell.clone().unwrap_or_default();
        Some(Self {
            session_id: record.session_id.clone()?,
            task_type: record.task_type.clone().unwrap_or_else(|| "default".to_owned()),
            actor: Actor {
                id: record.actor_id.clone()?,
                kind: ActorKind::named(record.actor_kind.as_deref()?)?,
                delegation_chain: rest.actor.delegation_chain.into_owned(),
            },
            tool: record.tool.clone()?,
            action: text(&record.action),
            resource: Resource {
                kind: text(&record.resource_type),
                id: text(&record.resource_id),
                classification: rest.resource.classification.into_owned(),
            },
            args: Map::new(),
            args_hash: record.args_hash.clone()?,
            raw_args: None,
            raw_args_hash: rest.raw_args_hash.map(Cow::into_owned),
            context: rest.context.into_owned(),
            options: rest.options.into_owned(),
            plan: rest.plan.into_owned(),
            args_errors: rest.args_errors.into_owned(),
            unnormalized: rest.unnormalized.into_owned(),
            tool_definition: rest.tool_definition.into_owned(),
            identity: rest.identity.map(Cow::into_owned),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Limits;
    use crate::proto;
    use crate::registry::ToolRegistry;
    use crate::request::decide::tests::request as plain;
    use crate::trail::Kind;

    fn normalized(req: proto::DecideRequest) -> ActionRequest {
        ActionRequest::from_proto(req, &Limits::default(), &ToolRegistry::default()).unwrap()
    }

    fn full() -> proto::DecideRequest {
        proto::DecideRequest {
            actor: Some(proto::Actor {
                id: "sub-1".into(),
                kind: "subagent".into(),
                delegation_chain: vec!["alice".into(), "planner".into()],
            }),
            resource: Some(proto::Resource {
                r#type: "file".into(),
                id: "/etc/hosts".into(),
                classification: "internal".into(),
            }),
            context_json: r#"{"ticket":"T-1","cwd":"/w"}"#.into(),
            options: Some(proto::RunOptions {
                allow_write: true,
                allow_bash: false,
                max_output_chars: 500,
            }),
            plan: Some(proto::ExecutionPlan {
                dry_run: true,
                idempotency_key: "k1".into(),
                timeout_ms: 0,
                rollback_hint: String::new(),
            }),
            ..plain()
        }
    }

    /// The decision event's record of `req`, as the gate writes it.
    fn record(req: &ActionRequest) -> Record {
        Record { request: Some(req.stored()), ..req.record(Kind::Decision, "d1") }
            .without_empty_texts()
    }

    #[test]
    fn a_plain_call_stores_nothing_the_columns_do_not_hold() {
        let req = normalized(plain());
        assert_eq!(req.stored(), "{}");
    }

    #[test]
    fn the_cell_keeps_only_what_is_not_a_column_nor_a_default() {
        let req = normalized(full());
        assert_eq!(
            req.stored(),
            r#"{"actor":{"delegation_chain":["alice","planner"]},"resource":{"classification":"internal"},"context":{"ticket":"T-1","cwd":"/w"},"options":{"allow_write":true,"max_output_chars":500},"plan":{"dry_run":true,"idempotency_key":"k1"}}"#
        );
        assert!(!req.stored().contains("README.md"), "the arguments are never stored");
    }

    #[test]
    fn a_request_reads_back_from_its_columns_and_cell() {
        for req in [normalized(plain()), normalized(full())] {
            let back = ActionRequest::from_trail(&record(&req)).unwrap();
            assert_eq!(back, ActionRequest { args: Map::new(), ..req });
        }
    }

    #[test]
    fn a_whole_request_stored_by_an_older_trail_reads_back_the_same() {
        let req = normalized(full());
        let mut record = record(&req);
        record.request = Some(
            r#"{"session_id":"s1","task_type":"default","actor":{"id":"sub-1","kind":"subagent","delegation_chain":["alice","planner"]},"tool":"read","action":"fs.read","resource":{"type":"file","id":"/etc/hosts","classification":"internal"},"args_hash":"ignored: the column holds it","context":{"ticket":"T-1","cwd":"/w"},"options":{"allow_write":true,"allow_bash":false,"max_output_chars":500},"plan":{"dry_run":true,"idempotency_key":"k1","timeout_ms":null,"rollback_hint":""}}"#
                .to_owned(),
        );
        let back = ActionRequest::from_trail(&record).unwrap();
        assert_eq!(back, ActionRequest { args: Map::new(), ..req });
    }

    #[test]
    fn an_event_without_a_readable_request_reads_as_none() {
        let req = normalized(plain());
        let mut unreadable = record(&req);
        unreadable.request = Some("not json".to_owned());
        assert_eq!(ActionRequest::from_trail(&unreadable), None);
        let mut refused = record(&req);
        refused.actor_kind = Some("robot".to_owned());
        assert_eq!(ActionRequest::from_trail(&refused), None);
    }
}
