import { fileURLToPath } from 'node:url';

/**
 * The gateway's migrations, next to `src/` (and `dist/`). Its own module so
 * that `npm run keys` loads what it needs and not the whole gateway (the
 * HTTP app, the MCP server, the dashboard): a key CLI call took twice as long
 * to start with them.
 */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));
