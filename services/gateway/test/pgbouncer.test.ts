/**
 * Postgres behind PgBouncer in transaction mode (issue 21): Debian's
 * pgbouncer, started here on a loopback port in front of the test Postgres
 * and stopped at the end (startPgBouncer). Transaction mode hands each
 * transaction whichever server connection is free, shared by every service
 * and schema, so nothing a session sets may carry over: the pools set their
 * schema and statement timeout in each transaction (SET LOCAL), and what
 * needs a session (migrations' advisory lock, the board's LISTEN) goes to
 * DATABASE_DIRECT_URL, the server itself (docs/architecture.md, "Postgres
 * behind a pooler").
 *
 * This PgBouncer is told to ignore the `options` start-up parameter, as
 * deployments often are (JDBC sends it): a schema set at connect is then
 * dropped without a word, the case that matters. Without it, PgBouncer
 * refuses the connection instead.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StartupError, assertPoolSchema, createPool, pendingMigrations, postgresTargets, withTransaction, type Pool } from '@vouch/platform';
import { TEST_DATABASE_URL, makePng, spawnTsProcess, startPgBouncer, uniqueName, useTestPrefix, useTestSchema, type PgBouncer, type TestSchema } from '@vouch/testing';
import { connectMcp, textOf } from './mcp-client.js';
import { startProcessStack, type ProcessStack, type StackProcessName } from './process-stack.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

const execFileAsync = promisify(execFile);
const KEYS_CLI = fileURLToPath(new URL('../src/cli/keys.ts', import.meta.url));
const TEST_DB = new URL(TEST_DATABASE_URL).pathname.slice(1) || 'postgres';
const migrationsOf = (service: StackProcessName) => fileURLToPath(new URL(`../../${service}/migrations`, import.meta.url));

describe('Postgres behind PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  let direct: pg.Pool;

  beforeAll(async () => {
    bouncer = await startPgBouncer({
      // `one`: a single server connection, so that two pools must take turns on it.
      // `unsplit`: for a service started without DATABASE_DIRECT_URL, whose migrations leave session state on their server connections.
      databases: { one: { dbname: TEST_DB, poolSize: 1 }, unsplit: { dbname: TEST_DB, poolSize: 1 } },
      ignoreStartupParameters: ['options'],
    });
    direct = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  });
  afterAll(async () => {
    await direct?.end();
    await bouncer?.stop();
  });

  it('reads DATABASE_DIRECT_URL as a transaction pooler in front (and, unset, sends everything to DATABASE_URL as before)', () => {
    expect(postgresTargets({ DATABASE_URL: 'postgres://bouncer/db' })).toEqual({ url: 'postgres://bouncer/db', directUrl: 'postgres://bouncer/db', directVariable: 'DATABASE_URL', transactionPooling: false });
    expect(postgresTargets({ DATABASE_URL: 'postgres://bouncer/db', DATABASE_DIRECT_URL: 'postgres://pg/db' })).toEqual({
      url: 'postgres://bouncer/db',
      directUrl: 'postgres://pg/db',
      directVariable: 'DATABASE_DIRECT_URL',
      transactionPooling: true,
    });
  });

  describe('two schemas on one server connection', () => {
    let a: TestSchema;
    let b: TestSchema;
    const pools: Pool[] = [];
    const pool = (p: Pool) => (pools.push(p), p);

    beforeAll(async () => {
      a = await useTestSchema('bouncer_a');
      b = await useTestSchema('bouncer_b');
      for (const s of [a, b]) await direct.query(`CREATE SCHEMA ${s.schema}; CREATE TABLE ${s.schema}.notes (v text NOT NULL)`);
    });
    afterAll(async () => {
      for (const p of pools) await p.end().catch(() => {});
      await a?.cleanup();
      await b?.cleanup();
    });

    const where = async (db: Pick<Pool, 'query'>) =>
      (await db.query<{ schema: string; timeout: string; pid: number }>(`SELECT current_schema() AS schema, current_setting('statement_timeout') AS timeout, pg_backend_pid() AS pid`)).rows[0]!;
    const notes = async (schema: string) => (await direct.query<{ v: string }>(`SELECT v FROM ${schema}.notes ORDER BY v`)).rows.map((r) => r.v);

    it('take turns on it, each in its own schema and statement timeout, in queries and transactions alike; nothing stays on the connection', async () => {
      const poolA = pool(createPool({ url: bouncer.url('one'), schema: a.schema, max: 3, statementTimeoutMs: 700, transactionPooling: true }));
      const poolB = pool(createPool({ url: bouncer.url('one'), schema: b.schema, max: 3, transactionPooling: true }));

      const [inA, inB] = [await where(poolA), await where(poolB)];
      expect(inA).toMatchObject({ schema: a.schema, timeout: '700ms' });
      expect(inB).toMatchObject({ schema: b.schema, timeout: '0' });
      // The pool of `one` has one server connection: both pools ran on it.
      expect(inB.pid).toBe(inA.pid);

      // Interleaved: single statements and transactions of both pools, at once, on the one connection.
      await Promise.all(
        Array.from({ length: 6 }, (_, i) => [
          poolA.query('INSERT INTO notes (v) VALUES ($1)', [`a-${i}`]),
          poolB.query('INSERT INTO notes (v) VALUES ($1)', [`b-${i}`]),
          withTransaction(poolA, async (tx) => {
            await tx.query('INSERT INTO notes (v) VALUES ($1)', [`a-tx-${i}`]);
            expect((await where(tx)).schema).toBe(a.schema);
          }),
          withTransaction(poolB, async (tx) => {
            await tx.query('INSERT INTO notes (v) VALUES ($1)', [`b-tx-${i}`]);
            expect((await where(tx)).schema).toBe(b.schema);
          }),
        ]).flat(),
      );
      expect(await notes(a.schema)).toEqual([...Array.from({ length: 6 }, (_, i) => `a-${i}`), ...Array.from({ length: 6 }, (_, i) => `a-tx-${i}`)].sort());
      expect(await notes(b.schema)).toEqual([...Array.from({ length: 6 }, (_, i) => `b-${i}`), ...Array.from({ length: 6 }, (_, i) => `b-tx-${i}`)].sort());

      // A rolled-back transaction leaves nothing, and the pool goes on.
      await expect(
        withTransaction(poolA, async (tx) => {
          await tx.query('INSERT INTO notes (v) VALUES ($1)', ['rolled back']);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(await notes(a.schema)).not.toContain('rolled back');

      // A client that sets nothing, on the same server connection, finds none of it.
      const plain = new pg.Client({ connectionString: bouncer.url('one') });
      await plain.connect();
      try {
        const left = await where(plain);
        expect(left.pid).toBe(inA.pid);
        expect(left.timeout).toBe('0');
        expect([a.schema, b.schema]).not.toContain(left.schema);
      } finally {
        await plain.end();
      }

      // The statement timeout is the transaction's: A's statements are bounded, B's are not.
      await expect(poolA.query('SELECT pg_sleep(3)')).rejects.toMatchObject({ code: '57014' });
      await poolB.query('SELECT pg_sleep(1)');
    });

    it('set at connect instead, as without a pooler: the schema is dropped without a word, a statement timeout is refused, and a start says what to set', async () => {
      const atConnect = pool(createPool({ url: bouncer.url('one'), schema: a.schema, max: 1 }));
      expect((await where(atConnect)).schema).not.toBe(a.schema);
      const refusal = assertPoolSchema(atConnect, a.schema, { url: bouncer.url('one'), connectTimeoutMs: 5_000 });
      await expect(refusal).rejects.toBeInstanceOf(StartupError);
      await expect(refusal).rejects.toThrow(`resolves names in schema "public", not in "${a.schema}"`);
      await expect(refusal).rejects.toThrow('set DATABASE_DIRECT_URL to the Postgres server itself');

      const timed = pool(createPool({ url: bouncer.url('one'), schema: a.schema, max: 1, statementTimeoutMs: 1_000 }));
      await expect(timed.query('SELECT 1')).rejects.toThrow('unsupported startup parameter: statement_timeout');
      const refused = assertPoolSchema(timed, a.schema, { url: bouncer.url('one'), connectTimeoutMs: 5_000 });
      await expect(refused).rejects.toThrow('refused a start-up parameter (unsupported startup parameter: statement_timeout)');
      await expect(refused).rejects.toThrow('set DATABASE_DIRECT_URL');
    });
  });

  describe('the services, with DATABASE_URL through PgBouncer and DATABASE_DIRECT_URL at the server', () => {
    let stack: ProcessStack;
    const run = uniqueName('bouncer_run');
    const boardId = uniqueName('bouncer_board');

    beforeAll(async () => {
      const pooled = { DATABASE_URL: bouncer.url(), DATABASE_DIRECT_URL: TEST_DATABASE_URL };
      stack = await startProcessStack('bouncer', {
        services: ['ledger-critic', 'board-dispatcher', 'extractor', 'vision-router'],
        vars: {
          gateway: pooled,
          'ledger-critic': pooled,
          extractor: pooled,
          // Its pool also reads the gateway's media tables (GATEWAY_DB_SCHEMA), through PgBouncer too. One OCR worker: one image to read, and a quicker start.
          'vision-router': { ...pooled, OCR_WORKERS: '1', WORKER_CONCURRENCY: '1' },
          // Sweeps a minute apart: a card is dispatched within the claim's wait only if the board's
          // notification (LISTEN, on the direct connection) tells the dispatcher.
          'board-dispatcher': { ...pooled, BOARD_DISPATCH_SWEEP_MS: '60000', BOARD_SWEEP_MS: '60000' },
        },
      });
    }, 240_000);
    afterAll(async () => {
      await stack?.stop();
    }, 60_000);

    const call = async (key: string, path: string, json?: unknown) => {
      const res = await fetch(`${stack.url}${path}`, {
        method: json === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${key}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };

    it('applied every migration on the direct connection', async () => {
      const directPort = new URL(TEST_DATABASE_URL).port || '5432';
      for (const service of ['gateway', 'ledger-critic', 'board-dispatcher', 'extractor', 'vision-router'] as const) {
        expect(await pendingMigrations(direct, stack.schema(service), migrationsOf(service)), service).toEqual([]);
        // Their session (advisory lock, search_path) was the server's, not a pooled connection's.
        const applied = stack.process(service).lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg?: string; database?: string }).find((l) => l.msg === 'migrations applied');
        expect(new URL(applied!.database!).port || '5432', service).toBe(directPort);
      }
    });

    it('keeps a ledger: open, record evidence, propose completion, the critique job, a second cycle', async () => {
      const key = await stack.createKey('acme');
      const opened = await call(key, '/v1/ledgers', { runId: run, goal: 'Back up the orders database and confirm the dump restores' });
      expect(opened).toMatchObject({ status: 200, body: { runId: run, status: 'open', version: 1, alreadyOpened: false } });
      const recorded = await call(key, `/v1/ledgers/${run}/evidence`, {
        items: [
          { kind: 'tool_result', toolName: 'pg_dump', success: true, summary: 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB' },
          { kind: 'file_change', toolName: 'pg_dump', success: true, summary: 'wrote orders-2025-03-01.sql.gz (2.3 GB)' },
        ],
      });
      expect(recorded).toMatchObject({ status: 200, body: { version: 2, evidenceCount: 2 } });
      const summary = 'Dumped orders-db to orders-2025-03-01.sql.gz (2.3 GB). Restored it into orders-restore-test and verified 48,210 rows.';
      const proposed = await call(key, `/v1/ledgers/${run}/completion`, { summary });
      expect(proposed.status).toBe(202);
      const first = await call(key, `${proposed.body.statusUrl}?wait=20`);
      expect(first.body).toMatchObject({ state: 'completed', result: { runId: run, cycle: 1, decision: 'request_changes', completed: false } });

      await call(key, `/v1/ledgers/${run}/evidence`, {
        items: [{ kind: 'tool_result', toolName: 'psql', success: true, summary: 'restored orders-2025-03-01.sql.gz into orders-restore-test: 48210 rows in orders' }],
      });
      const again = await call(key, `/v1/ledgers/${run}/completion`, { summary });
      const second = await call(key, `${again.body.statusUrl}?wait=20`);
      expect(second.body).toMatchObject({ state: 'completed', result: { cycle: 2, decision: 'approve', status: 'approved', completed: true } });
      expect((await call(key, `/v1/ledgers/${run}`)).body).toMatchObject({ runId: run, status: 'approved', evidencePage: { total: 3 } });
    }, 90_000);

    it('runs a board: create, add a card, claim (woken by the notification), submit, review', async () => {
      const planner = await stack.createKey('acme', { agent: 'planner' });
      const worker = await stack.createKey('acme', { agent: 'worker-1' });
      const verifier = await stack.createKey('acme', { agent: 'verifier-1' });
      const created = await call(planner, '/v1/boards', { boardId, title: 'Check the router fleet', scope: { kind: 'run', ref: run }, owner: 'planner' });
      expect(created).toMatchObject({ status: 200, body: { boardId, alreadyCreated: false } });
      // The dispatcher's first sweep is behind it, and the next a minute away.
      await expect.poll(() => stack.process('board-dispatcher').lines.some((l) => l.includes('took the dispatcher lease')), { timeout: 30_000 }).toBe(true);
      const added = await call(planner, `/v1/boards/${boardId}/cards`, {
        by: 'planner',
        cards: [{ title: 'List the routers and their firmware', assignee: 'worker-1', evidenceRequirements: ['the router inventory'] }],
      });
      expect(added.status).toBe(200);

      const claim = await call(worker, '/v1/board-claims', { assignee: 'worker-1', boardId, waitSeconds: 25 });
      expect(claim.body).toMatchObject({ claimed: true, card: { id: 'c-1' } });
      const submitted = await call(worker, `/v1/boards/${boardId}/cards/c-1/submission`, {
        claimToken: claim.body.claimToken,
        summary: '12 routers, 3 on firmware 1.2',
        evidence: [{ kind: 'file', ref: 'inventory.csv', summary: 'router inventory: 12 routers, 3 on firmware 1.2', covers: ['r1'] }],
      });
      expect(submitted).toMatchObject({ status: 200, body: { card: { status: 'submitted' } } });
      const reviewed = await call(verifier, `/v1/boards/${boardId}/cards/c-1/review`, { reviewer: 'verifier-1', decision: 'approve' });
      expect(reviewed).toMatchObject({ status: 200, body: { card: { status: 'verified' } } });
    }, 90_000);

    it('records artifacts: a read, the same read again, the file changed and read again, materialize, grep, the deterministic extract job', async () => {
      const key = await stack.createKey('acme');
      const read = (content: string) => call(key, '/v1/artifacts/read', { workspace: 'bouncer', path: 'src/uart/config.ts', content });
      const first = await read('export const uart = {\n  baudRate: 115200,\n  channel: 3,\n};\n');
      expect(first).toMatchObject({ status: 200, body: { revision: 1, fidelity: 'full', alreadyRecorded: false } });
      expect((await read('export const uart = {\n  baudRate: 115200,\n  channel: 3,\n};\n')).body).toMatchObject({ artifactId: first.body.artifactId, alreadyRecorded: true });
      const changed = await read('export const uart = {\n  baudRate: 9600,\n  channel: 3,\n};\n');
      expect(changed).toMatchObject({ status: 200, body: { revision: 2, reread: { reason: 'hash_changed', previousRevision: 1, superseded: 1 } } });

      const stale = await call(key, `/v1/artifacts/${first.body.artifactId}/materialize`, { expectedHash: first.body.hash });
      expect(stale.body).toMatchObject({ decision: 'reread_required' });
      const body = await call(key, `/v1/artifacts/${changed.body.artifactId}/materialize`, { expectedHash: changed.body.hash });
      expect(body.body).toMatchObject({ decision: 'full_body', body: 'export const uart = {\n  baudRate: 9600,\n  channel: 3,\n};\n' });

      const grep = await call(key, '/v1/artifacts/grep', { workspace: 'bouncer', pattern: 'baudRate' });
      expect(grep.body).toMatchObject({ status: 'complete', found: true, matches: [{ artifactId: changed.body.artifactId, line: 2, text: '  baudRate: 9600,' }] });

      const started = await call(key, `/v1/artifacts/${changed.body.artifactId}/extract-deterministic`, { requirements: [{ id: 'baudRate' }] });
      expect(started.status).toBe(202);
      const extracted = await call(key, `${started.body.statusUrl}?wait=20`);
      expect(extracted.body).toMatchObject({ state: 'completed', result: { requirements: [{ id: 'baudRate', status: 'satisfied', value: '9600' }] } });
    }, 60_000);

    it('analyzes an image: registered in the gateway, read from its tables by the vision-router, the packet stored and read back', async () => {
      const key = await stack.createKey('acme');
      const image = await makePng({ width: 240, height: 60 });
      const registered = await call(key, '/v1/media', { surface: 'api', chatKey: 'bouncer', messageId: 'm1', imageBase64: image.toString('base64') });
      expect(registered.status).toBe(200);
      const prompt = 'What does the label say?';
      const analyzed = await call(key, '/v1/vision/analyze', { surface: 'api', chatKey: 'bouncer', alias: registered.body.alias, prompt, requestedDetail: 'text' });
      expect(analyzed).toMatchObject({ status: 200, body: { status: 'evidence', packet: { prompt, media: { width: 240, height: 60 } } } });
      const stored = await call(key, `/v1/vision/packets/${analyzed.body.packet.packetId}`);
      expect(stored).toMatchObject({ status: 200, body: { packetId: analyzed.body.packet.packetId, prompt } });
    }, 90_000);

    it('answers MCP tool calls: a ledger and an artifact, through the gateway and the services behind it', async () => {
      const key = await stack.createKey('acme');
      const client = await connectMcp(stack.url, key, 'current');
      try {
        const mcpRun = uniqueName('bouncer_mcp');
        const opened = await client.callTool({ name: 'ledger_open', arguments: { runId: mcpRun, goal: 'Check the UART settings' } });
        expect(opened.isError ?? false, textOf(opened)).toBe(false);
        const read = await client.callTool({ name: 'artifact_read', arguments: { workspace: 'bouncer-mcp', path: 'uart.conf', content: 'baudRate = 57600\n' } });
        expect(read.isError ?? false, textOf(read)).toBe(false);
        const grep = await client.callTool({ name: 'artifact_grep', arguments: { workspace: 'bouncer-mcp', pattern: 'baudRate' } });
        expect(textOf(grep)).toContain('baudRate = 57600');
        const ledger = await client.callTool({ name: 'ledger_get', arguments: { runId: mcpRun } });
        expect(textOf(ledger)).toContain(mcpRun);
      } finally {
        await client.close();
      }
    }, 60_000);

    it("keeps tenants apart (the other tenant's key made by `npm run keys` through PgBouncer), and each service's rows in its own schema and no other", async () => {
      const { stdout } = await execFileAsync(process.execPath, ['--conditions=@vouch/source', '--import', 'tsx', KEYS_CLI, 'create', '--tenant', 'globex'], {
        env: { ...process.env, DATABASE_URL: bouncer.url(), DATABASE_DIRECT_URL: TEST_DATABASE_URL, DB_SCHEMA: stack.schema('gateway'), BULLMQ_PREFIX: stack.prefix },
        timeout: 60_000,
      });
      const other = stdout.trim();
      expect((await call(other, `/v1/ledgers/${run}`)).status).toBe(404);
      expect((await call(other, `/v1/boards/${boardId}`)).status).toBe(404);
      // The same run id in another tenant is another ledger.
      const opened = await call(other, '/v1/ledgers', { runId: run, goal: 'Collect the readings' });
      expect(opened).toMatchObject({ status: 200, body: { runId: run, version: 1, alreadyOpened: false } });

      /** Every schema holding `table`, with the rows of this test's `column` = `value` in each. */
      const rowsBySchema = async (table: string, column: string, value: string) => {
        const schemas = (await direct.query<{ s: string }>(`SELECT table_schema AS s FROM information_schema.tables WHERE table_name = $1`, [table])).rows.map((r) => r.s);
        const found: Record<string, number> = {};
        for (const s of schemas) {
          const { rows } = await direct.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(s)}.${table} WHERE ${column} = $1`, [value]);
          if (rows[0]!.n > 0) found[s] = rows[0]!.n;
        }
        return found;
      };
      expect(await rowsBySchema('ledger_heads', 'run_id', run)).toEqual({ [stack.schema('ledger-critic')]: 2 });
      expect(await rowsBySchema('board_heads', 'board_id', boardId)).toEqual({ [stack.schema('board-dispatcher')]: 1 });
      const keys = await direct.query<{ tenant: string }>(`SELECT DISTINCT tenant FROM ${stack.schema('gateway')}.api_keys ORDER BY tenant`);
      expect(keys.rows.map((r) => r.tenant)).toEqual(['acme', 'globex']);
    }, 60_000);
  });

  it('a service given only DATABASE_URL through PgBouncer refuses to start, in one line that names DATABASE_DIRECT_URL', async () => {
    const prefix = await useTestPrefix('bouncer_unsplit');
    const schema = await useTestSchema('bouncer_unsplit');
    const main = fileURLToPath(new URL('../../ledger-critic/src/main.ts', import.meta.url));
    const child = spawnTsProcess(main, { DATABASE_URL: bouncer.url('unsplit'), DATABASE_DIRECT_URL: '', REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', BULLMQ_PREFIX: prefix.prefix, DB_SCHEMA: schema.schema, HTTP_PORT: '0', LOG_LEVEL: 'warn' });
    try {
      const code = await child.exited;
      expect(code).toBe(78);
      const line = child.stderr().trim();
      expect(line).toMatch(/^ledger-critic: cannot start: Postgres at DATABASE_URL=postgres:\/\/.*:\d+\/unsplit refused a start-up parameter \(unsupported startup parameter: \w+\)/);
      expect(line).toContain('set DATABASE_DIRECT_URL to the Postgres server itself');
      expect(line.split('\n')).toHaveLength(1);
    } finally {
      child.proc.kill('SIGKILL');
      await prefix.cleanup();
      await schema.cleanup();
    }
  }, 90_000);
});
