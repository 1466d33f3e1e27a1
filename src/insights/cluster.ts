import type { SparseVector } from './text.ts';

/**
 * Clustering of issue vectors by cosine similarity around centroids.
 *
 * - Incremental (each new issue): the issue joins the cluster whose centroid is most similar, when
 *   that similarity reaches the kind's threshold; otherwise it starts a cluster of its own. A
 *   centroid is the sum of its issues' unit vectors, so joining is one addition.
 * - Periodic recomputation: spherical k-means seeded with the current clusters (every issue moves
 *   to its most similar centroid, centroids are recomputed, a few rounds until nothing moves),
 *   then clusters whose centroids became near-duplicates are merged. Cluster identities survive
 *   (a change request tied to a cluster stays tied to it): seeds keep their ids, and a merge keeps
 *   the id of the larger cluster.
 *
 * Vectors are sparse. For TF-IDF vectors a weight function (IDF²) applies to the dot product, so
 * centroids stay valid as document frequencies change; embeddings use weight 1.
 */

export type Weight = (term: string) => number;

/** Most terms a centroid keeps (the heaviest): its size stays bounded however large the cluster. */
export const CENTROID_TERMS = 400;

export function weightedNorm(v: SparseVector, weight: Weight): number {
  let sum = 0;
  for (const term in v) {
    const x = v[term]! * weight(term);
    sum += x * x;
  }
  return Math.sqrt(sum);
}

/** Cosine of `a` and `b` with each dimension scaled by `weight` (both norms given). */
export function cosine(a: SparseVector, aNorm: number, b: SparseVector, bNorm: number, weight: Weight): number {
  if (aNorm === 0 || bNorm === 0) return 0;
  let dot = 0;
  // Iterate the smaller of the two.
  const [small, large] = Object.keys(a).length <= Object.keys(b).length ? [a, b] : [b, a];
  for (const term in small) {
    const y = large[term];
    if (y !== undefined) {
      const w = weight(term);
      dot += small[term]! * y * w * w;
    }
  }
  return dot / (aNorm * bNorm);
}

export function addInto(target: SparseVector, v: SparseVector, factor = 1): void {
  for (const term in v) {
    const next = (target[term] ?? 0) + v[term]! * factor;
    if (Math.abs(next) < 1e-9) delete target[term];
    else target[term] = next;
  }
}

/** Keeps the `max` heaviest dimensions once there are noticeably more. */
export function prune(v: SparseVector, max = CENTROID_TERMS, weight: Weight = () => 1): SparseVector {
  const keys = Object.keys(v);
  if (keys.length <= max * 1.25) return v;
  const kept = keys.sort((x, y) => Math.abs(v[y]! * weight(y)) - Math.abs(v[x]! * weight(x))).slice(0, max);
  const out: SparseVector = {};
  for (const k of kept) out[k] = v[k]!;
  return out;
}

export interface Centroid {
  id: string;
  vector: SparseVector;
  size: number;
  /** Cached weighted norm of `vector`; recomputed after changes. */
  norm: number;
}

export function centroidOf(id: string, vector: SparseVector, size: number, weight: Weight): Centroid {
  return { id, vector, size, norm: weightedNorm(vector, weight) };
}

/** The most similar centroid and its similarity (undefined when there is none). */
export function nearest(v: SparseVector, vNorm: number, centroids: Iterable<Centroid>, weight: Weight): { centroid: Centroid; similarity: number } | undefined {
  let best: { centroid: Centroid; similarity: number } | undefined;
  for (const c of centroids) {
    if (c.size === 0) continue;
    const similarity = cosine(v, vNorm, c.vector, c.norm, weight);
    if (!best || similarity > best.similarity) best = { centroid: c, similarity };
  }
  return best;
}

export interface Member {
  id: string;
  vector: SparseVector;
  cluster: string | null;
}

export interface Recomputed {
  /** Issue id → cluster id after recomputation. */
  assignment: Map<string, string>;
  /** The clusters that remain, with their new centroids. */
  centroids: Map<string, Centroid>;
}

/** `v` with each dimension scaled by `weight`, as a unit vector. */
export function weightedUnit(v: SparseVector, weight: Weight): SparseVector {
  const out: SparseVector = {};
  let norm = 0;
  for (const term in v) {
    const x = v[term]! * weight(term);
    if (x === 0) continue;
    out[term] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (const term in out) out[term]! /= norm;
  return out;
}

function dot(a: SparseVector, b: SparseVector): number {
  let sum = 0;
  for (const term in a) {
    const y = b[term];
    if (y !== undefined) sum += a[term]! * y;
  }
  return sum;
}

/** Terms an issue keeps in the similarity graph (its heaviest): bounds the cost of each comparison. */
export const GRAPH_TERMS = 32;
/** Terms of a cluster's sum used to estimate links between clusters before merging. */
const LINK_TERMS = 200;

function heaviest(v: SparseVector, max: number): SparseVector {
  const keys = Object.keys(v);
  if (keys.length <= max) return v;
  const out: SparseVector = {};
  for (const k of keys.sort((x, y) => Math.abs(v[y]!) - Math.abs(v[x]!)).slice(0, max)) out[k] = v[k]!;
  return out;
}

/** The issues as the similarity graph sees them: unit vectors, their sum and degrees. */
export interface Graph {
  units: SparseVector[];
  /** Twice the total weight of the links (pairs of distinct issues). */
  twoM: number;
  degree: number[];
}

export function graphOf(members: Member[], weight: Weight): Graph {
  const units = members.map((m) => {
    const u = heaviest(weightedUnit(m.vector, weight), GRAPH_TERMS);
    let norm = 0;
    for (const t in u) norm += u[t]! * u[t]!;
    norm = Math.sqrt(norm);
    if (norm > 0) for (const t in u) u[t]! /= norm;
    return u;
  });
  const total: SparseVector = {};
  for (const u of units) addInto(total, u);
  return { units, twoM: dot(total, total) - members.length, degree: units.map((u) => (Object.keys(u).length ? dot(u, total) - 1 : 0)) };
}

/**
 * Recomputation as community detection on the similarity graph of the issues: every pair of
 * issues is linked by the cosine of their weighted vectors, and the partition sought maximises
 * modularity (links inside clusters beyond what the issues' degrees alone would give). This needs
 * no similarity threshold, which a fixed one would have to be re-tuned for each product's wording
 * and text lengths: two issues share a cluster when they are more alike than issues are on average.
 *
 * The graph is never built: with unit vectors u, a cluster's internal weight is |Σu|² − size and
 * an issue's degree is u·Σall − 1, so sums per cluster give everything (Louvain-style moves of
 * issues, then passes of greedy merges of clusters). Seeds are the members' current clusters,
 * whose ids survive; a merge keeps the id of the larger cluster; `newId` names clusters formed for
 * issues no cluster suits. A round of moves costs the issues times the clusters sharing a term
 * with them; a pass of merges, the clusters squared.
 */
export function recompute(
  members: Member[],
  weight: Weight,
  opts: { rounds?: number; newId: () => string; resolution?: number; graph?: Graph },
): Recomputed {
  const gamma = opts.resolution ?? 1;
  const { units, twoM, degree } = opts.graph ?? graphOf(members, weight);

  /** Per cluster: the sum of its unit vectors, its degree and size; per term: the clusters with it. */
  const sums = new Map<string, { sum: SparseVector; degree: number; size: number }>();
  const postings = new Map<string, Map<string, number>>();
  const assignment = new Map<string, string>();
  const add = (i: number, cluster: string, factor: 1 | -1) => {
    let c = sums.get(cluster);
    if (!c) sums.set(cluster, (c = { sum: {}, degree: 0, size: 0 }));
    const u = units[i]!;
    for (const term in u) {
      const next = (c.sum[term] ?? 0) + u[term]! * factor;
      let p = postings.get(term);
      if (!p) postings.set(term, (p = new Map()));
      if (Math.abs(next) < 1e-12) {
        delete c.sum[term];
        p.delete(cluster);
      } else {
        c.sum[term] = next;
        p.set(cluster, next);
      }
    }
    c.degree += degree[i]! * factor;
    c.size += factor;
    if (c.size === 0) sums.delete(cluster);
  };
  members.forEach((m, i) => {
    const cluster = m.cluster ?? opts.newId();
    assignment.set(m.id, cluster);
    add(i, cluster, 1);
  });

  if (twoM > 1e-9) {
    const moveRound = () => {
      let moved = 0;
      members.forEach((m, i) => {
        const current = assignment.get(m.id)!;
        add(i, current, -1);
        const u = units[i]!;
        const dots = new Map<string, number>();
        for (const term in u) {
          for (const [cluster, value] of postings.get(term) ?? []) dots.set(cluster, (dots.get(cluster) ?? 0) + u[term]! * value);
        }
        // Gain of joining c: the links to its issues beyond those expected from the degrees.
        let best: string | undefined;
        let bestGain = 0;
        for (const [cluster, d] of dots) {
          const gain = d - (gamma * degree[i]! * sums.get(cluster)!.degree) / twoM;
          if (gain > bestGain + 1e-12 || (best !== undefined && Math.abs(gain - bestGain) <= 1e-12 && cluster === current)) {
            best = cluster;
            bestGain = gain;
          }
        }
        // Nothing gains: the issue stands alone (in its cluster if that is now empty).
        const target = best ?? (sums.has(current) ? opts.newId() : current);
        if (target !== current) moved++;
        assignment.set(m.id, target);
        add(i, target, 1);
      });
      return moved;
    };
    const mergeRound = () => {
      // Links between clusters (Σa · Σb), from the heaviest terms of each sum.
      const links = new Map<string, Map<string, number>>([...sums.keys()].map((id) => [id, new Map()]));
      const linkPostings = new Map<string, [string, number][]>();
      for (const [id, c] of sums) {
        const top = heaviest(c.sum, LINK_TERMS);
        for (const term in top) {
          const p = linkPostings.get(term) ?? [];
          p.push([id, top[term]!]);
          linkPostings.set(term, p);
        }
      }
      for (const entries of linkPostings.values()) {
        for (let x = 0; x < entries.length; x++) {
          const [a, va] = entries[x]!;
          const row = links.get(a)!;
          for (let y = x + 1; y < entries.length; y++) {
            const [b, vb] = entries[y]!;
            row.set(b, (row.get(b) ?? 0) + va * vb);
            links.get(b)!.set(a, (links.get(b)!.get(a) ?? 0) + va * vb);
          }
        }
      }
      const into = new Map<string, string>();
      const gainOf = (a: string, b: string, w: number) => w - (gamma * sums.get(a)!.degree * sums.get(b)!.degree) / twoM;
      for (;;) {
        // A pass: each cluster's best partner, then the best pairs first, each cluster once.
        const pairs: { a: string; b: string; gain: number }[] = [];
        for (const [a, row] of links) {
          let best: { a: string; b: string; gain: number } | undefined;
          for (const [b, w] of row) {
            const gain = gainOf(a, b, w);
            if (gain > 1e-12 && (!best || gain > best.gain)) best = { a, b, gain };
          }
          if (best) pairs.push(best);
        }
        if (pairs.length === 0) break;
        pairs.sort((x, y) => y.gain - x.gain);
        const used = new Set<string>();
        for (const { a, b } of pairs) {
          if (used.has(a) || used.has(b)) continue;
          used.add(a);
          used.add(b);
          // The larger keeps its id.
          const [keep, gone] = sums.get(a)!.size >= sums.get(b)!.size ? [a, b] : [b, a];
          const k = sums.get(keep)!;
          const g = sums.get(gone)!;
          for (const term in g.sum) {
            const next = (k.sum[term] ?? 0) + g.sum[term]!;
            k.sum[term] = next;
            const p = postings.get(term)!;
            p.delete(gone);
            p.set(keep, next);
          }
          k.degree += g.degree;
          k.size += g.size;
          sums.delete(gone);
          const goneRow = links.get(gone)!;
          links.delete(gone);
          const keepRow = links.get(keep)!;
          keepRow.delete(gone);
          for (const [c, w] of goneRow) {
            if (c === keep) continue;
            keepRow.set(c, (keepRow.get(c) ?? 0) + w);
            const row = links.get(c)!;
            row.delete(gone);
            row.set(keep, (row.get(keep) ?? 0) + w);
          }
          into.set(gone, keep);
        }
      }
      if (into.size) {
        const final = (id: string): string => (into.has(id) ? final(into.get(id)!) : id);
        for (const [issue, cluster] of assignment) assignment.set(issue, final(cluster));
      }
      return into.size;
    };
    const rounds = opts.rounds ?? 6;
    for (let pass = 0; pass < 3; pass++) {
      // Until (nearly) nothing moves: the last few issues hesitating between two clusters change little.
      for (let round = 0; round < rounds; round++) if (moveRound() <= members.length / 200) break;
      if (mergeRound() === 0) break;
    }
  }

  // Stored centroids are sums of the raw vectors, as the incremental assignment keeps them.
  const raw = new Map<string, { vector: SparseVector; size: number }>();
  members.forEach((m) => {
    const id = assignment.get(m.id)!;
    const r = raw.get(id) ?? { vector: {}, size: 0 };
    addInto(r.vector, m.vector);
    r.size++;
    raw.set(id, r);
  });
  const centroids = new Map([...raw].map(([id, r]) => [id, centroidOf(id, prune(r.vector, CENTROID_TERMS, weight), r.size, weight)]));
  return { assignment, centroids };
}

/** The member closest to its centroid (the most typical issue of a cluster). */
export function medoid(members: Member[], centroid: Centroid, weight: Weight): Member | undefined {
  let best: { m: Member; s: number } | undefined;
  for (const m of members) {
    const s = cosine(m.vector, weightedNorm(m.vector, weight), centroid.vector, centroid.norm, weight);
    if (!best || s > best.s) best = { m, s };
  }
  return best?.m;
}

/**
 * Mean simplified silhouette of a partition: for each issue, how much closer (cosine distance) it
 * is to the rest of its own cluster than to the nearest other cluster; issues alone count 0.
 */
export function silhouette(members: Member[], units: SparseVector[], assignment: Map<string, string>): number {
  if (members.length === 0) return 0;
  const sums = new Map<string, { sum: SparseVector; size: number }>();
  members.forEach((m, i) => {
    const id = assignment.get(m.id)!;
    const s = sums.get(id) ?? { sum: {}, size: 0 };
    addInto(s.sum, units[i]!);
    s.size++;
    sums.set(id, s);
  });
  const norms2 = new Map([...sums].map(([id, s]) => [id, dot(s.sum, s.sum)]));
  const postings = new Map<string, [string, number][]>();
  for (const [id, s] of sums) {
    for (const term in s.sum) {
      const p = postings.get(term) ?? [];
      p.push([id, s.sum[term]!]);
      postings.set(term, p);
    }
  }
  let total = 0;
  members.forEach((m, i) => {
    const own = assignment.get(m.id)!;
    if (sums.get(own)!.size <= 1) return;
    const u = units[i]!;
    const dots = new Map<string, number>();
    for (const term in u) for (const [id, v] of postings.get(term) ?? []) dots.set(id, (dots.get(id) ?? 0) + u[term]! * v);
    const self = dot(u, u);
    const ownDot = (dots.get(own) ?? 0) - self;
    const ownNorm = Math.sqrt(Math.max(0, norms2.get(own)! - 2 * (dots.get(own) ?? 0) + self));
    const a = 1 - (ownNorm > 0 ? ownDot / ownNorm : 0);
    let nearestOther = 0;
    for (const [id, d] of dots) {
      if (id === own) continue;
      const norm = Math.sqrt(norms2.get(id)!);
      if (norm > 0) nearestOther = Math.max(nearestOther, d / norm);
    }
    const b = 1 - nearestOther;
    const denominator = Math.max(a, b);
    if (denominator > 0) total += (b - a) / denominator;
  });
  return total / members.length;
}

/**
 * Resolutions tried by `recluster`: higher ones make more, tighter clusters. Which one suits
 * depends on the wording and on how many problems there are, so each recomputation picks the one
 * whose partition has the best silhouette (on the tuning sets it lands where agreement with the
 * hand labels is highest).
 */
export const RESOLUTIONS = [1.5, 2, 2.5, 3, 4];

/**
 * `recompute` at each resolution, from the finest to the coarsest, each starting from the
 * partition before it (so only the first one moves many issues); the partition with the best
 * silhouette wins (the coarser on a tie).
 */
export function recluster(members: Member[], weight: Weight, opts: { rounds?: number; newId: () => string; resolutions?: number[] }): Recomputed & { resolution: number; silhouette: number } {
  const graph = graphOf(members, weight);
  let best: (Recomputed & { resolution: number; silhouette: number }) | undefined;
  let seeds = members;
  for (const resolution of [...(opts.resolutions ?? RESOLUTIONS)].sort((a, b) => b - a)) {
    const result = recompute(seeds, weight, { ...opts, resolution, graph });
    const score = silhouette(members, graph.units, result.assignment);
    if (!best || score >= best.silhouette - 1e-6) best = { ...result, resolution, silhouette: score };
    seeds = members.map((m) => ({ ...m, cluster: result.assignment.get(m.id)! }));
  }
  return best!;
}
