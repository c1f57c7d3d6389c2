//! Bearer tokens: read from `--token-file`, compared in constant time. A request
//! other than `GET /healthz` without `Authorization: Bearer T` for one of them is
//! answered 401 (with `WWW-Authenticate: Bearer`) before its body is read.

use super::App;
use anyhow::{bail, Context, Result};
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::path::Path;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// The tokens a request may carry.
pub(crate) struct Tokens(Vec<Vec<u8>>);

impl Tokens {
    /// The tokens of `path`: one per line, blank lines and `#` lines skipped, the
    /// line's ends trimmed. An error when it has none or one is shorter than 16 bytes.
    pub(crate) fn read(path: &Path) -> Result<Tokens> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the token file {}", path.display()))?;
        let mut tokens = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if t.len() < 16 || t.bytes().any(|b| !b.is_ascii_graphic()) {
                bail!(
                    "{} line {}: a token is at least 16 printable ASCII characters without spaces",
                    path.display(),
                    n + 1
                );
            }
            tokens.push(t.as_bytes().to_vec());
        }
        if tokens.is_empty() {
            bail!("{}: no token in it", path.display());
        }
        Ok(Tokens(tokens))
    }

    /// How many there are.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether `given` is one of them. Each comparison takes the same time whatever
    /// bytes match; every token is compared.
    fn allows(&self, given: &[u8]) -> bool {
        let mut ok = subtle::Choice::from(0);
        for t in &self.0 {
            ok |= t.as_slice().ct_eq(given);
        }
        ok.into()
    }
}

/// The middleware: passes a request with a token allowed (or any when there are no
/// tokens), answers 401 otherwise.
pub(crate) async fn require_token(
    State(app): State<Arc<App>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(tokens) = &app.tokens else {
        return next.run(req).await;
    };
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "));
    match given {
        Some(t) if tokens.allows(t) => next.run(req).await,
        _ => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            axum::Json(serde_json::json!({
                "error": "this server needs `Authorization: Bearer TOKEN` with a token of its --token-file"
            })),
        )
            .into_response(),
    }
}
