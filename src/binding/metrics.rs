//! `metrics()`: the counters of one authenticator (src/metrics.rs) as the documented snapshot
//! (docs/observability.md), the same shape as the JS engine's (js/metrics.js).

use napi::bindgen_prelude::*;

use crate::authenticator::Authenticator as Core;
use crate::error::AuthError;
use crate::metrics::DURATION_BOUNDS_NANOS;

const NANOS_PER_SEC: f64 = 1e9;

pub fn snapshot(env: &Env, core: &Core) -> Result<Object<'static>> {
    let (counts, (hits, misses)) = core.metrics();
    let count_of = |err: AuthError| counts.failed[err as usize].1 as f64;

    let mut failures = Object::new(env)?;
    let mut failed = 0.0;
    for &(code, n) in &counts.failed {
        failures.set_named_property(code, n as f64)?;
        failed += n as f64;
    }
    let mut authentication = Object::new(env)?;
    authentication.set_named_property("succeeded", counts.succeeded as f64)?;
    authentication.set_named_property("failed", failed)?;
    authentication.set_named_property("failures", failures)?;

    let mut rate_limit = Object::new(env)?;
    rate_limit.set_named_property("allowed", counts.rate_limit_allowed as f64)?;
    rate_limit.set_named_property("limited", count_of(AuthError::RateLimited))?;
    rate_limit.set_named_property("pending", count_of(AuthError::RateLimitPending))?;

    let mut cache = Object::new(env)?;
    cache.set_named_property("hits", hits as f64)?;
    cache.set_named_property("misses", misses as f64)?;
    cache.set_named_property("entries", core.verified_token_cache_len() as f64)?;

    let mut revocations = Object::new(env)?;
    revocations.set_named_property("held", core.revocation_count() as f64)?;
    revocations.set_named_property("refusedAtLimit", counts.revocations_refused as f64)?;
    revocations.set_named_property("unavailable", core.revocation_unavailable())?;

    let bounds: Vec<f64> = DURATION_BOUNDS_NANOS
        .iter()
        .map(|&n| n as f64 / NANOS_PER_SEC)
        .collect();
    let buckets: Vec<f64> = counts.duration_buckets.iter().map(|&n| n as f64).collect();
    let mut duration = Object::new(env)?;
    duration.set_named_property("count", buckets.iter().sum::<f64>())?;
    duration.set_named_property(
        "sumSeconds",
        counts.duration_sum_nanos as f64 / NANOS_PER_SEC,
    )?;
    duration.set_named_property("boundsSeconds", bounds)?;
    duration.set_named_property("buckets", buckets)?;

    let mut out = Object::new(env)?;
    out.set_named_property("authentication", authentication)?;
    out.set_named_property("rateLimit", rate_limit)?;
    out.set_named_property("verifiedTokenCache", cache)?;
    out.set_named_property("revocations", revocations)?;
    out.set_named_property("duration", duration)?;
    Ok(out)
}
