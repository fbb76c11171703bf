//! Which profile the loaded binary was built with, so benchmarks can refuse to quote a debug build.

use napi_derive::napi;

/// `"release"` for an optimized build, `"debug"` otherwise.
#[napi(catch_unwind)]
pub fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}
