// Templates: the list, custom templates created/edited/deleted with the API's validation, built-ins shown read-only.
import { TEMPLATE_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { PatternProblems } from './template-patterns';
import { createTemplate, deleteTemplate, getTemplate, listTemplates, updateTemplate } from '../../features/templates/templates.service';
import { cloneTemplate, exportTemplateYaml, listTemplateFileProblems } from '../../features/templates/template-files.service';
import { formatTimestamp } from '../../lib/time';
import { redirectWith, render } from '../render';
import { actorOf } from '../../http/context';
import { can, fieldErrors, formFields, intParam, need, type WebContext, type WebEnv } from '../web-context';
import { SourceBadge, parseTemplateForm, templatePage } from './template-form';
import { registerTemplateTry } from './template-try';

export function registerTemplates(web: Hono<WebEnv>): void {
  web.get('/templates', need(TEMPLATE_OPS.list), (c) => listPage(c));
  web.get('/templates/new', need(TEMPLATE_OPS.create), (c) => templatePage(c, null));
  web.post('/templates', need(TEMPLATE_OPS.create), async (c) => {
    const f = await formFields(c);
    const p = parseTemplateForm(f, null);
    if (!p.ok) return templatePage(c, null, { values: f, errors: p.errors });
    try {
      const t = createTemplate(c.get('app').db, actorOf(c), p.spec);
      return redirectWith(c, `/templates/${t.id}`, `Template ${t.name} created.`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return templatePage(c, null, { values: f, errors });
      throw err;
    }
  });
  web.get('/templates/:id', need(TEMPLATE_OPS.get), (c) => templatePage(c, intParam(c, 'id')));
  web.post('/templates/:id/edit', need(TEMPLATE_OPS.update), async (c) => {
    const id = intParam(c, 'id');
    const db = c.get('app').db;
    const before = getTemplate(db, id);
    const f = await formFields(c);
    const p = parseTemplateForm(f, before);
    if (!p.ok) return templatePage(c, id, { values: f, errors: p.errors });
    try {
      const t = updateTemplate(db, actorOf(c), id, p.spec);
      return redirectWith(c, `/templates/${id}`, `Template ${t.name} saved.`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return templatePage(c, id, { values: f, errors });
      throw err;
    }
  });
  web.get('/templates/:id/export.yaml', need(TEMPLATE_OPS.get), (c) => {
    const { filename, yaml } = exportTemplateYaml(c.get('app').db, intParam(c, 'id'));
    return c.body(yaml, 200, { 'Content-Type': 'application/yaml; charset=utf-8', 'Content-Disposition': `attachment; filename="${filename}"` });
  });
  web.post('/templates/:id/clone', need(TEMPLATE_OPS.create), (c) => {
    const id = intParam(c, 'id');
    const db = c.get('app').db;
    try {
      const t = cloneTemplate(db, actorOf(c), id);
      return redirectWith(c, `/templates/${t.id}`, `Template ${t.name} created as an editable copy of ${getTemplate(db, id).name}.`);
    } catch (err) {
      if (fieldErrors(err)) return redirectWith(c, `/templates/${id}`, (err as Error).message, 'error');
      throw err;
    }
  });
  web.post('/templates/:id/delete', need(TEMPLATE_OPS.delete), (c) => {
    const id = intParam(c, 'id');
    const db = c.get('app').db;
    const t = getTemplate(db, id);
    try {
      deleteTemplate(db, actorOf(c), id);
    } catch (err) {
      if (fieldErrors(err)) return redirectWith(c, `/templates/${id}`, (err as Error).message, 'error');
      throw err;
    }
    return redirectWith(c, '/templates', `Template ${t.name} deleted.`);
  });
  registerTemplateTry(web);
}

function listPage(c: WebContext) {
  const db = c.get('app').db;
  const items = listTemplates(db, { page: 1, limit: 1000 }).items;
  const problems = listTemplateFileProblems(db);
  return render(
    c,
    { title: 'Templates', active: '/templates' },
    <>
      <div class="title-row">
        <h1>Templates</h1>
        {can(c, 'templates.create') ? (
          <a class="button primary" href="/templates/new">
            Add template
          </a>
        ) : null}
      </div>
      <p class="muted">
        Built-in templates are read-only; open one to see its settings, export it as YAML or clone it into an editable copy. Templates marked "file" come from
        YAML files in the data directory's templates folder: edit the file and run <code>confvault template reload</code>.
      </p>
      {problems.length ? (
        <section class="card" id="template-file-problems">
          <h2>Template files not loaded</h2>
          <p class="muted small">
            At the last reload ({formatTimestamp(problems[0].reported_at, c.get('timezone'))}); a file not loaded leaves the version loaded before, if any, in
            force.
          </p>
          <ul>
            {problems.map((p) => (
              <li>
                <code>{p.path}</code>
                <ul>
                  {p.errors.map((e) => (
                    <li>
                      <code>{e.field}</code>: {e.message}
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <div class="table-wrap">
        <table class="list" id="templates">
          <thead>
            <tr>
              <th>Name</th>
              <th>Vendor</th>
              <th>Mode</th>
              <th>Commands</th>
              <th>Ignored lines</th>
              <th>Devices</th>
            </tr>
          </thead>
          <tbody>
            {items.map((t) => (
              <tr>
                <td>
                  <a href={`/templates/${t.id}`}>{t.name}</a> <SourceBadge t={t} />
                  {t.builtin ? null : <PatternProblems t={t} />}
                  {t.redact ? null : <span class="redaction-off"> redaction off</span>}
                </td>
                <td>{t.vendor}</td>
                <td>{t.mode}</td>
                <td class="mono">{t.commands.join('; ')}</td>
                <td class="mono">{t.ignore_patterns.join('  ') || '—'}</td>
                <td>{String(t.device_count)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>,
  );
}
