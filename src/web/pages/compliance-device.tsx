// A device's compliance: its failing rules, the failing lines highlighted in the configuration view, the remediation to copy, waivers added and removed.
import type { Hono } from 'hono';
import { raw } from 'hono/html';
import { COMPLIANCE_OPS } from '../../features/policy';
import { getBackupContent } from '../../features/backups/backups.service';
import { createWaiver, deviceCompliance, listWaivers, removeWaiver } from '../../features/compliance/compliance-fleet.service';
import type { RuleOutcome } from '../../features/compliance/compliance.service';
import { ApiError } from '../../errors';
import { actorOf } from '../../http/context';
import { parseLocalTimestamp } from '../../lib/time';
import { numberedLinesHtml } from '../../features/configs/numbered-lines';
import { Csrf } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, formFields, formatTime, intParam, need, type WebContext, type WebEnv } from '../web-context';

export function registerComplianceDevice(web: Hono<WebEnv>): void {
  web.get('/devices/:id/compliance', need(COMPLIANCE_OPS.check), (c) => devicePage(c));
  web.post('/devices/:id/compliance/waivers', need(COMPLIANCE_OPS.waive), async (c) => {
    const id = intParam(c, 'id');
    const f = await formFields(c);
    const back = `/devices/${id}/compliance`;
    const expires = parseLocalTimestamp((f.expires_at ?? '').replace('T', ' ').replace(/^(\S+ \d\d:\d\d)$/, '$1:00'), c.get('timezone'));
    try {
      if (expires === null) throw ApiError.validation([{ field: 'expires_at', message: 'must be a date and time' }], 'the waiver is incomplete');
      createWaiver(c.get('app').db, c.get('app').snapshots, actorOf(c), id, {
        rule_id: f.rule_id ?? '',
        reason: f.reason ?? '',
        owner: f.owner ?? '',
        expires_at: expires,
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 'VALIDATION_ERROR') {
        const fields = ((err.details.errors as { field: string; message: string }[] | undefined) ?? []).map((e) => `${e.field} ${e.message}`);
        return redirectWith(c, back, `Waiver not added: ${fields.join('; ') || err.message}`, 'error');
      }
      throw err;
    }
    return redirectWith(c, back, `Rule ${f.rule_id} waived.`);
  });
  web.post('/devices/:id/compliance/waivers/:wid/delete', need(COMPLIANCE_OPS.unwaive), (c) => {
    const id = intParam(c, 'id');
    removeWaiver(c.get('app').db, actorOf(c), intParam(c, 'wid'), id);
    return redirectWith(c, `/devices/${id}/compliance`, 'Waiver removed.');
  });
}

/** The configuration view with each failing line marked (class "fail", and an anchor the rule list links to). */
function highlighted(text: string, failing: ReadonlySet<number>): string {
  let html = numberedLinesHtml(text).html;
  for (const n of failing) html = html.replace(`<span class="line" id="L${n}">`, `<span class="line fail" id="L${n}">`);
  return html;
}

async function devicePage(c: WebContext) {
  const id = intParam(c, 'id');
  const { db, snapshots, log } = c.get('app');
  const tz = c.get('timezone');
  const { device, result } = await deviceCompliance(db, snapshots, actorOf(c), id);
  const results = result?.results ?? [];
  const open = results.filter((r) => r.status === 'fail' || r.status === 'waived');
  const passed = results.filter((r) => r.status === 'pass');
  const lines = new Set(open.filter((r) => r.status === 'fail').flatMap((r) => r.failing.flatMap((f) => (f.line === null ? [] : [f.line]))));
  const text = result && can(c, 'backups.view') ? getBackupContent(db, snapshots, log, c.get('principal'), result.backup_id) : null;
  const waivers = listWaivers(db, actorOf(c), id);
  const manage = can(c, COMPLIANCE_OPS.waive);
  return render(
    c,
    { title: `${device.name} · compliance`, active: '/compliance' },
    <>
      <p class="crumbs">
        <a href="/devices">Devices</a> / <a href={`/devices/${id}`}>{device.name}</a> / Compliance
      </p>
      <h1>Compliance of {device.name}</h1>
      {result === null ? (
        <p class="muted">This device has no stored version yet.</p>
      ) : (
        <p class="muted" id="device-compliance-summary">
          Version of {formatTime(result.backed_up_at, tz)}: {open.filter((r) => r.status === 'fail').length} failing,{' '}
          {open.filter((r) => r.status === 'waived').length} waived, {passed.length} passing of {results.length} rules that apply.
        </p>
      )}
      {open.map((r) => (
        <RuleCard r={r} deviceId={id} tz={tz} />
      ))}
      {passed.length ? (
        <details>
          <summary>Passing rules ({passed.length})</summary>
          <ul>
            {passed.map((r) => (
              <li>
                <a href={`/compliance/rules/${encodeURIComponent(r.rule_id)}`}>{r.rule_id}</a>: {r.title}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      {text !== null ? (
        <section>
          <h2>Configuration</h2>
          <p class="muted small">Failing lines are marked. Secrets were masked when the version was stored.</p>
          <pre class="config numbered" id="config-text">
            {raw(highlighted(text, lines))}
          </pre>
        </section>
      ) : null}
      <section class="card" id="waivers">
        <h2>Waivers</h2>
        {waivers.length ? (
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Reason</th>
                <th scope="col">Owner</th>
                <th scope="col">Expires</th>
                {manage ? <th scope="col">Remove</th> : null}
              </tr>
            </thead>
            <tbody>
              {waivers.map((w) => (
                <tr class={w.active ? undefined : 'muted'}>
                  <td>{w.rule_id}</td>
                  <td>{w.reason}</td>
                  <td>{w.owner}</td>
                  <td>
                    {formatTime(w.expires_at, tz)}
                    {w.active ? '' : ' (expired)'}
                  </td>
                  {can(c, COMPLIANCE_OPS.unwaive) ? (
                    <td>
                      <form method="post" action={`/devices/${id}/compliance/waivers/${w.id}/delete`} class="inline">
                        <Csrf token={c.get('session').csrfToken} />
                        <button type="submit" aria-label={`Remove the waiver of ${w.rule_id}`}>
                          Remove
                        </button>
                      </form>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="muted">No waivers.</p>
        )}
        {manage && open.some((r) => r.status === 'fail') ? (
          <form method="post" action={`/devices/${id}/compliance/waivers`} class="row" id="add-waiver">
            <Csrf token={c.get('session').csrfToken} />
            <label>
              Rule
              <select name="rule_id">
                {open
                  .filter((r) => r.status === 'fail')
                  .map((r) => (
                    <option value={r.rule_id}>{r.rule_id}</option>
                  ))}
              </select>
            </label>
            <label>
              Reason <input name="reason" required maxlength={1000} />
            </label>
            <label>
              Owner <input name="owner" required maxlength={200} />
            </label>
            <label>
              Expires <input name="expires_at" type="datetime-local" required />
            </label>
            <button type="submit">Add waiver</button>
          </form>
        ) : null}
      </section>
    </>,
  );
}

function RuleCard({ r, deviceId, tz }: { r: RuleOutcome; deviceId: number; tz: string }) {
  const block = `remediation-${r.rule_id.replace(/[^a-z0-9_-]/g, '_')}`;
  return (
    <section class={`card rule-result status-${r.status}`}>
      <h2>
        <a href={`/compliance/rules/${encodeURIComponent(r.rule_id)}`}>{r.rule_id}</a>: {r.title}{' '}
        <span class={`badge severity-${r.severity}`}>{r.severity}</span> <span class="badge">{r.status}</span>
      </h2>
      {r.waiver ? (
        <p class="small">
          Waived until {formatTime(r.waiver.expires_at, tz)} by {r.waiver.owner}: {r.waiver.reason}
        </p>
      ) : null}
      <ul class="failing-lines">
        {r.failing.map((f) => (
          <li>
            {f.line === null ? 'missing' : <a href={`/devices/${deviceId}/compliance#L${f.line}`}>line {f.line}</a>}: <code>{f.text}</code> — {f.message}
          </li>
        ))}
      </ul>
      {r.remediation ? (
        <>
          <div class="title-row">
            <h3>Remediation</h3>
            <button type="button" data-copy-text={`#${block}`} hidden>
              Copy
            </button>
          </div>
          <pre class="config remediation" id={block}>
            {r.remediation}
          </pre>
        </>
      ) : null}
    </section>
  );
}
