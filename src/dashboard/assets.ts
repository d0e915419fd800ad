import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';

/**
 * The dashboard's static files, served by docwright itself (no CDN): htmx and its SSE extension
 * from their npm packages, and our own script and styles. Each is read once at start and served
 * under a name with its content hash, so browsers may cache it for good.
 */
interface Asset {
  path: string;
  type: string;
  body: Buffer;
  gzip: Buffer;
}

const require = createRequire(import.meta.url);
const own = (name: string) => new URL(`./assets/${name}`, import.meta.url);

const sources = {
  htmx: { file: require.resolve('htmx.org/dist/htmx.min.js'), type: 'text/javascript' },
  sse: { file: require.resolve('htmx-ext-sse/dist/sse.min.js'), type: 'text/javascript' },
  script: { file: own('dashboard.js'), type: 'text/javascript' },
  style: { file: own('style.css'), type: 'text/css' },
  icon: { file: own('icon.svg'), type: 'image/svg+xml' },
} as const;

export type AssetName = keyof typeof sources;

function load(name: AssetName): Asset {
  const { file, type } = sources[name];
  const body = readFileSync(file);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 10);
  const extension = type === 'text/css' ? 'css' : type === 'image/svg+xml' ? 'svg' : 'js';
  return {
    path: `/assets/${name}-${hash}.${extension}`,
    type: `${type}; charset=utf-8`,
    body,
    gzip: gzipSync(body, { level: 9 }),
  };
}

export const assets = Object.fromEntries(
  (Object.keys(sources) as AssetName[]).map((name) => [name, load(name)]),
) as Record<AssetName, Asset>;

/** Bytes of JavaScript a browser downloads, gzipped (docs/dashboard.mdx: under 50 KB in all). */
export const javascriptGzipBytes = (): number =>
  [assets.htmx, assets.sse, assets.script].reduce((sum, asset) => sum + asset.gzip.length, 0);

export function registerAssetRoutes(server: FastifyInstance): void {
  for (const asset of Object.values(assets)) {
    server.get(asset.path, async (request, reply) => {
      reply
        .header('content-type', asset.type)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('vary', 'accept-encoding');
      if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
        return reply.header('content-encoding', 'gzip').send(asset.gzip);
      }
      return reply.send(asset.body);
    });
  }
}
