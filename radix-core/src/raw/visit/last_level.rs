//! The last-level nodes of a tree, one by one: where its values live, how
//! many each holds and what each costs. A structure that trades exact
//! values for a summary of a node's keys (a TID bitmap turning a chunk of
//! pages lossy) chooses its victims from these.

use crate::config::{Config, Pools};
use crate::key::Key;
use crate::node;
use crate::raw::{RawTree, SlotOf, descend_to_last_level, entry_at, walk_nodes};

/// One last-level node of a tree, as [`RawTree::visit_last_level`] shows
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastLevelNode<K> {
    /// The first key the node can hold: its keys are `first..=first + 255`
    /// (those of them it holds).
    pub first: K,
    /// How many keys it holds.
    pub keys: usize,
    /// The bytes of the node itself, as its size class's pool hands it out
    /// (without what values own outside the tree).
    pub bytes: usize,
}

impl<C: Config> RawTree<C> {
    /// Shows `visit` every last-level node, in no particular order:
    /// uncompressed trees only (a node's first key is its path's).
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u32, u64> = (0..600).map(|k| (k, 0)).collect();
    /// let mut nodes = Vec::new();
    /// m.visit_last_level(|node| nodes.push((node.first, node.keys)));
    /// nodes.sort();
    /// assert_eq!(nodes, [(0, 256), (256, 256), (512, 88)]);
    /// ```
    pub fn visit_last_level(&self, mut visit: impl FnMut(LastLevelNode<C::Key>)) {
        const {
            assert!(
                C::COMPRESSION.is_none(),
                "`visit_last_level` on a compressed tree, whose nodes may skip key bytes"
            )
        };
        let Some((root, root_shift)) = self.root() else {
            return;
        };
        let (specs, _) = Pools::<C>::specs();
        // SAFETY: the tree is live and borrowed; the walk only reads.
        unsafe {
            walk_nodes::<C, _>(&mut self.memory(), root, root_shift, |_, v| {
                if v.shift == 0 && !v.node.is_lazy() {
                    let class = node::class(v.node.addr());
                    visit(LastLevelNode {
                        first: v.path_key.clear_below(0),
                        keys: node::count(v.node.addr()),
                        bytes: specs[Pools::<C>::leaf(class)].size,
                    });
                }
            });
        }
    }

    /// Which keys the last-level node of `first..=first + 255` holds, as
    /// a 256-bit set (bit `k % 64` of word `k / 64` for key `first + k`),
    /// or `None` where there is no such node: the path ends above it, or
    /// meets a range value. Uncompressed trees only, as for
    /// [`visit_last_level`](Self::visit_last_level), which finds the nodes
    /// this asks about: a structure that turns a node's keys into a
    /// summary of them reads them here, one node, without a walk of its
    /// keys' values.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u32, u64> = [3, 64, 300].into_iter().map(|k| (k, 0)).collect();
    /// assert_eq!(m.last_level_keys(0), Some([1 << 3, 1, 0, 0]));
    /// assert_eq!(m.last_level_keys(256), Some([1 << 44, 0, 0, 0]));
    /// assert_eq!(m.last_level_keys(512), None);
    /// ```
    pub fn last_level_keys(&self, first: C::Key) -> Option<[u64; 4]> {
        const {
            assert!(
                C::COMPRESSION.is_none(),
                "`last_level_keys` on a compressed tree, whose nodes may skip key bytes"
            )
        };
        let (root, root_shift) = self.root()?;
        if first.above(root_shift) {
            return None;
        }
        let mut held = [0u64; 4];
        // SAFETY: the tree is live and borrowed, and uncompressed: the
        // root's chunks above its shift are zero, as `first`'s are (checked
        // above), and the descent and the walk of one node only read.
        unsafe {
            let node = descend_to_last_level::<C>(self.memory(), root, root_shift, first)?;
            if node.is_lazy() {
                return None;
            }
            let mut pos = 0;
            while let Some(entry) = entry_at::<SlotOf<C>>(node, pos) {
                held[usize::from(entry.chunk / 64)] |= 1 << (entry.chunk % 64);
                pos = entry.next;
            }
        }
        Some(held)
    }
}
