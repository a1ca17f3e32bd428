//! What witnesses and verifiers read from others: signed notes, checkpoints, verifier keys
//! (logs' and witnesses'), and `add-checkpoint` bodies, from arbitrary bytes: never a panic;
//! a checkpoint that reads writes back to the first three lines of its text (the rest are
//! extension lines, none empty); a body that reads writes back to a body that reads the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_trail::add_checkpoint::AddCheckpoint;
use toolgate_trail::checkpoint::Checkpoint;
use toolgate_trail::cosignature::CosignatureVerifier;
use toolgate_trail::note::{Note, NoteVerifier};

fuzz_target!(|data: &[u8]| {
    if let Ok(body) = AddCheckpoint::parse(data) {
        let again = AddCheckpoint::body(body.old, &body.proof, &body.note);
        let reread = AddCheckpoint::parse(again.as_bytes()).expect("a written body reads");
        assert_eq!((reread.old, reread.proof, reread.note), (body.old, body.proof, body.note));
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = NoteVerifier::parse(text);
    let _ = CosignatureVerifier::parse(text);
    if let Ok(note) = Note::parse(text) {
        if let Ok(checkpoint) = Checkpoint::from_text(&note.text) {
            let written = checkpoint.text();
            assert!(note.text.starts_with(&written), "a checkpoint writes back as it read");
            let extensions = &note.text[written.len()..];
            assert!(!extensions.split_terminator('\n').any(str::is_empty), "an empty extension");
        }
    }
    let _ = Checkpoint::read(text);
});
