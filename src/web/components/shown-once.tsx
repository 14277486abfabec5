// A secret shown once after its creation (an API key, a collector's enrolment token): the card with its copy button,
// or, when the page is opened again, the note that it is not shown any more.
import type { Child } from 'hono/jsx';

interface ShownOnceProps {
  /** The card's heading, e.g. New key “ci”. */
  title: Child;
  /** What the user must do now (copy it), said once, as an alert. */
  warning: Child;
  /** The secret; null when there is none to show. */
  value: string | null;
  /** Names the read-only field for assistive technology, e.g. "New API key". */
  label: string;
  /** The field's id (the copy button names it, and tests read it). */
  id: string;
  /** The note shown instead when the page is reloaded (the secret is not kept); null: nothing. */
  shownAlready: Child | null;
}

export function ShownOnce({ title, warning, value, label, id, shownAlready }: ShownOnceProps) {
  if (value !== null) {
    return (
      <section class="card created" aria-live="polite">
        <h2>{title}</h2>
        <p class="warning" role="alert">
          {warning}
        </p>
        <div class="copy-row">
          <input id={id} class="mono" readonly value={value} aria-label={label} />
          <button type="button" class="primary" data-copy={`#${id}`}>
            Copy
          </button>
        </div>
      </section>
    );
  }
  if (shownAlready === null) return null;
  return (
    <p class="flash" role="status">
      {shownAlready}
    </p>
  );
}
