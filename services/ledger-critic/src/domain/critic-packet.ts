import type {
  CompletionClaim,
  CompletionEvidence,
  CriticPacket,
  CritiqueRecord,
  OpenItem,
  PacketClaim,
  PacketEvidence,
  PriorCritique,
  PriorObjection,
} from '@vouch/contracts';
import { claimKey } from '@vouch/judge';
import type { LedgerState } from './replay-ledger.js';
import type { CritiqueVerdict } from './rule-critic.js';

/**
 * The reconciliation packet a review is decided on: every material claim with
 * the evidence mapped to it, failed observations, the prior critique with the
 * evidence recorded since it grouped under it, and the loops still open. It is
 * stored with the review, so `ledger.packet` returns exactly what the critics
 * saw. Bounds keep it small enough for a model's context.
 */
export const PACKET_LIMITS = {
  claims: 150,
  evidence: 200,
  evidenceSince: 50,
  failures: 30,
  summaryChars: 500,
} as const;

const MATERIALITY_ORDER = { high: 0, medium: 1, low: 2 } as const;

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Evidence as a critic sees it: no raw reference, summary clipped. */
export function toPacketEvidence(item: CompletionEvidence): PacketEvidence {
  return {
    id: item.id,
    seq: item.seq,
    kind: item.kind,
    ...(item.toolName !== undefined ? { toolName: item.toolName } : {}),
    ...(item.success !== undefined ? { success: item.success } : {}),
    summary: clip(item.summary, PACKET_LIMITS.summaryChars),
    observedAt: item.observedAt,
  };
}

function toPacketClaim(claim: CompletionClaim): PacketClaim {
  return {
    id: claim.id,
    text: claim.text,
    kind: claim.kind,
    materiality: claim.materiality,
    requiresEvidence: claim.requiresEvidence,
    evidenceRequirement: claim.evidenceRequirement,
    status: claim.status,
    statusReason: claim.statusReason,
    evidenceIds: claim.evidenceIds,
    missingFeatures: claim.missingFeatures,
    evidenceSpans: claim.evidenceSpans,
  };
}

/** Whether each objection of the prior critique is settled by the claims and evidence now. */
function judgeObjections(prior: CritiqueRecord, claims: readonly CompletionClaim[], openItems: readonly OpenItem[], evidenceBySeq: (id: string) => number | undefined): PriorObjection[] {
  const claimsByKey = new Map(claims.map((c) => [claimKey(c.text), c]));
  const openKeys = new Set(openItems.map((item) => claimKey(item.text)));
  return prior.missingEvidence.map((missing) => {
    const base = { need: missing.need, ...(missing.claimText !== undefined ? { claimText: missing.claimText } : {}) };
    if (missing.claimText === undefined) return { ...base, resolution: 'still_open', evidenceIds: [] };
    const key = claimKey(missing.claimText);
    if (openKeys.has(key)) return { ...base, resolution: 'still_open', evidenceIds: [] };
    const claim = claimsByKey.get(key);
    if (!claim) return { ...base, resolution: 'claim_withdrawn', evidenceIds: [] };
    const newIds = claim.evidenceIds.filter((id) => (evidenceBySeq(id) ?? 0) > prior.evidenceSeqAtCritique);
    if (claim.status === 'supported' && newIds.length > 0) return { ...base, resolution: 'resolved_by_new_evidence', evidenceIds: newIds };
    return { ...base, resolution: 'still_open', evidenceIds: newIds };
  });
}

function buildPriorCritique(state: LedgerState, claims: readonly CompletionClaim[], openItems: readonly OpenItem[], evidenceSeq: (id: string) => number | undefined): PriorCritique | null {
  const prior = state.critiques.at(-1);
  if (!prior) return null;
  // Evidence seq n sits at position n - 1: replay enforces it.
  const since = state.evidence.slice(prior.evidenceSeqAtCritique);
  const shown = since.slice(-PACKET_LIMITS.evidenceSince);
  return {
    cycle: prior.cycle,
    decision: prior.decision,
    reasons: prior.reasons,
    objections: judgeObjections(prior, claims, openItems, evidenceSeq),
    evidenceSince: shown.map(toPacketEvidence),
    noEvidenceSince: since.length === 0,
    evidenceSinceOmitted: since.length - shown.length,
  };
}

export interface BuildPacketInput {
  /** The ledger before this attempt. */
  state: LedgerState;
  cycle: number;
  claims: readonly CompletionClaim[];
  openItems: readonly OpenItem[];
  /** Failed observations with no later success, oldest first. */
  failures: readonly CompletionEvidence[];
  /** The rule critic's verdict. */
  floor: CritiqueVerdict;
}

export function buildCriticPacket(input: BuildPacketInput): CriticPacket {
  const { state, cycle, claims, openItems, failures, floor } = input;
  const material = claims
    .filter((c) => c.materiality !== 'low')
    .map((c, i) => ({ c, i }))
    .sort((a, b) => MATERIALITY_ORDER[a.c.materiality] - MATERIALITY_ORDER[b.c.materiality] || a.i - b.i)
    .map(({ c }) => c);
  const shownClaims = material.slice(0, PACKET_LIMITS.claims);
  const byId = new Map(state.evidence.map((e) => [e.id, e]));
  const mappedIds = new Set(shownClaims.flatMap((c) => c.evidenceIds));
  const mapped = [...mappedIds].flatMap((id) => byId.get(id) ?? []).sort((a, b) => a.seq - b.seq);
  const shownEvidence = mapped.slice(-PACKET_LIMITS.evidence);
  const priorCritique = buildPriorCritique(state, claims, openItems, (id) => byId.get(id)?.seq);
  // Loops the prior critique left open, less those settled since: they are what this review must close.
  const settled = new Set((priorCritique?.objections ?? []).filter((o) => o.resolution !== 'still_open' && o.claimText !== undefined).map((o) => claimKey(o.claimText as string)));
  const failing = new Set(failures.map((f) => f.id));
  const openKeys = new Set(openItems.map((item) => claimKey(item.text)));
  const unresolved = state.unresolved.filter((u) => {
    if (u.kind === 'failed_observation') return u.evidenceIds.some((id) => failing.has(id));
    if (u.kind === 'open_item') return openKeys.has(claimKey(u.text));
    return u.claimText === undefined || !settled.has(claimKey(u.claimText));
  });
  return {
    runId: state.runId,
    goal: state.goal,
    policy: state.policy,
    cycle,
    cycleBudget: state.cycleBudget,
    claims: shownClaims.map(toPacketClaim),
    evidence: shownEvidence.map(toPacketEvidence),
    failedObservations: failures.slice(-PACKET_LIMITS.failures).map(toPacketEvidence),
    priorCritique,
    unresolved,
    openItems: [...openItems],
    floor: { decision: floor.decision, reasons: floor.reasons },
    instructions: criticInstructions(state.cycleBudget, cycle, floor.decision, priorCritique),
    omitted: { claims: material.length - shownClaims.length, evidence: mapped.length - shownEvidence.length },
  };
}

function criticInstructions(cycleBudget: number, cycle: number, floor: CritiqueVerdict['decision'], prior: PriorCritique | null): string[] {
  const out = [
    'Approve only if every claim that needs evidence is supported by the evidence listed. A claim with no supporting evidence cannot be approved.',
    `The rule critic decided ${floor}. You may keep or tighten that decision (approve < request_changes < blocked), never loosen it.`,
    'A failed observation with no later success contradicts the claims it touches; a later successful observation of the same thing clears it.',
    'For each objection, name the specific evidence that is missing: which observation, about which file, identifier, number, quoted string or URL.',
    'Use blocked only when verification cannot happen in this run (access denied, a dependency unavailable); use request_changes when more work or evidence can fix it.',
    `This is review ${cycle} of ${cycleBudget}. If the last review still requests changes, the run ends as incomplete_verification, never as completed.`,
  ];
  if (prior) {
    out.push(
      `Do not repeat an objection of the prior critique (cycle ${prior.cycle}) that evidence recorded since it resolves: objections marked resolved_by_new_evidence or claim_withdrawn are settled.`,
    );
    if (prior.noEvidenceSince) {
      out.push(`No evidence has been recorded since the prior critique (cycle ${prior.cycle}): its still-open objections stand unless the claims changed.`);
    }
  }
  return out;
}

function evidenceLine(e: PacketEvidence): string {
  const outcome = e.success === undefined ? 'observed' : e.success ? 'succeeded' : 'FAILED';
  return `- ${e.id} (seq ${e.seq}, ${e.kind}${e.toolName ? `, ${e.toolName}` : ''}, ${outcome}, ${e.observedAt}): ${e.summary}`;
}

export interface CriticPrompt {
  system: string;
  user: string;
}

const SYSTEM_PROMPT = [
  "You are the completion critic of an AI agent's run. You decide whether the agent's claims that it finished are backed by recorded evidence.",
  'You judge only the claims and evidence in the packet. Evidence is what tools, files, deliveries, runtime checks and people actually reported; the agent\'s own words are claims, not evidence.',
  'Answer with JSON only: {"decision": "approve" | "request_changes" | "blocked", "reasons": [string], "missingEvidence": [{"claimId": string, "need": string}], ' +
    '"claims": [{"claimId": string, "verdict": "entails" | "contradicts" | "unrelated", "evidenceId": string, "quote": string}]}.',
  'Judge every material claim against the evidence listed: "entails" only if one observation states that fact (the same action, object, qualifiers and values); ' +
    '"contradicts" if an observation says it is false, failed, not done or different; otherwise "unrelated". For entails and contradicts, give the observation id and quote its exact words.',
].join('\n');

/** The LLM critic's prompt, built from the packet alone. */
export function buildCriticPrompt(packet: CriticPacket): CriticPrompt {
  const lines: string[] = [];
  lines.push(`# Review ${packet.cycle} of ${packet.cycleBudget} (policy: ${packet.policy})`, '', '## Goal', packet.goal, '');
  lines.push('## Rule critic floor', `Decision: ${packet.floor.decision}. You may keep or tighten it, never loosen it.`, ...packet.floor.reasons.map((r) => `- ${r}`), '');
  lines.push('## Material claims');
  if (packet.claims.length === 0) lines.push('(none: the attempt makes no claim that needs checking)');
  for (const c of packet.claims) {
    lines.push(`- ${c.id} [${c.materiality}, ${c.kind}${c.requiresEvidence ? ', needs evidence' : ''}] "${c.text}"`);
    lines.push(`  status: ${c.status} (${c.statusReason}); evidence: ${c.evidenceIds.length ? c.evidenceIds.join(', ') : 'none'}`);
    for (const span of c.evidenceSpans ?? []) lines.push(`  rests on ${span.evidenceId}: "${span.text}"`);
    if (c.status !== 'supported') lines.push(`  needs: ${c.evidenceRequirement}`);
  }
  if (packet.omitted.claims) lines.push(`(${packet.omitted.claims} more material claims left out of this packet)`);
  lines.push('', '## Evidence mapped to the claims');
  if (packet.evidence.length === 0) lines.push('(none)');
  lines.push(...packet.evidence.map(evidenceLine));
  if (packet.omitted.evidence) lines.push(`(${packet.omitted.evidence} older mapped observations left out)`);
  lines.push('', '## Failed observations with no later success');
  lines.push(...(packet.failedObservations.length ? packet.failedObservations.map(evidenceLine) : ['(none)']));
  const prior = packet.priorCritique;
  if (prior) {
    lines.push('', `## Prior critique (review ${prior.cycle}: ${prior.decision})`, 'Reasons:', ...prior.reasons.map((r) => `- ${r}`));
    lines.push('Objections and what happened since:');
    for (const o of prior.objections) {
      const ids = o.evidenceIds.length ? ` (${o.evidenceIds.join(', ')})` : '';
      lines.push(`- [${o.resolution}${ids}] ${o.claimText ? `"${o.claimText}": ` : ''}${o.need}`);
    }
    if (prior.noEvidenceSince) {
      lines.push(`No evidence has been recorded since the prior critique (review ${prior.cycle}).`);
    } else {
      lines.push(`Evidence recorded since the prior critique (review ${prior.cycle}):`, ...prior.evidenceSince.map(evidenceLine));
      if (prior.evidenceSinceOmitted) lines.push(`(${prior.evidenceSinceOmitted} older observations since the critique left out)`);
    }
  }
  lines.push('', '## Loops still open from earlier reviews');
  lines.push(...(packet.unresolved.length ? packet.unresolved.map((u) => `- ${u.id} [${u.kind}, raised in review ${u.firstRaisedCycle}, ${u.timesRaised}x] ${u.text}`) : ['(none)']));
  lines.push('', '## Open todos and board cards');
  lines.push(...(packet.openItems.length ? packet.openItems.map((i) => `- [${i.kind}] ${i.text}`) : ['(none)']));
  lines.push('', '## Instructions', ...packet.instructions.map((i) => `- ${i}`));
  return { system: SYSTEM_PROMPT, user: lines.join('\n') };
}
