//! The last-level nodes of a tree, one by one: where its values live, how
//! many each holds and what each costs. A structure that trades exact
//! values for a summary of a node's keys (a TID bitmap turning a chunk of
//! pages lossy) chooses its victims from these.

use crate::config::{Config, Pools};
use crate::key::Key;
use crate::node;
use crate::raw::{RawTree, walk_nodes};

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
}
