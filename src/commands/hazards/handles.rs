//! Maps and sets keyed by raw Vulkan handles (the tracker's buffer slots and images, the
//! compiled set uses, a submission's written resources): one multiply per lookup.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Hashes one `u64` handle with one multiply (handles are unique; no DoS concern).
#[derive(Default)]
pub(crate) struct HandleHasher(u64);

impl Hasher for HandleHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub(crate) type Map<V> = HashMap<u64, V, BuildHasherDefault<HandleHasher>>;

/// A set of raw handles.
pub(crate) type HandleSet = HashSet<u64, BuildHasherDefault<HandleHasher>>;
