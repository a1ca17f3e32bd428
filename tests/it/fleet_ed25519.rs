//! The store's own Ed25519 verifier (`migrations/postgres/0001_ed25519.sql`), which checks each
//! checkpoint's signature as it arrives, against RFC 8032's test vectors and against
//! ed25519-dalek, an implementation it shares nothing with: every signature dalek makes it
//! takes, and every one-bit change of key, message or signature it refuses.

use ed25519_dalek::{Signer, SigningKey};
use sha2::{Digest, Sha256};
use sqlx::PgPool;

use crate::fleet::{FleetDb, cluster};

async fn verify(pool: &PgPool, key: &[u8], message: &[u8], signature: &[u8]) -> bool {
    sqlx::query_scalar("SELECT ed25519_verify($1, $2, $3)")
        .bind(key)
        .bind(message)
        .bind(signature)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// RFC 8032, section 7.1, TESTs 1 to 3: (public key, message, signature).
const RFC_8032: [(&str, &str, &str); 3] = [
    (
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ),
    (
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    ),
    (
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
    ),
];

fn flipped(bytes: &[u8], bit: usize) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    let at = bit / 8 % bytes.len();
    bytes[at] ^= 1 << (bit % 8);
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stores_verifier_agrees_with_rfc_8032_and_ed25519_dalek() {
    let fleet = FleetDb::new(&cluster()).await;
    let pool = &fleet.pool;
    for (key, message, signature) in RFC_8032 {
        let (key, message, signature) = (
            hex::decode(key).unwrap(),
            hex::decode(message).unwrap(),
            hex::decode(signature).unwrap(),
        );
        assert!(verify(pool, &key, &message, &signature).await, "{}", hex::encode(&key));
        assert!(!verify(pool, &key, b"another message", &signature).await);
    }
    for i in 0..12usize {
        let seed: [u8; 32] = Sha256::digest(format!("toolgate ed25519 {i}")).into();
        let signer = SigningKey::from_bytes(&seed);
        let key = signer.verifying_key().to_bytes();
        let message: Vec<u8> = Sha256::digest(seed).iter().cycle().take(i * 23).copied().collect();
        let signature = signer.sign(&message).to_bytes();
        assert!(verify(pool, &key, &message, &signature).await, "key {i}");
        let bit = i * 37;
        assert!(!verify(pool, &key, &message, &flipped(&signature, bit)).await, "signature {i}");
        assert!(!verify(pool, &flipped(&key, bit), &message, &signature).await, "key {i}");
        let longer = [&message[..], b"!"].concat();
        assert!(!verify(pool, &key, &flipped(&longer, bit), &signature).await, "message {i}");
    }
    // Malformed input is a refusal, never an error: short key or signature, S not below the
    // group order, a key whose y is not below p.
    let (key, _, signature) = RFC_8032[0];
    let (key, signature) = (hex::decode(key).unwrap(), hex::decode(signature).unwrap());
    assert!(!verify(pool, &key[..31], b"", &signature).await);
    assert!(!verify(pool, &key, b"", &signature[..63]).await);
    let mut high_s = signature.clone();
    high_s[63] |= 0xf0;
    assert!(!verify(pool, &key, b"", &high_s).await);
    let mut y_past_p = [0xff; 32];
    y_past_p[31] = 0x7f;
    assert!(!verify(pool, &y_past_p, b"", &signature).await);
}

/// A checkpoint note signed by toolgate itself, whose verifier key's base64 holds a `+` (the
/// first version of `fleet_note_signed` cut the key there and refused the note).
const KEY: &str = "toolgate/node-a+8bbeff84+AUTnPHBKiMlBPHzdU6cm+/duYpuiDsnFsWLT3QZO3evn";
const NOTE: &str = "toolgate/node-a\n13\n1S3dzzKI5+WRy9Wad5ev3pb5dEPetZx4YfyhuS45Fps=\n\n\
    \u{2014} toolgate/node-a i77/hIFtqlmn47YAcW1mk8wj4MftfoLKHRiUwYQ+SCY0D5khWXKHaKS+9JpIDQCFtriDbKZGYt+Jo75CqXRt9oCIeA4=\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_reads_a_signed_note_by_its_verifier_key() {
    let fleet = FleetDb::new(&cluster()).await;
    let signed = |note: String, key: &str| {
        let pool = fleet.pool.clone();
        let key = key.to_owned();
        async move {
            sqlx::query_scalar::<_, bool>("SELECT fleet_note_signed($1, $2)")
                .bind(note)
                .bind(key)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    assert!(signed(NOTE.to_owned(), KEY).await);
    assert!(!signed(NOTE.replace("\n13\n", "\n14\n"), KEY).await, "another body");
    let other_name = KEY.replace("toolgate/node-a", "toolgate/node-b");
    assert!(!signed(NOTE.to_owned(), &other_name).await, "a line by another name");
    let other_id = KEY.replace("8bbeff84", "8bbeff85");
    assert!(!signed(NOTE.to_owned(), &other_id).await, "a key id that is not the line's");
    assert!(!signed(NOTE.to_owned(), "not a key").await);
    assert!(!signed(NOTE.replace("\n\n", "\n"), KEY).await, "no signature block");
}
