//! Recording: reusable recordings and the image layouts they rely on, the bound state the
//! recorder caches across pipeline switches, and the barriers and submission order kiln
//! records so that synchronization validation stays silent.

mod automatic;
mod bound_state;
mod callers;
mod devices;
mod draw_list;
mod reusable;
mod scope_split;
mod subresources;
mod sync;
mod tracker;
