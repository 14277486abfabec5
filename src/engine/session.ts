// Prompt-driven conversation with a device CLI over any byte stream (SSH shell channel or Telnet socket); the login steps are in session-login.ts.
import { CollectError } from './types';
import { formatBytes } from '../lib/bytes';
import { ConfigStreamDecoder, type SourceEncoding } from '../lib/decode';
import { TerminalScreen, dropEcho } from './normalise';
import type { LinePattern } from '../lib/re2';
import { defaultVocabulary, escapeRegex, type SessionVocabulary } from './prompts';
import { formatSeconds } from './transports/tcp';
import type { SessionOptions, TerminalStream, WaitOptions, WaitStep } from './session-types';
import type { CapturedOutput } from './captured-output';

export type { SessionOptions, TerminalStream, WaitOptions, WaitStep } from './session-types';

/**
 * Quiet time after a prompt that is almost certainly the one awaited: the first prompt matched by the template's own
 * pattern (the generic shape waits settle_ms), or the prompt right under a command's echo.
 */
export const SURE_PROMPT_SETTLE_MS = 40;
/** Lines of a capture kept as text (the echo and an early prompt are looked for among the first 5, dropEcho 7). */
const CAPTURE_HEAD_LINES = 16;

export class PromptSession {
  readonly options: Required<Omit<SessionOptions, 'signal' | 'vocabulary' | 'onReceived'>> & Pick<SessionOptions, 'signal' | 'onReceived'>;
  readonly vocabulary: SessionVocabulary;
  prompt = '';
  /** The lines printed between login and the first prompt (the banner), as detectPrompt found them. */
  loginLines: string[] = [];
  private promptFamily: RegExp | null = null;
  /** The template's prompt regex: any line it matches is a prompt, so prompts that count commands (EXOS "X460.2 #") are recognised. */
  private templatePrompt: LinePattern | null = null;
  private readonly screen = new TerminalScreen();
  private readonly decoder = new ConfigStreamDecoder();
  private received = 0;
  private lastDataAt = Date.now();
  private closed = false;
  private failure: CollectError | null = null;
  private notify: ((event: 'data' | 'close') => void) | null = null;

  constructor(
    private readonly stream: TerminalStream,
    options: SessionOptions,
  ) {
    const { vocabulary, ...rest } = options;
    this.options = { settle_ms: 100, nudge_ms: 1500, ...rest };
    this.vocabulary = vocabulary ?? defaultVocabulary();
    stream.onData((chunk) => this.receive(chunk));
    stream.onClose(() => {
      this.closed = true;
      this.notify?.('close');
    });
    const signal = options.signal;
    if (signal) {
      const onAbort = () =>
        this.abort(signal.reason instanceof CollectError ? signal.reason : new CollectError('INTERRUPTED', 'The backup was cancelled before it finished.'));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    }
  }

  /** Bytes received so far (raw, before clean-up). */
  get bytes(): number {
    return this.received;
  }

  /** The line being drawn, trimmed: where prompts, pagers and login questions sit. */
  get currentLine(): string {
    return this.screen.current.trim();
  }

  /** The line being drawn as it stands, untrimmed (a template prompt regex may want its trailing space). */
  get rawCurrentLine(): string {
    return this.screen.current;
  }

  /** Completed lines since the last command was sent. */
  get lineCount(): number {
    return this.screen.lineCount;
  }

  /** Those completed lines, left on the screen. */
  get recentLines(): readonly string[] {
    return this.screen.lines;
  }

  /** Lines erased whole since the last command was sent (a CLI that redraws in place). */
  get wipedLines(): readonly string[] {
    return this.screen.wiped;
  }

  /** Takes the completed lines off the screen: what was said before the next step. */
  takeLines(): string[] {
    return this.screen.takeLines();
  }

  /** The template's prompt regex (login.ts detectPrompt): any line it matches is a prompt of this session. */
  usePromptPattern(pattern: LinePattern | null): void {
    this.templatePrompt = pattern;
  }

  /** How the device's bytes were decoded, when they were not plain UTF-8 (lib/decode.ts). */
  get encoding(): SourceEncoding | null {
    return this.decoder.encoding;
  }

  get quietMs(): number {
    return Date.now() - this.lastDataAt;
  }

  /** Sends raw keystrokes (pager answers). */
  write(text: string): void {
    if (!this.closed) this.stream.write(text);
  }

  /** Sends a line followed by Enter. */
  sendLine(text: string): void {
    this.write(text + this.options.newline);
  }

  abort(err: CollectError): void {
    if (this.failure) return;
    this.failure = err;
    this.stream.close();
    this.notify?.('close');
  }

  close(): void {
    this.stream.close();
  }

  private receive(chunk: Buffer): void {
    if (this.failure) return;
    this.received += chunk.length;
    this.options.onReceived?.(chunk.length);
    this.lastDataAt = Date.now();
    if (this.received > this.options.max_output_bytes) {
      this.abort(
        new CollectError(
          'OUTPUT_TOO_LARGE',
          `The device sent more than ${formatBytes(this.options.max_output_bytes)} of output; the backup was stopped.`,
          true,
        ),
      );
      return;
    }
    this.screen.feed(this.decoder.write(chunk));
    this.notify?.('data');
  }

  /** Re-evaluates `check` on every chunk (and when it asks to) until it is done, the line goes idle, or the stream ends. */
  waitFor<T>(check: () => WaitStep<T>, o: WaitOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let retryTimer: NodeJS.Timeout | undefined;
      let totalTimer: NodeJS.Timeout | undefined;
      let finished = false;
      const finish = (err: Error | null, value?: T) => {
        if (finished) return;
        finished = true;
        clearTimeout(retryTimer);
        clearTimeout(idleTimer);
        clearTimeout(totalTimer);
        this.notify = null;
        if (err) reject(err);
        else resolve(value as T);
      };
      const evaluate = () => {
        if (this.failure) return finish(this.failure);
        let step: WaitStep<T>;
        try {
          step = check();
        } catch (err) {
          return finish(err instanceof Error ? err : new Error(String(err)));
        }
        if (step && 'done' in step) return finish(null, step.done);
        if (this.closed) return finish(o.onClose());
        clearTimeout(retryTimer);
        if (step) retryTimer = setTimeout(evaluate, step.retry_ms);
      };
      // The idle timer is checked lazily so a fast stream does not re-arm a timer on every chunk.
      let idleTimer: NodeJS.Timeout;
      const started = Date.now();
      const onIdleTimer = () => {
        const idle = Date.now() - Math.max(this.lastDataAt, started);
        if (idle >= o.idle_ms) finish(o.onIdle());
        else idleTimer = setTimeout(onIdleTimer, o.idle_ms - idle);
      };
      idleTimer = setTimeout(onIdleTimer, o.idle_ms);
      if (o.total_ms !== undefined) totalTimer = setTimeout(() => finish(o.onIdle()), o.total_ms);
      this.notify = () => evaluate();
      evaluate();
    });
  }

  /** The prompt the session now waits for, and the family of prompts of the same host (a mode or privilege change). */
  adoptPrompt(line: string): void {
    this.prompt = line;
    const m = /^(.*?)\s?[#>$%\]]$/.exec(line);
    // Same host part, any mode suffix, any privilege marker: "sw1>" after "sw1#", "sw1(config)#", and
    // FortiOS' "FGT1 (console) #" after "FGT1 #" (a space before the mode).
    this.promptFamily = m && m[1] ? new RegExp(`^${escapeRegex(m[1])}\\s?(?:\\([^)]*\\))?\\s?[#>$%\\]]$`) : null;
  }

  /** The line holding `echo` (the command just sent, after the prompt) was erased whole since the command went out. */
  echoWiped(echo: string): boolean {
    return this.screen.wiped.some((line) => line.trimEnd().endsWith(echo));
  }

  /**
   * How `line` relates to the prompt: the very prompt seen last, or one of its family. With a template prompt regex
   * the family is every line the regex matches (the untrimmed screen line too, for regexes that want the trailing
   * space); without one, a line with the same host part as the last prompt.
   */
  promptKind(line: string): 'exact' | 'family' | null {
    if (!line) return null;
    if (line === this.prompt) return 'exact';
    const custom = this.templatePrompt;
    if (custom) return custom.test(line) || (line === this.currentLine && custom.test(this.screen.current)) ? 'family' : null;
    if (this.promptFamily?.test(line)) return 'family';
    return null;
  }

  /**
   * Answers a pager, or a line that wants Enter, sitting on the current line: the wait step to take when one was seen, false when none.
   * One key per pager prompt: a prompt redrawn in pieces (less sends "(END)", then ESC[K) is still the same
   * prompt, and a second key would land at the CLI prompt once the pager has quit. A new pager prompt follows
   * new output lines. A quiet pager (less's ":") seen too early asks to be looked at again once the output has
   * settled: the device sends nothing more until it is answered.
   */
  answerPager(line: string, answered: { lines: number }): WaitStep<never> | false {
    for (const p of this.vocabulary.pagers) {
      if (!p.re.test(line)) continue;
      const quiet = this.quietMs;
      if (p.quiet && quiet < this.options.settle_ms) return { retry_ms: this.options.settle_ms - quiet };
      if (answered.lines !== this.screen.lineCount) {
        answered.lines = this.screen.lineCount;
        this.write(p.answer ?? this.options.newline);
      }
      return null;
    }
    return false;
  }

  /** `value` once the line has been quiet for `settle_ms`, else a look again when it will have been. */
  settled<T>(value: T, settle_ms = this.options.settle_ms): WaitStep<T> {
    const quiet = this.quietMs;
    return quiet >= settle_ms ? { done: value } : { retry_ms: settle_ms - quiet };
  }

  /** Runs one command and returns its output without the echoed command and the closing prompt. */
  async runCommand(command: string): Promise<string> {
    await this.awaitCommand(command, false);
    return dropEcho(this.screen.takeLines(), this.prompt, command).join('\n');
  }

  /**
   * Runs a capture command (expected to print something, see awaitCommand) and returns its output as runCommand does,
   * but all lines after the first few as UTF-8 chunks packed while they arrive (a configuration can be 30 MB).
   */
  async captureCommand(command: string): Promise<CapturedOutput> {
    this.screen.spillAfter(CAPTURE_HEAD_LINES);
    await this.awaitCommand(command, true);
    const { head, rest } = this.screen.takeSpilled();
    return { head: dropEcho(head, this.prompt, command), rest };
  }

  /** Sends a command and waits for the prompt after its output; the output stays on the screen (the prompt is taken). */
  private async awaitCommand(command: string, capture: boolean): Promise<void> {
    const { command_timeout_ms } = this.options;
    const pager = { lines: -1 };
    const echo = command.trim();
    let echoSeen = false;
    /** Completed lines up to and including the echo, once it has been seen on a line of its own. */
    let echoLines = 0;
    let scanned = 0;
    this.takeLines();
    this.sendLine(command);
    const next = await this.waitFor<string>(
      () => {
        // Still on the line holding the old prompt and the echo, unless the device wiped that line and drew a
        // prompt over it (ArubaOS-Switch after a command that prints nothing: cursor addressing, no CR/LF).
        if (!echoSeen && echo && this.echoWiped(echo)) echoSeen = true;
        const sameLine = this.lineCount === 0;
        if (sameLine && !echoSeen) return null;
        // A prompt reprinted after an unsolicited log message can arrive before our echo: only a prompt that
        // follows the echo is trusted at once; without an echo it must also be the last thing for a moment.
        // Drawn over the wiped echo, it must settle too: a CLI that redraws the command line in place
        // (prompt, then the command again) shows the bare prompt for a moment between two chunks.
        const lines = this.screen.lines;
        for (; !echoSeen && scanned < Math.min(lines.length, 5); scanned++) {
          echoSeen = lines[scanned].trimEnd().endsWith(echo);
          if (echoSeen) echoLines = scanned + 1;
        }
        const cur = this.currentLine;
        if (!cur) return null;
        const paging = this.answerPager(cur, pager);
        if (paging !== false) return paging;
        const kind = this.promptKind(cur);
        if (kind === 'exact' && echoSeen && !sameLine) {
          // Output between the echo and the prompt: the command is done. The prompt right under the echo is either
          // a command that printed nothing, or a CLI that draws its prompt as soon as Enter is pressed and erases it
          // when the answer comes (birdc, whose readline runs while BIRD answers: "bird> ", then CR ESC[K and the
          // output tens of milliseconds later). A capture command prints a configuration, so there it must stay
          // quiet as long as a login prompt is given before Enter is tried (half the command timeout at most, so an
          // empty capture is still told apart from a silent device); a command that prints nothing (paging off) a
          // short moment.
          if (this.lineCount > echoLines) return { done: cur };
          return this.settled(cur, capture ? Math.min(this.options.nudge_ms, command_timeout_ms / 2) : SURE_PROMPT_SETTLE_MS);
        }
        return kind ? this.settled(cur) : null;
      },
      {
        idle_ms: command_timeout_ms,
        onIdle: () =>
          new CollectError('TIMEOUT', `The device stopped answering while running '${command}' (no output for ${formatSeconds(command_timeout_ms)}).`, true),
        onClose: () => new CollectError('DISCONNECTED', `The device closed the connection while running '${command}'.`, true),
      },
    );
    if (next !== this.prompt) this.adoptPrompt(next);
  }

  /** Leaves politely (when the template says how) and closes the stream. */
  exit(exitCommand: string | null): void {
    if (exitCommand) this.sendLine(exitCommand);
    this.stream.close();
  }
}
