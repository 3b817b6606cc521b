//! Where the proxy reads bundle files: an object store (`s3://`, `gs://`, `az://`, configured
//! only from the standard environment variables) or an HTTP(S) base URL, through `object_store`.
//! Every fetch is bounded in size and time, and every failure becomes a short reason that names
//! no credential, URL or upstream response body.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::client::{HttpError, HttpErrorKind};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::path::Path as StorePath;
use object_store::{BackoffConfig, ClientConfigKey, GetOptions, ObjectStore, RetryConfig};

/// How long the proxy waits on its upstream.
#[derive(Debug, Clone, Copy)]
pub struct UpstreamTimeouts {
    /// To open a connection.
    pub connect: Duration,
    /// Without a byte arriving, once connected: a stalled upstream fails fast.
    pub inactivity: Duration,
    /// For a whole file, headers to last byte.
    pub total: Duration,
}

impl UpstreamTimeouts {
    /// Silence allowed by default: a browser waits on the proxy, and with the one retry a
    /// stalled upstream answers 502 after about twice this.
    pub const DEFAULT_INACTIVITY: Duration = Duration::from_secs(10);

    /// `inactivity` of silence, connecting included (at most 5 s of it), 5 min in all: enough
    /// for a 64 MiB file over a slow 2 Mbit/s link.
    pub fn with_inactivity(inactivity: Duration) -> UpstreamTimeouts {
        UpstreamTimeouts {
            connect: inactivity.min(Duration::from_secs(5)),
            inactivity,
            total: Duration::from_secs(300),
        }
    }
}

impl Default for UpstreamTimeouts {
    fn default() -> UpstreamTimeouts {
        UpstreamTimeouts::with_inactivity(Self::DEFAULT_INACTIVITY)
    }
}

/// The upstream: a store, and the prefix under it that request keys are relative to.
pub struct Upstream {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// What to print: the URL without query, fragment or user info.
    pub description: String,
}

/// A file found upstream: its size, and its bytes unless only its head was asked.
pub struct Fetched {
    pub size: u64,
    /// The upstream's entity tag, for a browser's next `If-None-Match`.
    pub etag: Option<String>,
    /// Exactly `size` bytes, or an error item and nothing more.
    pub body: Option<BoxStream<'static, Result<Bytes, UpstreamError>>>,
}

/// Why the upstream could not give a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    #[error("not found upstream")]
    NotFound,
    /// The file still has the entity tag the client sent.
    #[error("not modified")]
    NotModified,
    #[error("upstream file is {size} bytes, over the proxy's limit of {max}")]
    TooLarge { size: u64, max: u64 },
    /// A short fixed reason: which step failed, never the upstream's words.
    #[error("upstream failed: {0}")]
    Failed(&'static str),
}

impl Upstream {
    /// The upstream named by `url`. Object stores take their credentials, region and endpoint
    /// from the environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`), as their own tools do; none may be
    /// in the URL.
    pub fn open(url: &str, timeouts: UpstreamTimeouts) -> Result<Upstream, String> {
        let (scheme, rest) =
            url.split_once("://").ok_or_else(|| format!("{url}: not a URL (s3://, gs://, az://, http(s)://)"))?;
        if rest.contains(['?', '#', '@']) {
            return Err(format!(
                "{scheme}:// upstream: no user info, query or fragment in the URL; credentials come from the environment"
            ));
        }
        let description = format!("{scheme}://{rest}");
        let retry = RetryConfig {
            backoff: BackoffConfig::default(),
            // One retry: a proxy answers a browser that waits, and the browser can ask again.
            max_retries: 1,
            retry_timeout: timeouts.total,
        };
        let client_settings = client_settings(timeouts);
        crate::publish::destination::install_tls_provider();
        let (store, prefix): (Arc<dyn ObjectStore>, String) = match scheme {
            "s3" | "gs" | "az" => {
                let (container, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                if container.is_empty() {
                    return Err(format!("{description}: no bucket"));
                }
                let bucket_url = format!("{scheme}://{container}");
                let store = object_store_for(scheme, &bucket_url, retry, &client_settings).map_err(|e| {
                    format!("{description}: {}; see {}", short_build_error(&e), environment_hint(scheme))
                })?;
                (store, prefix.trim_matches('/').to_owned())
            }
            "http" | "https" => {
                let mut builder =
                    HttpBuilder::new().with_url(format!("{scheme}://{}", rest.trim_end_matches('/'))).with_retry(retry);
                for (key, value) in &client_settings {
                    builder = builder.with_config(*key, value);
                }
                let store = builder
                    .with_config(ClientConfigKey::AllowHttp, (scheme == "http").to_string())
                    .build()
                    .map_err(|e| format!("{description}: {}", short_build_error(&e)))?;
                (Arc::new(store), String::new())
            }
            other => return Err(format!("{other}:// upstreams are not supported (s3://, gs://, az://, http(s)://)")),
        };
        Ok(Upstream { store, prefix, description })
    }

    /// An upstream over `store` (the tests use an in-memory one).
    pub fn from_store(store: Arc<dyn ObjectStore>, prefix: &str, description: &str) -> Upstream {
        Upstream { store, prefix: prefix.trim_matches('/').to_owned(), description: description.to_owned() }
    }

    /// The file at `key` (a path [`super::paths::bundle_file`] accepted), its body only if
    /// `with_body`; [`UpstreamError::NotModified`] if it still has the entity tag
    /// `if_none_match`. Files over `max_size` bytes are refused before their body is read, and
    /// the body stops with an error if the upstream sends more than it announced.
    pub async fn fetch(
        &self,
        key: &str,
        with_body: bool,
        max_size: u64,
        if_none_match: Option<String>,
    ) -> Result<Fetched, UpstreamError> {
        let location = self.location(key)?;
        let options = GetOptions { head: !with_body, if_none_match, ..GetOptions::default() };
        let result = self.store.get_opts(&location, options).await.map_err(|e| classify(&e))?;
        let (size, etag) = (result.meta.size, result.meta.e_tag.clone());
        check_size(size, max_size)?;
        let body = with_body.then(|| exactly(result.into_stream(), size));
        Ok(Fetched { size, etag, body })
    }

    fn location(&self, key: &str) -> Result<StorePath, UpstreamError> {
        let full = if self.prefix.is_empty() { key.to_owned() } else { format!("{}/{key}", self.prefix) };
        // The key's segments were checked already; a prefix from the command line could still be
        // one object_store refuses.
        StorePath::parse(full).map_err(|_| UpstreamError::Failed("the upstream prefix is not a valid object path"))
    }
}

/// The client settings every upstream gets, as `object_store` config keys, so that they add to
/// what the environment set rather than replace it.
fn client_settings(timeouts: UpstreamTimeouts) -> Vec<(ClientConfigKey, String)> {
    let secs = |d: Duration| format!("{}ms", d.as_millis());
    vec![
        (ClientConfigKey::ConnectTimeout, secs(timeouts.connect)),
        (ClientConfigKey::ReadTimeout, secs(timeouts.inactivity)),
        (ClientConfigKey::Timeout, secs(timeouts.total)),
    ]
}

fn object_store_for(
    scheme: &str,
    bucket_url: &str,
    retry: RetryConfig,
    settings: &[(ClientConfigKey, String)],
) -> object_store::Result<Arc<dyn ObjectStore>> {
    Ok(match scheme {
        "s3" => {
            let mut builder = AmazonS3Builder::from_env().with_url(bucket_url).with_retry(retry);
            for (key, value) in settings {
                builder = builder.with_config(AmazonS3ConfigKey::Client(*key), value);
            }
            Arc::new(builder.build()?)
        }
        "gs" => {
            let mut builder = GoogleCloudStorageBuilder::from_env().with_url(bucket_url).with_retry(retry);
            for (key, value) in settings {
                builder = builder.with_config(GoogleConfigKey::Client(*key), value);
            }
            Arc::new(builder.build()?)
        }
        _ => {
            let mut builder = MicrosoftAzureBuilder::from_env().with_url(bucket_url).with_retry(retry);
            for (key, value) in settings {
                builder = builder.with_config(AzureConfigKey::Client(*key), value);
            }
            Arc::new(builder.build()?)
        }
    })
}

/// A builder error, without its details: they may quote configuration values.
fn short_build_error(error: &object_store::Error) -> &'static str {
    match error {
        object_store::Error::NotImplemented { .. } => "not supported",
        object_store::Error::UnknownConfigurationKey { .. } => "an unknown configuration key in the environment",
        _ => "could not configure the upstream from its URL and the environment",
    }
}

/// Which environment variables configure a store, for an error message.
fn environment_hint(scheme: &str) -> &'static str {
    match scheme {
        "s3" => "AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, ...",
        "gs" => "GOOGLE_SERVICE_ACCOUNT, GOOGLE_APPLICATION_CREDENTIALS, ...",
        _ => "AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_SAS_KEY, ...",
    }
}

fn check_size(size: u64, max: u64) -> Result<(), UpstreamError> {
    if size > max { Err(UpstreamError::TooLarge { size, max }) } else { Ok(()) }
}

/// `stream`, checked to hold exactly `size` bytes: more is an error (the upstream lied about
/// the size, or is feeding the proxy without end), and so is less.
fn exactly(
    stream: BoxStream<'static, object_store::Result<Bytes>>,
    size: u64,
) -> BoxStream<'static, Result<Bytes, UpstreamError>> {
    let mut received = 0u64;
    let mut done = false;
    stream
        .map(Some)
        .chain(futures_util::stream::once(async { None }))
        .filter_map(move |item| {
            let out = if done {
                None
            } else {
                match item {
                    Some(Ok(bytes)) => {
                        received += bytes.len() as u64;
                        if received > size {
                            Some(Err(UpstreamError::Failed("the upstream sent more bytes than announced")))
                        } else {
                            Some(Ok(bytes))
                        }
                    }
                    Some(Err(e)) => Some(Err(classify(&e))),
                    None if received < size => {
                        Some(Err(UpstreamError::Failed("the upstream sent fewer bytes than announced")))
                    }
                    None => None,
                }
            };
            if matches!(out, Some(Err(_))) {
                done = true;
            }
            std::future::ready(out)
        })
        .boxed()
}

/// The paths of the services a store asks for credentials when the environment has none: the
/// instance metadata services of AWS (`/latest/api/token`, `/latest/meta-data/...`), Azure and
/// Google Cloud, and AWS's container and web-identity endpoints.
const CREDENTIAL_SERVICES: [&str; 5] =
    ["/latest/api/token", "/latest/meta-data/", "/metadata/identity/", "computeMetadata/", "AssumeRoleWithWebIdentity"];

const NO_CREDENTIALS: &str = "no credentials: none in the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, \
     AWS_PROFILE, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT_KEY, ...), and no instance metadata service \
     answered";

/// What went wrong, in a few fixed words: the error's own text may hold URLs with signatures or
/// the upstream's response body.
pub fn classify(error: &object_store::Error) -> UpstreamError {
    use object_store::Error as E;
    match error {
        E::NotFound { .. } => return UpstreamError::NotFound,
        E::NotModified { .. } => return UpstreamError::NotModified,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            return UpstreamError::Failed("access denied (check the proxy's credentials)");
        }
        _ => {}
    }
    // The whole chain's text, never printed: only matched against fixed needles.
    let mut chain = String::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        chain.push_str(&current.to_string());
        chain.push('\n');
        source = current.source();
    }
    // Before the connection kinds: with no credentials in the environment the store asks the
    // instance metadata service, and failing to reach it says nothing of the bucket.
    if CREDENTIAL_SERVICES.iter().any(|needle| chain.contains(needle)) {
        return UpstreamError::Failed(NO_CREDENTIALS);
    }
    if chain.contains("redirect") || chain.contains("status code: 30") {
        return UpstreamError::Failed(
            "the upstream answered with a redirect (for a bucket: check its region, AWS_REGION, or the endpoint)",
        );
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(http) = current.downcast_ref::<HttpError>() {
            return UpstreamError::Failed(match http.kind() {
                HttpErrorKind::Connect => "could not connect",
                HttpErrorKind::Timeout => "timed out",
                HttpErrorKind::Interrupted => "the connection was interrupted",
                HttpErrorKind::Decode => "an unreadable response",
                _ => "the request failed",
            });
        }
        source = current.source();
    }
    let text = error.to_string();
    // The status is the one part of a retry error's text worth keeping, and is never secret.
    for (needle, reason) in [
        ("status code: 403", "access denied (check the proxy's credentials)"),
        ("status code: 401", "access denied (check the proxy's credentials)"),
        ("status code: 5", "the upstream answered with a server error"),
    ] {
        if text.contains(needle) {
            return UpstreamError::Failed(reason);
        }
    }
    UpstreamError::Failed("the request failed")
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use object_store::{ObjectStoreExt as _, PutPayload};

    fn in_memory(prefix: &str) -> (Upstream, Arc<InMemory>) {
        let store = Arc::new(InMemory::new());
        let upstream = Upstream::from_store(store.clone(), prefix, "memory");
        (upstream, store)
    }

    async fn collect(fetched: Fetched) -> Result<Vec<u8>, UpstreamError> {
        let mut body = fetched.body.expect("a body");
        let mut out = Vec::new();
        while let Some(chunk) = body.next().await {
            out.extend_from_slice(&chunk?);
        }
        Ok(out)
    }

    #[tokio::test]
    async fn fetches_under_the_prefix_and_bounds_the_size() {
        let (upstream, store) = in_memory("bundles/v1");
        store.put(&StorePath::from("bundles/v1/job/manifest.json"), PutPayload::from_static(b"{}")).await.unwrap();
        let fetched = upstream.fetch("job/manifest.json", true, 10, None).await.unwrap();
        assert_eq!(fetched.size, 2);
        assert_eq!(collect(fetched).await.unwrap(), b"{}");
        let head = upstream.fetch("job/manifest.json", false, 10, None).await.unwrap();
        assert!(head.body.is_none() && head.size == 2);
        assert_eq!(upstream.fetch("job/missing.json", true, 10, None).await.err(), Some(UpstreamError::NotFound));
        assert_eq!(
            upstream.fetch("job/manifest.json", true, 1, None).await.err(),
            Some(UpstreamError::TooLarge { size: 2, max: 1 })
        );
        assert_eq!(
            upstream.fetch("job/manifest.json", false, 1, None).await.err(),
            Some(UpstreamError::TooLarge { size: 2, max: 1 })
        );
    }

    #[tokio::test]
    async fn a_body_longer_or_shorter_than_announced_ends_in_an_error() {
        let chunks =
            || futures_util::stream::iter([Ok(Bytes::from_static(b"abc")), Ok(Bytes::from_static(b"def"))]).boxed();
        let drain = |s: BoxStream<'static, Result<Bytes, UpstreamError>>| async move { s.collect::<Vec<_>>().await };
        let exact = drain(exactly(chunks(), 6)).await;
        assert_eq!(exact, vec![Ok(Bytes::from_static(b"abc")), Ok(Bytes::from_static(b"def"))]);
        let longer = drain(exactly(chunks(), 4)).await;
        assert_eq!(longer.len(), 2, "the error ends the stream: {longer:?}");
        assert!(matches!(longer[1], Err(UpstreamError::Failed(why)) if why.contains("more bytes")));
        let shorter = drain(exactly(chunks(), 7)).await;
        assert!(matches!(shorter[2], Err(UpstreamError::Failed(why)) if why.contains("fewer bytes")));
    }

    #[test]
    fn refuses_credentials_in_the_url_and_unknown_schemes() {
        let timeouts = UpstreamTimeouts::default();
        for url in ["https://user:pw@example.com/b", "s3://bucket/p?sig=1", "ftp://host/x", "bucket/prefix", "s3:///p"]
        {
            assert!(Upstream::open(url, timeouts).is_err(), "{url}");
        }
        let http = Upstream::open("http://127.0.0.1:9/bundles/", timeouts).unwrap();
        assert_eq!(http.description, "http://127.0.0.1:9/bundles/");
    }
}
