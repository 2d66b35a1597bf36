//! Reliability (issue 17): the known holes closed, each with a test that fails without its
//! fix (`holes`), fault injection at every Vulkan call site category that lavapipe cannot
//! make fail by itself (`faults`), the API-sequence fuzzer (`fuzz`) and
//! regression tests for what it found (`fuzz_found`).

mod faults;
mod fuzz;
mod fuzz_found;
mod holes;
