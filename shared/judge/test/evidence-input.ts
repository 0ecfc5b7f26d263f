import type { EvidenceInput } from '@vouch/contracts';

/** A successful observation. */
export const ok = (kind: EvidenceInput['kind'], toolName: string, summary: string, extra: Partial<EvidenceInput> = {}): EvidenceInput => ({ kind, toolName, success: true, summary, ...extra });
/** A failed observation. */
export const failed = (kind: EvidenceInput['kind'], toolName: string, summary: string, extra: Partial<EvidenceInput> = {}): EvidenceInput => ({ kind, toolName, success: false, summary, ...extra });
