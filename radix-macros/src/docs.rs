//! The documentation the macro writes: the configuration section appended
//! to the declared type's docs, and the rendering of types inside it.
//!
//! Generated docs are plain prose with no code blocks: a doctest in them
//! would run in the *user's* crate, where it could not know the type's name
//! or path.

use quote::ToTokens;
use syn::Type;

use crate::validate::{Compression, Concurrency, Layout, Memory, Spec};

/// A type as a user would write it: `Vec<u8>`, not `Vec < u8 >`.
pub fn type_string(ty: &Type) -> String {
    let mut s = ty.to_token_stream().to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" < ", "<"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        (" ,", ","),
        (" ;", ";"),
        ("& ", "&"),
        ("* ", "*"),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
    ] {
        s = s.replace(from, to);
    }
    s
}

/// Lines of the declared type's generated docs, after the user's own.
pub fn type_docs(spec: &Spec) -> Vec<String> {
    let key = spec.key.to_string();
    let value = type_string(&spec.value);
    let mut lines = Vec::new();
    if spec.docs.is_empty() {
        lines.push(format!(
            "An ordered map from `{key}` keys to `{value}` values, stored as an adaptive radix tree."
        ));
    }
    lines.extend([
        String::new(),
        "# Configuration".into(),
        String::new(),
        match (spec.concurrency, spec.memory) {
            (Concurrency::Rowex, Memory::Shared) => {
                "Declared with `radix_tree!`: a `radix_core::concurrent::ConcurrentTree` in a \
                 `radix_core::shm::SharedSpace` (see `radix_core::shm::SharedConcurrentTree`: \
                 `create_in`, `attach`, `get`, `insert`, `remove`, `iter`, ...) over a \
                 configuration fixed at compile time. Threads of every process that attaches \
                 share it: readers take no lock, writers lock only the nodes they change, and \
                 writes return `Result<_, ShmError>`."
            }
            (Concurrency::Rowex, Memory::Local) => {
                "Declared with `radix_tree!`: a `radix_core::concurrent::ConcurrentTree` \
                 (whose documentation lists the methods: `get`, `get_with`, `insert`, \
                 `update_or_insert`, `remove`, `iter`, `range`, ...) over a configuration \
                 fixed at compile time. Every method takes `&self`: threads share the tree, \
                 readers take no lock, and writers lock only the nodes they change."
            }
            (Concurrency::None, Memory::Local) => {
                "Declared with `radix_tree!`: a `radix_core::RawTree` (whose \
                 documentation lists the methods: `get`, `insert`, `remove`, `entry`, `iter`, \
                 `range`, `retain`, `split_off`, `append`, ...) over a configuration fixed at \
                 compile time, so the tree has no run-time configuration branches."
            }
            (Concurrency::None, Memory::Shared) => {
                "Declared with `radix_tree!`: a `radix_core::shm::SharedTree` \
                 (whose documentation lists the methods: `create_in`, `attach`, `read`, \
                 `write`, ...) over a configuration fixed at compile time, so the tree has no \
                 run-time configuration branches."
            }
        }
        .into(),
        String::new(),
        format!("- key: `{key}`"),
        format!("- value: `{value}`"),
        format!("- layout: {}", layout_doc(spec.layout)),
        match spec.memory {
            Memory::Local => {
                "- memory: local (nodes from a slab allocator per size class in process memory)"
                    .into()
            }
            Memory::Shared => "- memory: shared (nodes in a shared-memory area that several \
                 processes attach to; read and written under a process-shared lock through \
                 `read` and `write`)"
                .into(),
        },
        format!("- size classes: {}", size_classes_doc(spec)),
        format!(
            "- compression: {}{}",
            compression_doc(spec.compression),
            if spec.compression_defaulted {
                " (the default)"
            } else {
                ""
            }
        ),
        if spec.delete {
            "- delete: enabled (`remove` is available)".into()
        } else {
            "- delete: disabled (no `remove` method; keys leave only through `clear`)".into()
        },
    ]);
    if spec.ranges {
        lines.extend([
            "- ranges: enabled (`insert_span` stores one value for an aligned block of keys; \
             `get_span` and `spans` show them; a full node of one value merges into a range)"
                .into(),
        ]);
    }
    if spec.concurrency == Concurrency::Rowex {
        lines.extend([
            "- concurrency: rowex (lock-free reads, per-node write locks, epoch-based \
             reclamation)"
                .into(),
            String::new(),
            "Lookups take keys by value and return values by copy (`get`) or lend them to a \
             closure (`get_with`); iteration is in ascending key order, one last-level node at \
             a time. The type is `Send` and `Sync`."
                .into(),
        ]);
    } else {
        lines.extend([
            String::new(),
            "Lookups take keys by value and return values by reference; iteration is in \
             ascending key order. The type is `Send` and `Sync` when its values are."
                .into(),
        ]);
    }
    if spec.memory == Memory::Shared {
        lines.push(String::new());
        lines.push(
            "Insert and remove return `Result`: the area may be full, in which case the \
             tree is left unchanged."
                .into(),
        );
    }
    lines
}

/// Lines of a `radix_set!` type's generated docs, after the user's own.
pub fn set_docs(spec: &Spec) -> Vec<String> {
    let key = spec.key.to_string();
    let mut lines = Vec::new();
    if spec.docs.is_empty() {
        lines.push(format!(
            "An ordered set of `{key}` keys, stored as an adaptive radix tree."
        ));
    }
    lines.extend([
        String::new(),
        "# Configuration".into(),
        String::new(),
        "Declared with `radix_set!`: a `radix_core::TreeSet` (whose documentation lists \
         the methods: `insert`, `contains`, `remove`, `iter`, `range`, `union`, \
         `intersection`, `difference`, `symmetric_difference`, `is_subset`, ...) over a \
         configuration fixed at compile time."
            .into(),
        String::new(),
        format!("- key: `{key}`"),
        format!("- size classes: {}", size_classes_doc(spec)),
        format!(
            "- compression: {}{}",
            compression_doc(spec.compression),
            if spec.compression_defaulted {
                " (the default)"
            } else {
                ""
            }
        ),
        if spec.delete {
            "- delete: enabled (`remove`, `pop_first`, `retain`, ... are available)".into()
        } else {
            "- delete: disabled (keys leave only through `clear`)".into()
        },
    ]);
    lines
}

fn layout_doc(layout: Layout) -> &'static str {
    match layout {
        Layout::Auto => {
            "auto (values that fit a pointer-sized word are embedded in their slot, \
             others get one leaf allocation each)"
        }
        Layout::Embedded => {
            "embedded (each value is stored in its slot word; no allocation per value)"
        }
        Layout::Leaf => "leaf (each value in its own allocation, the slot pointing to it)",
        Layout::Inline => {
            "inline (values stored in place in last-level leaf nodes; no allocation per value)"
        }
        Layout::Varlen => {
            "varlen (variable-length values: embedded in the slot when small enough at run \
             time, otherwise copied into a leaf of their size)"
        }
    }
}

fn compression_doc(compression: Compression) -> String {
    let what = match compression {
        Compression::None => {
            "no lazy expansion or path compression: one node per key byte, best for dense keys"
        }
        Compression::Lazy => "lazy expansion (a subtree holding one key is a lazy leaf)",
        Compression::Path => {
            "path compression (an inner node with one child is merged into that child)"
        }
        Compression::Full => "lazy expansion and path compression",
    };
    format!("{} ({what})", compression.name())
}

fn size_classes_doc(spec: &Spec) -> String {
    match &spec.size_classes {
        None => "4, 16, 32, 64, 256 (the default)".into(),
        Some(classes) => classes
            .caps
            .iter()
            .map(|(cap, _)| cap.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Invocation;
    use crate::validate::{Compression, validate};

    fn docs(fields: &str) -> Vec<String> {
        let invocation: Invocation =
            syn::parse_str(&format!("pub struct Map {{ {fields} }}")).expect("parses");
        type_docs(&validate(invocation).unwrap_or_else(|e| panic!("{e}")))
    }

    fn compression_line(fields: &str) -> String {
        let lines = docs(fields);
        let mut found = lines.iter().filter(|l| l.starts_with("- compression: "));
        let line = found.next().expect("a compression line").clone();
        assert!(found.next().is_none(), "one compression line: {lines:?}");
        line
    }

    #[test]
    fn docs_name_the_compression() {
        assert_eq!(
            compression_line("key: u128, value: u64, compression: full"),
            "- compression: full (lazy expansion and path compression)"
        );
        for name in ["none", "lazy", "path"] {
            let line = compression_line(&format!("key: u64, value: u64, compression: {name}"));
            assert!(
                line.starts_with(&format!("- compression: {name} (")),
                "{line}"
            );
            assert!(!line.ends_with("(the default)"), "{line}");
        }
    }

    #[test]
    fn docs_name_the_default_compression() {
        assert_eq!(
            compression_line("key: u64, value: u64"),
            format!(
                "- compression: {} (the default)",
                compression_doc(Compression::None)
            )
        );
    }
}
