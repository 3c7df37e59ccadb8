/** A tiny cookie-keeping HTTP client for the console's pages (loopback only). */
export class WebClient {
  readonly cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  async request(
    path: string,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(this.base + path, {
      method: init.method ?? (body ? 'POST' : 'GET'),
      headers,
      body,
      redirect: 'manual',
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  static csrfOf(html: string): string {
    const m = /name="csrf" value="([^"]+)"/.exec(html);
    if (m === null) throw new Error('no CSRF field on the page');
    return m[1]!;
  }

  async login(name: string, password: string) {
    const page = await this.request('/login');
    return this.request('/login', { form: { csrf: WebClient.csrfOf(page.text), name, password } });
  }
}
