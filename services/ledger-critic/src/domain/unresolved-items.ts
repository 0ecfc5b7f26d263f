import type { CompletionEvidence, MissingEvidence, OpenItem, UnresolvedItem } from '@vouch/contracts';
import { claimKey } from '@vouch/judge';

/**
 * The loops still open after a review: evidence a critique asked for, failed
 * observations no success followed, open todos and cards. An item raised again
 * keeps its id and counts how many reviews it survived, so a loop that does not
 * close is visible as one.
 */

/** Failed observations carried per review; the most recent ones. */
export const MAX_UNRESOLVED_FAILURES = 50;

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function unresolvedKey(item: Pick<UnresolvedItem, 'kind' | 'text' | 'claimText' | 'evidenceIds'>): string {
  switch (item.kind) {
    case 'failed_observation':
      return `f|${item.evidenceIds[0] ?? item.text}`;
    case 'open_item':
      return `o|${claimKey(item.text)}`;
    case 'missing_evidence':
      return `m|${claimKey(item.claimText ?? item.text)}`;
  }
}

export interface TrackUnresolvedInput {
  prior: readonly UnresolvedItem[];
  cycle: number;
  /** What this review asked for. */
  missingEvidence: readonly MissingEvidence[];
  /** Failed observations with no later success, oldest first. */
  failures: readonly CompletionEvidence[];
  openItems: readonly OpenItem[];
}

export function trackUnresolved(input: TrackUnresolvedInput): UnresolvedItem[] {
  const prior = new Map(input.prior.map((item) => [unresolvedKey(item), item]));
  const out = new Map<string, UnresolvedItem>();
  const add = (fresh: Omit<UnresolvedItem, 'id' | 'firstRaisedCycle' | 'timesRaised'>): void => {
    const key = unresolvedKey(fresh);
    if (out.has(key)) return;
    const before = prior.get(key);
    out.set(
      key,
      before
        ? { ...fresh, id: before.id, firstRaisedCycle: before.firstRaisedCycle, timesRaised: before.timesRaised + 1 }
        : { ...fresh, id: `un-${input.cycle}-${out.size + 1}`, firstRaisedCycle: input.cycle, timesRaised: 1 },
    );
  };
  const openKeys = new Set(input.openItems.map((item) => claimKey(item.text)));
  for (const item of input.openItems) add({ kind: 'open_item', text: item.text, evidenceIds: [] });
  for (const missing of input.missingEvidence) {
    // An open item's own request is already the open_item above.
    if (missing.claimId === undefined && missing.claimText !== undefined && openKeys.has(claimKey(missing.claimText))) continue;
    add({ kind: 'missing_evidence', text: missing.need, ...(missing.claimText !== undefined ? { claimText: missing.claimText } : {}), evidenceIds: [] });
  }
  for (const failure of input.failures.slice(-MAX_UNRESOLVED_FAILURES)) {
    add({ kind: 'failed_observation', text: `${failure.toolName ?? failure.kind} failed: ${clip(failure.summary, 200)}`, evidenceIds: [failure.id] });
  }
  return [...out.values()];
}
