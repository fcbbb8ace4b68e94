//! The TLS files (CA certificates, CRLs, the client's certificate chain and key) and the
//! rustls configuration built from them, built again when one of them changed: a rotated
//! certificate is used from the next connection on.
//!
//! Before each connection the files are only looked at (`stat`: a few microseconds for the
//! handful of files), and read again only when one changed. Rebuilding at every connection
//! would cost the reading and parsing (hundreds of microseconds), and would also throw away
//! the configuration's TLS session cache, so no reconnection could resume a TLS session.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};

use crate::error::{Error, ErrorExt, Result};

/// The files a TLS configuration is made of, as [`TlsOptions`](super::TlsOptions) names them.
#[derive(Debug, Clone, Default)]
pub(crate) struct TlsFiles {
    pub(crate) ca_files: Vec<PathBuf>,
    pub(crate) crl_files: Vec<PathBuf>,
    pub(crate) platform_roots: bool,
    pub(crate) client_cert: Option<(PathBuf, PathBuf)>,
}

impl TlsFiles {
    /// Every file, in a fixed order (so their stamps compare position by position).
    fn paths(&self) -> impl Iterator<Item = &Path> {
        let client = self.client_cert.iter().flat_map(|(c, k)| [c, k]);
        self.ca_files
            .iter()
            .chain(&self.crl_files)
            .chain(client)
            .map(PathBuf::as_path)
    }

    fn stamps(&self) -> Vec<Option<FileStamp>> {
        self.paths().map(FileStamp::of).collect()
    }

    /// Reads every file and builds the configuration; `platform` holds the platform's trust
    /// store, read once when the client started (when it is used at all).
    fn build(&self, platform: &[CertificateDer<'static>]) -> Result<ClientConfig> {
        let mut roots = RootCertStore::empty();
        for path in &self.ca_files {
            let certs = read_certs(path, "CA file")?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(Error::invalid(format!(
                    "TLS: no usable CA certificate in {}",
                    path.display()
                )));
            }
        }
        roots.add_parsable_certificates(platform.iter().cloned());
        let mut crls = Vec::new();
        for path in &self.crl_files {
            crls.extend(read_crls(path)?);
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .with_crls(crls)
                .build()
                .map_err(|e| {
                    Error::invalid(format!("TLS: cannot check servers with these files: {e}"))
                })?;
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::invalid(format!("TLS: {e}")))?
            .with_webpki_verifier(verifier);
        match &self.client_cert {
            None => Ok(builder.with_no_client_auth()),
            Some((cert_path, key_path)) => {
                let chain = read_certs(cert_path, "client certificate file")?;
                let key = PrivateKeyDer::from_pem_file(key_path).map_err(|e| {
                    Error::invalid(format!(
                        "TLS: cannot read a private key from {}: {e}",
                        key_path.display()
                    ))
                })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| Error::invalid(format!("TLS: bad client certificate: {e}")))
            }
        }
    }
}

/// What tells a changed file from the same one: its length, modification time and, on
/// Unix, its inode and status-change time (a file replaced by a rename, as Kubernetes
/// does with a secret's files, or rewritten with its old modification time kept, as
/// `cp -p` does, is seen too). `None`: the file cannot be looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64, i64, i64),
}

impl FileStamp {
    fn of(path: &Path) -> Option<FileStamp> {
        // Follows links: a link swapped to a new target is a change.
        let meta = fs::metadata(path).ok()?;
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Some(FileStamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            inode: (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec()),
        })
    }
}

/// The configuration a client's connections use, built from its files and built again
/// when they change. If the changed files cannot be read or make no configuration (a
/// file half written, a key that does not match the certificate yet), the last good
/// configuration stays in use and the failure is kept, for the logs and for the error of a
/// handshake that then fails; the files are tried again when they change again.
pub(crate) struct ReloadingConfig {
    files: TlsFiles,
    platform: Vec<CertificateDer<'static>>,
    loaded: Mutex<Loaded>,
}

struct Loaded {
    /// The files' stamps when they were last read (successfully or not).
    stamps: Vec<Option<FileStamp>>,
    config: Arc<ClientConfig>,
    /// Why the files could not be read again since `config` was built.
    reload_failure: Option<Arc<str>>,
}

/// The configuration for one connection.
pub(crate) struct CurrentConfig {
    pub(crate) config: Arc<ClientConfig>,
    /// Set when the files changed but could not be used: why (`config` is the last good).
    pub(crate) reload_failure: Option<Arc<str>>,
}

impl ReloadingConfig {
    /// Reads the files for the first time: any failure is the client's start's error.
    pub(crate) fn load(files: TlsFiles) -> Result<ReloadingConfig> {
        let platform = if files.platform_roots || files.ca_files.is_empty() {
            let found = rustls_native_certs::load_native_certs();
            if found.certs.is_empty() && files.ca_files.is_empty() {
                let why = found.errors.first().map(|e| format!(": {e}"));
                return Err(Error::invalid(format!(
                    "TLS: the platform's trust store holds no certificate{}",
                    why.unwrap_or_default()
                )));
            }
            found.certs
        } else {
            Vec::new()
        };
        let stamps = files.stamps();
        let config = Arc::new(files.build(&platform)?);
        Ok(ReloadingConfig {
            files,
            platform,
            loaded: Mutex::new(Loaded {
                stamps,
                config,
                reload_failure: None,
            }),
        })
    }

    /// The configuration for a new connection: built again first if a file changed.
    pub(crate) fn current(&self) -> CurrentConfig {
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        // Stamped before reading: a file that changes while it is read is read again at
        // the next connection.
        let stamps = self.files.stamps();
        if stamps != loaded.stamps {
            loaded.stamps = stamps;
            match self.files.build(&self.platform) {
                Ok(config) => {
                    crate::__log!(info, "TLS files changed: read again");
                    loaded.config = Arc::new(config);
                    loaded.reload_failure = None;
                }
                Err(e) => {
                    crate::__log!(warn, error = %e, "TLS files changed but cannot be used; keeping the last good ones");
                    loaded.reload_failure = Some(e.to_string().into());
                }
            }
        }
        CurrentConfig {
            config: loaded.config.clone(),
            reload_failure: loaded.reload_failure.clone(),
        }
    }
}

fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| {
            Error::invalid(format!(
                "TLS: cannot read the {what} {}: {e}",
                path.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(Error::invalid(format!(
            "TLS: no certificate in the {what} {}",
            path.display()
        )));
    }
    Ok(certs)
}

fn read_crls(path: &Path) -> Result<Vec<CertificateRevocationListDer<'static>>> {
    let crls = CertificateRevocationListDer::pem_file_iter(path)
        .and_then(|crls| crls.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| {
            Error::invalid(format!(
                "TLS: cannot read the CRL file {}: {e}",
                path.display()
            ))
        })?;
    if crls.is_empty() {
        return Err(Error::invalid(format!(
            "TLS: no CRL (BEGIN X509 CRL) in the CRL file {}",
            path.display()
        )));
    }
    Ok(crls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;
    use zkrs_testkit::{TempDir, TlsCertificates};

    fn client_files(dir: &Path, certs: &TlsCertificates) -> TlsFiles {
        for (from, to) in [
            (certs.ca_pem(), "ca.pem"),
            (certs.crl_pem(), "crl.pem"),
            (certs.client_cert_pem(), "client.pem"),
            (certs.client_key_pem(), "client.key"),
        ] {
            fs::copy(from, dir.join(to)).unwrap();
        }
        TlsFiles {
            ca_files: vec![dir.join("ca.pem")],
            crl_files: vec![dir.join("crl.pem")],
            platform_roots: false,
            client_cert: Some((dir.join("client.pem"), dir.join("client.key"))),
        }
    }

    #[test]
    fn the_configuration_is_built_again_only_when_a_file_changed() {
        let (first, second) = (
            TlsCertificates::generate().unwrap(),
            TlsCertificates::generate().unwrap(),
        );
        let dir = TempDir::new().unwrap();
        let files = client_files(dir.path(), &first);
        let reloading = ReloadingConfig::load(files.clone()).unwrap();
        let start = reloading.current();
        assert!(start.reload_failure.is_none());

        // Unchanged: the same configuration (and its TLS session cache).
        assert!(Arc::ptr_eq(&start.config, &reloading.current().config));

        // Rotated: a new one.
        client_files(dir.path(), &second);
        let rotated = reloading.current();
        assert!(!Arc::ptr_eq(&start.config, &rotated.config));
        assert!(rotated.reload_failure.is_none());

        // A broken file: the last good configuration, and why.
        fs::write(dir.path().join("client.key"), "not a key").unwrap();
        let broken = reloading.current();
        assert!(Arc::ptr_eq(&rotated.config, &broken.config));
        let why = broken.reload_failure.expect("the reload failure");
        assert!(why.contains("client.key"), "{why}");
        // Not read again until it changes again, and still said.
        assert!(reloading.current().reload_failure.is_some());
        // Mended: used, and the failure forgotten.
        fs::copy(second.client_key_pem(), dir.path().join("client.key")).unwrap();
        let mended = reloading.current();
        assert!(!Arc::ptr_eq(&rotated.config, &mended.config));
        assert!(mended.reload_failure.is_none());

        // A missing file is a failure too, and the first reading's failures are errors.
        fs::remove_file(dir.path().join("crl.pem")).unwrap();
        assert!(reloading.current().reload_failure.is_some());
        let err = ReloadingConfig::load(files).err().expect("no CRL file");
        assert!(err.to_string().contains("crl.pem"), "{err}");
    }

    /// What looking costs against what rebuilding costs, per connection (shown with
    /// `--nocapture`; asserted only as an order of magnitude, loosely enough for a busy
    /// machine).
    #[test]
    fn looking_at_the_files_costs_far_less_than_reading_them() {
        let certs = TlsCertificates::generate().unwrap();
        let dir = TempDir::new().unwrap();
        let files = client_files(dir.path(), &certs);
        let reloading = ReloadingConfig::load(files.clone()).unwrap();
        const ROUNDS: u32 = 200;
        let started = Instant::now();
        for _ in 0..ROUNDS {
            drop(reloading.current());
        }
        let look = started.elapsed() / ROUNDS;
        let started = Instant::now();
        for _ in 0..ROUNDS {
            drop(files.build(&[]).unwrap());
        }
        let build = started.elapsed() / ROUNDS;
        eprintln!(
            "per connection: looking at the 4 files {look:?}, reading and building {build:?}"
        );
        assert!(look < build, "looking {look:?}, building {build:?}");
    }
}
