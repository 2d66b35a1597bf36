//! One content-keyed interner for every deduplicated object: samplers (this layer),
//! descriptor set layouts (`descriptors`), pipeline layouts and the sets' access lists of
//! pipelines (`pipeline`).
//!
//! An [`Interner`] maps the *full* description of an object (never a hash alone) to a
//! [`Weak`] reference to the live object. Equal descriptions give the same object for as
//! long as anyone holds it; when the last holder drops it, it is destroyed and the next
//! request creates a fresh one.
//!
//! - [`get_or_create`](Interner::get_or_create) looks the key up under the map's lock. On a
//!   miss it *releases* the lock, builds the object (a Vulkan call that may take long, or
//!   that interns other objects: a set layout's immutable samplers), then locks again and
//!   resolves the race: if another thread inserted a live value for the key meanwhile, that
//!   one is returned and ours is dropped — after the lock is released, so its `Drop` (which
//!   calls [`forget`](Interner::forget)) cannot deadlock. No lock is ever held while another
//!   is taken.
//! - The value's `Drop` calls [`forget`](Interner::forget), which removes the entry only if
//!   it still points at that value: a newer value inserted for the key after the old one's
//!   last holder went away (but before its `Drop` ran) stays.
//!
//! Several threads missing at once each build one value; one wins, the others' values are
//! dropped (so at most `threads - 1` extra objects are created and destroyed, never kept).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::error::Result;

/// A map from full descriptions `K` to live values `V` (see the module docs).
pub(crate) struct Interner<K, V> {
    map: Mutex<HashMap<K, Weak<V>>>,
}

impl<K, V> Default for Interner<K, V> {
    fn default() -> Self {
        Interner {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash + Clone, V> Interner<K, V> {
    fn lock(&self) -> MutexGuard<'_, HashMap<K, Weak<V>>> {
        // A panic while holding the lock cannot leave the map inconsistent: every critical
        // section below is a single lookup, insert or remove.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The live value for `key`, or a new one from `create` (called without any lock held).
    /// Errors: whatever `create` returns (nothing is inserted then).
    pub(crate) fn get_or_create<E>(
        &self,
        key: &K,
        create: impl FnOnce() -> Result<Arc<V>, E>,
    ) -> Result<Arc<V>, E> {
        if let Some(v) = self.lock().get(key).and_then(Weak::upgrade) {
            return Ok(v);
        }
        let ours = create()?;
        let winner = {
            let mut map = self.lock();
            match map.get(key).and_then(Weak::upgrade) {
                // Another thread inserted a live value while we were building ours.
                Some(theirs) => Err(theirs),
                None => {
                    // Absent, or a value whose last holder dropped it but whose `Drop` has not
                    // run yet (its `forget` will see that the entry is ours and keep it).
                    map.insert(key.clone(), Arc::downgrade(&ours));
                    Ok(())
                }
            }
        };
        match winner {
            Ok(()) => Ok(ours),
            Err(theirs) => {
                // The lock is released: `ours` may drop (and `forget` itself) now.
                drop(ours);
                Ok(theirs)
            }
        }
    }

    /// Removes `key`'s entry if it points at `value`. Call from `V`'s `Drop`.
    pub(crate) fn forget(&self, key: &K, value: *const V) {
        let mut map = self.lock();
        if map
            .get(key)
            .is_some_and(|w| std::ptr::eq(w.as_ptr(), value))
        {
            map.remove(key);
        }
    }

    /// Number of live values.
    pub(crate) fn live(&self) -> usize {
        self.lock()
            .values()
            .filter(|w| w.strong_count() > 0)
            .count()
    }

    /// Forgets every entry (device teardown: no value is alive by then, each holds the
    /// device).
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Barrier;

    /// A stand-in for a Vulkan object: counts its creations and drops, and forgets itself
    /// in its interner on drop, as kiln's interned objects do.
    struct Dummy {
        key: u32,
        serial: usize,
        pool: Arc<Pool>,
    }

    #[derive(Default)]
    struct Pool {
        interner: Interner<u32, Dummy>,
        created: AtomicUsize,
        dropped: AtomicUsize,
    }

    impl Drop for Dummy {
        fn drop(&mut self) {
            self.pool.dropped.fetch_add(1, Ordering::SeqCst);
            self.pool.interner.forget(&self.key, self);
        }
    }

    fn make(pool: &Arc<Pool>, key: u32) -> Result<Arc<Dummy>> {
        let serial = pool.created.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(Dummy {
            key,
            serial,
            pool: pool.clone(),
        }))
    }

    fn get(pool: &Arc<Pool>, key: u32) -> Arc<Dummy> {
        pool.interner
            .get_or_create(&key, || make(pool, key))
            .unwrap()
    }

    #[test]
    fn equal_keys_share_one_value() {
        let pool = Arc::new(Pool::default());
        let a = get(&pool, 7);
        let b = get(&pool, 7);
        let c = get(&pool, 8);
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(pool.created.load(Ordering::SeqCst), 2);
        assert_eq!(pool.interner.live(), 2);
    }

    #[test]
    fn a_failed_create_inserts_nothing() {
        let pool = Arc::new(Pool::default());
        let e = pool
            .interner
            .get_or_create(&1, || Err(crate::error::Error::NoDevice))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E101");
        assert_eq!(pool.interner.live(), 0);
        assert_eq!(get(&pool, 1).serial, 0);
    }

    #[test]
    fn drop_then_recreate_gives_a_fresh_value() {
        let pool = Arc::new(Pool::default());
        let first = get(&pool, 3);
        assert_eq!(first.serial, 0);
        drop(first);
        assert_eq!(pool.dropped.load(Ordering::SeqCst), 1);
        assert_eq!(pool.interner.live(), 0);
        let second = get(&pool, 3);
        assert_eq!(second.serial, 1, "a new value, not the dropped one");
        assert_eq!(get(&pool, 3).serial, 1);
    }

    /// `forget` for a value that is no longer the key's entry (its `Drop` ran after a newer
    /// value took the key) leaves the newer entry in place.
    #[test]
    fn forgetting_a_replaced_value_keeps_the_newer_entry() {
        let pool = Arc::new(Pool::default());
        let old = get(&pool, 5);
        let old_ptr: *const Dummy = &*old;
        // The weak reference keeps the old allocation (and so its address) reserved, as
        // the implicit weak reference does while a real value's `Drop` runs.
        let weak = Arc::downgrade(&old);
        drop(old);
        let new = get(&pool, 5);
        pool.interner.forget(&5, old_ptr);
        assert!(Arc::ptr_eq(&new, &get(&pool, 5)));
        assert_eq!(pool.interner.live(), 1);
        assert!(weak.upgrade().is_none());
    }

    #[test]
    fn concurrent_get_or_create_returns_one_value() {
        const THREADS: usize = 8;
        for round in 0..20u32 {
            let pool = Arc::new(Pool::default());
            let barrier = Barrier::new(THREADS);
            let got: Vec<Arc<Dummy>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..THREADS)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            pool.interner
                                .get_or_create(&round, || {
                                    // Widen the window between the miss and the insert.
                                    std::thread::yield_now();
                                    make(&pool, round)
                                })
                                .unwrap()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert!(got.iter().all(|v| Arc::ptr_eq(v, &got[0])));
            let created = pool.created.load(Ordering::SeqCst);
            assert!((1..=THREADS).contains(&created), "{created} created");
            // Every value that lost the race was dropped, none is kept.
            assert_eq!(pool.dropped.load(Ordering::SeqCst), created - 1);
            assert_eq!(pool.interner.live(), 1);
            drop(got);
            assert_eq!(pool.dropped.load(Ordering::SeqCst), created);
            assert_eq!(pool.interner.live(), 0);
        }
    }
}
