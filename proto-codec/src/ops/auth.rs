//! `AuthPacket`: adding an identity to the session (sent with xid -4).

record! {
    /// `AuthPacket`.
    pub struct AuthPacket<'a> {
        /// Always 0.
        pub auth_type: i32,
        /// The scheme, e.g. `digest`.
        pub scheme: &'a str,
        /// The credentials, e.g. `user:password` for digest.
        pub auth: &'a [u8],
    }
}
