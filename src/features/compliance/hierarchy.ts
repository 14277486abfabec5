// A configuration's hierarchy, one parser with a mode per platform family: indentation (IOS, EOS, NX-OS), braces (PAN-OS, Junos curly), set paths (Junos, VyOS), FortiOS blocks.

export type HierarchyMode = 'indent' | 'braces' | 'set' | 'fortios';

/** One statement of the configuration. `path` is the statement's words from the top, for the path-based modes. */
export interface ConfigNode {
  /** The statement as written, trimmed (braces mode: without its trailing "{" or ";"). */
  text: string;
  /** 1-based line in the stored text. */
  line: number;
  parent: ConfigNode | null;
  children: ConfigNode[];
  /** braces and set modes: the statement's full path ("system services ssh"); otherwise its text. */
  path: string;
  /** The text with runs of spaces made one (how golden snippets compare statements), computed on first use. */
  key?: string;
}

/** A statement's text as golden snippets compare it: runs of whitespace made one space, trimmed. */
export function nodeKey(n: ConfigNode): string {
  n.key ??= n.text.replace(/\s+/g, ' ').trim();
  return n.key;
}

export interface Hierarchy {
  mode: HierarchyMode;
  /** The top-level statements. */
  roots: ConfigNode[];
  /** Every statement in text order. */
  nodes: ConfigNode[];
}

/**
 * The hierarchy mode of each built-in template that is not indentation-based. A template file has no field for it
 * (the template library is shared by other features): a template not named here is read by indentation, the form
 * most platforms print.
 */
export const TEMPLATE_MODES: Readonly<Record<string, HierarchyMode>> = {
  'juniper-junos': 'set', // `show configuration | display set`
  vyos: 'set', // `show configuration commands`
  'paloalto-panos': 'braces',
  'fortinet-fortios': 'fortios',
};

/** The mode for a template; a Junos text captured without `display set` (braces) is recognised as such. */
export function modeFor(template: string | null, text: string): HierarchyMode {
  const mode = (template !== null && TEMPLATE_MODES[template]) || 'indent';
  if (mode === 'set' && !/^\s*set\s/m.test(text) && /\{\s*$/m.test(text)) return 'braces';
  return mode;
}

const COMMENT: Record<HierarchyMode, RegExp> = {
  indent: /^\s*(!|$)/,
  braces: /^\s*(#|\/\*|\*|$)/,
  set: /^\s*(#|$)/,
  fortios: /^\s*(#|$)/,
};

export function splitLines(text: string): string[] {
  return text.replace(/\r\n/g, '\n').split('\n');
}

/** The hierarchy of `text` read in `mode`. Never throws: a line the mode cannot place becomes a top-level statement. */
export function parseHierarchy(text: string, mode: HierarchyMode): Hierarchy {
  const lines = splitLines(text);
  const h: Hierarchy = { mode, roots: [], nodes: [] };
  if (mode === 'indent') parseIndent(lines, h);
  else if (mode === 'braces') parseBlocks(lines, h, COMMENT.braces, BRACES);
  else if (mode === 'set') parseSet(lines, h);
  else parseBlocks(lines, h, COMMENT.fortios, FORTIOS);
  return h;
}

function add(h: Hierarchy, parent: ConfigNode | null, text: string, line: number, path = text): ConfigNode {
  const node: ConfigNode = { text, line, parent, children: [], path };
  (parent ? parent.children : h.roots).push(node);
  h.nodes.push(node);
  return node;
}

function parseIndent(lines: string[], h: Hierarchy): void {
  const stack: { indent: number; node: ConfigNode }[] = [];
  lines.forEach((raw, i) => {
    if (COMMENT.indent.test(raw)) return;
    const indent = raw.length - raw.trimStart().length;
    while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
    const node = add(h, stack.length ? stack[stack.length - 1].node : null, raw.trim(), i + 1);
    stack.push({ indent, node });
  });
}

/** How a block-structured mode reads one trimmed line: whether it closes the open block, opens one, and its text. */
interface BlockSyntax {
  closes(t: string): boolean;
  opens(t: string): boolean;
  text(t: string): string;
  /** The statement's path includes its parents' (braces); otherwise it is its text (FortiOS). */
  paths: boolean;
}

const BRACES: BlockSyntax = {
  closes: (t) => t === '}' || t === '};',
  opens: (t) => t.endsWith('{'),
  text: (t) => t.replace(/\s*[{;]\s*$/, '').replace(/;\s*(#.*)?$/, ''),
  paths: true,
};

/** FortiOS: `config X` and `edit N` open a block, `end` and `next` close it, `set`/`unset` are its statements. */
const FORTIOS: BlockSyntax = {
  closes: (t) => t === 'end' || t === 'next',
  opens: (t) => /^(config|edit)\s/.test(t),
  text: (t) => t,
  paths: false,
};

function parseBlocks(lines: string[], h: Hierarchy, comment: RegExp, syntax: BlockSyntax): void {
  const stack: ConfigNode[] = [];
  lines.forEach((raw, i) => {
    if (comment.test(raw)) return;
    const t = raw.trim();
    if (syntax.closes(t)) {
      stack.pop();
      return;
    }
    const text = syntax.text(t);
    const parent = stack.length ? stack[stack.length - 1] : null;
    const node = add(h, parent, text, i + 1, syntax.paths && parent ? `${parent.path} ${text}` : text);
    if (syntax.opens(t)) stack.push(node);
  });
}

/** `set a b c` lines as a tree of words: every prefix is a section ("a", "a b"), the whole line its leaf. */
function parseSet(lines: string[], h: Hierarchy): void {
  const index = new Map<string, ConfigNode>();
  lines.forEach((raw, i) => {
    if (COMMENT.set.test(raw)) return;
    const words = raw.trim().split(/\s+/);
    if (words[0] !== 'set') {
      add(h, null, raw.trim(), i + 1);
      return;
    }
    let parent: ConfigNode | null = null;
    for (let w = 1; w < words.length; w++) {
      const path = words.slice(1, w + 1).join(' ');
      let node = index.get(path);
      if (!node) {
        node = add(h, parent, words[w], i + 1, path);
        index.set(path, node);
      }
      parent = node;
    }
  });
}

/** The statement's text relative to `ancestor`: its own text in the line-based modes, its path below it in the path-based ones. */
export function relativeText(node: ConfigNode, ancestor: ConfigNode, mode: HierarchyMode): string {
  if (mode === 'indent' || mode === 'fortios') return node.text;
  return node.path.slice(ancestor.path.length + 1);
}

/** Every statement below `node`, depth first. */
export function descendants(node: ConfigNode): ConfigNode[] {
  const out: ConfigNode[] = [];
  const walk = (n: ConfigNode) => {
    for (const c of n.children) {
      out.push(c);
      walk(c);
    }
  };
  walk(node);
  return out;
}

/** The statements from the top down to `node`'s parent. */
export function ancestorsOf(node: ConfigNode): ConfigNode[] {
  const out: ConfigNode[] = [];
  for (let p = node.parent; p; p = p.parent) out.unshift(p);
  return out;
}
