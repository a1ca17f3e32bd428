//! What an auditor is handed: a tlog-proof, and the event encoding its extra data carries,
//! from arbitrary bytes: never a panic; a proof that reads writes back to the same text and
//! reads again the same; verifying it against a key and witnesses never panics; an encoding
//! that decodes is the encoding of the event it decodes to.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_trail::cosignature::Witnesses;
use toolgate_trail::note::NoteVerifier;
use toolgate_trail::tlog_proof::TlogProof;
use toolgate_trail::{GENESIS_HASH, decode_event, encode};

/// Go's `sumdb/note` example verifier key (its package documentation).
const KEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";

fuzz_target!(|data: &[u8]| {
    if let Ok(event) = decode_event(&GENESIS_HASH, data) {
        assert_eq!(encode(&event), data, "a decoded encoding encodes back");
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(proof) = TlogProof::parse(text) else { return };
    let written = proof.encode();
    assert_eq!(written, text, "a proof writes back as it read");
    assert_eq!(TlogProof::parse(&written).expect("a written proof reads"), proof);
    let key = NoteVerifier::parse(KEY).expect("the example key reads");
    let _ = proof.verify(&[key], &Witnesses::default());
});
