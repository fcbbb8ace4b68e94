//! One of each kind of item and type that scripts/public-api.py renders.
#![allow(clippy::all, dead_code, missing_docs, static_mut_refs)]
use std::fmt::Debug;

/// A macro.
#[macro_export]
macro_rules! mac {
    () => {};
}

pub mod outer {
    pub use super::*;
    pub mod inner {
        pub struct Deep;
    }
}
mod private {
    pub struct Reexported<const N: usize>([u8; N]);
    pub trait Sealed {}
}
pub use outer::inner::*;
pub use private::Reexported as Renamed;

#[doc(hidden)]
pub mod __private {
    pub fn hidden() {}
}
pub struct Fields {
    pub a: fn(u8, &mut [u16]) -> *const u8,
    pub b: Box<dyn Fn(&str) -> bool + Send + Sync + 'static>,
    pub c: for<'a> fn(&'a str) -> &'a str,
    pub d: *mut (u8, (), (i32,)),
    #[doc(hidden)]
    pub hidden: u8,
    pub e: [u8; 4],
}
pub union U {
    pub x: u32,
    pub y: f32,
}
pub static mut COUNTER: u32 = 0;
pub static NAME: &str = "x";
#[deprecated(since = "0.2.0", note = "use `new` instead")]
pub fn old() {}
#[must_use]
pub unsafe extern "C" fn ffi(x: *const u8) -> i32 {
    0
}
pub async fn run<T: Debug + ?Sized>(t: &T) -> usize
where
    T: Send,
{
    0
}
pub const fn c<const N: usize>() -> [u8; N] {
    [0; N]
}
pub fn q<I: Iterator>(i: I) -> Option<<I as Iterator>::Item>
where
    I::Item: Clone,
{
    None
}
pub fn imp<'a>(x: impl Into<String> + 'a, y: &'a mut u8) -> impl Iterator<Item = u8> + 'a {
    std::iter::empty()
}
pub trait Tr<'a, T = u8>: Clone + Debug
where
    T: Copy,
{
    type Assoc: Debug + 'a;
    const C: usize = 3;
    const D: i8;
    fn req(&'a self, x: T) -> Self::Assoc;
    fn prov(self: Box<Self>) {}
}
#[derive(Clone, Debug, PartialEq, Default)]
#[non_exhaustive]
pub enum E {
    #[default]
    A,
    B(u8, #[doc(hidden)] u8),
    C {
        x: i8,
    },
    #[doc(hidden)]
    D,
}
#[repr(u8)]
pub enum Disc {
    X = 1,
    Y = 2,
}
impl<'a> Tr<'a, u8> for E {
    type Assoc = &'a E;
    const D: i8 = 1;
    fn req(&'a self, _x: u8) -> &'a E {
        self
    }
}
impl E {
    pub fn new() -> Self {
        E::A
    }
    fn private(&self) {}
    #[doc(hidden)]
    pub fn hid(&self) {}
}
impl From<E> for String {
    fn from(_: E) -> String {
        String::new()
    }
}
pub struct G<'a, T: ?Sized + 'a, const N: usize = 3>(pub &'a T, #[doc(hidden)] pub ());
impl<'a, T: Debug + ?Sized> G<'a, T> {
    pub fn get(&self) -> &'a T {
        self.0
    }
}
unsafe impl<'a, T: ?Sized> Send for G<'a, T> {}
pub type Alias<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;
pub use std::collections::HashMap;
pub use E::*;

/// A builder.
#[must_use = "does nothing until built"]
pub struct Builder;
pub use __private::hidden as not_hidden_by_name;
pub trait Gat {
    type Item<'a>: Debug
    where
        Self: 'a;
}
impl<T: Gat + ?Sized> Gat for &T {
    type Item<'a>
        = ()
    where
        Self: 'a;
}
