#!/usr/bin/env node
// The built relay; `npm run build` makes it. From a checkout without a build:
// node --conditions=@vouch/source --import tsx shared/mcp-stdio/src/main.ts
import('../dist/main.js').catch((err) => {
  if (err?.code === 'ERR_MODULE_NOT_FOUND') console.error('vouch-mcp: not built yet: run `npm run build` in the vouch checkout first');
  else console.error(`vouch-mcp: ${err?.message ?? err}`);
  process.exit(1);
});
