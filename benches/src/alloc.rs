//! A counting global allocator: memory for peers that keep no account of
//! their own.
//!
//! WORKLOADS.md measures a structure's memory as the bytes it has obtained
//! from its allocator. The project's tree and TID store report that
//! themselves (`memory_usage()`: the slab blocks and arenas they hold); for
//! every other structure the harness reads [`live_bytes`] before
//! construction and after loading, and takes the difference. A binary opts
//! in by installing [`CountingAlloc`]:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: benches::alloc::CountingAlloc = benches::alloc::CountingAlloc;
//! ```
//!
//! Bytes are the sizes requested through `Layout` (what Rust asked for, not
//! what `malloc` rounds up to). They are counted per thread: a thread's
//! count is what it allocated minus what it freed, so a measurement on one
//! thread is not disturbed by others (a progress bar, parallel tests), as
//! long as the structure is built and dropped on the measuring thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Bytes allocated minus bytes freed on this thread through
    /// [`CountingAlloc`]. Const-initialised and without a destructor, so
    /// the allocator may touch it at any time.
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// Adds `delta` to this thread's count.
#[inline]
fn count(delta: isize) {
    // `try_with` cannot fail for a const-initialised `Cell`, but an
    // allocator must never panic.
    let _ = LIVE.try_with(|live| live.set(live.get().wrapping_add(delta)));
}

/// Forwards to the system allocator and counts live bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAlloc;

// SAFETY: every call forwards to `System` with the caller's arguments; the
// only addition is bookkeeping in a const-initialised thread-local `Cell`,
// which neither allocates nor panics.
unsafe impl GlobalAlloc for CountingAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            count(layout.size() as isize);
        }
        ptr
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            count(layout.size() as isize);
        }
        ptr
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            count(new_size as isize);
            count(-(layout.size() as isize));
        }
        new
    }
}

/// Bytes this thread has allocated minus bytes it has freed through
/// [`CountingAlloc`] (negative when it freed memory another thread
/// allocated; always 0 when it is not the global allocator). Only
/// differences on one thread are meaningful: see [`bytes_since`].
#[inline]
pub fn live_bytes() -> isize {
    LIVE.try_with(Cell::get).unwrap_or(0)
}

/// Bytes this thread has kept since `live_bytes()` returned `before`
/// (0 if it has freed more).
#[inline]
pub fn bytes_since(before: isize) -> usize {
    live_bytes().wrapping_sub(before).max(0) as usize
}

/// Whether [`CountingAlloc`] is the global allocator: whether an
/// allocation on this thread moves the count.
pub fn is_installed() -> bool {
    let before = live_bytes();
    let probe = std::hint::black_box(Box::new(0u64));
    let kept = bytes_since(before);
    drop(probe);
    kept > 0
}

/// [`settle`] ends once this thread's live bytes have not fallen below
/// their lowest for this many rounds in a row: an epoch-based structure's
/// flush frees at most a few bags of retired nodes, and a bag is freed
/// two epochs after it was sealed. (Waiting for the count to stop
/// *moving* never ended: each flush allocates and frees a bag of its own,
/// so the count moves every round.)
const SETTLE_STILL_ROUNDS: usize = 8;

/// Upper bound on [`settle`]'s rounds.
const SETTLE_MAX_ROUNDS: usize = 1 << 20;

/// Calls `step` (an epoch-based structure's re-pin and flush) until it
/// stops freeing memory on this thread, as the counting allocator sees it:
/// until the thread's live bytes have not fallen below their lowest for 8
/// rounds in a row. Without the counting allocator, 8 rounds.
pub fn settle(mut step: impl FnMut()) {
    let mut lowest = live_bytes();
    let mut still = 0;
    for _ in 0..SETTLE_MAX_ROUNDS {
        step();
        let now = live_bytes();
        if now < lowest {
            lowest = now;
            still = 0;
        } else {
            still += 1;
            if still == SETTLE_STILL_ROUNDS {
                break;
            }
        }
    }
}
