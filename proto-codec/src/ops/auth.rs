//! `AuthPacket`: adding an identity to the session (sent with xid -4).

record! {
    /// `AuthPacket`. Its `Debug` prints the credentials as `Secret(***)`.
    pub struct AuthPacket<'a> secret auth {
        /// Always 0.
        pub auth_type: i32,
        /// The scheme, e.g. `digest`.
        pub scheme: &'a str,
        /// The credentials, e.g. `user:password` for digest.
        pub auth: &'a [u8],
    }
}

record! {
    /// `GetSASLRequest`: the client's next SASL token (op `sasl`, a normal xid). Empty when
    /// the mechanism has no initial response (DIGEST-MD5).
    pub struct GetSaslRequest<'a> {
        /// The token.
        pub token: &'a [u8],
    }
}

record! {
    /// `SetSASLResponse`: the server's SASL challenge or final token (null, read as empty,
    /// when it refused).
    pub struct SetSaslResponse<'a> {
        /// The token.
        pub token: &'a [u8],
    }
}
