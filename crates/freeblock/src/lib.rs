//! freeblock core (in progress).
pub mod request;
pub mod workload;

pub use request::Request;
