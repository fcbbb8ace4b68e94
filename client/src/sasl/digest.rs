//! DIGEST-MD5 (RFC 2831) as ZooKeeper uses it: a user name and password from the server's
//! JAAS `Server` section (`user_<name>="<password>"`), the service `zookeeper`, the server
//! name `zk-sasl-md5`, quality of protection `auth` only.
//!
//! The exchange: an empty first token (the mechanism has no initial response), the
//! server's challenge (realm, nonce, ...), our response proving we know the password, and
//! the server's `rspauth` proving it knows it too, which is checked.

use zkrs_codec::Secret;
use zkrs_session::{SaslError, SaslExchange, SaslStep};

use super::md5::{hex, md5};

/// ZooKeeper's digest-uri: service `zookeeper`, server name `zk-sasl-md5`.
const DIGEST_URI: &str = "zookeeper/zk-sasl-md5";

/// One exchange, with the credentials and this connection's client nonce.
pub(crate) struct DigestMd5 {
    user: String,
    password: Secret,
    cnonce: String,
    state: State,
}

enum State {
    Start,
    /// Sent the empty token, waiting for the challenge.
    Challenged,
    /// Sent our response; the server must answer with this `rspauth`.
    Responded {
        rspauth: String,
    },
    Done,
}

impl DigestMd5 {
    pub(crate) fn new(user: String, password: Secret, cnonce: String) -> DigestMd5 {
        DigestMd5 {
            user,
            password,
            cnonce,
            state: State::Start,
        }
    }

    fn respond(&mut self, challenge: &[u8]) -> Result<SaslStep, String> {
        if challenge.is_empty() {
            return Err("the server sent no DIGEST-MD5 challenge (is SASL configured on it, with a JAAS Server section?)".into());
        }
        let text = std::str::from_utf8(challenge)
            .map_err(|_| "the server's challenge is not UTF-8".to_string())?;
        let directives = parse_directives(text)?;
        let get = |key: &str| {
            directives
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| v.as_str())
        };
        let nonce = get("nonce").ok_or("the server's challenge has no nonce")?;
        let realm = get("realm").unwrap_or("");
        if let Some(qop) = get("qop") {
            if !qop.split(',').any(|q| q.trim() == "auth") {
                return Err(format!("the server offers qop '{qop}', not 'auth'"));
            }
        }
        match get("algorithm") {
            Some(a) if a.eq_ignore_ascii_case("md5-sess") => {}
            other => {
                return Err(format!(
                    "the server's challenge asks for algorithm {other:?}, not md5-sess"
                ))
            }
        }
        let utf8 = get("charset").is_some_and(|c| c.eq_ignore_ascii_case("utf-8"));
        let nc = "00000001";
        let digest = |a2: &str| {
            let mut secret = format!("{}:{realm}:", self.user).into_bytes();
            secret.extend_from_slice(self.password.expose());
            let mut a1 = md5(&secret).to_vec();
            secret.fill(0);
            a1.extend_from_slice(format!(":{nonce}:{}", self.cnonce).as_bytes());
            let ha1 = hex(&md5(&a1));
            let ha2 = hex(&md5(a2.as_bytes()));
            hex(&md5(format!(
                "{ha1}:{nonce}:{nc}:{}:auth:{ha2}",
                self.cnonce
            )
            .as_bytes()))
        };
        let response = digest(&format!("AUTHENTICATE:{DIGEST_URI}"));
        let rspauth = digest(&format!(":{DIGEST_URI}"));
        let mut token = String::new();
        if utf8 {
            token.push_str("charset=utf-8,");
        }
        token.push_str(&format!(
            "username={},realm={},nonce={},nc={nc},cnonce={},digest-uri=\"{DIGEST_URI}\",maxbuf=65536,response={response},qop=auth",
            quote(&self.user),
            quote(realm),
            quote(nonce),
            quote(&self.cnonce),
        ));
        self.state = State::Responded { rspauth };
        Ok(SaslStep::Send(token.into_bytes()))
    }
}

impl SaslExchange for DigestMd5 {
    fn step(&mut self, server_token: Option<&[u8]>) -> Result<SaslStep, SaslError> {
        match (&self.state, server_token) {
            (State::Start, _) => {
                self.state = State::Challenged;
                Ok(SaslStep::Send(Vec::new()))
            }
            (State::Challenged, Some(challenge)) => {
                self.respond(challenge).map_err(SaslError::from)
            }
            (State::Responded { rspauth }, Some(token)) => {
                let text = std::str::from_utf8(token).unwrap_or("");
                let directives = parse_directives(text)?;
                let theirs = directives
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("rspauth"))
                    .map(|(_, v)| v.as_str());
                if theirs != Some(rspauth.as_str()) {
                    return Err(
                        "the server's rspauth does not match: it does not know the password".into(),
                    );
                }
                self.state = State::Done;
                Ok(SaslStep::Done)
            }
            (State::Challenged | State::Responded { .. }, None) | (State::Done, _) => {
                Err("DIGEST-MD5 exchange out of order".into())
            }
        }
    }
}

/// `"value"` with `"` and `\` escaped.
fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `key=value` and `key="quoted, value"` directives, comma-separated (RFC 2831 2.1).
fn parse_directives(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' {
                break;
            }
            key.push(c);
            chars.next();
        }
        if chars.next() != Some('=') {
            return Err(format!("malformed DIGEST-MD5 directive '{}'", key.trim()));
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('"') => break,
                    Some(c) => value.push(c),
                    None => return Err("unterminated quoted value in DIGEST-MD5 challenge".into()),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        out.push((key.trim().to_string(), value.trim().to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 2831 section 4's example, with ZooKeeper's digest-uri instead of the RFC's
    /// `imap/elwood.innosoft.com`: the expected values were computed with Python's hashlib
    /// by the same formulas, which give the RFC's own `d388dad9...` for its digest-uri.
    #[test]
    fn response_and_rspauth_follow_rfc_2831() {
        let mut exchange = DigestMd5::new("chris".into(), "secret".into(), "OA6MHXh6VqTrRk".into());
        assert_eq!(exchange.step(None).unwrap(), SaslStep::Send(Vec::new()));
        let challenge = br#"realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8"#;
        let SaslStep::Send(response) = exchange.step(Some(challenge)).unwrap() else {
            panic!("a response")
        };
        let response = String::from_utf8(response).unwrap();
        let directives = parse_directives(&response).unwrap();
        let get = |k: &str| {
            directives
                .iter()
                .find(|(key, _)| key == k)
                .unwrap()
                .1
                .clone()
        };
        assert_eq!(get("username"), "chris");
        assert_eq!(get("realm"), "elwood.innosoft.com");
        assert_eq!(get("digest-uri"), DIGEST_URI);
        assert_eq!(get("nc"), "00000001");
        assert_eq!(get("qop"), "auth");
        assert_eq!(get("charset"), "utf-8");
        assert_eq!(get("response"), EXPECTED_RESPONSE);
        // The server's proof, then done; a wrong proof is refused.
        let mut wrong = DigestMd5::new("chris".into(), "secret".into(), "OA6MHXh6VqTrRk".into());
        wrong.step(None).unwrap();
        wrong.step(Some(challenge)).unwrap();
        assert!(wrong
            .step(Some(b"rspauth=00000000000000000000000000000000"))
            .is_err());
        let ok = format!("rspauth={EXPECTED_RSPAUTH}");
        assert_eq!(exchange.step(Some(ok.as_bytes())).unwrap(), SaslStep::Done);
    }

    const EXPECTED_RESPONSE: &str = "3d53f3e841d45c8a4dcf0f37c4725582";
    const EXPECTED_RSPAUTH: &str = "8c55a82deadfa98cf2a60488be40c74d";

    #[test]
    fn directives_with_quotes_and_escapes() {
        let d = parse_directives(r#"a="x, y",b=2 , c="q\"uote""#).unwrap();
        assert_eq!(
            d,
            [
                ("a".to_string(), "x, y".to_string()),
                ("b".to_string(), "2".to_string()),
                ("c".to_string(), "q\"uote".to_string())
            ]
        );
        assert!(parse_directives("novalue").is_err());
        assert!(parse_directives(r#"a="open"#).is_err());
    }

    #[test]
    fn a_server_without_sasl_or_other_algorithms_is_refused() {
        let mut e = DigestMd5::new("u".into(), "p".into(), "c".into());
        e.step(None).unwrap();
        assert!(e
            .step(Some(b""))
            .unwrap_err()
            .message()
            .contains("no DIGEST-MD5 challenge"));
        let mut e = DigestMd5::new("u".into(), "p".into(), "c".into());
        e.step(None).unwrap();
        assert!(e
            .step(Some(br#"nonce="n",qop="auth-conf",algorithm=md5-sess"#))
            .unwrap_err()
            .message()
            .contains("not 'auth'"));
    }
}
