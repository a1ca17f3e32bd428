//! `toolgate approvals`: list the calls waiting for a verdict on a running server, approve or
//! reject them, or withdraw one as its agent.

use clap::{Args, Subcommand};

use super::Exit;
use super::remote::connect;
use crate::proto::approvals_client::ApprovalsClient;
use crate::proto::{self, ListPendingRequest, VerdictRequest, WithdrawRequest};
use crate::text::escaped as printable;

/// Arguments of `toolgate approvals`.
#[derive(Debug, Args)]
pub struct ApprovalsArgs {
    /// The running server: `host:port`, `http(s)://host:port` or `unix:/path`.
    #[arg(long, global = true, env = super::remote::SERVER_ENV, default_value = super::remote::DEFAULT_SERVER)]
    pub server: String,
    /// The environment variable holding the bearer token, when the server's auth is on.
    #[arg(long, global = true, default_value = super::remote::TOKEN_ENV)]
    pub token_env: String,
    #[command(subcommand)]
    pub command: ApprovalsCommand,
}

/// What to do with approvals.
#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// Print the pending approvals, oldest first.
    List {
        #[arg(long, default_value = "")]
        session: String,
        #[arg(long, default_value = "")]
        actor: String,
        #[arg(long, default_value = "")]
        tool: String,
    },
    /// Approve the call of a decision: exactly that call may then execute, once.
    Approve(VerdictArgs),
    /// Reject the call of a decision.
    Reject(VerdictArgs),
    /// Withdraw the pending approval of a decision, as the agent whose call it is: no verdict
    /// can follow, and the call may not execute.
    Withdraw {
        decision_id: String,
        /// Why, for the trail.
        #[arg(long, default_value = "")]
        reason: String,
    },
}

/// A verdict on one decision.
#[derive(Debug, Args)]
pub struct VerdictArgs {
    pub decision_id: String,
    /// Who gives the verdict (recorded on the trail).
    #[arg(long = "as")]
    pub approver: String,
    #[arg(long, default_value = "")]
    pub comment: String,
}

/// Runs an approvals command.
pub async fn approvals(args: ApprovalsArgs) -> anyhow::Result<Exit> {
    let url = args.server;
    let (channel, bearer) = connect(&url, &args.token_env).await?;
    let mut client = ApprovalsClient::with_interceptor(channel, bearer);
    match args.command {
        ApprovalsCommand::List { session, actor, tool } => {
            let request =
                ListPendingRequest { session_id: session, actor_id: actor, tool, limit: 0 };
            let listed = client.list_pending(request).await?.into_inner();
            if listed.approvals.is_empty() {
                println!("no pending approvals");
            }
            let shown = listed.approvals.len() as u64;
            for approval in listed.approvals {
                print(&approval);
                println!();
            }
            if listed.total > shown {
                println!("({} more pending: judge these to see the rest)", listed.total - shown);
            }
        }
        ApprovalsCommand::Approve(verdict) => {
            print(&client.approve(request(verdict)).await?.into_inner());
        }
        ApprovalsCommand::Reject(verdict) => {
            print(&client.reject(request(verdict)).await?.into_inner());
        }
        ApprovalsCommand::Withdraw { decision_id, reason } => {
            print(&client.withdraw(WithdrawRequest { decision_id, reason }).await?.into_inner());
        }
    }
    Ok(Exit::Ok)
}

fn request(args: VerdictArgs) -> VerdictRequest {
    VerdictRequest { decision_id: args.decision_id, approver: args.approver, comment: args.comment }
}

/// One approval, every string from the trail made printable.
fn print(a: &proto::Approval) {
    let p = |text: &str| printable(text);
    println!("decision {}  {}", p(&a.decision_id), a.state().as_str_name());
    println!("  actor {}  session {}", p(&a.actor_id), p(&a.session_id));
    println!(
        "  tool {}  action {}  resource {} {}",
        p(&a.tool),
        p(&a.action),
        p(&a.resource_type),
        p(&a.resource_id)
    );
    println!("  args_hash {}", a.args_hash);
    if !a.args_json.is_empty() {
        println!("  args {}", p(&a.args_json));
    }
    println!("  reason: {}  (policies: {})", p(&a.reason), p(&a.policy_ids.join(", ")));
    println!("  requested {}  expires {}", a.requested_at, a.expires_at);
    if !a.decided_at.is_empty() {
        let by = match a.approver.as_str() {
            "" if a.state() == proto::ApprovalState::Withdrawn => "the agent".to_owned(),
            "" => "toolgate".to_owned(),
            approver => p(approver),
        };
        println!(
            "  verdict {} by {by} at {} (seq {}): {}",
            a.verdict_outcome().as_str_name(),
            a.decided_at,
            a.seq,
            p(&a.comment)
        );
    }
}
