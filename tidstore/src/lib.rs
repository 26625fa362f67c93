//! The TID store: dead tuple identifiers on a radix tree.
//!
//! This crate is reserved for the dead-tuple store built on
//! [`radix_core`]'s varlen layout; its implementation is tracked as its own
//! issue and lands separately.
