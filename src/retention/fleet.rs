//! Retention of the fleet store (`toolgate fleet prune`, docs/fleet.md "Retention"): whole
//! partitions of `fleet_events`, oldest first, once they take no event younger than the age
//! rule, and only when every node's events in one may go. For each node, from where the
//! store's copy of it starts (its last cut):
//!
//! - its events there are the next ones, contiguous;
//! - they verify, read again from the store: every hash recomputed, every link, every
//!   checkpoint against the tree and signed by the node's registered key;
//! - a checkpoint the store keeps, signed (and, with witnesses given, cosigned by enough of
//!   them), covers them;
//! - the node's own archive (`fleet archive`) holds them exactly: its checkpoint signed by the
//!   node's key, covering them, with the store's root at its size; each tile's leaves, hashes
//!   and events the store's (`archive::check::tile_holds`, as for a sidecar's own prune).
//!
//! A legal hold stops it all. The first partition that may not go stops the round (a node's
//! cut is always a prefix of what the store held), and says why.

use std::collections::{BTreeMap, HashMap};

use crate::archive::Archive;
use crate::archive::check::{self, tile_holds};
use crate::archive::tiles::{Tile, WIDTH};
use crate::audit::read_checkpoint;
use crate::fleet::cuts::{Cut, Hold, Range};
use crate::fleet::store::{FleetError, FleetStore, Partition};
use crate::fleet::tree_of;
use crate::trail::cosignature::Witnesses;
use crate::trail::note::NoteVerifier;
use crate::trail::{Event, Frontier, GENESIS_HASH, Kind, Verifier, decode};

/// `fleet prune`'s rules: partitions at least `max_age_days` old, their cut covered by a
/// checkpoint carrying the `witnesses`' cosignatures (when any are required).
#[derive(Debug, Default)]
pub struct Rules {
    pub max_age_days: f64,
    pub witnesses: Witnesses,
}

/// What a round did with one partition.
#[derive(Debug)]
pub enum Step {
    /// Dropped, with what it took of each node.
    Dropped(Partition, Vec<Cut>),
    /// Would be dropped (a dry run).
    Droppable(Partition, Vec<Cut>),
    /// Kept, and why: the round stops there.
    Kept(Partition, String),
}

/// What a round found: the hold in force (nothing is done then), or each partition's step.
#[derive(Debug)]
pub enum Round {
    Held(Hold),
    Steps(Vec<Step>),
}

/// Runs one round of the fleet store's retention under `rules`; with `dry_run`, decides and
/// changes nothing.
pub async fn prune(store: &FleetStore, rules: &Rules, dry_run: bool) -> Result<Round, FleetError> {
    if let Some(hold) = store.hold().await?.filter(|h| h.held) {
        return Ok(Round::Held(hold));
    }
    let mut steps = Vec::new();
    // The cuts of this round, by node: a dry run records none, and the next partition of a
    // node starts where its last one would have ended.
    let mut cut_here: HashMap<String, Cut> = HashMap::new();
    for partition in store.old_partitions(rules.max_age_days).await? {
        let mut cuts = Vec::new();
        let mut kept = None;
        for range in store.ranges(&partition).await? {
            let last = match cut_here.get(&range.node_id) {
                Some(cut) => Some(cut.clone()),
                None => store.last_cut(&range.node_id).await?,
            };
            match cut(store, &range, last, rules).await? {
                Ok(cut) => cuts.push(cut),
                Err(why) => {
                    kept = Some(format!("node {:?}: {why}", range.node_id));
                    break;
                }
            }
        }
        if let Some(why) = kept {
            steps.push(Step::Kept(partition, why));
            break;
        }
        cut_here.extend(cuts.iter().map(|cut| (cut.node_id.clone(), cut.clone())));
        if dry_run {
            steps.push(Step::Droppable(partition, cuts));
            continue;
        }
        match store.drop_partition(&partition, &cuts).await {
            Ok(()) => steps.push(Step::Dropped(partition, cuts)),
            // The round's report keeps what it dropped before.
            Err(e) => {
                steps.push(Step::Kept(partition, e.to_string()));
                break;
            }
        }
    }
    Ok(Round::Steps(steps))
}

/// The cut of `range` (a node's events in a partition), when they may go; otherwise why not.
async fn cut(
    store: &FleetStore,
    range: &Range,
    last: Option<Cut>,
    rules: &Rules,
) -> Result<Result<Cut, String>, FleetError> {
    let node = range.node_id.as_str();
    let archived = store.archived(node).await?;
    let Some(key) = archived.key else {
        return Ok(Err(
            "registered without a verifier key: its checkpoints cannot be checked".into()
        ));
    };
    let key = match NoteVerifier::parse(&key) {
        Ok(key) => key,
        Err(e) => return Ok(Err(format!("its registered verifier key does not read: {e}"))),
    };
    let Some(url) = archived.url else {
        return Ok(Err("no archive registered (toolgate fleet archive)".into()));
    };
    let options: BTreeMap<String, String> = match archived.options.as_deref() {
        Some(json) => match serde_json::from_str(json) {
            Ok(options) => options,
            Err(e) => return Ok(Err(format!("its archive's options do not read: {e}"))),
        },
        None => BTreeMap::new(),
    };
    let archive = match Archive::open(&url, &options) {
        Ok(archive) => archive,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let (after, prev, edge) = match &last {
        Some(cut) => (cut.through, decode(&cut.hash), cut.edge.clone()),
        None => (0, Some(GENESIS_HASH), Vec::new()),
    };
    if range.first != after + 1 || range.count != range.through - range.first + 1 {
        return Ok(Err(format!(
            "its {} events here, seq {} to {}, are not the ones after seq {after}, where the \
             store's copy of it starts",
            range.count, range.first, range.through
        )));
    }
    let Some(tree) = prev.and_then(|_| tree_of(after, &edge)) else {
        return Ok(Err("the record of its last cut does not read".into()));
    };
    let walk = Walk {
        store,
        archive: &archive,
        key: &key,
        rules,
        range,
        chain: Verifier::starting_at(range.first, prev.unwrap_or(GENESIS_HASH)),
        tree,
    };
    Ok(walk.run().await?.map(|(hash, edge, checkpoint)| Cut {
        node_id: node.to_owned(),
        first: range.first,
        through: range.through,
        hash,
        edge,
        checkpoint,
        archive: url,
    }))
}

/// A node's events read again from where the store's copy starts, a tile at a time, until the
/// range is checked against its archive, a checkpoint covers it and the archive's checkpoint
/// is reached.
struct Walk<'a> {
    store: &'a FleetStore,
    archive: &'a Archive,
    key: &'a NoteVerifier,
    rules: &'a Rules,
    range: &'a Range,
    chain: Verifier,
    tree: Frontier,
}

impl Walk<'_> {
    /// The last event's hash and the tree's edge at the end of the range, and the checkpoint
    /// that covers it; or why the range may not go.
    async fn run(mut self) -> Result<Result<(String, Vec<Vec<u8>>, i64), String>, FleetError> {
        let (node, through) = (self.range.node_id.as_str(), self.range.through);
        let wide = u64::try_from(through).unwrap_or(0);
        let archived = match check::covering(self.archive, self.key, wide).await {
            Ok(Ok(checkpoint)) => checkpoint,
            Ok(Err(problem)) => return Ok(Err(format!("its archive: {problem}"))),
            Err(e) => return Ok(Err(format!("its archive: {e}"))),
        };
        let keys = [self.key.clone()];
        let (mut end, mut covering, mut root) = (None, None, false);
        let mut after = self.range.first - 1;
        loop {
            let size = self.tree.size();
            if size >= wide && size >= archived.size && covering.is_some() {
                break;
            }
            // One tile's worth: the pages line up with the archive's level-0 tiles.
            let limit = u32::try_from(WIDTH - after.unsigned_abs() % WIDTH).unwrap_or(1);
            let page = self.store.events(node, after, limit).await?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            for event in &page {
                if let Some(problem) = self.chain.check(event).into_iter().next() {
                    return Ok(Err(format!("it does not verify in the store: {problem}")));
                }
                if event.record.kind == Kind::Checkpoint {
                    match self.covers(event, &keys, wide, covering.is_none()).await? {
                        Ok(true) => covering = Some(event.seq),
                        Ok(false) => {}
                        Err(why) => return Ok(Err(why)),
                    }
                }
                let Some(leaf) = decode(&event.hash) else {
                    return Ok(Err(format!("seq {}: a hash that does not read", event.seq)));
                };
                self.tree.push(&leaf);
                if event.seq == through {
                    let edge = self.tree.edge().map(|h| h.to_vec()).collect();
                    end = Some((event.hash.clone(), edge));
                }
                if self.tree.size() == archived.size {
                    if self.tree.root() != archived.root {
                        return Ok(Err(format!(
                            "its archive's checkpoint is not the store's tree of {} events",
                            archived.size
                        )));
                    }
                    root = true;
                }
            }
            if let Some(problems) = self.tile(&page, archived.size).await {
                return Ok(Err(format!("its archive: {problems}")));
            }
        }
        let why = match (end, covering, root) {
            (Some((hash, edge)), Some(checkpoint), true) => {
                return Ok(Ok((hash, edge, checkpoint)));
            }
            (None, _, _) => "the store does not hold the events to the end of the range".into(),
            (_, None, _) if self.rules.witnesses.required > 0 => format!(
                "no checkpoint the store holds covers seq {through} with {} of the witnesses' \
                 cosignatures yet",
                self.rules.witnesses.required
            ),
            (_, None, _) => format!("no checkpoint the store holds covers seq {through} yet"),
            (_, _, false) => format!(
                "its archive's checkpoint (of {} events) is ahead of the store's events of it: \
                 its root is checked once they arrive",
                archived.size
            ),
        };
        Ok(Err(why))
    }

    /// A checkpoint on the way, which must be the store's tree as it stands: whether it is
    /// the first (`looking`) to cover `wide` events with the witnesses' cosignatures, or why
    /// it refuses the range.
    async fn covers(
        &self,
        event: &Event,
        keys: &[NoteVerifier],
        wide: u64,
        looking: bool,
    ) -> Result<Result<bool, String>, FleetError> {
        let note = event.record.note.as_deref().unwrap_or_default();
        let checkpoint = match read_checkpoint(note, keys, "not signed by its registered key") {
            Ok(cp) if cp.size == self.tree.size() && cp.root == self.tree.root() => cp,
            Ok(_) => {
                return Ok(Err(format!(
                    "its checkpoint at seq {} is not the store's tree",
                    event.seq
                )));
            }
            Err(why) => return Ok(Err(format!("seq {}: {why}", event.seq))),
        };
        Ok(Ok(looking && checkpoint.size >= wide && self.witnessed(event).await?))
    }

    /// Whether the checkpoint `event` carries the cosignatures the rules require.
    async fn witnessed(&self, event: &Event) -> Result<bool, FleetError> {
        let witnesses = &self.rules.witnesses;
        if witnesses.required == 0 {
            return Ok(true);
        }
        let lines = self.store.cosignature_lines(&self.range.node_id, event.seq).await?;
        let note = event.record.note.as_deref().unwrap_or_default();
        Ok(witnesses.satisfied(note, &lines))
    }

    /// The problems of the archive's level-0 tile of `page` (one tile's events) with the
    /// page's events of the range, if any.
    async fn tile(&self, page: &[Event], archived: u64) -> Option<String> {
        let in_range = |e: &&Event| (self.range.first..=self.range.through).contains(&e.seq);
        let kept: Vec<Event> = page.iter().filter(in_range).cloned().collect();
        let first = u64::try_from(kept.first()?.seq - 1).ok()?;
        let index = first / WIDTH;
        let tile =
            Tile { level: 0, index, width: archived.saturating_sub(index * WIDTH).min(WIDTH) };
        match tile_holds(self.archive, tile, first - index * WIDTH, &kept).await {
            Ok(problems) if problems.is_empty() => None,
            Ok(problems) => Some(problems.join("; ")),
            Err(e) => Some(e.to_string()),
        }
    }
}
