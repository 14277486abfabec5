// RANCID's .cloginrc: the `add user`, `add password` and `add method` lines, as the login of a device name.
import type { RawLogin } from './devices-csv';

interface Directive {
  kind: 'user' | 'password' | 'method';
  glob: RegExp;
  args: string[];
}

/** Tcl's `string match`: `*`, `?` and `[...]`, case-insensitive as clogin compares host names. */
function globPattern(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += `[${glob.slice(i + 1, end).replace(/[\\^]/g, '\\$&')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'i');
}

/** The words of a Tcl line: plain words, `{braced words}` (kept as written) and `"quoted words"`. */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /\{([^}]*)\}|"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) out.push(m[1] ?? m[2]?.replace(/\\(.)/g, '$1') ?? m[3]);
  return out;
}

/**
 * The logins a .cloginrc gives, looked up by device name. As clogin reads it, the first line whose glob matches the
 * name wins for each of user, password (and its second word, the enable password) and method (the first of ssh or
 * telnet it lists). Other directives (autoenable, cyphertype, include ...) are read past.
 */
export function cloginrcLogins(text: string): (name: string) => (RawLogin & { protocol?: string }) | undefined {
  const directives: Directive[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const w = words(raw.trim());
    if (w[0] !== 'add' || !['user', 'password', 'method'].includes(w[1]) || w.length < 4) continue;
    directives.push({ kind: w[1] as Directive['kind'], glob: globPattern(w[2]), args: w.slice(3) });
  }
  const first = (kind: Directive['kind'], name: string) => directives.find((d) => d.kind === kind && d.glob.test(name))?.args;
  return (name) => {
    const user = first('user', name);
    const password = first('password', name);
    const method = first('method', name)?.find((m) => m === 'ssh' || m === 'telnet');
    if (!user && !password) return undefined;
    return { username: user?.[0], password: password?.[0], enable_secret: password?.[1], ...(method ? { protocol: method } : {}) };
  };
}
