// Compliance rules: the list, a rule's page (definition, affected devices), database rules created, edited and deleted as YAML.
import type { Hono } from 'hono';
import { stringify } from 'yaml';
import { COMPLIANCE_OPS } from '../../features/policy';
import type { ComplianceRule } from '../../features/compliance/compliance-rule.schemas';
import { getRule, listRules, type RuleInForce } from '../../features/compliance/compliance-rules.service';
import { createRule, deleteDatabaseRule, getEditableRule, updateRule } from '../../features/compliance/compliance-rule-admin.service';
import { fleetCompliance } from '../../features/compliance/compliance-fleet.service';
import { checkRuleText } from '../../features/compliance/rule-files';
import { ApiError, type FieldError } from '../../errors';
import { actorOf } from '../../http/context';
import { Csrf } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, formFields, need, type WebContext, type WebEnv } from '../web-context';

const EXAMPLE = `id: vty-ssh-only
title: VTY lines accept SSH only
severity: critical
applies_to: {templates: [], groups: []}
remediation: |
  line vty 0 15
   transport input ssh
check:
  kind: sections
  match: '^line vty'
  must_contain: ['^transport input ssh$']
`;

export function registerComplianceRules(web: Hono<WebEnv>): void {
  web.get('/compliance/rules', need(COMPLIANCE_OPS.rules), (c) => listPage(c));
  web.get('/compliance/rules/new', need(COMPLIANCE_OPS.createRule), (c) => formPage(c, null, EXAMPLE, []));
  web.post('/compliance/rules', need(COMPLIANCE_OPS.createRule), async (c) => {
    const text = (await formFields(c)).definition ?? '';
    const parsed = oneRule(text);
    if ('errors' in parsed) return formPage(c, null, text, parsed.errors);
    try {
      const r = createRule(c.get('app').db, c.get('app').snapshots, actorOf(c), parsed.rule);
      return redirectWith(c, ruleUrl(r.rule.id), `Rule ${r.rule.id} created; the fleet is being judged again.`);
    } catch (err) {
      return formPage(c, null, text, problemsOf(err));
    }
  });
  web.get('/compliance/rules/:id', need(COMPLIANCE_OPS.rule), (c) => rulePage(c));
  web.get('/compliance/rules/:id/edit', need(COMPLIANCE_OPS.updateRule), (c) => {
    const r = getEditableRule(c.get('app').db, c.get('app').snapshots, actorOf(c), c.req.param('id'));
    return formPage(c, r, stringify(r.written, { lineWidth: 0 }), []);
  });
  web.post('/compliance/rules/:id/edit', need(COMPLIANCE_OPS.updateRule), async (c) => {
    const id = c.req.param('id');
    const text = (await formFields(c)).definition ?? '';
    const parsed = oneRule(text, id);
    const before = () => getEditableRule(c.get('app').db, c.get('app').snapshots, actorOf(c), id);
    if ('errors' in parsed) return formPage(c, before(), text, parsed.errors);
    try {
      updateRule(c.get('app').db, c.get('app').snapshots, actorOf(c), id, parsed.rule);
      return redirectWith(c, ruleUrl(id), `Rule ${id} saved; the fleet is being judged again.`);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'VALIDATION_ERROR') return formPage(c, before(), text, problemsOf(err));
      throw err;
    }
  });
  web.post('/compliance/rules/:id/delete', need(COMPLIANCE_OPS.deleteRule), (c) => {
    const id = c.req.param('id');
    deleteDatabaseRule(c.get('app').db, c.get('app').snapshots, actorOf(c), id);
    return redirectWith(c, '/compliance/rules', `Rule ${id} deleted.`);
  });
}

const ruleUrl = (id: string) => `/compliance/rules/${encodeURIComponent(id)}`;

/** One rule from the form's YAML; when editing, its id is the page's (written or not). */
function oneRule(text: string, id?: string): { rule: ComplianceRule } | { errors: FieldError[] } {
  const withId = id === undefined || /^\s*id\s*:/m.test(text) ? text : `id: ${JSON.stringify(id)}\n${text}`;
  const { rules, errors } = checkRuleText(withId);
  if (errors.length) return { errors };
  if (rules.length !== 1) return { errors: [{ field: 'file', message: 'must be exactly one rule' }] };
  if (id !== undefined && rules[0].id !== id) return { errors: [{ field: 'id', message: `must stay ${id} (create a new rule for another id)` }] };
  return { rule: rules[0] };
}

function problemsOf(err: unknown): FieldError[] {
  if (!(err instanceof ApiError) || err.status >= 500) throw err;
  const fields = err.details.errors as FieldError[] | undefined;
  return fields?.length ? fields : [{ field: 'rule', message: err.message }];
}

function Origin({ r }: { r: RuleInForce }) {
  const where = r.origin === 'file' ? `file ${(r.from ?? '').split(/[\\/]/).pop()}` : r.origin === 'pack' ? `pack ${r.from}` : 'database';
  return <span class={`badge origin-${r.origin}`}>{where}</span>;
}

function listPage(c: WebContext) {
  const rules = listRules(c.get('app').db, actorOf(c), c.get('app').dataDir);
  return render(
    c,
    { title: 'Compliance rules', active: '/compliance' },
    <>
      <p class="crumbs">
        <a href="/compliance">Compliance</a> / Rules
      </p>
      <div class="title-row">
        <h1>Compliance rules</h1>
        {can(c, COMPLIANCE_OPS.createRule) ? (
          <a class="button primary" href="/compliance/rules/new">
            Add rule
          </a>
        ) : null}
      </div>
      <p class="muted">
        Rules made here are kept in the database and can be edited here. Rules from files in the data directory's <code>compliance</code> folder and from
        shipped packs are read-only here: change the file, or enable packs with <code>confvault compliance pack enable</code>.
      </p>
      <div class="table-wrap">
        <table class="list" id="rules">
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Title</th>
              <th scope="col">Severity</th>
              <th scope="col">Check</th>
              <th scope="col">Origin</th>
            </tr>
          </thead>
          <tbody>
            {rules.map((r) => (
              <tr>
                <td>
                  <a href={ruleUrl(r.written.id)}>{r.written.id}</a>
                </td>
                <td>{r.written.title}</td>
                <td>
                  <span class={`badge severity-${r.written.severity}`}>{r.written.severity}</span>
                </td>
                <td>{r.written.check.kind}</td>
                <td>
                  <Origin r={r} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>,
  );
}

async function rulePage(c: WebContext) {
  const { db, snapshots, dataDir } = c.get('app');
  const r = getRule(db, actorOf(c), dataDir, c.req.param('id') ?? '');
  const id = r.written.id;
  const devices = (await fleetCompliance(db, snapshots, actorOf(c), { rule: id })).filter((d) => d.results.length);
  const failing = devices.filter((d) => d.results[0].status !== 'pass');
  return render(
    c,
    { title: `Rule ${id}`, active: '/compliance' },
    <>
      <p class="crumbs">
        <a href="/compliance">Compliance</a> / <a href="/compliance/rules">Rules</a> / {id}
      </p>
      <div class="title-row">
        <h1>
          {r.written.title} <span class={`badge severity-${r.written.severity}`}>{r.written.severity}</span>
        </h1>
        {r.origin === 'database' ? (
          <div class="actions">
            {can(c, COMPLIANCE_OPS.updateRule) ? (
              <a class="button" href={`${ruleUrl(id)}/edit`}>
                Edit
              </a>
            ) : null}
            {can(c, COMPLIANCE_OPS.deleteRule) ? (
              <form method="post" action={`${ruleUrl(id)}/delete`} class="inline" data-confirm={`Delete rule ${id}?`}>
                <Csrf token={c.get('session').csrfToken} />
                <button type="submit" class="danger">
                  Delete
                </button>
              </form>
            ) : null}
          </div>
        ) : null}
      </div>
      <p>
        <Origin r={r} /> {r.written.description}
      </p>
      {r.written.source ? (
        <p class="small">
          Source: <a href={r.written.source.url}>{r.written.source.title}</a>
        </p>
      ) : null}
      <h2>Definition</h2>
      <pre class="config" id="rule-definition">
        {stringify(r.written, { lineWidth: 0 })}
      </pre>
      <h2>Affected devices</h2>
      <p class="muted" id="rule-counts">
        Applies to {devices.length} device{devices.length === 1 ? '' : 's'} in your scope; {failing.length} not passing.
      </p>
      {failing.length ? (
        <table class="list" id="rule-devices">
          <thead>
            <tr>
              <th scope="col">Device</th>
              <th scope="col">Status</th>
              <th scope="col">First failing line</th>
            </tr>
          </thead>
          <tbody>
            {failing.map((d) => {
              const res = d.results[0];
              const f = res.failing[0];
              return (
                <tr>
                  <td>
                    <a href={`/devices/${d.device_id}/compliance`}>{d.device_name}</a>
                  </td>
                  <td class={`status-${res.status}`}>{res.status}</td>
                  <td class="mono">{f ? `${f.line ?? '-'}: ${f.text}` : ''}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </>,
  );
}

function formPage(c: WebContext, r: RuleInForce | null, text: string, errors: FieldError[]) {
  const title = r ? `Edit rule ${r.written.id}` : 'Add a compliance rule';
  return render(
    c,
    { title, active: '/compliance', status: errors.length ? 422 : 200 },
    <>
      <p class="crumbs">
        <a href="/compliance">Compliance</a> / <a href="/compliance/rules">Rules</a>
      </p>
      <h1>{title}</h1>
      <p class="muted">
        One rule as YAML, as in a rule file (docs/compliance.md has an example of each kind: must_exist, must_not_exist, sections, value, golden). Saving judges
        the fleet again in the background.
      </p>
      {errors.length ? (
        <div class="flash error" role="alert" id="rule-errors">
          <ul>
            {errors.map((e) => (
              <li>
                <code>{e.field}</code>: {e.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <form method="post" action={r ? `${ruleUrl(r.written.id)}/edit` : '/compliance/rules'} class="card">
        <Csrf token={c.get('session').csrfToken} />
        <label class="full">
          Rule (YAML)
          <textarea name="definition" rows={18} class="mono" spellcheck={false}>
            {text}
          </textarea>
        </label>
        <button type="submit" class="primary">
          Save
        </button>
      </form>
    </>,
  );
}
