//! Bounds on the connections a port holds, so that peers who open connections and say nothing
//! (half-open, unauthenticated, slow) cannot take the file descriptors `Decide` needs: a cap in
//! all and a cap per peer address, taken when a connection is accepted (over the cap it is
//! closed at once), and a deadline for the first bytes of an HTTP/2 connection (its preface:
//! hyper would otherwise wait for it without end). Each port has its own caps, so a flood of
//! one does not close another.

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, ReadBuf};

/// The bytes of HTTP/2's connection preface.
const PREFACE_BYTES: usize = 24;

/// Raises this process's soft limit on open files to its hard limit (as Go's runtime does), so
/// that the ports' connection caps, not the default of 1,024, bound what peers can hold; warns
/// when the caps of the ports together (`per_port` each, `ports` of them) still exceed it.
pub fn raise_open_files(per_port: usize, ports: usize) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else { return };
    let limit = match soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        true => hard,
        false => soft,
    };
    let wanted = per_port.saturating_mul(ports) as u64;
    if wanted + 256 > limit {
        tracing::warn!(
            open_files = limit,
            max_connections = per_port,
            "[limits] max_connections on every port together exceeds the open files this \
             process may hold: lower it, or raise the limit (ulimit -n)"
        );
    }
}

/// The connections a port holds, against its caps.
#[derive(Debug)]
pub struct Admission {
    max: usize,
    per_peer: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    all: usize,
    by_peer: HashMap<IpAddr, usize>,
}

impl Admission {
    /// At most `max` connections in all and `per_peer` from one address.
    pub fn new(max: usize, per_peer: usize) -> Arc<Self> {
        Arc::new(Self { max: max.max(1), per_peer: per_peer.max(1), held: Mutex::default() })
    }

    /// A connection from `peer` (none for a local socket, which only the cap in all bounds),
    /// if there is room for it.
    pub fn admit(self: &Arc<Self>, peer: Option<IpAddr>) -> Option<Permit> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if held.all >= self.max {
            return None;
        }
        if let Some(ip) = peer {
            let of_peer = held.by_peer.entry(ip).or_default();
            if *of_peer >= self.per_peer {
                return None;
            }
            *of_peer += 1;
        }
        held.all += 1;
        Some(Permit { admission: self.clone(), peer })
    }

    /// Connections held now.
    pub fn held(&self) -> usize {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).all
    }
}

/// A connection's room, given back when it closes.
#[derive(Debug)]
pub struct Permit {
    admission: Arc<Admission>,
    peer: Option<IpAddr>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut held = self.admission.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.all -= 1;
        if let Some(ip) = self.peer
            && let Some(n) = held.by_peer.get_mut(&ip)
        {
            *n -= 1;
            if *n == 0 {
                held.by_peer.remove(&ip);
            }
        }
    }
}

/// An accepted connection holding its [`Permit`].
#[derive(Debug)]
pub struct Limited<S> {
    inner: S,
    _permit: Permit,
}

impl<S> Limited<S> {
    pub fn new(inner: S, permit: Permit) -> Self {
        Self { inner, _permit: permit }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

/// A connection whose first bytes (HTTP/2's preface) must come within a deadline.
#[derive(Debug)]
pub struct Preface<S> {
    inner: S,
    left: usize,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S> Preface<S> {
    /// `inner`, closed with an error if its preface has not come within `within`.
    pub fn new(inner: S, within: Duration) -> Self {
        Self { inner, left: PREFACE_BYTES, deadline: Some(Box::pin(tokio::time::sleep(within))) }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Limited<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Preface<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        if self.deadline.is_none() {
            return read;
        }
        match read {
            Poll::Ready(Ok(())) => {
                let got = buf.filled().len() - before;
                self.left = self.left.saturating_sub(got);
                if self.left == 0 {
                    self.deadline = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => match self.deadline.as_mut().map(|d| d.as_mut().poll(cx)) {
                Some(Poll::Ready(())) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no HTTP/2 preface within the handshake timeout",
                ))),
                _ => Poll::Pending,
            },
            other => other,
        }
    }
}

super::writes_through!(Limited);
super::writes_through!(Preface);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_capped_in_all_and_per_peer_and_given_back() {
        let admission = Admission::new(3, 2);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let first = admission.admit(Some(a)).unwrap();
        let _second = admission.admit(Some(a)).unwrap();
        assert!(admission.admit(Some(a)).is_none(), "per peer");
        let _third = admission.admit(Some(b)).unwrap();
        assert!(admission.admit(None).is_none(), "in all");
        drop(first);
        assert!(admission.admit(Some(a)).is_some());
    }

    #[tokio::test]
    async fn a_connection_without_its_preface_is_closed_at_the_deadline() {
        use tokio::io::AsyncReadExt;
        let (client, server) = tokio::io::duplex(64);
        let mut guarded = Preface::new(server, Duration::from_millis(50));
        let mut buf = [0u8; 8];
        let read = guarded.read(&mut buf).await;
        assert_eq!(read.unwrap_err().kind(), io::ErrorKind::TimedOut);
        drop(client);
    }
}
