//! What every cache handle shares: the view, the listeners, and the task's lifecycle (started
//! once; close or drop stops every watch, ends every stream, and leaves no task behind).

use crate::error::ErrorExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{mpsc, oneshot, watch};
use zkrs_client::{AddWatchMode, Client, Error, EventStream, Result, DEFAULT_EVENT_CAPACITY};

use super::engine::{Command, Engine, OneShot, Settings, Watching};
use super::persistent_watcher::PersistentWatcher;
use super::view::{SharedView, Snapshot, ViewWriter};
use super::{CacheEvent, ChildData};
use crate::framework::Listeners;

/// How the engine of a cache learns of changes.
pub(crate) enum WatchWith {
    /// One-shot watches on every node.
    OneShot,
    /// One persistent recursive watch on the root (falling back to one-shot watches on a
    /// server without `addWatch`).
    Recursive,
}

enum Run {
    Idle,
    Running {
        close: oneshot::Sender<()>,
        commands: mpsc::UnboundedSender<Command>,
        task: tokio::task::JoinHandle<()>,
    },
    Closed,
}

pub(crate) struct CacheCore {
    client: Client,
    view: SharedView,
    listeners: Listeners<CacheEvent>,
    run: Mutex<Run>,
    initialized: watch::Receiver<bool>,
    initialized_tx: Mutex<Option<watch::Sender<bool>>>,
    clear_on_close: AtomicBool,
}

impl CacheCore {
    pub(crate) fn new(client: &Client, capacity: usize) -> CacheCore {
        let (initialized_tx, initialized) = watch::channel(false);
        CacheCore {
            client: client.clone(),
            view: SharedView::default(),
            listeners: Listeners::new(capacity),
            run: Mutex::new(Run::Idle),
            initialized,
            initialized_tx: Mutex::new(Some(initialized_tx)),
            clear_on_close: AtomicBool::new(false),
        }
    }

    fn run(&self) -> MutexGuard<'_, Run> {
        self.run.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts the task. Needs a tokio runtime. Every cache starts its core once, right after
    /// making it, except a group member's, which starts it once its node is made, unless it
    /// was closed first (then this is `Closed`).
    pub(crate) fn start(&self, settings: Settings, with: WatchWith) -> Result<()> {
        let mut run = self.run();
        if !matches!(*run, Run::Idle) {
            return Err(Error::closed());
        }
        // The stream a user takes right after the cache's `start` sees its first events.
        self.listeners.keep_first();
        let watching = match with {
            WatchWith::OneShot => Watching::OneShot(OneShot::new(&self.client)),
            WatchWith::Recursive => Watching::Recursive(PersistentWatcher::spawn(
                &self.client,
                &settings.root,
                AddWatchMode::PersistentRecursive,
                DEFAULT_EVENT_CAPACITY,
            )),
        };
        let writer = ViewWriter::new(self.view.clone(), self.listeners.clone());
        let engine = Engine::new(self.client.clone(), settings, writer, watching);
        let (close, close_rx) = oneshot::channel();
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let initialized = self
            .initialized_tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let task = tokio::spawn(engine.run(close_rx, commands_rx, initialized));
        *run = Run::Running {
            close,
            commands,
            task,
        };
        Ok(())
    }

    /// Reads everything again and waits until every read is in.
    pub(crate) async fn refresh(&self) -> Result<()> {
        let (done, done_rx) = oneshot::channel();
        match &*self.run() {
            Run::Running { commands, .. } => commands
                .send(Command::Refresh(done))
                .map_err(|_| Error::closed())?,
            // Not started yet: only a group member's core, which does not rebuild.
            Run::Idle | Run::Closed => return Err(Error::closed()),
        }
        done_rx.await.map_err(|_| Error::closed())
    }

    /// Waits until the initial build is complete. Fails if the cache was closed (or never
    /// started and then dropped) first.
    pub(crate) async fn wait_initialized(&self) -> Result<()> {
        let mut initialized = self.initialized.clone();
        initialized
            .wait_for(|done| *done)
            .await
            .map(drop)
            .map_err(|_| Error::closed())
    }

    /// Whether the initial build is complete.
    #[cfg(feature = "typed")]
    pub(crate) fn is_initialized(&self) -> bool {
        *self.initialized.borrow()
    }

    pub(crate) fn events(&self) -> EventStream<CacheEvent> {
        self.listeners.subscribe()
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        self.view.snapshot()
    }

    pub(crate) fn get(&self, path: &str) -> Option<Arc<ChildData>> {
        self.view.get(path)
    }

    pub(crate) fn len(&self) -> usize {
        self.view.len()
    }

    pub(crate) fn clear(&self) {
        self.view.clear();
    }

    /// Whether closing empties the view.
    pub(crate) fn set_clear_on_close(&self, clear: bool) {
        self.clear_on_close.store(clear, Ordering::Relaxed);
    }

    /// Stops the task and waits for it: its watches are removed from the server, its event
    /// streams end; the view is emptied if so set.
    pub(crate) async fn close(&self) {
        let running = std::mem::replace(&mut *self.run(), Run::Closed);
        if let Run::Running { close, task, .. } = running {
            let _ = close.send(());
            let _ = task.await;
        }
        self.listeners.close();
        if self.clear_on_close.load(Ordering::Relaxed) {
            self.view.clear();
        }
    }
}

impl Drop for CacheCore {
    fn drop(&mut self) {
        // Dropping the close sender stops the task; it drops its watches on the way out.
        let running = std::mem::replace(&mut *self.run(), Run::Closed);
        drop(running);
        self.listeners.close();
    }
}
