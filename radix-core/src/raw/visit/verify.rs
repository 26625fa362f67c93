//! The invariant checker.
//!
//! [`RawTree::verify`] walks the whole tree and checks every structural
//! promise the algorithms rely on. Tests, property tests and fuzz targets
//! call it after each batch of operations; it is `O(n)` and allocates only
//! its error message, so it is always compiled in.

use crate::config::RefOf;
use crate::config::{Config, MAX_POOLS, Pools};
use crate::key::{Key, SPAN};
use crate::mem::Memory;
use crate::node::{self, Kind, Node4, Node16, Node48, Node256, lazy};
use crate::raw::{LayoutOf, RawTree, SlotOf, Visit, entry_at, resolve, walk_nodes};
use crate::value::ValueLayout;
use alloc::format;
use alloc::string::String;

impl<C: Config> RawTree<C> {
    /// Checks the tree's invariants, returning a description of the first
    /// violation found.
    ///
    /// Checked: every node's header agrees with its pointer tag; its size
    /// class belongs to its kind; its count is at least one, at most the
    /// class capacity and above the class's shrink threshold; chunks walk in
    /// strictly ascending order and their number equals the count; node48's
    /// map and `isset` bits agree, node256's bitmap agrees with its count
    /// and, in inner nodes and leaves of layouts with
    /// [`NONNULL_SLOT`](ValueLayout::NONNULL_SLOT), with its null slots;
    /// node4 and node16 pad their chunk arrays with the last chunk; every
    /// value slot is encoded as its layout says (varlen: a leaf only for a
    /// value too large to embed);
    /// the height is the smallest that holds the largest key (with path
    /// compression: the root is at the key type's top shift); `len()`
    /// equals the number of values reached; and the memory back end's live
    /// nodes per pool equal the nodes and lazy leaves reached.
    ///
    /// With [compression](crate::Compression) it also checks that every
    /// prefix word and every lazy leaf's key agrees with the path leading
    /// to it, that a prefix word's shift lies at or below the chunk after
    /// its parent's (and the reference to the node flags it exactly when
    /// it lies below), that with path compression no inner node has a single
    /// child, and that with lazy expansion no subtree holds a single key
    /// (no last-level node holds one value, no node holds only a lazy
    /// leaf).
    ///
    /// With [range values](crate::Span) it checks that each range's first
    /// key is the start of the span its slot covers, counts every key of
    /// each span toward `len()`, and checks that the root sits at the
    /// lowest shift that holds both the largest key and every range's
    /// slot.
    pub fn verify(&self) -> Result<(), String> {
        let Some((root, root_shift)) = self.root() else {
            if !self.is_empty() {
                return Err(format!("empty tree with len {}", self.len()));
            }
            for pool in 0..Pools::<C>::COUNT {
                if self.memory().live_nodes(pool) != 0 {
                    return Err(format!("empty tree with live nodes in pool {pool}"));
                }
            }
            return Ok(());
        };
        let mut error: Option<String> = None;
        let mut values = 0u128;
        // The highest shift of a node holding a range value.
        let mut range_slots = 0;
        let mut per_pool = [0usize; MAX_POOLS];
        // SAFETY: the tree is live and borrowed; the walk only reads.
        unsafe {
            walk_nodes::<C, _>(&mut self.memory(), root, root_shift, |mem, visit| {
                let (node, shift) = (visit.node, visit.shift);
                if error.is_some() {
                    return;
                }
                let checked = if C::RANGES && node.is_lazy() {
                    range_slots = range_slots.max(visit.start + SPAN);
                    check_range::<C>(mem, visit).inspect(|_| per_pool[Pools::<C>::cell()] += 1)
                } else if node.is_lazy() {
                    check_lazy::<C>(mem, visit).map(|()| {
                        per_pool[Pools::<C>::cell()] += 1;
                        1
                    })
                } else {
                    check_node::<C>(mem, visit).map(|n| {
                        per_pool[Pools::<C>::at(node::class(node.addr()), shift)] += 1;
                        if shift == 0 { n as u128 } else { 0 }
                    })
                };
                match checked {
                    Ok(n) => values += n,
                    Err(e) => error = Some(format!("{e} ({node:?} at shift {shift})")),
                }
            });
        }
        if let Some(e) = error {
            return Err(e);
        }
        if values != self.len() as u128 {
            return Err(format!(
                "len() is {} but {values} values are reachable",
                self.len()
            ));
        }
        for (pool, &reached) in per_pool.iter().enumerate().take(Pools::<C>::COUNT) {
            let live = self.memory().live_nodes(pool);
            if live != reached {
                return Err(format!(
                    "pool {pool} has {live} live nodes but {reached} are reachable"
                ));
            }
        }
        let (max_key, _) = self
            .last_key_value()
            .ok_or("non-empty root without a last key")?;
        if C::COMPRESSION.path() {
            if root_shift != C::Key::BITS - SPAN {
                return Err(format!(
                    "path-compressed root at shift {root_shift}, not the top"
                ));
            }
        } else if max_key.root_shift().max(range_slots) != root_shift {
            return Err(format!(
                "root at shift {root_shift}, but the largest key {max_key:?} and the ranges \
                 need shift {}",
                max_key.root_shift().max(range_slots)
            ));
        }
        // Spans are keys but for range values, so this is iteration's
        // order, one interval per value.
        let mut previous: Option<C::Key> = None;
        for (keys, _) in self.spans() {
            if previous.is_some_and(|p| p >= *keys.start()) || keys.start() > keys.end() {
                return Err(format!("iteration not ascending at {:?}", keys.start()));
            }
            previous = Some(*keys.end());
        }
        Ok(())
    }
}

/// Whether `key` agrees with the bits a path fixes above `start + 8`.
fn on_path<K: Key>(key: K, visit: Visit<K>) -> bool {
    key.clear_below(visit.start) == visit.path_key
}

/// Checks one lazy leaf.
///
/// # Safety
///
/// `visit.node` is a live lazy leaf of a tree on `mem`.
unsafe fn check_lazy<C: Config>(mem: &C::Memory, visit: Visit<C::Key>) -> Result<(), String> {
    if !C::COMPRESSION.lazy() {
        return Err("a lazy leaf without lazy expansion".into());
    }
    let addr = visit.node.addr();
    // SAFETY: caller's contract.
    let key = unsafe { lazy::key::<C::Key, SlotOf<C>>(addr) };
    if !on_path(key, visit) {
        return Err(format!(
            "lazy leaf key {key:?} is off its path {:?}",
            visit.path_key
        ));
    }
    // SAFETY: as above.
    unsafe { LayoutOf::<C>::check_slot(lazy::slot::<SlotOf<C>>(addr), mem) }
        .map_err(|err| format!("lazy leaf {key:?}: {err}"))
}

/// Checks one range value; returns how many keys it covers.
///
/// # Safety
///
/// `visit.node` is a live range cell of a tree on `mem`.
unsafe fn check_range<C: Config>(mem: &C::Memory, visit: Visit<C::Key>) -> Result<u128, String> {
    let addr = visit.node.addr();
    // SAFETY: caller's contract.
    let first = unsafe { lazy::key::<C::Key, SlotOf<C>>(addr) };
    if first != visit.path_key || first != first.clear_below(visit.start) {
        return Err(format!(
            "range starting at {first:?} is not its slot's span from {:?}",
            visit.path_key
        ));
    }
    // SAFETY: as above.
    unsafe { LayoutOf::<C>::check_slot(lazy::slot::<SlotOf<C>>(addr), mem) }
        .map_err(|err| format!("range from {first:?}: {err}"))?;
    Ok(1u128 << (visit.start + SPAN))
}

/// Checks what compression promises of one node with `count` entries.
///
/// # Safety
///
/// `visit.node` is a live node of a tree on `mem`.
unsafe fn check_compressed<C: Config>(
    mem: &C::Memory,
    visit: Visit<C::Key>,
    count: usize,
) -> Result<(), String> {
    let (node, shift) = (visit.node, visit.shift);
    if C::COMPRESSION.path() {
        // SAFETY: caller's contract; such nodes have prefix words.
        let word = unsafe { node::prefix::prefix_word::<C::Key>(node.addr()) };
        if shift % SPAN != 0 || shift > visit.start {
            return Err(format!(
                "prefix word shift {shift} not a chunk at or below {}",
                visit.start
            ));
        }
        if word != word.prefix_word(shift) || !on_path(word.clear_below(shift), visit) {
            return Err(format!(
                "prefix word {word:?} is off its path {:?}",
                visit.path_key
            ));
        }
        if shift > 0 && count < 2 {
            return Err("an inner node with one child under path compression".into());
        }
        if visit.flagged != (shift != visit.start) {
            return Err(format!(
                "skipped-bytes flag {} for a node at shift {shift} below {}",
                visit.flagged, visit.start
            ));
        }
    }
    if C::COMPRESSION.lazy() && count == 1 {
        if shift == 0 {
            return Err("a last-level node with one value under lazy expansion".into());
        }
        // SAFETY: caller's contract; inner slots are child references.
        let only = unsafe { entry_at::<RefOf<C>>(node, 0) }.expect("one entry");
        // SAFETY: as above.
        if resolve(mem, unsafe { only.slot.read() }).is_lazy() {
            return Err("a node holding only a lazy leaf".into());
        }
    }
    Ok(())
}

/// Checks one node; returns its number of entries.
///
/// # Safety
///
/// `visit.node` is a live node at `visit.shift` of a tree on `mem`.
unsafe fn check_node<C: Config>(mem: &C::Memory, visit: Visit<C::Key>) -> Result<usize, String> {
    let (node, shift) = (visit.node, visit.shift);
    // SAFETY: caller's contract.
    unsafe {
        let addr = node.addr();
        let header = &*node::header(addr).as_ptr();
        let kind = node.kind();
        if header.kind != kind as u8 {
            return Err(format!("header kind {} but tag {kind:?}", header.kind));
        }
        let class = header.class as usize;
        if class >= C::SIZE_CLASSES.len() || C::SIZE_CLASSES.kind(class) != kind {
            return Err(format!("class {class} does not belong to {kind:?}"));
        }
        let count = header.count as usize;
        let capacity = C::SIZE_CLASSES.capacity(class);
        if count == 0 || count > capacity {
            return Err(format!("count {count} outside 1..={capacity}"));
        }
        if let Some((target, threshold)) = C::SIZE_CLASSES.shrink_target(class)
            && count <= threshold
        {
            return Err(format!(
                "count {count} should have shrunk class {class} into class {target}"
            ));
        }
        match kind {
            Kind::N48 => Node48::check(addr)?,
            Kind::N256 => {
                Node256::check(addr)?;
                if shift > 0 {
                    Node256::check_null_slots::<RefOf<C>>(addr)?;
                } else if LayoutOf::<C>::NONNULL_SLOT {
                    Node256::check_null_slots::<SlotOf<C>>(addr)?;
                }
            }
            Kind::N4 => Node4::check(addr)?,
            Kind::N16 => Node16::check(addr)?,
        }
        let mut seen = 0;
        let mut last: Option<u8> = None;
        let mut pos = 0;
        loop {
            let entry = if shift == 0 {
                let entry = entry_at::<SlotOf<C>>(node, pos);
                if let Some(e) = &entry {
                    LayoutOf::<C>::check_slot(e.slot, mem)
                        .map_err(|err| format!("chunk {:#x}: {err}", e.chunk))?;
                }
                entry.map(|e| (e.chunk, e.next))
            } else {
                entry_at::<RefOf<C>>(node, pos).map(|e| (e.chunk, e.next))
            };
            let Some((chunk, next)) = entry else { break };
            if last.is_some_and(|l| l >= chunk) {
                return Err(format!("chunks not strictly ascending at {chunk:#x}"));
            }
            last = Some(chunk);
            seen += 1;
            pos = next;
        }
        if seen != count {
            return Err(format!("count {count} but {seen} entries"));
        }
        if !C::COMPRESSION.is_none() {
            check_compressed::<C>(mem, visit, count)?;
        }
        Ok(count)
    }
}
