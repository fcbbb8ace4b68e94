//! The few GSS-API calls Kerberos needs (RFC 2744), from the system's MIT krb5
//! (`libgssapi_krb5`), each wrapped so that what the library allocates is released by
//! `Drop`. Only this file is `unsafe`; the SASL mechanism on top (`gssapi.rs`) is not.

use std::ffi::{c_char, c_int, c_void, CString};
use std::ptr;

type OmUint32 = u32;

#[repr(C)]
struct BufferDesc {
    length: usize,
    value: *mut c_void,
}

#[repr(C)]
struct OidDesc {
    length: OmUint32,
    elements: *const c_void,
}

#[repr(C)]
struct KeyValueElement {
    key: *const c_char,
    value: *const c_char,
}

#[repr(C)]
struct KeyValueSet {
    count: OmUint32,
    elements: *const KeyValueElement,
}

type NameT = *mut c_void;
type CtxT = *mut c_void;
type CredT = *mut c_void;

#[link(name = "gssapi_krb5")]
extern "C" {
    fn gss_import_name(
        minor: *mut OmUint32,
        input: *const BufferDesc,
        name_type: *const OidDesc,
        output: *mut NameT,
    ) -> OmUint32;
    fn gss_release_name(minor: *mut OmUint32, name: *mut NameT) -> OmUint32;
    fn gss_acquire_cred_from(
        minor: *mut OmUint32,
        desired_name: NameT,
        time_req: OmUint32,
        desired_mechs: *const c_void,
        cred_usage: c_int,
        cred_store: *const KeyValueSet,
        output_cred: *mut CredT,
        actual_mechs: *mut *mut c_void,
        time_rec: *mut OmUint32,
    ) -> OmUint32;
    fn gss_release_cred(minor: *mut OmUint32, cred: *mut CredT) -> OmUint32;
    fn gss_init_sec_context(
        minor: *mut OmUint32,
        cred: CredT,
        context: *mut CtxT,
        target: NameT,
        mech: *const OidDesc,
        req_flags: OmUint32,
        time_req: OmUint32,
        bindings: *const c_void,
        input: *const BufferDesc,
        actual_mech: *mut *mut OidDesc,
        output: *mut BufferDesc,
        ret_flags: *mut OmUint32,
        time_rec: *mut OmUint32,
    ) -> OmUint32;
    fn gss_delete_sec_context(
        minor: *mut OmUint32,
        context: *mut CtxT,
        output: *mut BufferDesc,
    ) -> OmUint32;
    fn gss_wrap(
        minor: *mut OmUint32,
        context: CtxT,
        conf_req: c_int,
        qop: OmUint32,
        input: *const BufferDesc,
        conf_state: *mut c_int,
        output: *mut BufferDesc,
    ) -> OmUint32;
    fn gss_unwrap(
        minor: *mut OmUint32,
        context: CtxT,
        input: *const BufferDesc,
        output: *mut BufferDesc,
        conf_state: *mut c_int,
        qop_state: *mut OmUint32,
    ) -> OmUint32;
    fn gss_release_buffer(minor: *mut OmUint32, buffer: *mut BufferDesc) -> OmUint32;
    fn gss_display_status(
        minor: *mut OmUint32,
        status: OmUint32,
        status_type: c_int,
        mech: *const OidDesc,
        message_context: *mut OmUint32,
        output: *mut BufferDesc,
    ) -> OmUint32;
}

const GSS_S_COMPLETE: OmUint32 = 0;
const GSS_S_CONTINUE_NEEDED: OmUint32 = 1;
/// The calling and routine error bits: anything there is a failure.
const ERROR_MASK: OmUint32 = 0xffff_0000;
const GSS_C_GSS_CODE: c_int = 1;
const GSS_C_MECH_CODE: c_int = 2;
const GSS_C_INITIATE: c_int = 1;
/// Mutual authentication: the server proves itself too.
pub(crate) const MUTUAL: OmUint32 = 2;
/// Integrity protection available (RFC 4752 asks for it, even with no security layer).
pub(crate) const INTEG: OmUint32 = 32;

/// 1.2.840.113554.1.2.1.4: a host-based service name, `service@host`.
const NT_HOSTBASED_SERVICE: &[u8] = b"\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04";
/// 1.2.840.113554.1.2.2.1: a Kerberos principal name, `name[/instance][@REALM]`.
const NT_KRB5_PRINCIPAL: &[u8] = b"\x2a\x86\x48\x86\xf7\x12\x01\x02\x02\x01";
/// 1.2.840.113554.1.2.2: the Kerberos 5 mechanism.
const MECH_KRB5: &[u8] = b"\x2a\x86\x48\x86\xf7\x12\x01\x02\x02";

fn oid(bytes: &'static [u8]) -> OidDesc {
    OidDesc {
        length: bytes.len() as OmUint32,
        elements: bytes.as_ptr().cast(),
    }
}

fn input(bytes: &[u8]) -> BufferDesc {
    BufferDesc {
        length: bytes.len(),
        value: bytes.as_ptr() as *mut c_void,
    }
}

/// A failed call, with the library's own words for both status codes.
fn failure(call: &str, major: OmUint32, minor: OmUint32) -> String {
    let mut words = Vec::new();
    for (status, kind) in [(major, GSS_C_GSS_CODE), (minor, GSS_C_MECH_CODE)] {
        if status == 0 {
            continue;
        }
        let mut context: OmUint32 = 0;
        loop {
            let mut out = OutBuffer::new();
            let mut m = 0;
            // SAFETY: valid out-pointers; `out` is released by its Drop.
            let r = unsafe {
                gss_display_status(&mut m, status, kind, ptr::null(), &mut context, &mut out.0)
            };
            if r != GSS_S_COMPLETE {
                break;
            }
            let text = String::from_utf8_lossy(out.bytes()).trim().to_string();
            if !text.is_empty() {
                words.push(text);
            }
            if context == 0 {
                break;
            }
        }
    }
    format!("{call}: {}", words.join(": "))
}

/// A buffer the library filled; released on drop.
struct OutBuffer(BufferDesc);

impl OutBuffer {
    fn new() -> OutBuffer {
        OutBuffer(BufferDesc {
            length: 0,
            value: ptr::null_mut(),
        })
    }

    fn bytes(&self) -> &[u8] {
        if self.0.value.is_null() || self.0.length == 0 {
            return &[];
        }
        // SAFETY: the library gave `length` bytes at `value`, alive until released.
        unsafe { std::slice::from_raw_parts(self.0.value as *const u8, self.0.length) }
    }
}

impl Drop for OutBuffer {
    fn drop(&mut self) {
        if !self.0.value.is_null() {
            let mut m = 0;
            // SAFETY: a buffer the library allocated, released once.
            unsafe { gss_release_buffer(&mut m, &mut self.0) };
        }
    }
}

/// An imported name.
pub(crate) struct Name(NameT);

// SAFETY: a GSS name is an immutable handle; MIT krb5 allows using it from any thread.
unsafe impl Send for Name {}

impl Name {
    /// `service@host` (the form of a service principal `service/host`).
    pub(crate) fn service(service_at_host: &str) -> Result<Name, String> {
        Name::import(service_at_host, NT_HOSTBASED_SERVICE)
    }

    /// A Kerberos principal, `name[/instance][@REALM]`.
    pub(crate) fn principal(principal: &str) -> Result<Name, String> {
        Name::import(principal, NT_KRB5_PRINCIPAL)
    }

    fn import(text: &str, name_type: &'static [u8]) -> Result<Name, String> {
        let (mut minor, mut name) = (0, ptr::null_mut());
        let name_type = oid(name_type);
        // SAFETY: the input buffer and OID outlive the call; `name` is an out-pointer.
        let major =
            unsafe { gss_import_name(&mut minor, &input(text.as_bytes()), &name_type, &mut name) };
        if major & ERROR_MASK != 0 {
            return Err(failure(&format!("the name {text:?}"), major, minor));
        }
        Ok(Name(name))
    }
}

impl Drop for Name {
    fn drop(&mut self) {
        let mut m = 0;
        // SAFETY: a name the library made, released once.
        unsafe { gss_release_name(&mut m, &mut self.0) };
    }
}

/// Initiator credentials for `principal` from `keytab` (tickets fetched into a private
/// in-memory cache), instead of the default ticket cache.
pub(crate) struct Credentials(CredT);

// SAFETY: a credential handle is not tied to the thread that made it (MIT krb5).
unsafe impl Send for Credentials {}
unsafe impl Sync for Credentials {}

impl Credentials {
    /// `principal`'s credentials, its keys from `keytab`, tickets kept in `cache`.
    pub(crate) fn from_keytab(principal: &str, keytab: &str, cache: &str) -> Result<Self, String> {
        let what = format!("credentials of {principal} from the keytab {keytab}");
        Credentials::from_store(
            Some(principal),
            &[("client_keytab", keytab), ("ccache", cache)],
            &what,
        )
    }

    /// The credentials in the ticket cache `cache` (e.g. `FILE:/tmp/app.ccache`).
    pub(crate) fn from_cache(cache: &str) -> Result<Self, String> {
        let what = format!("credentials from the ticket cache {cache}");
        Credentials::from_store(None, &[("ccache", cache)], &what)
    }

    /// `gss_acquire_cred_from` with a credential store (MIT's extension).
    fn from_store(
        principal: Option<&str>,
        store: &[(&str, &str)],
        what: &str,
    ) -> Result<Self, String> {
        let name = principal.map(Name::principal).transpose()?;
        let strings = store
            .iter()
            .map(|(k, v)| Ok((CString::new(*k)?, CString::new(*v)?)))
            .collect::<Result<Vec<_>, std::ffi::NulError>>()
            .map_err(|_| format!("{what}: a NUL byte in a path"))?;
        let elements: Vec<KeyValueElement> = strings
            .iter()
            .map(|(k, v)| KeyValueElement {
                key: k.as_ptr(),
                value: v.as_ptr(),
            })
            .collect();
        let store = KeyValueSet {
            count: elements.len() as OmUint32,
            elements: elements.as_ptr(),
        };
        let (mut minor, mut cred) = (0, ptr::null_mut());
        // SAFETY: every pointer outlives the call; `cred` is an out-pointer.
        let major = unsafe {
            gss_acquire_cred_from(
                &mut minor,
                name.as_ref().map_or(ptr::null_mut(), |n| n.0),
                0,
                ptr::null(),
                GSS_C_INITIATE,
                &store,
                &mut cred,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if major & ERROR_MASK != 0 {
            return Err(failure(what, major, minor));
        }
        Ok(Credentials(cred))
    }
}

impl Drop for Credentials {
    fn drop(&mut self) {
        let mut m = 0;
        // SAFETY: credentials the library made, released once.
        unsafe { gss_release_cred(&mut m, &mut self.0) };
    }
}

/// What one step of establishing the context gave.
pub(crate) struct Step {
    /// The token for the server (may be empty).
    pub(crate) token: Vec<u8>,
    /// The context is established.
    pub(crate) complete: bool,
}

/// A security context being established with, then established with, the server.
pub(crate) struct Context(CtxT);

// SAFETY: a context is used by one exchange at a time, which may move between threads.
unsafe impl Send for Context {}

impl Context {
    pub(crate) fn new() -> Context {
        Context(ptr::null_mut())
    }

    /// One call of `gss_init_sec_context`: `server_token` is `None` the first time.
    pub(crate) fn step(
        &mut self,
        credentials: Option<&Credentials>,
        target: &Name,
        flags: u32,
        server_token: Option<&[u8]>,
    ) -> Result<Step, String> {
        let mut out = OutBuffer::new();
        let mech = oid(MECH_KRB5);
        let input_token = server_token.map(input);
        let (mut minor, mut ret_flags, mut time_rec) = (0, 0, 0);
        // SAFETY: every pointer outlives the call; the context handle is ours.
        let major = unsafe {
            gss_init_sec_context(
                &mut minor,
                credentials.map_or(ptr::null_mut(), |c| c.0),
                &mut self.0,
                target.0,
                &mech,
                flags,
                0,
                ptr::null(),
                input_token.as_ref().map_or(ptr::null(), |b| b as *const _),
                ptr::null_mut(),
                &mut out.0,
                &mut ret_flags,
                &mut time_rec,
            )
        };
        if major & ERROR_MASK != 0 {
            return Err(failure("Kerberos authentication", major, minor));
        }
        Ok(Step {
            token: out.bytes().to_vec(),
            complete: major & GSS_S_CONTINUE_NEEDED == 0,
        })
    }

    /// Integrity-protects `message` (no confidentiality).
    pub(crate) fn wrap(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        let mut out = OutBuffer::new();
        let (mut minor, mut conf) = (0, 0);
        // SAFETY: an established context; buffers outlive the call.
        let major = unsafe {
            gss_wrap(
                &mut minor,
                self.0,
                0,
                0,
                &input(message),
                &mut conf,
                &mut out.0,
            )
        };
        if major & ERROR_MASK != 0 {
            return Err(failure("wrapping the security layer answer", major, minor));
        }
        Ok(out.bytes().to_vec())
    }

    /// Checks and unwraps a token from the server.
    pub(crate) fn unwrap(&self, token: &[u8]) -> Result<Vec<u8>, String> {
        let mut out = OutBuffer::new();
        let (mut minor, mut conf, mut qop) = (0, 0, 0);
        // SAFETY: an established context; buffers outlive the call.
        let major = unsafe {
            gss_unwrap(
                &mut minor,
                self.0,
                &input(token),
                &mut out.0,
                &mut conf,
                &mut qop,
            )
        };
        if major & ERROR_MASK != 0 {
            return Err(failure("the server's security layer offer", major, minor));
        }
        Ok(out.bytes().to_vec())
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        if !self.0.is_null() {
            let mut m = 0;
            // SAFETY: a context the library made, deleted once; no output token wanted.
            unsafe { gss_delete_sec_context(&mut m, &mut self.0, ptr::null_mut()) };
        }
    }
}
