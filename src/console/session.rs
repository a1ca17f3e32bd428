//! The console's sessions: a random id in an `HttpOnly`, `SameSite=Strict` cookie (`Secure`
//! over TLS) that stands for a sign-in, kept in memory only. A session holds what it signed in
//! with — a bearer token, or the person the identity provider's ID token named — with which the
//! console calls the gRPC services in process, so that every page is authorized, and every
//! refusal recorded, as the same call over gRPC would be; the roles it showed, a CSRF token for
//! its forms, and the manifests of its CSV downloads. With auth off, each browser gets an
//! anonymous session with every role, for its CSRF token.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use axum::http::header::COOKIE;
use subtle::ConstantTimeEq;
use tonic::metadata::MetadataValue;

use crate::audit::Manifest;
use crate::auth::SignedIn;

/// Sessions kept at most; the one that ends first goes to make room.
const MAX_SESSIONS: usize = 10_000;
/// Manifests of CSV downloads kept per session.
const MAX_EXPORTS: usize = 16;

/// Who is looking: a session's holder.
#[derive(Debug, Clone)]
pub struct Visitor {
    /// The session's id (its cookie's value).
    pub id: String,
    /// The caller's id (`auth::Caller::id`), or `local` with auth off.
    pub caller: String,
    /// What the calls are made with.
    credential: Credential,
    /// May read the trail.
    pub auditor: bool,
    /// May judge approvals.
    pub approver: bool,
    /// The token of this session's forms.
    pub csrf: String,
    /// Who this session gives verdicts as, when its token acts as exactly one actor.
    pub approver_as: Option<String>,
}

impl Visitor {
    /// `message` as a call of this visitor's, with its credential.
    pub fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        match &self.credential {
            Credential::Anonymous => {}
            Credential::Token(token) => {
                if let Ok(value) = MetadataValue::try_from(format!("Bearer {token}")) {
                    request.metadata_mut().insert("authorization", value);
                }
            }
            Credential::Person(person) => {
                request.extensions_mut().insert(person.clone());
            }
        }
        request
    }

    /// Whether `given` is this session's CSRF token (compared in constant time).
    pub fn csrf_matches(&self, given: &str) -> bool {
        bool::from(given.as_bytes().ct_eq(self.csrf.as_bytes()))
    }
}

/// What a session signed in with.
#[derive(Debug, Clone)]
pub enum Credential {
    /// Nothing: auth is off.
    Anonymous,
    /// A bearer token.
    Token(String),
    /// The person an ID token named (OpenID Connect).
    Person(SignedIn),
}

#[derive(Debug)]
struct Session {
    visitor: Visitor,
    ends: Instant,
    /// The manifests of this session's CSV downloads, by download id, oldest first.
    exports: VecDeque<(String, Manifest)>,
}

/// The sessions, and the cookie that names them.
#[derive(Debug)]
pub struct Sessions {
    sessions: Mutex<HashMap<String, Session>>,
    lasts: Duration,
    /// `__Host-toolgate-console` (only over TLS, where it is `Secure`), or `toolgate-console`.
    cookie: &'static str,
    secure: bool,
}

/// 32 random bytes as hex: a session id, a CSRF token, a download id. `None` when the
/// operating system has no random bytes to give: no id is better than a guessable one.
pub fn random_id() -> Option<String> {
    let mut bytes = [0u8; 32];
    match getrandom::fill(&mut bytes) {
        Ok(()) => Some(hex::encode(bytes)),
        Err(e) => {
            tracing::error!(error = %e, "no random bytes for the console");
            None
        }
    }
}

impl Sessions {
    /// Sessions that last `lasts` from their sign-in (a minute to 30 days); their cookie is
    /// `Secure` when `secure`.
    pub fn new(lasts: Duration, secure: bool) -> Self {
        let lasts = lasts.clamp(Duration::from_secs(60), Duration::from_secs(30 * 24 * 3600));
        let cookie = if secure { "__Host-toolgate-console" } else { "toolgate-console" };
        Self { sessions: Mutex::new(HashMap::new()), lasts, cookie, secure }
    }

    /// Starts a session for `caller`; returns it and its `Set-Cookie` value (`None` without
    /// random bytes for its ids).
    pub fn start(
        &self,
        caller: String,
        credential: Credential,
        (auditor, approver): (bool, bool),
        approver_as: Option<String>,
    ) -> Option<(Visitor, String)> {
        let visitor = Visitor {
            id: random_id()?,
            caller,
            credential,
            auditor,
            approver,
            csrf: random_id()?,
            approver_as,
        };
        let now = Instant::now();
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.retain(|_, s| s.ends > now);
        if sessions.len() >= MAX_SESSIONS
            && let Some(first) = sessions.iter().min_by_key(|(_, s)| s.ends).map(|(k, _)| k.clone())
        {
            sessions.remove(&first);
        }
        let session =
            Session { visitor: visitor.clone(), ends: now + self.lasts, exports: VecDeque::new() };
        sessions.insert(visitor.id.clone(), session);
        let cookie = self.cookie(&visitor.id, self.lasts.as_secs());
        Some((visitor, cookie))
    }

    /// The visitor whose cookie `headers` carry, if its session has not ended.
    pub fn find(&self, headers: &HeaderMap) -> Option<Visitor> {
        let id = cookie(headers, self.cookie)?;
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let session = sessions.get(id).filter(|s| s.ends > Instant::now())?;
        Some(session.visitor.clone())
    }

    /// Ends the session `id`; returns the `Set-Cookie` value that removes its cookie.
    pub fn end(&self, id: &str) -> String {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        self.cookie("", 0)
    }

    /// Keeps `manifest`, of the CSV download `download`, in session `id`.
    pub fn keep_export(&self, id: &str, download: String, manifest: Manifest) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = sessions.get_mut(id) {
            // The same download made again (a second click) describes the newer file.
            session.exports.retain(|(d, _)| *d != download);
            if session.exports.len() >= MAX_EXPORTS {
                session.exports.pop_front();
            }
            session.exports.push_back((download, manifest));
        }
    }

    /// The manifest of session `id`'s CSV download `download`, once it has finished.
    pub fn export(&self, id: &str, download: &str) -> Option<Manifest> {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let exports = &sessions.get(id)?.exports;
        exports.iter().find(|(d, _)| d == download).map(|(_, m)| m.clone())
    }

    fn cookie(&self, value: &str, max_age: u64) -> String {
        let secure = if self.secure { "; Secure" } else { "" };
        format!(
            "{}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}",
            self.cookie
        )
    }
}

/// The value of the cookie `name` among `headers`' `Cookie` headers.
pub(super) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with_cookie(value: String) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, HeaderValue::from_str(&value).unwrap());
        headers
    }

    #[test]
    fn a_session_is_found_by_its_cookie_until_it_ends() {
        let sessions = Sessions::new(Duration::from_secs(60), true);
        let (visitor, set) = sessions
            .start("alice".into(), Credential::Token("t".into()), (true, false), None)
            .unwrap();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Secure")
        );
        let headers = with_cookie(format!("other=1; __Host-toolgate-console={}", visitor.id));
        assert_eq!(sessions.find(&headers).unwrap().caller, "alice");
        let forged = with_cookie(format!("__Host-toolgate-console={}", random_id().unwrap()));
        assert!(sessions.find(&forged).is_none());
        assert!(sessions.end(&visitor.id).contains("Max-Age=0"));
        assert!(sessions.find(&headers).is_none());
    }

    #[test]
    fn a_session_that_has_ended_is_not_found() {
        let mut sessions = Sessions::new(Duration::ZERO, false);
        assert_eq!(sessions.lasts, Duration::from_secs(60), "a minute at least");
        sessions.lasts = Duration::ZERO;
        let (visitor, set) =
            sessions.start("a".into(), Credential::Anonymous, (true, true), None).unwrap();
        assert!(!set.contains("Secure"));
        assert!(sessions.find(&with_cookie(format!("toolgate-console={}", visitor.id))).is_none());
    }

    #[test]
    fn csrf_tokens_are_compared_whole() {
        let sessions = Sessions::new(Duration::from_secs(60), false);
        let (visitor, _) =
            sessions.start("a".into(), Credential::Anonymous, (true, true), None).unwrap();
        assert!(visitor.csrf_matches(&visitor.csrf.clone()));
        assert!(!visitor.csrf_matches(&visitor.csrf[..10]));
        assert!(!visitor.csrf_matches(""));
    }
}
