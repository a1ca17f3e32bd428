//! S3 Object Lock on what the archive writes: each object, once written and read back, is given
//! a retention date (S3's PutObjectRetention) and read back again (HEAD: its lock mode and
//! date). `object_store` writes the objects but cannot ask for a lock (its writes carry no lock
//! headers, and headers added beside them go unsigned, which S3 refuses), so this one request
//! is signed here with `object_store`'s own SigV4 authorizer and the store's own credentials,
//! to the URL the store itself names for the object.

use std::sync::Arc;

use base64::Engine;
use object_store::aws::{AmazonS3, AwsAuthorizer};
use object_store::client::{HttpRequest, HttpRequestBody};
use object_store::path::Path;
use object_store::signer::Signer;
use sha2::{Digest, Sha256};

use super::ArchiveError;
use crate::config::LockMode;

/// How long a request to lock an object may take.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The mode as S3 names it.
fn s3_mode(mode: LockMode) -> &'static str {
    match mode {
        LockMode::Compliance => "COMPLIANCE",
        LockMode::Governance => "GOVERNANCE",
    }
}

/// Locks the objects of one S3 archive.
#[derive(Debug)]
pub struct Locker {
    s3: Arc<AmazonS3>,
    region: String,
    client: reqwest::Client,
    days: u32,
    mode: LockMode,
}

impl Locker {
    pub fn new(s3: Arc<AmazonS3>, region: String, days: u32, mode: LockMode) -> Self {
        // No redirects: the request carries the session token, for S3 only.
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self { s3, region, client, days, mode }
    }

    /// Locks the current version of the object at `path` until `days` from now, and reads the
    /// lock back.
    pub async fn lock(&self, path: &Path) -> Result<(), ArchiveError> {
        let failed = |why: String| ArchiveError::Lock(path.to_string(), why);
        let until = chrono::Utc::now() + chrono::Duration::days(i64::from(self.days));
        let date = until.format("%Y-%m-%dT%H:%M:%SZ").to_string();
        let body = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
             <Retention xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
             <Mode>{}</Mode><RetainUntilDate>{date}</RetainUntilDate></Retention>",
            s3_mode(self.mode)
        );
        let answer = self.send(http::Method::PUT, path, body.into_bytes()).await?;
        if !answer.status().is_success() {
            return Err(failed(refusal(answer).await));
        }
        let answer = self.send(http::Method::HEAD, path, Vec::new()).await?;
        let header = |name| answer.headers().get(name).and_then(|v| v.to_str().ok());
        let mode = header("x-amz-object-lock-mode");
        let held = header("x-amz-object-lock-retain-until-date")
            .and_then(|d| chrono::DateTime::parse_from_rfc3339(d).ok());
        match (mode, held) {
            (Some(mode), Some(held))
                if mode == s3_mode(self.mode) && held.timestamp() >= until.timestamp() =>
            {
                Ok(())
            }
            _ => Err(failed(format!(
                "it reads back locked {} until {}, not {} until {date}",
                mode.unwrap_or("not at all"),
                header("x-amz-object-lock-retain-until-date").unwrap_or("never"),
                s3_mode(self.mode),
            ))),
        }
    }

    /// One signed request about the object at `path`: `PUT` its retention, or `HEAD` it.
    async fn send(
        &self,
        method: http::Method,
        path: &Path,
        body: Vec<u8>,
    ) -> Result<reqwest::Response, ArchiveError> {
        // The object's URL as the store names it (endpoint, path or virtual-host style).
        let mut url = self.s3.signed_url(method.clone(), path, TIMEOUT).await?;
        url.set_query((method == http::Method::PUT).then_some("retention"));
        let mut request: HttpRequest = http::Request::builder()
            .method(method)
            .uri(url.as_str())
            .body(HttpRequestBody::from(body.clone()))
            .map_err(|e| ArchiveError::Lock(path.to_string(), e.to_string()))?;
        if !body.is_empty() {
            // S3 asks for the body's checksum with a lock.
            let sha256 = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&body));
            let headers = request.headers_mut();
            headers.insert("content-type", http::HeaderValue::from_static("application/xml"));
            headers
                .insert("x-amz-sdk-checksum-algorithm", http::HeaderValue::from_static("SHA256"));
            let sha256 = http::HeaderValue::from_str(&sha256)
                .map_err(|e| ArchiveError::Lock(path.to_string(), e.to_string()))?;
            headers.insert("x-amz-checksum-sha256", sha256);
        }
        let credential = self.s3.credentials().get_credential().await?;
        AwsAuthorizer::new(&credential, "s3", &self.region).authorize(&mut request, None);
        let (parts, _) = request.into_parts();
        let sent = self.client.request(parts.method, url).headers(parts.headers).body(body);
        sent.send().await.map_err(|e| ArchiveError::Lock(path.to_string(), e.to_string()))
    }
}

/// What S3 said when it refused: its error code, at most a line of it.
async fn refusal(answer: reqwest::Response) -> String {
    let status = answer.status();
    let text = answer.text().await.unwrap_or_default();
    let code = text.split("<Code>").nth(1).and_then(|t| t.split("</Code>").next());
    let code: String =
        code.unwrap_or_default().chars().filter(char::is_ascii_alphanumeric).take(64).collect();
    format!("S3 answered {status} {code}")
}
