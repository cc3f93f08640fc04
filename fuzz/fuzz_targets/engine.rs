#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| freeblock_fuzz::engine(data));
