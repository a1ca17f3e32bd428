-- Witnesses' cosignatures (C2SP tlog-cosignature) of the trail's checkpoints: each is a
-- signature line that verifies on its own against the checkpoint event's note, so it needs no
-- place in the hash chain. `seq` is the checkpoint event's, `witness` the witness's verifier
-- key, `size` the checkpoint's tree size, `time` the witness's timestamp. Append-only.
CREATE TABLE cosignatures (
    seq     INTEGER NOT NULL,
    witness TEXT    NOT NULL,
    size    INTEGER NOT NULL,
    time    INTEGER NOT NULL,
    line    TEXT    NOT NULL,
    PRIMARY KEY (seq, witness)
) STRICT, WITHOUT ROWID;

CREATE INDEX cosignatures_by_witness ON cosignatures (witness, size);

CREATE TRIGGER cosignatures_no_update BEFORE UPDATE ON cosignatures
BEGIN
    SELECT RAISE(ABORT, 'cosignatures are append-only: update refused');
END;

CREATE TRIGGER cosignatures_no_delete BEFORE DELETE ON cosignatures
BEGIN
    SELECT RAISE(ABORT, 'cosignatures are append-only: delete refused');
END;
