// The shape of a backup template: declarative data describing how to pull and clean one vendor's configuration.

/** A regex (JavaScript source, applied to one line at a time) and what replaces the match. */
export interface RedactRule {
  pattern: string;
  replacement: string;
}

export interface TemplateSpec {
  /** Unique name, kebab-case for built-ins (e.g. "cisco-ios"). */
  name: string;
  /** Human vendor/platform label (e.g. "Cisco IOS / IOS-XE"). */
  vendor: string;
  description: string;
  /**
   * "shell": interactive PTY session driven by the prompt.
   * "exec": one SSH exec channel per command, no prompt handling (SSH only; Telnet falls back to shell).
   */
  mode: 'shell' | 'exec';
  /**
   * Regex source that matches the device prompt at the end of the output buffer
   * (e.g. "[\\w.\\-()]+[#>]\\s*$"). Null: detect the prompt after login.
   */
  prompt: string | null;
  /** Commands sent before the capture commands, output discarded (paging off, width). */
  pre_commands: string[];
  /** Commands whose output, concatenated in order, is the configuration. At least one. */
  commands: string[];
  /**
   * Enter privileged mode when the credential carries an enable secret. A "Username:" question on the way (ProCurve
   * manager login) is answered with the credential's username. `prompt_unchanged`: the prompt does not show the
   * privilege level (Huawei VRP and HPE Comware `super`), so success is the prompt coming back with no error line.
   */
  enable: { command: string; password_prompt: string; prompt: string | null; prompt_unchanged?: boolean } | null;
  /** Lines matching any of these are removed before storing (volatile lines). */
  strip_patterns: string[];
  /** Lines matching any of these are stored but not counted as a change. */
  ignore_patterns: string[];
  /** Applied when redaction is on for this template or forced by config. */
  redact_patterns: RedactRule[];
  /**
   * Syslog messages by which the device reports a configuration change (src/events): a message matching any of
   * these queues a backup with trigger "event". A named group `user` captures who made the change, when the
   * message says. RE2 syntax for custom templates, like the other patterns. Absent means none.
   */
  change_events?: string[];
  /** Whether this template redacts by default. */
  redact: boolean;
  /** Sent to close the session politely (shell mode); may be null. */
  exit_command: string | null;
}
