//! The test binary's global allocator: the system allocator, counting the
//! bytes and allocations each thread holds.
//!
//! Every thread is counted in thread-locals of its own, so the suites that
//! read the counts ([`alloc_accounting`](crate::alloc_accounting) and
//! [`drop_map`](crate::drop_map)) run beside every other test: each reads
//! only its own thread. libtest's main thread keeps allocating its own
//! bookkeeping while tests run, which a process-wide count would mix in.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// Bytes this thread holds from the allocator (allocated minus freed).
    static BYTES: Cell<isize> = const { Cell::new(0) };
    /// Allocations this thread holds.
    static ALLOCS: Cell<isize> = const { Cell::new(0) };
    /// While set, this thread's allocations are not counted.
    static PAUSED: Cell<bool> = const { Cell::new(false) };
}

/// Adds an allocation's change to this thread's counts, unless paused.
/// The thread-locals are `const`-initialised `Cell`s without destructors:
/// reading them never allocates, and after the thread's locals are gone
/// nothing is counted.
fn count(bytes: isize, allocs: isize) {
    let _ = PAUSED.try_with(|paused| {
        if !paused.get() {
            let _ = BYTES.try_with(|b| b.set(b.get() + bytes));
            let _ = ALLOCS.try_with(|a| a.set(a.get() + allocs));
        }
    });
}

// SAFETY: every call is forwarded to `System` unchanged; the counters are
// only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize, 1);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize, 1);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize), -1);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize, 0);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes this thread holds.
pub fn thread_bytes() -> isize {
    BYTES.with(Cell::get)
}

/// Allocations this thread holds.
pub fn thread_allocs() -> isize {
    ALLOCS.with(Cell::get)
}

/// Sets this thread's byte count, to forget what a scenario that was
/// allowed to leak (a panicking `Drop`) left behind.
pub fn set_thread_bytes(bytes: isize) {
    BYTES.with(|b| b.set(bytes));
}

/// Runs `f` with this thread's allocations uncounted.
pub fn paused<R>(f: impl FnOnce() -> R) -> R {
    let was = PAUSED.with(|p| p.replace(true));
    let r = f();
    PAUSED.with(|p| p.set(was));
    r
}
