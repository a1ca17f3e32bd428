//! Arguments shared by the auditors' commands: where the trail is read from, and the filter.

use std::path::PathBuf;

use clap::Args;

use super::remote::{Authorized, TOKEN_ENV, connect_to};
use crate::audit::{Ask, At, Local, Trails};
use crate::proto::{self, audit_client::AuditClient};
use crate::request::WireFilter;
use crate::store::Reader;
use crate::trail::Event;
use crate::trail::Filter;
use crate::trail::cosignature::{Witnesses, WitnessesError};
use crate::wire::event_from_proto;

/// Where to read the trail.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Read this SQLite trail directly (read-only: a running server may keep writing it).
    #[arg(long, conflicts_with = "server")]
    pub db: Option<PathBuf>,
    /// A running server: `host:port`, `http(s)://host:port` or `unix:/path` (by default
    /// `$TOOLGATE_SERVER`, else 127.0.0.1:50051); the auditor's token from `TOOLGATE_TOKEN`
    /// when its auth is on.
    #[arg(long)]
    pub server: Option<String>,
    /// With --db: the archive holding what retention pruned from the trail (`file:///…`,
    /// `s3://bucket/prefix`), read where the file no longer reaches, each tile checked
    /// against the nodes the file kept.
    #[arg(long, requires = "db")]
    pub archive: Option<String>,
    /// An option of the archive's store, `name=value` as `[archive] options` (repeatable).
    #[arg(long = "archive-option", value_parser = super::archive::option, requires = "archive")]
    pub archive_options: Vec<(String, String)>,
}

/// The trail, read directly or through a server.
pub enum Source {
    Db(Local),
    Server(AuditClient<Authorized>),
}

impl SourceArgs {
    /// Opens the source named by the arguments.
    pub async fn open(&self) -> anyhow::Result<Source> {
        match (&self.db, &self.server) {
            (Some(db), _) => {
                let archive = match &self.archive {
                    Some(url) => Some(super::archive::open(url, &self.archive_options)?),
                    None => None,
                };
                Ok(Source::Db(Local::new(Reader::open(db).await?, archive)))
            }
            (None, server) => {
                let (channel, bearer) = connect_to(server.as_deref(), TOKEN_ENV).await?;
                let client = AuditClient::with_interceptor(channel, bearer);
                Ok(Source::Server(client.max_decoding_message_size(64 * 1024 * 1024)))
            }
        }
    }
}

impl Source {
    /// At most `limit` events matching `filter` after `seq`, oldest first.
    pub async fn page(
        &mut self,
        filter: &Filter,
        after: i64,
        limit: u32,
    ) -> anyhow::Result<Vec<Event>> {
        self.page_from(filter, after, limit, false).await
    }

    /// At most `limit` events matching `filter` from `at`: after it oldest first, or before it
    /// newest first (from the newest when 0).
    pub async fn page_from(
        &mut self,
        filter: &Filter,
        at: i64,
        limit: u32,
        newest_first: bool,
    ) -> anyhow::Result<Vec<Event>> {
        match self {
            Self::Db(trail) => {
                let at = At { node: "", seq: at };
                let ask = Ask { node: None, filter, at, size: limit, newest_first };
                let page = trail.query(ask).await?;
                Ok(page.into_iter().map(|located| located.event).collect())
            }
            Self::Server(client) => {
                let request = proto::QueryRequest {
                    filter: Some(filter.to_proto()),
                    page_size: limit,
                    page_token: at.to_string(),
                    newest_first,
                };
                let events = client.query(request).await?.into_inner().events;
                events
                    .into_iter()
                    .map(event_from_proto)
                    .collect::<Result<_, _>>()
                    .map_err(Into::into)
            }
        }
    }
}

/// Which events: every flag optional, combined with AND.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// At or after this time: RFC 3339, or a duration back from now (`24h`, `7d`, `30m`).
    #[arg(long)]
    pub since: Option<String>,
    /// Before this time, in the same forms.
    #[arg(long)]
    pub until: Option<String>,
    #[arg(long)]
    pub session: Option<String>,
    #[arg(long)]
    pub actor: Option<String>,
    #[arg(long)]
    pub tool: Option<String>,
    #[arg(long)]
    pub action: Option<String>,
    /// allow, deny, require_approval, dry_run or rewrite.
    #[arg(long)]
    pub outcome: Option<String>,
    /// decision, execution, violation, invalid_request, policy_loaded, approval_requested,
    /// approval_approved, approval_rejected, approval_expired, approval_withdrawn,
    /// access_denied, checkpoint, undelivered or tool_defined.
    #[arg(long)]
    pub kind: Option<String>,
    #[arg(long)]
    pub decision: Option<String>,
    /// Only decisions whose shadow policy answered otherwise than the enforced one.
    #[arg(long)]
    pub shadow_disagrees: bool,
}

impl FilterArgs {
    /// The validated filter (times normalized).
    pub fn filter(&self) -> anyhow::Result<Filter> {
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        let wire = proto::Filter {
            since: text(&self.since),
            until: text(&self.until),
            session_id: text(&self.session),
            actor_id: text(&self.actor),
            tool: text(&self.tool),
            action: text(&self.action),
            outcome: text(&self.outcome),
            kind: text(&self.kind),
            decision_id: text(&self.decision),
            shadow_disagrees: self.shadow_disagrees,
            node_id: String::new(),
        };
        // Only the times, the kind and the outcome can be refused; they carry the flags' names.
        Ok(Filter::from_proto(wire, "--")?)
    }
}

/// The fleet store's `url` as `--postgres` gave it; a password in it given on the command line,
/// where every user of the host reads it (`ps`, `/proc/<pid>/cmdline`), is warned about loudly:
/// it belongs in `TOOLGATE_POSTGRES_URL` or `PGPASSWORD`.
pub fn postgres_url(url: &str) -> &str {
    let from_env = std::env::var(crate::fleet::URL_ENV).is_ok_and(|env| env == url);
    let password = url::Url::parse(url).ok().and_then(|u| u.password().map(str::len)).unwrap_or(0);
    if password > 0 && !from_env {
        eprintln!(
            "WARNING: the password in --postgres is on the command line, where every user of \
             this host can read it (ps, /proc); give the URL in {} or the password in \
             PGPASSWORD instead",
            crate::fleet::URL_ENV
        );
    }
    url
}

/// A `--node` value that is a node id ([`crate::fleet::NODE_ID`]), or the error saying so.
pub(super) fn check_node(node: &str) -> anyhow::Result<()> {
    anyhow::ensure!(crate::fleet::valid_node(node), "--node {node:?}: {}", crate::fleet::NODE_ID);
    Ok(())
}

/// The `--witness` keys given, each once, and how many of them must have cosigned
/// (`--witnesses-required`; all of them when absent).
pub(super) fn witnesses(keys: &[String], required: Option<usize>) -> anyhow::Result<Witnesses> {
    Witnesses::parse(keys, required).map_err(|e| match e {
        WitnessesError::Key(..) => anyhow::anyhow!("--witness {e}"),
        WitnessesError::Required(_) => anyhow::anyhow!("--witnesses-required: {e}"),
    })
}
