-- A signed note per event where there is one: a `checkpoint` event carries the signed
-- checkpoint (C2SP tlog-checkpoint) of the Merkle tree of every event before it. NULL for every
-- other event, so older events keep their hashes (NULL is left out of the encoding).
ALTER TABLE events ADD COLUMN note TEXT;
