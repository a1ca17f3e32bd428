//! The checks of a batch a node ships, against what the store holds of the node. Pure, so that
//! the costly part (hashing every event's content) runs before the node's lock is taken, and
//! the rest is tested without a store. The first event that does not fit names the refusal;
//! a refused batch is refused whole.

use std::collections::HashMap;

use crate::proto;
use crate::trail::checkpoint::Checkpoint;
use crate::trail::cosignature::{CosignatureVerifier, Witnesses};
use crate::trail::note::{Note, NoteVerifier};
use crate::trail::{Event, Frontier, Hash, Kind, Link, verify_consistency};
use crate::wire::event_from_proto;

/// Why a batch (or a cosignature) was refused: the first seq that did not fit, when there is
/// one, and what differed. Recorded as an alarm, and told to the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub seq: Option<i64>,
    pub what: String,
}

/// The most bytes of a later checkpoint's note a batch may come with (a checkpoint is a few
/// hundred).
const MAX_NOTE: usize = 8192;

/// The most characters of a refusal's text: it may quote what a node sent.
const MAX_WHAT: usize = 512;

impl Refusal {
    pub fn at(seq: i64, what: impl Into<String>) -> Self {
        Self { seq: Some(seq), what: shown(&what.into()) }
    }

    pub fn whole(what: impl Into<String>) -> Self {
        Self { seq: None, what: shown(&what.into()) }
    }
}

/// A refusal's text as it is stored, logged and told: its control characters escaped (a NUL
/// would keep PostgreSQL from storing the alarm; a newline would forge a log line), at most
/// [`MAX_WHAT`] characters.
fn shown(what: &str) -> String {
    let mut shown = String::new();
    for c in what.chars() {
        if shown.chars().count() >= MAX_WHAT {
            shown.push('…');
            break;
        }
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.seq {
            Some(seq) => write!(f, "seq {seq}: {}", self.what),
            None => f.write_str(&self.what),
        }
    }
}

/// A batch as read from the wire: each event with its link (its content hashed), and the
/// cosignatures of its checkpoints.
#[derive(Debug)]
pub struct Batch {
    events: Vec<Event>,
    links: Vec<Link>,
    cosignatures: Vec<proto::Cosignature>,
    /// A later checkpoint said to cover the events, cosigned.
    witnessed: Option<proto::Witnessed>,
}

/// What the store holds of the node, read under its lock.
#[derive(Debug, Clone)]
pub struct Held {
    /// The node's tree over every stored event (its size is the last stored seq).
    pub frontier: Frontier,
    /// The last stored event's hash (the genesis hash when none is).
    pub hash: String,
    /// The node's registered checkpoint verifier key.
    pub key: Option<String>,
    /// The last seq retention dropped from the store, and its hash: events up to it are no
    /// longer there to compare a batch with, and are passed over, but the one at the cut
    /// must have the hash recorded there.
    pub pruned: Option<(i64, String)>,
}

/// A batch that extends what the store holds.
#[derive(Debug)]
pub struct Checked<'a> {
    /// The events to store: those after the stored head, in seq order.
    pub new: &'a [Event],
    /// The node's tree over every stored event once they are.
    pub frontier: Frontier,
    /// The witnesses' cosignatures of the checkpoints among `new`, each verified.
    pub cosignatures: Vec<&'a proto::Cosignature>,
    /// The fleet requires witnesses, and the batch's events after its last checkpoint they
    /// cosigned are left out of `new`.
    pub awaiting: bool,
}

/// Whether `text` is a SHA-256 as the trail writes it: 64 lower-case hex digits.
fn lower_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl Batch {
    /// Reads the wire's events; refuses the first that no trail could hold.
    pub fn read(
        events: Vec<proto::Event>,
        cosignatures: Vec<proto::Cosignature>,
        witnessed: Option<proto::Witnessed>,
    ) -> Result<Self, Refusal> {
        let mut read: Vec<Event> = Vec::with_capacity(events.len());
        for event in events {
            let seq = i64::try_from(event.seq).unwrap_or(i64::MAX);
            let event = event_from_proto(event)
                .map_err(|e| Refusal::at(seq, format!("an event that does not read: {e}")))?;
            if read.last().is_some_and(|last| last.seq >= seq) {
                return Err(Refusal::at(seq, "not in seq order (each event after the one before)"));
            }
            // PostgreSQL's text holds no NUL: such a batch could never be stored, so it is
            // refused (and recorded) rather than failing as the store's error for ever.
            let nul = event.cells().into_iter().flatten().any(|cell| match cell {
                crate::trail::Value::Text(text) => text.contains(&0),
                crate::trail::Value::Integer(_) => false,
            });
            if nul {
                return Err(Refusal::at(seq, "an event with a NUL character in a text"));
            }
            read.push(event);
        }
        let links = read.iter().map(Link::of).collect();
        if let Some(later) = witnessed.as_ref().filter(|w| w.note.len() > MAX_NOTE) {
            return Err(Refusal::at(
                later.seq,
                format!("a checkpoint note of more than {MAX_NOTE} bytes"),
            ));
        }
        Ok(Self { events: read, links, cosignatures, witnessed })
    }

    /// The seqs of the batch's events the store holds already (up to its tree's size, after
    /// what retention dropped).
    pub fn held_seqs(&self, held: &Held) -> Vec<i64> {
        let size = i64::try_from(held.frontier.size()).unwrap_or(i64::MAX);
        let pruned = held.pruned.as_ref().map_or(0, |(through, _)| *through);
        let held = |seq: &i64| *seq > pruned && *seq <= size;
        self.events.iter().map(|e| e.seq).filter(held).collect()
    }

    /// Checks the batch against what the store holds: `held`, and `stored`, the stored hashes
    /// of the events of [`Batch::held_seqs`]. Events the store holds must be shipped unchanged;
    /// the new ones must follow on from its head, seq by seq, each linked to the one before;
    /// each checkpoint must be of the store's own tree of the events before it, signed by the
    /// node's registered key; each cosignature of a new checkpoint must verify. When the fleet
    /// requires `witnesses`, the new events stop at the last checkpoint they cosigned.
    pub fn check(
        &self,
        held: &Held,
        stored: &HashMap<i64, String>,
        witnesses: &Witnesses,
    ) -> Result<Checked<'_>, Refusal> {
        let size = i64::try_from(held.frontier.size()).unwrap_or(i64::MAX);
        let mut frontier = held.frontier.clone();
        let mut prev = held.hash.as_str();
        let mut first_new = None;
        let mut cosignatures = Vec::new();
        // Where the stored events end when the fleet requires witnesses: after the last
        // checkpoint they cosigned, with the tree there.
        let mut witnessed: Option<(usize, Frontier)> = None;
        for (i, (event, link)) in self.events.iter().zip(&self.links).enumerate() {
            let seq = event.seq;
            if !lower_hex(&event.hash) || !lower_hex(&event.prev_hash) || !link.content_matches {
                return Err(Refusal::at(
                    seq,
                    "hash mismatch (the event's content does not hash to its hash)",
                ));
            }
            if stored_already(event, held, (stored, size), first_new.is_none())? {
                continue;
            }
            let next = size + 1 + i64::try_from(i - first_new.unwrap_or(i)).unwrap_or(0);
            if seq != next {
                return Err(Refusal::at(
                    seq,
                    format!("not next (the store holds up to seq {})", next - 1),
                ));
            }
            if event.prev_hash != prev {
                return Err(Refusal::at(
                    seq,
                    format!("broken link (prev_hash is not the stored hash of seq {})", next - 1),
                ));
            }
            let mut lines = None;
            if event.record.kind == Kind::Checkpoint {
                checkpoint(event, &frontier, held.key.as_deref())?;
                let note = event.record.note.as_deref().unwrap_or_default();
                let its: Vec<&proto::Cosignature> =
                    self.cosignatures.iter().filter(|c| c.seq == seq).collect();
                for c in &its {
                    cosignature(c, Some(note), None)?;
                }
                lines = Some(its.iter().map(|c| c.line.clone()).collect::<Vec<_>>());
                cosignatures.extend(its);
            }
            frontier.push_leaf(link.leaf);
            prev = &event.hash;
            first_new.get_or_insert(i);
            let note = event.record.note.as_deref().unwrap_or_default();
            if lines.is_some_and(|lines| witnesses.satisfied(note, &lines)) {
                witnessed = Some((i + 1, frontier.clone()));
            }
        }
        let Some(first) = first_new else {
            return Ok(Checked { new: &[], frontier, cosignatures, awaiting: false });
        };
        if witnesses.required == 0 {
            let new = &self.events[first..];
            return Ok(Checked { new, frontier, cosignatures, awaiting: false });
        }
        // A later checkpoint, cosigned, may cover every event of the batch.
        let later =
            self.witnessed.as_ref().filter(|w| w.seq > self.events.last().map_or(0, |e| e.seq));
        if let Some(later) = later
            && covers(later, &frontier, held.key.as_deref(), witnesses)?
        {
            let new = &self.events[first..];
            return Ok(Checked { new, frontier, cosignatures, awaiting: false });
        }
        let (end, frontier) = witnessed.unwrap_or((first, held.frontier.clone()));
        let new = &self.events[first..end];
        let last = new.last().map_or(0, |e| e.seq);
        cosignatures.retain(|c| c.seq <= last);
        Ok(Checked { new, frontier, cosignatures, awaiting: end < self.events.len() })
    }
}

/// Whether `event` is one retention dropped (only the hash at the cut is left to compare) or,
/// while no new one has come (`before_new`), one the store already holds (the same hash); a
/// rewrite of either is refused. `false` for an event past the store's end (`size`).
fn stored_already(
    event: &Event,
    held: &Held,
    (stored, size): (&HashMap<i64, String>, i64),
    before_new: bool,
) -> Result<bool, Refusal> {
    let seq = event.seq;
    if let Some((through, hash)) = held.pruned.as_ref().filter(|(t, _)| seq <= *t) {
        if seq == *through && event.hash != *hash {
            let what = format!(
                "rewritten (retention recorded hash {hash} at its cut, the node shipped {})",
                event.hash
            );
            return Err(Refusal::at(seq, what));
        }
        return Ok(true);
    }
    if !before_new || !(1..=size).contains(&seq) {
        return Ok(false);
    }
    match stored.get(&seq) {
        Some(hash) if *hash == event.hash => Ok(true),
        Some(hash) => Err(Refusal::at(
            seq,
            format!("rewritten (the store holds hash {hash}, the node shipped {})", event.hash),
        )),
        None => Err(Refusal::at(seq, "rewritten (the store holds no such event)")),
    }
}

/// Checks a checkpoint event against the store's tree of the events before it and the node's
/// registered key.
fn checkpoint(event: &Event, tree: &Frontier, key: Option<&str>) -> Result<(), Refusal> {
    let seq = event.seq;
    let note = event.record.note.as_deref().unwrap_or_default();
    let read = Checkpoint::read(note)
        .map_err(|e| Refusal::at(seq, format!("a checkpoint that does not read: {e}")))?;
    if read.size != tree.size() {
        return Err(Refusal::at(
            seq,
            format!(
                "a checkpoint of size {} where the store's tree has {} events",
                read.size,
                tree.size()
            ),
        ));
    }
    if read.root != tree.root() {
        return Err(Refusal::at(
            seq,
            format!(
                "a checkpoint whose root is not the root of the {} events the store holds before it",
                tree.size()
            ),
        ));
    }
    signed(seq, note, key).map(|_| ())
}

/// The checkpoint `note` of the event at `seq`, signed by the node's registered `key`.
fn signed(seq: i64, note: &str, key: Option<&str>) -> Result<Checkpoint, Refusal> {
    let read = Checkpoint::read(note)
        .map_err(|e| Refusal::at(seq, format!("a checkpoint that does not read: {e}")))?;
    let Some(key) = key else {
        return Err(Refusal::at(seq, "a checkpoint from a node registered without a verifier key"));
    };
    let verifier = NoteVerifier::parse(key)
        .map_err(|e| Refusal::at(seq, format!("the node's registered key does not read: {e}")))?;
    Note::open(note, &verifier).map_err(|_| {
        Refusal::at(
            seq,
            format!(
                "a checkpoint not signed by the node's registered key {}+{:08x}",
                verifier.key.name, verifier.key.id
            ),
        )
    })?;
    Ok(read)
}

/// Whether `later`, a checkpoint after the batch, covers the batch's events (whose tree is
/// `tree`) with the cosignatures `witnesses` requires: signed by the node's key, each
/// cosignature verified, and its tree proven to extend theirs. A forged one is refused;
/// one too few witnesses cosigned covers nothing.
fn covers(
    later: &proto::Witnessed,
    tree: &Frontier,
    key: Option<&str>,
    witnesses: &Witnesses,
) -> Result<bool, Refusal> {
    let checkpoint = signed(later.seq, &later.note, key)?;
    if i64::try_from(checkpoint.size).ok() != later.seq.checked_sub(1) {
        return Err(Refusal::at(
            later.seq,
            format!(
                "a checkpoint of size {} said to be the event at seq {}",
                checkpoint.size, later.seq
            ),
        ));
    }
    // Only the fleet's witnesses count, each once: the others are not even verified.
    let mut counted: Vec<&proto::Cosignature> = Vec::new();
    for c in &later.cosignatures {
        if c.seq != later.seq {
            return Err(Refusal::at(
                c.seq,
                "a cosignature of another checkpoint than it came with",
            ));
        }
        if witnesses.knows(&c.witness) && !counted.iter().any(|k| k.witness == c.witness) {
            cosignature(c, Some(&later.note), None)?;
            counted.push(c);
        }
    }
    let proof: Option<Vec<Hash>> =
        later.proof.iter().map(|h| <[u8; 32]>::try_from(h.as_slice()).ok()).collect();
    let proven = proof.is_some_and(|proof| {
        let (old, new) = (tree.size(), checkpoint.size);
        verify_consistency(old, new, &tree.root(), &checkpoint.root, &proof)
    });
    if !proven || checkpoint.size < tree.size() {
        return Err(Refusal::at(
            later.seq,
            format!(
                "a later checkpoint whose tree is not proven to extend the {} events stored",
                tree.size()
            ),
        ));
    }
    let lines: Vec<String> = counted.iter().map(|c| c.line.clone()).collect();
    Ok(witnesses.satisfied(&later.note, &lines))
}

/// Checks a witness's cosignature of the node's event at its seq: `checkpoint` is that event's
/// note when the store holds a checkpoint there, `held` the line the store holds already for
/// that checkpoint and witness. The cosignature must verify, by the witness's key, over the
/// checkpoint, at the time it says.
pub fn cosignature(
    c: &proto::Cosignature,
    checkpoint: Option<&str>,
    held: Option<&str>,
) -> Result<(), Refusal> {
    let seq = c.seq;
    let Some(note) = checkpoint else {
        return Err(Refusal::at(seq, "a cosignature of an event that is not a stored checkpoint"));
    };
    let size = Checkpoint::read(note).map(|cp| cp.size).ok();
    if size != Some(c.size) {
        return Err(Refusal::at(
            seq,
            format!("a cosignature of size {} for a checkpoint of another size", c.size),
        ));
    }
    let one_line = c.line.ends_with('\n') && c.line.matches('\n').count() == 1;
    let verifier = CosignatureVerifier::parse(&c.witness).ok();
    let note = Note::parse(&format!("{note}{}", c.line)).ok();
    let time = match (one_line, verifier, note) {
        (true, Some(verifier), Some(note)) => verifier.cosigned(&note),
        _ => None,
    };
    if time != Some(c.time) {
        return Err(Refusal::at(seq, "a cosignature that does not verify by its witness's key"));
    }
    if held.is_some_and(|line| line != c.line) {
        return Err(Refusal::at(
            seq,
            "a cosignature by the same witness unlike the one the store holds",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::{GENESIS_HASH, Record, event_hash};
    use crate::wire::event_to_proto;

    /// `n` chained decisions from seq 1.
    fn trail(n: i64) -> Vec<Event> {
        let mut prev = GENESIS_HASH;
        (1..=n)
            .map(|seq| {
                let mut event = Event {
                    seq,
                    event_id: format!("e{seq}"),
                    ts: "2026-12-03T12:00:00.000000Z".into(),
                    record: Record::new(Kind::Decision),
                    prev_hash: hex::encode(prev),
                    hash: String::new(),
                };
                prev = event_hash(&prev, &event);
                event.hash = hex::encode(prev);
                event
            })
            .collect()
    }

    fn batch(events: &[Event]) -> Batch {
        let events = events.iter().cloned().map(event_to_proto).collect();
        Batch::read(events, Vec::new(), None).unwrap()
    }

    /// What the store holds after events 1 … `size`, of which retention dropped 1 … `pruned`.
    fn held(events: &[Event], size: usize, pruned: usize) -> Held {
        let mut frontier = Frontier::default();
        for event in &events[..size] {
            frontier.push(&crate::trail::decode(&event.hash).unwrap());
        }
        let pruned = Some((pruned as i64, events[pruned - 1].hash.clone()));
        Held { frontier, hash: events[size - 1].hash.clone(), key: None, pruned }
    }

    #[test]
    fn events_retention_dropped_are_passed_over_and_the_rest_checked_as_ever() {
        let events = trail(8);
        let held = held(&events, 6, 4);
        let replay = batch(&events[2..]);
        assert_eq!(replay.held_seqs(&held), [5, 6]);
        let stored: HashMap<i64, String> =
            events[4..6].iter().map(|e| (e.seq, e.hash.clone())).collect();
        let none = Witnesses::default();
        let checked = replay.check(&held, &stored, &none).unwrap();
        assert_eq!(checked.new.iter().map(|e| e.seq).collect::<Vec<_>>(), [7, 8]);
        // A kept event shipped changed is still a rewrite.
        let mut changed = stored.clone();
        changed.insert(5, events[0].hash.clone());
        assert_eq!(replay.check(&held, &changed, &none).unwrap_err().seq, Some(5));
        // And so is the event at the cut, shipped with another hash than the one recorded.
        let mut cut_changed = held.clone();
        cut_changed.pruned = Some((4, events[0].hash.clone()));
        let refused = replay.check(&cut_changed, &stored, &none).unwrap_err();
        assert_eq!(refused.seq, Some(4));
        assert!(refused.what.starts_with("rewritten (retention recorded hash"));
    }
}
