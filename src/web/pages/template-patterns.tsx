// A custom template's saved patterns that are not RE2 syntax (saved before patterns became RE2): named on the template list.
import { patternProblems } from '../../templates/index';
import type { TemplateSpec } from '../../templates/types';

export function PatternProblems({ t }: { t: TemplateSpec & { id: number } }) {
  const problems = patternProblems(t);
  if (problems.length === 0) return null;
  return (
    <span class="badge failed" id={`template-${t.id}-patterns`} title={problems.map((p) => `${p.field}: ${p.problem}`).join('\n')}>
      {' '}
      {problems.length} pattern(s) not RE2 syntax: {problems.map((p) => p.field).join(', ')}. Backups with this template fail until it is edited.
    </span>
  );
}
