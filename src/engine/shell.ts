// One shell-mode backup as a sequence: login prompt, enable, pre-commands, capture commands, exit.
import { isCommandRejected } from './command-errors';
import type { PromptSession } from './session';
import type { TemplateSpec } from '../templates/types';
import { CollectError } from './types';

/** Login prompt → enable → pre-commands → capture commands → exit; returns the captured output (LF, one newline per line). */
export async function driveShell(session: PromptSession, template: TemplateSpec, login: { username: string; enable_secret?: string | null }): Promise<string> {
  await session.detectPrompt(template.prompt);
  if (template.enable && login.enable_secret) await session.enable(template.enable, login.enable_secret, login.username);
  for (const command of template.pre_commands) await session.runCommand(command);
  let out = '';
  for (const command of template.commands) {
    const text = await session.runCommand(command);
    if (isCommandRejected(text)) {
      session.exit(template.exit_command);
      throw commandRejected(command);
    }
    if (text) out += text.endsWith('\n') ? text : text + '\n';
  }
  session.exit(template.exit_command);
  return out;
}

/** The failure for a capture command the device refused: an error message must not become a stored configuration. */
export function commandRejected(command: string): CollectError {
  return new CollectError(
    'COMMAND_FAILED',
    `The device rejected '${command}' as an unknown or invalid command — check the template's commands for this platform.`,
    true,
  );
}
