// The shape of a backup template: declarative data describing how to pull and clean one vendor's configuration.

/**
 * A secret-masking rule, applied to one line at a time. The usual form names the secret with a group called
 * `secret` (`^(enable secret(?: [0-9])?) (?<secret>\S+)`): each match's `secret` text is replaced by a keyed token
 * `<secret:3fa9c1d2>` (src/templates/redact.ts), so a changed secret still shows as a changed line. The older form
 * gives a `replacement` ("$1 <redacted>") used as written, with no group named `secret`.
 */
export interface RedactRule {
  pattern: string;
  replacement?: string;
  /**
   * Regex of a section's opening line (`^config system snmp community`): the rule applies only to the lines inside
   * such a section, i.e. after the opening line and before the next non-blank line indented no deeper than it
   * (FortiOS's `end`, the next top-level command of an IOS-style configuration, Junos's closing brace). Absent: every line.
   */
  within?: string;
}

/** A pager the device prints and what answers it. */
export interface PagerRule {
  /** Regex matched against the last line of output (after terminal clean-up). */
  pattern: string;
  /** Text sent back, e.g. " " (next page) or "q" (stop paging in less). */
  answer: string;
  /** Answer only when the output has been quiet a moment (a pattern too short to trust on its own, such as less's ":"). */
  quiet?: boolean;
}

/**
 * Vendor knowledge the session driver uses. Every field is optional: what a template gives is tried before the
 * engine defaults (src/templates/defaults.yaml), which stay in force. Every string but a pager's answer is a regex
 * matched against one line (RE2 syntax for custom templates, like the other patterns; "(?i)" for case-insensitive).
 */
export interface SessionKnowledge {
  pagers?: PagerRule[];
  /**
   * Login question for the user name when the transport asks in the session (Telnet, some SSH banners), also
   * answered on the way into privileged mode (ProCurve's manager login).
   */
  username_prompt?: string;
  /** Login question for the password (Telnet login and the enable step, besides `enable.password_prompt`). */
  password_prompt?: string;
  /** A line by which the CLI refuses a privilege change ("% Bad secrets", "Error: Password is wrong"). */
  enable_refused?: string[];
  /** Lines by which the CLI refuses a command ("% Invalid input", "Unknown command"): such output is never stored. */
  command_errors?: string[];
  /** Lines answered with Enter, at login or in the middle of output ("Press RETURN to get started"). */
  press_enter?: string[];
}

/** Post-processing of one capture command's output, before strip/redact. Applied in the order listed here. */
export interface OutputRule {
  /** Output starts after the first line matching this (the line itself dropped); no matching line: nothing cut. */
  start_after?: string;
  /** Output stops before the first line matching this (that line and the rest dropped). */
  stop_before?: string;
  /** Drop this many lines at the start. */
  drop_first?: number;
  /** Drop this many lines at the end. */
  drop_last?: number;
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
  /** Vendor prompts, pagers and refusal lines beyond the engine defaults. */
  session?: SessionKnowledge;
  /** Per capture command (keyed by the command exactly as in `commands`): lines to cut from its output. */
  command_output?: Record<string, OutputRule>;
  /**
   * Whether backups with this template redact secrets when the appliance's `redact_secrets` is on (the default).
   * false: this template's configurations are stored restorable, secrets included.
   */
  redact: boolean;
  /** Sent to close the session politely (shell mode); may be null. */
  exit_command: string | null;
}
