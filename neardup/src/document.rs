//! The input record: an id, an optional URL and a body of plain text or HTML.

use serde::{Deserialize, Serialize};

/// The body of a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Body {
    /// Plain text.
    Text(String),
    /// HTML; markup is removed by the tokenizer (see [`crate::sketch::tokenize`]).
    Html(String),
}

impl Body {
    /// The raw body, text or HTML.
    pub fn as_str(&self) -> &str {
        match self {
            Body::Text(s) | Body::Html(s) => s,
        }
    }

    /// Length of the raw body in bytes.
    pub fn len(&self) -> usize {
        self.as_str().len()
    }

    /// True when the raw body is empty.
    pub fn is_empty(&self) -> bool {
        self.as_str().is_empty()
    }
}

/// One document of a collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// The caller's identifier; reported in pairs, clusters and rejects.
    pub id: String,
    /// The page's URL, if known. Its host decides the IMG rule of the tokenizer and the
    /// site of the page.
    pub url: Option<String>,
    /// The content.
    pub body: Body,
    /// Caller-given site; overrides the site derived from the URL (see
    /// [`crate::verify::site`]).
    #[serde(default)]
    pub site: Option<String>,
    /// Caller-given priority for [`Keep::Priority`](crate::cluster::Keep::Priority):
    /// the highest priority in a cluster is kept. `None` ranks below every number.
    pub priority: Option<f64>,
}

impl Document {
    /// A plain-text document without URL.
    pub fn text(id: impl Into<String>, text: impl Into<String>) -> Self {
        Document {
            id: id.into(),
            url: None,
            body: Body::Text(text.into()),
            site: None,
            priority: None,
        }
    }

    /// An HTML document without URL.
    pub fn html(id: impl Into<String>, html: impl Into<String>) -> Self {
        Document {
            id: id.into(),
            url: None,
            body: Body::Html(html.into()),
            site: None,
            priority: None,
        }
    }

    /// Sets the URL.
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }
}

/// The host of a URL, lower-cased, without user info or port; `None` when the string
/// has no `scheme://host` or `//host` prefix.
pub fn url_host(url: &str) -> Option<&str> {
    let rest = if let Some(p) = url.find("://") {
        let scheme = &url[..p];
        if scheme.is_empty()
            || !scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
        {
            return None;
        }
        &url[p + 3..]
    } else {
        url.strip_prefix("//")?
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = if host_port.starts_with('[') {
        host_port
            .find(']')
            .map(|e| &host_port[..=e])
            .unwrap_or(host_port)
    } else {
        host_port.split(':').next().unwrap_or(host_port)
    };
    if host.is_empty() {
        None
    } else {
        Some(host)
    }
}

/// A record that could not be used, with the reason; it keeps its input position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// The record's id, when it could be read.
    pub id: Option<String>,
    /// Why it was rejected.
    pub reason: String,
}
