//! `CspBuilder` directive setters: one method per common directive, each replacing that
//! directive's sources and returning the builder for chaining.

use napi::bindgen_prelude::{This, Unknown};
use napi::Env;
use napi_derive::napi;

use super::args;
use super::csp_api::CspBuilder;
use super::errors::to_js;

#[napi]
impl CspBuilder {
    /// Sets `default-src` (default `'self'`).
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn default_src<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "default-src", &sources)
    }

    /// Sets `script-src` (unset by default: falls back to default-src).
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn script_src<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "script-src", &sources)
    }

    /// Sets `style-src`.
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn style_src<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "style-src", &sources)
    }

    /// Sets `img-src`.
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn img_src<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "img-src", &sources)
    }

    /// Sets `connect-src`.
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn connect_src<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "connect-src", &sources)
    }

    /// Sets `font-src`.
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn font_src<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "font-src", &sources)
    }

    /// Sets `object-src` (default `'none'`).
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn object_src<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "object-src", &sources)
    }

    /// Sets `media-src`.
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn media_src<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "media-src", &sources)
    }

    /// Sets `frame-src`.
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn frame_src<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "frame-src", &sources)
    }

    /// Sets `worker-src`.
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn worker_src<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "worker-src", &sources)
    }

    /// Sets `base-uri` (default `'self'`).
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn base_uri<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "base-uri", &sources)
    }

    /// Sets `form-action`.
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn form_action<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "form-action", &sources)
    }

    /// Sets `frame-ancestors` (default `'none'`).
    #[napi(
        catch_unwind,
        ts_args_type = "sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn frame_ancestors<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        self.apply(&env, this, "frame-ancestors", &sources)
    }

    /// Sets any other directive by name (lowercase letters and '-').
    #[napi(
        catch_unwind,
        ts_args_type = "name: string, sources: string | string[]",
        ts_return_type = "this"
    )]
    pub fn directive<'a>(
        &mut self,
        env: Env,
        this: This<'a>,
        name: Unknown<'_>,
        sources: Unknown<'_>,
    ) -> napi::Result<This<'a>> {
        let name = to_js(&env, args::string(&name, "name", 64))?;
        self.apply(&env, this, &name, &sources)
    }
}
