// Values generated from the published OpenAPI document with a seeded PRNG: valid ones, and ones that break exactly one documented constraint.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON Schema nodes of every shape are read here
export type Schema = Record<string, any>;

/** A small seeded PRNG (mulberry32): the same seed gives the same sequence of requests. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)];
  }
}

/** Ids of records that exist, by the name of the field or path parameter that refers to them (compliance rules have text ids). */
export type IdPool = Record<'group_id' | 'credential_id' | 'template_id' | 'device_id' | 'waiver_id' | 'source_id' | 'collector_id', number[]> & {
  rule_id: string[];
  token_id: string[];
};

const ALPHABETS = [
  'abcdefghijklmnopqrstuvwxyz0123456789',
  'abcdefghijklmnopqrstuvwxyz0123456789._-',
  'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 -_./:',
  // Beyond ASCII: a two-unit emoji and an astral letter count as one character each, as JSON Schema counts them.
  'aé中\u{1F600}\u{10348}Z ',
];

/** A constraint one generated value breaks, and the value. */
export interface Broken {
  value: unknown;
  why: string;
}

const characters = (s: string) => [...s].length;

export class SchemaGen {
  constructor(
    private readonly doc: Schema,
    private readonly rng: Rng,
    private readonly ids: IdPool,
  ) {}

  resolve(s: Schema): Schema {
    let node = s;
    while (node && typeof node.$ref === 'string') {
      node = node.$ref
        .slice(2)
        .split('/')
        .reduce((n: Schema, k: string) => n[k.replace(/~1/g, '/').replace(/~0/g, '~')] as Schema, this.doc);
    }
    return node ?? {};
  }

  /** The schema's branches when it is a union (anyOf/oneOf, or a type list), else null. */
  private branches(s: Schema): Schema[] | null {
    if (Array.isArray(s.anyOf)) return s.anyOf as Schema[];
    if (Array.isArray(s.oneOf)) return s.oneOf as Schema[];
    if (Array.isArray(s.type)) return (s.type as string[]).map((type) => ({ ...s, type }));
    return null;
  }

  private allowsNull(s: Schema): boolean {
    const b = this.branches(s);
    return s.type === 'null' || (b !== null && b.some((x) => this.resolve(x).type === 'null'));
  }

  /** A value the document accepts; `field` names what it is for (id fields draw from the pool of existing records). */
  valid(schema: Schema, field = ''): unknown {
    const s = this.resolve(schema);
    const b = this.branches(s);
    if (b) {
      const nonNull = b.filter((x) => this.resolve(x).type !== 'null');
      if (nonNull.length < b.length && this.rng.chance(0.15)) return null;
      // An id field that also takes a word (DeviceCreate's credential_id and template_id may be "auto") mostly gets an
      // id from the pool, as integrations send: the word's path (detection at a made-up address) is a 422 every time.
      const pool = (this.ids as Record<string, unknown[] | undefined>)[field];
      const ids = pool?.length
        ? nonNull.filter((x) => this.resolve(x).type === typeof pool[0] || (typeof pool[0] === 'number' && this.resolve(x).type === 'integer'))
        : [];
      if (ids.length && this.rng.chance(0.9)) return this.valid(this.rng.pick(ids), field);
      return this.valid(this.rng.pick(nonNull.length ? nonNull : b), field);
    }
    if (Array.isArray(s.allOf)) return this.valid({ ...s, allOf: undefined, ...this.resolve(s.allOf[0] as Schema) }, field);
    if (Array.isArray(s.enum)) return this.rng.pick(s.enum as unknown[]);
    switch (s.type) {
      case 'object':
        return this.validObject(s);
      case 'array': {
        const min = (s.minItems as number | undefined) ?? 0;
        const max = Math.min((s.maxItems as number | undefined) ?? min + 3, min + 3);
        const n = this.rng.int(min, max);
        const itemField = field === 'group_ids' ? 'group_id' : field;
        return Array.from({ length: n }, () => this.valid((s.items as Schema) ?? {}, itemField));
      }
      case 'string': {
        const pool = (this.ids as Record<string, unknown[] | undefined>)[field];
        if (pool?.length && typeof pool[0] === 'string' && this.rng.chance(0.8)) return this.rng.pick(pool);
        return this.validString(s);
      }
      case 'integer':
      case 'number':
        return this.validNumber(s, field);
      case 'boolean':
        return this.rng.chance(0.5);
      case 'null':
        return null;
      default:
        return 'x';
    }
  }

  private validObject(s: Schema): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const required = new Set((s.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries((s.properties as Record<string, Schema> | undefined) ?? {})) {
      if (this.resolve(prop).readOnly) continue;
      if (required.has(name) || this.rng.chance(0.5)) out[name] = this.valid(prop, name);
    }
    if (typeof s.additionalProperties === 'object' && this.rng.chance(0.3)) out[`k${this.rng.int(0, 99)}`] = this.valid(s.additionalProperties as Schema);
    return out;
  }

  private validNumber(s: Schema, field: string): number {
    const pool = (this.ids as Record<string, number[] | undefined>)[field];
    if (pool?.length && this.rng.chance(0.8)) return this.rng.pick(pool);
    const min = (s.minimum as number | undefined) ?? 0;
    const max = (s.maximum as number | undefined) ?? min + 1000;
    // The bounds themselves are where a document and a server most often disagree.
    if (this.rng.chance(0.15)) return this.rng.chance(0.5) ? min : max;
    return Math.min(max, min + this.rng.int(0, 1000));
  }

  private validString(s: Schema): string {
    if (s.format === 'uuid') return this.uuid();
    const min = (s.minLength as number | undefined) ?? 0;
    const max = (s.maxLength as number | undefined) ?? min + 40;
    const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : null;
    const fits = (v: string) => characters(v) >= min && characters(v) <= max && (!pattern || pattern.test(v));
    if (typeof s.example === 'string' && this.rng.chance(0.4) && fits(s.example)) return s.example;
    for (let attempt = 0; attempt < 20; attempt++) {
      const alphabet = [...this.rng.pick(ALPHABETS)];
      // Now and then exactly the maximum, in characters.
      const n = this.rng.chance(0.1) ? max : this.rng.int(min, Math.min(max, min + 24));
      let v = '';
      for (let i = 0; i < n; i++) v += this.rng.pick(alphabet);
      if (fits(v)) return v;
    }
    return typeof s.example === 'string' && fits(s.example) ? s.example : 'a'.repeat(Math.max(min, 1));
  }

  uuid(): string {
    const hex = () => this.rng.int(0, 15).toString(16);
    const part = (n: number) => Array.from({ length: n }, hex).join('');
    return `${part(8)}-${part(4)}-4${part(3)}-a${part(3)}-${part(12)}`;
  }

  /** A value that breaks one documented constraint of the schema, or null when the generator knows none to break. */
  invalid(schema: Schema, field = ''): Broken | null {
    const s = this.resolve(schema);
    const b = this.branches(s);
    if (b) {
      const nonNull = b.map((x) => this.resolve(x)).filter((x) => x.type !== 'null');
      if (nonNull.length !== 1) return null;
      const broken = this.invalid({ ...nonNull[0], type: nonNull[0].type }, field);
      // null would be valid here: a broken value of the other branch is a broken value of the union.
      return broken && broken.value !== null ? broken : null;
    }
    const options: (() => Broken | null)[] = [];
    if (!this.allowsNull(s) && s.type !== undefined) options.push(() => ({ value: null, why: 'null where the type is not nullable' }));
    switch (s.type) {
      case 'object':
        options.push(() => this.invalidObject(s));
        options.push(() => ({ value: ['not', 'an', 'object'], why: 'an array where an object is documented' }));
        break;
      case 'array':
        options.push(() => ({ value: 'not an array', why: 'a string where an array is documented' }));
        if (typeof s.maxItems === 'number' && s.maxItems <= 1000)
          options.push(() => ({ value: Array.from({ length: (s.maxItems as number) + 1 }, () => this.valid(s.items as Schema, field)), why: 'over maxItems' }));
        if (typeof s.minItems === 'number' && s.minItems > 0) options.push(() => ({ value: [], why: 'under minItems' }));
        options.push(() => {
          const item = this.invalid(s.items as Schema, field === 'group_ids' ? 'group_id' : field);
          return item && { value: [item.value], why: `an item: ${item.why}` };
        });
        break;
      case 'string':
        options.push(() => ({ value: 12345, why: 'a number where a string is documented' }));
        if (typeof s.maxLength === 'number') options.push(() => ({ value: '\u{1F600}'.repeat((s.maxLength as number) + 1), why: 'over maxLength' }));
        if (typeof s.minLength === 'number' && s.minLength > 0) options.push(() => ({ value: '', why: 'under minLength' }));
        if (Array.isArray(s.enum)) options.push(() => ({ value: 'zz-not-an-option', why: 'not one of the enum' }));
        if (typeof s.pattern === 'string') options.push(() => this.patternBreaker(s));
        break;
      case 'integer':
      case 'number':
        options.push(() => ({ value: 'seven', why: 'a string where a number is documented' }));
        if (s.type === 'integer') options.push(() => ({ value: 1.5, why: 'not an integer' }));
        if (typeof s.minimum === 'number') options.push(() => ({ value: (s.minimum as number) - 1, why: 'under minimum' }));
        if (typeof s.maximum === 'number') options.push(() => ({ value: (s.maximum as number) + 1, why: 'over maximum' }));
        break;
      case 'boolean':
        options.push(() => ({ value: 'yes', why: 'a string where a boolean is documented' }));
        break;
    }
    for (let tries = 0; tries < 4 && options.length; tries++) {
      const broken = this.rng.pick(options)();
      if (broken) return broken;
    }
    return null;
  }

  private invalidObject(s: Schema): Broken | null {
    const value = this.validObject(s);
    const required = (s.required as string[] | undefined) ?? [];
    const choices: (() => Broken | null)[] = [];
    if (s.additionalProperties === false) choices.push(() => ({ value: { ...value, zz_unknown_field: 1 }, why: 'an unknown field' }));
    if (required.length)
      choices.push(() => {
        const name = this.rng.pick(required);
        const { [name]: _dropped, ...rest } = value;
        return { value: rest, why: `required ${name} missing` };
      });
    const props = Object.entries((s.properties as Record<string, Schema> | undefined) ?? {}).filter(([, p]) => !this.resolve(p).readOnly);
    if (props.length)
      choices.push(() => {
        const [name, prop] = this.rng.pick(props);
        const broken = this.invalid(prop, name);
        return broken && { value: { ...value, [name]: broken.value }, why: `${name}: ${broken.why}` };
      });
    return choices.length ? this.rng.pick(choices)() : null;
  }

  /** A string within the length bounds that the pattern refuses (control characters, blank, a line break, upper case). */
  private patternBreaker(s: Schema): Broken | null {
    const pattern = new RegExp(s.pattern as string, 'u');
    const min = (s.minLength as number | undefined) ?? 0;
    const max = (s.maxLength as number | undefined) ?? Infinity;
    const candidates = ['bell\u0007', 'c1\u0085x', '   ', 'two\nlines', 'UPPER', '-lead', 'sp ace', 'x'.repeat(3), '0'];
    const fits = candidates.filter((c) => characters(c) >= min && characters(c) <= max && !pattern.test(c));
    return fits.length ? { value: this.rng.pick(fits), why: `does not match ${s.pattern as string}` } : null;
  }
}
