//! The chain step, pure: a head and a record in, the linked event and the new head out. The
//! writer appends with it, and every verifier and test builds or checks chains with it, so the
//! rule exists once.

use super::{Event, GENESIS_HASH, Record, event_hash};

/// The head of a chain: the last event's `seq` and hash (seq 0 and [`GENESIS_HASH`] before the
/// first event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chain {
    pub seq: i64,
    pub hash: [u8; 32],
}

impl Default for Chain {
    /// The chain before its first event.
    fn default() -> Self {
        Self { seq: 0, hash: GENESIS_HASH }
    }
}

impl Chain {
    /// Links `record` as the next event, named `event_id` and appended at `ts`; returns the
    /// event and the chain's new head. Empty texts are stored as NULL.
    // INVARIANT: seq is contiguous and each prev_hash is the hash of the event before.
    pub fn link(self, record: Record, event_id: String, ts: String) -> (Event, Self) {
        let mut event = Event {
            seq: self.seq + 1,
            event_id,
            ts,
            record: record.without_empty_texts(),
            prev_hash: hex::encode(self.hash),
            hash: String::new(),
        };
        let hash = event_hash(&self.hash, &event);
        event.hash = hex::encode(hash);
        let head = Self { seq: event.seq, hash };
        (event, head)
    }

    /// The seq the next event must have.
    pub fn next_seq(self) -> i64 {
        self.seq + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kind, Verifier};

    #[test]
    fn linked_events_verify_and_carry_the_head_forward() {
        let mut chain = Chain::default();
        let mut verifier = Verifier::default();
        for i in 0..3 {
            let record = Record { reason: Some(String::new()), ..Record::new(Kind::Decision) };
            let (event, next) = chain.link(record, format!("e{i}"), "t".into());
            assert_eq!(event.seq, i + 1);
            assert_eq!(event.record.reason, None, "an empty text is stored as NULL");
            assert_eq!(event.prev_hash, hex::encode(chain.hash));
            assert!(verifier.check(&event).is_empty());
            chain = next;
        }
        assert_eq!(chain.seq, 3);
    }
}
