//! The request and response records of every operation, one file per concept.
//!
//! Many ZooKeeper records share a layout (`ExistsRequest`, `GetDataRequest`,
//! `GetChildrenRequest` are all `{path, watch}`): those share one struct here, with the Java
//! name as an alias, so the bytes are written by one piece of code.

mod acl_ops;
mod auth;
mod children;
mod common;
mod create;
mod data;
mod multi;
mod reconfig;
mod watches;

pub use acl_ops::*;
pub use auth::*;
pub use children::*;
pub use common::*;
pub use create::*;
pub use data::*;
pub use multi::*;
pub use reconfig::*;
pub use watches::*;
