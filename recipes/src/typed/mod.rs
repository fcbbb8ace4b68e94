//! Typed nodes, as Curator's `ModeledFramework` (`curator-x-async`): a znode holds a value of
//! a Rust type, written and read through serde (JSON by default, or a format of your own),
//! at paths given by templates, with a read-modify-write `update` and a decoding cache.
//!
//! Needs the `typed` feature (serde and serde_json).
//!
//! - [`ZPath`]: a path template, `/users/{id}/profile`, resolved with checked values
//!   (`resolve(&["42"])`); a bad value (empty, with a `/`) is refused with `InvalidInput`
//!   before anything is sent.
//! - [`TypedNode`]: one node: `read` (the value and its Stat), `create` (mode, ACL, TTL,
//!   missing parents), `set` and `delete` (optionally over a version), and `update`, which
//!   reads, applies your closure, and writes over the version read, again and again while
//!   another writer gets there first. The closure may decline; a missing node is created
//!   with what the closure gives for `None`.
//! - [`TypedCache`]: the nodes of a template kept decoded, over a
//!   [`CuratorCache`](crate::cache::CuratorCache); a node whose data does not decode is told
//!   as [`Skipped`](crate::cache::CacheEvent::Skipped) (path and `InvalidData` error), never
//!   fatal.
//! - [`ValueSerializer`]: bytes out, bytes in; [`JsonSerializer`] is the default.
//!
//! ```no_run
//! # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
//! use zkrs_recipes::typed::{TypedNode, UpdateOutcome};
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Profile {
//!     name: String,
//!     logins: u64,
//! }
//!
//! let profiles = TypedNode::<Profile>::builder(&client, "/users/{id}/profile");
//! let alice = profiles.resolve(&["alice"])?;
//! let outcome = alice
//!     .update(|current| {
//!         Some(match current {
//!             Some(p) => Profile { name: p.name.clone(), logins: p.logins + 1 },
//!             None => Profile { name: "Alice".into(), logins: 1 },
//!         })
//!     })
//!     .await?;
//! if let UpdateOutcome::Written(now) = outcome {
//!     println!("{} logins, version {}", now.value.logins, now.version());
//! }
//! # Ok(()) }
//! ```
//!
//! What of Curator's `ModeledFramework` this covers, and what not:
//!
//! | Curator | here |
//! |---|---|
//! | `ZPath` (`parseWithIds`, `resolved`, `isResolved`) | [`ZPath`] (`parse`, `resolve`, `is_resolved`; [`ZPath::captures`] gives a path's values back) |
//! | `ModelSpec`: serializer, `createMode`, `aclList`, `ttl` | [`TypedNodeBuilder`]: `serializer`, `create_mode`, `acl`, `ttl`, `parents` |
//! | `ModelSerializer`, `JacksonModelSerializer` | [`ValueSerializer`], [`JsonSerializer`] |
//! | `ModeledFramework`: `set`, `read`, `readAsZNode`, `update`, `delete`, `checkExists` | [`TypedNode`]: `create`, `read` (always with the Stat, as `ZNode`), `set`, `delete`; no `checkExists` (use the client's `exists`) |
//! | `VersionedModeledFramework` (`Versioned<T>`) | `read` gives the version ([`TypedData::version`]); `set` and `delete` take one |
//! | read-modify-write | [`TypedNode::update`] (Curator has none: each caller writes the loop) |
//! | `CachedModeledFramework` (`currentData`, `currentChildren`, listeners) | [`TypedCache`] (`snapshot`, `get`, events); no `readThrough` |
//! | `ModelSpec` create options: `setDataIfExists`, `doProtected`, `compress`; delete options: `guaranteed`, `deletingChildrenIfNeeded` | not covered (for the first, [`TypedNode::update`] creates or overwrites) |
//! | `ModelSpec` `watched` (reads that set a watch), `schema` (`SchemaSet` validation) | not covered: [`TypedCache`] follows changes; a format of your own can validate |
//! | `children`, `childrenAsZNodes`, `child`, `parent`, `withPath` | not covered: list with the client, or cache the template |
//! | transactions (`createOp`, `updateOp`, `deleteOp`, `checkExistsOp`) | not covered: encode the value and use the client's `multi` |
//!
//! The bytes are the serializer's: with [`JsonSerializer`] a Curator process using
//! `JacksonModelSerializer` on the same type reads what this writes, as far as serde's and
//! Jackson's field names and formats agree. `tests/curator_typed.rs` checks it both ways
//! against Curator's `ModeledFramework` (5.4 and 5.9): the same bytes for the same value,
//! fields in declaration order, but for two spellings of the same JSON (Jackson writes
//! `\u001F` where serde_json writes `\u001f`, and a character past U+FFFF as an escaped
//! surrogate pair where serde_json writes it as UTF-8), which each side reads back alike.

mod cache;
mod data;
mod node;
mod serializer;
mod zpath;

pub use cache::{TypedCache, TypedCacheBuilder, TypedCacheEvent, TypedSnapshot};
pub use data::TypedData;
pub use node::{TypedNode, TypedNodeBuilder, UpdateOutcome};
pub use serializer::{JsonSerializer, ValueSerializer};
pub use zpath::ZPath;
