//! Epoch-based reclamation: a node or value cell a writer unlinks is freed
//! only once every reader that could still hold it has left.
//!
//! # The scheme
//!
//! The tree keeps a global epoch, and each thread a [`Slot`] in the tree's
//! table. To pin, a thread copies the epoch into its slot, marked active,
//! and to unpin it clears the slot: two plain stores to a line no other
//! thread writes. A writer that unlinks an object adds it to its slot's
//! open list. Every [`BATCH`] objects it seals the list into a bag tagged
//! with the epoch of the moment, then tries to advance the epoch: it
//! succeeds when every active slot shows the current one. A bag is freed
//! once the epoch has moved twice past its tag, since a reader that could
//! have seen its objects pinned at the tag or before, and each advance
//! waits for all such readers to leave.
//!
//! The store-load ordering both sides need (a reader's announcement
//! before its loads, a writer's unlink before its scan) comes from an
//! asymmetric fence ([`barrier`]): `membarrier` on the writer's side, a
//! compiler fence on the reader's. So a lookup's pin and unpin cost a few
//! instructions, and no barrier sits between one lookup's cache misses and
//! the next's.
//!
//! # Why not a crate
//!
//! Issue 35 asked for `seize` or `crossbeam-epoch`, chosen by measurement,
//! and the tree first shipped with seize. Both put a full barrier on
//! every lookup: seize unpins with an atomic swap, crossbeam-epoch pins
//! with a locked instruction. A full barrier keeps the processor from
//! overlapping one lookup's cache misses with the next's: with seize, a
//! loop of random lookups in a 10 MB tree (RT-2's), one pin per call, ran
//! at 0.63x the rate of the same loop under one long pin; with this
//! scheme, at 0.85x (medians of five alternated two-second runs). RT-1's
//! lookups per call went from 2.48x the plain tree's time to 1.87x
//! (`benches/RESULTS.md`, "Concurrent trees"). Neither crate can serve
//! the shared-memory trees either, whose epoch table must live in the
//! area, beside the tree it protects.
//!
//! # Costs and limits
//!
//! - A writer holds up to three bags per thread ([`BATCH`] objects each)
//!   before they are freed; one `membarrier` per bag, a few microseconds.
//! - A thread that exits leaves its open list (under [`BATCH`] objects) in
//!   its slot, freed when another thread takes its number and fills the
//!   list, or when the tree drops.
//! - A pin that is leaked (`mem::forget` of a [`ReadPin`]) keeps its
//!   thread active forever: nothing retired after it is freed until the
//!   tree drops. Memory, not soundness.
//!
//! Under the model checkers (`--cfg loom`, `--cfg shuttle`), retired
//! objects are kept until the tree drops: the node protocols are what
//! those runs check, and deferring every free is the one reclamation that
//! is sound for any schedule.
//!
//! [`ReadPin`]: super::ReadPin

#[cfg(not(any(loom, shuttle)))]
pub(crate) mod barrier;
pub(crate) mod slots;

use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::sync::atomic::AtomicUsize;
#[cfg(not(any(loom, shuttle)))]
use std::sync::Mutex;

use super::Padded;
use super::sync::{AtomicPtr, Ordering};
pub use slots::{Slot, Slots};

/// Frees a retired object, given the (tagged) word that was retired and
/// the context its tree passed along: the tree's space, which frees it.
pub(crate) trait Reclaim {
    /// Frees `word`.
    ///
    /// # Safety
    ///
    /// `word` was retired through [`Pin::retire`] with this implementation
    /// and `context`, `context` is still valid, and no thread can reach
    /// the object any more.
    unsafe fn reclaim(context: *const (), word: *mut u8);
}

/// Where a domain keeps its global epoch and its threads' announcements:
/// beside the tree in this process ([`LocalTable`]), or in a shared area
/// where threads of every attached process announce (`crate::shm`).
///
/// # Safety
///
/// [`announcement`](Table::announcement) gives each thread a word no
/// other live thread announces in, [`lagging`](Table::lagging) sees every
/// announcement a pinned thread may have made, and [`light`](Table::light)
/// with [`heavy`](Table::heavy) order a reader's announcement before its
/// loads against a writer's unlinks before its scan (`barrier`).
pub unsafe trait Table: Send + Sync {
    /// The global epoch.
    fn epoch(&self) -> &AtomicUsize;

    /// Where the thread whose local slot is `slot` announces.
    fn announcement<'a>(&'a self, slot: &'a Slot) -> &'a AtomicUsize;

    /// Whether some pinned thread has not yet seen `epoch`. Called after
    /// [`heavy`](Table::heavy); `local` is this process's slots.
    fn lagging(&self, local: &Slots, epoch: usize) -> bool;

    /// The reader's half of the fence, after announcing.
    fn light(&self);

    /// The writer's half, before scanning; `false` if it could not be
    /// made, in which case nothing may be freed.
    fn heavy(&self) -> bool;

    /// `slot`'s thread will not pin through this table again (the
    /// table's handle is dropping): give back what it claimed.
    fn release(&self, slot: &Slot) {
        let _ = slot;
    }
}

/// A domain of one process's threads: the epoch beside the tree, and each
/// thread's announcement in its local slot.
pub struct LocalTable {
    /// Read by every pin, written rarely: on lines of its own.
    epoch: Padded<AtomicUsize>,
    /// Whether readers fence the compiler only (`barrier::detect`).
    #[cfg(not(any(loom, shuttle)))]
    compiler_only: bool,
}

impl Default for LocalTable {
    fn default() -> Self {
        Self {
            epoch: Padded::default(),
            #[cfg(not(any(loom, shuttle)))]
            compiler_only: barrier::detect(),
        }
    }
}

// SAFETY: a local slot belongs to one thread at a time (`slots.rs`), the
// scan reads every installed slot, and the barrier is the process's
// (`barrier::light`, `barrier::heavy`).
unsafe impl Table for LocalTable {
    #[inline(always)]
    fn epoch(&self) -> &AtomicUsize {
        &self.epoch
    }

    #[inline(always)]
    fn announcement<'a>(&'a self, slot: &'a Slot) -> &'a AtomicUsize {
        &slot.announced
    }

    fn lagging(&self, local: &Slots, epoch: usize) -> bool {
        local
            .each()
            .any(|slot| lags(slot.announced.load(Ordering::Acquire), epoch))
    }

    #[inline(always)]
    fn light(&self) {
        #[cfg(not(any(loom, shuttle)))]
        barrier::light(self.compiler_only);
    }

    fn heavy(&self) -> bool {
        #[cfg(not(any(loom, shuttle)))]
        return barrier::heavy();
        #[cfg(any(loom, shuttle))]
        true
    }
}

/// Whether an announcement shows a pinned thread that has not seen
/// `epoch`.
#[inline]
pub(crate) fn lags(announced: usize, epoch: usize) -> bool {
    announced & ACTIVE != 0 && announced & !ACTIVE != epoch
}

/// An unlinked object and the function that frees it.
///
/// The context (the tree's space) is not stored: a tree can move, so it
/// passes the context afresh whenever the reclaimer may free, which is
/// only during a retirement and when the tree drops.
struct Retired {
    word: *mut u8,
    reclaim: unsafe fn(*const (), *mut u8),
}

impl Retired {
    /// Frees the object.
    ///
    /// # Safety
    ///
    /// No thread can reach it any more, it is freed once, and `context`
    /// is the one it was retired with.
    unsafe fn free(self, context: *const ()) {
        // SAFETY: the caller's contract is `reclaim`'s, for the function
        // `Pin::retire` paired with this word.
        unsafe { (self.reclaim)(context, self.word) }
    }
}

/// Objects a writer gathers before it seals them into a bag and tries to
/// advance the epoch. Each try costs a `membarrier`, an interrupt of every
/// core running the process, so larger batches cost readers less, at the
/// price of memory held back per writer. Under Miri the batches are
/// small, so that the model tests free memory while readers run, and the
/// race detector checks those frees.
#[cfg(not(any(loom, shuttle)))]
const BATCH: usize = if cfg!(miri) { 32 } else { 1024 };

/// A slot's mark for "pinned"; epochs count in steps of two above it.
pub(crate) const ACTIVE: usize = 1;
#[cfg(not(any(loom, shuttle)))]
const STEP: usize = 2;

/// Sealed objects, and the epoch that was current when they were sealed.
#[cfg(not(any(loom, shuttle)))]
struct Bag {
    epoch: usize,
    objects: Vec<Retired>,
}

/// The tree's reclamation domain: its table (the epoch and where threads
/// announce), this process's slots (each thread's nesting depth and open
/// list), and the bags this process sealed.
pub(crate) struct Reclaimer<T: Table> {
    table: T,
    slots: Slots,
    /// Bags waiting for the epoch to move on, oldest first.
    #[cfg(not(any(loom, shuttle)))]
    sealed: Padded<Mutex<Vec<Bag>>>,
    #[cfg(any(loom, shuttle))]
    retired: std::sync::Mutex<Vec<Retired>>,
}

// SAFETY: the retired pointers are objects of the tree that owns this
// reclaimer, which is `Send + Sync`; they are freed once, by whichever
// thread finds their bag expired (or drops the tree).
unsafe impl<T: Table> Send for Reclaimer<T> {}
// SAFETY: as for `Send`; every field shared between threads is an atomic,
// a mutex, or a slot whose unsynchronised part only its owner touches.
unsafe impl<T: Table> Sync for Reclaimer<T> {}

/// A reader's or writer's protection: pointers loaded through it stay
/// valid until it drops. It belongs to the thread that made it.
pub(crate) struct Pin<'a, T: Table> {
    reclaimer: &'a Reclaimer<T>,
    #[cfg(not(any(loom, shuttle)))]
    slot: &'a Slot,
    /// Where the thread announced: its slot's word, or a shared one.
    #[cfg(not(any(loom, shuttle)))]
    announced: &'a AtomicUsize,
    /// A pin is its thread's: its slot is found by thread number.
    not_send: PhantomData<*mut ()>,
}

impl<T: Table> Reclaimer<T> {
    /// A new domain over `table`.
    pub(crate) fn new(table: T) -> Self {
        Self {
            table,
            slots: Slots::new(),
            #[cfg(not(any(loom, shuttle)))]
            sealed: Padded(Mutex::new(Vec::new())),
            #[cfg(any(loom, shuttle))]
            retired: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Protects the pointers the caller loads until the pin drops.
    #[inline(always)]
    pub(crate) fn pin(&self) -> Pin<'_, T> {
        #[cfg(not(any(loom, shuttle)))]
        {
            let slot = self.slots.mine();
            let depth = slot.depth.load(Ordering::Relaxed);
            slot.depth.store(depth + 1, Ordering::Relaxed);
            let announced = self.table.announcement(slot);
            if depth == 0 {
                self.announce(announced);
            }
            Pin {
                reclaimer: self,
                slot,
                announced,
                not_send: PhantomData,
            }
        }
        #[cfg(any(loom, shuttle))]
        Pin {
            reclaimer: self,
            not_send: PhantomData,
        }
    }

    /// Announces the current epoch in `announced`, the thread's word, and
    /// fences before the caller loads any pointer.
    #[cfg(not(any(loom, shuttle)))]
    #[inline(always)]
    fn announce(&self, announced: &AtomicUsize) {
        let epoch = self.table.epoch().load(Ordering::Relaxed);
        announced.store(epoch | ACTIVE, Ordering::Relaxed);
        self.table.light();
    }

    /// A pin for a lookup that runs no code of the caller while it lives:
    /// `get` copies the value out and `contains_key` reads none, so no
    /// other pin of this tree can be made or dropped on this thread until
    /// this one drops. Pins then nest strictly around it, and it needs no
    /// depth count: if the thread already announced (it holds a pin, as
    /// inside a `ReadPin`), it does nothing; otherwise it announces, and
    /// withdraws on drop. That is about seven instructions fewer than
    /// [`pin`](Self::pin) on every single-call lookup.
    #[inline(always)]
    pub(crate) fn pin_scoped(&self) -> ScopedPin<'_, T> {
        #[cfg(not(any(loom, shuttle)))]
        {
            let slot = self.slots.mine();
            let announced = self.table.announcement(slot);
            // One register for the drop, where a flag beside the address
            // took two and made the lookup's loop spill.
            let withdraw = (announced.load(Ordering::Relaxed) == 0).then(|| {
                self.announce(announced);
                announced
            });
            ScopedPin {
                // Never dropped as a `Pin`: it took no depth to give back.
                pin: ManuallyDrop::new(Pin {
                    reclaimer: self,
                    slot,
                    announced,
                    not_send: PhantomData,
                }),
                withdraw,
            }
        }
        #[cfg(any(loom, shuttle))]
        ScopedPin {
            pin: ManuallyDrop::new(self.pin()),
        }
    }

    /// Seals `slot`'s open list into a bag, tries to advance the epoch, and
    /// frees the bags that have expired.
    #[cfg(not(any(loom, shuttle)))]
    #[cold]
    fn seal(&self, slot: &Slot, context: *const ()) {
        // SAFETY: `slot` is the calling thread's (its pin's), and no other
        // reference to its list is live.
        let objects = core::mem::take(unsafe { slot.open() });
        // Orders the unlinks of these objects before the epoch is read,
        // so the tag is no older than the moment they became unreachable.
        core::sync::atomic::fence(Ordering::SeqCst);
        let epoch = self.table.epoch().load(Ordering::Relaxed);
        let mut sealed = self.sealed.lock().unwrap_or_else(|e| e.into_inner());
        sealed.push(Bag { epoch, objects });
        let now = self.try_advance();
        let expired = sealed
            .iter()
            .position(|bag| now.wrapping_sub(bag.epoch) < 2 * STEP)
            .unwrap_or(sealed.len());
        let expired: Vec<Bag> = sealed.drain(..expired).collect();
        drop(sealed);
        // Each bag was sealed after its objects' unlinks, and the epoch has
        // since advanced twice; each advance saw every pinned thread at the
        // then-current epoch, so every reader that could reach them has left.
        for object in expired.into_iter().flat_map(|bag| bag.objects) {
            // SAFETY: unreachable by any pinned reader (above), freed
            // once, with the context of the tree that retired it.
            unsafe { object.free(context) };
        }
    }

    /// Moves the epoch on by one step if every pinned thread has seen the
    /// current one; returns the epoch after the attempt.
    #[cfg(not(any(loom, shuttle)))]
    fn try_advance(&self) -> usize {
        let epoch = self.table.epoch().load(Ordering::Relaxed);
        if !self.table.heavy() || self.table.lagging(&self.slots, epoch) {
            return epoch;
        }
        let next = epoch.wrapping_add(STEP);
        match self
            .table
            .epoch()
            .compare_exchange(epoch, next, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => next,
            Err(moved) => moved,
        }
    }
}

impl<T: Table> Reclaimer<T> {
    /// Frees what the calling thread retired and no reader can still
    /// reach, now rather than when its list next fills: for a write that a
    /// full space refused, whose retry may then find room. Seals the
    /// thread's open list, and tries a few times to move the epoch on and
    /// free the bags that expire; a reader that stays pinned holds back
    /// what it might see, as always.
    ///
    /// # Safety
    ///
    /// `context` is the one every object here was retired with, and the
    /// calling thread is inside no write of this tree (its open list is
    /// not borrowed).
    #[cfg(all(feature = "shm", target_os = "linux"))]
    pub(crate) unsafe fn collect(&self, context: *const ()) {
        #[cfg(not(any(loom, shuttle)))]
        {
            let slot = self.slots.mine();
            for _ in 0..3 {
                self.seal(slot, context);
            }
        }
        #[cfg(any(loom, shuttle))]
        let _ = context;
    }

    /// Frees what has expired of everything this handle retired, for a
    /// handle that drops while other processes may still read the tree:
    /// it seals every open list, tries a few times to move the epoch on,
    /// and frees the bags that expire. What a long read holds back stays
    /// allocated until the tree itself is destroyed, which returns all
    /// of its memory at once.
    ///
    /// # Safety
    ///
    /// `context` is the one every object here was retired with.
    pub(crate) unsafe fn flush(&mut self, context: *const ()) {
        #[cfg(not(any(loom, shuttle)))]
        {
            let objects: Vec<Retired> = self.slots.drain().collect();
            if !objects.is_empty() {
                core::sync::atomic::fence(Ordering::SeqCst);
                let epoch = self.table.epoch().load(Ordering::Relaxed);
                let sealed = self.sealed.0.get_mut().unwrap_or_else(|e| e.into_inner());
                sealed.push(Bag { epoch, objects });
            }
            for _ in 0..3 {
                if self.sealed.0.get_mut().map_or(true, |s| s.is_empty()) {
                    break;
                }
                let now = self.try_advance();
                let sealed = self.sealed.0.get_mut().unwrap_or_else(|e| e.into_inner());
                let expired = sealed
                    .iter()
                    .position(|bag| now.wrapping_sub(bag.epoch) < 2 * STEP)
                    .unwrap_or(sealed.len());
                for object in sealed.drain(..expired).flat_map(|bag| bag.objects) {
                    // SAFETY: expired as in `seal`: every reader that could
                    // reach it has left; freed once, with its context.
                    unsafe { object.free(context) };
                }
            }
        }
        #[cfg(any(loom, shuttle))]
        let _ = context;
    }

    /// Forgets everything retired and gives back the thread
    /// announcements this handle claimed: its tree is being destroyed,
    /// and all of its memory goes at once.
    #[cfg(all(feature = "shm", target_os = "linux"))]
    pub(crate) fn abandon(&mut self) {
        for slot in self.slots.each() {
            self.table.release(slot);
        }
        #[cfg(not(any(loom, shuttle)))]
        {
            self.slots.drain().for_each(drop);
            self.sealed
                .0
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        }
        #[cfg(any(loom, shuttle))]
        self.retired
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Frees everything retired and not yet freed: the tree is being
    /// dropped, so no thread can pin it and nothing retired is reachable.
    ///
    /// # Safety
    ///
    /// `context` is the one every object here was retired with.
    pub(crate) unsafe fn free_all(&mut self, context: *const ()) {
        #[cfg(not(any(loom, shuttle)))]
        {
            let sealed = self.sealed.0.get_mut().unwrap_or_else(|e| e.into_inner());
            let objects = sealed
                .drain(..)
                .flat_map(|bag| bag.objects)
                .collect::<Vec<_>>();
            for object in objects.into_iter().chain(self.slots.drain()) {
                // SAFETY: retired once, unreachable, and no thread holds
                // a pin (`&mut self`); the caller vouches for `context`.
                unsafe { object.free(context) };
            }
        }
        #[cfg(any(loom, shuttle))]
        for object in self
            .retired
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            // SAFETY: as above.
            unsafe { object.free(context) };
        }
    }
}

impl<T: Table> Drop for Pin<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(not(any(loom, shuttle)))]
        {
            let depth = self.slot.depth.load(Ordering::Relaxed) - 1;
            self.slot.depth.store(depth, Ordering::Relaxed);
            if depth == 0 {
                // Release: this thread's reads of what it loaded happen
                // before a writer that sees it inactive frees anything.
                self.announced.store(0, Ordering::Release);
            }
        }
    }
}

impl<T: Table> Drop for Reclaimer<T> {
    fn drop(&mut self) {
        for slot in self.slots.each() {
            self.table.release(slot);
        }
    }
}

/// [`Reclaimer::pin_scoped`]'s pin: a [`Pin`] to load through, which
/// withdraws the thread's announcement on drop if it made it.
pub(crate) struct ScopedPin<'a, T: Table> {
    pin: ManuallyDrop<Pin<'a, T>>,
    /// The announcement this pin made, the thread holding no other pin
    /// of the tree, to withdraw on drop.
    #[cfg(not(any(loom, shuttle)))]
    withdraw: Option<&'a AtomicUsize>,
}

impl<'a, T: Table> core::ops::Deref for ScopedPin<'a, T> {
    type Target = Pin<'a, T>;

    #[inline(always)]
    fn deref(&self) -> &Pin<'a, T> {
        &self.pin
    }
}

impl<T: Table> Drop for ScopedPin<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(not(any(loom, shuttle)))]
        if let Some(announced) = self.withdraw {
            // Release, as in `Pin::drop`.
            announced.store(0, Ordering::Release);
        }
        // Under the model checkers a pin's drop does nothing, so skipping
        // it loses nothing.
    }
}

impl<T: Table> Pin<'_, T> {
    /// Loads a child pointer from `slot`, protected by this pin.
    #[inline(always)]
    pub(crate) fn load(&self, slot: &AtomicPtr<u8>) -> *mut u8 {
        slot.load(Ordering::Acquire)
    }

    /// Hands `word` over to be freed by `R` once no pinned thread can
    /// still hold it. `context` is the tree's: expired objects, of this
    /// call or earlier ones, are freed with it.
    ///
    /// # Safety
    ///
    /// `word` is unreachable from the tree for every thread that pins
    /// after this call, is retired once, `R` frees what it is, and every
    /// retirement on this reclaimer passes the same valid `context`.
    pub(crate) unsafe fn retire<R: Reclaim>(&self, word: *mut u8, context: *const ()) {
        let object = Retired {
            word,
            reclaim: R::reclaim,
        };
        #[cfg(not(any(loom, shuttle)))]
        {
            // SAFETY: this pin's slot is the calling thread's (pins are
            // not `Send`), and the reference ends within this block.
            let open = unsafe { self.slot.open() };
            open.push(object);
            if open.len() >= BATCH {
                self.reclaimer.seal(self.slot, context);
            }
        }
        #[cfg(any(loom, shuttle))]
        let _ = context; // Freed at the drop, with the tree's context.
        #[cfg(any(loom, shuttle))]
        self.reclaimer
            .retired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(object);
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize as Count;

    /// Frees counted per test (tests run at once): `FREED[T]`.
    static FREED: [Count; 2] = [Count::new(0), Count::new(0)];

    struct Counted<const T: usize>;
    impl<const T: usize> Reclaim for Counted<T> {
        unsafe fn reclaim(_: *const (), word: *mut u8) {
            // SAFETY: made by `Box::into_raw` in `retire_one`, freed once.
            drop(unsafe { Box::from_raw(word.cast::<u64>()) });
            FREED[T].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn retire_one<const T: usize>(reclaimer: &Reclaimer<LocalTable>) {
        let pin = reclaimer.pin();
        let ptr = Box::into_raw(Box::new(7u64)).cast::<u8>();
        // SAFETY: a fresh allocation no one else can reach, retired once.
        unsafe { pin.retire::<Counted<T>>(ptr, core::ptr::null()) };
    }

    /// Drops `reclaimer` as its tree would.
    fn drop_freeing(mut reclaimer: Reclaimer<LocalTable>) {
        // SAFETY: `Counted` needs no context.
        unsafe { reclaimer.free_all(core::ptr::null()) };
    }

    fn freed<const T: usize>() -> usize {
        FREED[T].load(Ordering::Relaxed)
    }

    #[test]
    fn a_pinned_reader_holds_back_what_was_retired_after_it_pinned() {
        let reclaimer = Reclaimer::new(LocalTable::default());
        let before = freed::<0>();
        let reader = std::thread::scope(|scope| {
            let (pinned, wait) = std::sync::mpsc::channel();
            let (release, done) = std::sync::mpsc::channel::<()>();
            let reclaimer = &reclaimer;
            let reader = scope.spawn(move || {
                let _pin = reclaimer.pin();
                pinned.send(()).unwrap();
                done.recv().unwrap();
            });
            wait.recv().unwrap();
            for _ in 0..4 * BATCH {
                retire_one::<0>(reclaimer);
            }
            // The reader pinned before any of these were retired, so the
            // epoch can move at most once past its announcement, and no
            // bag can expire.
            let held = freed::<0>() - before;
            release.send(()).unwrap();
            reader.join().unwrap();
            held
        });
        assert_eq!(reader, 0, "freed under a pinned reader");
        // With the reader gone, the next batches free the old bags.
        for _ in 0..4 * BATCH {
            retire_one::<0>(&reclaimer);
        }
        assert!(freed::<0>() - before >= 4 * BATCH);
        drop_freeing(reclaimer);
        assert_eq!(freed::<0>() - before, 8 * BATCH);
    }

    #[test]
    fn pins_nest_and_the_outer_one_keeps_the_thread_active() {
        let reclaimer = Reclaimer::new(LocalTable::default());
        let outer = reclaimer.pin();
        {
            let _inner = reclaimer.pin();
            assert_eq!(outer.slot.depth.load(Ordering::Relaxed), 2);
        }
        assert_ne!(outer.slot.announced.load(Ordering::Relaxed) & ACTIVE, 0);
        let slot = outer.slot;
        drop(outer);
        assert_eq!(slot.announced.load(Ordering::Relaxed), 0);
        assert_eq!(slot.depth.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_scoped_pin_announces_alone_and_leaves_an_outer_pin_as_it_was() {
        let reclaimer = Reclaimer::new(LocalTable::default());
        let slot = reclaimer.slots.mine();
        {
            let scoped = reclaimer.pin_scoped();
            assert_ne!(scoped.slot.announced.load(Ordering::Relaxed) & ACTIVE, 0);
            assert_eq!(slot.depth.load(Ordering::Relaxed), 0);
        }
        assert_eq!(slot.announced.load(Ordering::Relaxed), 0);

        let outer = reclaimer.pin();
        let announced = slot.announced.load(Ordering::Relaxed);
        {
            let _scoped = reclaimer.pin_scoped();
            assert_eq!(slot.announced.load(Ordering::Relaxed), announced);
        }
        // Still protected by the outer pin, which alone withdraws.
        assert_eq!(slot.announced.load(Ordering::Relaxed), announced);
        assert_eq!(slot.depth.load(Ordering::Relaxed), 1);
        drop(outer);
        assert_eq!(slot.announced.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_thread_that_exits_leaves_its_open_list_for_the_drop() {
        let before = freed::<1>();
        let reclaimer = Reclaimer::new(LocalTable::default());
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for _ in 0..10 {
                    retire_one::<1>(&reclaimer);
                }
            });
        });
        drop_freeing(reclaimer);
        assert_eq!(freed::<1>() - before, 10);
    }
}
