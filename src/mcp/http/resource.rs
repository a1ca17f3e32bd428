//! The gateway as an OAuth 2.1 resource server, as MCP's authorization specification has it:
//! its Protected Resource Metadata (RFC 9728) at `/.well-known/oauth-protected-resource` and
//! that followed by its resource's path, naming the authorization servers (the configured
//! issuers) a client gets its access token from; and the `WWW-Authenticate` challenge that
//! points a refused client there (RFC 6750, with RFC 9728's `resource_metadata`).

use axum::Json;
use axum::http::HeaderValue;
use serde_json::{Value, json};

/// The resource the gateway is, and the issuers of its access tokens.
#[derive(Debug, Clone)]
pub struct Resource {
    resource: String,
    issuers: Vec<String>,
    /// The metadata document's URL.
    metadata_url: String,
}

/// Why a token was refused, as the challenge names it.
#[derive(Debug, Clone, Copy)]
pub enum Challenge {
    /// No token came: the challenge only says where to get one.
    Missing,
    /// A token came and was not taken.
    InvalidToken,
    /// The token's holder lacks the role the call needs.
    InsufficientScope,
}

/// Why `[mcp] resource` cannot name the gateway.
#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    #[error("[mcp] resource `{resource}` is not a URL: {error}")]
    NotUrl { resource: String, error: url::ParseError },
    #[error("[mcp] resource `{0}` is an http(s) URL without a fragment (RFC 8707)")]
    NotHttp(String),
}

impl Resource {
    /// `resource` (its URL), whose tokens `issuers` issue.
    pub fn new(resource: String, issuers: Vec<String>) -> Result<Self, ResourceError> {
        let url = match url::Url::parse(&resource) {
            Ok(url) => url,
            Err(error) => return Err(ResourceError::NotUrl { resource, error }),
        };
        if url.fragment().is_some() || !matches!(url.scheme(), "http" | "https") {
            return Err(ResourceError::NotHttp(resource));
        }
        let path = url.path().trim_end_matches('/');
        let metadata_url = format!(
            "{}/.well-known/oauth-protected-resource{path}",
            url.origin().ascii_serialization()
        );
        Ok(Self { resource, issuers, metadata_url })
    }

    /// The paths the metadata is served at: the root's and the resource's own (one path when
    /// the resource is the root).
    pub fn metadata_paths(&self) -> Vec<String> {
        let own = url::Url::parse(&self.metadata_url).map(|u| u.path().to_owned());
        let mut paths = vec!["/.well-known/oauth-protected-resource".to_owned()];
        paths.extend(own.ok().filter(|own| !paths.contains(own)));
        paths
    }

    /// The metadata document.
    pub fn metadata(&self) -> Json<Value> {
        Json(json!({
            "resource": self.resource,
            "authorization_servers": self.issuers,
            "bearer_methods_supported": ["header"],
            "resource_name": "toolgate MCP gateway",
        }))
    }

    /// The `WWW-Authenticate` value answering a refusal.
    pub fn challenge(&self, challenge: Challenge) -> HeaderValue {
        let metadata = format!("resource_metadata=\"{}\"", self.metadata_url);
        let value = match challenge {
            Challenge::Missing => format!("Bearer {metadata}"),
            Challenge::InvalidToken => format!("Bearer error=\"invalid_token\", {metadata}"),
            Challenge::InsufficientScope => {
                format!("Bearer error=\"insufficient_scope\", {metadata}")
            }
        };
        HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_sits_at_the_well_known_path_before_the_resource_path() {
        let resource = Resource::new("https://gw.example.com/tools/mcp".into(), vec![])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            resource.metadata_paths(),
            [
                "/.well-known/oauth-protected-resource",
                "/.well-known/oauth-protected-resource/tools/mcp"
            ]
        );
        let root = Resource::new("https://gw.example.com/".into(), vec![]);
        let root = root.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(root.metadata_paths(), ["/.well-known/oauth-protected-resource"]);
        let challenge = resource.challenge(Challenge::InvalidToken);
        assert_eq!(
            challenge.to_str().unwrap_or_default(),
            "Bearer error=\"invalid_token\", resource_metadata=\"https://gw.example.com/.well-known/oauth-protected-resource/tools/mcp\""
        );
        assert!(Resource::new("https://gw.example.com/mcp#x".into(), vec![]).is_err());
    }
}
