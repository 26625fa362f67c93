//! The walk itself: cursors over the tree, and a double-ended walk between
//! two of them. The iterators of the sibling modules only turn what a walk
//! yields, a key and its value slot, into the item they promise.
//!
//! A [`Path`] walks the tree with an explicit stack of `(node, position)`
//! frames, one per level, so iteration never recurses and costs `O(levels)`
//! space. A forward cursor starts by *seeking* its lower bound: it descends
//! along the bound's chunks for as long as the tree has them, leaving each
//! frame at the first entry not below the bound. A backward cursor does the
//! mirror image from its upper bound. Both directions are lazy: the back
//! cursor is built on the first `next_back`.
//!
//! Front and back never cross: a [`Walk`] keeps the interval of keys not
//! yet produced, and each side stops when its next key falls outside it.
//!
//! In a tree with range values ([`Config::RANGES`]), a path that meets
//! one keeps it as a *run*: the keys of its span not produced yet, all
//! with the range's value slot. Each step then produces the run's next
//! key ([`Path::next`]), or the rest of the run at once
//! ([`Path::next_run`], for [`spans`](crate::RawTree::spans)); seeks start
//! a run at their bound. Trees without ranges never test for one.
//!
//! A walk holds node pointers, not a borrow of the tree: the iterator that
//! owns it holds the borrow (or, for owned iteration, the tree itself), and
//! every step is `unsafe` on the promise that the tree is live and
//! unchanged.

use core::mem::MaybeUninit;
use core::ops::{Bound, RangeBounds};
use core::ptr::NonNull;

use crate::config::Config;
use crate::config::RefOf;
use crate::key::{Key, SPAN};
use crate::node::{END, Entry, lazy};
use crate::ptr::NodePtr;
use crate::raw::{
    MAX_LEVELS, RawTree, SlotOf, entry_at, entry_before, follow, node_key, node_shift, seek,
    unflagged,
};

#[derive(Clone, Copy)]
struct Frame {
    node: NodePtr,
    /// Forwards: the next position to visit. Backwards: the position the
    /// next entry must lie before.
    pos: u16,
    /// The shift of the chunk the node consumes.
    shift: u32,
}

/// A position in the ascending (or descending) walk of a tree.
pub(crate) struct Path<C: Config> {
    stack: [MaybeUninit<Frame>; MAX_LEVELS],
    /// Frames in use; 0 when the walk is over.
    depth: usize,
    root_shift: u32,
    /// The key being assembled along the current path: every bit above the
    /// top frame's chunk.
    key: C::Key,
    /// A tree that is one lazy leaf: its leaf, until produced.
    lazy_root: Option<NodePtr>,
    /// A tree with ranges: the range value being walked, if any.
    run: Option<Run<C>>,
}

/// What [`Path::next_run`] produces: the first and last key of an
/// interval of keys (one key, or a range value's), and its value slot.
pub(crate) type RunItem<C> = (<C as Config>::Key, <C as Config>::Key, NonNull<SlotOf<C>>);

/// The keys of a range value a walk has not produced yet, `low..=high`,
/// and the range's value slot.
struct Run<C: Config> {
    low: C::Key,
    high: C::Key,
    slot: NonNull<SlotOf<C>>,
}

impl<C: Config> Clone for Run<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: Config> Copy for Run<C> {}

impl<C: Config> Run<C> {
    /// The whole span of range cell `cell`, the entry for `chunk` in a
    /// node at `shift` whose path key is `key`.
    ///
    /// # Safety
    ///
    /// `cell` is a live range cell.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn of(key: C::Key, shift: u32, chunk: u8, cell: NodePtr) -> Self {
        let low = key.with_chunk(shift, chunk).clear_below(shift - SPAN);
        Self {
            low,
            high: low.fill_below(shift - SPAN),
            // SAFETY: the caller's contract.
            slot: unsafe { lazy::slot::<SlotOf<C>>(cell.addr()) },
        }
    }
}

impl<C: Config> Clone for Path<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: Config> Copy for Path<C> {}

/// The key and value slot of lazy leaf `leaf`.
///
/// # Safety
///
/// `leaf` is a live lazy leaf of a tree of configuration `C`.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn lazy_entry<C: Config>(leaf: NodePtr) -> (C::Key, NonNull<SlotOf<C>>) {
    // SAFETY: the caller's contract.
    unsafe {
        (
            lazy::key::<C::Key, SlotOf<C>>(leaf.addr()),
            lazy::slot::<SlotOf<C>>(leaf.addr()),
        )
    }
}

impl<C: Config> Path<C> {
    /// A cursor over the whole tree whose root and root shift are `root`,
    /// its root frame starting at `start`.
    ///
    /// # Safety
    ///
    /// `root` is a live tree's.
    unsafe fn at_root(root: Option<(NodePtr, u32)>, start: u16) -> Self {
        let mut cursor = Self {
            stack: [MaybeUninit::uninit(); MAX_LEVELS],
            depth: 0,
            root_shift: 0,
            key: C::Key::MIN,
            lazy_root: None,
            run: None,
        };
        if let Some((root, root_shift)) = root {
            let root = unflagged::<C>(root);
            cursor.root_shift = root_shift;
            if root.is_lazy() {
                cursor.lazy_root = Some(root);
            } else {
                // SAFETY: the caller's contract.
                unsafe {
                    let shift = node_shift::<C>(root, root_shift);
                    cursor.key = node_key::<C>(root, C::Key::MIN);
                    cursor.push(root, start, shift);
                }
            }
        }
        cursor
    }

    /// A forward cursor before the first key `>= lower`.
    ///
    /// # Safety
    ///
    /// `root` is a live tree's on `mem`.
    pub(crate) unsafe fn front(
        root: Option<(NodePtr, u32)>,
        mem: &C::Memory,
        lower: Option<C::Key>,
    ) -> Self {
        // SAFETY: the caller's contract.
        let mut cursor = unsafe { Self::at_root(root, 0) };
        let Some(lower) = lower else { return cursor };
        if let Some(leaf) = cursor.lazy_root {
            // SAFETY: the caller's contract.
            if unsafe { lazy_entry::<C>(leaf) }.0 < lower {
                cursor.lazy_root = None;
            }
        } else if cursor.depth > 0 {
            if !C::COMPRESSION.path() && lower.above(cursor.root_shift) {
                cursor.depth = 0; // every key is below `lower`
            } else {
                // SAFETY: the caller's contract.
                unsafe { cursor.seek_front(mem, lower) };
            }
        }
        cursor
    }

    /// A backward cursor after the last key `<= upper`.
    ///
    /// # Safety
    ///
    /// `root` is a live tree's on `mem`.
    unsafe fn back(root: Option<(NodePtr, u32)>, mem: &C::Memory, upper: Option<C::Key>) -> Self {
        // SAFETY: the caller's contract.
        let mut cursor = unsafe { Self::at_root(root, END) };
        let Some(upper) = upper else { return cursor };
        if let Some(leaf) = cursor.lazy_root {
            // SAFETY: the caller's contract.
            if unsafe { lazy_entry::<C>(leaf) }.0 > upper {
                cursor.lazy_root = None;
            }
        } else if cursor.depth > 0 {
            // An upper bound above the tree's reach bounds nothing.
            if C::COMPRESSION.path() || upper.root_shift() <= cursor.root_shift {
                // SAFETY: the caller's contract.
                unsafe { cursor.seek_back(mem, upper) };
            }
        }
        cursor
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn push(&mut self, node: NodePtr, pos: u16, shift: u32) {
        self.stack[self.depth].write(Frame { node, pos, shift });
        self.depth += 1;
    }

    /// Descends from the top frame, at `shift`, into `child`, its entry for
    /// `chunk`, starting the child's walk at `pos`.
    ///
    /// # Safety
    ///
    /// `child` is a live node of the tree.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn descend(&mut self, shift: u32, chunk: u8, child: NodePtr, pos: u16) {
        // SAFETY: the caller's contract.
        unsafe {
            let child_shift = node_shift::<C>(child, shift - SPAN);
            self.key = node_key::<C>(child, self.key.with_chunk(shift, chunk));
            self.push(child, pos, child_shift);
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn top(&mut self) -> &mut Frame {
        // SAFETY: frames below `depth` are initialised.
        unsafe { self.stack[self.depth - 1].assume_init_mut() }
    }

    /// How a path-compressed node's prefix compares with `bound`'s: the
    /// bound's bits above the node's chunk against the node's (in
    /// `self.key`). Always equal without path compression.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn prefix_order(&self, bound: C::Key, shift: u32) -> core::cmp::Ordering {
        if C::COMPRESSION.path() {
            bound.clear_below(shift).cmp(&self.key)
        } else {
            core::cmp::Ordering::Equal
        }
    }

    /// Positions every frame on the path of `lower`, forwards.
    ///
    /// # Safety
    ///
    /// The tree is live on `mem`.
    unsafe fn seek_front(&mut self, mem: &C::Memory, lower: C::Key) {
        use core::cmp::Ordering;
        loop {
            let Frame { node, shift, .. } = *self.top();
            match self.prefix_order(lower, shift) {
                // The node's keys are all above `lower`: walk it all.
                Ordering::Less => return,
                // ... or all below: skip it.
                Ordering::Greater => {
                    self.top().pos = END;
                    return;
                }
                Ordering::Equal => {}
            }
            let chunk = lower.chunk(shift);
            // SAFETY: the frame's node is live; inner slots are child pointers.
            unsafe {
                let pos = seek(node, chunk);
                self.top().pos = pos;
                if shift == 0 {
                    return;
                }
                match entry_at::<RefOf<C>>(node, pos) {
                    Some(e) if e.chunk == chunk => {
                        let child = follow::<C>(mem, e.slot.read());
                        if C::COMPRESSION.lazy() && child.is_lazy() {
                            // Produce the leaf only if it is not below `lower`.
                            if lazy_entry::<C>(child).0 < lower {
                                self.top().pos = e.next;
                            }
                            return;
                        }
                        self.top().pos = e.next;
                        if C::RANGES && child.is_lazy() {
                            // A range holding `lower`: its keys from there.
                            let run = Run::of(self.key, shift, chunk, child);
                            self.run = Some(Run { low: lower, ..run });
                            return;
                        }
                        self.descend(shift, chunk, child, 0);
                    }
                    // A larger chunk (walked from its start) or none (popped).
                    _ => return,
                }
            }
        }
    }

    /// Positions every frame on the path of `upper`, backwards.
    ///
    /// # Safety
    ///
    /// The tree is live on `mem`.
    unsafe fn seek_back(&mut self, mem: &C::Memory, upper: C::Key) {
        use core::cmp::Ordering;
        loop {
            let Frame { node, shift, .. } = *self.top();
            match self.prefix_order(upper, shift) {
                // The node's keys are all below `upper`: walk it all.
                Ordering::Greater => return,
                // ... or all above: skip it.
                Ordering::Less => {
                    self.top().pos = 0;
                    return;
                }
                Ordering::Equal => {}
            }
            let chunk = upper.chunk(shift);
            // SAFETY: the frame's node is live; inner slots are child pointers.
            unsafe {
                // Entries before `pos` are below `chunk`: all of them qualify.
                let pos = seek(node, chunk);
                self.top().pos = pos;
                if shift == 0 {
                    // The last level holds `upper` itself: include it.
                    if let Some(e) = entry_at::<SlotOf<C>>(node, pos).filter(|e| e.chunk == chunk) {
                        self.top().pos = e.next;
                    }
                    return;
                }
                match entry_at::<RefOf<C>>(node, pos) {
                    Some(e) if e.chunk == chunk => {
                        let child = follow::<C>(mem, e.slot.read());
                        if C::COMPRESSION.lazy() && child.is_lazy() {
                            if lazy_entry::<C>(child).0 <= upper {
                                self.top().pos = e.next;
                            }
                            return;
                        }
                        if C::RANGES && child.is_lazy() {
                            // A range holding `upper`: its keys up to
                            // there; the parent resumes before it.
                            let run = Run::of(self.key, shift, chunk, child);
                            self.run = Some(Run { high: upper, ..run });
                            return;
                        }
                        // The parent resumes before the child it descends into.
                        self.descend(shift, chunk, child, END);
                    }
                    _ => return,
                }
            }
        }
    }

    /// Moves a forward path to just before the first key `>= key`,
    /// keeping the frames whose nodes cover `key` and seeking from the
    /// lowest of them: a seek near the path's position costs a node or two,
    /// not a descent from the root.
    ///
    /// # Safety
    ///
    /// As for [`Path::front`], for the tree the path was made on.
    pub(crate) unsafe fn reseek(
        &mut self,
        root: Option<(NodePtr, u32)>,
        mem: &C::Memory,
        key: C::Key,
    ) {
        // The seek below finds the range holding `key` again, if any.
        self.run = None;
        while self.depth > 0 {
            let shift = self.top().shift;
            // Bits above a frame's chunk are its node's, on every level.
            if key.clear_below(shift) == self.key.clear_below(shift) {
                self.key = self.key.clear_below(shift);
                // SAFETY: the caller's contract; the frames kept are live.
                unsafe { self.seek_front(mem, key) };
                return;
            }
            self.depth -= 1;
        }
        // SAFETY: the caller's contract.
        *self = unsafe { Self::front(root, mem, Some(key)) };
    }

    /// The path's next entry in its direction (backwards where `BACK`):
    /// a last-level value, or a lazy child above the last level (a lazy
    /// leaf, or in a tree with ranges a range cell), which the caller
    /// takes as it needs. Inner nodes on the way are descended into; `None`
    /// once every frame is done. The one step that `next`, `next_back`
    /// and their ranged forms share.
    ///
    /// # Safety
    ///
    /// As for [`Path::next`].
    #[inline(always)]
    unsafe fn step<const BACK: bool>(&mut self, mem: &C::Memory) -> Option<Step<C>> {
        while self.depth > 0 {
            let frame = *self.top();
            // SAFETY: the frame's node is live; its slots are values at the
            // last level and child references (or range cells) above it.
            unsafe {
                if frame.shift == 0 {
                    if let Some(e) = entry_toward::<BACK, SlotOf<C>>(frame.node, frame.pos) {
                        self.top().pos = e.next;
                        return Some(Step::Value(self.key.with_chunk(0, e.chunk), e.slot));
                    }
                } else if let Some(e) = entry_toward::<BACK, RefOf<C>>(frame.node, frame.pos) {
                    self.top().pos = e.next;
                    let child = follow::<C>(mem, e.slot.read());
                    // Trees with neither lazy leaves nor ranges never test.
                    if (C::RANGES || C::COMPRESSION.lazy()) && child.is_lazy() {
                        return Some(Step::Lazy(LazyChild {
                            shift: frame.shift,
                            chunk: e.chunk,
                            child,
                        }));
                    }
                    self.descend(frame.shift, e.chunk, child, if BACK { END } else { 0 });
                    continue;
                }
            }
            self.depth -= 1;
        }
        None
    }

    /// The next key and its slot, in the direction `BACK`, in a tree
    /// without ranges: a lazy child is a lazy leaf, and the lazy root
    /// comes last.
    ///
    /// # Safety
    ///
    /// As for [`Path::next`].
    #[inline(always)]
    unsafe fn next_key<const BACK: bool>(
        &mut self,
        mem: &C::Memory,
    ) -> Option<(C::Key, NonNull<SlotOf<C>>)> {
        // SAFETY: the caller's contract; a lazy child and a lazy root are
        // live while the tree is.
        unsafe {
            match self.step::<BACK>(mem) {
                Some(Step::Value(key, slot)) => Some((key, slot)),
                Some(Step::Lazy(lazy)) => Some(lazy_entry::<C>(lazy.child)),
                None => self.lazy_root.take().map(|leaf| lazy_entry::<C>(leaf)),
            }
        }
    }

    /// The next key and its slot, forwards.
    ///
    /// # Safety
    ///
    /// The tree is live on `mem` and unchanged since the cursor was made.
    #[inline]
    pub(crate) unsafe fn next(&mut self, mem: &C::Memory) -> Option<(C::Key, NonNull<SlotOf<C>>)> {
        if C::RANGES {
            // SAFETY: the caller's contract.
            return unsafe { self.next_run::<false>(mem) }.map(|(key, _, slot)| (key, slot));
        }
        // SAFETY: the caller's contract.
        unsafe { self.next_key::<false>(mem) }
    }

    /// The next key and its slot, backwards.
    ///
    /// # Safety
    ///
    /// As for [`Path::next`].
    #[inline]
    unsafe fn next_back(&mut self, mem: &C::Memory) -> Option<(C::Key, NonNull<SlotOf<C>>)> {
        if C::RANGES {
            // SAFETY: the caller's contract.
            return unsafe { self.next_back_ranged(mem) };
        }
        // SAFETY: the caller's contract.
        unsafe { self.next_key::<true>(mem) }
    }

    /// The next keys forwards in a tree with ranges, as `(low, high,
    /// slot)`: one key (`low == high`), or, where `WHOLE`, the rest of a
    /// range value's span at once. (Trees without ranges give one key at a
    /// time.)
    ///
    /// # Safety
    ///
    /// As for [`Path::next`].
    #[inline(always)]
    pub(crate) unsafe fn next_run<const WHOLE: bool>(
        &mut self,
        mem: &C::Memory,
    ) -> Option<RunItem<C>> {
        if !C::RANGES {
            // SAFETY: the caller's contract.
            return unsafe { self.next(mem) }.map(|(key, slot)| (key, key, slot));
        }
        loop {
            if let Some(run) = self.run.as_mut() {
                let low = run.low;
                if WHOLE || low == run.high {
                    let Run { high, slot, .. } = self.run.take().expect("a run");
                    return Some((low, if WHOLE { high } else { low }, slot));
                }
                run.low = low.checked_next().expect("a key below the run's last");
                return Some((low, low, run.slot));
            }
            // SAFETY: the caller's contract; a lazy child of a tree with
            // ranges is a range cell of the live tree.
            unsafe {
                match self.step::<false>(mem)? {
                    Step::Value(key, slot) => return Some((key, key, slot)),
                    Step::Lazy(lazy) => self.start_run(lazy),
                }
            }
        }
    }

    /// Makes a range cell the path met its run: the next steps give its
    /// keys.
    ///
    /// # Safety
    ///
    /// `cell.child` is a live range cell.
    #[inline(always)]
    unsafe fn start_run(&mut self, cell: LazyChild) {
        // SAFETY: the caller's contract.
        self.run = Some(unsafe { Run::of(self.key, cell.shift, cell.chunk, cell.child) });
    }

    /// [`Path::next_back`] in a tree with ranges.
    ///
    /// # Safety
    ///
    /// As for [`Path::next`].
    unsafe fn next_back_ranged(&mut self, mem: &C::Memory) -> Option<(C::Key, NonNull<SlotOf<C>>)> {
        loop {
            if let Some(run) = self.run.as_mut() {
                let high = run.high;
                let slot = run.slot;
                if high == run.low {
                    self.run = None;
                } else {
                    run.high = high.checked_prev().expect("a key above the run's first");
                }
                return Some((high, slot));
            }
            // SAFETY: as in `next_run`.
            unsafe {
                match self.step::<true>(mem)? {
                    Step::Value(key, slot) => return Some((key, slot)),
                    Step::Lazy(lazy) => self.start_run(lazy),
                }
            }
        }
    }
}

/// What [`Path::step`] found.
enum Step<C: Config> {
    /// A last-level value at its key.
    Value(C::Key, NonNull<SlotOf<C>>),
    /// A lazy child.
    Lazy(LazyChild),
}

/// A lazy child (a lazy leaf, or a range cell) and where the walk met it.
struct LazyChild {
    /// The shift of the node whose slot holds it.
    shift: u32,
    /// The chunk of that slot.
    chunk: u8,
    child: NodePtr,
}

/// The entry at or after `pos` (forwards), or before it (where `BACK`).
///
/// # Safety
///
/// As for [`entry_at`] and [`entry_before`].
#[inline(always)]
unsafe fn entry_toward<const BACK: bool, S>(node: NodePtr, pos: u16) -> Option<Entry<S>> {
    // SAFETY: the caller's contract.
    unsafe {
        if BACK {
            entry_before::<S>(node, pos)
        } else {
            entry_at::<S>(node, pos)
        }
    }
}

/// The keys a double-ended walk has not produced yet, as an inclusive
/// interval; `None` once the two ends have met.
type Remaining<K> = Option<(K, K)>;

/// The keys of `range` as an inclusive interval, `None` if it holds none.
pub(crate) fn inclusive<K: Key, R: RangeBounds<K>>(range: R) -> Remaining<K> {
    let low = match range.start_bound() {
        Bound::Included(&k) => Some(k),
        Bound::Excluded(&k) => k.checked_next(),
        Bound::Unbounded => Some(K::MIN),
    };
    let high = match range.end_bound() {
        Bound::Included(&k) => Some(k),
        Bound::Excluded(&k) => k.checked_prev(),
        Bound::Unbounded => Some(K::MAX),
    };
    match (low, high) {
        (Some(low), Some(high)) if low <= high => Some((low, high)),
        _ => None,
    }
}

/// A double-ended walk over the keys of a tree in an interval: two lazy
/// cursors and the interval between them. It yields each key with its
/// value slot.
pub(crate) struct Walk<C: Config> {
    root: Option<(NodePtr, u32)>,
    front: Option<Path<C>>,
    back: Option<Path<C>>,
    remaining: Remaining<C::Key>,
}

impl<C: Config> Clone for Walk<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: Config> Copy for Walk<C> {}

impl<C: Config> Walk<C> {
    /// A walk over every key of `tree`.
    pub(crate) fn all(tree: &RawTree<C>) -> Self {
        Self::new(tree, Some((C::Key::MIN, C::Key::MAX)))
    }

    /// A walk over the keys of `tree` in `range`. A range whose start lies
    /// after its end is empty.
    pub(crate) fn range<R: RangeBounds<C::Key>>(tree: &RawTree<C>, range: R) -> Self {
        Self::new(tree, inclusive(range))
    }

    fn new(tree: &RawTree<C>, remaining: Remaining<C::Key>) -> Self {
        Self {
            root: tree.root(),
            front: None,
            back: None,
            remaining: if tree.is_empty() { None } else { remaining },
        }
    }

    /// The next key forwards and its value slot.
    ///
    /// # Safety
    ///
    /// The tree the walk was made from is live on `mem`, and has not
    /// changed since (values may have, and may have been moved out of the
    /// slots already produced).
    #[inline]
    pub(crate) unsafe fn next(&mut self, mem: &C::Memory) -> Option<(C::Key, NonNull<SlotOf<C>>)> {
        let (low, high) = self.remaining?;
        let root = self.root;
        let cursor = self.front.get_or_insert_with(|| {
            // SAFETY: the caller's contract.
            unsafe { Path::front(root, mem, (low != C::Key::MIN).then_some(low)) }
        });
        // SAFETY: the caller's contract.
        match unsafe { cursor.next(mem) } {
            Some((key, slot)) if key <= high => {
                self.remaining = key.checked_next().filter(|&k| k <= high).map(|k| (k, high));
                Some((key, slot))
            }
            _ => {
                self.remaining = None;
                None
            }
        }
    }

    /// The next key backwards and its value slot.
    ///
    /// # Safety
    ///
    /// As for [`Walk::next`].
    #[inline]
    pub(crate) unsafe fn next_back(
        &mut self,
        mem: &C::Memory,
    ) -> Option<(C::Key, NonNull<SlotOf<C>>)> {
        let (low, high) = self.remaining?;
        let root = self.root;
        let cursor = self.back.get_or_insert_with(|| {
            // SAFETY: the caller's contract.
            unsafe { Path::back(root, mem, (high != C::Key::MAX).then_some(high)) }
        });
        // SAFETY: the caller's contract.
        match unsafe { cursor.next_back(mem) } {
            Some((key, slot)) if key >= low => {
                self.remaining = key.checked_prev().filter(|&k| k >= low).map(|k| (low, k));
                Some((key, slot))
            }
            _ => {
                self.remaining = None;
                None
            }
        }
    }
}
