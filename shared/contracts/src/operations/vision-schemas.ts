import { z } from 'zod';
import { text } from '../text.js';
import { ChatKeySchema, IsoTimeSchema, MediaAliasSchema, MessageIdSchema, SurfaceSchema } from './common.js';
import { MEDIA_MIME_TYPES } from './media.js';

/**
 * How much the caller wants: `auto` derives the stages from the prompt,
 * `low` stops after observation, `text` adds OCR, `full` runs every stage.
 */
export const RequestedDetailSchema = z.enum(['auto', 'low', 'text', 'full']);
export type RequestedDetail = z.infer<typeof RequestedDetailSchema>;

/** The evidence kinds a request can need, by modality (never by topic). */
export const EvidenceModalitySchema = z.enum(['text', 'scene', 'identity', 'visual_properties']);
export type EvidenceModality = z.infer<typeof EvidenceModalitySchema>;

export const VisionStageKindSchema = z.enum(['observation', 'ocr', 'auxiliary_vision']);
export type VisionStageKind = z.infer<typeof VisionStageKindSchema>;

/** The bounds of the image handed back for a caller's own vision-capable model. */
export const NATIVE_IMAGE_LIMITS = { maxBytes: 256 * 1024, maxLongSide: 1568 } as const;

/**
 * Largest image vision.evidence takes inline. An inline image rides in the
 * job's data, which Redis keeps as long as the job (a day; a failed one a
 * week) under noeviction, a budget every tenant shares: larger images go
 * through media.register (stored once, in Postgres) and an alias.
 */
export const VISION_INLINE_MAX_BYTES = 1024 * 1024;
const VISION_INLINE_MAX_BASE64_CHARS = Math.ceil(VISION_INLINE_MAX_BYTES / 3) * 4;

export const VISION_PROMPT_MAX_CHARS = 2000;

const PromptSchema = text()
  .trim()
  .min(1, 'prompt must say what you want to know about the image, e.g. "what does the error dialog say?"')
  .max(VISION_PROMPT_MAX_CHARS, `prompt is at most ${VISION_PROMPT_MAX_CHARS} characters: ask one question about the image`)
  .describe('What you want to know about the image, in the user\'s words. The stages run are chosen from it.');

/** What the caller's own model can do with images; it comes with the request. */
export const CallerModelSchema = z
  .object({
    name: text().trim().min(1).max(200).optional().describe('The caller\'s model, for the record.'),
    acceptsImages: z.boolean().describe('Whether your model takes images as input. If so the packet carries a bounded copy of the image for it (the native path).'),
    rejectedNativeImage: z
      .boolean()
      .default(false)
      .describe('Set when your model refused the native image an earlier packet carried: the image then goes to auxiliary vision instead.'),
  })
  .strict();
export type CallerModel = z.infer<typeof CallerModelSchema>;

const common = {
  prompt: PromptSchema,
  requestedDetail: RequestedDetailSchema.default('auto').describe('auto (from the prompt), low (observation only), text (adds OCR) or full (every stage).'),
  callerModel: CallerModelSchema.optional(),
};

export const VisionEvidenceInputSchema = z
  .object({
    ...common,
    surface: SurfaceSchema.optional().describe('With alias: the surface of the chat the image was registered in.'),
    chatKey: ChatKeySchema.optional().describe('With alias: the chat or session key the image was registered under.'),
    alias: MediaAliasSchema.optional().describe('The image to analyse, as media.register or media.recent named it (img-N). Give alias or imageBase64.'),
    imageBase64: text()
      .min(1, 'imageBase64 must hold the image bytes, base64-encoded')
      .max(VISION_INLINE_MAX_BASE64_CHARS, `an inline image is at most ${VISION_INLINE_MAX_BYTES} bytes: register larger ones with media.register and pass the alias`)
      .optional()
      .describe(`The raw image file bytes, standard base64 without a data: prefix, up to ${VISION_INLINE_MAX_BYTES} bytes. Give alias or imageBase64.`),
  })
  .strict()
  .superRefine((input, ctx) => {
    if (input.alias === undefined && input.imageBase64 === undefined) {
      ctx.addIssue({ code: 'custom', path: ['alias'], message: 'vision.evidence needs an explicit image: pass alias (with surface and chatKey) or imageBase64; vision.analyze finds the image in a chat for you' });
    }
    if (input.alias !== undefined && input.imageBase64 !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['imageBase64'], message: 'pass alias or imageBase64, not both' });
    }
    if (input.alias !== undefined) {
      if (input.surface === undefined) ctx.addIssue({ code: 'custom', path: ['surface'], message: 'an alias names an image within a chat: pass the surface it was registered on' });
      if (input.chatKey === undefined) ctx.addIssue({ code: 'custom', path: ['chatKey'], message: 'an alias names an image within a chat: pass the chatKey it was registered under' });
    }
  });

export const VisionAnalyzeInputSchema = z
  .object({
    ...common,
    surface: SurfaceSchema,
    chatKey: ChatKeySchema,
    alias: MediaAliasSchema.optional().describe('The image, when the user named one (img-N). Leave it out to use the replied-to or latest image.'),
    replyToMessageId: MessageIdSchema.optional().describe('The message the user replied to; its image is used first.'),
  })
  .strict();

export const BoxSchema = z.object({ x0: z.number().int(), y0: z.number().int(), x1: z.number().int(), y1: z.number().int() });

/** A recognised word or line: its text, confidence (0–100) and box in the upright image's pixels. */
export const OcrSpanSchema = z.object({ text: z.string(), confidence: z.number().min(0).max(100), box: BoxSchema });

export const NativeImageSchema = z.object({
  mimeType: z.literal('image/jpeg'),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  byteSize: z.number().int().positive().max(NATIVE_IMAGE_LIMITS.maxBytes),
  base64: z.string(),
});

export const ObservationOutputSchema = z.object({
  format: z.string(),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  /** EXIF orientation (1–8) when the file has one; width and height above are as stored, before it is applied. */
  exifOrientation: z.number().int().min(1).max(8).nullable(),
  hasAlpha: z.boolean(),
  channels: z.number().int(),
  frames: z.number().int().positive(),
  colour: z.object({
    mean: z.object({ r: z.number(), g: z.number(), b: z.number() }),
    dominant: z.object({ r: z.number(), g: z.number(), b: z.number() }),
    greyscale: z.boolean(),
    entropy: z.number(),
  }),
  sharpness: z.number(),
  /** 0–1: an estimate from contrast and stroke density, not a reading. */
  textLikelihood: z.number().min(0).max(1),
  nativeImage: NativeImageSchema.optional(),
});
export type ObservationOutput = z.infer<typeof ObservationOutputSchema>;

export const OcrOutputSchema = z.object({
  text: z.string(),
  confidence: z.number().min(0).max(100),
  rotatedBy: z.union([z.literal(0), z.literal(180)]),
  preprocessing: z.array(z.string()),
  lines: z.array(OcrSpanSchema),
  words: z.array(OcrSpanSchema),
});
export type OcrOutput = z.infer<typeof OcrOutputSchema>;

export const AuxiliaryOutputSchema = z.object({ answer: z.string() });
export type AuxiliaryOutput = z.infer<typeof AuxiliaryOutputSchema>;

export const PlannedStageSchema = z.object({
  kind: VisionStageKindSchema,
  /** primary: expected to answer part of the need. escalation: runs only if the stages before it leave the need unmet. */
  role: z.enum(['primary', 'escalation']),
  /** Besides the need being unmet, runs only when observation estimates there is text. */
  onlyIfTextLikely: z.boolean(),
  reason: z.string(),
});
export type PlannedStage = z.infer<typeof PlannedStageSchema>;

export const EvidencePlanSchema = z.object({
  need: z.object({
    modalities: z.array(EvidenceModalitySchema),
    /** low: the prompt named no modality clearly, so more stages are planned rather than assumptions made. */
    confidence: z.enum(['high', 'low']),
    cues: z.array(z.string()),
  }),
  requestedDetail: RequestedDetailSchema,
  /** native: the caller's model sees the bounded image itself. auxiliary: a configured vision model looks instead. */
  route: z.enum(['native', 'auxiliary']),
  /** full: every planned stage runs, even once the need is met. */
  runAll: z.boolean(),
  stages: z.array(PlannedStageSchema),
  reason: z.string(),
});
export type EvidencePlan = z.infer<typeof EvidencePlanSchema>;

const StageBase = {
  /** Why the plan chose it. */
  reason: z.string(),
  /** ran: it produced output. skipped: not needed (note says why). unresolved: it should have run or failed; note says why. */
  status: z.enum(['ran', 'skipped', 'unresolved']),
  note: z.string().nullable(),
  durationMs: z.number().nonnegative(),
  /** Tool or model that did the work, e.g. `sharp 0.35.5`, `tesseract.js 7.0.0 (eng, LSTM)`, `ollama:moondream`. */
  tool: z.string().nullable(),
  confidence: z.number().nullable(),
};

export const StageRecordSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('observation'), ...StageBase, output: ObservationOutputSchema.nullable() }),
  z.object({ kind: z.literal('ocr'), ...StageBase, output: OcrOutputSchema.nullable() }),
  z.object({ kind: z.literal('auxiliary_vision'), ...StageBase, output: AuxiliaryOutputSchema.nullable() }),
]);
export type StageRecord = z.infer<typeof StageRecordSchema>;

/** How the image was found, without any storage key, hash or path. */
export const MediaProvenanceSchema = z.object({
  kind: z.literal('image'),
  resolvedBy: z.enum(['reply_to', 'alias', 'latest', 'inline']),
  alias: MediaAliasSchema.nullable(),
  surface: SurfaceSchema.nullable(),
  chatKey: z.string().nullable(),
  sourceMessageId: z.string().nullable(),
  mimeType: z.enum(MEDIA_MIME_TYPES),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  byteSize: z.number().int().positive(),
  caption: z.string().nullable(),
  /** Other images in the chat the caller might have meant, when the pick was "latest". */
  otherRecentAliases: z.array(MediaAliasSchema),
});
export type MediaProvenance = z.infer<typeof MediaProvenanceSchema>;

export const VisionUnresolvedItemSchema = z.object({
  need: z.string(),
  reason: z.string(),
  recovery: z.string().nullable(),
});

export const EvidencePacketSchema = z.object({
  packetId: z.string(),
  createdAt: IsoTimeSchema,
  prompt: z.string(),
  media: MediaProvenanceSchema,
  plan: EvidencePlanSchema,
  stages: z.array(StageRecordSchema),
  coverage: z.object({ needMet: z.boolean(), notes: z.array(z.string()) }),
  unresolved: z.array(VisionUnresolvedItemSchema),
  /** The evidence for the caller's model, in words: what each stage found and what stays open. */
  summary: z.string(),
  /** Answered from this tenant's earlier packet for the same image bytes and need; no stage ran again. */
  cached: z.boolean(),
  cachedFromPacketId: z.string().nullable(),
});
export type EvidencePacket = z.infer<typeof EvidencePacketSchema>;

export const ImageCandidateSchema = z.object({
  alias: MediaAliasSchema,
  messageId: z.string().nullable(),
  caption: z.string().nullable(),
  registeredAt: IsoTimeSchema,
  width: z.number().int().positive(),
  height: z.number().int().positive(),
});

export const VisionAnalyzeOutputSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('evidence'), packet: EvidencePacketSchema }),
  z.object({
    status: z.literal('choose_image'),
    /** Which image is meant: ask the user, or call again with alias or replyToMessageId. */
    question: z.string(),
    candidates: z.array(ImageCandidateSchema),
  }),
]);
export type VisionAnalyzeOutput = z.infer<typeof VisionAnalyzeOutputSchema>;

export const PacketIdSchema = text().regex(/^vp_[0-9a-f]{24}$/, 'a packet id looks like vp_3f2a…: use the packetId of an evidence packet');
