//! Macros for the integer-coded enums of the protocol (opcodes, error codes, modes, states).

/// An enum whose wire value is an `int`, where a value this crate does not know is kept as
/// `Unknown(n)` (a newer server may send codes an older client never heard of).
macro_rules! open_enum {
    ($(#[$meta:meta])* pub enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident = $value:literal => $text:literal,)*
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        // Later versions of ZooKeeper add values: a match needs a wildcard arm.
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value this version does not know, kept as it came.
            Unknown(i32),
        }

        impl $name {
            /// The value from its wire code; unknown codes are kept.
            pub const fn from_code(code: i32) -> Self {
                match code {
                    $($value => $name::$variant,)*
                    other => $name::Unknown(other),
                }
            }

            /// The wire code.
            pub const fn code(self) -> i32 {
                match self {
                    $($name::$variant => $value,)*
                    $name::Unknown(other) => other,
                }
            }

            /// The name ZooKeeper uses for it.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                    $name::Unknown(_) => "Unknown",
                }
            }
        }

        impl From<i32> for $name {
            fn from(code: i32) -> Self {
                Self::from_code(code)
            }
        }

        impl From<$name> for i32 {
            fn from(v: $name) -> i32 {
                v.code()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    $name::Unknown(n) => write!(f, "Unknown({n})"),
                    other => f.write_str(other.name()),
                }
            }
        }
    };
}

/// An enum whose wire value is an `int` and where an unknown value is a decoding error
/// (a create mode or opcode we cannot act on).
macro_rules! closed_enum {
    ($(#[$meta:meta])* pub enum $name:ident as $field:literal {
        $($(#[$vmeta:meta])* $variant:ident = $value:literal => $text:literal,)*
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        // Later versions of ZooKeeper add values: a match needs a wildcard arm.
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl $name {
            /// Every value, in wire-code order of declaration.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The value from its wire code, `None` if unknown.
            pub const fn from_code(code: i32) -> Option<Self> {
                match code {
                    $($value => Some($name::$variant),)*
                    _ => None,
                }
            }

            /// The wire code.
            pub const fn code(self) -> i32 {
                match self {
                    $($name::$variant => $value,)*
                }
            }

            /// The name ZooKeeper uses for it.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// Reads the value, failing on a code this crate does not know.
            pub fn read(r: &mut $crate::jute::Reader<'_>) -> Result<Self, $crate::DecodeError> {
                let code = r.read_i32()?;
                Self::from_code(code).ok_or($crate::DecodeError::InvalidValue {
                    field: $field,
                    value: code as i64,
                })
            }
        }

        impl TryFrom<i32> for $name {
            type Error = $crate::DecodeError;
            fn try_from(code: i32) -> Result<Self, $crate::DecodeError> {
                Self::from_code(code).ok_or($crate::DecodeError::InvalidValue {
                    field: $field,
                    value: code as i64,
                })
            }
        }

        impl From<$name> for i32 {
            fn from(v: $name) -> i32 {
                v.code()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// A Jute record: a struct whose codec is its fields, in declaration order.
macro_rules! record {
    // A record with a secret field (a password, credentials): its `Debug` prints that field
    // as `Secret(***)`, like [`crate::Secret`].
    ($(#[$meta:meta])* pub struct $name:ident<'a> secret $secret:ident {
        $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)*
    }) => {
        record!(@borrowed [Clone, Copy, PartialEq] $(#[$meta])* pub struct $name<'a> {
            $($(#[$fmeta])* pub $field: $ty,)*
        });
        impl std::fmt::Debug for $name<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let mut out = f.debug_struct(stringify!($name));
                $(
                    if stringify!($field) == stringify!($secret) {
                        out.field(stringify!($field), &$crate::secret::Redacted);
                    } else {
                        out.field(stringify!($field), &self.$field);
                    }
                )*
                out.finish()
            }
        }
    };
    ($(#[$meta:meta])* pub struct $name:ident<'a> {
        $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)*
    }) => {
        record!(@borrowed [Debug, Clone, Copy, PartialEq] $(#[$meta])* pub struct $name<'a> {
            $($(#[$fmeta])* pub $field: $ty,)*
        });
    };
    (@borrowed [$($derive:ident),*] $(#[$meta:meta])* pub struct $name:ident<'a> {
        $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)*
    }) => {
        $(#[$meta])*
        #[derive($($derive),*)]
        pub struct $name<'a> {
            $($(#[$fmeta])* pub $field: $ty,)*
        }
        impl $crate::jute::Encode for $name<'_> {
            fn encode(&self, _buf: &mut bytes::BytesMut) {
                $($crate::jute::Encode::encode(&self.$field, _buf);)*
            }
        }
        impl<'a> $crate::jute::Decode<'a> for $name<'a> {
            fn decode(_r: &mut $crate::jute::Reader<'a>) -> Result<Self, $crate::DecodeError> {
                Ok($name { $($field: $crate::jute::Decode::decode(_r)?,)* })
            }
        }
    };
    ($(#[$meta:meta])* pub struct $name:ident {
        $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)*
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }
        impl $crate::jute::Encode for $name {
            fn encode(&self, _buf: &mut bytes::BytesMut) {
                $($crate::jute::Encode::encode(&self.$field, _buf);)*
            }
        }
        impl<'a> $crate::jute::Decode<'a> for $name {
            fn decode(_r: &mut $crate::jute::Reader<'a>) -> Result<Self, $crate::DecodeError> {
                Ok($name { $($field: $crate::jute::Decode::decode(_r)?,)* })
            }
        }
    };
}

/// Encode/Decode for an enum made with `closed_enum!` or `open_enum!`, as its `int` code.
macro_rules! int_field {
    (closed $name:ty) => {
        impl $crate::jute::Encode for $name {
            fn encode(&self, buf: &mut bytes::BytesMut) {
                $crate::jute::put_i32(buf, self.code())
            }
        }
        impl<'a> $crate::jute::Decode<'a> for $name {
            fn decode(r: &mut $crate::jute::Reader<'a>) -> Result<Self, $crate::DecodeError> {
                <$name>::read(r)
            }
        }
    };
    (open $name:ty) => {
        impl $crate::jute::Encode for $name {
            fn encode(&self, buf: &mut bytes::BytesMut) {
                $crate::jute::put_i32(buf, self.code())
            }
        }
        impl<'a> $crate::jute::Decode<'a> for $name {
            fn decode(r: &mut $crate::jute::Reader<'a>) -> Result<Self, $crate::DecodeError> {
                r.read_i32().map(<$name>::from_code)
            }
        }
    };
}
