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

/**
 * Spherical k-means seeded with the current clusters, then merges of near-duplicate clusters.
 * `newId` names clusters formed for issues no seed is similar enough to. Linear in the number of
 * issues times clusters times rounds.
 */
export function recompute(
  members: Member[],
  weight: Weight,
  opts: { threshold: number; mergeThreshold: number; rounds?: number; newId: () => string },
): Recomputed {
  const norms = new Map(members.map((m) => [m.id, weightedNorm(m.vector, weight)]));
  const assignment = new Map<string, string>();
  // Seeds: the current clusters, rebuilt from their members (issues without a cluster join later).
  const sums = new Map<string, { vector: SparseVector; size: number }>();
  for (const m of members) {
    if (!m.cluster) continue;
    const sum = sums.get(m.cluster) ?? { vector: {}, size: 0 };
    addInto(sum.vector, m.vector);
    sum.size++;
    sums.set(m.cluster, sum);
  }
  let centroids = new Map([...sums].map(([id, s]) => [id, centroidOf(id, prune(s.vector, CENTROID_TERMS, weight), s.size, weight)]));
  const rounds = opts.rounds ?? 6;
  for (let round = 0; round < rounds; round++) {
    let moved = 0;
    const next = new Map<string, { vector: SparseVector; size: number }>();
    for (const m of members) {
      const norm = norms.get(m.id)!;
      const best = nearest(m.vector, norm, centroids.values(), weight);
      let target: string;
      if (best && best.similarity >= opts.threshold) target = best.centroid.id;
      else if (assignment.has(m.id) && centroids.has(assignment.get(m.id)!)) target = assignment.get(m.id)!;
      else {
        // Nothing is similar enough: a cluster of its own, which later issues may join.
        target = opts.newId();
        centroids.set(target, centroidOf(target, { ...m.vector }, 1, weight));
      }
      if (assignment.get(m.id) !== target) moved++;
      assignment.set(m.id, target);
      const sum = next.get(target) ?? { vector: {}, size: 0 };
      addInto(sum.vector, m.vector);
      sum.size++;
      next.set(target, sum);
    }
    centroids = new Map([...next].map(([id, s]) => [id, centroidOf(id, prune(s.vector, CENTROID_TERMS, weight), s.size, weight)]));
    if (moved === 0) break;
  }
  // Merge near-duplicates, largest first: the larger keeps its id.
  const bySize = [...centroids.values()].sort((a, b) => b.size - a.size);
  const mergedInto = new Map<string, string>();
  const kept: Centroid[] = [];
  for (const c of bySize) {
    const best = nearest(c.vector, c.norm, kept, weight);
    if (best && best.similarity >= opts.mergeThreshold) {
      addInto(best.centroid.vector, c.vector);
      best.centroid.size += c.size;
      best.centroid.vector = prune(best.centroid.vector, CENTROID_TERMS, weight);
      best.centroid.norm = weightedNorm(best.centroid.vector, weight);
      mergedInto.set(c.id, best.centroid.id);
    } else {
      kept.push(c);
    }
  }
  for (const [issue, cluster] of assignment) {
    const into = mergedInto.get(cluster);
    if (into) assignment.set(issue, into);
  }
  return { assignment, centroids: new Map(kept.map((c) => [c.id, c])) };
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
