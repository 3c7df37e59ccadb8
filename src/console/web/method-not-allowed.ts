/** 405 Method Not Allowed, with Allow, for the paths the console has (fastify alone answers 404). */
import type { FastifyInstance } from 'fastify';
import type { Access } from './guard.js';
import { plain } from './http-kit.js';

/** The methods a route can have; a path answers 405 (with Allow) to those it has none for. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/**
 * Registers the routes `add` makes, then for each of their paths a route answering 405 (with
 * Allow) to the methods none of them has, asked with the same access (so without a session it is
 * still 401 or the login page). Routes a plugin registers later (its own scope, a prefix) are
 * not seen here: the plugin wraps its own routes in this.
 */
export function withMethodNotAllowed(app: FastifyInstance, add: () => void): void {
  const paths = new Map<string, { methods: Set<string>; access: Access | undefined }>();
  app.addHook('onRoute', (route) => {
    const entry = paths.get(route.url) ?? { methods: new Set<string>(), access: route.config?.access };
    for (const m of [route.method].flat()) entry.methods.add(m);
    paths.set(route.url, entry);
  });
  add();
  for (const [url, { methods, access }] of [...paths]) {
    const others = METHODS.filter((m) => !methods.has(m));
    if (others.length === 0) continue;
    const allow = [...methods].join(', ');
    app.route({
      method: others,
      url,
      config: { access },
      handler: (_req, reply) => plain(reply.header('Allow', allow), 405, 'method not allowed\n'),
    });
  }
}
