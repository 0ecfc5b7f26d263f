import type { OllamaGenerationCall, OllamaReply } from './ollama-reply.js';

/**
 * A stand-in for an extraction model behind the Ollama test server: it reads
 * the extractor's window prompt (a `Requirements:` list of `- id` lines and
 * `Lines:` of `N: text`) and answers the structured output a competent model
 * gives: for each requirement, the line that defines it as `id: value` or
 * `id = value`, the exact value and an exact quote. `lie` makes it answer a
 * requirement with a quote that is not in the source (a hallucination the
 * extractor must catch).
 */
export function scriptedExtractionModel(opts: { lie?: readonly string[] } = {}): (call: OllamaGenerationCall) => OllamaReply {
  return (call) => {
    const user = call.messages.find((m) => m.role === 'user')?.content ?? '';
    const [reqPart = '', linePart = ''] = user.split('\nLines:\n');
    const ids = [...reqPart.matchAll(/^- ([A-Za-z_][A-Za-z0-9_.-]*)/gm)].map((m) => m[1]!);
    const lines = [...linePart.matchAll(/^(\d+): (.*)$/gm)].map((m) => ({ n: Number(m[1]), text: m[2]! }));
    const results = ids.map((id) => {
      const esc = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const def = new RegExp(`(?<![A-Za-z0-9_])${esc}\\s*[:=]\\s*([^\\s,;]+)`);
      for (const { n, text } of lines) {
        if (/^\s*(\/\/|#|\*)/.test(text)) continue;
        const m = def.exec(text);
        if (!m) continue;
        const quote = m[0];
        if (opts.lie?.includes(id)) return { id, found: true, value: m[1]!, line: n, quote: `${id} := ${m[1]!} /* paraphrased */`, confidence: 0.97 };
        return { id, found: true, value: m[1]!, line: n, quote, confidence: 0.95 };
      }
      return { id, found: false, value: '', line: 0, quote: '', confidence: 0 };
    });
    return { json: { results } };
  };
}
