// Groups as flat, indented choices for select boxes and labels (groups are not scope-filtered, spec 4.6 rule 4).
import type { DB } from '../../db/open';
import { getGroupTree, type GroupTreeNode } from '../../features/groups/groups.service';
import type { Scope } from '../../identity/principal';

export interface GroupOption {
  id: number;
  label: string;
  path: string;
}

export function groupOptions(db: DB, scope: Scope): GroupOption[] {
  const out: GroupOption[] = [];
  const walk = (nodes: GroupTreeNode[], prefix: string, depth: number) => {
    for (const n of nodes) {
      const path = prefix ? `${prefix} / ${n.name}` : n.name;
      out.push({ id: n.id, label: `${'  '.repeat(depth)}${n.name}`.replace(/ /g, '\u00a0'), path });
      walk(n.children, path, depth + 1);
    }
  };
  walk(getGroupTree(db, scope, false), '', 0);
  return out;
}

export function groupPaths(options: GroupOption[]): Map<number, string> {
  return new Map(options.map((o) => [o.id, o.path]));
}
