import { RESULT_PAGE_BYTES, linesWithinBytes, type CompletionClaim, type CompletionEvidence, type EvidenceKind, type LedgerSnapshot, type LedgerStatus, type RenderForm } from '@vouch/contracts';
import { isPath } from '@vouch/judge';

/**
 * Human-facing text of a ledger. The status travels beside the text, never
 * inside it as the only signal, and no render calls a run completed unless it
 * was approved. `admin` shows sections with evidence ids and raw references;
 * `public` is a compact answer that cites evidence by tool, without ids, raw
 * references or file system paths.
 */
export interface RenderedLedger {
  runId: string;
  form: RenderForm;
  status: LedgerStatus;
  completed: boolean;
  text: string;
  /** True when the text stops early to keep the answer under the cap on one result (its last line says so). */
  truncated: boolean;
}

const ADMIN_EVIDENCE_LINES = 50;

const KIND_LABEL: Record<EvidenceKind, string> = {
  tool_result: 'tool result',
  file_change: 'file change',
  delivery_result: 'delivery result',
  runtime_observation: 'runtime check',
  human_input: 'human input',
  critic_feedback: 'critic feedback',
};

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function statusLine(ledger: LedgerSnapshot): string {
  const last = ledger.critiques.at(-1);
  const review = last ? `review ${last.cycle} of ${ledger.cycleBudget}` : 'no review yet';
  switch (ledger.status) {
    case 'approved':
      return `approved: completed. Every claim that needs evidence is backed by recorded evidence (${review}).`;
    case 'incomplete_verification':
      return last?.decision === 'blocked'
        ? `incomplete verification: verification was blocked in ${review}. This run is not marked done.`
        : `incomplete verification: ${review} still requested changes and the review budget is spent. This run is not marked done.`;
    case 'request_changes':
      return `changes requested (${review}): not done yet; the items under "Not verified / blocked" need evidence.`;
    case 'blocked':
      return 'blocked: verification cannot proceed. This run is not marked done.';
    case 'open':
      return `open: ${ledger.evidence.length} observations recorded; no completion reviewed yet.`;
  }
}

/** Claims shown as not verified: those the policy needs evidence for and lacks it, and any other claim evidence contradicts. */
function notVerified(claims: readonly CompletionClaim[]): CompletionClaim[] {
  return claims.filter((c) => c.status !== 'supported' && (c.materiality !== 'low' || c.status === 'contradicted' || c.status === 'blocked'));
}

function renderAdmin(ledger: LedgerSnapshot): string {
  const claims = ledger.proposedClaims;
  const supported = claims.filter((c) => c.status === 'supported' && c.materiality !== 'low');
  const done = supported.filter((c) => c.kind === 'action');
  const verified = supported.filter((c) => c.kind !== 'action');
  const byId = new Map(ledger.evidence.map((e) => [e.id, e]));
  const backing = (c: CompletionClaim): string[] => c.evidenceIds.filter((id) => isBacking(byId.get(id)));
  // The words each verdict rests on, so a person can check it at a glance.
  const spans = (c: CompletionClaim): string => (c.evidenceSpans ?? []).map((sp) => `${sp.evidenceId}: "${clip(sp.text, 160)}"`).join('; ');
  const withIds = (c: CompletionClaim): string => `- ${c.text} (${backing(c).slice(-5).join(', ')})${spans(c) ? ` ← ${spans(c)}` : ''}`;
  const lines: string[] = [`Run ${ledger.runId}: ${statusLine(ledger)}`, `Goal: ${clip(ledger.goal, 500)}`, ''];
  lines.push('Done', ...(done.length ? done.map(withIds) : ['- (nothing verified as done)']), '');
  lines.push('Verified', ...(verified.length ? verified.map(withIds) : ['- (none)']), '');
  const gaps = notVerified(claims).map((c) => `- [${c.status}] ${c.text}: ${c.statusReason}${c.requiresEvidence ? `. Needs ${c.evidenceRequirement}` : ''}${spans(c) ? ` ← ${spans(c)}` : ''}`);
  const last = ledger.critiques.at(-1);
  const llm = last?.critics.llm;
  if (last && last.decision !== 'approve' && llm?.decision !== undefined && llm.decision !== 'approve') {
    for (const reason of llm.reasons ?? []) gaps.push(`- [critic] ${reason}`);
  }
  for (const item of ledger.unresolved) {
    if (item.kind === 'missing_evidence') continue;
    gaps.push(`- [${item.kind === 'open_item' ? 'open item' : 'failed observation'}] ${item.text}${item.evidenceIds.length ? ` (${item.evidenceIds.join(', ')})` : ''}`);
  }
  lines.push('Not verified / blocked', ...(gaps.length ? gaps : ['- (none)']), '');
  const shown = ledger.evidence.slice(-ADMIN_EVIDENCE_LINES);
  lines.push(`Evidence (${ledger.evidence.length})`);
  if (ledger.evidence.length > shown.length) lines.push(`- (${ledger.evidence.length - shown.length} earlier items not shown: ledger.get lists them all)`);
  for (const e of shown) {
    const outcome = e.success === undefined ? 'observed' : e.success ? 'ok' : 'FAILED';
    lines.push(`- ${e.id} #${e.seq} ${e.kind}${e.toolName ? ` ${e.toolName}` : ''} ${outcome} ${e.observedAt}: ${clip(e.summary, 300)}${e.rawRef ? ` [raw: ${e.rawRef}]` : ''}`);
  }
  if (shown.length === 0) lines.push('- (none recorded)');
  return lines.join('\n');
}

const INTERNAL_ID_RE = /\b(?:ev|cl|un)-\d+(?:-\d+)?\b/g;
// A bracketed IPv6 host ("http://[::1]:8080/") is part of the address.
const URL_RE = /\bhttps?:\/\/(?:\[[0-9a-f:.]+\])?[^\s<>"'`)\]]*/gi;
const PATH_RE = /(?:[A-Za-z]:\\|~\/|\.{1,2}\/|\/)?(?:[\w.@+-]+[/\\])+[\w.@+-]*/g;
const INTERNAL_HOST_RE = /^(localhost|127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|0\.0\.0\.0|\[?::1?\]?$|\[?f[cd][0-9a-f]{0,2}:|\[?fe80:)/i;

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

/** Text safe for a public answer: no internal ids, paths reduced to file names, internal URLs withheld. */
export function publicSafe(text: string): string {
  const urls: string[] = [];
  const masked = text.replace(URL_RE, (match) => {
    // Punctuation after an address ends the sentence or the list item, not the address: it stays when the address is withheld.
    const url = match.replace(/[.,;:!?]+$/, '');
    urls.push(INTERNAL_HOST_RE.test(hostOf(url)) ? 'an internal address' : url);
    return `⟦${urls.length - 1}⟧${match.slice(url.length)}`;
  });
  return masked
    .replace(INTERNAL_ID_RE, '')
    .replace(PATH_RE, (path) => (isPath(path) ? (path.replace(/[/\\]+$/, '').split(/[/\\]/).pop() ?? path) : path))
    .replace(/⟦(\d+)⟧/g, (_m, i: string) => urls[Number(i)] ?? '')
    .replace(/\s*\(\s*,?\s*\)/g, '')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/** Evidence that backs a claim it is linked to: an observation that did not fail. */
function isBacking(e: CompletionEvidence | undefined): e is CompletionEvidence {
  return e !== undefined && e.success !== false && e.kind !== 'critic_feedback';
}

function citations(claim: CompletionClaim, byId: ReadonlyMap<string, CompletionEvidence>): string {
  const labels = new Set<string>();
  for (const id of claim.evidenceIds) {
    const e = byId.get(id);
    if (isBacking(e)) labels.add(publicSafe(e.toolName ?? KIND_LABEL[e.kind]));
  }
  return [...labels].slice(-3).join(', ');
}

function publicReason(claim: CompletionClaim): string {
  switch (claim.status) {
    case 'contradicted':
      return 'the last check of it failed';
    case 'blocked':
      return 'it could not be checked';
    case 'unverified':
      return claim.missingFeatures.length ? `nothing recorded confirms ${publicSafe(claim.missingFeatures.join(', '))}` : 'nothing recorded confirms it';
    default:
      return 'no evidence was recorded';
  }
}

function renderPublic(ledger: LedgerSnapshot): string {
  const byId = new Map(ledger.evidence.map((e) => [e.id, e]));
  const claims = ledger.proposedClaims;
  const confirmed = claims.filter((c) => c.status === 'supported' && c.materiality !== 'low');
  const cite = (c: CompletionClaim): string => {
    const by = citations(c, byId);
    return `- ${publicSafe(c.text)}${by ? ` (checked: ${by})` : ''}`;
  };
  if (ledger.status === 'approved') {
    const answer = publicSafe(ledger.proposal?.visibleAnswer ?? ledger.proposal?.summary ?? '');
    const tools = new Set(confirmed.map((c) => citations(c, byId)).filter(Boolean).flatMap((s) => s.split(', ')));
    return tools.size ? `${answer}\n\nChecked with: ${[...tools].join(', ')}.` : answer;
  }
  const gaps = notVerified(claims);
  const lines: string[] = [];
  if (ledger.status === 'incomplete_verification' || ledger.status === 'blocked') {
    lines.push('Not verified: I could not confirm all of this with recorded evidence, so it is not marked done.');
  } else if (ledger.proposal) {
    lines.push('Still being verified: parts of this are not confirmed yet.');
  } else {
    lines.push('In progress: nothing has been proposed as done yet.');
  }
  if (confirmed.length) lines.push('', 'Confirmed:', ...confirmed.map(cite));
  if (gaps.length) lines.push('', 'Not confirmed:', ...gaps.map((c) => `- ${publicSafe(c.text)}: ${publicReason(c)}`));
  const open = ledger.unresolved.filter((u) => u.kind === 'open_item');
  if (open.length) lines.push('', 'Still open:', ...open.map((u) => `- ${publicSafe(u.text)}`));
  return lines.join('\n');
}

/** Room a render's answer keeps beside its text (run id, status, form). */
const RENDER_ANSWER_ROOM = 4 * 1024;

/**
 * The ledger as text for a person. Each part is clipped where it is built (the
 * latest 50 observations, 300 characters each, 50 failures), and the whole
 * text stops at a line past `maxBytes` as JSON, saying so, so that no ledger
 * answers 500 for its size.
 */
export function renderLedger(ledger: LedgerSnapshot, form: RenderForm, maxBytes: number = RESULT_PAGE_BYTES - RENDER_ANSWER_ROOM): RenderedLedger {
  const { text, truncated } = linesWithinBytes(form === 'admin' ? renderAdmin(ledger) : renderPublic(ledger), maxBytes, (leftOut) =>
    form === 'admin' ? `… ${leftOut.length} more lines not shown here, to keep this answer under ${maxBytes} bytes: ledger.get lists every claim and observation` : `… and more, not shown here.`,
  );
  return {
    runId: ledger.runId,
    form,
    status: ledger.status,
    completed: ledger.status === 'approved',
    text,
    truncated,
  };
}
