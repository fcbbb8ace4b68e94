//! The accessors every leader recipe's handle has, written once ([`leader_handle_methods!`]).

/// Writes the named methods of a leader recipe's handle (a type with a `shared` field whose
/// `path`, `id` and `flag: LeaderFlag` they read), each with the doc given before its name:
/// the recipe's own words for what leading means. The names: `path`, `id`, `is_leader`,
/// `leadership`, `await_leadership`, `await_leadership_timeout`, `events`.
macro_rules! leader_handle_methods {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        $($crate::leader::handle::leader_handle_methods!(@method $(#[$doc])* $name);)*
    };
    (@method $(#[$doc:meta])* path) => {
        $(#[$doc])*
        pub fn path(&self) -> &str {
            &self.shared.path
        }
    };
    (@method $(#[$doc:meta])* id) => {
        $(#[$doc])*
        pub fn id(&self) -> &str {
            &self.shared.id
        }
    };
    (@method $(#[$doc:meta])* is_leader) => {
        $(#[$doc])*
        pub fn is_leader(&self) -> bool {
            self.shared.flag.get()
        }
    };
    (@method $(#[$doc:meta])* leadership) => {
        $(#[$doc])*
        pub fn leadership(&self) -> zkrs_client::Current<bool> {
            self.shared.flag.current()
        }
    };
    (@method $(#[$doc:meta])* await_leadership) => {
        $(#[$doc])*
        pub async fn await_leadership(&self) -> zkrs_client::Result<()> {
            self.shared.flag.wait().await
        }
    };
    (@method $(#[$doc:meta])* await_leadership_timeout) => {
        $(#[$doc])*
        pub async fn await_leadership_timeout(
            &self,
            timeout: std::time::Duration,
        ) -> zkrs_client::Result<bool> {
            <Self as $crate::leader::Leadership>::await_leadership_timeout(self, timeout).await
        }
    };
    (@method $(#[$doc:meta])* events) => {
        $(#[$doc])*
        pub fn events(&self) -> zkrs_client::EventStream<$crate::leader::LeadershipEvent> {
            self.shared.flag.events()
        }
    };
}
pub(crate) use leader_handle_methods;
