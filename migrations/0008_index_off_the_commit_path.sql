-- The auditors' indexes leave the commit path. Each one-event commit wrote a page of each of
-- them (four fifths of a commit's WAL: a group of events from many callers lands in as many
-- places in each index). They are now kept in a file of their own beside the trail
-- (`<trail>-index`), filled in batches by a follower after the events commit; a query reads
-- it up to its watermark and scans the events after it (docs/architecture.md, "The log and
-- its index"). The events and every hash stay as they are; only the indexes go.
DROP INDEX IF EXISTS events_session;
DROP INDEX IF EXISTS events_actor;
DROP INDEX IF EXISTS events_tool;
DROP INDEX IF EXISTS events_ts;
DROP INDEX IF EXISTS events_decision;
DROP INDEX IF EXISTS events_idempotency_key;
