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

use crate::auth::SignedIn;
use crate::trail::Manifest;

/// Sessions kept at most. Past it a new sign-in is refused: nobody's sign-ins end another
/// person's session.
const MAX_SESSIONS: usize = 10_000;
/// Sessions one person (a caller id) keeps at most; their next sign-in ends their oldest. With
/// auth off every browser is the one local visitor, bounded by [`MAX_SESSIONS`] alone.
const MAX_SESSIONS_PER_PERSON: usize = 16;
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

/// The sessions by id, and each person's ids, oldest first (ids of ended sessions are dropped
/// from a person's list when it is next looked at).
#[derive(Debug, Default)]
struct Kept {
    by_id: HashMap<String, Session>,
    by_person: HashMap<String, VecDeque<String>>,
}

/// The sessions, and the cookie that names them.
#[derive(Debug)]
pub struct Sessions {
    sessions: Mutex<Kept>,
    lasts: Duration,
    /// `__Host-toolgate-console` (only over TLS, where it is `Secure`), or `toolgate-console`.
    cookie: &'static str,
    secure: bool,
}

/// Why a session could not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("no random bytes for a session: see the server's log")]
    NoRandom,
    #[error("the console holds as many sessions as it keeps: try again when some have ended")]
    Full,
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
        Self { sessions: Mutex::default(), lasts, cookie, secure }
    }

    /// Starts a session for `caller`; returns it and its `Set-Cookie` value. A person holding
    /// [`MAX_SESSIONS_PER_PERSON`] sessions loses their oldest; when the console holds
    /// [`MAX_SESSIONS`] of other people's, the sign-in is refused.
    pub fn start(
        &self,
        caller: String,
        credential: Credential,
        (auditor, approver): (bool, bool),
        approver_as: Option<String>,
    ) -> Result<(Visitor, String), SessionError> {
        let per_person = match credential {
            Credential::Anonymous => MAX_SESSIONS,
            Credential::Token(_) | Credential::Person(_) => MAX_SESSIONS_PER_PERSON,
        };
        let id = random_id().ok_or(SessionError::NoRandom)?;
        let csrf = random_id().ok_or(SessionError::NoRandom)?;
        let visitor = Visitor { id, caller, credential, auditor, approver, csrf, approver_as };
        let now = Instant::now();
        let mut kept = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let Kept { by_id, by_person } = &mut *kept;
        if by_id.len() >= MAX_SESSIONS {
            by_id.retain(|_, s| s.ends > now);
            by_person.retain(|_, ids| {
                ids.retain(|id| by_id.contains_key(id));
                !ids.is_empty()
            });
        }
        let theirs = by_person.entry(visitor.caller.clone()).or_default();
        theirs.retain(|id| by_id.get(id).is_some_and(|s| s.ends > now));
        if theirs.len() >= per_person {
            if let Some(oldest) = theirs.pop_front() {
                by_id.remove(&oldest);
            }
        } else if by_id.len() >= MAX_SESSIONS {
            tracing::warn!(sessions = MAX_SESSIONS, "console sign-in refused: sessions full");
            return Err(SessionError::Full);
        }
        theirs.push_back(visitor.id.clone());
        let session =
            Session { visitor: visitor.clone(), ends: now + self.lasts, exports: VecDeque::new() };
        by_id.insert(visitor.id.clone(), session);
        let cookie = self.cookie(&visitor.id, self.lasts.as_secs());
        Ok((visitor, cookie))
    }

    /// The visitor whose cookie `headers` carry, if its session has not ended.
    pub fn find(&self, headers: &HeaderMap) -> Option<Visitor> {
        let id = cookie(headers, self.cookie)?;
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let session = sessions.by_id.get(id).filter(|s| s.ends > Instant::now())?;
        Some(session.visitor.clone())
    }

    /// Ends the session `id`; returns the `Set-Cookie` value that removes its cookie.
    pub fn end(&self, id: &str) -> String {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).by_id.remove(id);
        self.cookie("", 0)
    }

    /// Keeps `manifest`, of the CSV download `download`, in session `id`.
    pub fn keep_export(&self, id: &str, download: String, manifest: Manifest) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = sessions.by_id.get_mut(id) {
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
        let exports = &sessions.by_id.get(id)?.exports;
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
    fn one_persons_sign_ins_end_only_their_own_oldest_and_a_full_console_refuses_newcomers() {
        let sessions = Sessions::new(Duration::from_secs(60), false);
        let token = || Credential::Token("t".into());
        let (bob, _) = sessions.start("bob".into(), token(), (true, true), None).unwrap();
        let bob = with_cookie(format!("toolgate-console={}", bob.id));
        let (first, _) = sessions.start("audit".into(), token(), (true, false), None).unwrap();
        for _ in 0..MAX_SESSIONS {
            sessions.start("audit".into(), token(), (true, false), None).unwrap();
        }
        assert!(sessions.find(&bob).is_some(), "another person's session stays");
        let first = with_cookie(format!("toolgate-console={}", first.id));
        assert!(sessions.find(&first).is_none(), "the auditor's oldest went");
        // A console full of different people refuses the next newcomer, and ends nobody's.
        for n in 0..MAX_SESSIONS {
            let _ = sessions.start(format!("p{n}"), token(), (true, false), None);
        }
        let refused = sessions.start("newcomer".into(), token(), (true, false), None);
        assert_eq!(refused.err(), Some(SessionError::Full));
        assert!(sessions.find(&bob).is_some());
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
