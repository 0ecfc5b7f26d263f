import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * The vision-router's own metrics (DESIGN.md, "Metrics"). The names are
 * fixed: deploy/prometheus/alerts.yml and the Grafana dashboard query them.
 */
export interface VisionMetrics {
  /** Every stage of every packet built: ran, skipped or unresolved, by kind. */
  stages: Counter<'kind' | 'status'>;
  /** Escalation stages that ran because the stages before left the need open. */
  escalations: Counter<'kind'>;
  stageDuration: Histogram<'kind'>;
  cacheLookups: Counter<'result'>;
  ocrConfidence: Histogram;
  auxiliaryCalls: Counter<'outcome'>;
  ocrWorkers: Counter<'event'>;
  /** How vision.analyze and vision.evidence found their image (reply_to, alias, latest, inline, choose_image, none). */
  resolutions: Counter<'resolved_by'>;
}

export function createVisionMetrics(registry: Registry): VisionMetrics {
  return {
    stages: new Counter({ name: 'vouch_vision_stages_total', help: 'Evidence stages by kind and status (ran, skipped, unresolved).', labelNames: ['kind', 'status'] as const, registers: [registry] }),
    escalations: new Counter({ name: 'vouch_vision_escalations_total', help: 'Escalation stages that ran because cheaper stages left the evidence need unmet.', labelNames: ['kind'] as const, registers: [registry] }),
    stageDuration: new Histogram({
      name: 'vouch_vision_stage_duration_seconds',
      help: 'Time a stage took when it ran.',
      labelNames: ['kind'] as const,
      // Observation takes milliseconds, OCR 0.1–2 s per page on one core, auxiliary vision seconds up to VISION_TIMEOUT_MS.
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    cacheLookups: new Counter({ name: 'vouch_vision_cache_lookups_total', help: 'Evidence cache lookups by result (hit, miss).', labelNames: ['result'] as const, registers: [registry] }),
    ocrConfidence: new Histogram({
      name: 'vouch_vision_ocr_confidence',
      help: 'Page confidence (0-100) of OCR readings; below 60 a reading is not trusted as exact.',
      buckets: [10, 20, 30, 40, 50, 60, 70, 80, 90, 95],
      registers: [registry],
    }),
    auxiliaryCalls: new Counter({
      name: 'vouch_vision_auxiliary_calls_total',
      help: 'Auxiliary vision calls by outcome: ok, not_configured, no_vision, not_found, timeout, error, empty.',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    ocrWorkers: new Counter({ name: 'vouch_vision_ocr_worker_events_total', help: 'OCR worker life events: started, recycled, failed, timed_out.', labelNames: ['event'] as const, registers: [registry] }),
    resolutions: new Counter({ name: 'vouch_vision_resolutions_total', help: 'How requests found their image.', labelNames: ['resolved_by'] as const, registers: [registry] }),
  };
}
