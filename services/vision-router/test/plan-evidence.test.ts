import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MODALITY_CUES, deriveNeed, planEvidence, type PlanRequest } from '../src/domain/plan-evidence.js';

const SCREEN = { mimeType: 'image/png', width: 1280, height: 720 };
const plan = (prompt: string, extra: Partial<PlanRequest> = {}) => planEvidence({ prompt, requestedDetail: 'auto', media: SCREEN, ...extra });
const stages = (p: ReturnType<typeof plan>) => p.stages.map((s) => `${s.kind}:${s.role}${s.onlyIfTextLikely ? ':if-text' : ''}`);

describe('evidence-need planning', () => {
  it('plans OCR for "What text is in this image?", with its reason', () => {
    const p = plan('What text is in this image?');
    expect(p.need).toEqual({ modalities: ['text'], confidence: 'high', cues: ['text:text'] });
    expect(stages(p)).toEqual(['observation:primary', 'ocr:primary', 'auxiliary_vision:escalation']);
    expect(p.stages[1]!.reason).toBe('the request needs exact text ("text"): OCR reads it with per-word confidence');
    expect(p.stages[2]!.reason).toContain('OCR may fail to read the text confidently');
    expect(p.route).toBe('auxiliary');
  });

  it('plans observation then auxiliary vision for "What is happening in this photo?"', () => {
    const p = plan('What is happening in this photo?');
    expect(p.need.modalities).toEqual(['scene']);
    expect(stages(p)).toEqual(['observation:primary', 'ocr:escalation:if-text', 'auxiliary_vision:escalation']);
    expect(p.stages[2]!.reason).toContain('the request asks what is happening ("happening")');
  });

  it('plans auxiliary vision when observation is insufficient for "Who/what is shown?"', () => {
    const p = plan('Who or what is shown here?');
    expect(p.need.modalities).toEqual(['identity']);
    expect(p.stages.at(-1)).toMatchObject({ kind: 'auxiliary_vision', role: 'escalation' });
    expect(p.stages.at(-1)!.reason).toContain('the request asks who or what is shown ("who", "what is shown", "shown")');
  });

  it('plans more stages, not assumptions, when the request names no kind of evidence', () => {
    const p = plan('hmm?');
    expect(p.need).toEqual({ modalities: ['text', 'scene'], confidence: 'low', cues: [] });
    expect(stages(p)).toEqual(['observation:primary', 'ocr:primary', 'auxiliary_vision:escalation']);
    expect(p.reason).toContain('low confidence');
  });

  it('stops at observation for visual properties alone', () => {
    expect(stages(plan('What colour is the background and what resolution is it?'))).toEqual(['observation:primary']);
  });

  it('selects the native path when the caller\'s model accepts images, and demotes to auxiliary vision when it rejected one', () => {
    const native = plan('Describe this picture', { callerModel: { acceptsImages: true, rejectedNativeImage: false } });
    expect(native.route).toBe('native');
    expect(native.stages[0]!.reason).toContain('bounds a copy for the caller\'s model, which accepts images (native path)');
    const demoted = plan('Describe this picture', { callerModel: { acceptsImages: true, rejectedNativeImage: true } });
    expect(demoted.route).toBe('auxiliary');
    expect(demoted.stages[0]!.reason).toContain('the caller\'s model rejected the image');
    expect(plan('Describe this picture', { callerModel: { acceptsImages: false, rejectedNativeImage: false } }).route).toBe('auxiliary');
  });

  it('follows requestedDetail: low observes only, text adds OCR, full runs everything', () => {
    expect(stages(plan('Who is this?', { requestedDetail: 'low' }))).toEqual(['observation:primary']);
    const text = plan('Describe it', { requestedDetail: 'text' });
    expect(text.need.modalities).toEqual(['text', 'scene']);
    expect(stages(text)).toEqual(['observation:primary', 'ocr:primary', 'auxiliary_vision:escalation']);
    const full = plan('What colour is it?', { requestedDetail: 'full' });
    expect(full.runAll).toBe(true);
    expect(stages(full)).toEqual(['observation:primary', 'ocr:primary', 'auxiliary_vision:primary']);
  });

  it('gives every planned stage a reason', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.constantFrom('auto', 'low', 'text', 'full' as const), fc.boolean(), fc.boolean(), (prompt, detail, accepts, rejected) => {
        const p = plan(prompt, { requestedDetail: detail, callerModel: { acceptsImages: accepts, rejectedNativeImage: rejected } });
        expect(p.stages[0]!.kind).toBe('observation');
        for (const s of p.stages) expect(s.reason.length).toBeGreaterThan(10);
        expect(p.need.modalities.length).toBeGreaterThan(0);
      }),
    );
  });
});

// Topics and scenarios a router must not special-case (the spec: "no hard-coded news/event/person scenario filters").
const TOPIC_WORDS = [
  'news', 'event', 'events', 'person', 'people', 'celebrity', 'politician', 'president', 'election', 'protest', 'war', 'attack', 'police',
  'crime', 'accident', 'disaster', 'fire', 'flood', 'sport', 'sports', 'football', 'game', 'weather', 'food', 'recipe', 'animal',
  'cat', 'dog', 'bird', 'car', 'vehicle', 'invoice', 'receipt', 'bank', 'money', 'price', 'passport', 'license', 'medical', 'xray', 'meme',
  'map', 'chart', 'graph', 'selfie', 'face', 'faces', 'nude', 'weapon', 'gun', 'flag', 'logo', 'brand', 'product', 'shop', 'building', 'city',
];

describe('the planner holds no topic or scenario words', () => {
  it('has none in its cue vocabulary or its source', () => {
    const vocabulary = Object.values(MODALITY_CUES).flat().flatMap((cue) => cue.split(' '));
    expect(vocabulary.filter((w) => TOPIC_WORDS.includes(w))).toEqual([]);
    // Every string the planner can put in a plan or a reason: its literals.
    const source = readFileSync(fileURLToPath(new URL('../src/domain/plan-evidence.ts', import.meta.url)), 'utf8');
    const literals = (source.match(/'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`|"(?:[^"\\\n]|\\.)*"/g) ?? []).join(' ').toLowerCase();
    expect(TOPIC_WORDS.filter((w) => new RegExp(`\\b${w}\\b`).test(literals))).toEqual([]);
  });

  it('plans the same for a question whatever its subject', () => {
    const templates = ['What text is on this {}?', 'What is happening in this {}?', 'Who is in this {}?', 'What colour is the {}?', 'Tell me about this {}'];
    fc.assert(
      fc.property(fc.constantFrom(...templates), fc.constantFrom(...TOPIC_WORDS), fc.constantFrom(...TOPIC_WORDS), (template, a, b) => {
        expect(deriveNeed(template.replace('{}', a))).toEqual(deriveNeed(template.replace('{}', b)));
      }),
    );
  });
});
