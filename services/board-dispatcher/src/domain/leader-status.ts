import type { Diagnostic } from '@vouch/contracts';

/**
 * What board.diagnostics says about the dispatcher lease, decided from one
 * reading of its row (dispatcher-lease.ts readLease). No leader is the one
 * diagnostic no leader can store: it is read from the lease itself, and
 * raised only after two TTLs without a holder, so a moment between leases
 * (a stop handing it over, a takeover after a crash) is not reported.
 */

/** The lease row as read, with the database's clock when it was read. */
export interface LeaseReading {
  holder: string | null;
  epoch: number;
  /** When the lease runs (or ran) out; the Unix epoch (time 0) when it was never taken. */
  expiresAt: Date;
  now: Date;
}

export interface LeaderStatus {
  holder: string | null;
  epoch: number;
  healthy: boolean;
  /** When the lease ran out (or, never taken, now); null while it is held. */
  leaderlessSince: string | null;
}

function isHeld(lease: LeaseReading): boolean {
  return lease.holder !== null && lease.expiresAt > lease.now;
}

function since(lease: LeaseReading): string {
  return lease.expiresAt.getTime() > 0 ? lease.expiresAt.toISOString() : lease.now.toISOString();
}

export function leaderStatus(lease: LeaseReading): LeaderStatus {
  const healthy = isHeld(lease);
  return { holder: lease.holder, epoch: lease.epoch, healthy, leaderlessSince: healthy ? null : since(lease) };
}

/** The `no_leader` diagnostic when no one has held the lease for two TTLs or more; undefined otherwise. */
export function noLeaderDiagnostic(lease: LeaseReading, leaseTtlMs: number): Diagnostic | undefined {
  if (isHeld(lease)) return undefined;
  const leaderlessMs = lease.now.getTime() - lease.expiresAt.getTime();
  if (leaderlessMs < 2 * leaseTtlMs) return undefined;
  const from = since(lease);
  return {
    kind: 'no_leader',
    subject: 'dispatcher',
    severity: 'error',
    message: `no board-dispatcher has held the dispatcher lease since ${from}: nothing is being dispatched`,
    suggestedAction: 'start a board-dispatcher replica (or check that the running ones reach Postgres); cards stay ready until one takes the lease',
    details: { lastHolder: lease.holder, epoch: lease.epoch, leaderlessSeconds: Math.round(leaderlessMs / 1000) },
    firstSeen: from,
    lastSeen: lease.now.toISOString(),
    count: 1,
    resolvedAt: null,
  };
}
