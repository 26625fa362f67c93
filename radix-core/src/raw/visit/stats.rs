//! Tree statistics: nodes per size class, leaves, height, memory.

use alloc::vec::Vec;
use core::fmt;

use crate::config::Config;
use crate::node::{self, Kind, MAX_CLASSES, lazy};
use crate::raw::{LayoutOf, RawTree, SlotOf, entry_at, walk_nodes};
use crate::value::ValueLayout;

/// Node counts for one size class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ClassStats {
    /// The class's capacity.
    pub capacity: usize,
    /// Nodes of this class above the last level.
    pub inner: usize,
    /// Nodes of this class at the last level.
    pub last_level: usize,
}

/// A snapshot of a tree's shape, from [`RawTree::stats`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Number of keys.
    pub keys: usize,
    /// Levels from the root to the values (0 when empty).
    pub height: usize,
    /// Node counts per size class, smallest class first.
    pub classes: Vec<ClassStats>,
    /// Values stored in separate leaf allocations.
    pub leaves: usize,
    /// Lazy leaves: keys stored with their value in place of a subtree of
    /// one key (0 without lazy expansion; see
    /// [`Compression`](crate::Compression)).
    pub lazy_leaves: usize,
    /// Range values: one value in place of a subtree, for every key of
    /// its span (0 without [`Config::RANGES`]).
    pub ranges: usize,
    /// Bytes held from the memory back end.
    pub memory_bytes: usize,
    /// The value layout's name.
    pub layout: &'static str,
}

impl Stats {
    /// Total nodes of every class.
    pub fn nodes(&self) -> usize {
        self.classes.iter().map(|c| c.inner + c.last_level).sum()
    }

    /// Total nodes of one kind.
    pub fn nodes_of_kind(&self, kind: Kind) -> usize {
        self.classes
            .iter()
            .filter(|c| Kind::for_capacity(c.capacity) == kind)
            .map(|c| c.inner + c.last_level)
            .sum()
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} keys, height {}, {} bytes, layout {}, nodes",
            self.keys, self.height, self.memory_bytes, self.layout
        )?;
        for c in &self.classes {
            write!(f, " [{}: {}+{}]", c.capacity, c.inner, c.last_level)?;
        }
        write!(f, ", {} leaves", self.leaves)?;
        if self.lazy_leaves > 0 {
            write!(f, ", {} lazy leaves", self.lazy_leaves)?;
        }
        if self.ranges > 0 {
            write!(f, ", {} ranges", self.ranges)?;
        }
        Ok(())
    }
}

impl<C: Config> RawTree<C> {
    /// Counts nodes per size class and leaves by walking the whole tree.
    pub fn stats(&self) -> Stats {
        let mut classes = [ClassStats::default(); MAX_CLASSES];
        let mut leaves = 0;
        let mut cells = 0;
        if let Some((root, root_shift)) = self.root() {
            // SAFETY: the tree is live and borrowed; the walk only reads.
            unsafe {
                walk_nodes::<C, _>(&mut self.memory(), root, root_shift, |_, visit| {
                    let (node, shift) = (visit.node, visit.shift);
                    if node.is_lazy() {
                        cells += 1;
                        let slot = lazy::slot::<SlotOf<C>>(node.addr());
                        leaves += LayoutOf::<C>::is_leaf(slot) as usize;
                        return;
                    }
                    let class = &mut classes[node::class(node.addr())];
                    if shift == 0 {
                        class.last_level += 1;
                        let mut pos = 0;
                        while let Some(e) = entry_at::<SlotOf<C>>(node, pos) {
                            leaves += LayoutOf::<C>::is_leaf(e.slot) as usize;
                            pos = e.next;
                        }
                    } else {
                        class.inner += 1;
                    }
                });
            }
        }
        let classes = (0..C::SIZE_CLASSES.len())
            .map(|i| ClassStats {
                capacity: C::SIZE_CLASSES.capacity(i),
                ..classes[i]
            })
            .collect();
        Stats {
            keys: self.len(),
            height: self.height(),
            classes,
            leaves,
            lazy_leaves: if C::RANGES { 0 } else { cells },
            ranges: if C::RANGES { cells } else { 0 },
            memory_bytes: self.memory_usage(),
            layout: <LayoutOf<C> as ValueLayout>::NAME,
        }
    }
}
