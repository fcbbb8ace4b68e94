//! A transaction or a batch of reads on the wire: [`Op`]s checked and encoded as one
//! `MultiRequest`, and its `MultiResponse` read back as [`OpResult`]s.

use bytes::Bytes;
use zkrs_codec::{
    Acl, CreateRequest, Decode, DeleteRequest, List, MultiList, MultiOp, MultiOpResult,
    MultiRequest, MultiResponse, OpCode, PathWatchRequest, SetDataRequest,
};

use crate::client::Client;
use crate::error::{Error, ErrorExt, Result};
use crate::multi::{Op, OpResult};
use crate::path::{validate_create_path, validate_path};
use crate::ErrorCode;

impl Client {
    /// Sends `ops` as one `op` (`Multi` or `MultiRead`), bound to `session` if given.
    pub(crate) async fn run_multi(
        &self,
        op: OpCode,
        ops: &[Op],
        session: Option<i64>,
    ) -> Result<Vec<OpResult>> {
        validate(ops)?;
        let server_paths: Vec<String> = ops.iter().map(|o| self.server_path(o.path())).collect();
        let mut acl_stores: Vec<Vec<Acl<'_>>> = ops.iter().map(|_| Vec::new()).collect();
        let mut wire_ops = Vec::with_capacity(ops.len());
        let mut hint = 0;
        for ((o, path), store) in ops.iter().zip(&server_paths).zip(acl_stores.iter_mut()) {
            wire_ops.push(wire_op(o, path, store, &mut hint));
        }
        let frame = self.frame(
            op,
            &MultiRequest {
                ops: MultiList::Slice(&wire_ops),
            },
            hint,
        )?;
        let reply = self.submit_in(frame, None, None, session).await?;
        let results = self.results(&reply.body)?;
        if op == OpCode::Multi {
            if let Some((i, code)) = first_failure(&results) {
                return Err(Error::from(code)
                    .with_detail(format!("operation {} of {} failed", i + 1, ops.len()))
                    .with_path(ops[i].path()));
            }
        }
        Ok(results)
    }

    /// The results of a `MultiResponse`, paths as the client sees them.
    fn results(&self, body: &Bytes) -> Result<Vec<OpResult>> {
        let decoded = MultiResponse::decode_prefix(body)?;
        let mut results = Vec::with_capacity(decoded.results.len());
        for r in decoded.results.iter() {
            results.push(match r {
                MultiOpResult::Create(path) => OpResult::Create {
                    path: self.client_path(path),
                    stat: None,
                },
                MultiOpResult::Create2 { response, .. } => OpResult::Create {
                    path: self.client_path(response.path),
                    stat: Some(response.stat),
                },
                MultiOpResult::Delete => OpResult::Delete,
                MultiOpResult::SetData(stat) => OpResult::SetData(stat),
                MultiOpResult::Check => OpResult::Check,
                MultiOpResult::GetData { data, stat } => OpResult::GetData {
                    data: data.map_or_else(Bytes::new, |d| body.slice_ref(d)),
                    stat,
                },
                MultiOpResult::GetChildren(children) => {
                    OpResult::GetChildren(children.iter().map(str::to_string).collect())
                }
                MultiOpResult::Error(code) => OpResult::Error(code),
            });
        }
        Ok(results)
    }
}

/// The operation that failed a transaction, and its code: in a failed transaction the ops
/// before the failure say Ok, then comes the error, then RuntimeInconsistency for the ones
/// rolled back.
fn first_failure(results: &[OpResult]) -> Option<(usize, ErrorCode)> {
    results.iter().enumerate().find_map(|(i, r)| match r {
        OpResult::Error(code) if !code.is_ok() && *code != ErrorCode::RuntimeInconsistency => {
            Some((i, *code))
        }
        _ => None,
    })
}

/// Refuses a bad path, and a TTL create (which a transaction cannot carry here).
fn validate(ops: &[Op]) -> Result<()> {
    for o in ops {
        match o {
            Op::Create { mode, .. } => validate_create_path(o.path(), *mode)?,
            _ => validate_path(o.path())?,
        }
        if let Op::Create { mode, .. } = o {
            if mode.is_ttl() {
                return Err(Error::invalid(
                    "TTL creates are not supported in multi here",
                ));
            }
        }
    }
    Ok(())
}

/// `o` as the codec's record, at `path` (the server's), its ACL kept in `store`; `hint`
/// grows by what it adds to the frame.
fn wire_op<'a>(
    o: &'a Op,
    path: &'a str,
    store: &'a mut Vec<Acl<'a>>,
    hint: &mut usize,
) -> MultiOp<'a> {
    *hint += path.len() + 32;
    match o {
        Op::Create {
            data,
            mode,
            acl,
            stat,
            ..
        } => {
            *hint += data.len();
            let acl = Op::acl_list(acl, store);
            let request = CreateRequest {
                path,
                data: Some(data),
                acl: List::Slice(acl),
                mode: *mode,
            };
            if mode.is_container() {
                MultiOp::CreateContainer(request)
            } else if *stat {
                MultiOp::Create2(request)
            } else {
                MultiOp::Create(request)
            }
        }
        Op::Delete { version, .. } => MultiOp::Delete(DeleteRequest {
            path,
            version: version.unwrap_or(-1),
        }),
        Op::SetData { data, version, .. } => {
            *hint += data.len();
            MultiOp::SetData(SetDataRequest {
                path,
                data: Some(data),
                version: version.unwrap_or(-1),
            })
        }
        Op::Check { version, .. } => MultiOp::Check(DeleteRequest {
            path,
            version: version.unwrap_or(-1),
        }),
        Op::GetData { .. } => MultiOp::GetData(PathWatchRequest { path, watch: false }),
        Op::GetChildren { .. } => MultiOp::GetChildren(PathWatchRequest { path, watch: false }),
    }
}
