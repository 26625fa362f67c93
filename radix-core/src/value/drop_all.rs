//! Dropping many values as std's collections do.
//!
//! When a value's `Drop` panics while a tree, a `clear` or an owning
//! iterator drops many, `BTreeMap` goes on dropping the rest and then
//! resumes the panic; a second panic on the way aborts the process. This
//! module gives the engine that behaviour: each value is dropped inside
//! [`DropsAll::drop_one`], which keeps the first panic, and
//! [`DropsAll::finish`] resumes it once every value has been dropped. A
//! second panic aborts, as std's unwinding guard would.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// Drops values one after another, none skipped by a panicking one.
#[must_use = "`finish` resumes the panic a value's drop raised"]
pub(crate) struct DropsAll {
    first_panic: Option<Box<dyn Any + Send + 'static>>,
}

impl DropsAll {
    /// Nothing dropped yet.
    pub(crate) const fn new() -> Self {
        Self { first_panic: None }
    }

    /// Runs `drop_value`, which drops one value; a panic in it is kept
    /// for [`finish`](Self::finish) (or, if one was already kept, aborts).
    #[inline]
    pub(crate) fn drop_one(&mut self, drop_value: impl FnOnce()) {
        if let Err(panic) = catch_unwind(AssertUnwindSafe(drop_value)) {
            if self.first_panic.is_some() {
                // std's guard would be panicking while unwinding.
                std::process::abort();
            }
            self.first_panic = Some(panic);
        }
    }

    /// Resumes the first panic a value's drop raised, if any.
    pub(crate) fn finish(self) {
        if let Some(panic) = self.first_panic {
            resume_unwind(panic);
        }
    }
}
