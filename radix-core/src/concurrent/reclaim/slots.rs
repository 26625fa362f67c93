//! Where each thread announces what it reads: one [`Slot`] per thread in
//! each tree's [`Slots`] table, found by a small process-wide thread
//! number.
//!
//! A thread takes the smallest free number the first time it pins any
//! tree and gives it back when it exits, so the tables stay as small as
//! the number of threads alive at once, however many come and go. A table
//! grows by buckets of 1, 2, 4, 8, … slots that never move: a reader finds
//! its slot with one thread-local load, one bucket pointer and an offset,
//! and a writer scans every slot without a lock.
//!
//! Each thread also remembers the last slot it found and in which table
//! ([`Slots::mine`]), so that the pins of a loop of lookups in one tree
//! skip the thread number (a thread-local with a destructor, which every
//! access must check) and the bucket arithmetic. Lookups per call in a
//! concurrent tree took 1.16x the plain tree's time on RT-1 with it and
//! 1.36x without, 1.74x and 1.95x on RT-2, in one build (RT-1's time
//! also moves with code placement; `benches/RESULTS.md`, "A pin finds its
//! slot in one load"): in a loop of lookups that miss the
//! cache, every instruction a pin adds keeps a later lookup's misses out
//! of the processor's window.

// Under the model checkers retired memory waits for the drop, so only the
// types are used there.
#![cfg_attr(any(loom, shuttle), allow(dead_code))]

use core::cell::{Cell, UnsafeCell};
use core::marker::PhantomData;
use core::ptr;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Mutex;

// The announcement words are not part of what the model checkers explore
// (under them, retired memory is kept until the drop), so they are
// `core`'s atomics in every build.
use super::Retired;
use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// Buckets in a table: bucket `b` holds `2^b` slots, so 32 buckets hold a
/// slot for every thread a process can have.
const BUCKETS: usize = 32;

/// One thread's announcement in one tree, and what it has retired there
/// but not yet handed over.
///
/// Aligned to two cache lines (the adjacent-line prefetcher of x86), so
/// that a reader's stores to its own slot never touch a line another
/// reader writes.
#[repr(align(128))]
pub struct Slot {
    /// `0` while the thread is not pinned; otherwise the global epoch it
    /// saw when it pinned, with [`ACTIVE`](super::ACTIVE) set. Written
    /// only by the owning thread, read by writers that advance the epoch.
    pub(crate) announced: AtomicUsize,
    /// How many pins the owning thread holds here (pins nest: a lookup
    /// inside a `ReadPin`, an iterator's refill inside a loop of
    /// lookups). Only the owning thread touches it.
    pub(super) depth: AtomicUsize,
    /// For a table whose announcements live elsewhere (in shared memory):
    /// the one this thread claimed (null: none yet), kept as its address
    /// so that a pin reaches it with one load and no bounds check. Only
    /// the owning thread touches it, and the table when its handle drops.
    #[cfg(all(feature = "shm", target_os = "linux"))]
    pub(crate) claimed: AtomicPtr<u8>,
    /// Objects the owning thread retired, not yet sealed into a bag.
    open: UnsafeCell<Vec<Retired>>,
}

// SAFETY: `announced` and `depth` are atomics. `open` is touched only by
// the thread that owns the slot's number (`Slot::open`'s contract), and a
// number passes from an exiting thread to the next through the `NUMBERS`
// mutex, which orders the first owner's accesses before the second's; the
// table's owner reaches it otherwise only through `&mut` (`Slots::drain`).
unsafe impl Sync for Slot {}
// SAFETY: as for `Sync`: the retired pointers in `open` belong to the
// tree, which is `Send`, and are freed by whichever thread drops it.
unsafe impl Send for Slot {}

impl Slot {
    fn new() -> Self {
        Self {
            announced: AtomicUsize::new(0),
            depth: AtomicUsize::new(0),
            #[cfg(all(feature = "shm", target_os = "linux"))]
            claimed: AtomicPtr::new(ptr::null_mut()),
            open: UnsafeCell::new(Vec::new()),
        }
    }

    /// The owning thread's open list of retired objects.
    ///
    /// # Safety
    ///
    /// The caller is the thread that owns this slot (it found it through
    /// [`Slots::mine`]), and holds no other reference from this call.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn open(&self) -> &mut Vec<Retired> {
        // SAFETY: only the owner reaches `open` through `&self`, one
        // reference at a time (the caller's contract); see `impl Sync`.
        unsafe { &mut *self.open.get() }
    }
}

/// A tree's slots, one per thread number.
pub struct Slots {
    table: PerThread<Slot>,
    /// This table's number, which no other table of the process ever
    /// gets: what [`LAST_FOUND`] tells tables apart by. An address would
    /// not do, since a table dropped and another made at its address
    /// would then share the entry of a freed slot.
    id: u64,
}

/// The source of [`Slots::id`]; `0` is never handed out, so that it can
/// mean "no table" in [`LAST_FOUND`].
static NEXT_TABLE_ID: AtomicU64 = AtomicU64::new(1);

impl Default for Slot {
    fn default() -> Self {
        Self::new()
    }
}

impl Slots {
    pub(super) fn new() -> Self {
        Self {
            table: PerThread::new(),
            id: NEXT_TABLE_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The calling thread's slot: the one it found last, if that was in
    /// this table, else found by its thread number and remembered.
    #[inline(always)]
    pub(super) fn mine(&self) -> &Slot {
        let (table, slot) = LAST_FOUND.get();
        if table == self.id {
            // The entry was set by `find_mine` of this table (no other
            // table has its id), on this thread, and cleared when the thread
            // gave its number back.
            // SAFETY: so `slot` is this thread's slot in this table, which
            // is alive (`&self`) and whose buckets never move.
            return unsafe { &*slot };
        }
        self.find_mine()
    }

    /// [`mine`](Self::mine) when the thread's last slot was another
    /// table's.
    #[inline(never)]
    fn find_mine(&self) -> &Slot {
        let slot = self.table.mine();
        LAST_FOUND.set((self.id, slot));
        slot
    }

    /// Every slot installed so far, for a writer's scan.
    pub(super) fn each(&self) -> impl Iterator<Item = &Slot> {
        self.table.each()
    }

    /// Takes every slot's open list; the table is the caller's alone.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = Retired> + '_ {
        self.table
            .each_mut()
            .flat_map(|slot| slot.open.get_mut().drain(..))
    }
}

/// One `T` per thread number, made on first use: the calling thread finds
/// its own with one thread-local load, one bucket pointer and an offset,
/// and anyone may scan them all without a lock. Bucket `b` holds `2^b`
/// values and, once installed, stays where it is until the table drops.
///
/// What a thread may do with its `T` beyond `&T` is `T`'s business: a
/// [`Slot`] and a local space's node cache keep state only their owner
/// touches, since a number belongs to one live thread at a time.
pub(crate) struct PerThread<T> {
    /// Bucket `b`: null until a thread numbered `2^b - 1` or above first
    /// asks for its value, then `2^b` values.
    buckets: [AtomicPtr<T>; BUCKETS],
    /// The table owns its values (for `Send` and `Sync`, and the drop).
    _owns: PhantomData<Box<[T]>>,
}

impl<T: Default> PerThread<T> {
    pub(crate) fn new() -> Self {
        Self {
            buckets: core::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            _owns: PhantomData,
        }
    }

    /// The calling thread's value.
    #[inline(always)]
    pub(crate) fn mine(&self) -> &T {
        let (bucket, index) = locate(thread_number());
        let mut values = self.buckets[bucket].load(Ordering::Acquire);
        if values.is_null() {
            values = self.grow(bucket);
        }
        // SAFETY: a non-null bucket holds `1 << bucket` initialised values
        // (`grow`), `index` is below that, and buckets are freed only in
        // `drop`, which `&self` rules out.
        unsafe { &*values.add(index) }
    }

    /// Installs bucket `bucket`, or takes the one another thread installed
    /// first.
    #[cold]
    fn grow(&self, bucket: usize) -> *mut T {
        let fresh: Box<[T]> = (0..1usize << bucket).map(|_| T::default()).collect();
        let fresh = Box::into_raw(fresh).cast::<T>();
        match self.buckets[bucket].compare_exchange(
            ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => fresh,
            Err(installed) => {
                // SAFETY: `fresh` came from `Box::into_raw` of a slice of
                // this length just above and was never shared.
                drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(fresh, 1 << bucket)) });
                installed
            }
        }
    }
}

impl<T: Default> Default for PerThread<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> PerThread<T> {
    /// Every value installed so far.
    pub(crate) fn each(&self) -> impl Iterator<Item = &T> {
        self.buckets
            .iter()
            .enumerate()
            .flat_map(|(bucket, values)| {
                let values = values.load(Ordering::Acquire);
                let len = if values.is_null() { 0 } else { 1 << bucket };
                // SAFETY: as in `mine`: an installed bucket holds `len`
                // initialised values until the table drops.
                (0..len).map(move |index| unsafe { &*values.add(index) })
            })
    }

    /// Every value installed so far, the table being the caller's alone.
    pub(crate) fn each_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.buckets
            .iter_mut()
            .enumerate()
            .flat_map(|(bucket, values)| {
                let values = *values.get_mut();
                let values: &mut [T] = if values.is_null() {
                    &mut []
                } else {
                    // SAFETY: an installed bucket of `1 << bucket` values,
                    // reached through `&mut self`, so no other reference
                    // to them exists.
                    unsafe { core::slice::from_raw_parts_mut(values, 1 << bucket) }
                };
                values.iter_mut()
            })
    }
}

impl<T> Drop for PerThread<T> {
    fn drop(&mut self) {
        for (bucket, values) in self.buckets.iter_mut().enumerate() {
            let values = *values.get_mut();
            if !values.is_null() {
                // SAFETY: installed by `grow` from a boxed slice of this
                // length, freed once, here.
                drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(values, 1 << bucket)) });
            }
        }
    }
}

/// The bucket and the index in it of thread number `number`.
#[inline]
fn locate(number: usize) -> (usize, usize) {
    let position = number + 1;
    let bucket = position.ilog2() as usize;
    (bucket, position - (1 << bucket))
}

/// The numbers threads hold, and those given back.
struct Numbers {
    /// The lowest number never handed out.
    next: usize,
    /// Numbers given back by exited threads, smallest first.
    free: BinaryHeap<Reverse<usize>>,
}

static NUMBERS: Mutex<Numbers> = Mutex::new(Numbers {
    next: 0,
    free: BinaryHeap::new(),
});

fn numbers() -> std::sync::MutexGuard<'static, Numbers> {
    // The critical sections below cannot panic midway, so a poisoned lock
    // still holds consistent numbers.
    NUMBERS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A thread's number, given back when the thread exits.
struct ThreadNumber(usize);

impl ThreadNumber {
    fn take() -> Self {
        let mut numbers = numbers();
        let number = match numbers.free.pop() {
            Some(Reverse(number)) => number,
            None => {
                numbers.next += 1;
                numbers.next - 1
            }
        };
        assert!(
            number < (1 << BUCKETS) - 1,
            "more than 2^32 threads alive at once pinned a concurrent tree"
        );
        Self(number)
    }
}

impl Drop for ThreadNumber {
    fn drop(&mut self) {
        // The slot remembered belongs to this number, which the next
        // thread to take it will own.
        LAST_FOUND.set((0, ptr::null()));
        numbers().free.push(Reverse(self.0));
    }
}

std::thread_local! {
    static THREAD_NUMBER: ThreadNumber = ThreadNumber::take();
    /// The table ([`Slots::id`]) in which this thread last found its slot,
    /// and that slot. Constant-initialised and without a destructor, so
    /// reading it is one thread-local load with no state check, and it
    /// stays readable while the thread's other thread-locals are dropped.
    static LAST_FOUND: Cell<(u64, *const Slot)> = const { Cell::new((0, ptr::null())) };
}

/// The calling thread's number.
///
/// A thread that pins a tree from another thread-local's destructor, after
/// its own number was given back, takes a number it keeps for good: a
/// slot's owner must never change while the owner can still pin.
#[inline]
fn thread_number() -> usize {
    THREAD_NUMBER
        .try_with(|number| number.0)
        .unwrap_or_else(|_| {
            let number = ThreadNumber::take();
            let kept = number.0;
            core::mem::forget(number);
            kept
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_map_to_distinct_slots_bucket_by_bucket() {
        let mut seen = std::collections::HashSet::new();
        for number in 0..1000 {
            let (bucket, index) = locate(number);
            assert!(index < 1 << bucket, "{number} -> ({bucket}, {index})");
            assert!(seen.insert((bucket, index)));
        }
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(1), (1, 0));
        assert_eq!(locate(2), (1, 1));
        assert_eq!(locate(3), (2, 0));
    }

    /// Whether `slot` is one of `slots`' own.
    fn holds(slots: &Slots, slot: &Slot) -> bool {
        slots.each().any(|own| ptr::eq(own, slot))
    }

    #[test]
    fn the_remembered_slot_is_the_tables_own_when_tables_alternate() {
        let first = Slots::new();
        let second = Slots::new();
        for _ in 0..3 {
            let a = first.mine();
            let b = second.mine();
            assert!(holds(&first, a) && !holds(&second, a));
            assert!(holds(&second, b) && !holds(&first, b));
            assert!(ptr::eq(first.mine(), a), "one slot per thread and table");
        }
    }

    #[test]
    fn a_table_made_where_a_dropped_one_was_does_not_get_its_slot() {
        // Boxed tables of one size: the allocator tends to give the second
        // the first's address, which is what a cache keyed by address
        // would confuse.
        let first = Box::new(Slots::new());
        first.mine();
        let first_id = first.id;
        drop(first);
        let second = Box::new(Slots::new());
        assert_ne!(second.id, first_id);
        // The first table's slot (freed with it) is still the one
        // remembered; the second table must find its own.
        assert_eq!(LAST_FOUND.get().0, first_id);
        let slot = second.mine();
        assert!(holds(&second, slot));
        assert_eq!(LAST_FOUND.get(), (second.id, slot as *const Slot));
    }

    #[test]
    fn a_thread_remembers_its_own_slot_not_another_threads() {
        let slots = Slots::new();
        let main = slots.mine() as *const Slot as usize;
        let other = std::thread::scope(|scope| {
            scope
                .spawn(|| slots.mine() as *const Slot as usize)
                .join()
                .unwrap()
        });
        assert_ne!(main, other);
        assert_eq!(slots.mine() as *const Slot as usize, main);
    }

    #[test]
    fn a_pin_from_a_late_thread_local_destructor_does_not_take_a_slot_given_away() {
        use std::sync::Arc;
        use std::sync::mpsc::{Receiver, Sender, channel};

        /// Thread A's late destructor: once A's number is given back, it
        /// lets thread B take that number, then pins and reports its slot.
        struct PinsOnExit {
            slots: Arc<Slots>,
            number_free: Sender<()>,
            b_has_it: Receiver<()>,
            report: Sender<(bool, usize)>,
        }
        impl Drop for PinsOnExit {
            fn drop(&mut self) {
                let given_back = THREAD_NUMBER.try_with(|_| ()).is_err();
                self.number_free.send(()).unwrap();
                self.b_has_it.recv().unwrap();
                let late = self.slots.mine() as *const Slot as usize;
                self.report.send((given_back, late)).unwrap();
            }
        }
        std::thread_local! {
            static PINS_ON_EXIT: core::cell::RefCell<Option<PinsOnExit>> =
                const { core::cell::RefCell::new(None) };
        }

        let slots = Arc::new(Slots::new());
        let (number_free, wait_free) = channel();
        let (b_has_it, wait_b) = channel();
        let (report, reports) = channel();
        let (a_slot_tx, a_slot) = channel();
        let exit = PinsOnExit {
            slots: Arc::clone(&slots),
            number_free,
            b_has_it: wait_b,
            report,
        };
        let a = std::thread::spawn(move || {
            // First used before the thread number, so dropped after it
            // (thread-locals drop in reverse order of first use).
            PINS_ON_EXIT.with(|cell| *cell.borrow_mut() = Some(exit));
            let slots =
                PINS_ON_EXIT.with(|cell| Arc::clone(&cell.borrow().as_ref().unwrap().slots));
            a_slot_tx
                .send(slots.mine() as *const Slot as usize)
                .unwrap();
        });
        let a_slot = a_slot.recv().unwrap();
        wait_free.recv().unwrap();
        // Threads B take the smallest free numbers and hold them, until
        // one holds the number A gave back (other tests' threads may give
        // back smaller ones meanwhile).
        let mut holders = Vec::new();
        let b_slot = loop {
            let (got, got_rx) = channel();
            let (release, released) = channel::<()>();
            let slots = Arc::clone(&slots);
            holders.push((
                std::thread::spawn(move || {
                    got.send(slots.mine() as *const Slot as usize).unwrap();
                    let _ = released.recv();
                }),
                release,
            ));
            let slot = got_rx.recv().unwrap();
            if slot == a_slot || holders.len() == 1000 {
                break slot;
            }
        };
        b_has_it.send(()).unwrap();
        let (given_back, late) = reports.recv().unwrap();
        for (holder, release) in holders {
            drop(release);
            holder.join().unwrap();
        }
        a.join().unwrap();
        assert!(given_back, "the destructor ran before the thread number's");
        assert_eq!(b_slot, a_slot, "a thread B took the number A gave back");
        assert_ne!(late, b_slot, "A's late pin shares B's slot");
    }

    #[test]
    fn live_threads_hold_distinct_numbers_and_exited_ones_give_them_back() {
        let barrier = std::sync::Barrier::new(8);
        let held: Vec<usize> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        let number = thread_number();
                        barrier.wait();
                        number
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let distinct: std::collections::HashSet<_> = held.iter().collect();
        assert_eq!(distinct.len(), 8, "{held:?}");

        // One after another, 100 threads reuse the numbers given back; the
        // count of numbers ever handed out grows only by the threads other
        // tests keep alive meanwhile.
        let before = numbers().next;
        for _ in 0..100 {
            std::thread::spawn(thread_number).join().unwrap();
        }
        assert!(
            numbers().next < before + 50,
            "{} -> {}",
            before,
            numbers().next
        );
    }
}
