import { CriticPacketSchema } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { buildCriticPrompt } from '../src/domain/critic-packet.js';
import { LedgerDriver, failed, llmSays, ok } from './drive-ledger.js';

const GOAL = 'Publish the March newsletter to the mailing list and archive it as newsletter-2025-03.html';
const SUMMARY = 'Sent the newsletter to list-4411 (1,932 recipients). Archived it as newsletter-2025-03.html.';

function firstReview(): LedgerDriver {
  const run = new LedgerDriver('news-1');
  run.open(GOAL);
  run.record(ok('file_change', 'editor', 'created newsletter-2025-03.html (24 KB)'), failed('delivery_result', 'mailer', 'send to list-4411 failed: SMTP 451 try again later'));
  const outcome = run.propose({ summary: SUMMARY, llm: llmSays('request_changes') });
  expect(outcome).toMatchObject({ decision: 'request_changes', status: 'request_changes', completed: false });
  return run;
}

describe('critic packet', () => {
  it('holds every material claim with its mapped evidence and the failed observations', () => {
    const run = firstReview();
    const packet = run.ledger.packets[0]!;
    expect(CriticPacketSchema.parse(packet)).toStrictEqual(packet);
    expect(packet.claims.map((c) => [c.text, c.status, c.evidenceIds])).toEqual([
      ['Sent the newsletter to list-4411 (1,932 recipients)', 'contradicted', ['ev-2']],
      ['Archived it as newsletter-2025-03.html', 'supported', ['ev-1']],
    ]);
    expect(packet.evidence.map((e) => e.id)).toEqual(['ev-1', 'ev-2']);
    expect(packet.failedObservations.map((e) => e.id)).toEqual(['ev-2']);
    expect(packet.priorCritique).toBeNull();
    expect(packet.floor.decision).toBe('request_changes');
    // Raw references stay out of what a model reads.
    expect(JSON.stringify(packet)).not.toContain('rawRef');
  });

  it('puts evidence recorded after a critique under that critique in the next packet, and says which objections it resolved', () => {
    const run = firstReview();
    run.record(ok('delivery_result', 'mailer', 'sent newsletter to list-4411: 1932 recipients accepted, 0 rejected'));
    let prompt = '';
    run.propose({
      summary: SUMMARY,
      llm: (review) => {
        prompt = review.prompt!.user;
        return llmSays('approve')();
      },
    });
    const packet = run.ledger.packets[1]!;
    const prior = packet.priorCritique!;
    expect(prior).toMatchObject({ cycle: 1, decision: 'request_changes', noEvidenceSince: false, evidenceSinceOmitted: 0 });
    expect(prior.evidenceSince.map((e) => e.id)).toEqual(['ev-3']);
    expect(prior.objections).toEqual([
      expect.objectContaining({ claimText: 'Sent the newsletter to list-4411 (1,932 recipients)', resolution: 'resolved_by_new_evidence', evidenceIds: ['ev-3'] }),
    ]);
    expect(packet.instructions).toContain(
      'Do not repeat an objection of the prior critique (cycle 1) that evidence recorded since it resolves: objections marked resolved_by_new_evidence or claim_withdrawn are settled.',
    );

    // The critic prompt includes the prior critique and, under it, the evidence since.
    const priorAt = prompt.indexOf('## Prior critique (review 1: request_changes)');
    const sinceAt = prompt.indexOf('Evidence recorded since the prior critique (review 1):');
    expect(priorAt).toBeGreaterThan(-1);
    expect(sinceAt).toBeGreaterThan(priorAt);
    expect(prompt.slice(sinceAt)).toContain('- ev-3 (seq 3, delivery_result, mailer, succeeded');
    expect(prompt).toContain('[resolved_by_new_evidence (ev-3)]');
    expect(prompt).toContain('Do not repeat an objection of the prior critique');
    expect(run.ledger.status).toBe('approved');
  });

  it('says plainly when no evidence was recorded since the prior critique', () => {
    const run = firstReview();
    run.propose({ summary: SUMMARY, llm: llmSays('request_changes') });
    const packet = run.ledger.packets[1]!;
    expect(packet.priorCritique).toMatchObject({ noEvidenceSince: true, evidenceSince: [] });
    expect(packet.priorCritique!.objections.map((o) => o.resolution)).toEqual(['still_open']);
    const { user } = buildCriticPrompt(packet);
    expect(user).toContain('No evidence has been recorded since the prior critique (review 1).');
    expect(packet.instructions.at(-1)).toBe('No evidence has been recorded since the prior critique (cycle 1): its still-open objections stand unless the claims changed.');
  });

  it('marks an objection settled when the claim is withdrawn', () => {
    const run = firstReview();
    run.propose({ summary: 'Archived it as newsletter-2025-03.html. Could not send the newsletter: the mailer keeps failing.' });
    expect(run.ledger.packets[1]!.priorCritique!.objections[0]).toMatchObject({ resolution: 'claim_withdrawn' });
  });

  it('is stored exactly as the critic saw it', () => {
    const run = firstReview();
    const review = run.reviews[0]!;
    expect(run.ledger.packets[0]).toStrictEqual(review.packet);
    expect(buildCriticPrompt(run.ledger.packets[0]!)).toStrictEqual(review.prompt);
    expect(review.prompt!.system).toContain('Answer with JSON only');
  });

  it('tracks a loop that stays open across reviews as one unresolved item', () => {
    const run = firstReview();
    run.propose({ summary: SUMMARY });
    const loops = run.ledger.unresolved.filter((u) => u.kind === 'missing_evidence');
    expect(loops).toEqual([expect.objectContaining({ claimText: 'Sent the newsletter to list-4411 (1,932 recipients)', firstRaisedCycle: 1, timesRaised: 2 })]);
    expect(run.ledger.unresolved.find((u) => u.kind === 'failed_observation')).toMatchObject({ evidenceIds: ['ev-2'], timesRaised: 2 });
  });
});
