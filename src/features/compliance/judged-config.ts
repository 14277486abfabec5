// A configuration as the checks see it: its text indexed by line, its hierarchy parsed on first use, the device it belongs to.
import { descendants, modeFor, parseHierarchy, relativeText, type ConfigNode, type Hierarchy, type HierarchyMode } from './hierarchy';
import { LineIndex, firstWord } from './line-index';

/** A line the rule objects to (1-based line number; null for something missing). */
export interface FailingLine {
  line: number | null;
  text: string;
  message: string;
}

/** What a configuration is judged with besides its text: the device, its group and template. */
export interface DeviceContext {
  name: string;
  hostname: string;
  template: string | null;
  /** "dc/core": the device's group and its ancestors, top first; "" for an ungrouped device. */
  group_path: string;
  custom: Record<string, string>;
}

/** A statement inside a section: its text relative to the section and that text's first word. */
export interface Inside {
  node: ConfigNode;
  text: string;
  word: string;
}

/** One configuration being judged: its lines indexed once, its hierarchy parsed on first use. */
export class JudgedConfig {
  readonly index: LineIndex;
  readonly mode: HierarchyMode;
  private tree: Hierarchy | null = null;
  private readonly within = new Map<ConfigNode, Inside[]>();
  private readonly words = new Map<ConfigNode, string>();

  constructor(
    readonly text: string,
    readonly ctx: DeviceContext,
  ) {
    this.index = new LineIndex(text);
    this.mode = modeFor(ctx.template, text);
  }

  get hierarchy(): Hierarchy {
    this.tree ??= parseHierarchy(this.text, this.mode);
    return this.tree;
  }

  /** The statements inside a section with their text relative to it, computed once per section (many rules read them). */
  inside(section: ConfigNode): Inside[] {
    let list = this.within.get(section);
    if (!list) {
      list = descendants(section).map((node) => {
        const text = relativeText(node, section, this.mode);
        return { node, text, word: firstWord(text) };
      });
      this.within.set(section, list);
    }
    return list;
  }

  /** The first word of a statement's header text (indent and FortiOS) or path (braces, set), computed once. */
  headerWord(node: ConfigNode): string {
    let w = this.words.get(node);
    if (w === undefined) {
      w = firstWord(this.mode === 'indent' || this.mode === 'fortios' ? node.text : node.path);
      this.words.set(node, w);
    }
    return w;
  }
}
