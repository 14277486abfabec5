// Rendering a diff: a side-by-side table (folded unchanged stretches), unified hunks, or both versions when too different to align.
// Changes are marked by sign and words for screen readers as well as by colour; changed words inside a line by <mark>.
import type { DiffResult, WordParts } from '../../features/configs/diff.service';

/** A line's text, its changed words marked when the diff found them. */
function Words({ text, words }: { text: string; words?: WordParts }) {
  if (!words) return <>{text}</>;
  return <>{words.map((w) => (w.mark ? <mark>{w.text}</mark> : w.text))}</>;
}

/** The sign of a changed side: "−" or "+" shown, "removed"/"added" said. */
function Sign({ kind }: { kind: 'del' | 'add' }) {
  return (
    <>
      <span class="sign" aria-hidden="true">
        {kind === 'add' ? '+ ' : '− '}
      </span>
      <span class="visually-hidden">{kind === 'add' ? 'added: ' : 'removed: '}</span>
    </>
  );
}

export function DiffView({ result, view }: { result: DiffResult; view: 'split' | 'unified' }) {
  if (result.identical)
    return (
      <p class="flash ok" id="diff-identical">
        The two versions are identical.
      </p>
    );
  if (result.tooDifferent && result.preview) return <BothVersions preview={result.preview} />;
  return (
    <>
      <p class="diff-stat">
        <span class="add">+{result.added}</span> <span class="del">−{result.removed}</span> lines
        <span class="visually-hidden">
          {' '}
          ({result.added} added, {result.removed} removed)
        </span>
      </p>
      {view === 'split' ? (
        <div class="table-wrap">
          <table class="diff split" id="diff">
            {/* Fixed layout takes widths from the columns, not from a first row that may be a folded stretch. */}
            <colgroup>
              <col class="ln-col" />
              <col />
              <col class="ln-col" />
              <col />
            </colgroup>
            <tbody>
              {result.rows.map((r) =>
                r.kind === 'skip' ? (
                  <tr class="skip">
                    <td colspan={4}>… {r.skipped} unchanged lines …</td>
                  </tr>
                ) : (
                  <tr class={r.kind}>
                    <td class="ln">{r.left?.n ?? ''}</td>
                    <td class={`code ${r.left && r.kind !== 'same' ? 'del' : ''}`}>
                      {r.left && r.kind !== 'same' ? <Sign kind="del" /> : null}
                      {r.left ? <Words text={r.left.text} words={r.left.words} /> : null}
                    </td>
                    <td class="ln">{r.right?.n ?? ''}</td>
                    <td class={`code ${r.right && r.kind !== 'same' ? 'add' : ''}`}>
                      {r.right && r.kind !== 'same' ? <Sign kind="add" /> : null}
                      {r.right ? <Words text={r.right.text} words={r.right.words} /> : null}
                    </td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
        </div>
      ) : (
        <pre class="diff unified" id="diff">
          {result.hunks.map((h) => (
            <>
              <span class="hunk">{h.header}</span>
              {'\n'}
              {h.lines.map((l) => (
                <>
                  <span class={l.kind}>
                    {l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}
                    <Words text={l.text} words={l.words} />
                  </span>
                  {'\n'}
                </>
              ))}
            </>
          ))}
        </pre>
      )}
    </>
  );
}

/** Two versions too different to align (DIFF_LIMITS): both shown side by side, unaligned, up to a preview length. */
function BothVersions({ preview }: { preview: NonNullable<DiffResult['preview']> }) {
  const more = (shown: number, total: number) =>
    total > shown ? <p class="muted">… {total - shown} more lines: open or download the version to see them all.</p> : null;
  return (
    <>
      <p class="advice" id="diff-too-different">
        These versions are too different to align line by line ({preview.leftLines} and {preview.rightLines} lines): showing both versions.
      </p>
      <div class="table-wrap">
        <table class="diff split" id="diff">
          <colgroup>
            <col />
            <col />
          </colgroup>
          <tbody>
            <tr>
              <td class="code del">
                <pre>{preview.left.join('\n')}</pre>
                {more(preview.left.length, preview.leftLines)}
              </td>
              <td class="code add">
                <pre>{preview.right.join('\n')}</pre>
                {more(preview.right.length, preview.rightLines)}
              </td>
            </tr>
          </tbody>
        </table>
      </div>
    </>
  );
}
