'use strict'

// Tenant resolution: JWT tenant_id claim > X-Tenant-ID header > subdomain of Host, as
// src/tenant.rs. Comparisons fold ASCII case only, like the native `eq_ignore_ascii_case`.

const { fail, Failure } = require('../base/error')
const { asciiLower } = require('./config')

// Tenant ids end up in log lines, cache keys and SQL: only [A-Za-z0-9_-], starting with a
// letter or digit, at most 63 characters (a DNS label, so a subdomain can always hold it).
const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/
const IPV4_LITERAL = /^[0-9]+(\.[0-9]+)*$/
const PORT = /:[0-9]*$/

/** No tenant resolved: neither the token, the header nor the Host names one. */
const NO_TENANT = Object.freeze({ id: undefined, source: undefined })

function fromToken(id) {
  return { id, source: 'token' }
}

function isValidTenantId(id) {
  return TENANT_ID.test(id)
}

class TenantRules {
  constructor(baseDomain, enforceMatch) {
    this.baseDomain = baseDomain
    this.enforceMatch = enforceMatch
  }

  /**
   * The resolved tenant as `{ id, source }` (source 'token', 'header' or 'host'; both undefined
   * for none), or a Failure.
   */
  resolve(claim, header, host) {
    const hasClaim = claim !== undefined && claim !== ''
    if (hasClaim) {
      if (!isValidTenantId(claim)) return fail('invalid_tenant')
      if (!this.enforceMatch) return fromToken(claim)
    }
    const requested = this.requestedTenant(header, host)
    if (requested instanceof Failure || !hasClaim) return requested
    if (requested !== NO_TENANT && asciiLower(claim) !== asciiLower(requested.id)) {
      return fail('tenant_mismatch')
    }
    return fromToken(claim)
  }

  /** The tenant the client asked for: the header if present, else the Host subdomain. */
  requestedTenant(header, host) {
    if (header !== undefined && header !== '') {
      return isValidTenantId(header) ? { id: header, source: 'header' } : fail('invalid_tenant')
    }
    const label = host === undefined ? undefined : this.subdomainOf(host)
    if (label === undefined) return NO_TENANT
    return isValidTenantId(label) ? { id: asciiLower(label), source: 'host' } : fail('invalid_tenant')
  }

  /**
   * The tenant label of a Host header value, if it names one: port stripped, trailing dot
   * ignored; IP literals, localhost, single-label hosts and `www` name none. With a base domain
   * only its direct subdomains count; without one, the first label of a host with 3+ labels.
   */
  subdomainOf(host) {
    if (host[0] === '[') return undefined // IPv6 literal
    if (PORT.test(host)) host = host.slice(0, host.lastIndexOf(':'))
    if (host.endsWith('.')) host = host.slice(0, -1)
    if (host === '' || IPV4_LITERAL.test(host)) return undefined
    const firstDot = host.indexOf('.')
    if (firstDot < 0) return undefined
    const label = host.slice(0, firstDot)
    const rest = host.slice(firstDot + 1)
    const isTenantHost =
      this.baseDomain !== null
        ? asciiLower(rest) === this.baseDomain
        : rest.includes('.') && asciiLower(rest) !== 'localhost'
    if (!isTenantHost || label === '' || asciiLower(label) === 'www') return undefined
    return label
  }
}

module.exports = { TenantRules, isValidTenantId }
