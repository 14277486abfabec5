// Inventory administration pages: groups, credentials, and the template list (built-ins read-only).
import type { Hono } from 'hono';
import { listTemplates } from '../../features/templates/templates.service';
import { render } from '../render';
import { need, type WebEnv } from '../web-context';
import { registerCredentials } from './credentials';
import { registerGroups } from './groups';

export function registerAdminPages(web: Hono<WebEnv>): void {
  registerGroups(web);
  registerCredentials(web);
  web.get('/templates', need('templates.view'), (c) => {
    const items = listTemplates(c.get('app').db, { page: 1, limit: 1000 }).items;
    return render(
      c,
      { title: 'Templates', active: '/templates' },
      <>
        <h1>Templates</h1>
        <p class="muted">Built-in templates are read-only; copy one through the API to customise it.</p>
        <div class="table-wrap">
          <table class="list" id="templates">
            <thead>
              <tr><th>Name</th><th>Vendor</th><th>Mode</th><th>Commands</th><th>Ignored lines</th><th>Devices</th></tr>
            </thead>
            <tbody>
              {items.map((t) => (
                <tr>
                  <td>{t.name} {t.builtin ? <span class="badge muted">built-in</span> : null}</td>
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
  });
}
