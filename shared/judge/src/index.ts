/**
 * @vouch/judge: the one claim-support judge. Claims (a completion's claims,
 * a card's requirements and submission) and evidence in; a verdict per
 * claim out, with the evidence spans it rests on. Pure: no I/O, no clock.
 * The ledger critic, the board verifier and the synthesizer all decide
 * through it, so there is one notion of "the evidence shows it".
 */
export * from './derive-claims.js';
export * from './extract-features.js';
export * from './judge-support.js';
export * from './observation-features.js';
export * from './read-text.js';
export * from './read-values.js';
export * from './reconcile-claims.js';
export * from './judge-card.js';
export * from './quoted-support.js';
export * from './lexicon.js';
