//! Running many requests at once from one task: their frames leave together (pipelined), so
//! listing or deleting a thousand nodes costs a few round trips, not a thousand.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// How many requests [`all_chunked`] keeps in flight.
pub const CHUNK: usize = 1000;

/// Polls every future until all are done; results in the input order.
pub async fn all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut results: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, slot) in futures.iter_mut().zip(results.iter_mut()) {
            if slot.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => *slot = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    results
        .into_iter()
        .map(|r| r.expect("every future finished"))
        .collect()
}

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
