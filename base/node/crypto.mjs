// `#node/crypto` for bundlers (see ./crypto.js): the same module, reached by an import.
export * from 'node:crypto'
