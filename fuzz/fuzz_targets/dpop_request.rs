//! DPoP requests through the public entry (`authenticate_sender`), so the target holds whatever
//! order the checks run in: the scheme, the access token (signed with the real key, its claims
//! fuzzed, `cnf.jkt` or not), and a proof built from fuzzed parts (header members, claims,
//! signature) or raw bytes, with fuzzed method and URL. Never a panic; a proof's signature is
//! never valid here, so no DPoP request is admitted and nothing enters the replay cache (state
//! is written after the decision); a Bearer request with a DPoP-bound token never passes.
#![no_main]

use auth_shield::internals::base64url::encode;
use auth_shield::internals::{
    sign_payload, Authenticator, Claims, HmacKey, RawConfig, SenderContext, Settings,
};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const SECRET: &[u8] = b"fuzz-secret-fuzz-secret-fuzz-secret!";
const NOW: u32 = 1_700_000_000;
/// RFC 7515 A.3's P-256 public key as a JWK.
const EC_JWK: &str = r#"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#;
const JKT: &str = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";

#[derive(Arbitrary, Debug)]
enum Proof {
    Absent,
    Raw(Vec<u8>),
    Built {
        typ: Option<String>,
        alg: Option<String>,
        /// The EC key above, or fuzzed JWK text.
        jwk: Option<String>,
        htm: Option<String>,
        /// The request's URL, or fuzzed text.
        htu: Option<String>,
        iat_offset: i32,
        jti: Option<String>,
        ath: Option<String>,
        nonce: Option<String>,
        extra: Vec<(String, String)>,
        signature: Vec<u8>,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// Claims of the access token after `"sub":"u","exp":…`; `jkt` adds a `cnf.jkt`.
    claims: String,
    jkt: bool,
    dpop_scheme: bool,
    proof: Proof,
    method: Option<String>,
    url: Option<String>,
    /// 0: dpop on; 1: dpop on with nonces; else dpop on, ES256 proofs only.
    mode: u8,
}

fn authenticators() -> &'static [Authenticator; 3] {
    static AUTH: OnceLock<[Authenticator; 3]> = OnceLock::new();
    AUTH.get_or_init(|| {
        let base = || {
            RawConfig::new()
                .with("accessSecret", SECRET)
                .with("clockTimestamp", f64::from(NOW))
                .with("rateLimitMax", 0.0)
                .with("dpop", true)
        };
        let make = |raw| Authenticator::new(Settings::from_config(raw).expect("valid fuzz config"));
        [
            make(base()),
            make(base().with(
                "dpopNonceSecret",
                &b"fuzz-nonce-secret-0123456789abcdef"[..],
            )),
            make(base().with("dpopAlgorithms", vec!["ES256"])),
        ]
    })
}

fn json_string(s: &str) -> String {
    // Fuzzed text as a JSON string (escaped by hand: no serde in the hot loop).
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn build_proof(proof: &Proof, url: &str) -> Option<Vec<u8>> {
    match proof {
        Proof::Absent => None,
        Proof::Raw(bytes) => Some(bytes.clone()),
        Proof::Built {
            typ,
            alg,
            jwk,
            htm,
            htu,
            iat_offset,
            jti,
            ath,
            nonce,
            extra,
            signature,
        } => {
            let mut header = vec![
                format!(
                    "\"typ\":{}",
                    json_string(typ.as_deref().unwrap_or("dpop+jwt"))
                ),
                format!("\"alg\":{}", json_string(alg.as_deref().unwrap_or("ES256"))),
            ];
            header.push(format!("\"jwk\":{}", jwk.as_deref().unwrap_or(EC_JWK)));
            let mut claims = vec![
                format!("\"htm\":{}", json_string(htm.as_deref().unwrap_or("GET"))),
                format!("\"htu\":{}", json_string(htu.as_deref().unwrap_or(url))),
                format!("\"iat\":{}", i64::from(NOW) + i64::from(*iat_offset % 600)),
            ];
            if let Some(jti) = jti {
                claims.push(format!("\"jti\":{}", json_string(jti)));
            }
            if let Some(ath) = ath {
                claims.push(format!("\"ath\":{}", json_string(ath)));
            }
            if let Some(nonce) = nonce {
                claims.push(format!("\"nonce\":{}", json_string(nonce)));
            }
            for (k, v) in extra.iter().take(4) {
                claims.push(format!("{}:{v}", json_string(k)));
            }
            let h = encode(format!("{{{}}}", header.join(",")).as_bytes());
            let p = encode(format!("{{{}}}", claims.join(",")).as_bytes());
            Some(format!("{h}.{p}.{}", encode(signature)).into_bytes())
        }
    }
}

fuzz_target!(|input: Input| {
    let auth = &authenticators()[usize::from(input.mode.min(2))];
    let mut payload = format!(r#"{{"sub":"u","exp":{}"#, NOW + 600);
    if input.jkt {
        payload.push_str(&format!(r#","cnf":{{"jkt":"{JKT}"}}"#));
    }
    if !input.claims.is_empty() {
        payload.push(',');
        payload.push_str(&input.claims);
    }
    payload.push('}');
    let token = sign_payload(&HmacKey::new(SECRET), payload.as_bytes());
    let scheme = if input.dpop_scheme { "DPoP" } else { "Bearer" };
    let header = format!("{scheme} {token}");
    let url = input
        .url
        .clone()
        .unwrap_or_else(|| "https://api.example/r".into());
    let proof = build_proof(&input.proof, &url);
    let sender = SenderContext {
        dpop: proof.as_deref(),
        method: Some(input.method.as_deref().unwrap_or("GET").as_bytes()),
        url: Some(url.as_bytes()),
        ..SenderContext::default()
    };
    let passed = auth.authenticate_sender(Some(header.as_bytes()), None, None, &sender, |o| {
        o.result.is_ok()
    });
    if passed {
        // No proof here carries a valid signature: only Bearer with an unbound token passes.
        assert!(
            !input.dpop_scheme,
            "a DPoP request passed: {header} {proof:?}"
        );
        let bound = Claims::parse(payload.as_bytes()).is_some_and(|c| !c.cnf_jkt.is_absent());
        assert!(!bound, "a DPoP-bound token passed as Bearer: {payload}");
    }
    assert_eq!(
        auth.dpop_replay_len(),
        0,
        "a refused proof took a replay-cache entry"
    );
});
