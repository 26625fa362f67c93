//! Process-shared locks that survive the death of their holders.
//!
//! Two locks live in an area: the area's [`PidMutex`], which serialises
//! changes to segments and the page allocator, and one [`SharedRwLock`] per
//! tree. Both are futex words in shared memory (non-private futexes, so that
//! waiters in every process are woken), and both record *who* holds them by
//! pid rather than by a count, because a process can die holding a lock and
//! shared memory outlives it:
//!
//! - A writer's pid is the lock word itself. A waiter wakes every
//!   [`WAIT_SLICE`] to check that the holder still runs; if it does not,
//!   what it was writing may be half done, so the waiter *poisons* the lock
//!   with that pid and every later acquisition fails with
//!   [`ShmError::OwnerDied`], as a poisoned `std::sync` lock does.
//! - Readers claim one slot each in a fixed table of pids. A writer waits
//!   for the table to empty; a slot whose pid has died is reclaimed, since
//!   a reader changes nothing.
//!
//! Readers and a writer meet Dekker-style: a reader publishes its slot and
//! then looks for a writer, a writer publishes itself and then looks for
//! readers, both with sequentially consistent operations, so at least one
//! of them sees the other. A reader that sees a writer steps back, so
//! waiting writers are not starved by a stream of readers.
//!
//! A pid can be reused after its process dies; PostgreSQL's DSA has the
//! same exposure. The window is the time between a holder's death and the
//! next waiter's check, which is at most one wait slice.

use core::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use rustix::io::Errno;
#[cfg(not(miri))]
use rustix::thread::futex;

use super::ShmError;

/// How long a waiter sleeps before checking that a holder is alive.
pub(crate) const WAIT_SLICE: Duration = Duration::from_millis(20);

/// Reader slots per tree: this many read guards may be held at once.
pub(crate) const READER_SLOTS: usize = 64;

/// This process's id, from the system (a system call: an area caches it,
/// see `AreaInner::pid`).
pub(crate) fn my_pid() -> u32 {
    std::process::id()
}

/// Whether process `pid` is running: it exists and is not a zombie (a
/// killed child its parent has not reaped yet still answers `kill`).
pub(crate) fn process_alive(pid: u32) -> bool {
    if pid == my_pid() {
        return true;
    }
    let Some(target) = rustix::process::Pid::from_raw(pid as i32) else {
        return false;
    };
    match rustix::process::test_kill_process(target) {
        Err(Errno::SRCH) => false,
        _ => match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The state follows the parenthesised command name.
            Ok(stat) => !matches!(
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.trim_start().chars().next()),
                Some('Z' | 'X')
            ),
            // No /proc: trust kill.
            Err(_) => true,
        },
    }
}

/// Sleeps on `word` while it holds `expected`, for at most one slice.
/// Returns whether the slice ran out (rather than a wake or a change).
///
/// Under Miri, which does not model this crate's futex calls, a waiter
/// yields instead, and never times out (so it never asks whether a holder
/// runs, which Miri cannot answer either).
#[cfg(miri)]
fn wait_slice(_word: &AtomicU32, _expected: u32) -> bool {
    std::thread::yield_now();
    false
}

/// Sleeps on `word` while it holds `expected`, for at most one slice.
/// Returns whether the slice ran out (rather than a wake or a change).
#[cfg(not(miri))]
fn wait_slice(word: &AtomicU32, expected: u32) -> bool {
    let timeout = futex::Timespec {
        tv_sec: 0,
        tv_nsec: WAIT_SLICE.as_nanos() as _,
    };
    let result = futex::wait(word, futex::Flags::empty(), expected, Some(&timeout));
    matches!(result, Err(Errno::TIMEDOUT))
}

/// [`wait_slice`], counted in `waiters` so that a releaser knows to wake.
fn wait_on(word: &AtomicU32, waiters: &AtomicU32, expected: u32) -> bool {
    waiters.fetch_add(1, SeqCst);
    let timed_out = wait_slice(word, expected);
    waiters.fetch_sub(1, SeqCst);
    timed_out
}

/// Wakes every waiter on `word`.
fn wake_all(word: &AtomicU32) {
    #[cfg(miri)]
    let _ = word; // Waiters yield; there is nothing to wake.
    #[cfg(not(miri))]
    // Nothing useful can be done if the wake fails: waiters time out and
    // look again.
    let _ = futex::wake(word, futex::Flags::empty(), i32::MAX as u32);
}

/// A mutex whose word is the holder's pid.
#[repr(C)]
pub(crate) struct PidMutex {
    owner: AtomicU32,
    waiters: AtomicU32,
    poisoned: AtomicU32,
}

impl PidMutex {
    /// Blocks until process `me` (this one) holds the mutex.
    ///
    /// # Errors
    ///
    /// [`ShmError::OwnerDied`] if a holder died: what it guarded may be
    /// half-changed.
    pub(crate) fn lock(&self, me: u32) -> Result<PidMutexGuard<'_>, ShmError> {
        loop {
            let dead = self.poisoned.load(SeqCst);
            if dead != 0 {
                return Err(ShmError::OwnerDied { pid: dead });
            }
            match self.owner.compare_exchange(0, me, SeqCst, SeqCst) {
                Ok(_) => return Ok(PidMutexGuard { mutex: self }),
                Err(holder) => {
                    if wait_on(&self.owner, &self.waiters, holder) && !process_alive(holder) {
                        poison(&self.poisoned, &self.owner, holder);
                    }
                }
            }
        }
    }
}

/// Holds a [`PidMutex`]; releases it on drop, also while unwinding.
pub(crate) struct PidMutexGuard<'a> {
    mutex: &'a PidMutex,
}

impl Drop for PidMutexGuard<'_> {
    fn drop(&mut self) {
        self.mutex.owner.store(0, SeqCst);
        if self.mutex.waiters.load(SeqCst) > 0 {
            wake_all(&self.mutex.owner);
        }
    }
}

/// Marks a lock poisoned by `dead`, frees its word and wakes its waiters,
/// who then see the poison.
fn poison(poisoned: &AtomicU32, word: &AtomicU32, dead: u32) {
    let _ = poisoned.compare_exchange(0, dead, SeqCst, SeqCst);
    let _ = word.compare_exchange(dead, 0, SeqCst, SeqCst);
    wake_all(word);
}

/// A reader-writer lock for one tree.
#[repr(C)]
pub(crate) struct SharedRwLock {
    /// The pid of the writer holding the lock or waiting for readers to
    /// leave; 0 when there is none. Readers wait on it.
    writer: AtomicU32,
    /// Threads waiting on `writer`.
    waiters: AtomicU32,
    /// Bumped by readers leaving while a writer waits; the writer waits on
    /// it.
    drained: AtomicU32,
    /// The pid of a writer that died holding the lock; 0 when healthy.
    poisoned: AtomicU32,
    /// The pids of the readers holding the lock; 0 for a free slot.
    readers: [AtomicU32; READER_SLOTS],
}

impl SharedRwLock {
    /// The poison: the pid of a writer that died holding the lock.
    fn check_poison(&self) -> Result<(), ShmError> {
        match self.poisoned.load(SeqCst) {
            0 => Ok(()),
            pid => Err(ShmError::OwnerDied { pid }),
        }
    }

    /// Waits while `holder` holds the writer word, or, when not
    /// `blocking`, says why not. Poisons the lock if `holder` is dead.
    fn wait_for_writer(&self, holder: u32, blocking: bool) -> Result<(), ShmError> {
        let dead = if blocking {
            wait_on(&self.writer, &self.waiters, holder) && !process_alive(holder)
        } else {
            !process_alive(holder)
        };
        if dead {
            poison(&self.poisoned, &self.writer, holder);
            return Err(ShmError::OwnerDied { pid: holder });
        }
        if blocking {
            Ok(())
        } else {
            Err(ShmError::WouldBlock)
        }
    }

    /// Takes a read slot for process `me` (this one); returns its index,
    /// which [`read_unlock`] releases.
    ///
    /// [`read_unlock`]: Self::read_unlock
    pub(crate) fn read(&self, me: u32, blocking: bool) -> Result<usize, ShmError> {
        // Spread threads over the table so that they rarely contend.
        let start = thread_hint() % READER_SLOTS;
        loop {
            self.check_poison()?;
            let holder = self.writer.load(SeqCst);
            if holder != 0 {
                self.wait_for_writer(holder, blocking)?;
                continue;
            }
            let claimed = (0..READER_SLOTS)
                .map(|i| (start + i) % READER_SLOTS)
                .find(|&i| {
                    self.readers[i]
                        .compare_exchange(0, me, SeqCst, SeqCst)
                        .is_ok()
                });
            let Some(slot) = claimed else {
                if self.reclaim_dead_readers() == 0 {
                    if !blocking {
                        return Err(ShmError::WouldBlock);
                    }
                    std::thread::sleep(WAIT_SLICE);
                }
                continue;
            };
            if self.writer.load(SeqCst) == 0 {
                return Ok(slot);
            }
            // A writer arrived: step back and let it in.
            self.read_unlock(slot);
        }
    }

    /// Releases a read slot taken by [`read`](Self::read).
    pub(crate) fn read_unlock(&self, slot: usize) {
        self.readers[slot].store(0, SeqCst);
        if self.writer.load(SeqCst) != 0 {
            self.drained.fetch_add(1, SeqCst);
            wake_all(&self.drained);
        }
    }

    /// Takes the write lock for process `me` (this one).
    pub(crate) fn write(&self, me: u32, blocking: bool) -> Result<(), ShmError> {
        loop {
            self.check_poison()?;
            match self.writer.compare_exchange(0, me, SeqCst, SeqCst) {
                Ok(_) => break,
                Err(holder) => self.wait_for_writer(holder, blocking)?,
            }
        }
        // New readers now step back; wait for the ones inside to leave.
        loop {
            let seen = self.drained.load(SeqCst);
            if self.readers.iter().all(|r| r.load(SeqCst) == 0) {
                return Ok(());
            }
            if !blocking {
                if self.reclaim_dead_readers() > 0 {
                    continue;
                }
                self.write_unlock();
                return Err(ShmError::WouldBlock);
            }
            // Readers leaving while a writer is present always wake
            // `drained`, so it needs no waiter count.
            if wait_slice(&self.drained, seen) {
                self.reclaim_dead_readers();
            }
        }
    }

    /// Releases the write lock.
    pub(crate) fn write_unlock(&self) {
        self.writer.store(0, SeqCst);
        if self.waiters.load(SeqCst) > 0 {
            wake_all(&self.writer);
        }
    }

    /// Frees the slots of readers that died holding them; returns how many.
    fn reclaim_dead_readers(&self) -> usize {
        let mut freed = 0;
        for reader in &self.readers {
            let pid = reader.load(SeqCst);
            if pid != 0
                && !process_alive(pid)
                && reader.compare_exchange(pid, 0, SeqCst, SeqCst).is_ok()
            {
                freed += 1;
            }
        }
        freed
    }

    /// Resets a lock for a new tree in a free slot.
    pub(crate) fn reset(&self) {
        for word in [&self.writer, &self.waiters, &self.drained, &self.poisoned] {
            word.store(0, SeqCst);
        }
        for reader in &self.readers {
            reader.store(0, SeqCst);
        }
    }

    /// The pid of a writer that died holding the lock, if any.
    pub(crate) fn poisoned_by(&self) -> Option<u32> {
        match self.poisoned.load(SeqCst) {
            0 => None,
            pid => Some(pid),
        }
    }
}

/// A small number that differs between threads, to start the search for a
/// free reader slot: drawn once per thread.
fn thread_hint() -> usize {
    use core::cell::Cell;
    use core::sync::atomic::AtomicUsize;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static HINT: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    HINT.with(|hint| {
        if hint.get() == usize::MAX {
            // Consecutive threads start a few cache lines apart.
            hint.set(NEXT.fetch_add(17, core::sync::atomic::Ordering::Relaxed));
        }
        hint.get()
    })
}
