//! The invariant checker.
//!
//! [`RawTree::verify`] walks the whole tree and checks every structural
//! promise the algorithms rely on. Tests, property tests and fuzz targets
//! call it after each batch of operations; it is `O(n)` and allocates only
//! its error message, so it is always compiled in.

use crate::config::RefOf;
use crate::config::{Config, Pools};
use crate::key::Key;
use crate::mem::Memory;
use crate::node::{self, Kind, Node16, Node256, Node4, Node48, MAX_CLASSES};
use crate::ptr::NodePtr;
use crate::tree::{entry_at, walk_nodes, LayoutOf, RawTree, SlotOf};
use crate::value::ValueLayout;

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
    /// the height is the smallest that holds the largest key; `len()` equals
    /// the number of values reached; and the memory back end's live nodes
    /// per pool equal the nodes reached.
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
        let mut values = 0usize;
        let mut per_pool = [0usize; 2 * MAX_CLASSES];
        // SAFETY: the tree is live and borrowed; the walk only reads.
        unsafe {
            walk_nodes::<C::Memory, _>(&mut self.memory(), root, root_shift, |mem, node, shift| {
                if error.is_some() {
                    return;
                }
                match check_node::<C>(mem, node, shift) {
                    Ok(n) => {
                        if shift == 0 {
                            values += n;
                        }
                        per_pool[Pools::<C>::at(node::class(node.addr()), shift)] += 1;
                    }
                    Err(e) => error = Some(format!("{e} (node {node:?} at shift {shift})")),
                }
            });
        }
        if let Some(e) = error {
            return Err(e);
        }
        if values != self.len() {
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
        if max_key.root_shift() != root_shift {
            return Err(format!(
                "root at shift {root_shift}, but the largest key {max_key:?} needs shift {}",
                max_key.root_shift()
            ));
        }
        let mut previous: Option<C::Key> = None;
        for (key, _) in self.iter() {
            if previous.is_some_and(|p| p >= key) {
                return Err(format!("iteration not ascending at {key:?}"));
            }
            previous = Some(key);
        }
        Ok(())
    }
}

/// Checks one node; returns its number of entries.
///
/// # Safety
///
/// `node` is a live node at `shift` of a tree on `mem`.
unsafe fn check_node<C: Config>(
    mem: &C::Memory,
    node: NodePtr,
    shift: u32,
) -> Result<usize, String> {
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
        if let Some((target, threshold)) = C::SIZE_CLASSES.shrink_target(class) {
            if count <= threshold {
                return Err(format!(
                    "count {count} should have shrunk class {class} into class {target}"
                ));
            }
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
        Ok(count)
    }
}
