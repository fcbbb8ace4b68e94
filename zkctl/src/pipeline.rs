//! Running many requests at once from one task: their frames leave together (pipelined), so
//! listing or deleting a thousand nodes costs a few round trips, not a thousand.

use std::future::Future;

/// How many requests [`all_chunked`] keeps in flight.
pub const CHUNK: usize = 1000;

/// Polls every future until all are done; results in the input order (the recipes
/// framework's pipelined join).
pub use zkrs_recipes::framework::join_all as all;

/// Like [`all`] over `items`, at most [`CHUNK`] at a time (bounded memory for huge levels).
pub async fn all_chunked<'a, T, F: Future>(
    items: &'a [T],
    f: impl Fn(&'a T) -> F,
) -> Vec<F::Output> {
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(CHUNK) {
        out.extend(all(chunk.iter().map(&f)).await);
    }
    out
}
