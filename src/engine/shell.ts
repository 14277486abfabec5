// One shell-mode backup as a sequence: login prompt, enable, pre-commands, capture commands, exit.
import { MAX_REFUSAL_LINES, isCommandRejected } from './command-errors';
import { capturedText, deflatedText, type CapturedOutput, type DeflatedOutput } from './captured-output';
import type { LinePattern } from '../lib/re2';
import { cutOutput } from './normalise';
import type { PromptSession } from './session';
import { detectPrompt, enterEnable } from './session-login';
import type { TemplateSpec } from '../templates/types';
import { CollectError } from './types';

/**
 * Login prompt → enable → pre-commands → capture commands → exit; returns the captured output as deflated UTF-8 parts (LF,
 * one newline per line), each capture command's part cut as the template's `command_output` says.
 */
export async function driveShell(
  session: PromptSession,
  template: TemplateSpec,
  login: { username: string; enable_secret?: string | null },
): Promise<DeflatedOutput> {
  await detectPrompt(session, template.prompt);
  if (template.enable && login.enable_secret) await enterEnable(session, template.enable, login.enable_secret, login.username);
  for (const command of template.pre_commands) await session.runCommand(command);
  const out: DeflatedOutput = { parts: [], bytes: 0 };
  for (const command of template.commands) {
    const kept = capturedParts(template, command, await session.captureCommand(command), session.vocabulary.commandErrors);
    if (!kept) {
      session.exit(template.exit_command);
      throw commandRejected(command);
    }
    out.parts.push(...kept.parts);
    out.bytes += kept.bytes;
  }
  session.exit(template.exit_command);
  return out;
}

/**
 * A capture command's output as it joins the configuration, as deflated UTF-8 parts (null: the CLI refused the command). A
 * big output stays in its chunks: it is text again only where a rule needs the text (a command_output cut) and in
 * the capture worker.
 */
function capturedParts(template: TemplateSpec, command: string, c: CapturedOutput, refusals: readonly LinePattern[]): DeflatedOutput | null {
  // A refusal is a few lines: an output past the head is none, unless the head is nearly all blank.
  const short = c.rest.parts.length === 0 || c.head.filter((l) => l.trim() !== '').length <= MAX_REFUSAL_LINES;
  if (c.rest.parts.length > 0 && !short && !template.command_output?.[command]) {
    const out = deflatedText(c.head.length > 0 ? c.head.join('\n') + '\n' : '');
    out.parts.push(...c.rest.parts);
    out.bytes += c.rest.bytes;
    return out;
  }
  const text = capturedText(c);
  if (isCommandRejected(text, refusals)) return null;
  return deflatedText(captured(template, command, text));
}

/** One capture command's output as it joins the configuration: cut per `command_output`, ending with a newline. */
export function captured(template: Pick<TemplateSpec, 'command_output' | 'name'>, command: string, text: string): string {
  const kept = cutOutput(text, template.command_output?.[command], template.name);
  return !kept || kept.endsWith('\n') ? kept : kept + '\n';
}

/** The failure for a capture command the device refused: an error message must not become a stored configuration. */
export function commandRejected(command: string): CollectError {
  return new CollectError(
    'COMMAND_FAILED',
    `The device rejected '${command}' as an unknown or invalid command — check the template's commands for this platform.`,
    true,
  );
}
