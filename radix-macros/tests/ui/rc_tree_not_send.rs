// A tree owns its values, so it is `Send` only when they are: a tree of
// `Rc`s must not move to another thread.
use std::rc::Rc;

radix_core::radix_tree! {
    pub struct RcMap {
        key: u32,
        value: Rc<u32>,
        layout: leaf,
    }
}

fn require_send<T: Send>(_: T) {}

fn main() {
    let mut m = RcMap::new();
    m.insert(1, Rc::new(1));
    require_send(m);
}
