//! Where the gRPC server listens: a TCP address, or `unix:/path/to.sock` — a socket created
//! with owner-only permissions (`unix_socket_mode`), for sidecars sharing a volume in a pod.
//! Unix connections go through [`LenientAuthority`], so that stock gRPC clients, which name
//! the socket's path as the authority, are served there too.

/// Writes go to the wrapped connection as they are: the wrappers of this module change or
/// watch only what is read.
macro_rules! writes_through {
    ($wrapper:ident) => {
        impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for $wrapper<S> {
            fn poll_write(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
            }

            fn poll_flush(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.inner).poll_flush(cx)
            }

            fn poll_shutdown(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
            }

            fn poll_write_vectored(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                self.inner.is_write_vectored()
            }
        }
    };
}
use writes_through;

/// A wrapper's connect info is the wrapped connection's.
macro_rules! connects_through {
    ($wrapper:ident) => {
        impl<S: tonic::transport::server::Connected> tonic::transport::server::Connected
            for $wrapper<S>
        {
            type ConnectInfo = S::ConnectInfo;

            fn connect_info(&self) -> Self::ConnectInfo {
                self.inner.connect_info()
            }
        }
    };
}
use connects_through;

mod authority;
mod front;
pub mod host;
mod http;
mod limit;

pub use authority::LenientAuthority;
pub use front::{Door, Entry, FrontLayer};
pub use http::{Capped, serve};
pub use limit::{Admission, Limited, Mark, Marked, Permit, Preface, raise_open_files};

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tokio::net::{TcpListener, UnixListener, UnixStream};

/// A bound listener.
#[derive(Debug)]
pub enum Listener {
    Tcp(TcpListener),
    Unix { listener: UnixListener, path: PathBuf },
}

impl Listener {
    /// Binds `addr`: `unix:/path` or a TCP address. A unix socket gets permissions `mode`; a
    /// stale socket at the path (one nothing listens on) is replaced, and nothing else ever is:
    /// a regular file there (a trail given by mistake) is refused, not removed.
    pub async fn bind(addr: &str, mode: u32) -> std::io::Result<Self> {
        let Some(path) = unix_path(addr) else {
            return Ok(Self::Tcp(TcpListener::bind(addr).await?));
        };
        remove_stale(path).await?;
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        Ok(Self::Unix { listener, path: path.to_owned() })
    }

    /// What it listens on, for the log.
    pub fn describe(&self) -> String {
        match self {
            Self::Tcp(listener) => {
                listener.local_addr().map_or_else(|e| e.to_string(), |a| a.to_string())
            }
            Self::Unix { path, .. } => format!("unix:{}", path.display()),
        }
    }
}

/// Removes a socket at `path` that nothing listens on; refuses anything else found there.
async fn remove_stale(path: &Path) -> std::io::Result<()> {
    use std::io::{Error, ErrorKind};
    use std::os::unix::fs::FileTypeExt;
    let metadata = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(metadata) => metadata,
    };
    if !metadata.file_type().is_socket() {
        return Err(Error::new(
            ErrorKind::AlreadyExists,
            format!("`{}` exists and is not a socket: not replacing it", path.display()),
        ));
    }
    match UnixStream::connect(path).await {
        Ok(_) => Err(Error::new(
            ErrorKind::AddrInUse,
            format!("`{}`: a server listens on it already", path.display()),
        )),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => std::fs::remove_file(path),
        Err(e) => Err(Error::new(
            e.kind(),
            format!("cannot tell whether the socket `{}` is stale: {e}", path.display()),
        )),
    }
}

/// The path of a `unix:` address.
pub fn unix_path(addr: &str) -> Option<&Path> {
    addr.strip_prefix("unix:").map(Path::new)
}
