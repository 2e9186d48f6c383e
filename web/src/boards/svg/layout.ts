// Where to draw the nodes of a map given only as a graph (Glow's journey boards: spots or
// islands and the links between them; the view holds no coordinates). Stress
// majorization (Gansner, Koren and North): node distances on paper follow the number of
// links between them, from a classical MDS start, so a path reads as a path. It is
// deterministic (the same graph is always drawn the same way) and memoized per graph.

export interface Laid {
  /** Node id -> position inside (0, 0)-(w, h). */
  at: Map<number, [number, number]>;
  w: number;
  h: number;
}

const cache = new Map<string, Laid>();

/** `nodes` and `edges` laid out in a `w` x `h` box with `pad` units of margin. */
export function layoutGraph(nodes: readonly number[], edges: readonly [number, number][], w: number, h: number, pad: number, minGap: number): Laid {
  const key = `${w}x${h}:${pad}:${minGap}:${nodes.join(",")}|${edges.map((e) => e.join("-")).join(",")}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const n = nodes.length;
  const index = new Map(nodes.map((id, i) => [id, i]));
  const adj: number[][] = nodes.map(() => []);
  for (const [a, b] of edges) {
    const i = index.get(a);
    const j = index.get(b);
    if (i === undefined || j === undefined || i === j) continue;
    adj[i]!.push(j);
    adj[j]!.push(i);
  }
  // Hop distances (a node not reached is put a little beyond the farthest).
  const d: number[][] = nodes.map((_, s) => {
    const dist = new Array<number>(n).fill(-1);
    dist[s] = 0;
    const queue = [s];
    for (let q = 0; q < queue.length; q++) {
      const u = queue[q]!;
      for (const v of adj[u]!) {
        if (dist[v] === -1) {
          dist[v] = dist[u]! + 1;
          queue.push(v);
        }
      }
    }
    return dist;
  });
  const far = Math.max(1, ...d.flat()) + 1;
  for (const row of d) for (let j = 0; j < n; j++) if (row[j] === -1) row[j] = far;
  const pos = classicalMds(d);
  // SMACOF, node by node, weights 1/d^2.
  for (let iter = 0; iter < 250; iter++) {
    for (let i = 0; i < n; i++) {
      let sx = 0;
      let sy = 0;
      let sw = 0;
      for (let j = 0; j < n; j++) {
        if (i === j) continue;
        const dij = d[i]![j]!;
        const wij = 1 / (dij * dij);
        const dx = pos[i]![0] - pos[j]![0];
        const dy = pos[i]![1] - pos[j]![1];
        const len = Math.hypot(dx, dy) || 1e-6;
        sx += wij * (pos[j]![0] + (dij * dx) / len);
        sy += wij * (pos[j]![1] + (dij * dy) / len);
        sw += wij;
      }
      if (sw > 0) pos[i] = [sx / sw, sy / sw];
    }
  }
  // The longer side across; then scaled into the box.
  let [minX, maxX, minY, maxY] = bounds(pos);
  if ((maxY - minY > maxX - minX) !== h > w) {
    for (const p of pos) p.reverse();
    [minX, maxX, minY, maxY] = bounds(pos);
  }
  const sx = (w - 2 * pad) / Math.max(1e-6, maxX - minX);
  const sy = (h - 2 * pad) / Math.max(1e-6, maxY - minY);
  const at = new Map<number, [number, number]>();
  const placed = pos.map(([x, y]): [number, number] => [pad + (x - minX) * sx, pad + (y - minY) * sy]);
  separate(placed, minGap, w, h, pad);
  nodes.forEach((id, i) => at.set(id, placed[i]!));
  const laid = { at, w, h };
  cache.set(key, laid);
  return laid;
}

function bounds(pos: number[][]): [number, number, number, number] {
  const xs = pos.map((p) => p[0]!);
  const ys = pos.map((p) => p[1]!);
  return [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
}

/** The two leading eigenvectors of the double-centred squared distances (power iteration). */
function classicalMds(d: number[][]): number[][] {
  const n = d.length;
  const b = d.map((row) => row.map((v) => -0.5 * v * v));
  const rowMean = b.map((row) => row.reduce((s, v) => s + v, 0) / n);
  const all = rowMean.reduce((s, v) => s + v, 0) / n;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) b[i]![j] = b[i]![j]! - rowMean[i]! - rowMean[j]! + all;
  const vectors: number[][] = [];
  const values: number[] = [];
  for (let k = 0; k < 2; k++) {
    let v = Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + k * 78.233) + 0.01 * i);
    let lambda = 0;
    for (let iter = 0; iter < 200; iter++) {
      const next = b.map((row) => row.reduce((s, x, j) => s + x * v[j]!, 0));
      // Deflate what the earlier vectors explain.
      vectors.forEach((u, m) => {
        const dot = u.reduce((s, x, j) => s + x * v[j]!, 0);
        for (let i = 0; i < n; i++) next[i] = next[i]! - values[m]! * dot * u[i]!;
      });
      const norm = Math.hypot(...next) || 1;
      lambda = norm;
      v = next.map((x) => x / norm);
    }
    vectors.push(v);
    values.push(lambda);
  }
  return Array.from({ length: n }, (_, i) => [vectors[0]![i]! * Math.sqrt(values[0]!), vectors[1]![i]! * Math.sqrt(values[1]!)]);
}

/** Push apart nodes closer than `gap`, staying inside the box. */
function separate(pos: [number, number][], gap: number, w: number, h: number, pad: number): void {
  for (let round = 0; round < 60; round++) {
    let moved = false;
    for (let i = 0; i < pos.length; i++) {
      for (let j = i + 1; j < pos.length; j++) {
        const a = pos[i]!;
        const b = pos[j]!;
        let dx = b[0] - a[0];
        let dy = b[1] - a[1];
        let len = Math.hypot(dx, dy);
        if (len >= gap) continue;
        if (len < 1e-3) {
          dx = 1;
          dy = 0.5;
          len = Math.hypot(dx, dy);
        }
        const push = (gap - len) / 2;
        a[0] -= (dx / len) * push;
        a[1] -= (dy / len) * push;
        b[0] += (dx / len) * push;
        b[1] += (dy / len) * push;
        moved = true;
      }
    }
    for (const p of pos) {
      p[0] = Math.min(w - pad, Math.max(pad, p[0]));
      p[1] = Math.min(h - pad, Math.max(pad, p[1]));
    }
    if (!moved) break;
  }
}
