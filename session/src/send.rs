//! Putting frames on the wire: xids, requests, identities, watch re-registration.

use super::*;

impl<T> Session<T> {
    /// Sends a request that waited, unless it is bound to a session other than this one.
    pub(super) fn send_waiting_one(&mut self, waiting: Waiting<T>, now: Instant) {
        if waiting.bound.is_some_and(|id| id != self.session_id) {
            self.refuse_unbound(waiting);
        } else {
            self.send(waiting.request, now);
        }
    }

    /// Fails a request bound to a session that is not the current one.
    pub(super) fn refuse_unbound(&mut self, waiting: Waiting<T>) {
        let error = Error::session_expired().with_detail(
            "the request was made for an earlier session, and is not sent on this one",
        );
        self.fail(Some(waiting.request.token), waiting.request.watch, error);
    }

    pub(super) fn send(&mut self, request: Request<T>, now: Instant) {
        self.send_frame(
            &request.frame,
            request.op,
            Some(request.token),
            request.watch,
            now,
        );
    }

    /// Appends a frame encoded with xid 0, writing the next xid into it.
    pub(super) fn send_frame(
        &mut self,
        frame: &[u8],
        op: OpCode,
        token: Option<T>,
        watch: Option<WatchOp>,
        now: Instant,
    ) {
        let xid = self.requests.take_xid();
        let start = self.requests.out.len();
        self.requests.out.extend_from_slice(frame);
        if let Some(slot) = self
            .requests
            .out
            .get_mut(start + REQUEST_XID_OFFSET..start + REQUEST_XID_OFFSET + 4)
        {
            slot.copy_from_slice(&xid.to_be_bytes());
        }
        self.timers.last_send = now;
        self.requests.pending.push_back(Pending {
            xid,
            op,
            token,
            watch,
            sent: now,
        });
    }

    pub(super) fn write_auth(&mut self, scheme: &str, auth: &Secret, now: Instant) {
        encode_request(
            &mut self.requests.out,
            xid::AUTH,
            OpCode::Auth,
            &AuthPacket {
                auth_type: 0,
                scheme,
                auth: auth.expose(),
            },
        );
        self.timers.last_send = now;
    }

    /// Sends the session's identities from the `first` on (all of them on a reconnect; those
    /// added since the switch on a move's way back), each with the reply slot of the caller
    /// who added it, if one waits.
    pub(super) fn resend_auth_from(&mut self, first: usize, now: Instant) {
        let auth = std::mem::take(&mut self.cfg.auth);
        for (i, (scheme, credentials)) in auth.iter().enumerate().skip(first) {
            self.write_auth(scheme, credentials, now);
            let token = self
                .auth
                .later
                .iter()
                .position(|(index, _)| *index == i)
                .map(|at| self.auth.later.remove(at).1);
            self.auth.pending.push_back(token);
        }
        self.cfg.auth = auth;
    }

    pub(super) fn reregister_watches(&mut self, now: Instant) {
        if self.watching.registry.is_empty() {
            return;
        }
        let zxid = self.last_zxid;
        for batch in self
            .watching
            .registry
            .batches(self.cfg.set_watches_batch_bytes)
        {
            let op = if batch.needs_v2() {
                OpCode::SetWatches2
            } else {
                OpCode::SetWatches
            };
            self.requests.set_watches_in_flight += 1;
            zkrs_codec::write_frame(&mut self.requests.out, |buf| {
                zkrs_codec::RequestHeader {
                    xid: xid::SET_WATCHES,
                    op,
                }
                .encode(buf);
                buf.extend_from_slice(&zxid.to_be_bytes());
                put_str_vec(buf, batch.data.iter().copied());
                put_str_vec(buf, batch.exist.iter().copied());
                put_str_vec(buf, batch.child.iter().copied());
                if op == OpCode::SetWatches2 {
                    put_str_vec(buf, batch.persistent.iter().copied());
                    put_str_vec(buf, batch.recursive.iter().copied());
                }
            });
        }
        self.timers.last_send = now;
    }
}
