//! The reflected binding names of a set layout's sets, one list per layout.
//!
//! Pipelines sharing an interned set layout may name its bindings differently (the names are
//! not part of the layout's identity). Each distinct name map is listed once in its layout
//! ([`NameTable`]), at pipeline creation; a set keeps the index of its pipeline's map, a
//! `u32`: allocating a set costs no reference count for its names (the set's `Arc` of the
//! layout keeps the list alive). Index 0 is the empty map (a set made from a layout alone,
//! `Device::descriptor_set`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Binding number by reflected name (instance and block names).
pub(crate) type BindingNames = BTreeMap<String, u32>;

/// The distinct name maps of one set layout's pipelines; entries are never removed while
/// the layout lives.
#[derive(Debug)]
pub(crate) struct NameTable(Mutex<Vec<Arc<BindingNames>>>);

impl Default for NameTable {
    fn default() -> Self {
        NameTable(Mutex::new(vec![Arc::default()]))
    }
}

impl NameTable {
    /// The index of a map equal to `names`, listing it first if there is none (0 for an
    /// empty map). Linear in the distinct maps listed: called once per pipeline and set.
    pub(crate) fn id(&self, names: &BindingNames) -> u32 {
        if names.is_empty() {
            return 0;
        }
        let mut maps = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = maps.iter().position(|m| **m == *names) {
            return i as u32;
        }
        maps.push(Arc::new(names.clone()));
        (maps.len() - 1) as u32
    }

    /// The map of index `id` (an empty one for an index never returned by
    /// [`id`](Self::id)).
    pub(crate) fn get(&self, id: u32) -> Arc<BindingNames> {
        let maps = self.0.lock().unwrap_or_else(|p| p.into_inner());
        maps.get(id as usize).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, u32)]) -> BindingNames {
        pairs.iter().map(|(n, b)| (n.to_string(), *b)).collect()
    }

    #[test]
    fn equal_maps_share_an_index_and_the_empty_map_is_zero() {
        let t = NameTable::default();
        assert_eq!(t.id(&BindingNames::new()), 0);
        let a = map(&[("scene", 0), ("Scene", 0)]);
        let b = map(&[("scene", 1)]);
        assert_eq!(t.id(&a), 1);
        assert_eq!(t.id(&b), 2);
        assert_eq!(t.id(&a.clone()), 1);
        assert_eq!(*t.get(1), a);
        assert_eq!(*t.get(2), b);
        assert!(t.get(0).is_empty());
        // An index never handed out reads as no names (never a panic).
        assert!(t.get(7).is_empty());
    }
}
