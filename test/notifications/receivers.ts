// Real receivers on 127.0.0.1 for notification tests: a webhook (node http) whose answer can be switched, and an SMTP server (smtp-server).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface WebhookHit {
  headers: Record<string, string>;
  body: string;
  status: number;
}

export class WebhookReceiver {
  readonly hits: WebhookHit[] = [];
  status = 200;
  private server: Server | null = null;
  url = '';

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        this.hits.push({ headers, body: Buffer.concat(chunks).toString('utf8'), status: this.status });
        res.writeHead(this.status).end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  ok(): WebhookHit[] {
    return this.hits.filter((h) => h.status < 300);
  }

  async waitFor(pred: () => boolean, ms = 20_000): Promise<void> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out waiting; hits: ${this.hits.length}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (s) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  }
}

export interface Mail {
  from: string;
  to: string[];
  data: string;
}

export class SmtpReceiver {
  readonly mails: Mail[] = [];
  private server: SMTPServer | null = null;
  port = 0;
  auth: { user: string; pass: string }[] = [];

  async start(): Promise<this> {
    this.server = new SMTPServer({
      secure: false,
      disabledCommands: ['STARTTLS'],
      authOptional: true,
      allowInsecureAuth: true,
      onAuth: (a, _s, cb) => {
        this.auth.push({ user: a.username ?? '', pass: a.password ?? '' });
        cb(null, { user: a.username });
      },
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          this.mails.push({ from, to: session.envelope.rcptTo.map((r) => r.address), data: Buffer.concat(chunks).toString('utf8') });
          cb();
        });
      },
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }
}
