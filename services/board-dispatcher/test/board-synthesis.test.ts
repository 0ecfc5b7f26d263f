import { BOARD_LIMITS, BadInputError, RESULT_PAGE_BYTES, jsonBytes } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { parseBoardEvent } from '../src/domain/board-events.js';
import { INTERNAL_REFERENCE, boardRedaction, redactForPublic } from '../src/domain/redact-public.js';
import { replayBoard, type BoardState } from '../src/domain/replay-board.js';
import { SYNTHESIS_LIMITS, synthesizeBoard } from '../src/domain/synthesize-board.js';
import { upcastSnapshot } from '../src/domain/upcast-snapshot.js';
import { BoardDriver, thrown } from './drive-board.js';

const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A worker's submission naming a path, refs, a claim token and ids: what must not reach a public chat. */
const LEAKY = 'Listed 12 routers into /home/agent/work/out.csv (call-17, ct_4f1c2b); 3 run firmware 1.2, see c-2 and e-1';

/** Three cards: c-1 verified with LEAKY, c-2 waiting in review, c-3 blocked awaiting input. */
function fleetBoard(visibility: BoardState['visibility']) {
  const b = new BoardDriver();
  b.create({}, visibility);
  b.add([
    { key: 'list', title: 'List the routers and their firmware', assignee: 'worker-1', evidenceRequirements: ['the inventory output'] },
    { key: 'report', title: 'Summarise outdated firmware', assignee: 'worker-2', dependsOn: ['list'] },
    { title: 'Email the owners', assignee: 'worker-3' },
  ]);
  b.work('c-1', LEAKY);
  b.review('c-1', 'verifier-1', 'approve');
  b.work('c-2', 'All routers are current, per ./notes/fleet.md');
  b.update({ cardId: 'c-3', status: 'blocked', blockReason: 'awaiting_input' });
  return b;
}

describe('public redaction', () => {
  const redaction = { withheld: [['run-7f3a', INTERNAL_REFERENCE] as const, ['orders.sql.gz', 'a file'] as const] };
  const redact = (text: string) => redactForPublic(text, redaction);

  it('turns file system paths into words, whatever their form', () => {
    expect(redact('wrote /home/agent/work/out.csv and ./notes/fleet.md')).toBe('wrote a file and a file');
    expect(redact('read ~/inventory, ../data/ and C:\\Users\\agent\\out.csv.')).toBe('read a path, a folder and a file.');
    expect(redact('diffed src/app.ts against /etc/hosts')).toBe('diffed a file against a path');
    expect(redact('see file:///home/agent/report.html')).toBe('see a file');
  });

  it('leaves what only looks like a path: fractions, and/or, version pairs, a public URL', () => {
    const text = 'and/or 1/2 of TCP/IP routers moved from v1.2/v1.3, per https://vendor.example/advisories/2025-01.html';
    expect(redact(text)).toBe(text);
  });

  it("takes out the board's ids, claim tokens, job ids, tool call ids and its withheld literals", () => {
    expect(redact('c-3 waits on e-12 for r2')).toBe(`${INTERNAL_REFERENCE} waits on ${INTERNAL_REFERENCE} for ${INTERNAL_REFERENCE}`);
    expect(redact('claimed with ct_Zk3-9aQ_x in board-dispatcher.j0123456789abcdef0123456789abcdef')).toBe(`claimed with ${INTERNAL_REFERENCE} in ${INTERNAL_REFERENCE}`);
    expect(redact('board run-7f3a dumped orders.sql.gz')).toBe(`board ${INTERNAL_REFERENCE} dumped a file`);
    // A citation holding nothing but ids is dropped; a run of ids reads as one mention.
    expect(redact('Dumped it (e-1, call-17) [evidence e-2]. c-1, c-2 and c-3 are next.')).toBe('Dumped it. internal references are next.');
    // Words that merely contain an id's letters stay.
    expect(redact('a call-back from the e-mail of rc-1 and c-3po')).toBe('a call-back from the e-mail of rc-1 and c-3po');
  });

  it('withholds internal addresses and the refs of evidence, and keeps public sources', () => {
    const b = fleetBoard('public');
    b.attach('c-2', [{ kind: 'url', ref: 'https://vendor.example/fw/1.2', summary: 'the advisory for firmware 1.2' }]);
    const withheld = boardRedaction(b.board);
    expect(withheld.withheld).toEqual([
      ['https://vendor.example/fw/1.2', 'a web page'],
      ['call-c-1', INTERNAL_REFERENCE],
      ['call-c-2', INTERNAL_REFERENCE],
      ['board-1', INTERNAL_REFERENCE],
      ['run-1', INTERNAL_REFERENCE],
    ]);
    expect(redactForPublic('per https://vendor.example/fw/1.2, http://10.0.0.7:9000/dump and https://nvd.nist.gov/vuln.', withheld)).toBe(
      'per a web page, an internal address and https://nvd.nist.gov/vuln.',
    );
  });
});

describe('synthesis in two forms', () => {
  it('a submission with a path, refs and ids: the admin text keeps them, the public text has none of them', () => {
    const b = fleetBoard('admin');
    const admin = synthesizeBoard(b.board, 'admin');
    expect(admin.text).toBe(
      [
        'Check the router fleet: not done. 1 of 3 cards are verified.',
        '',
        'Verified:',
        `- c-1 List the routers and their firmware: ${LEAKY} [evidence e-1 (call-c-1)]`,
        '',
        'Not verified (do not present these as done):',
        '- c-3 Email the owners: blocked (awaiting_input)',
        '- c-2 Summarise outdated firmware: submitted, not yet verified',
      ].join('\n'),
    );
    const pub = synthesizeBoard(b.board, 'public');
    expect(pub.text).toBe(
      [
        'Check the router fleet: not done yet, 1 of 3 items verified.',
        '',
        'Verified:',
        '- List the routers and their firmware: Listed 12 routers into a file; 3 run firmware 1.2, see internal references (evidence: tool output)',
        '',
        '2 items are not done:',
        '- Email the owners (waiting for input)',
        '- Summarise outdated firmware (waiting for review)',
      ].join('\n'),
    );
    for (const leak of ['/home/agent', 'out.csv', 'call-17', 'ct_4f1c2b', 'c-1', 'c-2', 'c-3', 'e-1', 'call-c-1', 'board-1', 'worker-', 'notes/fleet.md']) {
      expect(pub.text).not.toContain(leak);
    }
    // The structured fields are the same in both forms: they name cards for the caller to act on.
    expect({ ...pub, form: 'admin', text: admin.text }).toEqual(admin);
    expect(pub).toMatchObject({ form: 'public', complete: false });
  });

  it('never presents an unverified card as done, in either form', () => {
    const b = new BoardDriver();
    b.create();
    b.add([
      { key: 'verified', title: 'Count the routers', assignee: 'worker-1' },
      { key: 'review', title: 'Read the firmware of each', assignee: 'worker-2' },
      { key: 'changes', title: 'Match against the advisory', assignee: 'worker-3' },
      { key: 'running', title: 'Check the spare routers', assignee: 'worker-4' },
      { key: 'dispatched', title: 'Check the lab routers', assignee: 'worker-5' },
      { key: 'ready', title: 'Check the backup links' },
      { key: 'todo', title: 'Plan the upgrades', assignee: 'worker-7', dependsOn: ['review'] },
      { key: 'blocked', title: 'Ask the vendor for 1.3', assignee: 'worker-8' },
      { key: 'cancelled', title: 'Reflash everything', assignee: 'worker-9' },
    ]);
    b.update({ cardId: 'c-8', status: 'blocked', blockReason: 'external_dependency' });
    b.update({ cardId: 'c-9', status: 'cancelled' });
    b.work('c-1', '40 routers, completed');
    b.review('c-1', 'verifier-1', 'approve');
    const evidence = [{ kind: 'tool_result' as const, ref: 'call-5', summary: 'all done, completed' }];
    b.submit('c-2', b.claim('c-2'), 'completed: every firmware read', evidence);
    b.submit('c-3', b.claim('c-3'), 'done: all match', evidence);
    b.review('c-3', 'verifier-1', 'request_changes', ['the advisory version']);
    b.claim('c-4');
    expect(Object.fromEntries(b.board.order.map((id) => [id, b.card(id).status]))).toEqual({
      'c-1': 'verified',
      'c-2': 'submitted',
      'c-3': 'changes_requested',
      'c-4': 'running',
      'c-5': 'dispatched',
      'c-6': 'ready',
      'c-7': 'todo',
      'c-8': 'blocked',
      'c-9': 'cancelled',
    });
    const pub = synthesizeBoard(b.board, 'public');
    expect(pub.text).toBe(
      [
        'Check the router fleet: not done yet, 1 of 8 items verified.',
        '',
        'Verified:',
        '- Count the routers: 40 routers, completed (evidence: tool output)',
        '',
        '7 items are not done:',
        '- Match against the advisory (needs more evidence)',
        '- Ask the vendor for 1.3 (waiting on something outside this work)',
        '- Read the firmware of each (waiting for review)',
        '- Check the spare routers (in progress)',
        '- Check the lab routers (not started)',
        '- Check the backup links (not started)',
        '- Plan the upgrades (waiting on other items)',
      ].join('\n'),
    );
    // What a worker claimed ("completed", "done") is never repeated for a card that is not verified.
    expect(pub.text).not.toMatch(/every firmware read|all match/);
    const admin = synthesizeBoard(b.board, 'admin');
    expect(admin.text.split('\n').slice(0, 4)).toEqual(['Check the router fleet: not done. 1 of 8 cards are verified.', '', 'Verified:', '- c-1 Count the routers: 40 routers, completed [evidence e-1 (call-c-1)]']);
    expect(admin.text).not.toMatch(/every firmware read|all match/);
    expect(pub.complete).toBe(false);
    expect(admin.complete).toBe(false);
  });

  it('a public board answers in the public form, and refuses the admin form', () => {
    const b = fleetBoard('public');
    expect(b.board.visibility).toBe('public');
    const s = synthesizeBoard(b.board);
    expect(s.form).toBe('public');
    expect(s.text).toBe(synthesizeBoard(b.board, 'public').text);
    expect(s.text).not.toContain('/home/agent');
    const error = thrown(() => synthesizeBoard(b.board, 'admin'));
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.message).toBe(
      'board "board-1" is public: its answer comes only in the public form, so paths, refs and internal ids stay out of public chats. Leave form out (or pass public); to inspect the board, use board.show',
    );
    expect(error.fields).toEqual([{ path: 'form', message: 'admin is refused on a public board: leave form out or pass public' }]);
    // An admin board answers in the admin form unless asked for the public one.
    const admin = fleetBoard('admin');
    expect(synthesizeBoard(admin.board).form).toBe('admin');
    expect(synthesizeBoard(admin.board, 'public').text).toBe(s.text);
  });

  it('a done board says so once every card is verified', () => {
    const b = new BoardDriver();
    b.create({}, 'public');
    b.add([{ title: 'Count the routers', assignee: 'worker-1' }]);
    b.work('c-1', 'There are 40 routers (see /srv/inventory/routers.json)');
    b.review('c-1', 'verifier-1', 'approve');
    expect(synthesizeBoard(b.board)).toMatchObject({
      form: 'public',
      complete: true,
      text: 'Check the router fleet: done, every item verified.\n\nVerified:\n- Count the routers: There are 40 routers (see a file) (evidence: tool output)',
    });
  });
});

describe('visibility in the event stream', () => {
  it('is recorded when the board is created, and a board created again with another visibility is a conflict', () => {
    const b = fleetBoard('public');
    expect(b.events[0]).toMatchObject({ type: 'board_created', visibility: 'public' });
    expect(replayBoard(roundTrip(b.events).map(parseBoardEvent))).toStrictEqual(b.board);
    expect(b.create({}, 'public').alreadyCreated).toBe(true);
    expect(thrown(() => b.create({}, 'admin')).message).toBe(
      'board "board-1" already exists with another title, scope, owner or visibility: choose another boardId, or read this one with board.show',
    );
  });

  it('events and snapshots stored before visibility existed read as admin', () => {
    const b = fleetBoard('admin');
    const stored = roundTrip(b.events) as Array<Record<string, unknown>>;
    delete stored[0]!.visibility;
    const replayed = replayBoard(stored.map(parseBoardEvent))!;
    expect(replayed.visibility).toBe('admin');
    expect(replayed).toStrictEqual(b.board);
    const { visibility: _v, ...oldSnapshot } = roundTrip(b.board);
    expect(upcastSnapshot(oldSnapshot as BoardState)).toStrictEqual(b.board);
    expect(synthesizeBoard(upcastSnapshot(oldSnapshot as BoardState)).form).toBe('admin');
  });
});

describe('a synthesis within the cap on one answer', () => {
  /** Six verified cards, each holding 151 evidence items with the longest refs: about 1.8 MB of admin text. */
  function heavyBoard(visibility: BoardState['visibility']) {
    const b = new BoardDriver();
    b.create({}, visibility);
    b.add(Array.from({ length: 6 }, (_, c) => ({ title: `Read meter bank ${c + 1}`, assignee: `worker-${c + 1}` })));
    for (let c = 1; c <= 6; c++) {
      // One item short of full: the submission attaches the last.
      for (let batch = 0; batch < BOARD_LIMITS.evidencePerCard / BOARD_LIMITS.evidencePerCall - 1; batch++) {
        const items = Array.from({ length: BOARD_LIMITS.evidencePerCall }, (_, i) => ({
          kind: 'tool_result' as const,
          summary: `reading ${batch}-${i}: ${'x'.repeat(BOARD_LIMITS.evidenceSummaryChars - 30)}`,
          ref: `call-${c}-${batch}-${i}-${'"'.repeat(BOARD_LIMITS.evidenceRefChars - 30)}`,
        }));
        b.attach(`c-${c}`, items, `worker-${c}`);
      }
      b.work(`c-${c}`, `read bank ${c}`);
      b.review(`c-${c}`, 'verifier-1', 'approve');
    }
    return b;
  }

  it('keeps each form under RESULT_PAGE_BYTES, says it was cut, and keeps every card', () => {
    for (const visibility of ['admin', 'public'] as const) {
      const s = synthesizeBoard(heavyBoard(visibility).board);
      expect(jsonBytes(s), visibility).toBeLessThanOrEqual(RESULT_PAGE_BYTES);
      expect(s.verified.map((v) => v.cardId)).toEqual(['c-1', 'c-2', 'c-3', 'c-4', 'c-5', 'c-6']);
      expect(s.complete).toBe(true);
      for (const v of s.verified) expect(v.evidenceTotal).toBe(BOARD_LIMITS.evidencePerCard - BOARD_LIMITS.evidencePerCall + 1);
    }
    const admin = synthesizeBoard(heavyBoard('admin').board);
    // Each card names its latest evidence and how many more there are.
    expect(admin.text).toMatch(/^- c-1 Read meter bank 1: read bank 1 \[evidence e-\d+ \(call-.*\), … and \d+ earlier: board\.show lists them all\]$/m);
  });

  it('stops a text too long for one answer at a card, and says how many it left out', () => {
    const b = new BoardDriver();
    b.create({}, 'admin');
    const cards = 300;
    b.add(Array.from({ length: cards }, (_, c) => ({ title: `Read meter ${c + 1}`, assignee: 'worker-1' })));
    for (let c = 1; c <= cards; c++) {
      b.work(`c-${c}`, `read meter ${c}: ${'v'.repeat(BOARD_LIMITS.evidenceSummaryChars - 30)}`);
      b.review(`c-${c}`, 'verifier-1', 'approve');
    }
    const s = synthesizeBoard(b.board);
    expect(s.truncated).toBe(true);
    expect(jsonBytes(s.text)).toBeLessThanOrEqual(SYNTHESIS_LIMITS.textBytes);
    const shown = s.text.split('\n').filter((l) => l.startsWith('- c-')).length;
    expect(shown).toBeGreaterThan(200);
    expect(s.text.split('\n').at(-1)).toBe(`… ${cards - shown} more cards not shown here, to keep this answer under ${SYNTHESIS_LIMITS.textBytes} bytes: board.show lists every card`);
    // The structured list still names every verified card.
    expect(s.verified).toHaveLength(cards);
    expect(s.complete).toBe(true);
  });

  it('leaves a board that fits as it was', () => {
    const s = synthesizeBoard(fleetBoard('admin').board, 'admin');
    expect(s.truncated).toBe(false);
    expect(s.verified).toEqual([{ cardId: 'c-1', title: 'List the routers and their firmware', evidenceIds: ['e-1'], evidenceTotal: 1 }]);
  });
});
