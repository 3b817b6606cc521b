//! Where `publish` puts a bundle: an object store bucket (S3 API, GCS, Azure) under a prefix, or
//! a local directory; and the URL a browser opens it at.
//!
//! Endpoints and credentials come only from the environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`, read
//! by object_store's `from_env`): nothing here ever prints or stores them.

use std::sync::Arc;
use std::time::Duration;

use camino::Utf8PathBuf;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::path::Path as StorePath;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, RetryConfig};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// Where the files go.
pub enum Destination {
    /// A bucket, under `prefix` (empty: the bucket's root).
    Store { store: Arc<dyn ObjectStore>, prefix: StorePath, host: Host },
    /// A local directory, written as GitHub Pages serves one.
    Dir(Utf8PathBuf),
}

/// Who serves a bucket over HTTPS, to print the URL to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// AWS S3 (`endpoint: None`) or another S3 API server at `endpoint` (R2, MinIO, ...).
    S3 {
        bucket: String,
        region: String,
        endpoint: Option<String>,
    },
    Gcs {
        bucket: String,
    },
    /// Azure Blob Storage (`endpoint: None`), or the account served at `endpoint`: the emulator
    /// (Azurite: `{AZURITE_BLOB_STORAGE_URL}/{account}`) or `AZURE_STORAGE_ENDPOINT`.
    Azure {
        account: String,
        container: String,
        endpoint: Option<String>,
    },
}

impl Host {
    /// The URL of the folder holding the bundle, ending in `/`: what a hosted viewer takes as its
    /// bundle URL; the reference viewer is `index.html` in it. S3 URLs are virtual-hosted on AWS
    /// and path-style on any other endpoint (MinIO and moto serve no bucket subdomains).
    pub fn folder_url(&self, prefix: &StorePath) -> String {
        let base = match self {
            Host::S3 { bucket, endpoint: Some(endpoint), .. } => {
                format!("{}/{}", endpoint.trim_end_matches('/'), encode_segment(bucket))
            }
            Host::S3 { bucket, region, endpoint: None } => format!("https://{bucket}.s3.{region}.amazonaws.com"),
            Host::Gcs { bucket } => format!("https://storage.googleapis.com/{}", encode_segment(bucket)),
            Host::Azure { container, endpoint: Some(endpoint), .. } => {
                format!("{}/{}", endpoint.trim_end_matches('/'), encode_segment(container))
            }
            Host::Azure { account, container, endpoint: None } => {
                format!("https://{account}.blob.core.windows.net/{}", encode_segment(container))
            }
        };
        let mut url = base + "/";
        for part in prefix.parts() {
            url.push_str(&encode_segment(part.as_ref()));
            url.push('/');
        }
        url
    }
}

/// Everything but the characters a URL path segment may hold as they are.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

fn encode_segment(segment: &str) -> String {
    utf8_percent_encode(segment, SEGMENT).to_string()
}

/// Why a destination could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum DestinationError {
    #[error(
        "{0}: unsupported destination (use s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, az://CONTAINER/PREFIX or a directory)"
    )]
    Unsupported(String),
    #[error("{url}: no bucket name")]
    NoBucket { url: String },
    #[error("{url}: bad prefix: {why}")]
    BadPrefix { url: String, why: String },
    #[error("{url}: no Azure storage account: set AZURE_STORAGE_ACCOUNT_NAME")]
    NoAzureAccount { url: String },
    #[error("{url}: {source}")]
    Store { url: String, source: object_store::Error },
}

/// How `url` is split: scheme, bucket, prefix; `None` for a local path.
fn split_url(url: &str) -> Option<(&str, &str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    Some((scheme, bucket, prefix.trim_matches('/')))
}

/// Makes ring the process's TLS crypto provider, once, before any store's HTTP client is built:
/// reqwest is built without a provider of its own (see Cargo.toml), and would panic without one.
pub fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // An error means a provider is installed already, which serves as well.
    ONCE.call_once(|| drop(rustls::crypto::ring::default_provider().install_default()));
}

/// Opens `url`: `s3://`, `gs://`, `az://`, `file://` or a plain path.
pub fn open(url: &str) -> Result<Destination, DestinationError> {
    install_tls_provider();
    let Some((scheme, bucket, prefix)) = split_url(url) else {
        return Ok(Destination::Dir(Utf8PathBuf::from(url)));
    };
    if scheme == "file" {
        // file:///abs/path: the "bucket" is the empty host.
        let path = url.trim_start_matches("file://");
        let decoded = percent_decode_str(path).decode_utf8().map_err(|_| DestinationError::Unsupported(url.into()))?;
        return Ok(Destination::Dir(Utf8PathBuf::from(decoded.as_ref())));
    }
    if bucket.is_empty() {
        return Err(DestinationError::NoBucket { url: url.into() });
    }
    let prefix =
        StorePath::parse(prefix).map_err(|e| DestinationError::BadPrefix { url: url.into(), why: e.to_string() })?;
    let store_error = |source| DestinationError::Store { url: url.into(), source };
    let base = format!("{scheme}://{bucket}");
    let (store, host): (Arc<dyn ObjectStore>, Host) = match scheme {
        "s3" | "s3a" => {
            let mut builder = AmazonS3Builder::from_env().with_url(&base).with_retry(retry());
            for (key, value) in TIMEOUTS {
                if builder.get_config_value(&AmazonS3ConfigKey::Client(key)).is_none() {
                    builder = builder.with_config(AmazonS3ConfigKey::Client(key), value);
                }
            }
            let region = builder.get_config_value(&AmazonS3ConfigKey::Region).unwrap_or_else(|| "us-east-1".into());
            let endpoint = builder.get_config_value(&AmazonS3ConfigKey::Endpoint);
            let host = Host::S3 { bucket: bucket.into(), region, endpoint };
            (Arc::new(builder.build().map_err(store_error)?), host)
        }
        "gs" => {
            let mut builder = GoogleCloudStorageBuilder::from_env().with_url(&base).with_retry(retry());
            for (key, value) in TIMEOUTS {
                if builder.get_config_value(&GoogleConfigKey::Client(key)).is_none() {
                    builder = builder.with_config(GoogleConfigKey::Client(key), value);
                }
            }
            (Arc::new(builder.build().map_err(store_error)?), Host::Gcs { bucket: bucket.into() })
        }
        "az" | "azure" => {
            let mut builder = MicrosoftAzureBuilder::from_env().with_url(&base).with_retry(retry());
            for (key, value) in TIMEOUTS {
                if builder.get_config_value(&AzureConfigKey::Client(key)).is_none() {
                    builder = builder.with_config(AzureConfigKey::Client(key), value);
                }
            }
            let host = azure_host(
                bucket,
                builder.get_config_value(&AzureConfigKey::AccountName),
                builder.get_config_value(&AzureConfigKey::UseEmulator).as_deref(),
                builder.get_config_value(&AzureConfigKey::Endpoint),
                std::env::var("AZURITE_BLOB_STORAGE_URL").ok(),
            )
            .ok_or_else(|| DestinationError::NoAzureAccount { url: url.into() })?;
            (Arc::new(builder.build().map_err(store_error)?), host)
        }
        _ => return Err(DestinationError::Unsupported(url.into())),
    };
    Ok(Destination::Store { store, prefix, host })
}

/// Who serves `container`, as object_store's Azure builder reaches it: with the emulator on
/// (`AZURE_STORAGE_USE_EMULATOR`), the account (by default Azurite's `devstoreaccount1`) under
/// `AZURITE_BLOB_STORAGE_URL` (by default Azurite's `http://127.0.0.1:10000`), path-style;
/// otherwise `AZURE_STORAGE_ENDPOINT` if set, else the public cloud. `None`: no account named.
fn azure_host(
    container: &str,
    account: Option<String>,
    use_emulator: Option<&str>,
    endpoint: Option<String>,
    azurite_url: Option<String>,
) -> Option<Host> {
    let emulator =
        use_emulator.is_some_and(|v| ["1", "true", "on", "yes", "y"].contains(&v.to_ascii_lowercase().as_str()));
    if emulator {
        let account = account.unwrap_or_else(|| EMULATOR_ACCOUNT.into());
        let base = azurite_url.unwrap_or_else(|| EMULATOR_URL.into());
        let endpoint = format!("{}/{}", base.trim_end_matches('/'), encode_segment(&account));
        return Some(Host::Azure { account, container: container.into(), endpoint: Some(endpoint) });
    }
    Some(Host::Azure { account: account?, container: container.into(), endpoint })
}

/// The account and URL object_store's Azure builder uses for the emulator when none is set.
const EMULATOR_ACCOUNT: &str = "devstoreaccount1";
const EMULATOR_URL: &str = "http://127.0.0.1:10000";

/// Retries set here rather than left to the library's defaults: a transient error (5xx, a
/// dropped connection, a throttle) is retried up to 5 times with exponential backoff from 100 ms
/// to 15 s, and no request is retried past 2 minutes (a signed request must not outlive its
/// credentials).
fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(15),
            base: 2.0,
        },
        max_retries: 5,
        retry_timeout: Duration::from_secs(120),
    }
}

/// A stalled connection fails (and is retried) rather than hanging the publish: 10 s to connect,
/// 2 minutes for a request (a 16 MiB part at 1 Mbit/s takes about as long). Set as config keys,
/// not as `ClientOptions`, which would replace the ones read from the environment
/// (`AWS_ALLOW_HTTP`, proxies); a timeout the environment sets wins.
const TIMEOUTS: [(ClientConfigKey, &str); 2] =
    [(ClientConfigKey::ConnectTimeout, "10s"), (ClientConfigKey::Timeout, "120s")];

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(p: &str) -> StorePath {
        StorePath::parse(p).unwrap()
    }

    #[test]
    fn folder_urls_by_host() {
        let aws = Host::S3 { bucket: "my-bucket".into(), region: "eu-west-3".into(), endpoint: None };
        assert_eq!(aws.folder_url(&prefix("runs/job 7")), "https://my-bucket.s3.eu-west-3.amazonaws.com/runs/job%207/");
        let minio = Host::S3 {
            bucket: "b".into(),
            region: "us-east-1".into(),
            endpoint: Some("http://127.0.0.1:9000/".into()),
        };
        assert_eq!(minio.folder_url(&prefix("x")), "http://127.0.0.1:9000/b/x/");
        assert_eq!(minio.folder_url(&prefix("")), "http://127.0.0.1:9000/b/");
        assert_eq!(
            Host::Gcs { bucket: "g".into() }.folder_url(&prefix("a/b")),
            "https://storage.googleapis.com/g/a/b/"
        );
        let azure = Host::Azure { account: "acct".into(), container: "c".into(), endpoint: None };
        assert_eq!(azure.folder_url(&prefix("p")), "https://acct.blob.core.windows.net/c/p/");
    }

    #[test]
    fn azure_hosts_follow_the_emulator_and_endpoint_settings() {
        let url = |host: Option<Host>| host.map(|h| h.folder_url(&prefix("runs/x")));
        let acct = || Some("acct".to_string());
        assert_eq!(
            url(azure_host("c", acct(), Some("false"), None, None)).unwrap(),
            "https://acct.blob.core.windows.net/c/runs/x/"
        );
        assert_eq!(url(azure_host("c", None, None, None, None)), None);
        // Azurite: path-style, the account first; its defaults when nothing is set.
        assert_eq!(
            url(azure_host("c", None, Some("true"), None, Some("http://127.0.0.1:41234/".into()))).unwrap(),
            "http://127.0.0.1:41234/devstoreaccount1/c/runs/x/"
        );
        assert_eq!(
            url(azure_host("c", acct(), Some("1"), None, None)).unwrap(),
            "http://127.0.0.1:10000/acct/c/runs/x/"
        );
        assert_eq!(
            url(azure_host("c", acct(), None, Some("https://blobs.example.test/".into()), None)).unwrap(),
            "https://blobs.example.test/c/runs/x/"
        );
    }

    #[test]
    fn urls_split_into_bucket_and_prefix() {
        assert_eq!(split_url("s3://b/a/b/"), Some(("s3", "b", "a/b")));
        assert_eq!(split_url("gs://b"), Some(("gs", "b", "")));
        assert_eq!(split_url("/tmp/site"), None);
        assert!(matches!(open("ftp://x/y"), Err(DestinationError::Unsupported(_))));
        assert!(matches!(open("s3:///y"), Err(DestinationError::NoBucket { .. })));
        assert!(matches!(open("file:///tmp/a%20b"), Ok(Destination::Dir(d)) if d == "/tmp/a b"));
        assert!(matches!(open("site"), Ok(Destination::Dir(d)) if d == "site"));
    }
}
