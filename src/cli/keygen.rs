//! `toolgate keygen`: a new Ed25519 key for signing checkpoints (or, with `--witness`, for
//! cosigning them), in the signed-note key format. The signing key goes to a file only its
//! owner may read; the verifier key, for auditors and witnesses, is printed.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::Exit;
use crate::trust::cosignature::Cosigner;
use crate::trust::note::NoteSigner;

/// Arguments of `toolgate keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// The key's name: the checkpoints' origin (`toolgate/<node id>`), or the witness's name.
    #[arg(long)]
    pub name: String,
    /// A witness's key: print the verifier key of its cosignatures (C2SP tlog-cosignature),
    /// which sidecars list in `[[checkpoints.witnesses]] key`.
    #[arg(long)]
    pub witness: bool,
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
    if args.witness {
        println!("{}", Cosigner::new(&signer).verifier().encode());
    } else {
        println!("{}", signer.verifier().encode());
    }
    Ok(Exit::Ok)
}
