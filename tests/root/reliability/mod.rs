//! Reliability (issue 17): the known holes closed, each with a test that fails without its
//! fix (`holes`), and fault injection at every Vulkan call site category that lavapipe
//! cannot make fail by itself (`faults`).

mod faults;
mod holes;
