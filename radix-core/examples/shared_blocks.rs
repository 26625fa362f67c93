//! A tree shared by two processes: the parent fills it, a child reads it.
//!
//! ```sh
//! cargo run -p radix-core --example shared_blocks
//! ```
//!
//! The parent creates an area and a tree in it, inserts keys under the
//! write lock and starts this same program as a child, passing the two
//! handles in an environment variable. The child attaches, reads under the
//! read lock and prints what it found. When the parent (the area's creator)
//! drops the area, its shared-memory objects are unlinked.

use std::process::Command;

use radix_core::shm::{Area, AreaOptions, ShmError};

radix_core::radix_tree! {
    /// Block numbers to visibility bits, in shared memory.
    pub struct SharedBlocks {
        key: u32,
        value: u64,
        memory: shared,
    }
}

const HANDLES: &str = "SHARED_BLOCKS_HANDLES";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Ok(handles) = std::env::var(HANDLES) {
        return child(&handles).map_err(Into::into);
    }
    let area = Area::create(AreaOptions::default())?;
    let tree = SharedBlocks::create_in(&area)?;
    {
        let mut w = tree.write();
        for block in 0..100_000u32 {
            w.insert(block, u64::from(block) << 1)?;
        }
    }
    let handles = format!("{} {}", area.handle(), tree.handle());
    println!(
        "parent: 100,000 keys in {} bytes of shared memory",
        area.memory_usage()
    );
    let status = Command::new(std::env::current_exe()?)
        .env(HANDLES, &handles)
        .status()?;
    assert!(status.success(), "the child failed");
    tree.destroy()?;
    println!(
        "parent: destroyed, {} bytes left (the control segment)",
        area.memory_usage()
    );
    Ok(())
}

fn child(handles: &str) -> Result<(), ShmError> {
    let (area, tree) = handles.split_once(' ').expect("two handles");
    let area = Area::attach(&area.parse()?)?;
    let tree = SharedBlocks::attach(&area, tree.parse()?)?;
    let r = tree.read();
    let sum: u64 = r.range(1000..2000).map(|(_, &bits)| bits).sum();
    println!(
        "child {}: {} keys, get(7) = {:?}, blocks 1000..2000 sum to {sum}",
        std::process::id(),
        r.len(),
        r.get(7)
    );
    Ok(())
}
