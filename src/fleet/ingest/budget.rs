//! How many alarms a node's token may have stored a minute, on one ingest server. Every
//! refusal is an alarm, and an alarm is a row the node cannot suppress; a node with a valid
//! token could also make refusals without end, each a row. So each token's refusals are stored
//! one by one up to [`PER_MINUTE`] a minute; the next one stores a notice that the rest of the
//! minute's are only counted, and the count goes to the log when the next minute begins. The
//! table grows by at most [`PER_MINUTE`] + 1 rows a minute per node and server.

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
    /// Store it, and then the notice that the rest of the minute's are counted only.
    RecordAndNotice,
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

/// The budgets of the tokens (of registered nodes only: a refusal is stored once the token is
/// known, so the map holds at most one entry per registered node).
#[derive(Debug, Default)]
pub struct Budget {
    minutes: Mutex<HashMap<String, Minute>>,
}

impl Budget {
    /// Spends one alarm of `node`'s token at `now`; with it, how many alarms of the token the
    /// minute that just ended counted without storing them, if any.
    pub fn spend(&self, node: &str, now: Instant) -> (Spend, Option<u64>) {
        let mut minutes = self.minutes.lock().unwrap_or_else(|e| e.into_inner());
        let minute = minutes.entry(node.to_owned()).or_insert(Minute {
            started: now,
            recorded: 0,
            counted: 0,
        });
        let mut ended = None;
        if now.duration_since(minute.started) >= MINUTE {
            ended = Some(minute.counted).filter(|&n| n > 0);
            *minute = Minute { started: now, recorded: 0, counted: 0 };
        }
        let spend = match minute.recorded {
            n if n + 1 < PER_MINUTE => Spend::Record,
            n if n + 1 == PER_MINUTE => Spend::RecordAndNotice,
            _ => Spend::Count,
        };
        match spend {
            Spend::Count => minute.counted += 1,
            Spend::Record | Spend::RecordAndNotice => minute.recorded += 1,
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
        let spent: Vec<Spend> = (0..PER_MINUTE + 5).map(|_| budget.spend("a", start).0).collect();
        assert!(spent[..PER_MINUTE as usize - 1].iter().all(|s| *s == Spend::Record));
        assert_eq!(spent[PER_MINUTE as usize - 1], Spend::RecordAndNotice);
        assert!(spent[PER_MINUTE as usize..].iter().all(|s| *s == Spend::Count));
        // Another token has its own budget.
        assert_eq!(budget.spend("b", start), (Spend::Record, None));
        // The next minute starts afresh, and says what the last one counted.
        let later = start + MINUTE;
        assert_eq!(budget.spend("a", later), (Spend::Record, Some(5)));
        assert_eq!(budget.spend("a", later), (Spend::Record, None));
    }
}
