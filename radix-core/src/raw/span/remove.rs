//! Removing from a tree with ranges: a range on the key's path splits down
//! to the key's own slot first, and the plain removal then takes the key
//! out of a tree that holds it as a single value.

use core::ptr::NonNull;

use crate::config::{Config, RefOf};
use crate::key::{Key, SPAN};

use super::super::{InsertHint, MemError, RawTree, find_slot, follow};

impl<C: Config> RawTree<C> {
    /// Splits every range value on `key`'s path, top-down, until the key
    /// has a slot of its own (if the tree holds it at all), so that the
    /// plain removal finds it as a value, and lowers the root if a split
    /// left it with a single child at chunk 0. Nothing changes for a key
    /// not under a range.
    pub(crate) fn split_ranges_on_path(&mut self, key: C::Key) -> Result<(), MemError<C>> {
        let Some(_) = self.root else { return Ok(()) };
        if key.above(self.root_shift) {
            return Ok(());
        }
        let mut loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
        let mut shift = self.root_shift;
        let mut split = false;
        // SAFETY: `loc` always holds a live node reference on this memory,
        // on the key's path, at `shift`.
        unsafe {
            while shift > 0 {
                let node = follow::<C>(&self.mem, loc.read());
                let Some(child) = find_slot::<RefOf<C>>(node, key.chunk(shift)) else {
                    break;
                };
                let target = follow::<C>(&self.mem, child.read());
                if target.is_lazy() {
                    self.hint = InsertHint::NONE;
                    if let Err(refused) =
                        Self::split_range(&mut self.mem, child, target, shift - SPAN)
                    {
                        self.undo_splits(key, split.then_some(shift));
                        return Err(refused);
                    }
                    split = true;
                }
                loc = child;
                shift -= SPAN;
            }
        }
        if split {
            // A root raised to hold a range in its slot may now hold only
            // the range's node at chunk 0: the tree is lower again.
            self.drop_levels();
        }
        Ok(())
    }
}
