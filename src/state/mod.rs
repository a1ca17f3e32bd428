//! What a gate keeps in memory from the trail, rebuilt from it at start: the session
//! [`facts`] (counts for loops, caps and rates), the pending [`approvals`], and the tool
//! definitions in force ([`pins`]). Each is updated under its own lock as events commit; the
//! trail stays the truth, so a restart loses none of it.

pub mod approvals;
pub mod facts;
pub mod pins;

use std::sync::Arc;

use approvals::Approvals;
use facts::Facts;
use pins::Pins;

use crate::config::Config;
use crate::store::{Reader, StoreError};

/// The gate's state.
#[derive(Debug)]
pub struct State {
    pub facts: Arc<Facts>,
    pub approvals: Arc<Approvals>,
    pub pins: Arc<Pins>,
}

impl State {
    /// The state the trail behind `reader` leaves, under `config`'s caps.
    pub async fn rebuild(config: &Config, reader: &Reader) -> Result<Self, StoreError> {
        let facts = Arc::new(Facts::new(config.session_caps.clone().into_iter().collect()));
        let rebuilt = facts.rebuild(reader).await?;
        tracing::info!(events = rebuilt, "session facts rebuilt from the trail");
        let approvals = Arc::new(Approvals::new(config.approvals.clone()));
        let pending = approvals::rebuild(&approvals, reader).await?;
        tracing::info!(pending, "pending approvals rebuilt from the trail");
        let pins = Arc::new(Pins::default());
        let pinned = pins.rebuild(reader).await?;
        tracing::info!(pinned, "tool definitions in force rebuilt from the trail");
        Ok(Self { facts, approvals, pins })
    }
}
