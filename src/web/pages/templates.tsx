// Templates: the list, custom templates created/edited/deleted with the API's validation, built-ins shown read-only.
import type { Hono } from 'hono';
import { PatternProblems } from './template-patterns';
import { createTemplate, deleteTemplate, getTemplate, listTemplates, updateTemplate } from '../../features/templates/templates.service';
import { redirectWith, render } from '../render';
import { actorOf } from '../../http/context';
import { can, fieldErrors, formFields, intParam, need, type WebContext, type WebEnv } from '../web-context';
import { parseTemplateForm, templatePage } from './template-form';
import { registerTemplateTry } from './template-try';

export function registerTemplates(web: Hono<WebEnv>): void {
  web.get('/templates', need('templates.view'), (c) => listPage(c));
  web.get('/templates/new', need('templates.create'), (c) => templatePage(c, null));
  web.post('/templates', need('templates.create'), async (c) => {
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
  web.get('/templates/:id', need('templates.view'), (c) => templatePage(c, intParam(c, 'id')));
  web.post('/templates/:id/edit', need('templates.update'), async (c) => {
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
  web.post('/templates/:id/delete', need('templates.delete'), (c) => {
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
  const items = listTemplates(c.get('app').db, { page: 1, limit: 1000 }).items;
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
      <p class="muted">Built-in templates are read-only; open one to see its settings.</p>
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
                  <a href={`/templates/${t.id}`}>{t.name}</a> {t.builtin ? <span class="badge muted">built-in</span> : null}
                  {t.builtin ? null : <PatternProblems t={t} />}
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
