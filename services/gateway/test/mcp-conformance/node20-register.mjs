// @modelcontextprotocol/conformance 0.1.16 imports fs.globSync, which Node 20 lacks
// (it is used only to gather results from earlier runs, which these tests never do).
// Loaded with --import on Node < 22: the conformance package's `fs` gets a
// globSync that says so, everything else is Node's own fs.
import { register } from 'node:module';
register(new URL('./node20-hooks.mjs', import.meta.url));
