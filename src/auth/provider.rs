//! An identity provider over HTTP, as the keys (`keys`) and the console's sign-in
//! (`console::oidc`) both reach it: its OpenID discovery document, which must name the issuer
//! it was asked for, the endpoints it gives (HTTPS, or HTTP on this host), and its JSON
//! answers, read up to a bound.

use serde_json::Value;

/// The most a provider's answer may weigh.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// A provider's discovery document (`<issuer>/.well-known/openid-configuration`).
pub struct Discovery {
    url: String,
    document: Value,
}

impl Discovery {
    /// The discovery document of `issuer`, once it names that issuer.
    pub async fn of(client: &reqwest::Client, issuer: &str) -> Result<Self, String> {
        let url = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
        let document = json(client.get(&url)).await.map_err(|e| format!("{url}: {e}"))?;
        if document.get("issuer").and_then(Value::as_str) != Some(issuer) {
            return Err(format!("{url} names another issuer"));
        }
        Ok(Self { url, document })
    }

    /// Whether it says `name` is `true` (a capability).
    pub fn says(&self, name: &str) -> bool {
        self.document.get(name).and_then(Value::as_bool) == Some(true)
    }

    /// The endpoint it gives as `name`, when toolgate may call it.
    pub fn endpoint(&self, name: &str) -> Result<String, String> {
        let endpoint = self.document.get(name).and_then(Value::as_str);
        match endpoint.filter(|url| fetchable(url)) {
            Some(url) => Ok(url.to_owned()),
            None => Err(format!("{} gives no HTTPS `{name}`", self.url)),
        }
    }
}

/// Whether toolgate may call `url`: over HTTPS, or over HTTP on this host.
pub fn fetchable(url: &str) -> bool {
    let Ok(url) = url::Url::parse(url) else { return false };
    match (url.scheme(), url.host()) {
        ("https", Some(_)) => true,
        ("http", Some(url::Host::Ipv4(ip))) => ip.is_loopback(),
        ("http", Some(url::Host::Ipv6(ip))) => ip.is_loopback(),
        ("http", Some(url::Host::Domain(name))) => name == "localhost",
        _ => false,
    }
}

/// A provider's JSON answer to `request`, read up to 1 MiB; an answer that is
/// no success is an error.
pub async fn json(request: reqwest::RequestBuilder) -> Result<Value, String> {
    let mut response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_ANSWER_BYTES {
            return Err(format!("an answer over {MAX_ANSWER_BYTES} bytes"));
        }
    }
    if !status.is_success() {
        return Err(format!("answered {status}"));
    }
    serde_json::from_slice(&body).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_is_called_over_https_or_on_this_host() {
        assert!(fetchable("https://login.example.com/keys"));
        assert!(fetchable("http://127.0.0.1:8080/jwks"));
        assert!(fetchable("http://[::1]/jwks"));
        assert!(fetchable("http://localhost/jwks"));
        assert!(!fetchable("http://login.example.com/keys"));
        assert!(!fetchable("file:///etc/keys"));
        assert!(!fetchable("not a url"));
    }
}
