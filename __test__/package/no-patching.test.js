'use strict'

// No module re-assigns another object's methods (issue 35: "stages compose; they never patch
// each other"). lib/jwks/middleware.js once replaced `engine.authenticate` with a three-parameter
// function and DPoP and client certificates vanished with every identity provider; the adapters
// then gave their decisions a `routeRefusal` by assignment and expressjwt's per-key decisions a
// ledger and a refusal the same way. Behaviour is handed over by constructor options and
// composition instead. This test parses every JS file of the package and fails on an assignment
// of a function (an arrow, a function expression, a `.bind(...)`, or the name of a function
// declared in the file) to a property of any object but:
// - `this` (an object setting up itself);
// - `module.exports` / `exports` (a module's own surface);
// - a function or object created in the same function scope (`const check = (r) => …;
//   check.release = …`: its own, made there and then).
// Class `prototype` assignments are refused too: a method belongs in the class body.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const acorn = require('acorn')

const ROOT = path.join(__dirname, '..', '..')
const DIRS = ['lib', 'adapters', 'js', 'base', 'contract']
const ROOT_FILES = ['index.js', 'native.js', 'index.mjs']

// file -> { 'object.property': reason }: assignments that are the object's owner's own doing
// but that the rule cannot see as such. Kept short; each says why.
const ALLOWED = {}

function packageFiles() {
  const found = ROOT_FILES.filter((f) => fs.existsSync(path.join(ROOT, f)))
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const file = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(file)
      else if (/\.(c|m)?js$/.test(entry.name)) found.push(file)
    }
  }
  for (const dir of DIRS) if (fs.existsSync(path.join(ROOT, dir))) walk(dir)
  return found
}

const FUNCTION_TYPES = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression'])
const FRESH_INITS = new Set(['ObjectExpression', 'FunctionExpression', 'ArrowFunctionExpression', 'ClassExpression'])

/** Children of an AST node. */
function* childrenOf(node) {
  for (const key in node) {
    if (key === 'type' || key === 'start' || key === 'end') continue
    const value = node[key]
    if (Array.isArray(value)) {
      for (const v of value) if (v !== null && typeof v === 'object' && typeof v.type === 'string') yield v
    } else if (value !== null && typeof value === 'object' && typeof value.type === 'string') yield value
  }
}

/** The names a scope (a function or the program) binds to a function, class or object literal made there. */
function freshNamesOf(scope) {
  const names = new Set()
  const visit = (node) => {
    if (node !== scope && FUNCTION_TYPES.has(node.type)) {
      if (node.type === 'FunctionDeclaration' && node.id) names.add(node.id.name)
      return
    }
    if (node.type === 'ClassDeclaration' && node.id) names.add(node.id.name)
    if (node.type === 'VariableDeclarator' && node.id.type === 'Identifier' && node.init && FRESH_INITS.has(node.init.type)) names.add(node.id.name)
    for (const child of childrenOf(node)) visit(child)
  }
  visit(scope.type === 'Program' ? scope : scope.body)
  return names
}

/** Names bound to a function anywhere in the file (declarations, and variables initialised with one). */
function functionNamesOf(program) {
  const names = new Set()
  const visit = (node) => {
    if (node.type === 'FunctionDeclaration' && node.id) names.add(node.id.name)
    if (node.type === 'VariableDeclarator' && node.id.type === 'Identifier' && node.init && FUNCTION_TYPES.has(node.init.type)) names.add(node.id.name)
    for (const child of childrenOf(node)) visit(child)
  }
  visit(program)
  return names
}

function isFunctionValue(node, functionNames) {
  if (node.type === 'FunctionExpression' || node.type === 'ArrowFunctionExpression') return true
  if (node.type === 'CallExpression' && node.callee.type === 'MemberExpression' && !node.callee.computed && node.callee.property.name === 'bind') return true
  return node.type === 'Identifier' && functionNames.has(node.name)
}

function isModuleSurface(object) {
  if (object.type === 'Identifier') return object.name === 'exports' || object.name === 'module'
  return object.type === 'MemberExpression' && object.object.type === 'Identifier' && object.object.name === 'module' && !object.computed && object.property.name === 'exports'
}

const text = (source, node) => source.slice(node.start, node.end)

/** Every foreign function assignment in `source`: [{ line, target }]. */
function foreignAssignments(source, file) {
  const program = acorn.parse(source, { ecmaVersion: 'latest', sourceType: file.endsWith('.mjs') ? 'module' : 'script', allowHashBang: true, locations: true })
  const functionNames = functionNamesOf(program)
  const freshCache = new Map()
  const found = []
  const visit = (node, scope) => {
    if (FUNCTION_TYPES.has(node.type)) scope = node
    if (node.type === 'AssignmentExpression' && node.left.type === 'MemberExpression' && isFunctionValue(node.right, functionNames)) {
      const object = node.left.object
      let own = object.type === 'ThisExpression' || isModuleSurface(object)
      if (!own && object.type === 'Identifier') {
        if (!freshCache.has(scope)) freshCache.set(scope, freshNamesOf(scope))
        own = freshCache.get(scope).has(object.name)
      }
      if (!own) found.push({ line: node.loc.start.line, target: text(source, node.left) })
    }
    for (const child of childrenOf(node)) visit(child, scope)
  }
  visit(program, program)
  return found
}

test('no module assigns a function to a property of an object it does not own', () => {
  const offences = []
  for (const file of packageFiles()) {
    const source = fs.readFileSync(path.join(ROOT, file), 'utf8')
    for (const { line, target } of foreignAssignments(source, file)) {
      if (ALLOWED[file] !== undefined && ALLOWED[file][target] !== undefined) continue
      offences.push(`${file}:${line} ${target} = <function>`)
    }
  }
  assert.deepEqual(offences, [], `pass behaviour by constructor options or composition, not by assignment:\n${offences.join('\n')}`)
})

test('the rule sees each form of a foreign assignment and lets an object set up itself', () => {
  const found = (source) => foreignAssignments(source, 'x.js').map((f) => f.target)
  // Caught: an arrow, a function expression, a bound method, a declared function's name, a prototype.
  assert.deepEqual(found('engine.authenticate = (a) => a'), ['engine.authenticate'])
  assert.deepEqual(found('function f(d) { d.routeRefusal = function () {} }'), ['d.routeRefusal'])
  assert.deepEqual(found('x.y.z = other.method.bind(other)'), ['x.y.z'])
  assert.deepEqual(found('function apply() {} ; function g(decision) { decision.routeRefusal = apply }'), ['decision.routeRefusal'])
  assert.deepEqual(found('class C {} ; C.prototype.m = function () {}'), ['C.prototype.m'])
  assert.deepEqual(found('function g(a) { a[name] = () => 1 }'), ['a[name]'])
  // Allowed: this, the module's surface, a function or object made in the same scope, data.
  assert.deepEqual(found('class C { constructor(f) { this.f = () => f() } }'), [])
  assert.deepEqual(found('module.exports = () => 1; module.exports.x = function () {}; exports.y = () => 2'), [])
  assert.deepEqual(found('function make() { const check = (r) => r; check.release = (r) => r; const o = {}; o.f = () => 1; return check }'), [])
  assert.deepEqual(found('function g(m) { m.engine = "native"; m.count = 1 }'), [])
  // Made in another scope: not this one's own.
  assert.deepEqual(found('const check = () => 1; function g() { check.release = () => 2 }'), ['check.release'])
})
