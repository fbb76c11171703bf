//! Security helpers callable directly from JS (issue 4): passwords, OTP, sanitizers, CSP, API keys.
