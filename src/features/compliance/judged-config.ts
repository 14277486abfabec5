// A configuration as the checks see it: its text indexed by line, its hierarchy parsed on first use, the device it belongs to.
import { modeFor, parseHierarchy, type Hierarchy, type HierarchyMode } from './hierarchy';
import { LineIndex } from './line-index';

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

/** One configuration being judged: its lines indexed once, its hierarchy parsed on first use. */
export class JudgedConfig {
  readonly index: LineIndex;
  readonly mode: HierarchyMode;
  private tree: Hierarchy | null = null;

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
}

