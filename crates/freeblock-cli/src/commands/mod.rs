//! One file per command (or command group). Each parses nothing itself (clap did, in
//! [`crate::Cli`]); it calls the libraries and prints. Shared arguments live in [`args`], below
//! every command file; no command file uses another.

pub mod args;
pub mod bench;
pub mod calibrate;
pub mod characterize;
pub mod check;
pub mod demo;
pub mod disk;
pub mod firmware_queue;
pub mod fs2_check;
pub mod repro;
pub mod run;
pub mod seek_profile;
pub mod serve;
pub mod sweep;
pub mod validate;
pub mod write_cache;
