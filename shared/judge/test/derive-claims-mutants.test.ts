import { describe, expect, it } from 'vitest';
import { claimKey, classifyClaim, deriveClaims, describeRequirement, displayRequired, isPredicateWord, isQuestion, segmentClaims, splitClauses, splitSentences } from '../src/derive-claims.js';
import { extractFeatures } from '../src/extract-features.js';

const features = (text: string): string[] => [...extractFeatures(text)].sort();

describe('isPredicateWord', () => {
  it('knows past forms, irregular ones and checking words, but not -ed words that are no verbs', () => {
    const words = ['deployed', 'Deployed', 'built', 'sped', 'exceeded', 'tested', 'passes', 'works', 'need', 'indeed', 'red', 'ed', 'xed', 'file'];
    expect(words.map((w) => isPredicateWord(w))).toEqual([true, true, true, true, true, true, true, true, false, false, false, false, false, false]);
  });
});

describe('splitSentences', () => {
  it('splits lines and sentence ends, drops list markers and blank lines, and keeps titles and initials', () => {
    expect(splitSentences('- Fixed the bug. Deployed it.\n2) Ran tests.  All pass!\n\n  \nDr. Lang approved. Ask R. Patel? "Quoted" start. e.g. Done')).toEqual([
      'Fixed the bug.',
      'Deployed it.',
      'Ran tests.',
      'All pass!',
      'Dr. Lang approved.',
      'Ask R. Patel?',
      '"Quoted" start. e.g.',
      'Done',
    ]);
  });
});

describe('splitClauses', () => {
  it('splits at semicolons and at conjunctions that start a new predicate', () => {
    expect(splitClauses('Fixed the bug; deployed v2; verified it')).toEqual(['Fixed the bug', 'deployed v2', 'verified it']);
    expect(splitClauses('Fixed the bug, and deployed it')).toEqual(['Fixed the bug', 'deployed it']);
    expect(splitClauses('Fixed the bug,and deployed it')).toEqual(['Fixed the bug', 'deployed it']);
    expect(splitClauses('Fixed the bug,  deployed it')).toEqual(['Fixed the bug', 'deployed it']);
    expect(splitClauses('Fixed the bug and then deployed it')).toEqual(['Fixed the bug', 'deployed it']);
    expect(splitClauses('Fixed the bug   and   deployed it')).toEqual(['Fixed the bug', 'deployed it']);
    expect(splitClauses('Fixed it, then I will deploy')).toEqual(['Fixed it', 'I will deploy']);
    expect(splitClauses('Fixed the bug, it  deployed fine')).toEqual(['Fixed the bug', 'it  deployed fine']);
  });

  it('does not split a list, an opening word, or words that start no predicate', () => {
    expect(splitClauses('Updated the docs, tests and code')).toEqual(['Updated the docs, tests and code']);
    expect(splitClauses('Next, I will deploy')).toEqual(['Next, I will deploy']);
    expect(splitClauses('Fixed the bug while tests ran')).toEqual(['Fixed the bug while tests ran']);
    expect(splitClauses('Fixed the login bug but the upload still fails')).toEqual(['Fixed the login bug but the upload still fails']);
    expect(splitClauses('Fixed the bug, 42 tests pass')).toEqual(['Fixed the bug, 42 tests pass']);
    expect(splitClauses('Fixed the bug, - deployed it')).toEqual(['Fixed the bug, - deployed it']);
  });

  it('splits off a short lead that says where the answer came from', () => {
    expect(splitClauses('I looked it up: the clinic opens at 9:00')).toEqual(['I looked it up:', 'the clinic opens at 9:00']);
    expect(splitClauses('Lab results are back: HbA1c is 6.8%')).toEqual(['Lab results are back:', 'HbA1c is 6.8%']);
    expect(splitClauses('We checked: all 12 pods ready')).toEqual(['We checked:', 'all 12 pods ready']);
    expect(splitClauses('I deployed it: the site is live')).toEqual(['I deployed it:', 'the site is live']);
    expect(splitClauses('One two three four five six: the port is 8080')).toEqual(['One two three four five six:', 'the port is 8080']);
    expect(splitClauses('Result:  port 8080')).toEqual(['Result:', 'port 8080']);
    expect(splitClauses('Note: x')).toEqual(['Note:', 'x']);
  });

  it('keeps a lead that says what was done, names a file, or is long, with its claim', () => {
    expect(splitClauses('Deployed the app: it is live')).toEqual(['Deployed the app: it is live']);
    expect(splitClauses('Looked in config.yaml: port is 8080')).toEqual(['Looked in config.yaml: port is 8080']);
    expect(splitClauses('One two three four five six seven: the port is 8080')).toEqual(['One two three four five six seven: the port is 8080']);
    expect(splitClauses(':  nothing')).toEqual([':  nothing']);
  });

  it('cleans list markers, headings, emphasis, leading conjunctions and trailing punctuation', () => {
    expect(splitClauses('- **Fixed** the bug...')).toEqual(['Fixed the bug']);
    expect(splitClauses('## Deployed v2 ;')).toEqual(['Deployed v2']);
    expect(splitClauses('#Deployed v2')).toEqual(['Deployed v2']);
    expect(splitClauses('__Deployed__ v2')).toEqual(['Deployed v2']);
    expect(splitClauses('And then fixed it')).toEqual(['then fixed it']);
    expect(splitClauses('but fixed it')).toEqual(['fixed it']);
    expect(splitClauses('also fixed it')).toEqual(['fixed it']);
    expect(splitClauses('So fixed it.,;')).toEqual(['fixed it']);
    expect(splitClauses('andfixed it')).toEqual(['andfixed it']);
    expect(splitClauses('[x] fixed it')).toEqual(['fixed it']);
    expect(splitClauses('12) fixed it')).toEqual(['fixed it']);
    expect(splitClauses('1234) fixed it')).toEqual(['1234) fixed it']);
    expect(splitClauses('...')).toEqual([]);
  });
});

describe('segmentClaims', () => {
  it('carries a hedge at the head of a sentence to each clause, and the clause before', () => {
    expect(segmentClaims('Probably, deployed the fix and verified it. Deployed the fix, probably fine. Deployed v2; maybe it works')).toEqual([
      { text: 'Probably, deployed the fix', hedged: true },
      { text: 'verified it', hedged: true, previous: 'Probably, deployed the fix' },
      { text: 'Deployed the fix, probably fine', hedged: false },
      { text: 'Deployed v2', hedged: false },
      { text: 'maybe it works', hedged: false, previous: 'Deployed v2' },
    ]);
    expect(segmentClaims('I think I fixed the bug and deployed it')).toEqual([
      { text: 'I think I fixed the bug', hedged: true },
      { text: 'deployed it', hedged: true, previous: 'I think I fixed the bug' },
    ]);
  });
});

describe('classifyClaim', () => {
  const cases: Array<[string, string, string]> = [
    ['I found that the port is 8080', 'statement', 'medium'],
    ['We have determined that the API returns 500', 'verification', 'high'],
    ['After checking, we found that tests pass', 'verification', 'high'],
    ['Is it deployed?', 'aside', 'low'],
    ['Is it deployed?  ', 'aside', 'low'],
    ['Is it deployed? no', 'action', 'high'],
    ['let me know if it breaks', 'aside', 'low'],
    ['Here is the summary', 'aside', 'low'],
    ['Results:', 'aside', 'low'],
    ['Results:  ', 'aside', 'low'],
    ['Answered the question', 'aside', 'low'],
    ['Answered the customer question about order 7002', 'aside', 'low'],
    ['Replied to Bob', 'aside', 'low'],
    ['I replied to Bob', 'aside', 'low'],
    ['Summarised the report', 'aside', 'low'],
    ['Summarized the report', 'aside', 'low'],
    ['Explained how the config.yaml works', 'verification', 'high'],
    ['Explained the outage to the on-call team in detail', 'action', 'high'],
    ['Deployed v2 to production', 'action', 'high'],
    ['Verified the deploy', 'verification', 'high'],
    ['Could not verify the fix', 'limitation', 'low'],
    ['Fixed the upload that failed to resume', 'action', 'high'],
    ['This should fix it', 'hedged', 'low'],
    ['This should fix config.yaml', 'hedged', 'medium'],
    ['The fix is probably deployed', 'hedged', 'medium'],
    ['Deployed, probably', 'action', 'high'],
    ['Will deploy tomorrow', 'plan', 'low'],
    ['I plan to deploy', 'plan', 'low'],
    ['I intend to deploy', 'plan', 'low'],
    ['Intends to deploy', 'plan', 'low'],
    ['The port is 8080', 'statement', 'medium'],
    ['Port open', 'aside', 'low'],
    ['Okay', 'aside', 'low'],
    ['The federal returns were filed', 'action', 'high'],
    ['Tests pass', 'verification', 'high'],
    ['Returns 200', 'verification', 'high'],
    ['The books can be borrowed', 'statement', 'medium'],
    ['The books must not be returned', 'statement', 'medium'],
    ['Returned the books', 'action', 'high'],
    ['Deployed it and it works', 'verification', 'high'],
    ['The server is now up', 'verification', 'high'],
    ['It is live', 'verification', 'high'],
    ['no errors in the log', 'verification', 'high'],
    ['exits with code 0', 'verification', 'high'],
    ['exit 0', 'verification', 'high'],
  ];
  for (const [text, kind, materiality] of cases) {
    it(`reads "${text}" as ${kind} (${materiality})`, () => {
      expect(classifyClaim(text)).toEqual({ kind, materiality });
    });
  }

  it('reads an outcome under a sentence hedge as hedged, but not a plan', () => {
    expect(classifyClaim('The port is 8080', { hedged: true })).toEqual({ kind: 'hedged', materiality: 'medium' });
    expect(classifyClaim('Deployed v2', { hedged: true })).toEqual({ kind: 'hedged', materiality: 'medium' });
    expect(classifyClaim('Okay', { hedged: true })).toEqual({ kind: 'hedged', materiality: 'low' });
    expect(classifyClaim('Will deploy', { hedged: true })).toEqual({ kind: 'plan', materiality: 'low' });
  });
});

describe('describeRequirement and displayRequired', () => {
  const required = features('Deployed v2 with config.yaml');
  const generic = ', sharing a file name, identifier, number, quoted string, URL or tool name with the claim';

  it('says what evidence each kind of claim needs, naming what it must mention', () => {
    expect(describeRequirement('action', 'high', required)).toBe('a successful observation (tool result, file change or delivery result) that it was done, mentioning config.yaml, v2');
    expect(describeRequirement('verification', 'high', required)).toBe('a successful check (tool result or runtime observation) of that outcome, mentioning config.yaml, v2');
    expect(describeRequirement('hedged', 'medium', required)).toBe('an observation of the outcome, mentioning config.yaml, v2; or reword the claim so it does not imply the outcome');
    expect(describeRequirement('statement', 'medium', required)).toBe('an observation that shows it, mentioning config.yaml, v2');
    expect(describeRequirement('action', 'high', [])).toBe(`a successful observation (tool result, file change or delivery result) that it was done${generic}`);
    expect(describeRequirement('verification', 'medium', [])).toBe(`a successful check (tool result or runtime observation) of that outcome${generic}`);
    expect(describeRequirement('hedged', 'medium', [])).toBe(`an observation of the outcome${generic}; or reword the claim so it does not imply the outcome`);
    expect(describeRequirement('statement', 'medium', [])).toBe(`an observation that shows it${generic}`);
    expect(describeRequirement('plan', 'low', required)).toBe('none: a plan, hedge, limitation or aside, not a claim that something was done');
  });

  it('leaves out a URL\'s origin and last segment when the URL is listed', () => {
    expect(displayRequired(features('Fetched https://example.com/docs/guide and https://example.com/docs'))).toEqual(['https://example.com/docs/guide']);
    expect(displayRequired(features('Fetched http://example.com/guide.html'))).toEqual(['http://example.com/guide.html']);
    expect(displayRequired(features('Fetched https://example.com'))).toEqual(['https://example.com']);
    expect(displayRequired(features('edited guide.html and ran npm test'))).toEqual(['guide.html']);
  });
});

describe('claimKey and isQuestion', () => {
  it('keys a claim by its words, whatever the case, spacing and punctuation', () => {
    expect(claimKey('  Deployed   V2.0 to  PROD!  ')).toBe('deployed v20 to prod');
    expect(claimKey('Deployed\tv2')).toBe('deployed v2');
  });

  it('tells a question from an order', () => {
    const goals = ['What is X', 'is it up', 'Deploy it', 'Deploy it?', 'Deploy it? ', 'island report', 'Howdy', '  how are you'];
    expect(goals.map((g) => isQuestion(g))).toEqual([true, true, false, true, true, false, false, true]);
  });
});

describe('deriveClaims', () => {
  const claims = (goal: string, summary: string, visibleAnswer?: string, policy?: 'fast' | 'full') =>
    deriveClaims({ goal, summary, visibleAnswer }, { cycle: 2, ...(policy ? { policy } : {}) }).map((c) => [c.id, c.text, c.source, c.kind, c.materiality]);

  it('gives each claim its id, requirement and sorted features, and keeps a claim said twice once', () => {
    expect(deriveClaims({ goal: 'Deploy api v2', summary: 'Deployed api v2 with config.yaml.' }, { cycle: 1 })).toEqual([
      {
        id: 'cl-1-1',
        text: 'Deployed api v2 with config.yaml',
        source: 'task_complete_summary',
        kind: 'action',
        materiality: 'high',
        evidenceRequirement: 'a successful observation (tool result, file change or delivery result) that it was done, mentioning config.yaml, v2',
        features: ['file:config.yaml', 'id:v2', 'word:api', 'word:deploy'],
      },
    ]);
    expect(claims('Deploy api v2', 'Deployed api v2 to production.', 'Deployed api v2 to production. Let me know if anything else.')).toEqual([
      ['cl-2-1', 'Deployed api v2 to production', 'task_complete_summary', 'action', 'high'],
      ['cl-2-2', 'Let me know if anything else', 'assistant_visible_text', 'aside', 'low'],
    ]);
  });

  it('claims the goal, one line and clipped, when nothing material is said', () => {
    expect(claims('Deploy   api\n v2', 'Done.')).toEqual([
      ['cl-2-1', 'Done', 'task_complete_summary', 'aside', 'low'],
      ['cl-2-2', 'The goal was achieved: Deploy api v2', 'derived', 'action', 'high'],
    ]);
    expect(claims('Deploy', '...')).toEqual([['cl-2-1', 'The goal was achieved: Deploy', 'derived', 'action', 'high']]);
    const goal = (n: number) => claims('x'.repeat(n), 'Done.')[1]?.[1] as string;
    expect(goal(299)).toBe(`The goal was achieved: ${'x'.repeat(299)}`);
    expect(goal(300)).toBe(`The goal was achieved: ${'x'.repeat(300)}`);
    expect(goal(301)).toBe(`The goal was achieved: ${'x'.repeat(299)}…`);
  });

  it('keeps the goal light when the reply itself is the work and was given', () => {
    expect(claims('What port does the api use?', 'Done.', 'Okay')).toEqual([
      ['cl-2-1', 'Done', 'task_complete_summary', 'aside', 'low'],
      ['cl-2-2', 'Okay', 'assistant_visible_text', 'aside', 'low'],
      ['cl-2-3', 'The goal was achieved: What port does the api use?', 'derived', 'action', 'medium'],
    ]);
    expect(claims('What port does the api use?', 'Done.', 'It uses port 8080')).toEqual([
      ['cl-2-1', 'Done', 'task_complete_summary', 'aside', 'low'],
      ['cl-2-2', 'It uses port 8080', 'assistant_visible_text', 'statement', 'medium'],
    ]);
    // A question with no visible reply is not answered, whatever the summary says.
    expect(claims('What port does the api use?', 'Okay', '  ')).toEqual([
      ['cl-2-1', 'Okay', 'task_complete_summary', 'aside', 'low'],
      ['cl-2-2', 'The goal was achieved: What port does the api use?', 'derived', 'action', 'high'],
    ]);
    expect(claims('What port does the api use?', '', '')).toEqual([['cl-2-1', 'The goal was achieved: What port does the api use?', 'derived', 'action', 'high']]);
    // A goal that asks for words is answered by any text.
    expect(claims('Explain the outage', 'Done.')).toEqual([
      ['cl-2-1', 'Done', 'task_complete_summary', 'aside', 'low'],
      ['cl-2-2', 'The goal was achieved: Explain the outage', 'derived', 'action', 'medium'],
    ]);
    expect(claims('Explain the outage', '', 'ok')).toEqual([
      ['cl-2-1', 'ok', 'assistant_visible_text', 'aside', 'low'],
      ['cl-2-2', 'The goal was achieved: Explain the outage', 'derived', 'action', 'medium'],
    ]);
    expect(claims('Explain the outage', '')).toEqual([['cl-2-1', 'The goal was achieved: Explain the outage', 'derived', 'action', 'high']]);
  });

  it('under the fast policy, claims an order\'s goal unless the texts state its outcome', () => {
    expect(claims('Deploy api v2', 'The service looks fine.', undefined, 'fast')).toEqual([
      ['cl-2-1', 'The service looks fine', 'task_complete_summary', 'statement', 'medium'],
      ['cl-2-2', 'The goal was achieved: Deploy api v2', 'derived', 'action', 'high'],
    ]);
    expect(claims('Deploy api v2', 'The service looks fine.', undefined, 'full')).toEqual([['cl-2-1', 'The service looks fine', 'task_complete_summary', 'statement', 'medium']]);
    expect(claims('Deploy api v2', 'Api v2 is deployed.', undefined, 'fast')).toEqual([['cl-2-1', 'Api v2 is deployed', 'task_complete_summary', 'action', 'high']]);
    expect(claims('Deploy api v2', 'Deployed api v2 to production.', undefined, 'fast')).toEqual([['cl-2-1', 'Deployed api v2 to production', 'task_complete_summary', 'action', 'high']]);
    // A question or a request for words is its own reply.
    expect(claims('What port does the api use?', 'The api uses port 8080.', undefined, 'fast')).toEqual([['cl-2-1', 'The api uses port 8080', 'task_complete_summary', 'statement', 'medium']]);
    expect(claims('Explain the outage', 'The outage was caused by a bad cert rotation on the edge.', undefined, 'fast')).toEqual([
      ['cl-2-1', 'The outage was caused by a bad cert rotation on the edge', 'task_complete_summary', 'action', 'high'],
    ]);
  });
});

describe("deriveClaims: the goal's identifiers and its own claim", () => {
  const claimsOf = (goal: string, summary: string) => deriveClaims({ goal, summary }, { cycle: 1 }).map((c) => [c.text, c.source, c.kind, c.materiality]);

  it('claims an identifier of an order that the texts leave out, as the goal wrote it, without its brackets, quotes and stops', () => {
    for (const goal of ['Unlock ("acct-991"). today', "Unlock 'acct-991' today", 'Unlock acct-991.']) {
      expect(claimsOf(goal, 'Unlocked the account for the customer.')).toEqual([
        ['Unlocked the account for the customer', 'task_complete_summary', 'action', 'high'],
        ['acct-991', 'derived', 'statement', 'high'],
      ]);
    }
  });

  it('claims no identifier for a question or a request for words: the reply is the work', () => {
    expect(claimsOf('Which replica serves acct-991?', 'The primary replica serves the reads after the failover.')).toEqual([
      ['The primary replica serves the reads after the failover', 'task_complete_summary', 'statement', 'medium'],
    ]);
    expect(claimsOf('Explain why acct-991 was locked', 'The account was locked after five failed logins.')).toEqual([
      ['The account was locked after five failed logins', 'task_complete_summary', 'action', 'high'],
    ]);
  });

  it("writes the goal's own claim on one line, its runs of spaces as one", () => {
    expect(claimsOf('Deploy\n the   billing  service', 'Done.')).toEqual([
      ['Done', 'task_complete_summary', 'aside', 'low'],
      ['The goal was achieved: Deploy the billing service', 'derived', 'action', 'high'],
    ]);
  });
});
