//! How many alarms a token may have stored a minute, on one ingest server. Every refusal is an
//! alarm, and an alarm is a row the node cannot suppress; a node with a valid token could also
//! make refusals without end, each a row. So a token's refusals of one kind (what the refusal
//! says, without what it quotes) are stored one by one up to [`PER_MINUTE`] a minute; the first
//! one past it stores a notice instead, that the rest of the minute's are only counted, and the
//! count goes to the log with the token's first refusal of that kind after the minute. A flood
//! of one kind cannot hide a refusal of another (a rewrite after a hundred junk calls), and the
//! table grows by at most [`PER_MINUTE`] + 1 rows a minute per token, kind and server.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Alarms stored one by one per token and minute.
pub const PER_MINUTE: u32 = 100;

const MINUTE: Duration = Duration::from_secs(60);

/// What to do with one more alarm of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spend {
    /// Store it.
    Record,
    /// Count it, and store the notice that the rest of the minute's are counted only.
    Notice,
    /// Count it only.
    Count,
}

/// One token's minute.
#[derive(Debug)]
struct Minute {
    started: Instant,
    recorded: u32,
    counted: u64,
}

/// The budgets of the tokens, by the token's hash and the refusal's kind (tokens the store
/// issued only: a refusal is stored once the token is known; and kinds are the refusals' own
/// texts, a few dozen).
#[derive(Debug, Default)]
pub struct Budget {
    minutes: Mutex<HashMap<(String, String), Minute>>,
}

/// A refusal's kind: its text up to the first thing it quotes or numbers (a seq, a hash, a
/// node id, an error).
pub fn kind(what: &str) -> &str {
    let end = what.find(|c: char| c.is_ascii_digit() || matches!(c, ':' | '(' | '"'));
    what[..end.unwrap_or(what.len())].trim_end()
}

impl Budget {
    /// Spends one alarm of kind `kind` of the token whose hash is `token` at `now`; with it, how
    /// many such alarms the token's last minute counted without storing them, if it ended.
    pub fn spend(&self, token: &str, kind: &str, now: Instant) -> (Spend, Option<u64>) {
        let mut minutes = self.minutes.lock().unwrap_or_else(|e| e.into_inner());
        let minute = minutes.entry((token.to_owned(), kind.to_owned())).or_insert(Minute {
            started: now,
            recorded: 0,
            counted: 0,
        });
        let mut ended = None;
        if now.duration_since(minute.started) >= MINUTE {
            ended = Some(minute.counted).filter(|&n| n > 0);
            *minute = Minute { started: now, recorded: 0, counted: 0 };
        }
        let spend = match (minute.recorded, minute.counted) {
            (n, _) if n < PER_MINUTE => Spend::Record,
            (_, 0) => Spend::Notice,
            _ => Spend::Count,
        };
        match spend {
            Spend::Record => minute.recorded += 1,
            Spend::Notice | Spend::Count => minute.counted += 1,
        }
        (spend, ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_stores_its_minutes_budget_then_a_notice_then_counts_until_the_next_minute() {
        let budget = Budget::default();
        let start = Instant::now();
        let spend = |token, kind, at| budget.spend(token, kind, at);
        let spent: Vec<Spend> = (0..PER_MINUTE).map(|_| spend("a", "k", start).0).collect();
        assert!(spent.iter().all(|s| *s == Spend::Record), "exactly the budget: no notice");
        assert_eq!(spend("a", "k", start), (Spend::Notice, None));
        assert_eq!(spend("a", "k", start), (Spend::Count, None));
        // Another kind of the same token, and another token, have their own budgets.
        assert_eq!(spend("a", "other", start), (Spend::Record, None));
        assert_eq!(spend("b", "k", start), (Spend::Record, None));
        // The next minute starts afresh, and says what the last one counted.
        let later = start + MINUTE;
        assert_eq!(spend("a", "k", later), (Spend::Record, Some(2)));
        assert_eq!(spend("a", "k", later), (Spend::Record, None));
    }

    #[test]
    fn a_kind_is_a_refusals_text_without_what_it_quotes() {
        assert_eq!(kind("broken link (prev_hash is not the stored hash of seq 20)"), "broken link");
        assert_eq!(kind("rewritten (the store holds hash 0a…)"), "rewritten");
        assert_eq!(
            kind("a call under the id of node \"zz\" with the token of node \"a\""),
            "a call under the id of node"
        );
        assert_eq!(
            kind("a batch with the node's revoked token"),
            "a batch with the node's revoked token"
        );
        assert_eq!(kind("events: at most 10000 in a batch"), "events");
    }
}
