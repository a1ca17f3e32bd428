//! Verification of a hash chain, one event at a time, in constant memory. It does not stop at
//! the first problem: every broken place is reported, so an auditor sees the whole damage.

use std::fmt;

use super::{Chain, Event, Hash, event_hash, leaf_hash};

/// A place where the chain is broken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The event's stored hash is not the hash of its content: it was modified.
    HashMismatch { seq: i64 },
    /// Events `from..=to` are missing.
    Gap { from: i64, to: i64 },
    /// The event's `prev_hash` is not the previous event's hash: an event before it was
    /// replaced, or the events were reordered.
    BrokenLink { seq: i64 },
    /// The event's `seq` does not follow the previous one (repeated or out of order).
    OutOfOrder { seq: i64, expected: i64 },
    /// A stored hash is not 64 hex digits.
    Malformed { seq: i64, field: &'static str },
    /// An exported row is not in the trail it is checked against.
    NotInTrail { seq: i64 },
    /// An exported row differs from the trail's event at its `seq`.
    DiffersFromTrail { seq: i64 },
    /// An exported row could not be read (`line` of the file).
    Unreadable { line: u64, message: String },
    /// The export does not match its manifest.
    ManifestMismatch { what: String },
    /// The trail has fewer events than a checkpoint covers: its tail was cut off.
    ShorterThanCheckpoint { size: u64, events: u64 },
    /// The tree of the first `size` events does not have the checkpoint's root: the history
    /// the checkpoint signed was rewritten (or the checkpoint is not this trail's).
    CheckpointRoot { size: u64, seq: i64 },
    /// A checkpoint on the trail is not signed by the key given, or does not read.
    CheckpointUnsigned { seq: i64, why: String },
    /// A checkpoint on the trail claims a tree other than that of every event before it.
    CheckpointMisplaced { seq: i64, size: u64 },
    /// Fewer of the witnesses given cosigned the checkpoint than were required.
    TooFewCosignatures { required: usize, valid: usize },
    /// An exported row's inclusion proof does not lead to the checkpoint's root (or it has
    /// none, or the checkpoint does not cover it).
    NotProven { seq: i64 },
    /// The file's record of a prune is not what the `prune` event at `seq` on the chain says.
    PruneUnrecorded { seq: i64 },
    /// The `prune` event at `seq` is not covered by a checkpoint signed by the keys given, or
    /// the first event kept is not a checkpoint so signed of exactly what was pruned.
    PruneUnsigned { seq: i64 },
    /// The checkpoint given covers `size` events, some of them pruned from the file, which
    /// therefore cannot be checked against it.
    CheckpointPruned { size: u64 },
    /// A store holds `count` events at or below `seq`, where its record of a prune says its
    /// copy starts after: they came in after the prune, around the checks.
    BelowCut { seq: i64, count: i64 },
}

impl Problem {
    /// The `seq` at which the problem shows.
    pub fn seq(&self) -> i64 {
        match *self {
            Self::HashMismatch { seq }
            | Self::BrokenLink { seq }
            | Self::OutOfOrder { seq, .. }
            | Self::Malformed { seq, .. }
            | Self::NotInTrail { seq }
            | Self::DiffersFromTrail { seq }
            | Self::NotProven { seq }
            | Self::PruneUnrecorded { seq }
            | Self::PruneUnsigned { seq }
            | Self::BelowCut { seq, .. } => seq,
            Self::Gap { from, .. } => from,
            Self::CheckpointRoot { seq, .. }
            | Self::CheckpointUnsigned { seq, .. }
            | Self::CheckpointMisplaced { seq, .. } => seq,
            Self::ShorterThanCheckpoint { events, .. } => i64::try_from(events + 1).unwrap_or(0),
            Self::Unreadable { .. }
            | Self::ManifestMismatch { .. }
            | Self::TooFewCosignatures { .. }
            | Self::CheckpointPruned { .. } => 0,
        }
    }

    /// A short name of the kind of problem.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::HashMismatch { .. } => "hash_mismatch",
            Self::Gap { .. } => "gap",
            Self::BrokenLink { .. } => "broken_link",
            Self::OutOfOrder { .. } => "out_of_order",
            Self::Malformed { .. } => "malformed",
            Self::NotInTrail { .. } => "not_in_trail",
            Self::DiffersFromTrail { .. } => "differs_from_trail",
            Self::Unreadable { .. } => "unreadable",
            Self::ManifestMismatch { .. } => "manifest_mismatch",
            Self::ShorterThanCheckpoint { .. } => "shorter_than_checkpoint",
            Self::CheckpointRoot { .. } => "checkpoint_root",
            Self::CheckpointUnsigned { .. } => "checkpoint_unsigned",
            Self::CheckpointMisplaced { .. } => "checkpoint_misplaced",
            Self::TooFewCosignatures { .. } => "too_few_cosignatures",
            Self::NotProven { .. } => "not_proven",
            Self::PruneUnrecorded { .. } => "prune_unrecorded",
            Self::PruneUnsigned { .. } => "prune_unsigned",
            Self::CheckpointPruned { .. } => "checkpoint_pruned",
            Self::BelowCut { .. } => "below_cut",
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HashMismatch { seq } => {
                write!(f, "seq {seq}: hash mismatch (the event was modified)")
            }
            Self::Gap { from, to } if from == to => write!(f, "seq {from}: missing"),
            Self::Gap { from, to } => write!(f, "seq {from}..{to}: missing"),
            Self::BrokenLink { seq } => {
                write!(f, "seq {seq}: broken link (prev_hash is not the hash of the event before)")
            }
            Self::OutOfOrder { seq, expected } => {
                write!(f, "seq {seq}: out of order (expected seq {expected})")
            }
            Self::Malformed { seq, field } => write!(f, "seq {seq}: {field} is not 64 hex digits"),
            Self::NotInTrail { seq } => write!(f, "seq {seq}: not in the trail"),
            Self::DiffersFromTrail { seq } => {
                write!(f, "seq {seq}: differs from the trail's event")
            }
            Self::Unreadable { line, message } => write!(f, "line {line}: unreadable: {message}"),
            Self::ManifestMismatch { what } => write!(f, "manifest: {what}"),
            Self::ShorterThanCheckpoint { size, events } => write!(
                f,
                "the trail is shorter than the checkpoint: {events} events, the checkpoint covers {size} (the tail was cut off)"
            ),
            Self::CheckpointRoot { size, seq: 0 } => write!(
                f,
                "the root of the first {size} events differs from the checkpoint's (the history was rewritten)"
            ),
            Self::CheckpointRoot { size, seq } => write!(
                f,
                "seq {seq}: the root of the first {size} events differs from this checkpoint's (the history was rewritten)"
            ),
            Self::CheckpointUnsigned { seq, why } => {
                write!(f, "seq {seq}: the checkpoint does not verify: {why}")
            }
            Self::CheckpointMisplaced { seq, size } => write!(
                f,
                "seq {seq}: the checkpoint covers {size} events, not the {} before it",
                seq - 1
            ),
            Self::TooFewCosignatures { required, valid } => write!(
                f,
                "the checkpoint has {valid} valid cosignature(s) by the witnesses given, {required} required"
            ),
            Self::NotProven { seq } => write!(
                f,
                "seq {seq}: no inclusion proof leads to the checkpoint's root (the row is not in the signed tree)"
            ),
            Self::PruneUnrecorded { seq } => write!(
                f,
                "seq {seq}: the file's record of this prune differs from the prune event (or the event does not read)"
            ),
            Self::PruneUnsigned { seq } => write!(
                f,
                "seq {seq}: this prune is not signed: no checkpoint signed by the keys given covers it, or the first event kept is not one signing what it pruned"
            ),
            Self::CheckpointPruned { size } => write!(
                f,
                "the checkpoint given covers {size} events, some pruned from this file: check it against the archive (toolgate archive verify) or give a later one"
            ),
            Self::BelowCut { seq, count } => write!(
                f,
                "seq {seq}: {count} event(s) at or below this seq are stored, where retention dropped the store's copy through it (they came in after the prune)"
            ),
        }
    }
}

/// What the chain rules need of an event: its place, its two stored hashes, and whether its
/// content hashes to the stored `hash`. Verifying from links spares building whole events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub seq: i64,
    /// The stored `prev_hash`; `None` when it is not 64 hex digits.
    pub prev_hash: Option<[u8; 32]>,
    /// The stored `hash`; `None` when it is not 64 hex digits.
    pub hash: Option<[u8; 32]>,
    /// The hash of the content, chained from the stored `prev_hash`, equals the stored `hash`.
    pub content_matches: bool,
    /// The event's leaf in the Merkle tree: SHA-256(0x00 ‖ stored hash), of zeros when the
    /// stored hash is malformed (which is reported on its own).
    pub leaf: Hash,
}

impl Link {
    /// The link of an event.
    pub fn of(event: &Event) -> Self {
        let prev_hash = decode(&event.prev_hash);
        let hash = decode(&event.hash);
        let content_matches = match (prev_hash, hash) {
            (Some(prev), Some(hash)) => event_hash(&prev, event) == hash,
            _ => false,
        };
        let leaf = leaf_hash(&hash.unwrap_or_default());
        Self { seq: event.seq, prev_hash, hash, content_matches, leaf }
    }
}

/// Walks a chain fed to it in order.
#[derive(Debug)]
pub struct Verifier {
    /// The last event checked (or the one before the first to check).
    head: Chain,
    checked: u64,
    /// Gaps are expected (a filtered export): each event's own hash is checked, and the link
    /// only between events whose `seq` follow each other.
    filtered: bool,
    /// The previous event is unknown: the next link is not checked.
    unlinked: bool,
}

impl Default for Verifier {
    /// A verifier for a whole chain, from seq 1.
    fn default() -> Self {
        Self { head: Chain::default(), checked: 0, filtered: false, unlinked: false }
    }
}

impl Verifier {
    /// A verifier for the chain from `seq` on, whose previous event has hash `prev_hash`.
    pub fn starting_at(seq: i64, prev_hash: [u8; 32]) -> Self {
        Self { head: Chain { seq: seq - 1, hash: prev_hash }, ..Self::default() }
    }

    /// A verifier for the chain from `seq` on, whose previous event is unknown (missing): the
    /// first event's link is not checked.
    pub fn starting_unlinked(seq: i64) -> Self {
        Self { unlinked: true, ..Self::starting_at(seq, [0; 32]) }
    }

    /// A verifier for events selected by a filter: gaps between them are expected.
    pub fn filtered() -> Self {
        Self { filtered: true, ..Self::default() }
    }

    /// Checks the next event and returns what is wrong at it.
    pub fn check(&mut self, event: &Event) -> Vec<Problem> {
        self.check_link(&Link::of(event))
    }

    /// Checks the next event, given as its link.
    pub fn check_link(&mut self, link: &Link) -> Vec<Problem> {
        let mut problems = Vec::new();
        let seq = link.seq;
        let expected = self.head.next_seq();
        let after_gap = seq > expected;
        if after_gap && !self.filtered {
            problems.push(Problem::Gap { from: expected, to: seq - 1 });
        } else if seq < expected {
            // A displaced row: its own hash is checked, its link is not (the order is the
            // finding), and the walk goes on from the furthest row read, so the rows after it
            // are not reported for its sake.
            problems.push(Problem::OutOfOrder { seq, expected });
            self.checked += 1;
            match (link.prev_hash, link.hash) {
                (Some(_), Some(_)) if !link.content_matches => {
                    problems.push(Problem::HashMismatch { seq });
                }
                (None, _) => problems.push(Problem::Malformed { seq, field: "prev_hash" }),
                (_, None) => problems.push(Problem::Malformed { seq, field: "hash" }),
                _ => {}
            }
            return problems;
        }
        self.checked += 1;
        self.head.seq = seq;

        let Some(prev_hash) = link.prev_hash else {
            // Its content cannot be checked without it, but its own hash still links the next
            // event: no false broken link at seq + 1.
            problems.push(Problem::Malformed { seq, field: "prev_hash" });
            self.unlinked = false;
            match link.hash {
                Some(stored) => self.head.hash = stored,
                None => problems.push(Problem::Malformed { seq, field: "hash" }),
            }
            return problems;
        };
        // After a gap the previous event is unknown: the gap is the finding, not the link.
        let unlinked = std::mem::take(&mut self.unlinked);
        if !after_gap && !unlinked && prev_hash != self.head.hash {
            problems.push(Problem::BrokenLink { seq });
        }
        match link.hash {
            Some(stored) => {
                if !link.content_matches {
                    problems.push(Problem::HashMismatch { seq });
                }
                self.head.hash = stored;
            }
            None => problems.push(Problem::Malformed { seq, field: "hash" }),
        }
        problems
    }

    /// How many events were checked.
    pub fn checked(&self) -> u64 {
        self.checked
    }
}

/// A stored hash as bytes; `None` when it is not 64 hex digits.
pub fn decode(hash: &str) -> Option<[u8; 32]> {
    decode_hex(hash.as_bytes())
}

/// 64 hex digits (either case) as 32 bytes. Verification decodes two per event; a digit's
/// value comes from a table, without a branch per digit (random digits mispredict, and the
/// branching decoders showed as 14% of a verification).
pub fn decode_hex(hex: &[u8]) -> Option<[u8; 32]> {
    const INVALID: u8 = 0xff;
    const TABLE: [u8; 256] = {
        let mut table = [INVALID; 256];
        let mut i = 0;
        while i < 10 {
            table[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            table[b'a' as usize + i] = 10 + i as u8;
            table[b'A' as usize + i] = 10 + i as u8;
            i += 1;
        }
        table
    };
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0; 32];
    let mut seen = 0;
    for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        let (high, low) = (TABLE[usize::from(pair[0])], TABLE[usize::from(pair[1])]);
        seen |= high | low;
        *byte = high << 4 | low;
    }
    (seen & 0xf0 == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kind, Record};

    fn chain(n: i64) -> Vec<Event> {
        let mut head = Chain::default();
        (1..=n)
            .map(|seq| {
                let record =
                    Record { tool: Some(format!("tool{seq}")), ..Record::new(Kind::Decision) };
                let (event, next) = head.link(
                    record,
                    format!("e{seq}"),
                    format!("2026-11-30T00:00:{seq:02}.000000Z"),
                );
                head = next;
                event
            })
            .collect()
    }

    fn verify(events: &[Event]) -> Vec<Problem> {
        let mut verifier = Verifier::default();
        events.iter().flat_map(|e| verifier.check(e)).collect()
    }

    #[test]
    fn an_intact_chain_has_no_problems() {
        assert_eq!(verify(&chain(10)), vec![]);
    }

    #[test]
    fn an_edited_field_is_a_hash_mismatch_at_its_seq() {
        let mut events = chain(10);
        events[3].record.tool = Some("bash".into());
        assert_eq!(verify(&events), vec![Problem::HashMismatch { seq: 4 }]);
    }

    #[test]
    fn an_edit_with_a_recomputed_hash_breaks_the_next_link() {
        let mut events = chain(10);
        events[3].record.tool = Some("bash".into());
        let prev = decode(&events[3].prev_hash).unwrap();
        events[3].hash = hex::encode(event_hash(&prev, &events[3]));
        assert_eq!(verify(&events), vec![Problem::BrokenLink { seq: 5 }]);
    }

    #[test]
    fn a_deleted_event_is_a_gap() {
        let mut events = chain(10);
        events.remove(6);
        assert_eq!(verify(&events), vec![Problem::Gap { from: 7, to: 7 }]);
    }

    #[test]
    fn a_missing_start_is_a_gap() {
        let events = chain(10);
        assert_eq!(verify(&events[2..]), vec![Problem::Gap { from: 1, to: 2 }]);
    }

    #[test]
    fn swapped_events_are_reported_where_they_stand() {
        let mut events = chain(10);
        events.swap(2, 3);
        let problems = verify(&events);
        assert!(problems.contains(&Problem::Gap { from: 3, to: 3 }), "{problems:?}");
        assert!(problems.contains(&Problem::OutOfOrder { seq: 3, expected: 5 }), "{problems:?}");
    }

    #[test]
    fn swapped_contents_under_kept_seqs_are_hash_mismatches() {
        let mut events = chain(10);
        let (a, b) = (events[2].record.clone(), events[3].record.clone());
        events[2].record = b;
        events[3].record = a;
        assert_eq!(
            verify(&events),
            vec![Problem::HashMismatch { seq: 3 }, Problem::HashMismatch { seq: 4 }]
        );
    }

    #[test]
    fn a_filtered_selection_checks_hashes_and_consecutive_links_but_not_gaps() {
        let events = chain(10);
        let selected: Vec<_> = [1, 2, 5, 8, 9].iter().map(|&i| events[i].clone()).collect();
        let mut verifier = Verifier::filtered();
        assert!(selected.iter().all(|e| verifier.check(e).is_empty()));

        let mut edited = selected.clone();
        edited[2].record.tool = Some("bash".into());
        let mut swapped = selected.clone();
        swapped.swap(3, 4);
        let mut verifier = Verifier::filtered();
        let found: Vec<_> = edited.iter().flat_map(|e| verifier.check(e)).collect();
        assert_eq!(found, vec![Problem::HashMismatch { seq: 6 }]);
        let mut verifier = Verifier::filtered();
        let found: Vec<_> = swapped.iter().flat_map(|e| verifier.check(e)).collect();
        assert!(found.contains(&Problem::OutOfOrder { seq: 9, expected: 11 }), "{found:?}");
    }

    #[test]
    fn a_range_starts_from_the_hash_of_the_event_before_it() {
        let events = chain(10);
        let prev = decode(&events[3].hash).unwrap();
        let mut verifier = Verifier::starting_at(5, prev);
        assert!(events[4..].iter().all(|e| verifier.check(e).is_empty()));
    }

    #[test]
    fn a_range_whose_previous_event_is_unknown_skips_only_its_first_link() {
        let mut events = chain(10);
        let mut verifier = Verifier::starting_unlinked(5);
        assert!(events[4..].iter().all(|e| verifier.check(e).is_empty()));
        events[7].prev_hash = events[4].hash.clone();
        let mut verifier = Verifier::starting_unlinked(5);
        let found: Vec<_> = events[4..].iter().flat_map(|e| verifier.check(e)).collect();
        assert_eq!(found, vec![Problem::BrokenLink { seq: 8 }, Problem::HashMismatch { seq: 8 }]);
    }

    #[test]
    fn every_problem_is_reported_not_only_the_first() {
        let mut events = chain(10);
        events[1].record.tool = Some("bash".into());
        events.remove(7);
        assert_eq!(
            verify(&events),
            vec![Problem::HashMismatch { seq: 2 }, Problem::Gap { from: 8, to: 8 }]
        );
    }

    #[test]
    fn a_malformed_prev_hash_is_reported_at_its_event_only() {
        let mut events = chain(10);
        events[2].prev_hash = "z".repeat(64);
        assert_eq!(verify(&events), vec![Problem::Malformed { seq: 3, field: "prev_hash" }]);
    }

    #[test]
    fn hex_decodes_as_the_hex_crate_does() {
        for text in ["00".repeat(32), "ff".repeat(32), "AbCdEf0123456789".repeat(4)] {
            let mut expected = [0; 32];
            hex::decode_to_slice(&text, &mut expected).unwrap();
            assert_eq!(decode(&text), Some(expected), "{text}");
        }
        for bad in [
            "0".repeat(63),
            "0".repeat(65),
            format!("{}g", "0".repeat(63)),
            format!("{} ", "0".repeat(63)),
        ] {
            assert_eq!(decode(&bad), None, "{bad}");
        }
    }

    #[test]
    fn a_single_bit_flip_anywhere_in_a_hash_is_detected() {
        let events = chain(3);
        for i in 0..64 {
            let mut mutated = events.clone();
            let mut bytes = mutated[1].hash.clone().into_bytes();
            bytes[i] = if bytes[i] == b'0' { b'1' } else { b'0' };
            mutated[1].hash = String::from_utf8(bytes).unwrap();
            assert!(!verify(&mutated).is_empty(), "flip at {i} undetected");
        }
    }
}
