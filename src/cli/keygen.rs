//! `toolgate keygen`: a new Ed25519 key for signing checkpoints, in the signed-note key format.
//! The signing key goes to a file only its owner may read; the verifier key, for auditors and
//! witnesses, is printed.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::Exit;
use crate::trust::note::NoteSigner;

/// Arguments of `toolgate keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// The key's name, which is also the checkpoints' origin (`toolgate/<node id>`).
    #[arg(long)]
    pub name: String,
    /// Where to write the signing key (created with permissions 0600; never overwritten).
    #[arg(long)]
    pub out: PathBuf,
}

/// Writes a new signing key and prints its verifier key.
pub async fn keygen(args: KeygenArgs) -> anyhow::Result<Exit> {
    let signer = NoteSigner::generate(&args.name)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&args.out)
        .with_context(|| format!("cannot create `{}`", args.out.display()))?;
    writeln!(file, "{}", signer.encode())?;
    println!("{}", signer.verifier().encode());
    Ok(Exit::Ok)
}
