//! The instance's JSON: written byte for byte as Curator's `JsonInstanceSerializer` (Jackson)
//! writes it, read as leniently as Curator reads it.

use crate::error::ErrorExt;
use std::io;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use zkrs_client::{Error, Result};

use super::{ServiceInstance, ServiceType, UriSpec};

/// How instances are written, as Curator's two `JsonInstanceSerializer` modes. Reading
/// accepts both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum JsonFormat {
    /// Without the `enabled` key: what `new JsonInstanceSerializer<>(cls)` writes, and what
    /// Curator 2.x readers (and Curator's default) expect. A disabled instance is written as
    /// enabled in this format, as in Curator.
    #[default]
    Compatible,
    /// With `"enabled":true|false` last: `new JsonInstanceSerializer<>(cls, false)`.
    WithEnabled,
}

/// A payload written with the Java class a Curator reader expects, as Jackson's default
/// typing does: `{"@class":"com.example.Details","zone":"a"}`. `P` must serialize as a JSON
/// object (a struct or a map); its keys follow `@class` in their own order. Reading takes
/// the `@class` back and gives `P` the other keys.
///
/// ```
/// use zkrs_recipes::discovery::JavaTyped;
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Details { zone: String }
/// let payload = JavaTyped::new("com.example.Details", Details { zone: "a".into() });
/// assert_eq!(
///     serde_json::to_string(&payload).unwrap(),
///     r#"{"@class":"com.example.Details","zone":"a"}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct JavaTyped<P> {
    /// The Java class name.
    #[serde(rename = "@class")]
    pub class: String,
    /// The payload's own fields.
    #[serde(flatten)]
    pub value: P,
}

impl<P> JavaTyped<P> {
    /// `value` tagged with Java class `class`.
    pub fn new(class: &str, value: P) -> JavaTyped<P> {
        JavaTyped {
            class: class.to_string(),
            value,
        }
    }
}

/// The keys in Curator's order (Jackson writes `ServiceInstance`'s properties in this order).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Written<'a, P> {
    name: &'a str,
    id: &'a str,
    address: Option<&'a str>,
    port: Option<u16>,
    ssl_port: Option<u16>,
    payload: Option<&'a P>,
    #[serde(rename = "registrationTimeUTC")]
    registration_time_utc: i64,
    service_type: ServiceType,
    uri_spec: Option<&'a UriSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    enabled: Option<bool>,
}

/// Every key optional and unknown keys ignored, as Jackson reads with Curator's settings.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Read<P> {
    name: Option<String>,
    id: Option<String>,
    address: Option<String>,
    port: Option<u16>,
    ssl_port: Option<u16>,
    payload: Option<P>,
    #[serde(rename = "registrationTimeUTC")]
    registration_time_utc: Option<i64>,
    service_type: Option<ServiceType>,
    uri_spec: Option<UriSpec>,
    enabled: Option<bool>,
}

/// Writes `instance` as Curator does, in `format`.
pub(crate) fn to_json<P: Serialize>(
    instance: &ServiceInstance<P>,
    format: JsonFormat,
) -> Result<Vec<u8>> {
    let written = Written {
        name: &instance.name,
        id: &instance.id,
        address: instance.address.as_deref(),
        port: instance.port,
        ssl_port: instance.ssl_port,
        payload: instance.payload.as_ref(),
        registration_time_utc: instance.registration_time_utc,
        service_type: instance.service_type,
        uri_spec: instance.uri_spec.as_ref(),
        enabled: (format == JsonFormat::WithEnabled).then_some(instance.enabled),
    };
    let mut out = Vec::with_capacity(256);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, JacksonFormatter);
    written.serialize(&mut serializer).map_err(|e| {
        Error::invalid(format!(
            "instance {}/{}: its payload cannot be written as JSON: {e}",
            instance.name, instance.id
        ))
    })?;
    Ok(out)
}

/// Reads an instance written by Curator (either format) or by us. A missing `enabled` means
/// enabled; a missing service type means `DYNAMIC`; unknown keys are ignored. The name and
/// id must be there.
pub(crate) fn from_json<P: DeserializeOwned>(bytes: &[u8]) -> Result<ServiceInstance<P>> {
    let read: Read<P> = serde_json::from_slice(bytes)
        .map_err(|e| Error::invalid_data(format!("not a service instance: {e}")))?;
    let (Some(name), Some(id)) = (read.name, read.id) else {
        return Err(Error::invalid_data(
            "not a service instance: no name or no id".to_string(),
        ));
    };
    Ok(ServiceInstance {
        name,
        id,
        address: read.address,
        port: read.port,
        ssl_port: read.ssl_port,
        payload: read.payload,
        registration_time_utc: read.registration_time_utc.unwrap_or(0),
        service_type: read.service_type.unwrap_or_default(),
        uri_spec: read.uri_spec,
        enabled: read.enabled.unwrap_or(true),
    })
}

/// serde_json's compact output with Jackson's escapes: control characters without a short
/// escape are written `\u00XX` with upper-case hex digits (serde_json writes lower case), and
/// a character outside the Basic Multilingual Plane as its UTF-16 surrogate pair, escaped
/// (`😀` is `\uD83D\uDE00`: Jackson 2.14's UTF-8 writer, which Curator 5.4 uses, escapes
/// surrogates; serde_json writes the 4 UTF-8 bytes).
struct JacksonFormatter;

impl serde_json::ser::Formatter for JacksonFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Only a 4-byte UTF-8 sequence (lead byte 0xF0..=0xF4) is outside the BMP.
        if !fragment.bytes().any(|b| b >= 0xF0) {
            return writer.write_all(fragment.as_bytes());
        }
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if c.len_utf8() < 4 {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04X}")?;
            }
            start = i + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        use serde_json::ser::CharEscape;
        let short: &[u8] = match escape {
            CharEscape::Quote => b"\\\"",
            CharEscape::ReverseSolidus => b"\\\\",
            CharEscape::Solidus => b"\\/",
            CharEscape::Backspace => b"\\b",
            CharEscape::FormFeed => b"\\f",
            CharEscape::LineFeed => b"\\n",
            CharEscape::CarriageReturn => b"\\r",
            CharEscape::Tab => b"\\t",
            CharEscape::AsciiControl(byte) => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                let code = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 0xf)],
                ];
                return writer.write_all(&code);
            }
        };
        writer.write_all(short)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    /// The bytes Curator 5.4 wrote on a live server (shared/CURATOR-DISCOVERY.md).
    const CURATOR_COMPATIBLE: &str = r#"{"name":"api","id":"id-1","address":"10.0.0.5","port":8080,"sslPort":null,"payload":"hello","registrationTimeUTC":1795665187978,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},{"value":"port","variable":true}]}}"#;
    const CURATOR_WITH_ENABLED: &str = r#"{"name":"api2","id":"id-2","address":"10.0.0.6","port":null,"sslPort":8443,"payload":{"@class":"java.util.HashMap","k":"v"},"registrationTimeUTC":1795665188253,"serviceType":"STATIC","uriSpec":null,"enabled":true}"#;

    #[test]
    fn writes_curators_bytes_in_both_formats() {
        let first = ServiceInstance::builder("api")
            .id("id-1")
            .address("10.0.0.5")
            .port(8080)
            .payload("hello".to_string())
            .registration_time_utc(1795665187978)
            .uri_spec(UriSpec::parse("{scheme}://{address}:{port}").unwrap())
            .build()
            .unwrap();
        let json = to_json(&first, JsonFormat::Compatible).unwrap();
        assert_eq!(String::from_utf8(json).unwrap(), CURATOR_COMPATIBLE);

        #[derive(Serialize, Deserialize, Debug, PartialEq)]
        struct Map {
            k: String,
        }
        let second = ServiceInstance::builder("api2")
            .id("id-2")
            .address("10.0.0.6")
            .ssl_port(8443)
            .payload(JavaTyped::new("java.util.HashMap", Map { k: "v".into() }))
            .registration_time_utc(1795665188253)
            .service_type(ServiceType::Static)
            .build()
            .unwrap();
        let json = to_json(&second, JsonFormat::WithEnabled).unwrap();
        assert_eq!(String::from_utf8(json).unwrap(), CURATOR_WITH_ENABLED);

        // And back, every field equal.
        let read: ServiceInstance<String> = from_json(CURATOR_COMPATIBLE.as_bytes()).unwrap();
        assert_eq!(read, first);
        let read: ServiceInstance<JavaTyped<Map>> =
            from_json(CURATOR_WITH_ENABLED.as_bytes()).unwrap();
        assert_eq!(read, second);
    }

    #[test]
    fn escapes_as_jackson_does() {
        let instance = ServiceInstance::<()>::builder("a\u{1}\n\"\\é😀日")
            .id("x")
            .address("h/1")
            .registration_time_utc(0)
            .build()
            .unwrap();
        let json = String::from_utf8(to_json(&instance, JsonFormat::Compatible).unwrap()).unwrap();
        assert!(
            json.starts_with(r#"{"name":"a\u0001\n\"\\é\uD83D\uDE00日","id":"x","address":"h/1","#),
            "{json}"
        );
        let upper = ServiceInstance::<()>::builder("\u{1f}")
            .id("x")
            .build()
            .unwrap();
        let json = String::from_utf8(to_json(&upper, JsonFormat::Compatible).unwrap()).unwrap();
        assert!(json.starts_with(r#"{"name":"\u001F","#), "{json}");
    }

    #[test]
    fn reads_leniently() {
        // Unknown keys, no enabled, no service type, any payload.
        let read: ServiceInstance<Value> = from_json(
            br#"{"id":"i","name":"n","extra":[1,2],"payload":{"@class":"x.Y","a":[true]}}"#,
        )
        .unwrap();
        assert!(read.enabled);
        assert_eq!(read.service_type, ServiceType::Dynamic);
        assert_eq!(read.payload, Some(json!({"@class": "x.Y", "a": [true]})));
        // A typed payload ignores `@class` and unknown keys.
        #[derive(Deserialize, Debug, PartialEq)]
        struct Details {
            a: Vec<bool>,
        }
        let read: ServiceInstance<Details> =
            from_json(br#"{"id":"i","name":"n","payload":{"@class":"x.Y","a":[true]}}"#).unwrap();
        assert_eq!(read.payload, Some(Details { a: vec![true] }));
        let read: ServiceInstance<Value> =
            from_json(br#"{"id":"i","name":"n","enabled":false,"payload":null}"#).unwrap();
        assert!(!read.enabled);
        assert_eq!(read.payload, None);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        for bad in [
            &b"not json"[..],
            b"",
            b"[]",
            b"null",
            br#"{"name":"n"}"#,
            br#"{"name":"n","id":"i","port":70000}"#,
            br#"{"name":"n","id":"i","serviceType":"FOREVER"}"#,
            br#"{"name":1,"id":"i"}"#,
            b"\xff\xfe",
        ] {
            let read = from_json::<Value>(bad);
            assert!(read.is_err(), "{:?}", String::from_utf8_lossy(bad));
            assert_eq!(
                read.unwrap_err().kind(),
                zkrs_client::ErrorKind::InvalidData
            );
        }
    }

    /// Every prefix of Curator's bytes, and every one-byte change of them, reads as an
    /// instance or as an error: never a panic.
    #[test]
    fn mangled_curator_bytes_never_panic() {
        for golden in [CURATOR_COMPATIBLE, CURATOR_WITH_ENABLED] {
            let bytes = golden.as_bytes();
            for end in 0..bytes.len() {
                assert!(from_json::<Value>(&bytes[..end]).is_err(), "prefix {end}");
            }
            for at in 0..bytes.len() {
                for byte in [b'"', b'{', b'}', b'0', b'\\', b'x', 0xff, 0] {
                    let mut mangled = bytes.to_vec();
                    mangled[at] = byte;
                    let _ = from_json::<Value>(&mangled);
                    let _ = from_json::<String>(&mangled);
                }
            }
        }
    }
}
