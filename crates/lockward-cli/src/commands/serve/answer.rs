//! How the server answers: JSON without markup in its bytes, and a failed request as its status
//! and `{"error": "message"}`.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A failed request: its status and `{"error": "message"}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// 503: the database cannot be reached (the next request tries again).
    pub(crate) fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }

    /// 500: the database answered with an error.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// What went wrong.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    /// 400: the request asks for something that does not exist.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        #[derive(Serialize)]
        struct Body<'a> {
            error: &'a str,
        }
        if self.status.is_server_error() {
            tracing::warn!(status = %self.status, "{}", self.message);
        }
        let mut response = json(&Body {
            error: &self.message,
        });
        *response.status_mut() = self.status;
        response
    }
}

/// `value` as JSON, compact, with `<`, `>` and `&` in strings written as `\u003c`, `\u003e`
/// and `\u0026`: the same value to any JSON reader, and no markup in the bytes, so an
/// `application_name` of `<script>...` stays inert even where the answer is mistaken for HTML.
pub(crate) fn to_json(value: &impl Serialize) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out, MarkupFree,
    ))?;
    Ok(out)
}

/// serde_json's compact formatter, escaping the characters markup is made of.
struct MarkupFree;

impl serde_json::ser::Formatter for MarkupFree {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, byte) in fragment.bytes().enumerate() {
            let escaped = match byte {
                b'<' => "\\u003c",
                b'>' => "\\u003e",
                b'&' => "\\u0026",
                _ => continue,
            };
            writer.write_all(&fragment.as_bytes()[start..i])?;
            writer.write_all(escaped.as_bytes())?;
            start = i + 1;
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// `value` as an `application/json` answer.
pub(crate) fn json(value: &impl Serialize) -> Response {
    match to_json(value) {
        Ok(body) => json_bytes(body),
        Err(error) => {
            let body =
                serde_json::json!({"error": format!("cannot write the answer as JSON: {error}")});
            let mut response = json_bytes(body.to_string().into_bytes());
            *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            response
        }
    }
}

pub(crate) fn json_bytes(body: impl Into<axum::body::Body>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body.into()).into_response()
}
