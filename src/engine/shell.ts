// One shell-mode backup as a sequence: login prompt, enable, pre-commands, capture commands, exit.
import { isCommandRejected } from './command-errors';
import { cutOutput } from './normalise';
import type { PromptSession } from './session';
import type { TemplateSpec } from '../templates/types';
import { CollectError } from './types';

/**
 * Login prompt → enable → pre-commands → capture commands → exit; returns the captured output (LF, one newline per
 * line), each capture command's part cut as the template's `command_output` says.
 */
export async function driveShell(session: PromptSession, template: TemplateSpec, login: { username: string; enable_secret?: string | null }): Promise<string> {
  await session.detectPrompt(template.prompt);
  if (template.enable && login.enable_secret) await session.enable(template.enable, login.enable_secret, login.username);
  for (const command of template.pre_commands) await session.runCommand(command);
  let out = '';
  for (const command of template.commands) {
    const text = await session.runCommand(command, true);
    if (isCommandRejected(text, session.vocabulary.commandErrors)) {
      session.exit(template.exit_command);
      throw commandRejected(command);
    }
    out += captured(template, command, text);
  }
  session.exit(template.exit_command);
  return out;
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
