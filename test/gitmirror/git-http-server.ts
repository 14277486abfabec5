// A real git server for the mirror's tests: git's own http-backend (smart HTTP) behind a tiny CGI bridge on 127.0.0.1, with a token check.
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { LoopbackServer } from './loopback';

const BACKEND = '/usr/lib/git-core/git-http-backend';

export class GitHttpServer extends LoopbackServer<Server> {
  /** `root` holds bare repositories; a request must carry Basic auth with password `token`. */
  constructor(
    private readonly root: string,
    private readonly token: string,
  ) {
    super();
  }

  url(repo: string): string {
    return `http://127.0.0.1:${this.port}/${repo}`;
  }

  protected create(): Server {
    return createServer((req, res) => this.handle(req, res));
  }

  protected dropConnections(server: Server): void {
    server.closeAllConnections();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const auth = req.headers.authorization ?? '';
    const password = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':').slice(1).join(':') : null;
    if (password !== this.token) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const child = spawn(BACKEND, [], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: this.root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        REMOTE_USER: 'tester',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      },
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let sent = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (sent) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const i = line.indexOf(':');
        const [k, v] = [line.slice(0, i), line.slice(i + 1).trim()];
        if (k.toLowerCase() === 'status') status = Number(v.split(' ')[0]);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      sent = true;
      res.write(head.subarray(end + 4));
    });
    child.on('close', () => {
      if (!sent) res.writeHead(500);
      res.end();
    });
  }
}
