//! [`TypedNode`]: one node holding a value of a Rust type: read, create, set, delete, and a
//! read-modify-write `update` that retries when another writer got there first.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use zkrs_client::{
    validate_create_path, AclEntry, Client, CreateMode, CreateOptions, Error, ErrorCode, Result,
    Stat,
};

use super::serializer::{decode, encode};
use super::{JsonSerializer, TypedData, ValueSerializer, ZPath};
use crate::error::ErrorExt;
use crate::framework::{create_parents, parent, ParentMode, RetryPolicy};

/// One node holding a value of type `T`, written and read through a [`ValueSerializer`]
/// (JSON by default), as Curator's `ModeledFramework` with its `VersionedModeledFramework`.
/// It keeps no state and runs no task: each method is one or a few requests, and a clone is
/// another handle on the same node.
///
/// - [`read`](TypedNode::read): the value and its Stat, `None` if the node does not exist.
/// - [`create`](TypedNode::create), [`set`](TypedNode::set) (optionally only over a given
///   version), [`delete`](TypedNode::delete) (likewise).
/// - [`update`](TypedNode::update): read, change with your closure, write back over the
///   version read; when someone else wrote in between, read and change again.
///
/// Reads are retried under the builder's [`RetryPolicy`] on a connection loss; writes are
/// not, since a write whose reply was lost may or may not have been applied: the
/// `ConnectionLoss` error is returned and the caller reads again to find out.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::typed::TypedNode;
///
/// #[derive(serde::Serialize, serde::Deserialize, Clone, Default)]
/// struct Limits {
///     max_jobs: u32,
/// }
///
/// let limits = TypedNode::<Limits>::builder(&client, "/app/limits").build()?;
/// limits
///     .update(|current| {
///         let mut next = current.cloned().unwrap_or_default();
///         next.max_jobs += 1;
///         Some(next)
///     })
///     .await?;
/// if let Some(now) = limits.read().await? {
///     println!("max_jobs = {} (version {})", now.value.max_jobs, now.version());
/// }
/// # Ok(()) }
/// ```
pub struct TypedNode<T, S = JsonSerializer> {
    client: Client,
    path: String,
    options: Arc<Options<S>>,
    _value: PhantomData<fn() -> T>,
}

/// What a builder sets; the serializer is shared by every node it makes.
struct Options<S> {
    serializer: Arc<S>,
    create_mode: CreateMode,
    acl: Vec<AclEntry>,
    ttl: Option<Duration>,
    parents: ParentMode,
    retry: RetryPolicy,
}

/// What [`TypedNode::update`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpdateOutcome<T> {
    /// The closure's value was written: the node now holds it, at this Stat.
    Written(TypedData<T>),
    /// The closure declined (returned `None`): nothing was written. What it was shown: the
    /// node as read, or `None` if it did not exist.
    Declined(Option<TypedData<T>>),
}

/// Settings for a [`TypedNode`]: [`TypedNodeBuilder::build`] makes the node of a path, or
/// [`TypedNodeBuilder::resolve`] the node of a template's path for some parameter values (a
/// builder with a template is kept and resolved once per id).
#[must_use = "a builder does nothing until built"]
pub struct TypedNodeBuilder<T, S = JsonSerializer> {
    client: Client,
    template: String,
    options: Options<S>,
    _value: PhantomData<fn() -> T>,
}

impl<T> TypedNode<T, JsonSerializer> {
    /// Settings for the node at `path`, or for the nodes of a template such as
    /// `/users/{id}/profile` (see [`ZPath`]). Defaults: JSON, [`CreateMode::Persistent`],
    /// the open ACL, missing parents made as containers, [`RetryPolicy::default`] for reads.
    pub fn builder(client: &Client, path: &str) -> TypedNodeBuilder<T, JsonSerializer> {
        TypedNodeBuilder {
            client: client.clone(),
            template: path.to_string(),
            options: Options {
                serializer: Arc::new(JsonSerializer),
                create_mode: CreateMode::Persistent,
                acl: Vec::new(),
                ttl: None,
                parents: ParentMode::Container,
                retry: RetryPolicy::default(),
            },
            _value: PhantomData,
        }
    }
}

impl<T, S> TypedNodeBuilder<T, S> {
    /// Another format for the value (default [`JsonSerializer`]).
    pub fn serializer<S2: ValueSerializer<T>>(self, serializer: S2) -> TypedNodeBuilder<T, S2> {
        let o = self.options;
        TypedNodeBuilder {
            client: self.client,
            template: self.template,
            options: Options {
                serializer: Arc::new(serializer),
                create_mode: o.create_mode,
                acl: o.acl,
                ttl: o.ttl,
                parents: o.parents,
                retry: o.retry,
            },
            _value: PhantomData,
        }
    }

    /// The mode creates use (default [`CreateMode::Persistent`]; Curator's ModelSpec
    /// `createMode`). A sequential mode makes a new node on each create, named by
    /// [`TypedNode::create`]'s answer; the other methods act on the path without the suffix.
    pub fn create_mode(mut self, mode: CreateMode) -> TypedNodeBuilder<T, S> {
        self.options.create_mode = mode;
        self
    }

    /// The ACL creates use (default: empty, open to all; Curator's ModelSpec `aclList`).
    pub fn acl(mut self, acl: Vec<AclEntry>) -> TypedNodeBuilder<T, S> {
        self.options.acl = acl;
        self
    }

    /// The TTL of a TTL create mode (needed by those modes, refused by the others).
    pub fn ttl(mut self, ttl: Duration) -> TypedNodeBuilder<T, S> {
        self.options.ttl = Some(ttl);
        self
    }

    /// What missing parents are made as when a create needs them (default
    /// [`ParentMode::Container`], as the other recipes).
    pub fn parents(mut self, mode: ParentMode) -> TypedNodeBuilder<T, S> {
        self.options.parents = mode;
        self
    }

    /// How reads are retried on a connection loss (default [`RetryPolicy::default`]).
    pub fn retry(mut self, retry: RetryPolicy) -> TypedNodeBuilder<T, S> {
        self.options.retry = retry;
        self
    }

    /// The node of a path without parameters. `InvalidInput` for a bad path, a template with
    /// parameters (use [`resolve`](TypedNodeBuilder::resolve)), or a TTL given to a mode
    /// without one (or missing for a TTL mode).
    pub fn build(self) -> Result<TypedNode<T, S>> {
        self.options.check(&self.template)?;
        // A sequential mode's path may end with '/' (the server adds the name): not a
        // template's.
        let unsuffixed = match self.template.strip_suffix('/') {
            Some(p) if !p.is_empty() => p,
            _ => &self.template,
        };
        if !ZPath::parse(unsuffixed)?.is_resolved() {
            return Err(Error::invalid(format!(
                "{:?} has parameters: resolve it with their values",
                self.template
            )));
        }
        Ok(TypedNode {
            client: self.client,
            path: self.template,
            options: Arc::new(self.options),
            _value: PhantomData,
        })
    }

    /// The node of the template's path with these parameter values, in order
    /// ([`ZPath::resolve`]). `InvalidInput` for a bad template, a bad value or the wrong
    /// number of them, or a TTL that does not fit the mode.
    pub fn resolve<V: AsRef<str>>(&self, values: &[V]) -> Result<TypedNode<T, S>> {
        let path = ZPath::parse(&self.template)?.resolve(values)?;
        self.options.check(&path)?;
        let o = &self.options;
        Ok(TypedNode {
            client: self.client.clone(),
            path,
            options: Arc::new(Options {
                serializer: o.serializer.clone(),
                create_mode: o.create_mode,
                acl: o.acl.clone(),
                ttl: o.ttl,
                parents: o.parents,
                retry: o.retry.clone(),
            }),
            _value: PhantomData,
        })
    }
}

impl<S> Options<S> {
    /// Refuses before anything is sent what the server (or the client) would refuse later.
    fn check(&self, path: &str) -> Result<()> {
        validate_create_path(path, self.create_mode)?;
        match (self.create_mode.is_ttl(), self.ttl) {
            (true, Some(ttl)) if !ttl.is_zero() => Ok(()),
            (true, _) => Err(Error::invalid(format!(
                "{} needs a positive TTL",
                self.create_mode
            ))),
            (false, Some(_)) => Err(Error::invalid(format!(
                "a TTL needs a TTL mode, not {}",
                self.create_mode
            ))),
            (false, None) => Ok(()),
        }
    }
}

impl<T, S> TypedNode<T, S> {
    /// The node's path.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl<T, S: ValueSerializer<T>> TypedNode<T, S> {
    /// The value and its Stat; `None` if the node does not exist. `InvalidData` if its data
    /// does not deserialize (the format's error is the source).
    pub async fn read(&self) -> Result<Option<TypedData<T>>> {
        let read = self
            .options
            .retry
            .run(|| async {
                match self.client.get_data(&self.path).await {
                    Ok(found) => Ok(Some(found)),
                    Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .await?;
        let Some((bytes, stat)) = read else {
            return Ok(None);
        };
        let value = decode(&*self.options.serializer, &self.path, &bytes)?;
        Ok(Some(TypedData::new(self.path.as_str(), stat, value)))
    }

    /// Creates the node holding `value`, with the builder's mode and ACL, making missing
    /// parents; returns its path (with the suffix of a sequential mode). `NodeExists` if it
    /// exists (a server error: `e.code() == Some(ErrorCode::NodeExists)`).
    pub async fn create(&self, value: &T) -> Result<String> {
        let bytes = encode(&*self.options.serializer, &self.path, value)?;
        self.create_bytes(&bytes).await.map(|(path, _)| path)
    }

    /// Writes `value` over the node's data; with `Some(version)`, only if the node is still at
    /// that version (`BadVersion` if not). Returns the new Stat. `NoNode` if the node does not
    /// exist: use [`create`](TypedNode::create), or [`update`](TypedNode::update), which
    /// creates.
    pub async fn set(&self, value: &T, version: Option<i32>) -> Result<Stat> {
        let bytes = encode(&*self.options.serializer, &self.path, value)?;
        self.client.set_data(&self.path, &bytes, version).await
    }

    /// Deletes the node; with `Some(version)`, only if it is still at that version.
    /// `NoNode` if it does not exist, `NotEmpty` if it has children.
    pub async fn delete(&self, version: Option<i32>) -> Result<()> {
        self.client.delete(&self.path, version).await
    }

    /// Changes the value with `change`, atomically with respect to every other writer that
    /// uses versions: reads the node, calls `change` with its value (`None` if the node does
    /// not exist), and writes what it returns over the version read; if another writer got
    /// there first (`BadVersion`, or the node was made or deleted meanwhile), it reads and
    /// calls `change` again, until a write goes through. So `change` may run several times,
    /// each time on the latest value: keep it free of side effects (or count its calls).
    ///
    /// - `change` returns `Some(new)` to write it: over the version read if the node exists;
    ///   if it does not, the node is created with `new` (making missing parents), so the
    ///   closure's answer to `None` is the node's initial value.
    /// - `change` returns `None` to decline: nothing is written, and the outcome says what it
    ///   was shown ([`UpdateOutcome::Declined`]). Declining is how to give up, for instance
    ///   after a number of calls.
    ///
    /// Errors: `InvalidData` if the node's data does not deserialize (nothing is written),
    /// `InvalidInput` if the new value does not serialize, and the request's error otherwise:
    /// a write is not retried on a connection loss, since it may have been applied.
    pub async fn update<F>(&self, mut change: F) -> Result<UpdateOutcome<T>>
    where
        F: FnMut(Option<&T>) -> Option<T>,
    {
        loop {
            let current = self.read().await?;
            let Some(new) = change(current.as_ref().map(|c| &c.value)) else {
                return Ok(UpdateOutcome::Declined(current));
            };
            let bytes = encode(&*self.options.serializer, &self.path, &new)?;
            let written = match &current {
                Some(read) => {
                    let version = Some(read.stat.version);
                    self.client.set_data(&self.path, &bytes, version).await
                }
                None => self.create_bytes(&bytes).await.map(|(_, stat)| stat),
            };
            match written {
                Ok(stat) => {
                    return Ok(UpdateOutcome::Written(TypedData::new(
                        self.path.as_str(),
                        stat,
                        new,
                    )))
                }
                // Someone else wrote, made or deleted the node since our read: read again.
                Err(e) if is_conflict(&e) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Creates the node with `bytes`, making missing parents if the server says they are
    /// missing; returns its path and Stat.
    async fn create_bytes(&self, bytes: &[u8]) -> Result<(String, Stat)> {
        let o = &*self.options;
        let mut options = CreateOptions::new(o.create_mode).acl(&o.acl).with_stat();
        if let Some(ttl) = o.ttl {
            options = options.ttl(ttl);
        }
        let created = match self.client.create_with(&self.path, bytes, &options).await {
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                create_parents(&self.client, parent(&self.path), o.parents).await?;
                self.client.create_with(&self.path, bytes, &options).await
            }
            other => other,
        }?;
        match created {
            (path, Some(stat)) => Ok((path, stat)),
            // create2 always answers with the Stat; read it if a server did not.
            (path, None) => {
                let stat = self.client.exists(&path).await?.unwrap_or_default();
                Ok((path, stat))
            }
        }
    }
}

/// Whether a write lost a race with another writer: the version moved, or the node was
/// created or deleted since the read.
fn is_conflict(e: &Error) -> bool {
    matches!(
        e.code(),
        Some(ErrorCode::BadVersion | ErrorCode::NodeExists | ErrorCode::NoNode)
    )
}

// By hand: the derives would ask `T: Clone` / `S: Clone`, and the options are shared.
impl<T, S> Clone for TypedNode<T, S> {
    fn clone(&self) -> Self {
        TypedNode {
            client: self.client.clone(),
            path: self.path.clone(),
            options: self.options.clone(),
            _value: PhantomData,
        }
    }
}

impl<T, S> std::fmt::Debug for TypedNode<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedNode")
            .field("path", &self.path)
            .field("value", &std::any::type_name::<T>())
            .field("create_mode", &self.options.create_mode)
            .finish_non_exhaustive()
    }
}

impl<T, S> std::fmt::Debug for TypedNodeBuilder<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedNodeBuilder")
            .field("path", &self.template)
            .field("value", &std::any::type_name::<T>())
            .field("create_mode", &self.options.create_mode)
            .finish_non_exhaustive()
    }
}
