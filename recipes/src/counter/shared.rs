//! [`SharedValue`] and [`SharedCount`]: a value every process sees, changed with
//! compare-and-set on the node's version, as Curator's `SharedValue` / `SharedCount`.

use crate::error::ErrorExt;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{oneshot, watch};
use zkrs_client::{
    Bytes, Client, ConnectionState, CreateMode, Error, ErrorCode, EventStream, Lagged, Result,
    Stat, DEFAULT_EVENT_CAPACITY,
};

use super::number::{read_number, Number};
use crate::data_codec::DataCodec;
use crate::framework::{create_parents, parent, Backoff, Listeners, ParentMode};

/// A value with the node version it was read at (what compare-and-set compares).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedValue<T> {
    /// The node's data version when this value was read or written.
    pub version: i32,
    /// The value.
    pub value: T,
}

/// What a [`SharedValue`] or [`SharedCount`] tells.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SharedValueEvent<T> {
    /// Another value was read (written here or elsewhere). Only the latest value is told:
    /// several quick writes may show as one change.
    Changed(VersionedValue<T>),
    /// The connection dropped; the value may be stale until reconnected.
    Suspended,
    /// Connected again; the value was read again (a change follows if it moved).
    Reconnected,
    /// The session was lost; the value is read again on the new session.
    Lost,
    /// The reader fell behind and `missed` events were dropped: read the current value.
    Lagged {
        /// How many events were dropped.
        missed: u64,
    },
}

impl<T> From<Lagged> for SharedValueEvent<T> {
    fn from(lagged: Lagged) -> Self {
        SharedValueEvent::Lagged {
            missed: lagged.missed,
        }
    }
}

/// How a value is stored in its node.
pub(crate) trait Codec: Clone + PartialEq + Send + Sync + std::fmt::Debug + 'static {
    fn to_bytes(&self) -> Vec<u8>;
    fn from_bytes(path: &str, data: &[u8]) -> Result<Self>;
}

impl Codec for Bytes {
    fn to_bytes(&self) -> Vec<u8> {
        self.to_vec()
    }
    fn from_bytes(_path: &str, data: &[u8]) -> Result<Bytes> {
        // A copy: the value outlives the reply frame.
        Ok(Bytes::copy_from_slice(data))
    }
}

impl Codec for i32 {
    fn to_bytes(&self) -> Vec<u8> {
        self.encode()
    }
    fn from_bytes(path: &str, data: &[u8]) -> Result<i32> {
        if data.len() < 4 {
            return Err(Error::invalid_data(format!(
                "{path}: a shared count is 4 bytes, found {}",
                data.len()
            )));
        }
        read_number(path, data)
    }
}

/// The value as last read, and the zxid of the write it came from.
struct Current<T> {
    value: VersionedValue<T>,
    /// Newer reads win by `mzxid`, not by version: a version wraps past `i32::MAX`
    /// (CURATOR-688: Curator's SharedCount then ignored every later change).
    mzxid: i64,
}

struct Inner<T> {
    client: Client,
    path: String,
    seed: T,
    /// How the value's bytes are stored (gzipped for a compressed `SharedValue`).
    storage: DataCodec,
    current: Mutex<Option<Current<T>>>,
    listeners: Listeners<SharedValueEvent<T>>,
    /// How the first read went.
    init: watch::Sender<Init>,
}

/// How the first read went.
#[derive(Clone)]
enum Init {
    Pending,
    Done,
    Failed(Error),
}

impl<T: Codec> Inner<T> {
    fn current(&self) -> MutexGuard<'_, Option<Current<T>>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What is written for `value`.
    fn encode(&self, value: &T) -> Vec<u8> {
        self.storage.encode(&value.to_bytes())
    }

    /// The value a read found.
    fn decode(&self, data: Bytes) -> Result<T> {
        let data = self
            .storage
            .decode(data)
            .map_err(|e| e.with_path(&self.path))?;
        T::from_bytes(&self.path, &data)
    }

    /// Takes a read (or a write's result) if it is newer than what is held; tells it.
    fn offer(&self, stat: &Stat, value: T) {
        let mut current = self.current();
        if current.as_ref().is_some_and(|c| c.mzxid >= stat.mzxid) {
            return;
        }
        let value = VersionedValue {
            version: stat.version,
            value,
        };
        *current = Some(Current {
            value: value.clone(),
            mzxid: stat.mzxid,
        });
        drop(current);
        self.listeners.send(SharedValueEvent::Changed(value));
    }

    /// The value as last read; before the first read, the seed at version -1 (Curator's).
    fn value(&self) -> VersionedValue<T> {
        self.current()
            .as_ref()
            .map(|c| c.value.clone())
            .unwrap_or_else(|| VersionedValue {
                version: UNINITIALIZED_VERSION,
                value: self.seed.clone(),
            })
    }

    /// Creates the node with the seed if it does not exist, and reads it.
    async fn first_read(&self) -> Result<()> {
        create_parents(&self.client, parent(&self.path), ParentMode::Container).await?;
        match self
            .client
            .create(&self.path, &self.encode(&self.seed), CreateMode::Persistent)
            .await
        {
            Ok(_) => {}
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => {}
            Err(e) => return Err(e),
        }
        let (data, stat) = self.client.get_data(&self.path).await?;
        self.offer(&stat, self.decode(data)?);
        Ok(())
    }

    /// Waits for the first read: its error if it failed.
    async fn initialized(&self) -> Result<()> {
        let mut init = self.init.subscribe();
        let outcome = init
            .wait_for(|i| !matches!(i, Init::Pending))
            .await
            .map_err(|_| Error::closed())?
            .clone();
        match outcome {
            Init::Failed(e) => Err(e),
            _ => Ok(()),
        }
    }

    async fn set(&self, value: T) -> Result<()> {
        let stat = self
            .client
            .set_data(&self.path, &self.encode(&value), None)
            .await?;
        self.offer(&stat, value);
        Ok(())
    }

    async fn try_set(&self, expected: &VersionedValue<T>, value: T) -> Result<bool> {
        self.initialized().await?;
        let current = self.value();
        if current != *expected {
            return Ok(false);
        }
        match self
            .client
            .set_data(&self.path, &self.encode(&value), Some(expected.version))
            .await
        {
            Ok(stat) => {
                self.offer(&stat, value);
                Ok(true)
            }
            Err(e) if e.code() == Some(ErrorCode::BadVersion) => {
                // Someone else wrote first: learn their value, so the caller can retry.
                let (data, stat) = self.client.get_data(&self.path).await?;
                self.offer(&stat, self.decode(data)?);
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }
}

/// The version a value has before the first read (Curator's `UNINITIALIZED_VERSION`).
const UNINITIALIZED_VERSION: i32 = -1;

/// The task: the first read (told to [`Inner::init`]), then [`follow`]. It holds the value
/// strongly only for the first read; closing or dropping the handle ends it.
async fn run<T: Codec>(
    inner: std::sync::Weak<Inner<T>>,
    client: Client,
    mut closed: oneshot::Receiver<()>,
) {
    let first = async {
        let Some(inner) = inner.upgrade() else {
            return false;
        };
        let outcome = inner.first_read().await;
        let ok = outcome.is_ok();
        inner.init.send_replace(match outcome {
            Ok(()) => Init::Done,
            Err(e) => Init::Failed(e),
        });
        ok
    };
    let ok = tokio::select! {
        biased;
        _ = &mut closed => return,
        ok = first => ok,
    };
    if ok {
        follow(inner, client, closed).await;
    }
}

/// The task that keeps the value current: a data watch, read again on every change and every
/// reconnect. It holds the value weakly: dropping the handle ends it.
async fn follow<T: Codec>(
    inner: std::sync::Weak<Inner<T>>,
    client: Client,
    mut closed: oneshot::Receiver<()>,
) {
    let mut states = client.state_changes();
    let Some(path) = inner.upgrade().map(|i| i.path.clone()) else {
        return;
    };
    let mut backoff = Backoff::new();
    loop {
        // Read with a watch (or wait for the node to be created again).
        let watch = match client.get_data_and_watch(&path).await {
            Ok((data, stat, watch)) => {
                backoff.reset();
                let Some(inner) = inner.upgrade() else { return };
                if let Ok(value) = inner.decode(data) {
                    inner.offer(&stat, value);
                }
                Some(watch)
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                match client.exists_and_watch(&path).await {
                    Ok((_, watch)) => {
                        backoff.reset();
                        Some(watch)
                    }
                    Err(_) => None,
                }
            }
            Err(e) if e.is_closed() => return,
            Err(_) => None,
        };
        let mut watch = watch;
        // Wait for a change, a state change that calls for a new read, or the end.
        loop {
            let no_watch = watch.is_none();
            let changed = async {
                match watch.as_mut() {
                    Some(w) => w.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                _ = &mut closed => return,
                event = changed => {
                    if !event.is_session_event() {
                        break;
                    }
                    watch = None;
                }
                change = states.next() => {
                    let Some(change) = change else { return };
                    let Some(inner) = inner.upgrade() else { return };
                    match change.state {
                        ConnectionState::Suspended => inner.listeners.send(SharedValueEvent::Suspended),
                        ConnectionState::Lost => inner.listeners.send(SharedValueEvent::Lost),
                        ConnectionState::Reconnected => {
                            inner.listeners.send(SharedValueEvent::Reconnected);
                            break;
                        }
                        ConnectionState::Closed => return,
                        _ => {}
                    }
                }
                // A failed read: try again once connected.
                _ = backoff.pause(&client), if no_watch => break,
            }
        }
    }
}

/// A value (any bytes) shared by every process that uses the same node, as Curator's
/// `SharedValue`: start creates the node with the seed if absent, reads it and keeps it
/// current with a watch; writes go through unconditionally ([`SharedValue::set_value`]) or
/// only if nobody wrote since a given read ([`SharedValue::try_set_value`]).
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::counter::SharedValue;
/// let mode = SharedValue::builder(&client, "/app/mode").seed(b"normal").start()?;
/// mode.initialized().await?;
/// let seen = mode.versioned_value();
/// if !mode.try_set_value(&seen, b"maintenance").await? {
///     println!("someone else changed it first: {:?}", mode.value());
/// }
/// # Ok(()) }
/// ```
pub struct SharedValue {
    inner: Arc<Inner<Bytes>>,
    run: Running,
}

/// A 4-byte big-endian count shared by every process that uses the same node, as Curator's
/// `SharedCount` (the format a semaphore's shared maximum uses too).
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::counter::SharedCount;
/// let workers = SharedCount::builder(&client, "/app/workers").seed(4).start()?;
/// workers.initialized().await?;
/// loop {
///     let seen = workers.versioned_value();
///     if workers.try_set_count(&seen, seen.value + 1).await? {
///         break;
///     }
/// }
/// # Ok(()) }
/// ```
pub struct SharedCount {
    inner: Arc<Inner<i32>>,
    run: Running,
}

/// The task of a started value: dropping it stops the task.
struct Running {
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    async fn close(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

/// Settings for a [`SharedValue`]; [`SharedValueBuilder::start`] starts it.
#[derive(Debug)]
#[must_use = "a builder does nothing until started"]
pub struct SharedValueBuilder {
    client: Client,
    path: String,
    seed: Bytes,
    storage: DataCodec,
}

impl SharedValueBuilder {
    /// The value the node is created with if absent (default: empty).
    pub fn seed(mut self, seed: impl AsRef<[u8]>) -> SharedValueBuilder {
        self.seed = Bytes::copy_from_slice(seed.as_ref());
        self
    }

    /// Whether the value is stored gzipped, as Curator's `setData().compressed()` writes it
    /// and `getData().decompressed()` reads it (default: no; Curator's `SharedValue` has no
    /// such option: its peers read the node with `decompressed()`). The value is given and
    /// returned as it is; a node that is not Curator's gzip makes the first read fail with
    /// kind `InvalidData`, and is skipped by later reads until a write makes it readable.
    #[cfg(feature = "compression")]
    #[cfg_attr(docsrs, doc(cfg(feature = "compression")))]
    pub fn compressed(mut self, compressed: bool) -> SharedValueBuilder {
        self.storage = DataCodec::compressed(compressed);
        self
    }

    /// Starts (in a task: needs a tokio runtime): creates the node with the seed if it does
    /// not exist, reads it ([`SharedValue::initialized`] waits for that), and keeps the
    /// value current from then on. `InvalidInput` for a bad path.
    pub fn start(self) -> Result<SharedValue> {
        let (inner, run) = start(&self.client, &self.path, self.seed, self.storage)?;
        Ok(SharedValue { inner, run })
    }
}

/// Settings for a [`SharedCount`]; [`SharedCountBuilder::start`] starts it.
#[derive(Debug)]
#[must_use = "a builder does nothing until started"]
pub struct SharedCountBuilder {
    client: Client,
    path: String,
    seed: i32,
}

impl SharedCountBuilder {
    /// The count the node is created with if absent (default: 0).
    pub fn seed(mut self, seed: i32) -> SharedCountBuilder {
        self.seed = seed;
        self
    }

    /// Starts (in a task: needs a tokio runtime): creates the node with the seed if it does
    /// not exist, reads it ([`SharedCount::initialized`] waits for that), and keeps the
    /// count current from then on. `InvalidInput` for a bad path.
    pub fn start(self) -> Result<SharedCount> {
        let (inner, run) = start(&self.client, &self.path, self.seed, DataCodec::Plain)?;
        Ok(SharedCount { inner, run })
    }
}

macro_rules! shared_common {
    ($t:ty) => {
        /// Waits for the first read (after which the value is the node's): its error if it
        /// failed (no permission, say; the value then stays the seed).
        pub async fn initialized(&self) -> Result<()> {
            self.inner.initialized().await
        }

        /// The value and the version it was read at; before the first read, the seed at
        /// version -1.
        pub fn versioned_value(&self) -> VersionedValue<$t> {
            self.inner.value()
        }

        /// Changes from now on (the latest value only: quick successive writes may show as
        /// one), and connection changes. Any number of streams; each is bounded.
        pub fn events(&self) -> EventStream<SharedValueEvent<$t>> {
            self.inner.listeners.subscribe()
        }

        /// Stops following the node and waits for its task; the event streams end. Dropping
        /// does the same without waiting.
        pub async fn close(mut self) {
            self.run.close().await;
            self.inner.listeners.close();
        }

        /// The node's path.
        pub fn path(&self) -> &str {
            &self.inner.path
        }
    };
}

fn start<T: Codec>(
    client: &Client,
    path: &str,
    seed: T,
    storage: DataCodec,
) -> Result<(Arc<Inner<T>>, Running)> {
    zkrs_client::validate_path(path)?;
    let (init, _) = watch::channel(Init::Pending);
    let inner = Arc::new(Inner {
        client: client.clone(),
        path: path.to_string(),
        seed,
        storage,
        current: Mutex::new(None),
        listeners: Listeners::new(DEFAULT_EVENT_CAPACITY),
        init,
    });
    // The stream a user takes right after `start` sees the first read's event.
    inner.listeners.keep_first();
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(run(Arc::downgrade(&inner), client.clone(), stopped));
    Ok((
        inner,
        Running {
            stop: Some(stop),
            task: Some(task),
        },
    ))
}

impl SharedValue {
    /// Settings for a shared value at `path`.
    pub fn builder(client: &Client, path: &str) -> SharedValueBuilder {
        SharedValueBuilder {
            client: client.clone(),
            path: path.to_string(),
            seed: Bytes::new(),
            storage: DataCodec::Plain,
        }
    }

    /// The current value (before the first read, the seed).
    pub fn value(&self) -> Bytes {
        self.inner.value().value
    }

    /// Writes `value` whatever the node holds.
    pub async fn set_value(&self, value: &[u8]) -> Result<()> {
        self.inner.set(Bytes::copy_from_slice(value)).await
    }

    /// Writes `value` only if the node still holds `expected` (same version and value):
    /// `false` if it changed since (the new value is then read, for a retry). Waits for the
    /// first read.
    pub async fn try_set_value(
        &self,
        expected: &VersionedValue<Bytes>,
        value: &[u8],
    ) -> Result<bool> {
        self.inner
            .try_set(expected, Bytes::copy_from_slice(value))
            .await
    }

    shared_common!(Bytes);
}

impl SharedCount {
    /// Settings for a shared count at `path`.
    pub fn builder(client: &Client, path: &str) -> SharedCountBuilder {
        SharedCountBuilder {
            client: client.clone(),
            path: path.to_string(),
            seed: 0,
        }
    }

    /// The current count (before the first read, the seed).
    pub fn count(&self) -> i32 {
        self.inner.value().value
    }

    /// Writes `count` whatever the node holds.
    pub async fn set_count(&self, count: i32) -> Result<()> {
        self.inner.set(count).await
    }

    /// Writes `count` only if the node still holds `expected` (same version and count):
    /// `false` if it changed since (the new count is then read, for a retry). Waits for the
    /// first read.
    pub async fn try_set_count(&self, expected: &VersionedValue<i32>, count: i32) -> Result<bool> {
        self.inner.try_set(expected, count).await
    }

    shared_common!(i32);
}

impl Drop for SharedValue {
    fn drop(&mut self) {
        self.inner.listeners.close();
    }
}

impl Drop for SharedCount {
    fn drop(&mut self) {
        self.inner.listeners.close();
    }
}

impl std::fmt::Debug for SharedValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedValue")
            .field("path", &self.inner.path)
            .field("value", &self.inner.value())
            .finish()
    }
}

impl std::fmt::Debug for SharedCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedCount")
            .field("path", &self.inner.path)
            .field("value", &self.inner.value())
            .finish()
    }
}
