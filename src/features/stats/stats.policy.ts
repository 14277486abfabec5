// Who may see the dashboard's figures, read by the API route and the web page.
import { operation } from '../../identity/policy';

export const STATS_OPS = {
  dashboard: operation('stats.dashboard', ['dashboard.view'], { scope: 'groups' }, { api: 'GET /stats', web: ['GET /dashboard'] }),
} as const;
