// Golden snippets: the snippet's lines must be present under their parent section; missing and extra lines, remediation commands generated from the hierarchy, and those commands applied to a text.
import type { ComplianceRule } from './compliance-rule.schemas';
import type { FailingLine, JudgedConfig, DeviceContext } from './judged-config';
import { ancestorsOf, nodeKey, parseHierarchy, splitLines, type ConfigNode, type Hierarchy, type HierarchyMode } from './hierarchy';
import { compileRulePattern, patternMatches, type RulePattern } from './line-index';

export interface CompiledGolden {
  snippet: string;
  extra: RulePattern | null;
  /** The last snippet parsed, by its filled-in text and mode: devices of a fleet mostly fill it in alike. */
  parsed: { key: string; tree: Hierarchy } | null;
}

export function compileGolden(c: Extract<ComplianceRule['check'], { kind: 'golden' }>): CompiledGolden {
  return { snippet: c.snippet, extra: c.extra_match ? compileRulePattern(c.extra_match) : null, parsed: null };
}

function snippetTree(g: CompiledGolden, ctx: DeviceContext, mode: HierarchyMode): Hierarchy {
  const text = fillVariables(g.snippet, ctx);
  const key = `${mode}\0${text}`;
  if (g.parsed?.key !== key) g.parsed = { key, tree: parseHierarchy(text, mode) };
  return g.parsed.tree;
}

/** The snippet with the device's variables filled in; an unknown variable is left as written (it then shows as missing). */
export function fillVariables(snippet: string, ctx: DeviceContext): string {
  return snippet.replace(/\{\{\s*([a-z_]+)\.([A-Za-z0-9_-]+)\s*\}\}/g, (whole, scope: string, key: string) => {
    if (scope === 'device' && key === 'name') return ctx.name;
    if (scope === 'device' && key === 'hostname') return ctx.hostname;
    if (scope === 'group' && key === 'path') return ctx.group_path;
    if (scope === 'custom' && Object.hasOwn(ctx.custom, key)) return ctx.custom[key];
    return whole;
  });
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

/** A statement's key among its siblings: its text (line-based modes) or its word (path modes), spaces collapsed. */
const keyOf = nodeKey;

/** Statements by key, built once per list of siblings of a configuration (every golden rule reads the same lists). */
const siblingIndex = new WeakMap<ConfigNode[], Map<string, ConfigNode>>();
function indexOf(list: ConfigNode[]): Map<string, ConfigNode> {
  let m = siblingIndex.get(list);
  if (!m) {
    m = new Map();
    for (const n of list) if (!m.has(keyOf(n))) m.set(keyOf(n), n);
    siblingIndex.set(list, m);
  }
  return m;
}

/** The command removing a statement, where the platform has one. */
function negation(mode: HierarchyMode, n: ConfigNode): string | null {
  if (mode === 'set' || mode === 'braces') return `delete ${n.path}`;
  if (mode === 'fortios') {
    const m = /^set\s+(\S+)/.exec(n.text);
    if (m) return `unset ${m[1]}`;
    const e = /^edit\s+(.+)$/.exec(n.text);
    return e ? `delete ${e[1]}` : null;
  }
  return n.text.startsWith('no ') ? n.text.slice(3) : `no ${n.text}`;
}

interface Change {
  kind: 'missing' | 'extra';
  node: ConfigNode;
  /** The parents of the statement, top first (snippet nodes for a missing line, configuration nodes for an extra one). */
  parents: ConfigNode[];
}

/** The snippet compared with the configuration: failing lines and the commands that fix them. */
export function judgeGolden(g: CompiledGolden, cfg: JudgedConfig): { failing: FailingLine[]; commands: string } {
  const mode = cfg.mode;
  const snippet = snippetTree(g, cfg.ctx, mode);
  const config = cfg.hierarchy;
  const changes: Change[] = [];
  const pathMode = mode === 'set' || mode === 'braces';
  if (pathMode) {
    // Path modes compare whole statements: every leaf path of the snippet must be one of the configuration's.
    const have = new Set(config.nodes.map((n) => norm(n.path)));
    for (const n of snippet.nodes) if (n.children.length === 0 && !have.has(norm(n.path))) changes.push({ kind: 'missing', node: n, parents: [] });
  } else {
    const walk = (want: ConfigNode[], got: ConfigNode[] | null, parents: ConfigNode[], section: boolean) => {
      const byKey = got ? indexOf(got) : null;
      for (const w of want) {
        const found = byKey?.get(keyOf(w)) ?? null;
        if (!found) changes.push({ kind: 'missing', node: w, parents });
        walk(w.children, found ? found.children : null, [...parents, w], true);
      }
      // Inside a section the snippet defines, the configuration may hold nothing else.
      if (section && got && want.length) {
        const wanted = indexOf(want);
        for (const n of got) if (!wanted.has(keyOf(n))) changes.push({ kind: 'extra', node: n, parents: ancestorsOf(n) });
      }
    };
    walk(snippet.roots, config.roots, [], false);
  }
  if (g.extra) {
    const wanted = new Set((pathMode ? snippet.nodes.map((n) => n.path) : snippet.roots.map((n) => n.text)).map(norm));
    const tops = pathMode ? config.nodes.filter((n) => n.children.length === 0) : config.roots;
    for (const n of tops) {
      const text = pathMode ? n.path : n.text;
      if (patternMatches(g.extra, pathMode ? cfg.index.lines[n.line - 1] : text) && !wanted.has(norm(text)))
        changes.push({ kind: 'extra', node: n, parents: [] });
    }
  }
  const failing = changes.map<FailingLine>((c) =>
    c.kind === 'missing'
      ? {
          line: null,
          text: pathMode ? c.node.path : c.node.text,
          message: `missing${c.parents.length ? ` under ${c.parents.map((p) => p.text).join(' > ')}` : ''}`,
        }
      : { line: c.node.line, text: pathMode ? c.node.path : c.node.text, message: 'not in the golden configuration' },
  );
  return { failing, commands: remediationCommands(changes, mode) };
}

/** Commands in the platform's own form: each change under its parents (entered once per run of changes sharing them). */
function remediationCommands(changes: readonly Change[], mode: HierarchyMode): string {
  const out: string[] = [];
  if (mode === 'set' || mode === 'braces') {
    for (const c of changes) out.push(c.kind === 'missing' ? `set ${c.node.path}` : (negation(mode, c.node) as string));
    return out.join('\n');
  }
  const open: string[] = [];
  const close = (depth: number) => {
    while (open.length > depth) {
      const header = open.pop() as string;
      if (mode === 'fortios') out.push(`${'    '.repeat(open.length)}${header.startsWith('edit ') ? 'next' : 'end'}`);
    }
  };
  // A missing section whose children are missing too is written once: its children follow under it.
  for (const c of changes) {
    const parents = c.parents.map((p) => p.text);
    let same = 0;
    while (same < open.length && same < parents.length && open[same] === parents[same]) same++;
    close(same);
    const pad = (d: number) => (mode === 'fortios' ? '    ' : ' ').repeat(d);
    for (const p of parents.slice(same)) {
      out.push(pad(open.length) + p);
      open.push(p);
    }
    const command = c.kind === 'missing' ? c.node.text : negation(mode, c.node);
    if (command === null) continue;
    out.push(pad(open.length) + command);
    if (c.kind === 'missing' && c.node.children.length) open.push(c.node.text);
  }
  close(0);
  if (mode === 'indent' && out.length) out.push('end');
  return out.join('\n');
}

/**
 * `commands` (as remediationCommands writes them) applied to a configuration text, as the device would: a line
 * enters or creates its section, `no X` (indent), `unset K` (FortiOS) or `delete P` (set) removes a statement.
 * The result is the configuration as the device would print it afterwards (comments dropped in the block modes).
 */
export function applyRemediation(text: string, commands: string, mode: HierarchyMode): string {
  if (mode === 'set' || mode === 'braces') {
    let lines = splitLines(text);
    for (const cmd of splitLines(commands).map((l) => l.trim())) {
      if (cmd.startsWith('delete ')) {
        const p = `set ${cmd.slice(7)}`;
        lines = lines.filter((l) => l.trim() !== p && !l.trim().startsWith(`${p} `));
      } else if (cmd.startsWith('set ') && !lines.some((l) => l.trim() === cmd)) lines.push(cmd);
    }
    return lines.join('\n');
  }
  const tree = parseHierarchy(text, mode);
  const root: ConfigNode = { text: '', line: 0, parent: null, children: tree.roots, path: '' };
  const stack: ConfigNode[] = [root];
  for (const raw of splitLines(commands)) {
    const cmd = raw.trim();
    if (!cmd || cmd === 'end' || cmd === 'next' || cmd.startsWith('!')) {
      if (mode === 'fortios' && (cmd === 'end' || cmd === 'next') && stack.length > 1) stack.pop();
      continue;
    }
    if (mode === 'indent') stack.length = Math.min(stack.length, raw.length - raw.trimStart().length + 1);
    const parent = stack[stack.length - 1];
    const remove = mode === 'indent' ? /^no\s+(.+)$/.exec(cmd) : /^(?:unset|delete)\s+(.+)$/.exec(cmd);
    if (remove) {
      const target = norm(remove[1]);
      parent.children = parent.children.filter((n) => {
        const key = mode === 'indent' ? keyOf(n) : norm(n.text.replace(/^(set|edit)\s+/, '')).split(' ')[0];
        return key !== (mode === 'indent' ? target : target.split(' ')[0]);
      });
      continue;
    }
    let node = parent.children.find((n) => keyOf(n) === norm(cmd));
    if (!node) {
      node = { text: cmd, line: 0, parent, children: [], path: cmd };
      parent.children.push(node);
    }
    if (mode === 'indent' || /^(config|edit)\s/.test(cmd)) stack.push(node);
  }
  const out: string[] = [];
  const write = (nodes: ConfigNode[], depth: number) => {
    for (const n of nodes) {
      out.push((mode === 'fortios' ? '    ' : ' ').repeat(depth) + n.text);
      write(n.children, depth + 1);
      if (mode === 'fortios' && /^(config|edit)\s/.test(n.text)) out.push('    '.repeat(depth) + (n.text.startsWith('edit ') ? 'next' : 'end'));
    }
  };
  write(root.children, 0);
  return out.join('\n');
}
