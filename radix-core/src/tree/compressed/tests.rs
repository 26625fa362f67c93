//! Unit tests of lazy expansion and path compression: every split and
//! merge, sized to run under Miri.
