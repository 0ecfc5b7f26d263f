import { createHash } from 'node:crypto';
import {
  NotFoundError,
  resolveMedia,
  visionAnalyze,
  visionEvidence,
  visionPacket,
  type EvidencePacket,
  type MediaItem,
  type MediaProvenance,
  type Surface,
  type VisionAnalyzeOutput,
} from '@vouch/contracts';
import { checkImage, decodeBase64Image, type CheckedImage, type ImageSource, type MediaReader, type MediaScope } from '@vouch/media';
import { handle, withTransaction, type Logger, type OperationHandler, type Pool } from '@vouch/platform';
import type { z } from 'zod';
import type { AuxiliaryVision } from './auxiliary-vision.js';
import { assessCoverage } from './domain/assess-coverage.js';
import { chooseImageQuestion, competingImages } from './domain/choose-image.js';
import { needKey } from './domain/need-key.js';
import { planEvidence } from './domain/plan-evidence.js';
import { runLadder, type LadderOutcome, type StageRunners } from './domain/run-ladder.js';
import { summarizeEvidence, unresolvedItems } from './domain/summarize-evidence.js';
import type { VisionMetrics } from './metrics.js';
import { nativeCopy, observeImage, SHARP_TOOL } from './observe-image.js';
import type { OcrPool } from './ocr-pool.js';
import { readText } from './read-text.js';
import { cacheEvidence, cachedEvidence, packetById, packetByJob, packetIdFor, savePacket } from './packet-store.js';

/** How many recent images resolution considers and errors name. */
const RESOLVE_WINDOW = 10;

type Input<Op extends { input: z.ZodType }> = z.output<Op['input']>;

/** Who asks: the job's tenant and the job id that names this request across BullMQ re-runs. */
export interface VisionCaller {
  tenant: string;
  jobId: string;
}

export interface VisionDeps {
  pool: Pool;
  /** The gateway's media tables (GATEWAY_DB_SCHEMA), read only. */
  media: MediaReader;
  ocr: OcrPool;
  auxiliary: AuxiliaryVision;
  metrics: VisionMetrics;
  maxPixels: number;
  ambiguityWindowMs: number;
  logger?: Logger;
  now?: () => Date;
  /** Test hook: runs after the stages and before the packet is stored (the crash test kills the process here). */
  beforeStore?: (caller: VisionCaller) => Promise<void>;
}

export interface VisionCommands {
  evidence(caller: VisionCaller, input: Input<typeof visionEvidence>): Promise<EvidencePacket>;
  analyze(caller: VisionCaller, input: Input<typeof visionAnalyze>): Promise<VisionAnalyzeOutput>;
  packet(caller: Pick<VisionCaller, 'tenant'>, input: Input<typeof visionPacket>): Promise<EvidencePacket>;
}

/** What to tell a caller on each surface to do when there is no image. */
const SEND_ONE: Record<Surface, string> = {
  telegram: 'send a photo in this chat, or reply to the message that carries one',
  tui: 'attach an image in this session (media.register), or name one by alias',
  api: 'register the image with media.register (POST /v1/media) and pass its alias',
};

function provenanceOf(item: MediaItem, resolvedBy: MediaProvenance['resolvedBy'], otherRecentAliases: string[]): Omit<MediaProvenance, 'mimeType' | 'width' | 'height' | 'byteSize'> {
  return {
    kind: 'image',
    resolvedBy,
    alias: item.alias,
    surface: item.surface,
    chatKey: item.chatKey,
    sourceMessageId: item.messageId,
    caption: item.caption,
    otherRecentAliases,
  };
}

export function createVisionCommands(deps: VisionDeps): VisionCommands {
  const { pool, media, metrics } = deps;
  const now = () => (deps.now ? deps.now() : new Date()).toISOString();

  function runnersFor(image: CheckedImage, plan: ReturnType<typeof planEvidence>): StageRunners {
    return {
      async observation() {
        const output = await observeImage(image, { native: plan.route === 'native', maxPixels: deps.maxPixels });
        return { ok: true, output, tool: SHARP_TOOL, confidence: null };
      },
      async ocr() {
        const result = await readText(deps.ocr, image, deps.maxPixels);
        if (result.ok) metrics.ocrConfidence.observe(result.output.confidence);
        return result;
      },
      async auxiliary(evidence) {
        const open = plan.runAll ? plan.need.modalities : assessCoverage(plan.need, evidence).unmet;
        // The bounded copy, not the original: small vision models take ~1,500 px at most, and it is always a JPEG Ollama can decode.
        const copy = evidence.observation?.nativeImage ?? (await nativeCopy(image, deps.maxPixels));
        return deps.auxiliary.describe(Buffer.from(copy.base64, 'base64'), open.length ? open : plan.need.modalities, evidence.ocr?.text);
      },
    };
  }

  /** Checks the image, plans, answers from the cache or runs the ladder, and stores the job's one packet. */
  async function build(caller: VisionCaller, operation: string, request: Input<typeof visionEvidence> | Input<typeof visionAnalyze>, bytes: Buffer, source: ImageSource, base: Omit<MediaProvenance, 'mimeType' | 'width' | 'height' | 'byteSize'>): Promise<EvidencePacket> {
    const image = await checkImage(bytes, source, { frames: 'first', maxPixels: deps.maxPixels });
    const provenance: MediaProvenance = { ...base, mimeType: image.mimeType, width: image.width, height: image.height, byteSize: bytes.length };
    const plan = planEvidence({ prompt: request.prompt, requestedDetail: request.requestedDetail, media: provenance, callerModel: request.callerModel });
    const contentSha256 = createHash('sha256').update(bytes).digest();
    const key = needKey(plan, deps.auxiliary.configured ? deps.auxiliary.model : undefined);
    const cached = await cachedEvidence(pool, caller.tenant, contentSha256, key);
    metrics.cacheLookups.inc({ result: cached ? 'hit' : 'miss' });

    let outcome: LadderOutcome;
    if (cached) {
      // The stages are the cached ones; their reasons are this request's plan's.
      outcome = {
        ...cached.outcome,
        stages: cached.outcome.stages.map((s) => ({ ...s, reason: plan.stages.find((p) => p.kind === s.kind)?.reason ?? s.reason })),
      };
    } else {
      outcome = await runLadder(plan, runnersFor(image, plan), {
        stageDone(record, role) {
          metrics.stages.inc({ kind: record.kind, status: record.status });
          if (record.status !== 'skipped') metrics.stageDuration.observe({ kind: record.kind }, record.durationMs / 1000);
          if (role === 'escalation' && record.status !== 'skipped') metrics.escalations.inc({ kind: record.kind });
        },
      });
    }
    const unresolved = unresolvedItems(outcome);
    const packetId = packetIdFor(caller.tenant, caller.jobId);
    const notes = [...outcome.coverage.notes];
    if (cached) notes.unshift(`answered from the cache: packet ${cached.packetId} gathered this evidence for the same image and need in this tenant; no stage ran again`);
    const packet: EvidencePacket = {
      packetId,
      createdAt: now(),
      prompt: request.prompt,
      media: provenance,
      plan,
      stages: outcome.stages,
      coverage: { needMet: outcome.coverage.met, notes },
      unresolved,
      summary: summarizeEvidence(provenance, outcome, unresolved),
      cached: cached !== undefined,
      cachedFromPacketId: cached?.packetId ?? null,
    };
    await deps.beforeStore?.(caller);
    return withTransaction(pool, async (tx) => {
      const stored = await savePacket(tx, { tenant: caller.tenant, jobId: caller.jobId, operation, packet });
      if (!cached && outcome.failures.length === 0 && stored.packetId === packetId) {
        await cacheEvidence(tx, { tenant: caller.tenant, contentSha256, needKey: key, packetId, outcome });
      }
      return stored;
    });
  }

  async function scopeMedia(scope: MediaScope, hints: { alias?: string | undefined; replyToMessageId?: string | undefined }) {
    const [recent, replyTo, byAlias] = await Promise.all([
      media.recent(scope, RESOLVE_WINDOW),
      hints.replyToMessageId ? media.byMessage(scope, hints.replyToMessageId) : undefined,
      hints.alias ? media.byAlias(scope, hints.alias) : undefined,
    ]);
    const resolution = resolveMedia({ recent, replyTo, byAlias, aliasRequested: hints.alias });
    if (!resolution.ok) {
      metrics.resolutions.inc({ resolved_by: 'none' });
      const aliases = recent.map((m) => m.alias);
      const where = `this ${scope.surface} chat`;
      const message =
        resolution.reason === 'unknown_alias'
          ? `no image ${hints.alias} in ${where}: ${aliases.length ? `use one of the recent aliases (${aliases.join(', ')})` : SEND_ONE[scope.surface]}`
          : `no image in ${where}: ${SEND_ONE[scope.surface]}${aliases.length ? ` (recent aliases: ${aliases.join(', ')})` : ''}`;
      throw new NotFoundError(message, { reason: resolution.reason, recentAliases: aliases });
    }
    return { recent, resolution };
  }

  async function bytesOf(scope: MediaScope, alias: string): Promise<Buffer> {
    const bytes = await media.bytes(scope, alias);
    if (!bytes) throw new NotFoundError(`image ${alias} is no longer in this ${scope.surface} chat: list the current ones with media.recent`, { alias });
    return bytes;
  }

  return {
    async evidence(caller, input) {
      const done = await packetByJob(pool, caller.tenant, caller.jobId);
      if (done) return done;
      if (input.imageBase64 !== undefined) {
        metrics.resolutions.inc({ resolved_by: 'inline' });
        const bytes = decodeBase64Image(input.imageBase64);
        const base = { kind: 'image' as const, resolvedBy: 'inline' as const, alias: null, surface: input.surface ?? null, chatKey: input.chatKey ?? null, sourceMessageId: null, caption: null, otherRecentAliases: [] };
        return build(caller, visionEvidence.name, input, bytes, { field: 'imageBase64' }, base);
      }
      // The schema guarantees alias, surface and chatKey together here.
      const scope: MediaScope = { tenant: caller.tenant, surface: input.surface!, chatKey: input.chatKey! };
      const { resolution } = await scopeMedia(scope, { alias: input.alias });
      metrics.resolutions.inc({ resolved_by: resolution.resolvedBy });
      const bytes = await bytesOf(scope, resolution.media.alias);
      return build(caller, visionEvidence.name, input, bytes, { alias: resolution.media.alias }, provenanceOf(resolution.media, resolution.resolvedBy, resolution.otherRecentAliases));
    },

    async analyze(caller, input) {
      const done = await packetByJob(pool, caller.tenant, caller.jobId);
      if (done) return { status: 'evidence', packet: done };
      const scope: MediaScope = { tenant: caller.tenant, surface: input.surface, chatKey: input.chatKey };
      const { recent, resolution } = await scopeMedia(scope, { alias: input.alias, replyToMessageId: input.replyToMessageId });
      if (resolution.resolvedBy === 'latest') {
        const competing = competingImages(recent, deps.ambiguityWindowMs);
        if (competing.length > 1) {
          metrics.resolutions.inc({ resolved_by: 'choose_image' });
          return {
            status: 'choose_image',
            question: chooseImageQuestion(competing),
            candidates: competing.map((m) => ({ alias: m.alias, messageId: m.messageId, caption: m.caption, registeredAt: m.registeredAt, width: m.width, height: m.height })),
          };
        }
      }
      metrics.resolutions.inc({ resolved_by: resolution.resolvedBy });
      const bytes = await bytesOf(scope, resolution.media.alias);
      const packet = await build(caller, visionAnalyze.name, input, bytes, { alias: resolution.media.alias }, provenanceOf(resolution.media, resolution.resolvedBy, resolution.otherRecentAliases));
      return { status: 'evidence', packet };
    },

    async packet(caller, input) {
      const packet = await packetById(pool, caller.tenant, input.packetId);
      if (!packet) throw new NotFoundError(`no evidence packet ${input.packetId} for this tenant: packet ids come from vision.evidence and vision.analyze answers`);
      return packet;
    },
  };
}

/** One handler per vision operation, over the commands. */
export function visionHandlers(commands: VisionCommands): OperationHandler[] {
  return [
    handle(visionEvidence, (input, ctx) => commands.evidence({ tenant: ctx.tenant, jobId: ctx.jobId }, input)),
    handle(visionAnalyze, (input, ctx) => commands.analyze({ tenant: ctx.tenant, jobId: ctx.jobId }, input)),
    handle(visionPacket, (input, ctx) => commands.packet({ tenant: ctx.tenant }, input)),
  ] as OperationHandler[];
}
