// Form posts with repeated fields (checkbox groups), which WebClient.post's plain record cannot express.
import type { WebClient } from './web-client';

export async function postPairs(
  w: WebClient,
  path: string,
  pairs: [string, string][],
  opts: { csrf?: boolean } = { csrf: true },
): Promise<{ res: Response; html: string }> {
  const body = new URLSearchParams(pairs);
  if (opts.csrf !== false) body.set('_csrf', await w.csrf());
  const res = await w.fetch(path, { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  return { res, html: await res.text() };
}
