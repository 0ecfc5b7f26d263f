import { z } from 'zod';
import { defineOperation } from '../operation.js';
import { QUEUES } from '../queues.js';
import { EvidencePacketSchema, PacketIdSchema, VisionAnalyzeInputSchema, VisionAnalyzeOutputSchema, VisionEvidenceInputSchema } from './vision-schemas.js';

export * from './vision-schemas.js';

const LADDER =
  'Stages run cheapest first and stop once the evidence answers the question: observation (format, size, colours, a text-likelihood estimate, and a bounded copy of the image ' +
  'when callerModel.acceptsImages), OCR (words and lines with confidence and boxes) when text matters, auxiliary vision when the rest cannot answer. ' +
  'Every stage says why it ran, was skipped or stayed unresolved; answer only from what the packet shows, and report unresolved items instead of guessing.';

export const visionEvidence = defineOperation({
  name: 'vision.evidence',
  summary: 'Gather evidence about one explicitly named image',
  description:
    `Builds an evidence packet for an image you name explicitly (alias with surface and chatKey, or imageBase64). ${LADDER} ` +
    'It answers with a job handle; read the packet with jobs.get. In a chat, prefer vision.analyze, which finds the image for you.',
  owner: { queue: QUEUES.visionRouter },
  mode: 'job',
  http: { method: 'POST', path: '/v1/vision/evidence' },
  scope: 'vision:write',
  input: VisionEvidenceInputSchema,
  output: EvidencePacketSchema,
  agentFacing: true,
  example: { prompt: 'What does the error dialog say?', surface: 'telegram', chatKey: 'chat-42', alias: 'img-1', requestedDetail: 'auto' },
  retry: { attempts: 3, backoffMs: 2_000 },
});

export const visionAnalyze = defineOperation({
  name: 'vision.analyze',
  summary: 'Answer a question about an image in this chat',
  description:
    'Finds the image a user means in this chat (the replied-to message\'s image, then an alias they named, then the latest image) and builds its evidence packet. ' +
    `${LADDER} When several images arrived together and nothing says which one, it answers status choose_image with their aliases: ask the user, ` +
    'then call again with alias. With no image in the chat it fails saying so: ask the user to send or reply to one.',
  owner: { queue: QUEUES.visionRouter },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/vision/analyze' },
  scope: 'vision:write',
  input: VisionAnalyzeInputSchema,
  output: VisionAnalyzeOutputSchema,
  agentFacing: true,
  example: { surface: 'telegram', chatKey: 'chat-42', prompt: 'What text is in this image?', replyToMessageId: '7' },
  errors: {
    404: 'The chat has no image, or none under the alias named: the detail says what to send on that surface, and `details.recentAliases` lists the chat\'s images.',
  },
  // OCR and auxiliary vision take seconds; past this the gateway answers 504 with the job id to poll.
  timeoutMs: 120_000,
  retry: { attempts: 3, backoffMs: 2_000 },
});

export const visionPacket = defineOperation({
  name: 'vision.packet',
  summary: 'Read a stored evidence packet',
  description: 'Returns an evidence packet by its packetId, exactly as it was answered, for audit or to quote its evidence again.',
  owner: { queue: QUEUES.visionRouter },
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/vision/packets/:packetId' },
  scope: 'vision:read',
  input: z.object({ packetId: PacketIdSchema }).strict(),
  output: EvidencePacketSchema,
  agentFacing: false,
  example: { packetId: 'vp_0123456789abcdef01234567' },
});
