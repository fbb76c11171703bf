'use strict'

// The embedded SQLite store: schema, and every statement prepared once at open.
// `libsql` is a better-sqlite3-compatible driver whose binaries come as prebuilt
// optionalDependencies, so it installs without running any install script.

const fs = require('node:fs')
const path = require('node:path')
const Database = require('libsql')

const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  id            INTEGER PRIMARY KEY,
  username      TEXT    NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT    NOT NULL,
  role          TEXT    NOT NULL DEFAULT 'user',
  created_at    INTEGER NOT NULL,
  step_up_at    INTEGER
);
CREATE TABLE IF NOT EXISTS api_keys (
  id           INTEGER PRIMARY KEY,
  user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  lookup_id    TEXT    NOT NULL UNIQUE,
  key_hash     TEXT    NOT NULL,
  prefix       TEXT    NOT NULL,
  last_four    TEXT    NOT NULL,
  name         TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER
);
-- Refresh tokens that were exchanged, and the tokens issued in exchange. A family is the chain
-- of tokens that grew from one login; it is named by the jti of that login's refresh token.
CREATE TABLE IF NOT EXISTS refresh_tokens (
  jti        TEXT    PRIMARY KEY,
  family     TEXT    NOT NULL,
  expires_at INTEGER NOT NULL,
  used       INTEGER NOT NULL DEFAULT 0,
  revoked    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS refresh_tokens_by_family ON refresh_tokens (family);
DROP TABLE IF EXISTS used_refresh_tokens;
`

const nowSec = () => Math.floor(Date.now() / 1000)

/** SQLite's "UNIQUE constraint failed" error, as libsql and better-sqlite3 report it. */
function isUniqueViolation(err) {
  return err && (err.code === 'SQLITE_CONSTRAINT_UNIQUE' || err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
}

// libsql adds a `_metadata` field to rows from `get()`: copy out only the columns we mean to use.
const userOf = (row) =>
  row && {
    id: row.id,
    userName: row.username,
    passwordHash: row.password_hash,
    role: row.role,
    createdAt: row.created_at,
    stepUpAt: row.step_up_at ?? null,
  }

/**
 * Opens (creating on first use) `<dataDir>/token-api.db`. Several processes may open the same
 * file (cluster mode): WAL lets readers run beside the single writer, and the busy timeout makes
 * a writer wait for another instead of failing.
 */
function openDatabase(dataDir) {
  fs.mkdirSync(dataDir, { recursive: true })
  const db = new Database(path.join(dataDir, 'token-api.db'))
  db.exec('PRAGMA busy_timeout = 5000')
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA foreign_keys = ON')
  db.exec(SCHEMA)

  const s = {
    insertUser: db.prepare(
      'INSERT INTO users (username, password_hash, role, created_at) VALUES (?, ?, ?, ?)',
    ),
    insertUserIfAbsent: db.prepare(
      'INSERT OR IGNORE INTO users (username, password_hash, role, created_at) VALUES (?, ?, ?, ?)',
    ),
    userByName: db.prepare('SELECT * FROM users WHERE username = ?'),
    userById: db.prepare('SELECT * FROM users WHERE id = ?'),
    setPasswordHash: db.prepare('UPDATE users SET password_hash = ? WHERE id = ?'),
    setStepUp: db.prepare('UPDATE users SET step_up_at = ? WHERE id = ?'),
    countUsers: db.prepare('SELECT count(*) AS n FROM users'),
    insertApiKey: db.prepare(
      `INSERT INTO api_keys (user_id, lookup_id, key_hash, prefix, last_four, name, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    apiKeyByLookup: db.prepare('SELECT * FROM api_keys WHERE lookup_id = ?'),
    touchApiKey: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
    refreshToken: db.prepare('SELECT family, used, revoked FROM refresh_tokens WHERE jti = ?'),
    insertRefreshToken: db.prepare(
      'INSERT INTO refresh_tokens (jti, family, expires_at, used) VALUES (?, ?, ?, ?)',
    ),
    spendRefreshToken: db.prepare('UPDATE refresh_tokens SET used = 1 WHERE jti = ? AND used = 0'),
    revokeRefreshFamily: db.prepare('UPDATE refresh_tokens SET revoked = 1 WHERE family = ?'),
    pruneRefreshTokens: db.prepare('DELETE FROM refresh_tokens WHERE expires_at < ?'),
    ping: db.prepare('SELECT 1 AS ok'),
  }

  const users = {
    /** Inserts a user; returns the new id, or null when the name is taken (any letter case). */
    create(userName, passwordHash, role = 'user') {
      try {
        return Number(s.insertUser.run(userName, passwordHash, role, nowSec()).lastInsertRowid)
      } catch (err) {
        if (isUniqueViolation(err)) return null
        throw err
      }
    },
    findByName: (userName) => userOf(s.userByName.get(userName)),
    findById: (id) => userOf(s.userById.get(id)),
    /** The user a token's `sub` names (our ids are positive integers), else undefined. */
    findBySubject: (sub) => (/^[1-9]\d{0,15}$/.test(sub) ? userOf(s.userById.get(Number(sub))) : undefined),
    setPasswordHash: (id, passwordHash) => s.setPasswordHash.run(passwordHash, id),
    recordStepUp(id, at = nowSec()) {
      s.setStepUp.run(at, id)
      return at
    },
    count: () => s.countUsers.get().n,
    /**
     * Inserts `count` users named `${prefix}${i}` (i from 1) sharing one password hash, in one
     * transaction; existing names are left alone. Returns how many were added.
     */
    seed: db.transaction((prefix, count, passwordHash) => {
      let added = 0
      const at = nowSec()
      for (let i = 1; i <= count; i++) {
        added += s.insertUserIfAbsent.run(`${prefix}${i}`, passwordHash, 'user', at).changes
      }
      return added
    }),
  }

  const apiKeys = {
    /** Stores a key's hash; returns `{ id, createdAt }`, or null when `lookupId` is taken. */
    create({ userId, lookupId, hash, prefix, lastFour, name }) {
      const createdAt = nowSec()
      try {
        const info = s.insertApiKey.run(userId, lookupId, hash, prefix, lastFour, name, createdAt)
        return { id: Number(info.lastInsertRowid), createdAt }
      } catch (err) {
        if (isUniqueViolation(err)) return null
        throw err
      }
    },
    findByLookup(lookupId) {
      const row = s.apiKeyByLookup.get(lookupId)
      return row && { id: row.id, userId: row.user_id, hash: row.key_hash, name: row.name }
    },
    touch: (id) => s.touchApiKey.run(nowSec(), id),
  }

  /**
   * Rotation with reuse detection (OAuth 2.0 Security BCP, RFC 9700 section 4.14.2): each refresh
   * token is exchanged once; a second use means two parties hold it (it leaked, or a client
   * raced itself), and as the server cannot tell which one is the attacker it revokes the whole
   * family, including the token issued by the first exchange. A token whose jti is not recorded
   * yet is the first of its family: the one issued at login (nothing is written at login).
   * IMMEDIATE takes the write lock first, so workers sharing the file exchange one at a time.
   */
  const exchangeRefreshToken = db.transaction((jti, expiresAtSec, next) => {
    const row = s.refreshToken.get(jti)
    if (row && row.revoked) return 'revoked'
    const family = row ? row.family : jti
    if (row && s.spendRefreshToken.run(jti).changes === 0) {
      s.revokeRefreshFamily.run(family)
      return 'reused'
    }
    if (!row) s.insertRefreshToken.run(jti, family, expiresAtSec, 1)
    s.insertRefreshToken.run(next.jti, family, next.expiresAtSec, 0)
    return 'exchanged'
  }).immediate

  const refreshTokens = {
    /**
     * Spends the refresh token `jti` (expiring at `expiresAtSec`) in exchange for `next`
     * (`{ jti, expiresAtSec }` of the token about to be handed out). Returns 'exchanged', 'reused'
     * (it had been spent: its family is now revoked) or 'revoked' (its family was).
     */
    exchange: (jti, expiresAtSec, next) => exchangeRefreshToken(jti, expiresAtSec, next),
    /** Forgets tokens that have expired anyway (their signature check refuses them). */
    pruneExpired: () => s.pruneRefreshTokens.run(nowSec()).changes,
  }

  return {
    users,
    apiKeys,
    refreshTokens,
    ping: () => s.ping.get().ok === 1,
    close: () => db.close(),
  }
}

module.exports = { openDatabase }
