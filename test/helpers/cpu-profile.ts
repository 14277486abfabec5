// Reading a V8 CPU profile (node --cpu-prof): where a thread spent its time, by the code's file.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The main thread's profile (thread id 0 in the file name) that `node --cpu-prof --cpu-prof-dir=DIR` wrote for `pid`. */
export function mainThreadProfile(dir: string, pid: number): string | null {
  const file = readdirSync(dir).find((f) => f.includes(`.${pid}.0.`) && f.endsWith('.cpuprofile'));
  return file ? path.join(dir, file) : null;
}

/**
 * Milliseconds the profiled thread spent inside code from a file whose URL contains `urlPart`, including what that
 * code called (native crypto, Buffer work), leaving out the module's loading (a sample under node:internal/modules):
 * what that code cost once the program was running.
 */
export function timeInCode(profileFile: string, urlPart: string): number {
  const p = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** A sample at this node counts: one of its frames is the code's, none is a module being loaded. */
  const inCode = (id: number): boolean => {
    let found = false;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)?.callFrame.url ?? '';
      if (url.startsWith('node:internal/modules')) return false;
      found ||= url.includes(urlPart);
    }
    return found;
  };
  const counts = new Map<number, boolean>();
  let us = 0;
  p.samples.forEach((id, i) => {
    if (!counts.has(id)) counts.set(id, inCode(id));
    if (counts.get(id)) us += p.timeDeltas[i] ?? 0;
  });
  return us / 1000;
}
