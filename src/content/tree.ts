import { createHash } from 'node:crypto';
import type { Db } from '../platform/db/database.ts';
import { insertTreeNodes, treeNodes } from './store.ts';

/**
 * A persistent, content-addressed hash trie: the storage of revision contents.
 *
 * A revision is the hash of a root node. Nodes are immutable rows of `tree_nodes`, keyed by the
 * hash of their JSON, so two revisions share every node they have in common. Changing one key
 * writes one leaf and the branches above it (O(log n) small nodes), never the whole content;
 * reading one key reads the same O(log n) path, never the whole tree; and the difference between
 * two revisions is found by walking only the nodes whose hashes differ.
 *
 * Keys are strings (`p:<pageId>` page entries, `k:<parentId>` children sets, `f:<fileId>` files,
 * `v` variables…); values are JSON. Branches split on the hex digits of sha1(key).
 */

export type Value = unknown;
type Leaf = { t: 'leaf'; e: Record<string, Value> };
type Branch = { t: 'branch'; c: Record<string, string> };
type Node = Leaf | Branch;

/** The root of an empty tree. */
export const EMPTY = '';
const LEAF_MAX = 32;
const MAX_DEPTH = 40;

function canonical(value: Value): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value as object)
    .filter((k) => (value as Record<string, Value>)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, Value>)[k])}`).join(',')}}`;
}

export function hashOf(value: Value): string {
  return createHash('sha256').update(canonical(value)).digest('base64url');
}

function digits(key: string): string {
  return createHash('sha1').update(key).digest('hex');
}

/** Equality of JSON values, independent of key order. */
export function sameValue(a: Value, b: Value): boolean {
  return a === b || canonical(a) === canonical(b);
}

/**
 * Nodes never change, so a process-wide cache of parsed nodes is always correct to read from; it
 * is no proof that a node is stored (see `put`).
 */
const cache = new Map<string, Node>();
const CACHE_MAX = 50_000;

function remember(hash: string, node: Node) {
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(hash, node);
}

export class Tree {
  /** Nodes created by this writer and not yet stored. */
  private pending = new Map<string, Node>();

  constructor(private readonly db: Db) {}

  private async load(hashes: string[]): Promise<Map<string, Node>> {
    const out = new Map<string, Node>();
    const missing: string[] = [];
    for (const h of hashes) {
      const node = this.pending.get(h) ?? cache.get(h);
      if (node) out.set(h, node);
      else missing.push(h);
    }
    if (missing.length) {
      const rows = await treeNodes(this.db, [...new Set(missing)]);
      for (const row of rows) {
        remember(row.hash, row.data as Node);
        out.set(row.hash, row.data as Node);
      }
      for (const h of missing) if (!out.has(h)) throw new Error(`tree node ${h} is missing`);
    }
    return out;
  }

  private async node(hash: string): Promise<Node> {
    if (hash === EMPTY) return { t: 'leaf', e: {} };
    return (await this.load([hash])).get(hash)!;
  }

  private put(node: Node): string {
    if (node.t === 'leaf' && Object.keys(node.e).length === 0) return EMPTY;
    const hash = hashOf(node);
    // Always written, even when cached: the cache holds nodes flushed in transactions that may
    // have rolled back since (a merge refused for its conflicts writes its result first), so a
    // cached node is not known to be stored. Skipping it let a later revision point at a node
    // missing from the database, found only once the cache forgot it (or after a restart).
    // Rewriting an existing node costs one ignored row (ON CONFLICT DO NOTHING).
    this.pending.set(hash, node);
    return hash;
  }

  /** Stores the nodes written since the last flush (idempotent: nodes are content-addressed). */
  async flush(db: Db = this.db): Promise<void> {
    const nodes = [...this.pending.entries()];
    this.pending = new Map();
    for (let i = 0; i < nodes.length; i += 500) {
      const chunk = nodes.slice(i, i + 500);
      await insertTreeNodes(db, chunk);
      for (const [hash, data] of chunk) remember(hash, data);
    }
  }

  async get(root: string, key: string): Promise<Value | undefined> {
    const path = digits(key);
    let hash = root;
    for (let depth = 0; depth <= MAX_DEPTH; depth++) {
      const node = await this.node(hash);
      if (node.t === 'leaf') return node.e[key];
      const next = node.c[path[depth]!];
      if (!next) return undefined;
      hash = next;
    }
    return undefined;
  }

  /** Values of several keys, reading shared nodes once. */
  async getMany(root: string, keys: string[]): Promise<Map<string, Value>> {
    const out = new Map<string, Value>();
    await Promise.all(
      keys.map(async (k) => {
        const v = await this.get(root, k);
        if (v !== undefined) out.set(k, v);
      }),
    );
    return out;
  }

  /** Applies a batch of changes (undefined deletes a key) and returns the new root. */
  async update(root: string, changes: Map<string, Value | undefined>): Promise<string> {
    if (changes.size === 0) return root;
    const items = [...changes.entries()].map(([key, value]) => ({ key, value, path: digits(key) }));
    return this.updateNode(root, items, 0);
  }

  private async updateNode(hash: string, items: { key: string; value: Value | undefined; path: string }[], depth: number): Promise<string> {
    const node = await this.node(hash);
    if (node.t === 'leaf') {
      const entries = { ...node.e };
      for (const item of items) {
        if (item.value === undefined) delete entries[item.key];
        else entries[item.key] = item.value;
      }
      if (Object.keys(entries).length <= LEAF_MAX || depth >= MAX_DEPTH) return this.put({ t: 'leaf', e: entries });
      // Too big: split into a branch on the next digit.
      const groups = new Map<string, { key: string; value: Value; path: string }[]>();
      for (const [key, value] of Object.entries(entries)) {
        const path = digits(key);
        const list = groups.get(path[depth]!) ?? [];
        list.push({ key, value, path });
        groups.set(path[depth]!, list);
      }
      const children: Record<string, string> = {};
      for (const [digit, list] of groups) children[digit] = await this.updateNode(EMPTY, list, depth + 1);
      return this.put({ t: 'branch', c: children });
    }
    const groups = new Map<string, typeof items>();
    for (const item of items) {
      const list = groups.get(item.path[depth]!) ?? [];
      list.push(item);
      groups.set(item.path[depth]!, list);
    }
    const children = { ...node.c };
    for (const [digit, list] of groups) {
      const child = await this.updateNode(children[digit] ?? EMPTY, list, depth + 1);
      if (child === EMPTY) delete children[digit];
      else children[digit] = child;
    }
    // A branch that became small again folds back into a leaf, so equal contents have equal roots.
    const remaining = Object.values(children);
    if (remaining.length === 0) return EMPTY;
    const leaves = await this.load(remaining);
    if ([...leaves.values()].every((n) => n.t === 'leaf')) {
      const merged: Record<string, Value> = {};
      for (const n of leaves.values()) Object.assign(merged, (n as Leaf).e);
      if (Object.keys(merged).length <= LEAF_MAX) return this.put({ t: 'leaf', e: merged });
    }
    return this.put({ t: 'branch', c: children });
  }

  /** Every entry whose key starts with `prefix` (walks the whole tree: for whole-content reads). */
  async entries(root: string, prefix = ''): Promise<Map<string, Value>> {
    const out = new Map<string, Value>();
    let level = root === EMPTY ? [] : [root];
    while (level.length) {
      const nodes = await this.load(level);
      const next: string[] = [];
      for (const h of level) {
        const node = nodes.get(h)!;
        if (node.t === 'leaf') {
          for (const [k, v] of Object.entries(node.e)) if (k.startsWith(prefix)) out.set(k, v);
        } else next.push(...Object.values(node.c));
      }
      level = next;
    }
    return out;
  }

  /** Keys whose values differ between two trees: [key, valueInA, valueInB] (undefined = absent). */
  async diff(a: string, b: string): Promise<[string, Value | undefined, Value | undefined][]> {
    const out: [string, Value | undefined, Value | undefined][] = [];
    const walk = async (ha: string, hb: string): Promise<void> => {
      if (ha === hb) return;
      const [na, nb] = await Promise.all([this.node(ha), this.node(hb)]);
      if (na.t === 'branch' && nb.t === 'branch') {
        const digitsSet = new Set([...Object.keys(na.c), ...Object.keys(nb.c)]);
        for (const d of digitsSet) await walk(na.c[d] ?? EMPTY, nb.c[d] ?? EMPTY);
        return;
      }
      // Different shapes (or leaves): compare their entries directly.
      const [ea, eb] = await Promise.all([this.entries(ha), this.entries(hb)]);
      for (const [k, v] of ea) if (!eb.has(k) || !sameValue(v, eb.get(k))) out.push([k, v, eb.get(k)]);
      for (const [k, v] of eb) if (!ea.has(k)) out.push([k, undefined, v]);
    };
    await walk(a, b);
    return out;
  }
}

