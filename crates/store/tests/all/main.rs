//! The store's integration tests, one binary: the conformance suite (`common`) is compiled
//! once and run on both backends (`sqlite`, `postgres`), beside the body store (`bodies`),
//! garbage collection (`gc`) and the operations' reads (`ops`). One binary instead of five
//! saves the test build compiling the suite twice and linking five times.

#[path = "../common/mod.rs"]
mod common;

mod bodies;
mod gc;
mod ops;
mod postgres;
mod sqlite;
