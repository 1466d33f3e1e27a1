import jsep from 'jsep';

/**
 * Adaptive-content conditions (`visitor.claims.plan === "pro"`, `page.vars.x`), evaluated without
 * `eval`: `jsep` parses the JavaScript expression and this interpreter walks it, allowing only
 * literals, the names it is given, property reads of plain data, comparisons, logic, `!`, arrays
 * and `.includes(…)`. Anything else (calls, assignments, `constructor`, prototypes) makes the
 * condition false: a visitor sees less, never more, when a condition cannot be understood.
 */

type Value = unknown;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Ast = any;

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
const MAX_LENGTH = 1024;
const parsed = new Map<string, Ast | null>();

class Unsupported extends Error {}

function parse(expression: string): Ast | null {
  if (parsed.has(expression)) return parsed.get(expression)!;
  let ast: Ast | null = null;
  try {
    ast = expression.length <= MAX_LENGTH ? jsep(expression) : null;
  } catch {
    ast = null;
  }
  if (parsed.size > 5000) parsed.clear();
  parsed.set(expression, ast);
  return ast;
}

function read(object: Value, key: Value): Value {
  if (typeof key !== 'string' && typeof key !== 'number') throw new Unsupported('key');
  const name = String(key);
  if (FORBIDDEN.has(name)) throw new Unsupported('forbidden property');
  if (Array.isArray(object)) return name === 'length' ? object.length : /^\d+$/.test(name) ? object[Number(name)] : undefined;
  if (typeof object === 'string') return name === 'length' ? object.length : undefined;
  if (object && typeof object === 'object' && Object.prototype.hasOwnProperty.call(object, name)) return (object as Record<string, Value>)[name];
  return undefined;
}

function evaluate(node: Ast, scope: Record<string, Value>, depth = 0): Value {
  if (depth > 64) throw new Unsupported('too deep');
  switch (node.type) {
    case 'Literal':
      return node.value;
    case 'Identifier':
      if (node.name === 'undefined') return undefined;
      return Object.prototype.hasOwnProperty.call(scope, node.name) ? scope[node.name] : undefined;
    case 'MemberExpression': {
      const object = evaluate(node.object, scope, depth + 1);
      const key = node.computed ? evaluate(node.property, scope, depth + 1) : node.property.name;
      return read(object, key);
    }
    case 'ArrayExpression':
      return (node.elements as Ast[]).map((e) => evaluate(e, scope, depth + 1));
    case 'UnaryExpression': {
      const value = evaluate(node.argument, scope, depth + 1);
      if (node.operator === '!') return !value;
      if (node.operator === '-') return -Number(value);
      throw new Unsupported(node.operator);
    }
    case 'BinaryExpression':
    case 'LogicalExpression': {
      if (node.operator === '&&') return evaluate(node.left, scope, depth + 1) && evaluate(node.right, scope, depth + 1);
      if (node.operator === '||') return evaluate(node.left, scope, depth + 1) || evaluate(node.right, scope, depth + 1);
      const left = evaluate(node.left, scope, depth + 1);
      const right = evaluate(node.right, scope, depth + 1);
      switch (node.operator) {
        case '===':
          return left === right;
        case '!==':
          return left !== right;
        case '==':
          // Loose equality only between primitives (no object-to-primitive conversions).
          return (left === null || typeof left !== 'object') && (right === null || typeof right !== 'object') ? left == right : left === right;
        case '!=':
          return !((left === null || typeof left !== 'object') && (right === null || typeof right !== 'object') ? left == right : left === right);
        case '<':
        case '<=':
        case '>':
        case '>=': {
          if (!((typeof left === 'number' && typeof right === 'number') || (typeof left === 'string' && typeof right === 'string'))) return false;
          return node.operator === '<' ? left < right : node.operator === '<=' ? left <= right : node.operator === '>' ? left > right : left >= right;
        }
        default:
          throw new Unsupported(node.operator);
      }
    }
    case 'CallExpression': {
      // Only `<array or string>.includes(<value>)`.
      const callee = node.callee;
      if (callee.type !== 'MemberExpression' || callee.computed || callee.property.name !== 'includes' || node.arguments.length !== 1) throw new Unsupported('call');
      const target = evaluate(callee.object, scope, depth + 1);
      const arg = evaluate(node.arguments[0], scope, depth + 1);
      if (Array.isArray(target)) return target.includes(arg);
      if (typeof target === 'string' && typeof arg === 'string') return target.includes(arg);
      return false;
    }
    case 'Compound':
      throw new Unsupported('compound');
    default:
      throw new Unsupported(String(node.type));
  }
}

/** Whether a condition holds in a scope (`{ visitor: { claims } }`); unparsable or unsupported → false. */
export function conditionHolds(expression: string | null | undefined, scope: Record<string, Value>): boolean {
  if (!expression || !expression.trim()) return true;
  const ast = parse(expression.trim());
  if (!ast) return false;
  try {
    return !!evaluate(ast, scope);
  } catch {
    return false;
  }
}

/** The value of an expression as text (`space.vars.x`), undefined when it cannot be evaluated. */
export function expressionValue(expression: string, scope: Record<string, Value>): string | undefined {
  const ast = parse(expression.trim());
  if (!ast) return undefined;
  try {
    const value = evaluate(ast, scope);
    return value === undefined || value === null || typeof value === 'object' ? undefined : String(value);
  } catch {
    return undefined;
  }
}
