import { describe, expect, it } from 'vitest';
import { cardObservations, judgeCard, requirementFact, type CardToJudge } from '../src/judge-card.js';

const AT = '1970-01-01T00:00:00.000Z';

describe('requirementFact: the fact a requirement asks the evidence to show', () => {
  it('drops the words that only describe the evidence', () => {
    expect(requirementFact('npm test output showing 0 failures')).toBe('0 failures');
    expect(requirementFact('  npm   test\n output showing 0 failures ')).toBe('0 failures');
    expect(requirementFact('the same   listing for us-east-1')).toBe('the same listing for us-east-1');
    expect(requirementFact('the postmortem document with timeline, root cause and action items')).toBe('timeline, root cause and action items');
    expect(requirementFact('the deploy log showing 3 pods ready')).toBe('3 pods ready');
    expect(requirementFact('the report with summary of counts')).toBe('summary of counts');
    expect(requirementFact('the pipeline run screenshot showing deploys done')).toBe('deploys done');
  });

  it('knows each word that introduces the fact, and only as a word of its own', () => {
    for (const verb of ['that shows', 'that show', 'which shows', 'which show', 'listing', 'stating', 'confirming', 'proving']) {
      expect(requirementFact(`the build ${verb} all tests passing`)).toBe('all tests passing');
    }
    expect(requirementFact('the build showing  all tests passing')).toBe('all tests passing');
    expect(requirementFact('the buildshowing all tests passing')).toBe('the buildshowing all tests passing');
  });

  it('keeps the names and identifiers of the description, which say which thing', () => {
    expect(requirementFact('the MultiQC report showing per-sample read counts')).toBe('MultiQC per-sample read counts');
    expect(requirementFact('Kubectl output showing pods running ready')).toBe('Kubectl pods running ready');
    expect(requirementFact('the k8s pod list showing pods running ready')).toBe('k8s pods running ready');
    expect(requirementFact('the e2e dashboard showing pods running ready')).toBe('e2e pods running ready');
    expect(requirementFact('the iOS dashboard showing pods running ready')).toBe('iOS pods running ready');
    expect(requirementFact('the PR page showing merged into main')).toBe('PR merged into main');
    expect(requirementFact('CI run showing all 42 tests pass')).toBe('CI all 42 tests pass');
    // An article is no name, even capitalised.
    expect(requirementFact('The page showing pods running ready')).toBe('pods running ready');
    expect(requirementFact('A screen showing pods running ready')).toBe('pods running ready');
    expect(requirementFact('An page showing pods running ready')).toBe('pods running ready');
    expect(requirementFact('the pod list showing pods running ready')).toBe('pods running ready');
    expect(requirementFact('Apache page showing pods running ready')).toBe('Apache pods running ready');
    expect(requirementFact('Android page showing pods running ready')).toBe('Android pods running ready');
  });

  it('leaves a description too long to be one alone', () => {
    const long = 'the supercalifragilisticexpialidocious-very-long-hyphenated-name-of-the-monitoring-dashboard showing 3 pods ready';
    expect(requirementFact(long)).toBe(long);
  });

  it('drops a trailing form word that names the evidence', () => {
    expect(requirementFact('the deploy output')).toBe('the deploy');
    expect(requirementFact('the API output')).toBe('the API');
    // Nothing of three letters left besides an article: the form word is the thing itself.
    expect(requirementFact('the a output')).toBe('the a output');
    expect(requirementFact('an output')).toBe('an output');
    expect(requirementFact('the db output')).toBe('the db output');
    expect(requirementFact('xy output')).toBe('xy output');
    expect(requirementFact('ab the cd output')).toBe('ab the cd');
  });

  it('keeps the whole requirement when what follows is no fact of its own', () => {
    // A description of more than six words is no description.
    expect(requirementFact('one two three four five six showing 0 failures')).toBe('0 failures');
    expect(requirementFact('one two three four five six seven showing 0 failures')).toBe('one two three four five six seven showing 0 failures');
    // Fewer than two content words and no number.
    expect(requirementFact('the report showing green')).toBe('the report showing green');
    expect(requirementFact('the report showing green status')).toBe('green status');
    expect(requirementFact('the report showing the green')).toBe('the report showing the green');
    expect(requirementFact('the build showing all this')).toBe('the build showing all this');
    expect(requirementFact('the build showing every each')).toBe('the build showing every each');
    expect(requirementFact('the build showing x all tests')).toBe('the build showing x all tests');
    expect(requirementFact('the build showing all tests ab')).toBe('the build showing all tests ab');
    expect(requirementFact('the build showing tests x1y passing')).toBe('tests x1y passing');
    expect(requirementFact('the build showing tests passing1 ok')).toBe('tests passing1 ok');
    // Content words are whole words of letters, and a stop word only as a whole word.
    expect(requirementFact('the scan showing green x-ray')).toBe('the scan showing green x-ray');
    expect(requirementFact('the scan showing green well-known')).toBe('the scan showing green well-known');
    expect(requirementFact('the log showing firewall rules')).toBe('firewall rules');
    expect(requirementFact('the log showing thermal readings')).toBe('thermal readings');
    // A number is a fact on its own.
    expect(requirementFact('the report showing 12')).toBe('12');
    expect(requirementFact('the build showing 1 x')).toBe('1 x');
    // "for us-east-1", "of region names": a preposition continues the description.
    expect(requirementFact('the same listing for us-east-1')).toBe('the same listing for us-east-1');
    expect(requirementFact('the report showing of region names')).toBe('the report showing of region names');
    expect(requirementFact('the report showing in region names')).toBe('the report showing in region names');
    expect(requirementFact('the report showing online region names')).toBe('online region names');
    expect(requirementFact('the listing of all buckets in us-east-1')).toBe('the listing of all buckets in us-east-1');
  });
});

describe('cardObservations: the card evidence as observations', () => {
  it('maps each kind, numbers items in order and appends the ref of a file or URL after the summary', () => {
    expect(
      cardObservations([
        { id: 'a', kind: 'file', summary: 's', ref: 'p' },
        { id: 'b', kind: 'url', summary: 's', ref: 'http://x' },
        { id: 'c', kind: 'message', summary: 's', ref: 'r' },
        { id: 'd', kind: 'verification_note', summary: 's' },
        { id: 'e', kind: 'tool_result', summary: 's', ref: 'r' },
        { id: 'f', kind: 'file', summary: 's' },
      ]),
    ).toEqual([
      { id: 'a', seq: 1, kind: 'file_change', summary: 's\np', observedAt: AT, recordedAt: AT },
      { id: 'b', seq: 2, kind: 'runtime_observation', summary: 's\nhttp://x', observedAt: AT, recordedAt: AT },
      { id: 'c', seq: 3, kind: 'critic_feedback', summary: 's', observedAt: AT, recordedAt: AT },
      { id: 'd', seq: 4, kind: 'critic_feedback', summary: 's', observedAt: AT, recordedAt: AT },
      { id: 'e', seq: 5, kind: 'tool_result', summary: 's', observedAt: AT, recordedAt: AT },
      { id: 'f', seq: 6, kind: 'file_change', summary: 's', observedAt: AT, recordedAt: AT },
    ]);
  });
});

const testsCard = (summary: string, kind: CardToJudge['evidence'][number]['kind'] = 'tool_result'): CardToJudge => ({
  title: 'Run tests',
  requirements: [{ id: 'r1', text: 'npm test output showing 0 failures' }],
  evidence: [{ id: 'e1', kind, summary, covers: ['r1'] }],
});

describe('judgeCard', () => {
  it('meets a requirement that an item shows, with the words it rests on', () => {
    expect(judgeCard(testsCard('npm test: 42 passed, 0 failures'))).toEqual({
      met: true,
      requirements: [
        {
          requirementId: 'r1',
          text: 'npm test output showing 0 failures',
          met: true,
          status: 'supported',
          reason: 'shown by e1: "0 failures"',
          evidenceIds: ['e1'],
          spans: [{ evidenceId: 'e1', start: 21, end: 31, text: '0 failures' }],
          unsupportedCovers: [],
        },
      ],
      submissionClaims: [],
    });
  });

  it('does not meet a requirement the item does not show, and names the item whose covers claimed it', () => {
    expect(judgeCard(testsCard('npm test: 40 passed, 2 failures'))).toEqual({
      met: false,
      requirements: [
        {
          requirementId: 'r1',
          text: 'npm test output showing 0 failures',
          met: false,
          status: 'unverified',
          reason: 'no successful observation shows it: the closest, e1, does not show "0"',
          evidenceIds: [],
          spans: [],
          unsupportedCovers: ['e1'],
        },
      ],
      submissionClaims: [],
    });
  });

  it('takes a verification note or a message for what someone said, not an observation', () => {
    for (const kind of ['verification_note', 'message'] as const) {
      const judged = judgeCard(testsCard('npm test: 42 passed, 0 failures', kind));
      expect(judged.met, kind).toBe(false);
      expect(judged.requirements[0], kind).toMatchObject({
        met: false,
        status: 'unverified',
        reason: 'only a message or a verification note mentions it (what someone said); no tool result, file or URL shows it',
        evidenceIds: [],
        spans: [],
        unsupportedCovers: ['e1'],
      });
    }
  });

  it("does not verify on a worker's message that repeats the requirement word for word, and does on the tool result it speaks of", () => {
    const card = (kind: 'message' | 'tool_result'): CardToJudge => ({
      title: 'Inventory the routers',
      requirements: [{ id: 'r1', text: 'the router inventory output listing every router and its firmware version' }],
      evidence: [{ id: 'e1', kind, summary: 'router inventory output listing every router and its firmware version', covers: ['r1'] }],
    });
    expect(judgeCard(card('message')).met).toBe(false);
    expect(judgeCard(card('tool_result')).met).toBe(true);
  });

  it('is met only when every requirement is, and reports covers per requirement', () => {
    const card = (second: string): CardToJudge => ({
      title: 'Ship it',
      requirements: [
        { id: 'r1', text: 'npm test output showing 0 failures' },
        { id: 'r2', text: 'the deploy log showing 3 pods ready' },
      ],
      evidence: [
        { id: 'e1', kind: 'tool_result', summary: 'npm test: 42 passed, 0 failures', covers: ['r1', 'r2'] },
        { id: 'e2', kind: 'tool_result', summary: second, covers: ['r2'] },
      ],
    });
    const both = judgeCard(card('kubectl rollout: 3 pods ready'));
    expect(both.met).toBe(true);
    expect(both.requirements.map((r) => [r.requirementId, r.met, r.evidenceIds, r.unsupportedCovers])).toEqual([
      ['r1', true, ['e1'], []],
      ['r2', true, ['e2'], ['e1']],
    ]);
    expect(both.requirements[1]?.spans).toEqual([{ evidenceId: 'e2', start: 0, end: 29, text: 'kubectl rollout: 3 pods ready' }]);

    const partial = judgeCard(card('kubectl rollout: 1 of 3 pods ready'));
    expect(partial.met).toBe(false);
    expect(partial.requirements.map((r) => [r.requirementId, r.met, r.status, r.evidenceIds, r.spans.length, r.unsupportedCovers])).toEqual([
      ['r1', true, 'supported', ['e1'], 1, []],
      ['r2', false, 'contradicted', [], 0, ['e1', 'e2']],
    ]);
  });

  it('judges the title, as requirement `title`, on a card without requirements', () => {
    const card: CardToJudge = { title: 'staging bucket', requirements: [], evidence: [{ id: 'e1', kind: 'tool_result', summary: 'aws s3 ls: staging bucket', covers: ['title'] }] };
    expect(judgeCard(card)).toEqual({
      met: true,
      requirements: [
        {
          requirementId: 'title',
          text: 'staging bucket',
          met: true,
          status: 'supported',
          reason: 'shown by e1: "aws s3 ls: staging bucket"',
          evidenceIds: ['e1'],
          spans: [{ evidenceId: 'e1', start: 0, end: 25, text: 'aws s3 ls: staging bucket' }],
          unsupportedCovers: [],
        },
      ],
      submissionClaims: [],
    });
    // The title is taken as it stands, not cut to a fact.
    const unmet = judgeCard({ title: 'npm test output showing 0 failures', requirements: [], evidence: [] });
    expect(unmet.requirements).toEqual([
      { requirementId: 'title', text: 'npm test output showing 0 failures', met: false, status: 'unsupported', reason: 'no recorded observation is about this claim', evidenceIds: [], spans: [], unsupportedCovers: [] },
    ]);
    expect(unmet.met).toBe(false);
  });

  it('reads the ref of a file or URL as seen, but clips spans to the item\'s own summary', () => {
    const file = judgeCard({ title: 'x', requirements: [{ id: 'r1', text: 'updated docs/README.md' }], evidence: [{ id: 'e1', kind: 'file', summary: 'updated', ref: 'docs/README.md' }] });
    expect(file.requirements[0]).toMatchObject({ met: true, reason: 'shown by e1: "updated docs/README.md"', spans: [{ evidenceId: 'e1', start: 0, end: 7, text: 'updated' }] });

    const summary = 'lorem ipsum dolor sit amet, a long unrelated summary of many words here';
    const late = judgeCard({ title: 'x', requirements: [{ id: 'r1', text: 'docs/README.md' }], evidence: [{ id: 'e1', kind: 'file', summary, ref: 'docs/README.md' }] });
    expect(late.requirements[0]?.spans).toEqual([{ evidenceId: 'e1', start: 28, end: 71, text: 'a long unrelated summary of many words here' }]);

    const url = (kind: 'url' | 'message') =>
      judgeCard({ title: 'x', requirements: [{ id: 'r1', text: 'https://status.example.com shows all systems operational' }], evidence: [{ id: 'e1', kind, summary: 'all systems operational', ref: 'https://status.example.com' }] });
    expect(url('url').requirements[0]).toMatchObject({ met: true, spans: [{ evidenceId: 'e1', start: 0, end: 23, text: 'all systems operational' }] });
    // A message's ref is where it was said, not something seen; and a message is no observation at all.
    expect(url('message').requirements[0]).toMatchObject({ met: false, status: 'unverified', reason: 'only a message or a verification note mentions it (what someone said); no tool result, file or URL shows it' });
  });

  it('clips a span to the summary of the item it is in', () => {
    const judged = judgeCard({
      title: 'x',
      requirements: [{ id: 'r1', text: 'kubectl rollout 3 pods ready' }],
      evidence: [
        { id: 'e0', kind: 'tool_result', summary: 'ok' },
        { id: 'e1', kind: 'tool_result', summary: 'kubectl rollout status: 3 pods ready' },
      ],
    });
    expect(judged.requirements[0]?.spans).toEqual([{ evidenceId: 'e1', start: 0, end: 36, text: 'kubectl rollout status: 3 pods ready' }]);
    // A span within the summary is left as the judge gave it.
    const lines = judgeCard({ title: 'x', requirements: [{ id: 'r1', text: 'npm test 0 failures' }], evidence: [{ id: 'e1', kind: 'tool_result', summary: 'npm test: 0 failures\nlint: 3 warnings in src/app.ts' }] });
    expect(lines.requirements[0]?.spans).toEqual([{ evidenceId: 'e1', start: 0, end: 51, text: 'npm test: 0 failures lint: 3 warnings in src/app.ts' }]);
  });

  it('reads a card title as an action to be shown done, and keeps a requirement that asks for a check a check', () => {
    const restart = judgeCard({ title: 'Restart the nginx server', requirements: [], evidence: [{ id: 'e1', kind: 'tool_result', summary: 'nginx server status: active (running)' }] });
    expect(restart.requirements[0]).toMatchObject({ met: false, status: 'unverified', reason: 'no successful observation shows it: the closest, e1, does not show "Restart"' });
    const check = judgeCard({ title: 'x', requirements: [{ id: 'r1', text: 'all tests pass in config.yaml' }], evidence: [{ id: 'e1', kind: 'file', summary: 'config.yaml: all tests pass' }] });
    expect(check.requirements[0]).toMatchObject({ met: false, status: 'unverified', reason: 'no successful observation shows it: the closest, e1, does not show "a check (this is a file change)"' });
  });

  it('reports the submission\'s claims that the evidence contradicts, without letting them decide', () => {
    const card = (submission: string | undefined): CardToJudge => ({
      title: 'Run tests',
      requirements: [{ id: 'r1', text: 'npm test 0 failures' }],
      submission,
      evidence: [
        { id: 'e1', kind: 'tool_result', summary: 'npm test: 42 passed, 0 failures' },
        { id: 'e2', kind: 'tool_result', summary: 'deploy api 4.2 to production: rolled back, 0 of 3 pods ready' },
      ],
    });
    const judged = judgeCard(card('Ran npm test: 0 failures. Deployed api 4.2 to production.'));
    expect(judged.met).toBe(true);
    expect(judged.requirements[0]).toMatchObject({ text: 'npm test 0 failures', met: true, spans: [{ evidenceId: 'e1', start: 0, end: 31, text: 'npm test: 42 passed, 0 failures' }] });
    expect(judged.submissionClaims.map((c) => [c.id, c.text, c.status, c.source])).toEqual([['cl-1-2', 'Deployed api 4.2 to production', 'contradicted', 'task_complete_summary']]);
    // "Done." claims the card's title was achieved: that is the requirements' business, not a submitted claim.
    expect(judgeCard({ ...card('Done.'), title: 'Deploy api 4.2 to production' }).submissionClaims).toEqual([]);
    expect(judgeCard(card('Ran npm test: 0 failures.')).submissionClaims).toEqual([]);
    expect(judgeCard(card(undefined)).submissionClaims).toEqual([]);
    expect(judgeCard(card('')).submissionClaims).toEqual([]);
  });
});

describe('a requirement that is only a form word', () => {
  it('keeps its words: "the log" is not cut to "the"', () => {
    expect(requirementFact('the log')).toBe('the log');
    expect(requirementFact('the deploy log')).toBe('the deploy');
  });
});
