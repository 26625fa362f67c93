//! Dropping many values as std's collections do.
//!
//! When a value's `Drop` panics while a tree, a `clear` or an owning
//! iterator drops many, `BTreeMap` goes on dropping the rest and then
//! resumes the panic; a second panic on the way aborts the process. This
//! module gives the engine that behaviour: each value is dropped inside
//! [`DropsAll::drop_one`], which keeps the first panic, and
//! [`DropsAll::finish`] resumes it once every value has been dropped. A
//! second panic aborts, as std's unwinding guard would.

#[cfg(feature = "std")]
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// Drops values one after another, none skipped by a panicking one.
///
/// Without the `std` feature there is no `catch_unwind`: a panicking drop
/// unwinds at once and the values after it are leaked, not dropped (what
/// a `no_std` build usually does on a panic, abort, makes the difference
/// moot).
#[must_use = "`finish` resumes the panic a value's drop raised"]
pub(crate) struct DropsAll {
    #[cfg(feature = "std")]
    first_panic: Option<Box<dyn core::any::Any + Send + 'static>>,
}

impl DropsAll {
    /// Nothing dropped yet.
    pub(crate) const fn new() -> Self {
        Self {
            #[cfg(feature = "std")]
            first_panic: None,
        }
    }

    /// Runs `drop_value`, which drops one value; a panic in it is kept
    /// for [`finish`](Self::finish) (or, if one was already kept, aborts).
    #[inline]
    pub(crate) fn drop_one(&mut self, drop_value: impl FnOnce()) {
        #[cfg(feature = "std")]
        if let Err(panic) = catch_unwind(AssertUnwindSafe(drop_value)) {
            if self.first_panic.is_some() {
                // std's guard would be panicking while unwinding.
                std::process::abort();
            }
            self.first_panic = Some(panic);
        }
        #[cfg(not(feature = "std"))]
        drop_value();
    }

    /// Resumes the first panic a value's drop raised, if any.
    pub(crate) fn finish(self) {
        #[cfg(feature = "std")]
        if let Some(panic) = self.first_panic {
            resume_unwind(panic);
        }
    }
}
