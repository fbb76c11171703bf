// Type checks of the revocation feed (docs/revocation.md): what revokeToken / revokeSubject
// return once a feed is attached, and the feed's own options and stats. Compiled by
// `npx tsc -p __test__/types` (strict, exactOptionalPropertyTypes).

import { Authenticator } from 'auth-shield'
import { RevocationFeed, type RevocationDelivery, type RevocationFeedOptions } from 'auth-shield/redis'

declare const client: object
const auth = new Authenticator({ accessSecret: 'x'.repeat(32) })
const options: RevocationFeedOptions = { maxQueued: 1000, maxKnown: 100_000, onError: (err: Error) => void err.message }
const feed = new RevocationFeed(client, options).attach(auth)

async function logout(jti: string, exp: number): Promise<void> {
  // The feed's own methods: a Promise that never rejects.
  const outcome: RevocationDelivery = await feed.revokeToken(jti, exp)
  if (outcome === 'queued') console.log('enforced here; other processes learn it when Redis is back')
  const bySubject: Promise<'delivered' | 'queued'> = feed.revokeSubject('u', { issuedBeforeSec: 1 })
  void bySubject
  // @ts-expect-error not a void: the feed's revokes return a Promise
  const nothing: void = feed.revokeToken(jti, exp)
  void nothing
  // The Authenticator's, once attached: nothing without a feed, that Promise with one.
  const written = auth.revokeToken(jti, exp)
  if (written instanceof Promise) {
    const delivered: RevocationDelivery = await written
    void delivered
  }
  const stats = feed.stats()
  const counts: number[] = [stats.queued, stats.known, stats.writeErrors, stats.rebuilds, stats.republished, stats.undelivered]
  void counts
}
void logout
