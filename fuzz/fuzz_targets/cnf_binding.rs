//! Sender-constrained tokens through the public entry: a payload signed with the real key,
//! whose `cnf` (or whole payload) is fuzzed, presented with or without a client certificate
//! thumbprint to authenticators that check no binding (the default), check it, or require it.
//! Never a panic; a token that names a certificate (`cnf["x5t#S256"]`) passes only where the
//! binding is checked and only with that thumbprint; a DPoP-bound one (`cnf.jkt`) never passes
//! as Bearer; `verify` (no sender) never passes a bound token.
#![no_main]

use auth_shield::internals::{
    check_certificate, is_thumbprint, sign_payload, Authenticator, CertificateBinding, Claim,
    Claims, Confirmation, HmacKey, RawConfig, SenderContext, Settings, TokenKind,
};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const SECRET: &[u8] = b"fuzz-secret-fuzz-secret-fuzz-secret!";
const NOW: f64 = 1_700_000_000.0;
const THUMB: &str = "Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZs";

#[derive(Arbitrary, Debug)]
enum Presented {
    None,
    Same,
    Bytes(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// The text of `cnf` in `{"sub":"u","exp":…,"cnf":<cnf>}`, or a whole payload.
    cnf: Vec<u8>,
    whole_payload: bool,
    presented: Presented,
    /// 0: off (the default), 1: certificateBoundTokens, else requireCertificateBoundTokens.
    mode: u8,
}

fn authenticators() -> &'static [Authenticator; 3] {
    static AUTH: OnceLock<[Authenticator; 3]> = OnceLock::new();
    AUTH.get_or_init(|| {
        let base = || {
            RawConfig::new()
                .with("accessSecret", SECRET)
                .with("clockTimestamp", NOW)
                .with("rateLimitMax", 0.0)
        };
        let make = |raw| Authenticator::new(Settings::from_config(raw).expect("valid fuzz config"));
        [
            make(base()),
            make(base().with("certificateBoundTokens", true)),
            make(base().with("requireCertificateBoundTokens", true)),
        ]
    })
}

fuzz_target!(|input: Input| {
    let mode = input.mode.min(2);
    let auth = &authenticators()[mode as usize];
    let payload = if input.whole_payload {
        input.cnf.clone()
    } else {
        let mut p = br#"{"sub":"u","exp":1700000600,"cnf":"#.to_vec();
        p.extend_from_slice(&input.cnf);
        p.push(b'}');
        p
    };
    let token = sign_payload(&HmacKey::new(SECRET), &payload);
    let header = format!("Bearer {token}");
    let presented: Option<Vec<u8>> = match &input.presented {
        Presented::None => None,
        Presented::Same => Some(THUMB.as_bytes().to_vec()),
        Presented::Bytes(b) => Some(b.clone()),
    };
    let sender = SenderContext {
        client_cert_thumbprint: presented.as_deref(),
        ..SenderContext::default()
    };
    // What the token says, read apart (a payload the chain accepts parses here too).
    let claims = Claims::parse(&payload);
    let x5t = claims.as_ref().and_then(|c| match &c.cnf {
        Confirmation::Methods { x5t_s256 } if !x5t_s256.is_absent() => Some(x5t_s256.clone()),
        _ => None,
    });
    let jkt_bound = claims.as_ref().is_some_and(|c| !c.cnf_jkt.is_absent());
    let authenticated =
        auth.authenticate_sender(Some(header.as_bytes()), None, None, &sender, |o| {
            o.result.is_ok()
        });
    if authenticated {
        assert!(
            !jkt_bound,
            "a DPoP-bound token passed as Bearer: {payload:?}"
        );
        match &x5t {
            None => assert!(
                mode < 2,
                "an unbound token passed where binding is required"
            ),
            Some(Claim::Str(s)) => {
                assert!(
                    mode >= 1,
                    "a certificate-bound token passed unchecked: {payload:?}"
                );
                assert!(is_thumbprint(s.as_bytes()));
                assert_eq!(presented.as_deref(), Some(s.as_bytes()));
            }
            Some(other) => panic!("a malformed binding passed: {other:?}"),
        }
    }
    // No sender: a bound token never passes.
    let mut scratch = Vec::new();
    if let Some(Ok(_)) = auth.verify(TokenKind::Access, token.as_bytes(), &mut scratch) {
        assert!(
            x5t.is_none() && !jkt_bound,
            "verify passed a bound token: {payload:?}"
        );
    }
    // The binding check alone: off, a bound token never passes, whatever is presented.
    if let Some(c) = &claims {
        if check_certificate(CertificateBinding::Off, &c.cnf, presented.as_deref()).is_ok() {
            assert!(!matches!(x5t, Some(Claim::Str(_))));
        }
    }
});
