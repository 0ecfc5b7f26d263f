import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { startExtractorUnderTest, type ExtractorUnderTest } from './extractor-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

describe('the extractor over HTTP through the real gateway', () => {
  let gw: GatewayUnderTest;
  let svc: ExtractorUnderTest;
  let acme: string;
  let globex: string;
  let artifact: Json;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('extractor_http');
    svc = await startExtractorUnderTest('extractor_http', {}, { prefix: gw.prefix });
    acme = await gw.createKey('acme');
    globex = await gw.createKey('globex');
  });
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  const call = async (path: string, init: { key?: string; json?: unknown } = {}) => {
    const res = await gw.fetch(path, { key: init.key ?? acme, ...(init.json !== undefined ? { json: init.json } : {}) });
    return { status: res.status, type: res.headers.get('content-type') ?? '', body: (await res.json()) as Json };
  };
  const rows = async () => (await svc.service.pool.query('SELECT tenant, artifact_id, availability FROM artifacts ORDER BY tenant, artifact_id')).rows;
  const edges = async () => (await svc.service.pool.query('SELECT count(*)::int AS n FROM materialization_edges')).rows[0].n as number;

  it('records a read, materializes it and runs a deterministic extract as a job', async () => {
    const content = 'export const uart = {\n  baudRate: 115200,\n  channel: 3,\n};\n';
    const read = await call('/v1/artifacts/read', { json: { workspace: 'fw', path: 'src/uart.ts', content } });
    expect(read.status).toBe(200);
    artifact = read.body;
    expect(artifact).toMatchObject({ workspace: 'fw', path: 'src/uart.ts', revision: 1, fidelity: 'full', availability: 'available', lineCount: 4, alreadyRecorded: false });
    const body = await call(`/v1/artifacts/${artifact.artifactId}/materialize`, { json: { expectedHash: artifact.hash } });
    expect(body).toMatchObject({ status: 200, body: { decision: 'full_body', body: content } });

    const accepted = await call(`/v1/artifacts/${artifact.artifactId}/extract-deterministic`, { json: { requirements: [{ id: 'baudRate' }, { id: 'channel' }] } });
    expect(accepted.status).toBe(202);
    const done = await call(`${accepted.body.statusUrl}?wait=10`);
    expect(done.body).toMatchObject({ state: 'completed', result: { coverage: { complete: true }, extractor: { kind: 'deterministic' } } });
  });

  it('answers bad input with a clear 4xx and changes nothing', async () => {
    const before = await rows();
    const edgesBefore = await edges();
    const bad: Array<[string, unknown, number, string]> = [
      ['/v1/artifacts/read', { workspace: 'fw', path: '../etc/passwd', content: 'x' }, 400, 'path must not contain .. segments'],
      ['/v1/artifacts/read', { workspace: 'fw', path: '/etc/passwd', content: 'x' }, 400, 'not absolute'],
      ['/v1/artifacts/read', { workspace: 'fw', path: 'a\u0000b', content: 'x' }, 400, 'NUL'],
      ['/v1/artifacts/read', { workspace: 'fw', path: 'a\u001bb', content: 'x' }, 400, 'control characters'],
      ['/v1/artifacts/read', { workspace: 'fw', path: 'img.png', content: '\u0089PNG\r\n\u001a\n\u0000\u0000' }, 400, 'content'],
      ['/v1/artifacts/read', { workspace: 'fw', path: 'blob.bin', content: 'ELF\u0002\u0001\u0001' }, 400, 'looks binary'],
      ['/v1/artifacts/read', { workspace: 'fw', path: 'a.ts' }, 400, 'content is required'],
      ['/v1/artifacts/read', { workspace: '../x', path: 'a.ts', content: 'x' }, 400, 'workspace'],
      ['/v1/artifacts/read', { workspace: 'fw', path: 'a.ts', content: 'a\nb\nc\n', range: { unit: 'lines', start: 1, end: 2 } }, 400, 'send exactly the lines of the range'],
      ['/v1/artifacts/read', { workspace: 'fw', path: 'never-read.ts', gone: true }, 404, 'nothing to mark gone'],
      ['/v1/artifacts/art-000000000000000000000000/materialize', { expectedHash: 'a'.repeat(64) }, 404, 'no artifact art-000000000000000000000000'],
      ['/v1/artifacts/not-an-id/materialize', { expectedHash: 'a'.repeat(64) }, 400, 'artifact id'],
      [`/v1/artifacts/${artifact.artifactId}/materialize`, { expectedHash: 'nope' }, 400, 'hash'],
      [`/v1/artifacts/${artifact.artifactId}/materialize`, { expectedHash: artifact.hash, budgetChars: 0 }, 400, 'budgetChars'],
      [`/v1/artifacts/${artifact.artifactId}/extract`, { requirements: [] }, 400, 'at least one fact'],
      [`/v1/artifacts/${artifact.artifactId}/extract-deterministic`, { requirements: [{ id: 'a' }, { id: 'a' }] }, 400, 'unique'],
      [`/v1/artifacts/${artifact.artifactId}/extract-deterministic`, { requirements: [{ id: 'bad id!' }] }, 400, 'identifier'],
      ['/v1/artifacts/grep', { workspace: 'fw', pattern: '(a' }, 400, 'not a valid RE2 expression'],
      ['/v1/artifacts/grep', { workspace: 'fw', pattern: '(a)\\1' }, 400, 'no backreferences or lookaround'],
      ['/v1/artifacts/grep', { workspace: 'fw', pattern: '(?=x)y' }, 400, 'not a valid RE2 expression'],
      ['/v1/artifacts/grep', { workspace: 'fw', pattern: '((a{100}){100}){100}' }, 400, 'pattern'],
      ['/v1/artifacts/grep', { workspace: 'fw', pattern: '' }, 400, 'pattern must not be empty'],
      ['/v1/artifacts/grep', { workspace: 'fw', pattern: 'x', capBytes: 10 }, 400, 'capBytes'],
    ];
    for (const [path, json, status, detail] of bad) {
      const res = await call(path, { json });
      expect({ path, json, status: res.status }).toEqual({ path, json, status });
      expect(res.type).toContain('application/problem+json');
      expect(JSON.stringify(res.body)).toContain(detail);
    }
    expect(await rows()).toEqual(before);
    expect(await edges()).toBe(edgesBefore);
  });

  it('stores one artifact for one file however its name is composed (NFC), and finds it by either spelling', async () => {
    const nfd = 'docs/cafe\u0301/me\u0301nu.txt';
    const nfc = 'docs/caf\u00e9/m\u00e9nu.txt';
    const content = 'espresso: 2.50\n';
    const first = await call('/v1/artifacts/read', { json: { workspace: 'fw', path: nfd, content } });
    expect(first).toMatchObject({ status: 200, body: { path: nfc, revision: 1, alreadyRecorded: false } });
    const again = await call('/v1/artifacts/read', { json: { workspace: 'fw', path: nfc, content } });
    expect(again).toMatchObject({ status: 200, body: { artifactId: first.body.artifactId, path: nfc, revision: 1, alreadyRecorded: true } });
    const stored = await svc.service.pool.query('SELECT path FROM artifacts WHERE workspace = $1 AND path LIKE $2', ['fw', 'docs/caf%']);
    expect(stored.rows).toEqual([{ path: nfc }]);
    const heads = await svc.service.pool.query("SELECT count(*)::int AS n FROM artifact_paths WHERE workspace = 'fw' AND path LIKE 'docs/caf%'");
    expect(heads.rows[0].n).toBe(1);

    // A prefix typed decomposed finds the file stored composed.
    const grep = await call('/v1/artifacts/grep', { json: { workspace: 'fw', pattern: 'espresso', pathPrefix: 'docs/cafe\u0301/' } });
    expect(grep.body).toMatchObject({ status: 'complete', found: true, matches: [{ path: nfc, line: 1 }] });
    // Marking it gone by the other spelling retires the one artifact.
    const gone = await call('/v1/artifacts/read', { json: { workspace: 'fw', path: nfd, gone: true } });
    expect(gone).toMatchObject({ status: 200, body: { path: nfc, gone: true, unavailable: 1 } });
  });

  it('refuses a path with hidden characters or mixed-script lookalikes with a 400 naming path, and stores nothing', async () => {
    const before = await rows();
    const refused: Array<[unknown, string]> = [
      [{ workspace: 'fw', path: 'invoice\u202Efdp.exe', content: 'x' }, 'path must not contain bidirectional control characters (U+202E at offset 7): rename the file without them'],
      [{ workspace: 'fw', path: 'src/pay\u200Bpal.ts', content: 'x' }, 'path must not contain invisible or format characters (U+200B at offset 7)'],
      [{ workspace: 'fw', path: 'p\u0430ypal.txt', content: 'x' }, 'path must not mix Latin, Cyrillic and Greek letters in one word (Cyrillic U+0430 at offset 1'],
      [{ workspace: 'fw', path: 'p\u0430ypal.txt', gone: true }, 'Cyrillic U+0430 at offset 1'],
      [{ workspace: 'fw', pattern: 'x', pathPrefix: 'src/\u202E' }, 'pathPrefix must not contain bidirectional control characters (U+202E at offset 4)'],
    ];
    for (const [json, detail] of refused) {
      const res = await call((json as { pattern?: string }).pattern ? '/v1/artifacts/grep' : '/v1/artifacts/read', { json });
      expect({ json, status: res.status }).toEqual({ json, status: 400 });
      expect(res.type).toContain('application/problem+json');
      expect(res.body.detail).toContain(detail);
      const field = (json as { pattern?: string }).pattern ? 'pathPrefix' : 'path';
      expect(res.body.fields).toEqual([{ path: field, message: expect.stringContaining(detail) }]);
    }
    expect(await rows()).toEqual(before);
  });

  it('accepts plain names in any one script', async () => {
    for (const path of ['\u043e\u0442\u0447\u0451\u0442.txt', '\u5831\u544a.txt', 'caf\u00e9.txt', '\u03bb-calculus/\u03c3\u03b7\u03bc\u03b5\u03af\u03c9\u03c3\u03b7.md']) {
      const res = await call('/v1/artifacts/read', { json: { workspace: 'scripts', path, content: `${path}\n` } });
      expect({ path, status: res.status, stored: res.body.path }).toEqual({ path, status: 200, stored: path });
    }
  });

  it('answers a catastrophic-backtracking pattern at once (RE2: linear time)', async () => {
    await call('/v1/artifacts/read', { json: { workspace: 'fw', path: 'long.txt', content: `${'a'.repeat(200_000)}!\n` } });
    const res = await call('/v1/artifacts/grep', { json: { workspace: 'fw', pattern: '(a+)+$' } });
    expect(res).toMatchObject({ status: 200, body: { status: 'complete', found: false } });
  });

  it("reveals nothing of another tenant's artifacts: their ids are not found, exactly like ids that do not exist", async () => {
    const foreign = await call(`/v1/artifacts/${artifact.artifactId}/materialize`, { key: globex, json: { expectedHash: artifact.hash } });
    const unknown = await call('/v1/artifacts/art-ffffffffffffffffffffffff/materialize', { key: globex, json: { expectedHash: artifact.hash } });
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(foreign.body.detail.replace(artifact.artifactId, 'ID')).toBe(unknown.body.detail.replace('art-ffffffffffffffffffffffff', 'ID'));

    const job = await call(`/v1/artifacts/${artifact.artifactId}/extract-deterministic`, { key: globex, json: { requirements: [{ id: 'baudRate' }] } });
    const failed = await call(`${job.body.statusUrl}?wait=10`, { key: globex });
    expect(failed.body).toMatchObject({ state: 'failed', error: { code: 'NOT_FOUND' } });

    const grep = await call('/v1/artifacts/grep', { key: globex, json: { workspace: 'fw', pattern: 'baudRate' } });
    expect(grep.body).toMatchObject({ status: 'complete', found: false, matches: [], provenance: { filesTotal: 0 } });
    const peek = await call(`${job.body.statusUrl}`, { key: acme });
    expect(peek.status).toBe(404);
  });
});
