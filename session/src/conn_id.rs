//! [`ConnId`]: the name the core gives each connection it asks for, so that the driver's
//! inputs say which connection they come from and the core alone knows what it is for.

/// A connection the core asked for ([`Event::Connect`](crate::Event::Connect),
/// [`Event::ConnectSpare`](crate::Event::ConnectSpare)): the driver passes it back with
/// every input from that connection
/// ([`Session::handle_connected`](crate::Session::handle_connected),
/// [`Session::handle_read`](crate::Session::handle_read),
/// [`Session::handle_closed`](crate::Session::handle_closed)). An input from a connection
/// the core no longer uses is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnId(u64);

impl ConnId {
    /// A name the core never gives (it counts from 1).
    #[cfg(feature = "fuzzing")]
    pub(crate) const UNUSED: ConnId = ConnId(0);
}

/// What a connection is for, the core's business only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The connection the session is on (or is being opened on).
    Current,
    /// A move's second connection, before the switch (`moving.rs`).
    Spare,
    /// A move's old connection after the switch, only read.
    Retiring,
}

/// The connections the core has handed out, by role.
#[derive(Debug, Default)]
pub(crate) struct Connections {
    issued: u64,
    current: Option<ConnId>,
    spare: Option<ConnId>,
    retiring: Option<ConnId>,
}

impl Connections {
    fn issue(&mut self) -> ConnId {
        self.issued += 1;
        ConnId(self.issued)
    }

    /// A new connection for the session ([`Event::Connect`](crate::Event::Connect)).
    pub(crate) fn open_current(&mut self) -> ConnId {
        let conn = self.issue();
        self.current = Some(conn);
        conn
    }

    /// A move's spare ([`Event::ConnectSpare`](crate::Event::ConnectSpare)).
    pub(crate) fn open_spare(&mut self) -> ConnId {
        let conn = self.issue();
        self.spare = Some(conn);
        conn
    }

    /// The switch ([`Event::UseSpare`](crate::Event::UseSpare)): the spare is the
    /// connection, the old one retires.
    pub(crate) fn use_spare(&mut self) {
        self.retiring = self.current;
        self.current = self.spare.take();
    }

    /// The move failed after the switch
    /// ([`Event::RestoreRetiring`](crate::Event::RestoreRetiring)).
    pub(crate) fn restore_retiring(&mut self) {
        self.current = self.retiring.take();
    }

    /// The current, spare and retiring connections' names (for `__private::connections`).
    pub(crate) fn by_role(&self) -> (Option<ConnId>, Option<ConnId>, Option<ConnId>) {
        (self.current, self.spare, self.retiring)
    }

    /// What `conn` is for, if the core still uses it.
    pub(crate) fn role(&self, conn: ConnId) -> Option<Role> {
        if self.current == Some(conn) {
            Some(Role::Current)
        } else if self.spare == Some(conn) {
            Some(Role::Spare)
        } else if self.retiring == Some(conn) {
            Some(Role::Retiring)
        } else {
            None
        }
    }
}
