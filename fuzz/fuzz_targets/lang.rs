#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| lockward_fuzz::lang(data));
