//! `reconfig`: changing the ensemble's membership. The reply is a [`super::GetDataResponse`].

record! {
    /// `ReconfigRequest`: incremental (joining/leaving) or bulk (new members).
    pub struct ReconfigRequest<'a> {
        /// Servers to add, comma separated `server.N=...` lines.
        pub joining_servers: Option<&'a str>,
        /// Server ids to remove, comma separated.
        pub leaving_servers: Option<&'a str>,
        /// The whole new membership (bulk mode).
        pub new_members: Option<&'a str>,
        /// The config version expected, or -1 for any.
        pub cur_config_id: i64,
    }
}
