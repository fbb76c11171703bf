#![deny(clippy::all)]
//! auth-shield: the auth middleware chain fused into one native call, plus security helpers.
//! This file only wires the modules together.

pub mod helpers;
