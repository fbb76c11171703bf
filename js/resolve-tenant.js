'use strict'

// resolveTenant(tenantHeader, host, options): the tenant of a request without a token (login,
// register), header arguments in authenticate's order, by the fused call's rules (js/tenant.js; native: src/binding/tenant.rs over
// src/tenant.rs). A bad id is a result with errorCode 'invalid_tenant', never a throw.

const { TenantRules } = require('./tenant')
const { normalizeDomain } = require('./config')
const { readHeaderArg } = require('./authenticator')
const { Failure, TABLE, typeError } = require('../base/error')
const { checkKnownOptions } = require('../base/schema')

// What both engines read of each header: more cannot change the verdict (contract/limits.json).
const { message } = require('../contract')
const { tenantHeaderCap, hostCap } = require('../contract').LIMITS

function resolveTenant(tenantHeader, host, options) {
  const rules = new TenantRules(readBaseDomain(options), false)
  const t = readHeaderArg(tenantHeader, 'tenantHeader', tenantHeaderCap)
  const h = readHeaderArg(host, 'host', hostCap)
  const tenant = rules.requestedTenant(t, h)
  if (tenant instanceof Failure) {
    return { tenantId: undefined, tenantSource: undefined, error: TABLE[tenant.code].message, errorCode: tenant.code }
  }
  return { tenantId: tenant.id, tenantSource: tenant.source, error: undefined, errorCode: undefined }
}

function readBaseDomain(options) {
  if (options === undefined || options === null) return null
  if (typeof options !== 'object') throw typeError(message('mustBeObject', { name: 'options' }))
  checkKnownOptions(options, 'ResolveTenantOptions')
  const v = options.baseDomain
  if (v === undefined || v === null) return null
  if (typeof v !== 'string') throw typeError(message('mustBeString', { name: 'options.baseDomain' }))
  return normalizeDomain(v, 'options.baseDomain')
}

module.exports = { resolveTenant }
